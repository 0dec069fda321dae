// SPDX-License-Identifier: MIT
/*
 * Dependency inference on overlapping byte ranges: read-after-write,
 * write-after-write and write-after-read on partial overlaps, adjacent
 * ranges, regions of 0 bytes and NODEP that must not serialize, and many
 * readers followed by a writer.
 *
 * Each case is checked three ways:
 *  - results against the sequential replay;
 *  - order: every task logs when it starts and ends, and each expected
 *    dependency must end before its consumer starts;
 *  - inferred edges (pto_get_stats().edges, on a fresh runtime): the first
 *    task of a case waits on a gate that the orchestration opens only
 *    after submitting everything, so each producer is still alive when
 *    its consumers are submitted and the count is exact.
 * Tasks that must run concurrently prove it: one waits on a gate the other
 * opens, so a wrongly inferred dependency makes the waiter time out (and
 * the case fail) instead of hanging.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

#define NBUF 4
#define BUFSZ 256
#define MAXT 8
#define NONE 0xffu
#define GATE_MS 10000

static struct tl_gate gates[2];
static atomic_int gate_timeouts;
static atomic_ullong seq;
static uint64_t start_seq[1024], end_seq[1024];

/*
 * dst, dst_bytes, tag, wait_gate, open_gate, nsrc, (src, src_bytes)...:
 * dst bytes become a hash of the sources, the tag and their old value.
 */
static void k_probe(const uint64_t *a, uint32_t n)
{
	uint8_t *dst = (uint8_t *)(uintptr_t)a[0];
	uint64_t h = tl_mix(a[2]), i, s;

	if (a[3] != NONE && tl_gate_wait(&gates[a[3]], GATE_MS))
		atomic_fetch_add(&gate_timeouts, 1);
	start_seq[a[2]] = atomic_fetch_add(&seq, 1);
	for (s = 0; s < a[5]; s++) {
		const uint8_t *src = (const uint8_t *)(uintptr_t)a[6 + 2 * s];

		for (i = 0; i < a[7 + 2 * s]; i++)
			h = tl_mix(h ^ src[i]);
	}
	for (i = 0; i < a[1]; i++)
		dst[i] = (uint8_t)tl_mix(h + i + dst[i]);
	end_seq[a[2]] = atomic_fetch_add(&seq, 1);
	if (a[4] != NONE)
		tl_gate_open(&gates[a[4]]);
}

#define K_PROBE 1

struct region {
	int kind, buf;
	uint64_t off, size;
};

struct pspec {
	int type;
	struct region dst;
	int wait, open;
	int nsrc;
	struct region src[3];
};

struct pcase {
	const char *name;
	int ntasks;
	struct pspec t[MAXT];
	int ndeps;
	int deps[8][2];		/* [a, b]: a ends before b starts */
	long edges;		/* exact pto_stats.edges, or -1 */
};

#define R(k, b, o, s) { .kind = PTO_PARAM_##k, .buf = b, .off = o, .size = s }
#define V PTO_WORKER_VECTOR
#define C PTO_WORKER_CUBE
#define A PTO_WORKER_AICPU

