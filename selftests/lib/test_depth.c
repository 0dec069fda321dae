// SPDX-License-Identifier: MIT
/*
 * Scopes that never stall each other: the shapes of real orchestrations
 * in which an outer scope holds a buffer (weights, a KV cache, an
 * accumulator's input) while a long loop opens scopes of its own.  Every
 * task of a scope depth goes to that depth's ring, retired on its own, so
 * all of them run to the end with the default configuration.
 *
 * Only built-in ops, so the same program runs on the simulator and, in
 * the VM, on /dev/pto0 (PTO_DEVICE).  PTO_TEST_SCALE (percent, default
 * 100) shrinks the loops for slow machines; even the smallest scale runs
 * several times further than the loops that used to deadlock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { K_ADD = 1, K_COPY, K_FILL, K_SPIN };

#define V PTO_WORKER_VECTOR
#define KIB 1024ull
#define MIB (1024 * KIB)

static uint64_t scale_pct;

static uint64_t scaled(uint64_t n)
{
	uint64_t v = n * scale_pct / 100;

	return v ? v : 1;
}

static struct pto_runtime *depth_runtime(const struct pto_config *cfg)
{
	struct pto_runtime *rt = tl_runtime(cfg);

	if (pto_kernel_register_builtin(rt, K_ADD, V, PTO_OP_ADD_U32) ||
	    pto_kernel_register_builtin(rt, K_COPY, V, PTO_OP_COPY) ||
	    pto_kernel_register_builtin(rt, K_FILL, V, PTO_OP_FILL_U32) ||
	    pto_kernel_register_builtin(rt, K_SPIN, V, PTO_OP_SPIN_NS))
		bail_out("cannot register the built-in ops");
	return rt;
}

/* The default configuration, apart from a stall timeout fit for a test. */
static struct pto_runtime *default_runtime(void)
{
	struct pto_config cfg;

	tl_config(&cfg, 0, 0);
	return depth_runtime(&cfg);
}

static int fill(struct pto_runtime *rt, void **out, uint64_t bytes,
		uint32_t value)
{
	struct pto_param p[] = {
		PTO_OUT(out, bytes), PTO_SCALAR(value), PTO_SCALAR(bytes),
	};
	int64_t id = pto_submit_task(rt, K_FILL, V, p, 3);

	return id < 0 ? (int)id : 0;
}

/* dst = a + b, u32 words; dst an OUTPUT the runtime allocates. */
static int add_out(struct pto_runtime *rt, void **dst, void *a, void *b,
		   uint64_t bytes)
{
	struct pto_param p[] = {
		PTO_OUT(dst, bytes), PTO_IN(a, 0, bytes), PTO_IN(b, 0, bytes),
		PTO_SCALAR(bytes),
	};
	int64_t id = pto_submit_task(rt, K_ADD, V, p, 4);

	return id < 0 ? (int)id : 0;
}

/* acc += x, u32 words; acc updated in place (INOUT, and its address). */
static int accumulate(struct pto_runtime *rt, void *acc, void *x,
		      uint64_t xoff, uint64_t bytes)
{
	struct pto_param p[] = {
		PTO_INOUT(acc, 0, bytes), PTO_NODEP(acc, 0, bytes),
		PTO_IN(x, xoff, bytes), PTO_SCALAR(bytes),
	};
	int64_t id = pto_submit_task(rt, K_ADD, V, p, 4);

	return id < 0 ? (int)id : 0;
}

/* Every u32 word of buf equals want. */
static bool all_words(const void *buf, uint64_t bytes, uint32_t want)
{
	const uint32_t *w = buf;
	uint64_t i;

	for (i = 0; i < bytes / 4; i++)
		if (w[i] != want)
			return false;
	return true;
}

/* ---- an outer buffer read by every iteration of a scoped loop ----------- */

struct loop_ctx {
	uint64_t iters;
	uint32_t *acc;
};

/*
 * The outer scope produces W (4 KiB of 3s), then every iteration opens a
 * scope and submits two tasks reading W: one into a fresh OUTPUT, one
 * accumulating into acc.
 */
static int orch_outer_loop(struct pto_runtime *rt, void *arg)
{
	struct loop_ctx *c = arg;
	void *w, *tmp;
	uint64_t i;
	int ret;

	ret = fill(rt, &w, 4 * KIB, 3);
	for (i = 0; i < c->iters && !ret; i++) {
		pto_scope_begin(rt);
		ret = add_out(rt, &tmp, w, w, 4 * KIB);
		if (!ret)
			ret = accumulate(rt, c->acc, w, 0, 4 * KIB);
		if (pto_scope_end(rt) && !ret)
			ret = -EPROTO;
	}
	return ret;
}

static void test_outer_loop(void)
{
	struct pto_runtime *rt = default_runtime();
	struct loop_ctx c = { .iters = scaled(100000) };
	int ret;

	c.acc = pto_malloc(rt, 4 * KIB);
	if (!c.acc)
		bail_out("pto_malloc");
	memset(c.acc, 0, 4 * KIB);
	ret = pto_run(rt, orch_outer_loop, &c);
	ok_eq(ret, 0, "outer buffer, %llu scoped iterations reading it: "
	      "pto_run", (unsigned long long)c.iters);
	ok(all_words(c.acc, 4 * KIB, (uint32_t)(3 * c.iters)),
	   "outer buffer loop: every iteration added the outer buffer");
	pto_runtime_destroy(rt);
}

/* ---- a large outer buffer and a scratch buffer per inner scope --------- */

/*
 * A 16 MiB outer buffer, then per iteration a scope with a 1 MiB scratch
 * copy of one MiB of it and an accumulation of that copy's first 4 KiB.
 */
static int orch_big_outer(struct pto_runtime *rt, void *arg)
{
	struct loop_ctx *c = arg;
	uint64_t i, off;
	void *big, *scratch;
	int ret;

	ret = fill(rt, &big, 16 * MIB, 5);
	for (i = 0; i < c->iters && !ret; i++) {
		off = (i % 16) * MIB;
		pto_scope_begin(rt);
		{
			struct pto_param p[] = {
				PTO_OUT(&scratch, MIB), PTO_IN(big, off, MIB),
				PTO_SCALAR(MIB),
			};
			int64_t id = pto_submit_task(rt, K_COPY, V, p, 3);

			ret = id < 0 ? (int)id : 0;
		}
		if (!ret)
			ret = accumulate(rt, c->acc, scratch, 0, 4 * KIB);
		if (pto_scope_end(rt) && !ret)
			ret = -EPROTO;
	}
	return ret;
}

