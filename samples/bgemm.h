/* SPDX-License-Identifier: MIT */
/*
 * Batched tiled GEMM, C[b] = C0[b] + A[b] * B[b], shared by the C-kernel
 * sample (bgemm.c) and the built-in-ops sample (bgemm_builtin.c).
 *
 * Matrices are stored tile by tile (each T x T tile contiguous, row-major
 * inside), because the kernels and the built-in GEMM take dense matrices
 * without a leading dimension.  A[b] is mt x kt tiles, B[b] kt x nt, C[b]
 * mt x nt.
 */
#ifndef PTO_SAMPLE_BGEMM_H
#define PTO_SAMPLE_BGEMM_H

#include "sample.h"

struct bgemm {
	const char *prog;
	uint64_t batch, mt, nt, kt, tile;	/* sizes in tiles */
	uint64_t kgroup;	/* k steps per innermost scope; 0 = auto */
	uint64_t kgroup_run;	/* what the runs use (bgemm_kgroup()) */
	uint64_t seed;
	uint64_t tasks_per_k;	/* tasks one k step submits */
	uint64_t tensors_per_k;	/* and their tensor parameters */
	uint64_t tasks;		/* tasks per run */
	float *a, *b, *c;	/* device memory */
	float *c0;		/* initial C (device memory), copied per run */
	float *ref;		/* host memory: expected C */
};

/* Elements and bytes of one tile. */
static inline uint64_t bgemm_tile_elems(const struct bgemm *g)
{
	return g->tile * g->tile;
}

static inline uint64_t bgemm_tile_bytes(const struct bgemm *g)
{
	return bgemm_tile_elems(g) * sizeof(float);
}

/* Byte offsets of tiles (b, i, k) of A, (b, k, j) of B, (b, i, j) of C. */
static inline uint64_t bgemm_a_off(const struct bgemm *g, uint64_t b,
				   uint64_t i, uint64_t k)
{
	return ((b * g->mt + i) * g->kt + k) * bgemm_tile_bytes(g);
}

static inline uint64_t bgemm_b_off(const struct bgemm *g, uint64_t b,
				   uint64_t k, uint64_t j)
{
	return ((b * g->kt + k) * g->nt + j) * bgemm_tile_bytes(g);
}

static inline uint64_t bgemm_c_off(const struct bgemm *g, uint64_t b,
				   uint64_t i, uint64_t j)
{
	return ((b * g->mt + i) * g->nt + j) * bgemm_tile_bytes(g);
}

static inline uint64_t bgemm_c_elems(const struct bgemm *g)
{
	return g->batch * g->mt * g->nt * bgemm_tile_elems(g);
}

/* Parse arguments, allocate and fill A, B, C0.  1: help printed. */
int bgemm_setup(struct pto_runtime *rt, struct bgemm *g, int argc,
		char **argv);
void bgemm_teardown(struct pto_runtime *rt, struct bgemm *g);

/*
 * k steps per innermost scope, from kgroup or the runtime's rings; asked
 * once at setup, not while a run is in flight.
 */
uint64_t bgemm_kgroup(struct pto_runtime *rt, const struct bgemm *g);

/* What a variant submits: C[b] = C0[b], and one k step of tile (i, j). */
struct bgemm_ops {
	int (*copy)(struct pto_runtime *rt, const struct bgemm *g,
		    uint64_t b);
	int (*k_step)(struct pto_runtime *rt, const struct bgemm *g,
		      uint64_t b, uint64_t i, uint64_t j, uint64_t k);
};

/*
 * The orchestration: per batch a scope holding a copy scope and one scope
 * per output tile, whose k loop runs in nested scopes of bgemm_kgroup()
 * steps each.
 */
int bgemm_orchestrate(struct pto_runtime *rt, const struct bgemm *g,
		      const struct bgemm_ops *ops);

/*
 * End of pto_orchestration_init: on success hand g to ptorun; on failure
 * report it (negative ret), tear g down and pass ret on.
 */
int bgemm_init_done(struct pto_runtime *rt, struct bgemm *g, int ret,
		    void **arg);

/* FNV-1a 64 over C. */
uint64_t bgemm_checksum(const struct bgemm *g);

/* Element (r, c) of tile t of a tile-major matrix with tiles of T x T. */
static inline float bgemm_at(const float *m, const struct bgemm *g,
			     uint64_t tile_off, uint64_t r, uint64_t c)
{
	return m[tile_off / sizeof(float) + r * g->tile + c];
}

#endif /* PTO_SAMPLE_BGEMM_H */
