// SPDX-License-Identifier: MIT
/*
 * Back-pressure: long runs through tiny rings.
 *
 *  - task windows of 4, 8 and 16 over 10^5 tasks each, a scope per loop
 *    iteration holding window - 1 tasks (a chain of OUTPUT temporaries
 *    folded into an accumulator): must complete, never -EDEADLK;
 *  - a 4 KiB heap ring with 2*10^4 scopes of OUTPUT tasks of odd sizes up
 *    to 700 bytes (wrap-around with padding at the end of the ring);
 *  - the same with two OUTPUTs per task;
 *  - dependency and TensorMap pools of 16 entries under 2.5*10^4 tasks.
 *
 * The reference is the same kernels called in a plain loop.  PTO_TEST_TASKS
 * scales the task count of the window runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

/* acc (INOUT, 8 bytes), src, nbytes: acc = hash(acc, src bytes) */
static void k_foldb(const uint64_t *a, uint32_t n)
{
	const uint8_t *s = (const uint8_t *)(uintptr_t)a[1];
	uint64_t h = W(a[0])[0], i;

	for (i = 0; i < a[2]; i++)
		h = tl_mix(h ^ s[i]);
	W(a[0])[0] = h;
}

#define K_FOLDB 40

struct win_ctx {
	uint64_t *acc;
	uint32_t per_scope;
	uint64_t iters;
};

static int orch_window(struct pto_runtime *rt, void *arg)
{
	struct win_ctx *c = arg;
	uint64_t *prev, *t, it;
	uint32_t j;
	int64_t id;

	for (it = 0; it < c->iters; it++) {
		pto_scope_begin(rt);
		prev = c->acc;
		for (j = 0; j + 1 < c->per_scope; j++) {
			id = pto_submit_task(rt, KID(K_MAP, j % 2), j % 2,
					     (struct pto_param[]){
						     PTO_OUT(&t, 64),
						     PTO_IN(prev, 0, 64),
						     PTO_SCALAR(8),
						     PTO_SCALAR(it + j) }, 4);
			if (id < 0)
				return (int)id;
			prev = t;
		}
		id = pto_submit_task(rt, KID(K_MIX2, 2), 2,
				     (struct pto_param[]){
					     PTO_INOUT(c->acc, 0, 64),
					     PTO_IN(prev, 0, 64),
					     PTO_IN(prev, 0, 64),
					     PTO_SCALAR(8), PTO_SCALAR(it) }, 5);
		if (id < 0)
			return (int)id;
		if (pto_scope_end(rt))
			return -EPROTO;
	}
	return 0;
}

static void ref_window(uint64_t *acc, uint32_t per_scope, uint64_t iters)
{
	uint64_t a[2][8], *prev, *t, it;
	uint32_t j;

	for (it = 0; it < iters; it++) {
		prev = acc;
		for (j = 0; j + 1 < per_scope; j++) {
			t = a[j % 2];
			k_map((uint64_t[]){ (uintptr_t)t, (uintptr_t)prev, 8,
					    it + j }, 4);
			prev = t;
		}
		k_mix2((uint64_t[]){ (uintptr_t)acc, (uintptr_t)prev,
				     (uintptr_t)prev, 8, it }, 5);
	}
}

static struct pto_runtime *make_rt(struct pto_config *cfg)
{
	struct pto_runtime *rt = tl_runtime(cfg);
	struct tl_rec r;

	tl_rec_init(&r, rt);
	if (register_test_kernels(&r) ||
	    tl_register(&r, K_FOLDB, PTO_WORKER_VECTOR, k_foldb, "foldb") ||
	    tl_register(&r, K_FOLDB + 1, PTO_WORKER_CUBE, k_foldb, "foldb"))
		bail_out("cannot register kernels");
	tl_rec_free(&r);
	return rt;
}