static void test_big_outer(void)
{
	struct pto_runtime *rt = default_runtime();
	struct loop_ctx c = { .iters = scaled(480) };
	int ret;

	c.acc = pto_malloc(rt, 4 * KIB);
	if (!c.acc)
		bail_out("pto_malloc");
	memset(c.acc, 0, 4 * KIB);
	ret = pto_run(rt, orch_big_outer, &c);
	ok_eq(ret, 0, "16 MiB outer buffer, %llu scopes of 1 MiB scratch: "
	      "pto_run", (unsigned long long)c.iters);
	ok(all_words(c.acc, 4 * KIB, (uint32_t)(5 * c.iters)),
	   "16 MiB outer buffer: every scratch copy was accumulated");
	pto_runtime_destroy(rt);
}

/* ---- three levels -------------------------------------------------------- */

struct levels_ctx {
	uint64_t middle, inner;
	uint32_t *acc;
	uint32_t wrap;		/* empty scopes around the inner loop */
};

/*
 * An outer buffer (1s); middle scopes, each producing a buffer (2s); in
 * each, inner scopes adding the two into a fresh OUTPUT and accumulating
 * that: acc gains 3 per inner scope.
 */
static int orch_levels(struct pto_runtime *rt, void *arg)
{
	struct levels_ctx *c = arg;
	void *outer, *mid, *sum;
	uint64_t m, i;
	uint32_t w;
	int ret;

	ret = fill(rt, &outer, 4 * KIB, 1);
	for (m = 0; m < c->middle && !ret; m++) {
		pto_scope_begin(rt);
		ret = fill(rt, &mid, 4 * KIB, 2);
		for (w = 0; w < c->wrap; w++)
			pto_scope_begin(rt);
		for (i = 0; i < c->inner && !ret; i++) {
			pto_scope_begin(rt);
			ret = add_out(rt, &sum, outer, mid, 4 * KIB);
			if (!ret)
				ret = accumulate(rt, c->acc, sum, 0, 4 * KIB);
			if (pto_scope_end(rt) && !ret)
				ret = -EPROTO;
		}
		for (w = 0; w < c->wrap; w++)
			if (pto_scope_end(rt) && !ret)
				ret = -EPROTO;
		if (pto_scope_end(rt) && !ret)
			ret = -EPROTO;
	}
	return ret;
}

static void test_levels(void)
{
	struct pto_runtime *rt = default_runtime();
	struct levels_ctx c = { .middle = scaled(50), .inner = scaled(2000) };
	int ret;

	c.acc = pto_malloc(rt, 4 * KIB);
	if (!c.acc)
		bail_out("pto_malloc");
	memset(c.acc, 0, 4 * KIB);
	ret = pto_run(rt, orch_levels, &c);
	ok_eq(ret, 0, "three levels, %llu middle scopes of %llu inner: pto_run",
	      (unsigned long long)c.middle, (unsigned long long)c.inner);
	ok(all_words(c.acc, 4 * KIB, (uint32_t)(3 * c.middle * c.inner)),
	   "three levels: every inner scope added both held buffers");
	pto_runtime_destroy(rt);
}

/* ---- a held buffer at every depth, deeper than the rings ------------------ */

struct deep_ctx {
	uint32_t depth;		/* levels of recursion */
	uint64_t leaf_iters;	/* loop at the deepest level */
	uint32_t *acc;
};

/*
 * Level d opens a scope and produces a buffer of (d + 1)s; the deepest
 * level loops, each iteration in a scope of its own adding every level's
 * buffer into acc; on the way back out each level adds its own buffer
 * once more, after its inner levels' scopes have ended.
 */
static int recurse(struct pto_runtime *rt, struct deep_ctx *c, uint32_t d,
		   void **bufs)
{
	uint64_t i;
	uint32_t k;
	int ret;

	pto_scope_begin(rt);
	ret = fill(rt, &bufs[d], 4 * KIB, d + 1);
	if (!ret && d + 1 < c->depth) {
		ret = recurse(rt, c, d + 1, bufs);
	} else {
		for (i = 0; i < c->leaf_iters && !ret; i++) {
			pto_scope_begin(rt);
			for (k = 0; k <= d && !ret; k++)
				ret = accumulate(rt, c->acc, bufs[k], 0,
						 4 * KIB);
			if (pto_scope_end(rt) && !ret)
				ret = -EPROTO;
		}
	}
	if (!ret)
		ret = accumulate(rt, c->acc, bufs[d], 0, 4 * KIB);
	if (pto_scope_end(rt) && !ret)
		ret = -EPROTO;
	return ret;
}

static int orch_deep(struct pto_runtime *rt, void *arg)
{
	void *bufs[16];

	return recurse(rt, arg, 0, bufs);
}

/*
 * Depths past the last ring share it, and it retires in order: the
 * bottom loop's tasks wait behind the buffers held there until those
 * levels end, so its tasks must fit in that ring's window (3000 of 4096).
 */
static void test_deep(uint32_t depth)
{
	struct pto_runtime *rt = default_runtime();
	struct deep_ctx c = { .depth = depth,
			      .leaf_iters = scaled(3000) / depth };
	uint64_t levels = 0, d;
	int ret;

	c.acc = pto_malloc(rt, 4 * KIB);
	if (!c.acc)
		bail_out("pto_malloc");
	memset(c.acc, 0, 4 * KIB);
	ret = pto_run(rt, orch_deep, &c);
	ok_eq(ret, 0, "recursion %u deep (%d rings), a held buffer at every "
	      "depth, %llu iterations at the bottom: pto_run", depth,
	      PTO_MAX_RINGS, (unsigned long long)c.leaf_iters);
	for (d = 0; d < depth; d++)
		levels += d + 1;
	ok(all_words(c.acc, 4 * KIB,
		     (uint32_t)(levels * (c.leaf_iters + 1))),
	   "recursion %u deep: every level's buffer was added in order", depth);
	pto_runtime_destroy(rt);
}

