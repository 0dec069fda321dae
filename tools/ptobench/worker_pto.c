// SPDX-License-Identifier: MIT
/*
 * ptobench worker for libpto, through the public API only: one C no-op
 * kernel per worker type, the default configuration (and PTO_* environment
 * overrides) except for the core counts --cores asks for, pto_malloc'd
 * tensors, and scopes as the samples use them.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto/pto.h>

#include "worker.h"

enum { K_CUBE, K_VECTOR, K_STAMP };

static struct pto_runtime *rt;
static uint64_t run_edges;

static void nop_kernel(const uint64_t *args, uint32_t nargs)
{
	worker_count_task();
}

/* sparse: args[0] is the tile, args[1] the task's index */
static void stamp_kernel(const uint64_t *args, uint32_t nargs)
{
	worker_task_started(args[1]);
	worker_count_task();
}

/* pto_malloc'd tensors of a run; every region is one g->tile. */
struct tensors {
	char *a, *b, *c, *s, *w;	/* bgemm: s is scratch */
	char *x[2];			/* stencil */
	char *q, *kc, *vc, *out;	/* paged attention */
	char *chain;
};

struct run_arg {
	const struct bench_geom *g;
	struct tensors t;
};

#define SUBMIT(kid, type, ...) do {					\
	const struct pto_param p_[] = { __VA_ARGS__ };			\
	int64_t id_ = pto_submit_task(rt, kid, type, p_,		\
				      sizeof(p_) / sizeof(p_[0]));	\
	if (id_ < 0)							\
		return (int)id_;					\
} while (0)

/* End the scope opened for a body, also when the body failed. */
static int scope_close(int err)
{
	int end = pto_scope_end(rt);

	return err ? err : end;
}

static int chain_part(const struct bench_geom *g, const struct tensors *t,
		      uint64_t n)
{
	for (uint64_t j = 0; j < n; j++)
		SUBMIT(K_VECTOR, PTO_WORKER_VECTOR,
		       PTO_INOUT(t->chain, 0, g->tile));
	return 0;
}

static int chain(const struct bench_geom *g, const struct tensors *t)
{
	for (uint64_t i = 0; i < g->chain; i += CHAIN_SCOPE) {
		uint64_t n = g->chain - i < CHAIN_SCOPE ? g->chain - i :
			     CHAIN_SCOPE;
		int err;

		pto_scope_begin(rt);
		err = scope_close(chain_part(g, t, n));
		if (err)
			return err;
	}
	return 0;
}

/*
 * A task, then pto_wait() for it, as a loop that reads each result
 * before it goes on: the latency of a hand-off and back.
 */
static int wait_each(const struct bench_geom *g, const struct tensors *t)
{
	for (uint64_t i = 0; i < g->chain; i++) {
		int err;

		SUBMIT(K_VECTOR, PTO_WORKER_VECTOR,
		       PTO_INOUT(t->chain, 0, g->tile));
		err = pto_wait(rt);
		if (err)
			return err;
	}
	return 0;
}

/*
 * One task on a tile of its own, then host work that calls no libpto
 * function, over and over: the latency of a task submitted while the
 * core threads are idle.  No scope: the tasks make no buffers.
 */
static int sparse(const struct bench_geom *g, const struct tensors *t)
{
	for (uint64_t i = 0; i < g->chain; i++) {
		worker_submit_ns[i] = worker_now_ns();
		SUBMIT(K_STAMP, PTO_WORKER_VECTOR,
		       PTO_INOUT(t->chain, i % SPARSE_TILES * g->tile,
				 g->tile),
		       PTO_SCALAR(i));
		worker_host_work(g->gap_ns);
	}
	return 0;
}