static void test_window(uint32_t window, uint64_t ntasks)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct pto_stats st;
	struct win_ctx c = { .per_scope = window - 1 };
	uint64_t ref[8];
	int i, ret;

	c.iters = (ntasks + c.per_scope - 1) / c.per_scope;
	tl_config(&cfg, window, 1 << 20);
	rt = make_rt(&cfg);
	c.acc = pto_malloc(rt, 64);
	if (!c.acc)
		bail_out("pto_malloc");
	for (i = 0; i < 8; i++)
		ref[i] = c.acc[i] = tl_mix(window + i);

	ret = pto_run(rt, orch_window, &c);
	ok_eq(ret, 0, "window %u: %llu tasks, %u per scope: pto_run", window,
	      (unsigned long long)(c.iters * c.per_scope), c.per_scope);
	ref_window(ref, c.per_scope, c.iters);
	ok(!memcmp(ref, c.acc, sizeof(ref)),
	   "window %u: result equals the sequential loop", window);
	pto_get_stats(rt, &st);
	ok_eq(st.tasks_completed, c.iters * c.per_scope,
	      "window %u: every task completed", window);
	/* the loop's scopes are at depth 1: ring 1 */
	ok(st.depth[1][PTO_RING_TASK].size == window &&
	   st.depth[1][PTO_RING_TASK].high_water <= window &&
	   st.depth[1][PTO_RING_TASK].high_water >= c.per_scope,
	   "window %u: ring 1's task window size %llu, high water %llu",
	   window, (unsigned long long)st.depth[1][PTO_RING_TASK].size,
	   (unsigned long long)st.depth[1][PTO_RING_TASK].high_water);
	diag("window %u: %llu task-ring stalls, %.1f ms stalled, %.0f ns/task",
	     window, (unsigned long long)st.ring[PTO_RING_TASK].stalls,
	     st.ring[PTO_RING_TASK].stall_ns / 1e6,
	     (double)st.run_ns / (c.iters * c.per_scope));
	pto_runtime_destroy(rt);
}

/* ---- heap back-pressure -------------------------------------------------- */

#define HEAP 4096
#define HEAP_ITERS 20000

struct heap_ctx {
	uint64_t *acc;
	int two;		/* two OUTPUTs per producer */
	int bad_align;
};

static uint64_t hsize(uint64_t it)
{
	return 1 + tl_mix(it) % 700;
}

static int orch_heap(struct pto_runtime *rt, void *arg)
{
	struct heap_ctx *c = arg;
	void *x, *y;
	uint64_t it, s;
	int64_t id;

	for (it = 0; it < HEAP_ITERS; it++) {
		s = hsize(it);
		pto_scope_begin(rt);
		if (c->two)
			id = pto_submit_task(rt, KID(K_FILLB, 1), 1,
					     (struct pto_param[]){
						     PTO_OUT(&x, s),
						     PTO_SCALAR(s),
						     PTO_SCALAR(it),
						     PTO_OUT(&y, s / 2 + 1) },
					     4);
		else
			id = pto_submit_task(rt, KID(K_FILLB, 1), 1,
					     (struct pto_param[]){
						     PTO_OUT(&x, s),
						     PTO_SCALAR(s),
						     PTO_SCALAR(it) }, 3);
		if (id < 0)
			return (int)id;
		c->bad_align += ((uintptr_t)x % 64) != 0;
		if (c->two) {
			c->bad_align += ((uintptr_t)y % 64) != 0;
			/* y gets a copy of x's head, then is folded too */
			id = pto_submit_task(rt, KID(K_COPYB, 0), 0,
					     (struct pto_param[]){
						     PTO_OUT_EXISTING(y, 0,
								      s / 2 + 1),
						     PTO_IN(x, 0, s / 2 + 1),
						     PTO_SCALAR(s / 2 + 1) },
					     3);
			if (id < 0)
				return (int)id;
			id = pto_submit_task(rt, K_FOLDB + 1, PTO_WORKER_CUBE,
					     (struct pto_param[]){
						     PTO_INOUT(c->acc, 0, 8),
						     PTO_IN(y, 0, s / 2 + 1),
						     PTO_SCALAR(s / 2 + 1) },
					     3);
			if (id < 0)
				return (int)id;
		}
		id = pto_submit_task(rt, K_FOLDB, PTO_WORKER_VECTOR,
				     (struct pto_param[]){
					     PTO_INOUT(c->acc, 0, 8),
					     PTO_IN(x, 0, s), PTO_SCALAR(s) },
				     3);
		if (id < 0)
			return (int)id;
		if (pto_scope_end(rt))
			return -EPROTO;
	}
	return 0;
}

static uint64_t ref_heap(int two)
{
	uint8_t x[700], y[351];
	uint64_t acc = 0, it, s;

	for (it = 0; it < HEAP_ITERS; it++) {
		s = hsize(it);
		k_fillb((uint64_t[]){ (uintptr_t)x, s, it }, 3);
		if (two) {
			k_copyb((uint64_t[]){ (uintptr_t)y, (uintptr_t)x,
					      s / 2 + 1 }, 3);
			k_foldb((uint64_t[]){ (uintptr_t)&acc, (uintptr_t)y,
					      s / 2 + 1 }, 3);
		}
		k_foldb((uint64_t[]){ (uintptr_t)&acc, (uintptr_t)x, s }, 3);
	}
	return acc;
}