/*
 * A buffer held at every depth that has a ring of its own (0, 1 and 2),
 * and below them a long loop of scopes in the last ring.
 */
static int orch_every_depth(struct pto_runtime *rt, void *arg)
{
	struct loop_ctx *c = arg;
	void *b0, *b1, *b2, *tmp;
	uint64_t i;
	int ret;

	ret = fill(rt, &b0, 4 * KIB, 1);
	pto_scope_begin(rt);
	ret = ret ? ret : fill(rt, &b1, 4 * KIB, 2);
	pto_scope_begin(rt);
	ret = ret ? ret : fill(rt, &b2, 4 * KIB, 4);
	for (i = 0; i < c->iters && !ret; i++) {
		pto_scope_begin(rt);
		ret = add_out(rt, &tmp, b0, b1, 4 * KIB);
		if (!ret)
			ret = accumulate(rt, c->acc, tmp, 0, 4 * KIB);
		if (!ret)
			ret = accumulate(rt, c->acc, b2, 0, 4 * KIB);
		if (pto_scope_end(rt) && !ret)
			ret = -EPROTO;
	}
	if (pto_scope_end(rt) && !ret)
		ret = -EPROTO;
	if (pto_scope_end(rt) && !ret)
		ret = -EPROTO;
	return ret;
}

static void test_every_depth(void)
{
	struct pto_runtime *rt = default_runtime();
	struct loop_ctx c = { .iters = scaled(30000) };
	int ret;

	c.acc = pto_malloc(rt, 4 * KIB);
	if (!c.acc)
		bail_out("pto_malloc");
	memset(c.acc, 0, 4 * KIB);
	ret = pto_run(rt, orch_every_depth, &c);
	ok_eq(ret, 0, "a buffer held at depths 0, 1 and 2, %llu scopes below "
	      "them: pto_run", (unsigned long long)c.iters);
	ok(all_words(c.acc, 4 * KIB, (uint32_t)(7 * c.iters)),
	   "held at every depth: every iteration read all three");
	pto_runtime_destroy(rt);
}

/* ---- a scope ending while its deeper tasks still run --------------------- */

/*
 * A depth-1 scope produces a buffer and ends its depth-2 scope (and then
 * itself) while the depth-2 consumers of that buffer are still behind a
 * slow task: the buffer must live until they are done.
 */
static int orch_early_end(struct pto_runtime *rt, void *arg)
{
	struct loop_ctx *c = arg;
	void *buf;
	uint64_t i;
	int ret = 0;

	for (i = 0; i < c->iters && !ret; i++) {
		pto_scope_begin(rt);
		ret = fill(rt, &buf, 4 * KIB, 7);
		pto_scope_begin(rt);
		if (!ret) {
			/* 200 us, in front of acc's next update */
			struct pto_param spin[] = {
				PTO_SCALAR(200000),
				PTO_INOUT(c->acc, 0, 4 * KIB),
			};
			int64_t id = pto_submit_task(rt, K_SPIN, V, spin, 2);

			ret = id < 0 ? (int)id : 0;
		}
		if (!ret)
			ret = accumulate(rt, c->acc, buf, 0, 4 * KIB);
		if (pto_scope_end(rt) && !ret)
			ret = -EPROTO;
		if (pto_scope_end(rt) && !ret)
			ret = -EPROTO;
	}
	return ret;
}

static void test_early_end(void)
{
	struct pto_runtime *rt = default_runtime();
	struct loop_ctx c = { .iters = scaled(200) };
	int ret;

	c.acc = pto_malloc(rt, 4 * KIB);
	if (!c.acc)
		bail_out("pto_malloc");
	memset(c.acc, 0, 4 * KIB);
	ret = pto_run(rt, orch_early_end, &c);
	ok_eq(ret, 0, "scopes ending while their deeper consumers wait: "
	      "pto_run");
	ok(all_words(c.acc, 4 * KIB, (uint32_t)(7 * c.iters)),
	   "scopes ending early: the consumers read their buffers intact");
	pto_runtime_destroy(rt);
}

/* ---- cross-depth hazards ------------------------------------------------- */

/*
 * Writes and reads of one buffer from different depths, in an order where
 * every kind of hazard crosses rings: an inner scope overwrites what the
 * outer scope wrote (WAW), the outer scope then reads it (RAW) and
 * overwrites what an inner scope still reads (WAR).
 */
static int orch_hazards(struct pto_runtime *rt, void *arg)
{
	struct loop_ctx *c = arg;
	uint32_t *x = c->acc, *y = c->acc + 1024;
	uint64_t i;
	int ret = 0;

	for (i = 0; i < c->iters && !ret; i++) {
		struct pto_param set_x[] = {
			PTO_OUT_EXISTING(x, 0, 4 * KIB), PTO_SCALAR(i),
			PTO_SCALAR(4 * KIB),
		};
		struct pto_param copy_xy[] = {
			PTO_OUT_EXISTING(y, 0, 4 * KIB), PTO_IN(x, 0, 4 * KIB),
			PTO_SCALAR(4 * KIB),
		};

		pto_scope_begin(rt);
		pto_scope_begin(rt);
		ret = pto_submit_task(rt, K_FILL, V, set_x, 3) < 0;
		pto_scope_end(rt);
		/* depth 1 reads what depth 2 wrote, then overwrites it */
		ret |= pto_submit_task(rt, K_COPY, V, copy_xy, 3) < 0;
		set_x[1] = PTO_SCALAR(i + 1000);
		ret |= pto_submit_task(rt, K_FILL, V, set_x, 3) < 0;
		pto_scope_end(rt);
		/* depth 0 accumulates y (which must hold i) into z */
		ret |= accumulate(rt, c->acc + 2048, y, 0, 4 * KIB) != 0;
	}
	return ret ? -EPROTO : 0;
}

