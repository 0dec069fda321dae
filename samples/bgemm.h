/* SPDX-License-Identifier: MIT */
/*
 * Batched tiled GEMM, C[b] = C0[b] + A[b] * B[b], shared by the C-kernel
 * sample (bgemm.c) and the built-in-ops sample (bgemm_builtin.c).
 *
 * layout=tiled (the default) stores the matrices tile by tile (each T x T
 * tile contiguous, row-major inside) and gives tasks byte ranges;
 * layout=rowmajor stores each batch's matrices as ordinary row-major
 * matrices, one under the other (A is then a (batch * M) x K matrix), and
 * gives tasks 2-D tile views of them; layout=ranges (C kernels only) is
 * row-major data passed as the byte range from a tile's first to its last
 * byte.  A[b] is mt x kt tiles, B[b] kt x nt, C[b] mt x nt; the values
 * (and so the results) are the same in every layout.
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
	enum sample_layout layout;
	unsigned int layouts;	/* the layouts the variant supports */
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

/*
 * Where element (r, c) of batch b of a matrix of rt x ct tiles is, in
 * elements from its start: tile-major for layout=tiled, else row-major
 * with the batches' matrices one under the other.
 */
static inline uint64_t bgemm_elem(const struct bgemm *g, uint64_t rt,
				  uint64_t ct, uint64_t b, uint64_t r,
				  uint64_t c)
{
	uint64_t t = g->tile;

	if (g->layout != SAMPLE_TILED)
		return (b * rt * t + r) * ct * t + c;
	return ((b * rt + r / t) * ct + c / t) * t * t + (r % t) * t + c % t;
}

/* Elements from one row of a tile to the next in a matrix of ct tiles. */
static inline uint64_t bgemm_ld(const struct bgemm *g, uint64_t ct)
{
	return g->layout == SAMPLE_TILED ? g->tile : ct * g->tile;
}

/* Bytes from a tile's first to just past its last element. */
static inline uint64_t bgemm_span(const struct bgemm *g, uint64_t ct)
{
	return ((g->tile - 1) * bgemm_ld(g, ct) + g->tile) * sizeof(float);
}

/* Byte offsets of tiles (b, i, k) of A, (b, k, j) of B, (b, i, j) of C. */
static inline uint64_t bgemm_a_off(const struct bgemm *g, uint64_t b,
				   uint64_t i, uint64_t k)
{
	return bgemm_elem(g, g->mt, g->kt, b, i * g->tile, k * g->tile) *
	       sizeof(float);
}

static inline uint64_t bgemm_b_off(const struct bgemm *g, uint64_t b,
				   uint64_t k, uint64_t j)
{
	return bgemm_elem(g, g->kt, g->nt, b, k * g->tile, j * g->tile) *
	       sizeof(float);
}

static inline uint64_t bgemm_c_off(const struct bgemm *g, uint64_t b,
				   uint64_t i, uint64_t j)
{
	return bgemm_elem(g, g->mt, g->nt, b, i * g->tile, j * g->tile) *
	       sizeof(float);
}

static inline uint64_t bgemm_c_elems(const struct bgemm *g)
{
	return g->batch * g->mt * g->nt * bgemm_tile_elems(g);
}

/*
 * layout=rowmajor: matrix m of rt x ct tiles per batch as one 2-D view
 * of all batches, and the tile (i, j) of batch b in it.
 */
static inline struct pto_view bgemm_view(const struct bgemm *g, float *m,
					 uint64_t rt, uint64_t ct)
{
	return pto_view_2d(m, PTO_DTYPE_F32, g->batch * rt * g->tile,
			   ct * g->tile, ct * g->tile);
}

static inline struct pto_view bgemm_tile_view(const struct bgemm *g,
					      float *m, uint64_t rt,
					      uint64_t ct, uint64_t b,
					      uint64_t i, uint64_t j)
{
	return pto_view_tile_2d(bgemm_view(g, m, rt, ct),
				(b * rt + i) * g->tile, j * g->tile,
				g->tile, g->tile);
}

/* The M x N matrix C[b] (or C0[b]) as a view. */
static inline struct pto_view bgemm_batch_view(const struct bgemm *g,
					       float *m, uint64_t b)
{
	return pto_view_slice(bgemm_view(g, m, g->mt, g->nt), 0,
			      b * g->mt * g->tile, g->mt * g->tile);
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

/* FNV-1a 64 over C's elements in (batch, row, column) order. */
uint64_t bgemm_checksum(const struct bgemm *g);

#endif /* PTO_SAMPLE_BGEMM_H */