/* Gate 0 is opened by the orchestration after the last submit. */
static const struct pcase cases[] = {
	{ "read-after-write, partial overlap", 2, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 0, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 1, 0, 8), NONE, NONE, 1,
		  { R(INPUT, 0, 32, 64) } },
	  }, 1, { { 0, 1 } }, 1 },
	{ "write-after-write, 8-byte overlap", 2, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 0, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 0, 56, 64), NONE, NONE, 0 },
	  }, 1, { { 0, 1 } }, 1 },
	{ "write-after-read, 1-byte overlap", 2, {
		{ V, R(OUTPUT_EXISTING, 1, 0, 8), 0, NONE, 1,
		  { R(INPUT, 0, 0, 64) } },
		{ C, R(OUTPUT_EXISTING, 0, 63, 1), NONE, NONE, 0 },
	  }, 1, { { 0, 1 } }, 1 },
	{ "inout after inout, overlapping", 3, {
		{ V, R(INOUT, 0, 16, 32), 0, NONE, 0 },
		{ C, R(INOUT, 0, 40, 32), NONE, NONE, 0 },
		{ A, R(INOUT, 0, 0, 17), NONE, NONE, 0 },
	  }, 2, { { 0, 1 }, { 0, 2 } }, -1 },
	{ "adjacent writes do not serialize", 2, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 1, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 0, 64, 64), NONE, 1, 0 },
	  }, 0, { { 0 } }, 0 },
	{ "adjacent read and write do not serialize", 2, {
		{ V, R(OUTPUT_EXISTING, 1, 0, 8), 1, NONE, 1,
		  { R(INPUT, 0, 0, 64) } },
		{ C, R(OUTPUT_EXISTING, 0, 64, 64), NONE, 1, 0 },
	  }, 0, { { 0 } }, 0 },
	{ "readers do not serialize", 2, {
		{ V, R(OUTPUT_EXISTING, 1, 0, 8), 1, NONE, 1,
		  { R(INPUT, 0, 0, 64) } },
		{ C, R(OUTPUT_EXISTING, 2, 0, 8), NONE, 1, 1,
		  { R(INPUT, 0, 0, 64) } },
	  }, 0, { { 0 } }, 0 },
	{ "different buffers do not serialize", 2, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 1, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 3, 0, 64), NONE, 1, 0 },
	  }, 0, { { 0 } }, 0 },
	{ "NODEP is not tracked", 2, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 1, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 1, 0, 8), NONE, 1, 1,
		  { R(NODEP, 0, 0, 64) } },
	  }, 0, { { 0 } }, 0 },
	{ "one read spanning two writers", 3, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 0, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 0, 64, 64), 0, NONE, 0 },
		{ A, R(OUTPUT_EXISTING, 1, 0, 8), NONE, NONE, 1,
		  { R(INPUT, 0, 63, 2) } },
	  }, 2, { { 0, 2 }, { 1, 2 } }, 2 },
	{ "write spanning a writer and a reader", 3, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 0, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 1, 0, 8), 0, NONE, 1,
		  { R(INPUT, 0, 100, 8) } },
		{ A, R(OUTPUT_EXISTING, 0, 32, 72), NONE, NONE, 0 },
	  }, 2, { { 0, 2 }, { 1, 2 } }, 2 },
	{ "a task reading and writing one region", 3, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 0, NONE, 0 },
		{ C, R(INOUT, 0, 0, 64), NONE, NONE, 1,
		  { R(INPUT, 0, 0, 64) } },
		{ A, R(OUTPUT_EXISTING, 1, 0, 8), NONE, NONE, 1,
		  { R(INPUT, 0, 8, 8) } },
	  }, 2, { { 0, 1 }, { 1, 2 } }, -1 },
	/* the read needs 0's bytes from nobody: 1 overwrote them all */
	{ "a read covered by two newer writers, not the older", 4, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 0, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 0, 0, 64), NONE, NONE, 0 },
		{ A, R(OUTPUT_EXISTING, 0, 64, 64), NONE, NONE, 0 },
		{ V, R(OUTPUT_EXISTING, 1, 0, 8), NONE, NONE, 1,
		  { R(INPUT, 0, 0, 128) } },
	  }, 3, { { 0, 1 }, { 1, 3 }, { 2, 3 } }, 3 },
	/* size 0 overlaps nothing, even inside a written range */
	{ "a read of 0 bytes inside a write does not wait", 2, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 1, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 1, 0, 8), NONE, 1, 1,
		  { R(INPUT, 0, 32, 0) } },
	  }, 0, { { 0 } }, 0 },
	{ "a write of 0 bytes inside a write does not wait", 2, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 64), 1, NONE, 0 },
		{ C, R(INOUT, 0, 16, 0), NONE, 1, 0 },
	  }, 0, { { 0 } }, 0 },
	{ "disjoint writes, then a read of a gap", 3, {
		{ V, R(OUTPUT_EXISTING, 0, 0, 32), 0, NONE, 0 },
		{ C, R(OUTPUT_EXISTING, 0, 64, 32), 0, NONE, 0 },
		{ A, R(OUTPUT_EXISTING, 1, 0, 8), NONE, NONE, 1,
		  { R(INPUT, 0, 32, 32) } },
	  }, 0, { { 0 } }, 0 },
};

struct run_ctx {
	struct tl_rec *r;
	const struct pcase *c;
	uint8_t *buf[NBUF];
	int gate0_open;
};

static struct pto_param region_param(struct run_ctx *x, const struct region *g)
{
	struct pto_param p = {
		.kind = g->kind, .base = x->buf[g->buf], .offset = g->off,
		.size = g->size,
	};

	return p;
}

static int orch_case(struct pto_runtime *rt, void *arg)
{
	struct run_ctx *x = arg;
	struct pto_param p[PTO_MAX_PARAMS];
	int t, s, n, ret = 0;

	for (t = 0; t < x->c->ntasks && !ret; t++) {
		const struct pspec *ps = &x->c->t[t];

		n = 0;
		p[n++] = region_param(x, &ps->dst);
		p[n++] = PTO_SCALAR(ps->dst.size);
		p[n++] = PTO_SCALAR(t);
		p[n++] = PTO_SCALAR(ps->wait);
		p[n++] = PTO_SCALAR(ps->open);
		p[n++] = PTO_SCALAR(ps->nsrc);
		for (s = 0; s < ps->nsrc; s++) {
			p[n++] = region_param(x, &ps->src[s]);
			/* an untracked region may race: the kernel skips it */
			p[n++] = PTO_SCALAR(ps->src[s].kind == PTO_PARAM_NODEP ?
					    0 : ps->src[s].size);
		}
		if (tl_submit(x->r, KID(K_PROBE, ps->type), ps->type, p, n) < 0)
			ret = -EPROTO;
	}
	tl_gate_open(&gates[0]);
	return ret;
}