static void test_hazards(void)
{
	struct pto_runtime *rt = default_runtime();
	/* more tasks at depth 0 than its window: they retire as they go */
	struct loop_ctx c = { .iters = scaled(6000) };
	uint64_t i, want = 0;
	int ret;

	c.acc = pto_malloc(rt, 12 * KIB);
	if (!c.acc)
		bail_out("pto_malloc");
	memset(c.acc, 0, 12 * KIB);
	ret = pto_run(rt, orch_hazards, &c);
	ok_eq(ret, 0, "hazards across depths: pto_run");
	for (i = 0; i < c.iters; i++)
		want += i;
	ok(all_words(c.acc + 2048, 4 * KIB, (uint32_t)want) &&
	   all_words(c.acc, 4 * KIB, (uint32_t)(c.iters - 1 + 1000)),
	   "hazards across depths: read-after-write, write-after-write and "
	   "write-after-read across rings in submission order");
	pto_runtime_destroy(rt);
}

/* ---- what still deadlocks, and the advice ------------------------------- */

struct flat_ctx {
	uint64_t tasks;
	uint32_t *buf;
	bool buffers;		/* each task also makes a buffer */
};

/*
 * Every task in the run's own scope.  The scope holds the tasks that made
 * buffers to its end, and with them every later task of its ring; the
 * others retire once done.
 */
static int orch_flat(struct pto_runtime *rt, void *arg)
{
	struct flat_ctx *c = arg;
	uint64_t i;
	int ret = 0;
	void *t;

	for (i = 0; i < c->tasks && !ret; i++) {
		ret = accumulate(rt, c->buf, c->buf, 4096, 64);
		if (!ret && c->buffers)
			ret = fill(rt, &t, 64, (uint32_t)i);
	}
	return ret;
}

/*
 * A long flat loop of tasks on the program's own memory needs no scope:
 * none of its tasks made a buffer, so none is held, and a window of 64
 * runs any number of them.  Depth 0 is the only depth, so it also shows
 * that ring 0 retires while the run's scope is open.
 */
/* A runtime with a task window of 64, and c's buffer in it. */
static struct pto_runtime *flat_runtime(struct flat_ctx *c,
					uint32_t stall_ms)
{
	struct pto_config cfg;
	struct pto_runtime *rt;

	tl_config(&cfg, 64, 0);
	cfg.stall_timeout_ms = stall_ms;
	rt = depth_runtime(&cfg);
	c->buf = pto_malloc(rt, 8 * KIB);
	if (!c->buf)
		bail_out("pto_malloc");
	return rt;
}

static void test_flat_loop(void)
{
	struct flat_ctx c = { .tasks = scaled(20000) };
	struct pto_runtime *rt = flat_runtime(&c, 5000);
	int ret;

	memset(c.buf, 0, 64);
	memset(c.buf + 1024, 0, 64);
	c.buf[1024] = 1;
	c.buf[1024 + 15] = 3;
	ret = pto_run(rt, orch_flat, &c);
	ok_eq(ret, 0, "a flat loop of %llu tasks making no buffer, window "
	      "64: pto_run", (unsigned long long)c.tasks);
	ok(c.buf[0] == c.tasks && c.buf[15] == 3 * c.tasks && !c.buf[1],
	   "a flat loop: every task ran, in order (%u, %u)", c.buf[0],
	   c.buf[15]);
	pto_runtime_destroy(rt);
}

static void k_none(const uint64_t *a, uint32_t n)
{
}

/*
 * In ring 1 (4 KiB of heap): a task with 30 arguments, whose heap block
 * holds them but no buffer, so it retires at once; then 1 KiB buffers
 * until the heap is full.
 */
static int orch_heap_after_args(struct pto_runtime *rt, void *arg)
{
	struct pto_param p[30];
	int i, ret = 0;
	void *t;

	pto_scope_begin(rt);
	for (i = 0; i < 30; i++)
		p[i] = PTO_SCALAR(i);
	if (pto_submit_task(rt, 9, V, p, 30) < 0)
		ret = -1;
	for (i = 0; i < 8 && !ret; i++)
		ret = fill(rt, &t, 1024, (uint32_t)i);
	pto_scope_end(rt);
	return ret;
}

/*
 * The heap advice counts what the scope still has in the ring, not the
 * block of a task before it that made no buffer and has gone.
 */
static void test_advice_heap(void)
{
	unsigned long long use = 0, own = ~0ull;
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	const char *p;
	char *err;
	int ret;

	tl_config(&cfg, 64, 0);
	cfg.ring[1].heap_size = 4096;
	cfg.stall_timeout_ms = 300;
	rt = depth_runtime(&cfg);
	ret = pto_kernel_register(rt, 9, V, k_none, "args");
	if (ret == -EOPNOTSUPP) {	/* a device: built-in ops only */
		skip("heap advice: a device runs no C kernel (30 "
		     "arguments)");
		pto_runtime_destroy(rt);
		return;
	}
	if (ret)
		bail_out("pto_kernel_register");
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_heap_after_args, NULL);
	err = tl_capture_end(&cap);
	p = err ? strstr(err, "heap ring: size 4096, in use ") : NULL;
	if (p)
		sscanf(p, "heap ring: size 4096, in use %llu", &use);
	p = err ? strstr(err, "of its tasks (") : NULL;
	if (p)
		sscanf(p, "of its tasks (%llu bytes", &own);
	ok(ret == -EDEADLK && use && own <= use,
	   "heap advice: the scope holds %llu bytes of the %llu in use",
	   own, use);
	if (!(own <= use))
		diag("%s", err ? err : "");
	free(err);
	pto_runtime_destroy(rt);
}

/*
 * Scopes at depth 1, one after another, of buffers of these sizes; 0 ends
 * a scope.  failed_at: the index of the submission that failed, or -1.
 */
struct wrap_prog {
	const uint64_t *sizes;
	int n, failed_at;
};

static int orch_wrap(struct pto_runtime *rt, void *arg)
{
	struct wrap_prog *w = arg;
	int i = 0, ret = 0;
	void *t;

	while (i < w->n && !ret) {
		pto_scope_begin(rt);
		for (; i < w->n && w->sizes[i] && !ret; i++)
			ret = fill(rt, &t, w->sizes[i], (uint32_t)i);
		if (ret)
			w->failed_at = i - 1;
		i++;
		if (pto_scope_end(rt) && !ret)
			ret = -EPROTO;
	}
	return ret;
}