static void test_heap(int two)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct pto_stats st;
	struct heap_ctx c = { .two = two };
	const char *name = two ? "heap 4 KiB, two OUTPUTs per task" :
				 "heap 4 KiB";

	tl_config(&cfg, 64, HEAP);
	rt = make_rt(&cfg);
	c.acc = pto_malloc(rt, 64);
	if (!c.acc)
		bail_out("pto_malloc");
	c.acc[0] = 0;
	ok_eq(pto_run(rt, orch_heap, &c), 0, "%s: %d scopes: pto_run", name,
	      HEAP_ITERS);
	ok_eq(c.bad_align, 0, "%s: OUTPUTs are 64-byte aligned", name);
	ok(c.acc[0] == ref_heap(two), "%s: result equals the sequential loop",
	   name);
	pto_get_stats(rt, &st);
	ok(st.depth[1][PTO_RING_HEAP].size == HEAP &&
	   st.depth[1][PTO_RING_HEAP].high_water <= HEAP &&
	   st.depth[1][PTO_RING_HEAP].high_water > 0,
	   "%s: ring 1's heap ring size %llu, high water %llu", name,
	   (unsigned long long)st.depth[1][PTO_RING_HEAP].size,
	   (unsigned long long)st.depth[1][PTO_RING_HEAP].high_water);
	diag("%s: %llu heap stalls, %.1f ms stalled", name,
	     (unsigned long long)st.ring[PTO_RING_HEAP].stalls,
	     st.ring[PTO_RING_HEAP].stall_ns / 1e6);
	pto_runtime_destroy(rt);
}

/* ---- dependency pool and TensorMap pool back-pressure -------------------- */

#define POOL_ITERS 5000

/*
 * Per scope: four producers of OUTPUT tiles and one consumer reading all
 * four into the accumulator: nine TensorMap entries and four edges per
 * scope, through pools of 16 entries.
 */
static int orch_pools(struct pto_runtime *rt, void *arg)
{
	uint64_t *acc = arg, *t[4], it;
	int64_t id;
	int j;

	for (it = 0; it < POOL_ITERS; it++) {
		pto_scope_begin(rt);
		for (j = 0; j < 4; j++) {
			id = pto_submit_task(rt, KID(K_FILL, j % 2), j % 2,
					     (struct pto_param[]){
						     PTO_OUT(&t[j], 16),
						     PTO_SCALAR(2),
						     PTO_SCALAR(4 * it + j) },
					     3);
			if (id < 0)
				return (int)id;
		}
		id = pto_submit_task(rt, KID(K_MIX2, 2), 2,
				     (struct pto_param[]){
					     PTO_INOUT(acc, 0, 16),
					     PTO_IN(t[0], 0, 16),
					     PTO_IN(t[1], 0, 16),
					     PTO_SCALAR(2), PTO_SCALAR(it),
					     PTO_IN(t[2], 0, 16),
					     PTO_IN(t[3], 0, 16) }, 7);
		if (id < 0)
			return (int)id;
		if (pto_scope_end(rt))
			return -EPROTO;
	}
	return 0;
}

static void test_pools(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct pto_stats st;
	uint64_t *acc, ref[2] = { 1, 2 }, t0[2], t1[2], it;
	int ring;

	tl_config(&cfg, 64, 1 << 20);
	cfg.dep_pool_size = 16;
	cfg.tensormap_pool_size = 16;
	rt = make_rt(&cfg);
	acc = pto_malloc(rt, 16);
	if (!acc)
		bail_out("pto_malloc");
	acc[0] = ref[0];
	acc[1] = ref[1];
	ok_eq(pto_run(rt, orch_pools, acc), 0,
	      "pools of 16: %d scopes of 5 tasks: pto_run", POOL_ITERS);
	for (it = 0; it < POOL_ITERS; it++) {
		/* K_MIX2 reads only its first two inputs */
		k_fill((uint64_t[]){ (uintptr_t)t0, 2, 4 * it }, 3);
		k_fill((uint64_t[]){ (uintptr_t)t1, 2, 4 * it + 1 }, 3);
		k_mix2((uint64_t[]){ (uintptr_t)ref, (uintptr_t)t0,
				     (uintptr_t)t1, 2, it }, 5);
	}
	ok(acc[0] == ref[0] && acc[1] == ref[1],
	   "pools of 16: result equals the sequential loop");
	pto_get_stats(rt, &st);
	for (ring = PTO_RING_DEP; ring <= PTO_RING_TENSORMAP; ring++) {
		ok(st.depth[1][ring].size == 16 &&
		   st.depth[1][ring].high_water <= 16 &&
		   st.depth[1][ring].high_water > 0,
		   "pools of 16: ring 1's %s size %llu, high water %llu",
		   pto_ring_name(ring),
		   (unsigned long long)st.depth[1][ring].size,
		   (unsigned long long)st.depth[1][ring].high_water);
		diag("pools of 16: %s: %llu stalls, %.1f ms stalled",
		     pto_ring_name(ring),
		     (unsigned long long)st.ring[ring].stalls,
		     st.ring[ring].stall_ns / 1e6);
	}
	pto_runtime_destroy(rt);
}

