// SPDX-License-Identifier: MIT
/*
 * ptobench worker for OpenMP `depend` tasks.  Built twice from this file:
 * with gcc -fopenmp (libgomp, ptobench-gomp) and with clang -fopenmp=libomp
 * (LLVM libomp, ptobench-omp).
 *
 * One thread (omp single) submits the DAG, the others run tasks; the
 * implicit barrier at the end of the parallel region is "all complete".
 * Regions are addresses in never-touched anonymous memory: OpenMP only
 * compares the addresses in depend clauses, and the NOP kernels read
 * nothing.  What pto gets from its heap ring (a fresh OUTPUT buffer per
 * task) is emulated here with one buffer per tile, as a user would write it,
 * which adds write-after-read edges pto does not have.
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <sys/mman.h>

#include "worker.h"

static int nthreads;

/* The kernels: count the task, keep the arguments alive, nothing else. */
static __attribute__((noinline)) void nop1(char *a)
{
	__asm__ volatile("" : : "r"(a) : "memory");
	worker_count_task();
}

static __attribute__((noinline)) void nop3(char *a, char *b, char *c)
{
	__asm__ volatile("" : : "r"(a), "r"(b), "r"(c) : "memory");
	worker_count_task();
}

/* sparse: the start time of task i first, then the count */
static __attribute__((noinline)) void stamp(char *a, uint64_t i)
{
	worker_task_started(i);
	__asm__ volatile("" : : "r"(a) : "memory");
	worker_count_task();
}