/*
 * Run w with ring 1's heap of *heap bytes; on -EDEADLK, *heap becomes the
 * size the advice gives (unchanged if it gives none).  The other rings'
 * heaps are small, so that a device whose heap is shorter than the sum
 * asked does not shrink them all in proportion, ring 1 with them.
 */
static int run_wrap(struct wrap_prog *w, unsigned long long *heap)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	const char *p;
	char *err;
	int ret;

	tl_config(&cfg, 64, 0);
	cfg.heap_size = 64 * KIB;
	cfg.ring[1].heap_size = *heap;
	cfg.stall_timeout_ms = 100;
	rt = depth_runtime(&cfg);
	w->failed_at = -1;
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_wrap, w);
	err = tl_capture_end(&cap);
	pto_runtime_destroy(rt);
	p = err ? strstr(err, "at least ") : NULL;
	if (ret == -EDEADLK && p)
		sscanf(p, "at least %llu", heap);
	free(err);
	return ret;
}

/*
 * The second scope's buffers (3648 bytes) fit a 4 KiB ring, but its first
 * lands after the first scope's buffer, which has not retired yet, the
 * next one is placed at the start, past 512 bytes at the end, and the
 * third has no room: the first is held.  Following the advice, the next
 * run passes.  It advised what was in use plus the request, and the next
 * run deadlocked 64 bytes later, nine times over.
 */
static void test_advice_heap_wrap(void)
{
	static const uint64_t sizes[] = { 2048, 0, 1536, 1024, 1088, 0 };
	struct wrap_prog w = { sizes, sizeof(sizes) / sizeof(sizes[0]) };
	unsigned long long heap = 4096, tried = 0;
	int ret = -EDEADLK, runs = 0;

	while (ret == -EDEADLK && runs < 12 && heap != tried) {
		tried = heap;
		ret = run_wrap(&w, &heap);
		runs++;
	}
	ok(ret == 0 && runs == 2, "heap advice with bytes passed over at the "
	   "ring's end: %llu bytes runs the program (%d, after %d runs)",
	   tried, ret, runs);
}

/* The sizes of the last PTO_HEAP_SIZE=... list in text into cfg's rings. */
static int take_heap_sizes(const char *text, struct pto_config *cfg)
{
	const char *p = NULL, *q = text;
	unsigned long long v;
	uint32_t r = 0;
	int len;

	while (q && (q = strstr(q, "PTO_HEAP_SIZE=")))
		p = q++;
	if (!p)
		return -1;
	p += strlen("PTO_HEAP_SIZE=");
	while (r < PTO_MAX_RINGS && sscanf(p, "%llu%n", &v, &len) == 1) {
		cfg->ring[r++].heap_size = v;
		p += len;
		if (*p++ != ',')
			break;
	}
	return r ? 0 : -1;
}

/*
 * A scope of 60 buffers (256 bytes to 16 KiB) in a 64 KiB ring 1.  The
 * advice's size holds what the scope submitted so far; following it run
 * after run grew the ring by a few buffers each time (eight deadlocks, a
 * stall timeout each).  Its last line gives a far larger ring to measure
 * with: that run goes through, and a ring of twice its high water runs
 * the program too.
 */
static int run_measure(struct wrap_prog *w, struct pto_config *cfg,
		       char **err, uint64_t *high_water)
{
	struct pto_runtime *rt = depth_runtime(cfg);
	struct tl_capture cap;
	struct pto_stats st;
	int ret;

	w->failed_at = -1;
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_wrap, w);
	*err = tl_capture_end(&cap);
	pto_get_stats(rt, &st);
	*high_water = st.depth[1][PTO_RING_HEAP].high_water;
	pto_runtime_destroy(rt);
	return ret;
}

static void test_advice_measure(void)
{
	uint64_t sizes[61], hw = 0, hw2;
	struct wrap_prog w = { sizes, 61 };
	struct pto_config cfg;
	char *err = NULL, *line;
	bool named;
	int i, ret;

	for (i = 0; i < 60; i++)
		sizes[i] = 256 << (i % 7);
	sizes[60] = 0;
	tl_config(&cfg, 64, 0);
	cfg.heap_size = 64 * KIB;
	cfg.stall_timeout_ms = 100;
	ret = run_measure(&w, &cfg, &err, &hw);
	line = err ? strstr(err, "to size it for the whole run at once") :
	       NULL;
	named = line && !take_heap_sizes(line, &cfg);
	ok(ret == -EDEADLK && named, "measure advice: a scope of 60 buffers "
	   "in a 64 KiB ring deadlocks (%d), and the advice names a far "
	   "larger ring (%llu)", ret,
	   (unsigned long long)cfg.ring[1].heap_size);
	free(err);
	ret = run_measure(&w, &cfg, &err, &hw);
	free(err);
	ok(ret == 0 && hw > 64 * KIB,
	   "measure advice: with it the program runs (%d), ring 1 held %llu "
	   "bytes at most", ret, (unsigned long long)hw);
	cfg.ring[1].heap_size = (2 * hw + 4095) & ~4095ull;
	ret = run_measure(&w, &cfg, &err, &hw2);
	free(err);
	ok(ret == 0, "measure advice: twice that high water (%llu) runs it "
	   "too (%d)", (unsigned long long)cfg.ring[1].heap_size, ret);
}

/* What the heap rings get in all when they ask for 2 GiB. */
static uint64_t heap_rings_room(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct pto_stats st;
	uint64_t room = 0;
	uint32_t r;

	tl_config(&cfg, 64, 0);
	cfg.heap_size = 512 * MIB;
	rt = depth_runtime(&cfg);
	pto_get_stats(rt, &st);
	for (r = 0; r < PTO_MAX_RINGS; r++)
		room += st.depth[r][PTO_RING_HEAP].size;
	pto_runtime_destroy(rt);
	return room;
}

/*
 * A scope that makes three 8 MiB buffers in ring 1, of 8 MiB.  On a
 * device, the other rings take what ring 1 leaves of what the heap rings
 * may have there: the size advised for ring 1, with the others as they
 * were, adds up to more, and libpto shrinks every ring in proportion.
 * Ring 1 came out a page short of the advice and the next run deadlocked
 * the same way.  The advice now says so and gives sizes for the others
 * that leave ring 1 its own; the last sizes it gives run the program.  On
 * the simulator nothing shrinks and the advice has no such part.
 */