/* ---- a heap buffer outlives a consumer that only lists a later writer ---- */

/*
 * Scope: A makes an OUTPUT B, W updates it in place, G waits on a gate,
 * and C copies B once W and G are done.  C lists W (the newest writer of
 * B, which covers it), not A.  After the scope, X takes a heap block as
 * large as B in a ring of 512 bytes: it fits only where B is, so only
 * after C has finished with B, and X opens G's gate.  A runtime that let
 * A's block go once W and the scope were done gives B to X while C has
 * not run, and C copies X's bytes; a correct one makes X wait, G's gate
 * times out, C copies B, and then X runs.
 */
#define REUSE_GATE_MS 300

static struct tl_gate reuse_gate;
static int reuse_timeouts;

/* tok: wait for the gate (bounded), then mark tok */
static void k_gate(const uint64_t *a, uint32_t n)
{
	if (tl_gate_wait(&reuse_gate, REUSE_GATE_MS))
		__atomic_fetch_add(&reuse_timeouts, 1, __ATOMIC_RELAXED);
	W(a[0])[0] = 1;
}

/* dst, nwords, seed: k_fill, then open the gate */
static void k_fill_open(const uint64_t *a, uint32_t n)
{
	k_fill(a, n);
	tl_gate_open(&reuse_gate);
}

#define K_GATE 50
#define K_FILL_OPEN 51

#define REUSE_SUBMIT(k, type, ...)					\
	pto_submit_task(rt, k, type, (struct pto_param[]){ __VA_ARGS__ },	\
			NPARAMS(__VA_ARGS__))

static int orch_reuse(struct pto_runtime *rt, void *arg)
{
	uint64_t *result = arg, *b, *tok, *y;

	pto_scope_begin(rt);
	if (REUSE_SUBMIT(KID(K_FILL, 0), 0, PTO_OUT(&b, 2048), PTO_SCALAR(256),
			 PTO_SCALAR(1)) < 0 ||
	    REUSE_SUBMIT(KID(K_STEP, 1), 1, PTO_INOUT(b, 0, 2048),
			 PTO_SCALAR(256), PTO_SCALAR(2)) < 0 ||
	    REUSE_SUBMIT(K_GATE, PTO_WORKER_AICPU, PTO_OUT(&tok, 64)) < 0 ||
	    REUSE_SUBMIT(KID(K_COPYB, 1), 1, PTO_OUT_EXISTING(result, 0, 2048),
			 PTO_IN(b, 0, 2048), PTO_SCALAR(2048),
			 PTO_IN(tok, 0, 64)) < 0)
		return -EPROTO;
	if (pto_scope_end(rt))
		return -EPROTO;
	if (REUSE_SUBMIT(K_FILL_OPEN, PTO_WORKER_VECTOR, PTO_OUT(&y, 2048),
			 PTO_SCALAR(256), PTO_SCALAR(99)) < 0)
		return -EPROTO;
	return 0;
}

static void test_reuse(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	uint64_t *result, ref[256];
	struct tl_rec r;

	tl_config(&cfg, 64, 4096);
	rt = tl_runtime(&cfg);
	tl_rec_init(&r, rt);
	if (register_test_kernels(&r) ||
	    tl_register(&r, K_GATE, PTO_WORKER_AICPU, k_gate, "gate") ||
	    tl_register(&r, K_FILL_OPEN, PTO_WORKER_VECTOR, k_fill_open,
			"fill_open"))
		bail_out("cannot register kernels");
	tl_rec_free(&r);
	result = pto_malloc(rt, 2048);
	if (!result)
		bail_out("pto_malloc");
	tl_gate_init(&reuse_gate);
	ok_eq(pto_run(rt, orch_reuse, result), 0, "heap reuse: pto_run");
	k_fill((uint64_t[]){ (uintptr_t)ref, 256, 1 }, 3);
	k_step((uint64_t[]){ (uintptr_t)ref, 256, 2 }, 3);
	ok(!memcmp(result, ref, sizeof(ref)),
	   "heap reuse: a consumer listing only a later writer reads the "
	   "buffer, not the next task's output");
	diag("heap reuse: gate timeouts %d (1 when the runtime made X wait)",
	     reuse_timeouts);
	tl_gate_destroy(&reuse_gate);
	pto_runtime_destroy(rt);
}

int main(void)
{
	uint64_t ntasks = tl_env_u64("PTO_TEST_TASKS", 100000);

	test_window(4, ntasks);
	test_window(8, ntasks);
	test_window(16, ntasks);
	test_heap(0);
	test_heap(1);
	test_pools();
	test_reuse();
	return tap_done();
}