static void run_case(const struct pcase *c)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct pto_stats st;
	struct tl_rec r;
	struct run_ctx x = { .r = &r, .c = c };
	int i, t, ret, order = 1;

	tl_config(&cfg, 64, 1 << 20);
	rt = tl_runtime(&cfg);
	tl_rec_init(&r, rt);
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (tl_register(&r, KID(K_PROBE, t), t, k_probe, "probe"))
			bail_out("register");
	for (i = 0; i < NBUF; i++) {
		x.buf[i] = pto_malloc(rt, BUFSZ);
		if (!x.buf[i])
			bail_out("pto_malloc");
		for (t = 0; t < BUFSZ; t++)
			x.buf[i][t] = (uint8_t)tl_mix(i * BUFSZ + t);
		tl_host(&r, x.buf[i], BUFSZ);
	}
	tl_gate_init(&gates[0]);
	tl_gate_init(&gates[1]);
	atomic_store(&gate_timeouts, 0);

	ret = pto_run(rt, orch_case, &x);
	ok_eq(ret, 0, "%s: pto_run", c->name);
	ok_eq(atomic_load(&gate_timeouts), 0,
	      "%s: no task waited in vain for a concurrent one", c->name);
	for (i = 0; i < c->ndeps; i++)
		order &= end_seq[c->deps[i][0]] < start_seq[c->deps[i][1]];
	ok(order, "%s: dependent tasks ran in order", c->name);
	if (c->edges >= 0) {
		pto_get_stats(rt, &st);
		ok_eq(st.edges, c->edges, "%s: inferred edges", c->name);
	}
	if (ok(tl_replay(&r) == 0, "%s: replay", c->name))
		for (i = 0; i < NBUF; i++)
			tl_check(&r, x.buf[i], c->name);
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
	tl_gate_destroy(&gates[0]);
	tl_gate_destroy(&gates[1]);
}

/* ---- many readers, then a writer ----------------------------------------- */

#define NREADERS 500

struct readers_ctx {
	struct tl_rec *r;
	uint8_t *x, *y;
};

/*
 * One producer, NREADERS readers of the same region, then a writer of it
 * (write-after-read on all of them), then more readers of the new value.
 */
static int orch_readers(struct pto_runtime *rt, void *arg)
{
	struct readers_ctx *c = arg;
	struct pto_param p[8];
	int i, tag = 0;

#define PROBE(type, dst, dsize, src, ssize) do {			\
	p[0] = dst;							\
	p[1] = PTO_SCALAR(dsize);					\
	p[2] = PTO_SCALAR(tag++);					\
	p[3] = PTO_SCALAR(NONE);					\
	p[4] = PTO_SCALAR(NONE);					\
	p[5] = PTO_SCALAR(1);						\
	p[6] = src;							\
	p[7] = PTO_SCALAR(ssize);					\
	if (tl_submit(c->r, KID(K_PROBE, type), type, p, 8) < 0)	\
		return -EPROTO;						\
} while (0)
	PROBE(V, PTO_INOUT(c->x, 0, 64), 64, PTO_IN(c->y, 0, 8), 8);
	for (i = 0; i < NREADERS; i++)
		PROBE(i % 3, PTO_OUT_EXISTING(c->y, 8 + i, 1), 1,
		      PTO_IN(c->x, 0, 64), 64);
	PROBE(A, PTO_OUT_EXISTING(c->x, 16, 16), 16, PTO_IN(c->y, 0, 8), 8);
	for (i = 0; i < 20; i++)
		PROBE(i % 3, PTO_INOUT(c->y, 8 + i, 1), 1,
		      PTO_IN(c->x, 0, 64), 64);
#undef PROBE
	return 0;
}

static void test_readers(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_rec r;
	struct readers_ctx c = { .r = &r };
	int t, order = 1;

	tl_config(&cfg, 1024, 1 << 20);
	rt = tl_runtime(&cfg);
	tl_rec_init(&r, rt);
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (tl_register(&r, KID(K_PROBE, t), t, k_probe, "probe"))
			bail_out("register");
	c.x = pto_malloc(rt, 64);
	c.y = pto_malloc(rt, 8 + NREADERS);
	if (!c.x || !c.y)
		bail_out("pto_malloc");
	memset(c.x, 1, 64);
	memset(c.y, 2, 8 + NREADERS);
	tl_host(&r, c.x, 64);
	tl_host(&r, c.y, 8 + NREADERS);

	ok_eq(pto_run(rt, orch_readers, &c), 0, "many readers: pto_run");
	for (t = 1; t <= NREADERS; t++) {
		order &= end_seq[0] < start_seq[t];
		order &= end_seq[t] < start_seq[NREADERS + 1];
	}
	for (t = NREADERS + 2; t < NREADERS + 22; t++)
		order &= end_seq[NREADERS + 1] < start_seq[t];
	ok(order, "many readers: readers follow the producer, the writer "
	   "follows every reader");
	if (ok(tl_replay(&r) == 0, "many readers: replay")) {
		tl_check(&r, c.x, "many readers: x");
		tl_check(&r, c.y, "many readers: y");
	}
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	test_readers();
	return tap_done();
}