static void test_advice_heap_share(void)
{
	static const uint64_t sizes[] = { 8 * MIB, 8 * MIB, 8 * MIB, 0 };
	struct wrap_prog w = { sizes, sizeof(sizes) / sizeof(sizes[0]) };
	uint64_t room = heap_rings_room();
	bool shrinks = room < 2048 * MIB, noted;
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	int ret, again = -1;
	char *err;

	tl_config(&cfg, 64, 0);
	cfg.heap_size = shrinks ? (room - 8 * MIB) / 3 / 4096 * 4096 - 4096 :
			64 * MIB;
	cfg.ring[1].heap_size = 8 * MIB;
	cfg.stall_timeout_ms = 100;
	rt = depth_runtime(&cfg);
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_wrap, &w);
	err = tl_capture_end(&cap);
	pto_runtime_destroy(rt);
	noted = err && strstr(err, "shrinks every ring in proportion");
	if (ret == -EDEADLK && err && !take_heap_sizes(err, &cfg)) {
		rt = depth_runtime(&cfg);
		tl_capture_begin(&cap);
		again = pto_run(rt, orch_wrap, &w);
		free(tl_capture_end(&cap));
		pto_runtime_destroy(rt);
	}
	ok(ret == -EDEADLK && noted == shrinks && again == 0,
	   "heap advice where the heap rings share a device's heap (%llu MiB "
	   "in all): the sizes it gives run the program (%d, then %d)",
	   (unsigned long long)(room >> 20), ret, again);
	if (ret != -EDEADLK || noted != shrinks || again)
		diag("%s", err ? err : "");
	free(err);
}

/*
 * Random programs of scopes of buffers on a 4 KiB ring: each size the
 * advice gives takes the program past the submission that deadlocked.
 * (The old advice gave 191 repeats in 150 programs.)
 */
static void test_advice_heap_random(uint64_t seed)
{
	int prog, repeats = 0, stuck = 0, programs = (int)scaled(20);
	uint64_t sizes[40];
	struct tl_rng rng;

	tl_rng_seed(&rng, seed);
	for (prog = 0; prog < programs; prog++) {
		struct wrap_prog w = { sizes, 0 };
		unsigned long long heap = 4096, tried;
		int s, b, last = -1, runs = 0, ret;
		int nscopes = (int)tl_range(&rng, 2, 4);

		for (s = 0; s < nscopes; s++) {
			int nb = (int)tl_range(&rng, 2, 6);

			for (b = 0; b < nb; b++)
				sizes[w.n++] = 64 * tl_range(&rng, 1, 28);
			sizes[w.n++] = 0;
		}
		do {
			tried = heap;
			ret = run_wrap(&w, &heap);
			if (ret == -EDEADLK && w.failed_at <= last)
				repeats++;
			last = w.failed_at;
		} while (ret == -EDEADLK && heap > tried && ++runs < 20);
		stuck += ret != 0;
	}
	ok(!repeats && !stuck, "heap advice, %d random programs: every advised "
	   "size runs past the deadlock (%d repeats, %d not run through)",
	   programs, repeats, stuck);
}

/*
 * Rings of very different heaps on a device whose heap is shorter than
 * their sum: libpto shrinks them in proportion, and a one-page ring, which
 * the proportion rounds to 0 pages, keeps its page (it was a create that
 * failed with -EINVAL).  On the simulator nothing shrinks; the program
 * runs the same.
 */
struct small_ring_ctx {
	uint32_t *acc;
	uint32_t steps;
};

static int orch_small_ring(struct pto_runtime *rt, void *arg)
{
	struct small_ring_ctx *c = arg;
	uint32_t i;
	int ret = 0;

	for (i = 1; i <= c->steps && !ret; i++) {
		void *out;

		pto_scope_begin(rt);	/* depth 1: the one-page ring */
		ret = fill(rt, &out, 64, i);
		if (!ret &&
		    PTO_SUBMIT(rt, K_COPY, V, PTO_OUT_EXISTING(c->acc, 0, 64),
			       PTO_IN(out, 0, 64), PTO_SCALAR(64)) < 0)
			ret = -EPROTO;
		if (pto_scope_end(rt) && !ret)
			ret = -EPROTO;
	}
	return ret;
}

static void test_small_ring_short_heap(void)
{
	struct small_ring_ctx c = { .steps = (uint32_t)scaled(500) };
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct pto_stats st;
	int ret;

	tl_config(&cfg, 64, 0);
	cfg.heap_size = 512 * MIB;	/* 1.5 GiB in all: past a device's */
	cfg.ring[1].heap_size = 4096;
	ret = pto_runtime_create(&cfg, &rt);
	ok_eq(ret, 0, "short heap: rings of 512 MiB and one of 4 KiB create");
	if (ret)
		return;
	pto_runtime_destroy(rt);
	rt = depth_runtime(&cfg);
	c.acc = pto_malloc(rt, 64);
	if (!c.acc)
		bail_out("pto_malloc");
	ret = pto_run(rt, orch_small_ring, &c);
	pto_get_stats(rt, &st);
	ok(ret == 0 && c.acc[0] == c.steps && c.acc[15] == c.steps,
	   "short heap: %u scopes at depth 1 run through its one page "
	   "(%d, last value %u)", c.steps, ret, c.acc[0]);
	ok(st.depth[1][PTO_RING_HEAP].size == 4096 &&
	   st.depth[0][PTO_RING_HEAP].size <= 512 * MIB &&
	   st.depth[0][PTO_RING_HEAP].size >= 4096,
	   "short heap: the small ring keeps its 4 KiB, ring 0 has %llu MiB",
	   (unsigned long long)(st.depth[0][PTO_RING_HEAP].size >> 20));
	pto_runtime_destroy(rt);
}