/* One output tile of one batch slot: K steps of gemm then add. */
static int bgemm_tile(const struct bench_geom *g, const struct tensors *t,
		      uint32_t slot, int m, int n)
{
	const uint64_t sz = g->tile;
	const uint64_t c_off = ((slot * BGEMM_MT + m) * BGEMM_NT + n) * sz;

	for (int k = 0; k < BGEMM_KT; k++) {
		uint64_t a_off = ((slot * BGEMM_MT + m) * BGEMM_KT + k) * sz;
		uint64_t b_off = ((slot * BGEMM_KT + k) * BGEMM_NT + n) * sz;
		void *p;

		switch (g->shape) {
		case SHAPE_BGEMM:
			SUBMIT(K_CUBE, PTO_WORKER_CUBE, PTO_IN(t->a, a_off, sz),
			       PTO_IN(t->b, b_off, sz), PTO_OUT(&p, sz));
			SUBMIT(K_VECTOR, PTO_WORKER_VECTOR, PTO_IN(p, 0, sz),
			       PTO_INOUT(t->c, c_off, sz));
			break;
		case SHAPE_BGEMM_WEIGHT:
			SUBMIT(K_CUBE, PTO_WORKER_CUBE, PTO_IN(t->a, a_off, sz),
			       PTO_IN(t->b, b_off, sz), PTO_IN(t->w, 0, sz),
			       PTO_OUT(&p, sz));
			SUBMIT(K_VECTOR, PTO_WORKER_VECTOR, PTO_IN(p, 0, sz),
			       PTO_IN(t->w, 0, sz),
			       PTO_INOUT(t->c, c_off, sz));
			break;
		default:	/* SHAPE_BGEMM_SCRATCH */
			SUBMIT(K_CUBE, PTO_WORKER_CUBE, PTO_IN(t->a, a_off, sz),
			       PTO_IN(t->b, b_off, sz),
			       PTO_OUT_EXISTING(t->s, c_off, sz));
			SUBMIT(K_VECTOR, PTO_WORKER_VECTOR,
			       PTO_IN(t->s, c_off, sz),
			       PTO_INOUT(t->c, c_off, sz));
			break;
		}
	}
	return 0;
}

/* Nested scopes: one per batch, one per tile (see samples/bgemm.c). */
static int bgemm_batch(const struct bench_geom *g, const struct tensors *t,
		       uint32_t slot)
{
	for (int m = 0; m < BGEMM_MT; m++) {
		for (int n = 0; n < BGEMM_NT; n++) {
			int err;

			pto_scope_begin(rt);
			err = scope_close(bgemm_tile(g, t, slot, m, n));
			if (err)
				return err;
		}
	}
	return 0;
}

static int bgemm(const struct bench_geom *g, const struct tensors *t)
{
	for (uint32_t b = 0; b < g->batch; b++) {
		int err;

		pto_scope_begin(rt);
		err = scope_close(bgemm_batch(g, t, b % BGEMM_SLOTS));
		if (err)
			return err;
	}
	return 0;
}

static int stencil_step(const struct bench_geom *g, char *src, char *dst)
{
	const uint64_t sz = g->tile, w = g->width;

	for (uint64_t i = 0; i < w; i++)
		SUBMIT(K_VECTOR, PTO_WORKER_VECTOR,
		       PTO_IN(src, (i + w - 1) % w * sz, sz),
		       PTO_IN(src, i * sz, sz),
		       PTO_IN(src, (i + 1) % w * sz, sz),
		       PTO_OUT_EXISTING(dst, i * sz, sz));
	return 0;
}

/* One scope per step: a step is STENCIL_WIDTH tasks. */
static int stencil(const struct bench_geom *g, const struct tensors *t)
{
	for (uint32_t s = 0; s < g->steps; s++) {
		int err;

		pto_scope_begin(rt);
		err = scope_close(stencil_step(g, t->x[s & 1],
					       t->x[!(s & 1)]));
		if (err)
			return err;
	}
	return 0;
}

/* KV block bn of chunk c: QK -> SF -> PV -> UP into the accumulators. */
static int pa_block(const struct bench_geom *g, const struct tensors *t,
		    int c, int bn, void *oi, void *li, void *mi)
{
	const uint64_t sz = g->tile;
	const uint64_t kv_off = ((uint64_t)c * PA_BLOCKS + bn) * sz;
	void *sij, *pij, *mij, *lij, *oin;

	SUBMIT(K_CUBE, PTO_WORKER_CUBE, PTO_IN(t->q, c * sz, sz),
	       PTO_IN(t->kc, kv_off, sz), PTO_OUT(&sij, sz));
	SUBMIT(K_VECTOR, PTO_WORKER_VECTOR, PTO_IN(sij, 0, sz),
	       PTO_OUT(&pij, sz), PTO_OUT(&mij, sz), PTO_OUT(&lij, sz));
	SUBMIT(K_CUBE, PTO_WORKER_CUBE, PTO_IN(pij, 0, sz),
	       PTO_IN(t->vc, kv_off, sz), PTO_OUT(&oin, sz));
	if (bn == PA_BLOCKS - 1)
		SUBMIT(K_VECTOR, PTO_WORKER_VECTOR, PTO_IN(mij, 0, sz),
		       PTO_IN(lij, 0, sz), PTO_IN(oin, 0, sz),
		       PTO_INOUT(mi, 0, sz), PTO_INOUT(li, 0, sz),
		       PTO_INOUT(oi, 0, sz),
		       PTO_OUT_EXISTING(t->out, c * sz, sz));
	else
		SUBMIT(K_VECTOR, PTO_WORKER_VECTOR, PTO_IN(mij, 0, sz),
		       PTO_IN(lij, 0, sz), PTO_IN(oin, 0, sz),
		       PTO_INOUT(mi, 0, sz), PTO_INOUT(li, 0, sz),
		       PTO_INOUT(oi, 0, sz));
	return 0;
}