/* Address space for `tiles` regions of g->tile bytes, never touched. */
static char *regions(const struct bench_geom *g, size_t tiles)
{
	void *p = mmap(NULL, tiles * g->tile, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void chain(const struct bench_geom *g, char *x)
{
	for (uint64_t i = 0; i < g->chain; i++) {
#pragma omp task depend(inout: x[0]) firstprivate(x)
		nop1(x);
	}
}

/* A task, then taskwait for it (pto: pto_wait()). */
static void wait_each(const struct bench_geom *g, char *x)
{
	for (uint64_t i = 0; i < g->chain; i++) {
#pragma omp task depend(inout: x[0]) firstprivate(x)
		nop1(x);
#pragma omp taskwait
	}
}

/*
 * A task on a tile of its own, then host work with no task scheduling
 * point (pto: no libpto call), over and over.
 */
static void sparse(const struct bench_geom *g, char *mem)
{
	for (uint64_t i = 0; i < g->chain; i++) {
		char *x = mem + i % SPARSE_TILES * g->tile;

		worker_submit_ns[i] = worker_now_ns();
#pragma omp task depend(inout: x[0]) firstprivate(x, i)
		stamp(x, i);
		worker_host_work(g->gap_ns);
	}
}

/*
 * The three BGEMM shapes.  mem holds A, B, C, P (P is the fresh gemm
 * output, or the pre-allocated scratch tile) and W; per batch slot
 * MT*KT + KT*NT + 2*MT*NT tiles, plus one W tile at the end.
 */
#define BG_SLOT_TILES (BGEMM_MT * BGEMM_KT + BGEMM_KT * BGEMM_NT + \
		       2 * BGEMM_MT * BGEMM_NT)

static void bgemm_tile(const struct bench_geom *g, char *slot, char *w,
		       int m, int n)
{
	const size_t t = g->tile;
	char *a0 = slot, *b0 = a0 + BGEMM_MT * BGEMM_KT * t;
	char *c = b0 + BGEMM_KT * BGEMM_NT * t + (m * BGEMM_NT + n) * t;
	char *p = c + BGEMM_MT * BGEMM_NT * t;

	for (int k = 0; k < BGEMM_KT; k++) {
		char *a = a0 + (m * BGEMM_KT + k) * t;
		char *b = b0 + (k * BGEMM_NT + n) * t;

		if (g->shape == SHAPE_BGEMM_WEIGHT) {
#pragma omp task depend(in: a[0], b[0], w[0]) depend(out: p[0]) \
	firstprivate(a, b, p)
			nop3(a, b, p);
#pragma omp task depend(in: p[0], w[0]) depend(inout: c[0]) \
	firstprivate(p, c)
			nop3(c, p, c);
		} else {
#pragma omp task depend(in: a[0], b[0]) depend(out: p[0]) \
	firstprivate(a, b, p)
			nop3(a, b, p);
#pragma omp task depend(in: p[0]) depend(inout: c[0]) firstprivate(p, c)
			nop3(c, p, c);
		}
	}
}

static void bgemm(const struct bench_geom *g, char *mem)
{
	char *w = mem + (size_t)BGEMM_SLOTS * BG_SLOT_TILES * g->tile;

	for (uint32_t b = 0; b < g->batch; b++) {
		char *slot = mem + (size_t)(b % BGEMM_SLOTS) * BG_SLOT_TILES *
			     g->tile;

		for (int m = 0; m < BGEMM_MT; m++)
			for (int n = 0; n < BGEMM_NT; n++)
				bgemm_tile(g, slot, w, m, n);
	}
}

/* Two arrays of width cells; step t reads X[t & 1] and writes the other. */
static void stencil(const struct bench_geom *g, char *mem)
{
	const size_t t = g->tile, w = g->width;

	for (uint32_t s = 0; s < g->steps; s++) {
		char *src = mem + (s & 1) * w * t;
		char *dst = mem + !(s & 1) * w * t;

		for (size_t i = 0; i < w; i++) {
			char *l = src + (i + w - 1) % w * t, *c = src + i * t;
			char *r = src + (i + 1) % w * t, *d = dst + i * t;

			(void)c;	/* gcc: depend-only uses look unused */

#pragma omp task depend(in: l[0], c[0], r[0]) depend(out: d[0]) \
	firstprivate(l, c, r, d)
			nop3(l, r, d);
		}
	}
}

/*
 * Paged attention (samples/pa.h).  Per chunk: q, and K/V cache blocks
 * (inputs), accumulators oi/li/mi and out, and per KV block the
 * intermediates sij, pij, mij, lij, oi_new.
 */
enum { PA_Q, PA_OI, PA_LI, PA_MI, PA_OUT, PA_CHUNK_TILES };
enum { PA_KC, PA_VC, PA_SIJ, PA_PIJ, PA_MIJ, PA_LIJ, PA_OIN, PA_BLOCK_TILES };
#define PA_TILES_PER_CHUNK (PA_CHUNK_TILES + PA_BLOCKS * PA_BLOCK_TILES)

static void pa_chunk(const struct bench_geom *g, char *ch)
{
	const size_t t = g->tile;
	char *q = ch + PA_Q * t, *oi = ch + PA_OI * t, *li = ch + PA_LI * t;
	char *mi = ch + PA_MI * t, *out = ch + PA_OUT * t;

	(void)out;	/* gcc: depend-only uses look unused */

#pragma omp task depend(out: oi[0], li[0], mi[0]) firstprivate(oi, li, mi)
	nop3(oi, li, mi);
	for (int bn = 0; bn < PA_BLOCKS; bn++) {
		char *bl = ch + (PA_CHUNK_TILES + bn * PA_BLOCK_TILES) * t;
		char *kc = bl + PA_KC * t, *vc = bl + PA_VC * t;
		char *sij = bl + PA_SIJ * t, *pij = bl + PA_PIJ * t;
		char *mij = bl + PA_MIJ * t, *lij = bl + PA_LIJ * t;
		char *oin = bl + PA_OIN * t;

		(void)lij;

#pragma omp task depend(in: q[0], kc[0]) depend(out: sij[0]) \
	firstprivate(q, kc, sij)
		nop3(q, kc, sij);
#pragma omp task depend(in: sij[0]) depend(out: pij[0], mij[0], lij[0]) \
	firstprivate(sij, pij, mij)
		nop3(sij, pij, mij);
#pragma omp task depend(in: pij[0], vc[0]) depend(out: oin[0]) \
	firstprivate(pij, vc, oin)
		nop3(pij, vc, oin);
		if (bn == PA_BLOCKS - 1) {
#pragma omp task depend(in: mij[0], lij[0], oin[0]) \
	depend(inout: mi[0], li[0], oi[0]) depend(out: out[0]) \
	firstprivate(mij, oin, oi)
			nop3(mij, oin, oi);
		} else {
#pragma omp task depend(in: mij[0], lij[0], oin[0]) \
	depend(inout: mi[0], li[0], oi[0]) firstprivate(mij, oin, oi)
			nop3(mij, oin, oi);
		}
	}
}

static void paged_attn(const struct bench_geom *g, char *mem)
{
	for (uint32_t q = 0; q < g->q_loop; q++)
		for (int c = 0; c < PA_CHUNKS; c++)
			pa_chunk(g, mem + (size_t)c * PA_TILES_PER_CHUNK *
				 g->tile);
}

/*
 * Runs: a parallel region per run of two independent tasks (pto: a
 * pto_run() each), its end the barrier that waits for them.
 */
static void runs(const struct bench_geom *g, char *mem)
{
	char *a = mem, *b = mem + g->tile, *s = mem + 2 * g->tile;
	char *c = mem + 3 * g->tile;

	for (uint64_t i = 0; i < g->chain; i++) {
#pragma omp parallel num_threads(nthreads)
#pragma omp single
		{
#pragma omp task depend(in: a[0]) depend(out: s[0]) firstprivate(a, s)
			nop3(a, s, s);
#pragma omp task depend(in: b[0]) depend(inout: c[0]) firstprivate(b, c)
			nop3(b, c, c);
		}
	}
}

static size_t tiles_needed(const struct bench_geom *g)
{
	switch (g->shape) {
	case SHAPE_CHAIN:
	case SHAPE_WAIT:
		return 1;
	case SHAPE_SPARSE:
		return SPARSE_TILES;
	case SHAPE_RUNS:
		return 4;
	case SHAPE_BGEMM:
	case SHAPE_BGEMM_WEIGHT:
	case SHAPE_BGEMM_SCRATCH:
		return (size_t)BGEMM_SLOTS * BG_SLOT_TILES + 1;
	case SHAPE_STENCIL:
		return 2 * (size_t)g->width;
	case SHAPE_PAGED_ATTN:
		return (size_t)PA_CHUNKS * PA_TILES_PER_CHUNK;
	default:
		return 0;
	}
}

static void submit(const struct bench_geom *g, char *mem)
{
	switch (g->shape) {
	case SHAPE_CHAIN:
		chain(g, mem);
		break;
	case SHAPE_WAIT:
		wait_each(g, mem);
		break;
	case SHAPE_SPARSE:
		sparse(g, mem);
		break;
	case SHAPE_BGEMM:
	case SHAPE_BGEMM_WEIGHT:
	case SHAPE_BGEMM_SCRATCH:
		bgemm(g, mem);
		break;
	case SHAPE_STENCIL:
		stencil(g, mem);
		break;
	case SHAPE_PAGED_ATTN:
		paged_attn(g, mem);
		break;
	default:
		break;
	}
}

static int omp_init(uint32_t cores, enum bench_shape shape,
		    char *info, size_t len)
{
	nthreads = cores ? (int)cores : omp_get_max_threads();
	snprintf(info, len, " threads=%d", nthreads);
	return 0;
}

static int omp_run(const struct bench_geom *g, uint64_t *ns)
{
	size_t tiles = tiles_needed(g);
	char *mem = regions(g, tiles);
	uint64_t t0;

	if (!mem)
		return -ENOMEM;
	t0 = worker_now_ns();
	if (g->shape == SHAPE_RUNS) {
		runs(g, mem);
	} else {
#pragma omp parallel num_threads(nthreads)
#pragma omp single
		submit(g, mem);
	}
	*ns = worker_now_ns() - t0;
	munmap(mem, tiles * g->tile);
	return 0;
}

static void omp_fini(char *info, size_t len)
{
}

const struct worker_ops worker_ops = {
#ifdef __clang__
	.impl = "omp",
#else
	.impl = "gomp",
#endif
	.init = omp_init,
	.run = omp_run,
	.fini = omp_fini,
};