static void test_advice_grow(void)
{
	struct flat_ctx c = { .tasks = 200, .buffers = true };
	struct pto_runtime *rt = flat_runtime(&c, 300);
	struct tl_capture cap;
	char *err;
	int ret;

	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_flat, &c);
	err = tl_capture_end(&cap);
	ok_eq(ret, -EDEADLK, "a scope submitting more tasks than its ring "
	      "holds: -EDEADLK");
	ok(err && strstr(err, "ring 0's task window") &&
	   strstr(err, "held by its scope (depth 0)") &&
	   strstr(err, "holds 64 of its tasks") &&
	   strstr(err, "PTO_TASK_WINDOW=128,"),
	   "its diagnosis names the ring, the holder and the window the "
	   "scope needs so far");
	if (err && !strstr(err, "PTO_TASK_WINDOW=128,"))
		diag("%s", err);
	free(err);
	pto_runtime_destroy(rt);
}

/*
 * orch_levels (c: 100 inner scopes in one middle one) on a runtime of
 * cfg with nrings rings: its result, -EPROTO when it succeeded with acc
 * wrong, and (err not NULL) what it said on stderr.
 */
static int levels_run(struct pto_config *cfg, uint32_t nrings,
		      uint32_t stall_ms, struct levels_ctx *c, char **err)
{
	struct pto_runtime *rt;
	struct tl_capture cap;
	int ret;

	cfg->nrings = nrings;
	cfg->stall_timeout_ms = stall_ms;
	rt = depth_runtime(cfg);
	c->middle = 1;
	c->inner = 100;
	c->acc = pto_malloc(rt, 4 * KIB);
	if (!c->acc)
		bail_out("pto_malloc");
	memset(c->acc, 0, 4 * KIB);
	if (err)
		tl_capture_begin(&cap);
	ret = pto_run(rt, orch_levels, c);
	if (err)
		*err = tl_capture_end(&cap);
	if (!ret && !all_words(c->acc, 4 * KIB, 300))
		ret = -EPROTO;
	pto_runtime_destroy(rt);
	return ret;
}

/*
 * With two rings, depths 1 and 2 share ring 1: a buffer held at depth 1
 * pins every task of the depth-2 loop behind it.  A window size only
 * helps a loop of bounded length; the advice is a ring per depth.
 */
static void test_advice_rings(void)
{
	struct levels_ctx c = { 0 };
	struct pto_config cfg;
	char *err;
	int ret;

	tl_config(&cfg, 32, 0);
	ret = levels_run(&cfg, 2, 300, &c, &err);
	ok_eq(ret, -EDEADLK, "two rings, a loop sharing ring 1 with a held "
	      "buffer: -EDEADLK");
	ok(err && strstr(err, "held by its scope (depth 1)") &&
	   strstr(err, "nested in it (depth 2) share ring 1") &&
	   strstr(err, "a larger ring only lets a loop of bounded length") &&
	   strstr(err, "PTO_RINGS=3"),
	   "its diagnosis says a size only helps a bounded loop and a "
	   "ring per depth helps any");
	if (err && !strstr(err, "PTO_RINGS=3"))
		diag("%s", err);
	ok(err && strstr(err, "the open scopes hold 32 of its task window") &&
	   strstr(err, "needs at least 64 so far (the power of two above the "
		  "33 tasks held and asked; PTO_TASK_WINDOW=32,64)"),
	   "and the size that lets the open scopes this far, for nesting "
	   "without a loop");
	free(err);
	/* and with the rings it asks for, the same program runs */
	ret = levels_run(&cfg, 3, 20000, &c, NULL);
	ok(ret == 0, "with PTO_RINGS=3 the same program runs to the end (%d)",
	   ret);
}

/*
 * One ring, and the loop's scopes nested deeper (5) than there can be
 * rings: more rings still give the held buffer's scope (depth 0) a ring
 * apart from the loop, and the advice says so rather than "at most 4
 * rings".
 */
static void test_advice_rings_deep(void)
{
	struct levels_ctx c = { .wrap = 3 };
	struct pto_config cfg;
	char *err;
	int ret;

	tl_config(&cfg, 32, 0);
	ret = levels_run(&cfg, 1, 300, &c, &err);
	ok(ret == -EDEADLK && err && strstr(err, "PTO_RINGS=4") &&
	   !strstr(err, "at most 4 rings"),
	   "one ring, a loop nested at depth 5 under a held buffer: "
	   "-EDEADLK (%d), and the advice is PTO_RINGS=4", ret);
	if (err && !strstr(err, "PTO_RINGS=4"))
		diag("%s", err);
	free(err);
	ret = levels_run(&cfg, 4, 20000, &c, NULL);
	ok(ret == 0, "with PTO_RINGS=4 the same program runs to the end (%d)",
	   ret);
}

/*
 * A runtime can be made with the setting one advice line names, the
 * others left at their defaults: 1 if so, 0 if refused.
 */
static int advice_accepted(const char *setting)
{
	char name[64], *eq = strchr(setting, '=');
	struct pto_config cfg;
	struct pto_runtime *rt;
	int ret;

	if (!eq || eq - setting >= (ptrdiff_t)sizeof(name))
		return 0;
	memcpy(name, setting, eq - setting);
	name[eq - setting] = 0;
	setenv(name, eq + 1, 1);
	pto_config_init(&cfg);
	ret = pto_runtime_create(&cfg, &rt);
	unsetenv(name);
	if (ret)
		return 0;
	pto_runtime_destroy(rt);
	return 1;
}

/* Item i of a comma-separated list (after "NAME="), or 0. */
static unsigned long long list_item(const char *list, unsigned int i)
{
	const char *p = strchr(list, '=');

	for (p = p ? p + 1 : list; i && p; i--) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return p ? strtoull(p, NULL, 10) : 0;
}

/*
 * In the line that gives all the advice at once, the assignment of the
 * variable that setting (one ring's advice) assigns: it must name ring's
 * advised size too.  1 if so.
 */
static int merged_has(const char *all, const char *setting, unsigned int ring)
{
	size_t name = strcspn(setting, "=") + 1;
	const char *p;

	for (p = strstr(all, " PTO_"); p; p = strstr(p + 1, " PTO_"))
		if (!strncmp(p + 1, setting, name))
			return list_item(p + 1, ring) ==
			       list_item(setting, ring);
	return 0;
}