static int pa_chunk_body(const struct bench_geom *g,
			 const struct tensors *t, int c)
{
	const uint64_t sz = g->tile;
	void *oi, *li, *mi;

	SUBMIT(K_VECTOR, PTO_WORKER_VECTOR, PTO_OUT(&oi, sz),
	       PTO_OUT(&li, sz), PTO_OUT(&mi, sz));
	for (int bn = 0; bn < PA_BLOCKS; bn++) {
		int err = pa_block(g, t, c, bn, oi, li, mi);

		if (err)
			return err;
	}
	return 0;
}

/* Paged attention: a scope per chunk, a hub task initialises oi/li/mi. */
static int pa_chunk(const struct bench_geom *g, const struct tensors *t,
		    int c)
{
	pto_scope_begin(rt);
	return scope_close(pa_chunk_body(g, t, c));
}

static int paged_attn(const struct bench_geom *g, const struct tensors *t)
{
	for (uint32_t q = 0; q < g->q_loop; q++) {
		for (int c = 0; c < PA_CHUNKS; c++) {
			int err = pa_chunk(g, t, c);

			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Runs: one pto_run() of a cube task and a vector task on tiles of their
 * own, as a program that runs a small graph per step and reads its
 * results before the next: a run's two ends, the hand-offs to the core
 * threads of two types and back, are what it costs.
 */
static int run_pair(struct pto_runtime *r, void *arg)
{
	const struct run_arg *ra = arg;
	const uint64_t sz = ra->g->tile;

	SUBMIT(K_CUBE, PTO_WORKER_CUBE, PTO_IN(ra->t.a, 0, sz),
	       PTO_OUT_EXISTING(ra->t.s, 0, sz));
	SUBMIT(K_VECTOR, PTO_WORKER_VECTOR, PTO_IN(ra->t.b, 0, sz),
	       PTO_INOUT(ra->t.c, 0, sz));
	return 0;
}

static int run_pairs(const struct bench_geom *g, struct run_arg *ra)
{
	for (uint64_t i = 0; i < g->chain; i++) {
		int err = pto_run(rt, run_pair, ra);

		if (err)
			return err;
	}
	return 0;
}

static int orchestrate(struct pto_runtime *r, void *arg)
{
	struct run_arg *ra = arg;

	switch (ra->g->shape) {
	case SHAPE_CHAIN:
		return chain(ra->g, &ra->t);
	case SHAPE_WAIT:
		return wait_each(ra->g, &ra->t);
	case SHAPE_SPARSE:
		return sparse(ra->g, &ra->t);
	case SHAPE_BGEMM:
	case SHAPE_BGEMM_WEIGHT:
	case SHAPE_BGEMM_SCRATCH:
		return bgemm(ra->g, &ra->t);
	case SHAPE_STENCIL:
		return stencil(ra->g, &ra->t);
	case SHAPE_PAGED_ATTN:
		return paged_attn(ra->g, &ra->t);
	default:
		return -EINVAL;
	}
}

struct tensor_spec {
	char **ptr;
	size_t tiles;
};

/* Which tensors a shape uses and how many tiles each; returns the count. */
static int tensor_specs(struct tensors *t, const struct bench_geom *g,
			struct tensor_spec *sp)
{
	const size_t slot_out = BGEMM_SLOTS * BGEMM_MT * BGEMM_NT;
	int n = 0;

#define T(p, ntiles) (sp[n++] = (struct tensor_spec){ &(p), (ntiles) })
	switch (g->shape) {
	case SHAPE_CHAIN:
	case SHAPE_WAIT:
		T(t->chain, 1);
		break;
	case SHAPE_SPARSE:
		T(t->chain, SPARSE_TILES);
		break;
	case SHAPE_RUNS:
		T(t->a, 1);
		T(t->b, 1);
		T(t->s, 1);
		T(t->c, 1);
		break;
	case SHAPE_BGEMM:
	case SHAPE_BGEMM_WEIGHT:
	case SHAPE_BGEMM_SCRATCH:
		T(t->a, BGEMM_SLOTS * BGEMM_MT * BGEMM_KT);
		T(t->b, BGEMM_SLOTS * BGEMM_KT * BGEMM_NT);
		T(t->c, slot_out);
		T(t->s, slot_out);
		T(t->w, 1);
		break;
	case SHAPE_STENCIL:
		T(t->x[0], g->width);
		T(t->x[1], g->width);
		break;
	case SHAPE_PAGED_ATTN:
		T(t->q, PA_CHUNKS);
		T(t->kc, PA_CHUNKS * PA_BLOCKS);
		T(t->vc, PA_CHUNKS * PA_BLOCKS);
		T(t->out, PA_CHUNKS);
		break;
	default:
		break;
	}
#undef T
	return n;
}

static void tensors_free(struct tensors *t, const struct bench_geom *g)
{
	struct tensor_spec sp[8];
	int n = tensor_specs(t, g, sp);

	for (int i = 0; i < n; i++) {
		if (*sp[i].ptr)
			pto_free(rt, *sp[i].ptr);
		*sp[i].ptr = NULL;
	}
}

static int tensors_alloc(struct tensors *t, const struct bench_geom *g)
{
	struct tensor_spec sp[8];
	int n;

	memset(t, 0, sizeof(*t));
	n = tensor_specs(t, g, sp);
	for (int i = 0; i < n; i++) {
		*sp[i].ptr = pto_malloc(rt, sp[i].tiles * g->tile);
		if (!*sp[i].ptr) {
			fprintf(stderr,
				"ptobench-pto: pto_malloc(%zu) failed\n",
				sp[i].tiles * g->tile);
			tensors_free(t, g);
			return -ENOMEM;
		}
	}
	return 0;
}

static int pto_init(uint32_t cores, enum bench_shape shape,
		    char *info, size_t len)
{
	struct pto_config cfg;
	bool mixed = shape != SHAPE_CHAIN && shape != SHAPE_STENCIL &&
		     shape != SHAPE_WAIT && shape != SHAPE_SPARSE;
	int err;

	pto_config_init(&cfg);
	if (cores) {
		/* The same total as OpenMP threads, on the types used. */
		memset(cfg.cores, 0, sizeof(cfg.cores));
		if (mixed) {
			cfg.cores[PTO_WORKER_CUBE] = cores / 2 ? cores / 2 : 1;
			cfg.cores[PTO_WORKER_VECTOR] = cores > 1 ?
				cores - cfg.cores[PTO_WORKER_CUBE] : 1;
		} else {
			cfg.cores[PTO_WORKER_VECTOR] = cores;
		}
	}
	err = pto_runtime_create(&cfg, &rt);
	if (err) {
		fprintf(stderr, "ptobench-pto: pto_runtime_create: %s\n",
			strerror(-err));
		return err;
	}
	err = pto_kernel_register(rt, K_CUBE, PTO_WORKER_CUBE, nop_kernel,
				  "nop_cube");
	if (!err)
		err = pto_kernel_register(rt, K_VECTOR, PTO_WORKER_VECTOR,
					  nop_kernel, "nop_vector");
	if (!err)
		err = pto_kernel_register(rt, K_STAMP, PTO_WORKER_VECTOR,
					  stamp_kernel, "stamp");
	if (err) {
		fprintf(stderr, "ptobench-pto: pto_kernel_register: %s\n",
			strerror(-err));
		pto_runtime_destroy(rt);
		rt = NULL;
		return err;
	}
	snprintf(info, len, " window=%u heap=%" PRIu64, cfg.task_window,
		 cfg.heap_size);
	return 0;
}

static int pto_bench_run(const struct bench_geom *g, uint64_t *ns)
{
	struct run_arg ra = { .g = g };
	struct pto_stats before, after;
	uint64_t t0;
	int err;

	err = tensors_alloc(&ra.t, g);
	if (err)
		return err;
	pto_get_stats(rt, &before);
	t0 = worker_now_ns();
	if (g->shape == SHAPE_RUNS)
		err = run_pairs(g, &ra);
	else
		err = pto_run(rt, orchestrate, &ra);
	*ns = worker_now_ns() - t0;
	pto_get_stats(rt, &after);
	run_edges = after.edges - before.edges;
	tensors_free(&ra.t, g);
	return err;
}

static void pto_fini(char *info, size_t len)
{
	struct pto_stats st;
	uint64_t stalls = 0;
	size_t n;

	if (!rt)
		return;
	/* The flow-control table, to see which ring a slow run waited on. */
	if (getenv("PTOBENCH_STATS"))
		pto_print_stats(rt, stderr);
	if (info && !pto_get_stats(rt, &st)) {
		for (int r = 0; r < PTO_NUM_RINGS; r++)
			stalls += st.ring[r].stalls;
		n = snprintf(info, len, " edges=%" PRIu64 " stalls=%" PRIu64
			     " cores=", run_edges, stalls);
		for (int w = 0; w < PTO_NUM_WORKER_TYPES && n < len; w++)
			n += snprintf(info + n, len - n, "%s%u", w ? ":" : "",
				      st.cores[w]);
	}
	pto_runtime_destroy(rt);
	rt = NULL;
}

const struct worker_ops worker_ops = {
	.impl = "pto",
	.init = pto_init,
	.run = pto_bench_run,
	.fini = pto_fini,
};