/*
 * Every size pto_print_stats() advises is one the runtime accepts: after
 * a run that used a sliver of the default rings, it advises shrinking,
 * and an advice under the smallest size a ring may have would be refused.
 * The line with all of it at once keeps each ring's advice (one line per
 * ring, each a whole list, cannot all be pasted: the last one wins).
 */
static void check_advice_accepted(struct pto_runtime *rt)
{
	char *text = NULL, *line, *save = NULL, *all = NULL;
	char *set[2 * PTO_MAX_RINGS * PTO_NUM_RINGS];
	unsigned int ring[2 * PTO_MAX_RINGS * PTO_NUM_RINGS];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	int lines = 0, good = 0, kept = 0, i;

	if (!out)
		bail_out("open_memstream");
	pto_print_stats(rt, out);
	fclose(out);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *end;

		if (strstr(line, "all of it at once:"))
			all = line;
		if (!strstr(line, "PTO_") || !strstr(line, "would") ||
		    lines == (int)(sizeof(set) / sizeof(set[0])))
			continue;
		ring[lines] = (unsigned int)strtoul(line + strlen("  ring "),
						    NULL, 10);
		set[lines] = strstr(line, "PTO_");
		end = strchr(set[lines], ' ');
		if (end)
			*end = 0;
		if (advice_accepted(set[lines]))
			good++;
		else
			diag("refused: %s", set[lines]);
		lines++;
	}
	ok(lines >= 2 && good == lines,
	   "stats: every ring size the advice names is accepted (%d of %d)",
	   good, lines);
	for (i = 0; all && i < lines; i++)
		kept += merged_has(all, set[i], ring[i]);
	ok(all && kept == lines,
	   "stats: one line gives all %d pieces of advice at once (%d kept)",
	   lines, kept);
	free(text);
}

static void test_ring_stats(void)
{
	struct pto_runtime *rt = default_runtime();
	struct levels_ctx c = { .middle = 4, .inner = 50 };
	struct pto_stats st;

	c.acc = pto_malloc(rt, 4 * KIB);
	if (!c.acc)
		bail_out("pto_malloc");
	if (pto_run(rt, orch_levels, &c))
		bail_out("pto_run");
	pto_get_stats(rt, &st);
	ok(st.nrings == PTO_MAX_RINGS,
	   "stats: %u rings by default", st.nrings);
	ok(st.depth[0][PTO_RING_TASK].high_water == 1 &&
	   st.depth[1][PTO_RING_TASK].high_water >= 1 &&
	   st.depth[2][PTO_RING_TASK].high_water >= 2 &&
	   st.depth[3][PTO_RING_TASK].high_water == 0,
	   "stats: each depth's tasks counted in its own ring (%llu %llu "
	   "%llu %llu)",
	   (unsigned long long)st.depth[0][PTO_RING_TASK].high_water,
	   (unsigned long long)st.depth[1][PTO_RING_TASK].high_water,
	   (unsigned long long)st.depth[2][PTO_RING_TASK].high_water,
	   (unsigned long long)st.depth[3][PTO_RING_TASK].high_water);
	ok(st.ring[PTO_RING_HEAP].size ==
	   st.depth[0][PTO_RING_HEAP].size * st.nrings,
	   "stats: the 0.1 totals sum the rings");
	check_advice_accepted(rt);
	pto_runtime_destroy(rt);
}

/*
 * One ring: a depth-1 scope holds its first task while a nested scope's
 * three tasks, ended, sit behind it in the ring; one more submit then
 * finds the window of 4 full.
 */
static int orch_behind(struct pto_runtime *rt, void *arg)
{
	void *out;
	int i, ret;

	(void)arg;
	pto_scope_begin(rt);
	ret = fill(rt, &out, 64, 1);
	pto_scope_begin(rt);
	for (i = 0; i < 3 && !ret; i++)
		ret = fill(rt, &out, 64, 2);
	pto_scope_end(rt);
	if (!ret)
		ret = fill(rt, &out, 64, 3);
	pto_scope_end(rt);
	return ret;
}

/*
 * The advice counts what sits behind the held task, not only what the
 * holding scope submitted: the size it names lets the same run through.
 */
static void test_advice_behind(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	char *err;
	int ret;

	tl_config(&cfg, 4, 0);
	cfg.nrings = 1;
	cfg.stall_timeout_ms = 300;
	rt = depth_runtime(&cfg);
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_behind, NULL);
	err = tl_capture_end(&cap);
	ok_eq(ret, -EDEADLK, "ended nested scopes behind a held task: "
	      "-EDEADLK with a window of 4");
	ok(err && strstr(err, "ring 0 holds 3 more slots of scopes that ended") &&
	   strstr(err, "at least 8 so far (the power of two above the 5 "
		  "tasks held and asked; PTO_TASK_WINDOW=8)"),
	   "its advice counts them: a window of 8");
	if (err && !strstr(err, "PTO_TASK_WINDOW=8)"))
		diag("%s", err);
	free(err);
	pto_runtime_destroy(rt);
	cfg.task_window = 8;
	rt = depth_runtime(&cfg);
	ok_eq(pto_run(rt, orch_behind, NULL), 0,
	      "and the same run with a window of 8 completes");
	pto_runtime_destroy(rt);
}

int main(void)
{
	uint64_t seed = tl_env_seed("PTO_TEST_SEED");

	scale_pct = tl_env_u64("PTO_TEST_SCALE", 100);
	diag("scale %llu%% (PTO_TEST_SCALE), seed %llu (PTO_TEST_SEED)",
	     (unsigned long long)scale_pct, (unsigned long long)seed);
	test_outer_loop();
	test_big_outer();
	test_levels();
	test_every_depth();
	test_deep(PTO_MAX_RINGS - 1);
	test_deep(10);
	test_early_end();
	test_hazards();
	test_flat_loop();
	test_advice_grow();
	test_advice_heap();
	test_advice_heap_wrap();
	test_advice_measure();
	test_advice_heap_share();
	test_advice_heap_random(seed);
	test_advice_rings();
	test_advice_rings_deep();
	test_advice_behind();
	test_ring_stats();
	test_small_ring_short_heap();
	return tap_done();
}
