// SPDX-License-Identifier: MIT
/*
 * bgemm.so: batched tiled GEMM with C kernels (simulator only).
 *
 *   ptorun bgemm.so [batch=4] [m=4] [n=4] [k=4] [tile=64] [kgroup=0] [seed=1]
 *		     [layout=tiled|rowmajor|ranges]
 *
 * Per output tile and k step, gemm_tile writes A(i,k) * B(k,j) into a tile
 * the runtime allocates (OUTPUT), and tile_add accumulates it into C(i,j)
 * (INOUT), so the adds of one tile run in k order while gemms of every
 * tile and step run in parallel.  Scopes nest per batch, per output tile
 * and per group of k steps.
 *
 * layout=tiled and layout=ranges pass byte ranges and the leading
 * dimensions as scalars; layout=rowmajor passes 2-D views and the
 * kernels take the leading dimensions from the views' strides.  With
 * ranges, C(i,j)'s range covers most of its tile row, so the adds of a
 * tile row are serialized (false dependencies); the results are the same.
 *
 * Verified against a double-precision product with the forward error bound
 * of a float sum of k terms.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bgemm.h"

enum { K_GEMM = 1, K_ADD, K_COPY, K_GEMM_VIEW, K_ADD_VIEW, K_COPY_VIEW };

#define F32P(x) ((float *)(uintptr_t)(x))

/* P = A * B on T x T tiles whose rows are ldp, lda, ldb elements apart */
static void gemm_core(float *p, uint64_t ldp, const float *a, uint64_t lda,
		      const float *b, uint64_t ldb, uint64_t t)
{
	uint64_t i, j, l;
	float x;

	/* i-l-j order: each P[i][j] still sums over l in ascending order */
	for (i = 0; i < t; i++) {
		for (j = 0; j < t; j++)
			p[i * ldp + j] = 0.0f;
		for (l = 0; l < t; l++) {
			x = a[i * lda + l];
			for (j = 0; j < t; j++)
				p[i * ldp + j] += x * b[l * ldb + j];
		}
	}
}

/* C += P on T x T tiles */
static void add_core(float *c, uint64_t ldc, const float *p, uint64_t ldp,
		     uint64_t t)
{
	uint64_t i, j;

	for (i = 0; i < t; i++)
		for (j = 0; j < t; j++)
			c[i * ldc + j] += p[i * ldp + j];
}

/* P = A * B; args: P (T x T, dense), A, B, T, lda, ldb */
static void gemm_tile(const uint64_t *args, uint32_t nargs)
{
	gemm_core(F32P(args[0]), args[3], F32P(args[1]), args[4],
		  F32P(args[2]), args[5], args[3]);
}

/* C += P; args: C, P (T x T, dense), T, ldc */
static void tile_add(const uint64_t *args, uint32_t nargs)
{
	add_core(F32P(args[0]), args[3], F32P(args[1]), args[2], args[2]);
}

/* args: dst, src, nbytes */
static void copy_kernel(const uint64_t *args, uint32_t nargs)
{
	memcpy((void *)(uintptr_t)args[0], (const void *)(uintptr_t)args[1],
	       args[2]);
}

/*
 * The f32 matrix view argument i: its first element and row stride.  The
 * kernels walk rows with unit stride (as a DMA engine moves rows), so a
 * view whose columns are not adjacent fails the task.
 */
static float *view_rows(const uint64_t *args, uint32_t i, uint64_t *ld)
{
	const struct pto_view_desc *d = pto_arg_view(args, i);

	*ld = 0;
	if (d->ndim != 2 || d->dtype != PTO_DTYPE_F32 || d->stride[1] != 1) {
		pto_kernel_set_error(-EINVAL);
		return NULL;
	}
	*ld = d->stride[0];
	return F32P(d->addr);
}

/* P = A * B; args: views of P, A, B, all T x T */
static void gemm_view(const uint64_t *args, uint32_t nargs)
{
	uint64_t ldp, lda, ldb;
	float *p = view_rows(args, 0, &ldp);
	float *a = view_rows(args, 1, &lda);
	float *b = view_rows(args, 2, &ldb);

	if (p && a && b)
		gemm_core(p, ldp, a, lda, b, ldb,
			  pto_arg_view(args, 0)->shape[0]);
}

/* C += P; args: views of C and P, both T x T */
static void add_view(const uint64_t *args, uint32_t nargs)
{
	uint64_t ldc, ldp;
	float *c = view_rows(args, 0, &ldc);
	float *p = view_rows(args, 1, &ldp);

	if (c && p)
		add_core(c, ldc, p, ldp, pto_arg_view(args, 0)->shape[0]);
}

/* dst = src, row by row; args: views of dst and src, of one shape */
static void copy_view(const uint64_t *args, uint32_t nargs)
{
	const struct pto_view_desc *d = pto_arg_view(args, 0);
	uint64_t ldd, lds, r;
	float *dst = view_rows(args, 0, &ldd);
	float *src = view_rows(args, 1, &lds);

	for (r = 0; dst && src && r < d->shape[0]; r++)
		memcpy(dst + r * ldd, src + r * lds,
		       d->shape[1] * sizeof(float));
}

/* C[b] = C0[b]: contiguous in every layout, so one range serves all. */
static int bgemm_copy(struct pto_runtime *rt, const struct bgemm *g,
		      uint64_t b)
{
	uint64_t off = bgemm_c_off(g, b, 0, 0);
	uint64_t size = g->mt * g->nt * bgemm_tile_bytes(g);
	struct pto_param p[] = {
		PTO_OUT_EXISTING(g->c, off, size),
		PTO_IN(g->c0, off, size),
		PTO_SCALAR(size),
	};

	return sample_submit(rt, K_COPY, PTO_WORKER_ACCEL, p, 3);
}

/*
 * One k step with byte ranges: tile-major tiles are exact ranges,
 * row-major ones (layout=ranges) the bounding range of the tile.
 */
static int bgemm_k_step(struct pto_runtime *rt, const struct bgemm *g,
			uint64_t b, uint64_t i, uint64_t j, uint64_t k)
{
	uint64_t tb = bgemm_tile_bytes(g);
	void *tmp = NULL;
	struct pto_param gp[] = {
		PTO_OUT(&tmp, tb),
		PTO_IN(g->a, bgemm_a_off(g, b, i, k), bgemm_span(g, g->kt)),
		PTO_IN(g->b, bgemm_b_off(g, b, k, j), bgemm_span(g, g->nt)),
		PTO_SCALAR(g->tile), PTO_SCALAR(bgemm_ld(g, g->kt)),
		PTO_SCALAR(bgemm_ld(g, g->nt)),
	};
	int ret;

	ret = sample_submit(rt, K_GEMM, PTO_WORKER_CUBE, gp, 6);
	if (ret)
		return ret;
	{
		struct pto_param ap[] = {
			PTO_INOUT(g->c, bgemm_c_off(g, b, i, j),
				  bgemm_span(g, g->nt)),
			PTO_IN(tmp, 0, tb),
			PTO_SCALAR(g->tile), PTO_SCALAR(bgemm_ld(g, g->nt)),
		};

		return sample_submit(rt, K_ADD, PTO_WORKER_VECTOR, ap, 4);
	}
}

static int bgemm_copy_views(struct pto_runtime *rt, const struct bgemm *g,
			    uint64_t b)
{
	struct pto_view c = bgemm_batch_view(g, g->c, b);
	struct pto_view c0 = bgemm_batch_view(g, g->c0, b);
	struct pto_param p[] = {
		PTO_OUT_EXISTING_VIEW(&c), PTO_IN_VIEW(&c0),
	};

	return sample_submit(rt, K_COPY_VIEW, PTO_WORKER_ACCEL, p, 2);
}

/* One k step on 2-D tile views; P is a view the runtime allocates. */
static int bgemm_k_step_views(struct pto_runtime *rt, const struct bgemm *g,
			      uint64_t b, uint64_t i, uint64_t j, uint64_t k)
{
	struct pto_view p = {
		.dtype = PTO_DTYPE_F32, .ndim = 2,
		.shape = { g->tile, g->tile },
	};
	struct pto_view a = bgemm_tile_view(g, g->a, g->mt, g->kt, b, i, k);
	struct pto_view bt = bgemm_tile_view(g, g->b, g->kt, g->nt, b, k, j);
	struct pto_view c = bgemm_tile_view(g, g->c, g->mt, g->nt, b, i, j);
	struct pto_param gp[] = {
		PTO_OUT_VIEW(&p), PTO_IN_VIEW(&a), PTO_IN_VIEW(&bt),
	};
	struct pto_param ap[] = { PTO_INOUT_VIEW(&c), PTO_IN_VIEW(&p) };
	int ret;

	ret = sample_submit(rt, K_GEMM_VIEW, PTO_WORKER_CUBE, gp, 3);
	if (!ret)	/* ap's IN_VIEW points at p, filled in by now */
		ret = sample_submit(rt, K_ADD_VIEW, PTO_WORKER_VECTOR, ap, 2);
	return ret;
}

static const struct bgemm_ops bgemm_range_ops = {
	.copy = bgemm_copy,
	.k_step = bgemm_k_step,
};

static const struct bgemm_ops bgemm_view_ops = {
	.copy = bgemm_copy_views,
	.k_step = bgemm_k_step_views,
};

/* Expected tile (i, j) of batch b in double; returns the largest sum |x|. */
static double bgemm_ref_tile(const struct bgemm *g, uint64_t b, uint64_t i,
			     uint64_t j)
{
	uint64_t co = bgemm_c_off(g, b, i, j) / 4, t = g->tile, r, c, k, l;
	uint64_t lda = bgemm_ld(g, g->kt), ldb = bgemm_ld(g, g->nt);
	double sum, mag, worst = 0.0, x;
	const float *a, *bm;

	for (r = 0; r < t; r++) {
		for (c = 0; c < t; c++) {
			sum = g->c0[co + r * ldb + c];	/* C's ld is B's */
			mag = fabs(sum);
			for (k = 0; k < g->kt; k++) {
				a = g->a + bgemm_a_off(g, b, i, k) / 4 +
				    r * lda;
				bm = g->b + bgemm_b_off(g, b, k, j) / 4 + c;
				for (l = 0; l < t; l++) {
					x = (double)a[l] * bm[l * ldb];
					sum += x;
					mag += fabs(x);
				}
			}
			g->ref[co + r * ldb + c] = (float)sum;
			if (mag > worst)
				worst = mag;
		}
	}
	return worst;
}

/*
 * Expected C in double, and as the tolerance the error a float sum of
 * k + 1 terms may make: |error| <= (k + 1) u sum |terms|, u = 2^-24.
 */
static void bgemm_reference(const struct bgemm *g, double *tol)
{
	double worst = 0.0, w;
	uint64_t b, i, j;

	for (b = 0; b < g->batch; b++) {
		for (i = 0; i < g->mt; i++) {
			for (j = 0; j < g->nt; j++) {
				w = bgemm_ref_tile(g, b, i, j);
				if (w > worst)
					worst = w;
			}
		}
	}
	/* + 2: slack for rounding the reference itself to float */
	*tol = (double)(g->kt * g->tile + 2) * ldexp(worst, -24);
}

static int bgemm_register(struct pto_runtime *rt)
{
	static const struct {
		uint32_t id;
		enum pto_worker_type type;
		pto_kernel_fn fn;
		const char *name;
	} k[] = {
		{ K_GEMM, PTO_WORKER_CUBE, gemm_tile, "gemm_tile" },
		{ K_ADD, PTO_WORKER_VECTOR, tile_add, "tile_add" },
		{ K_COPY, PTO_WORKER_ACCEL, copy_kernel, "copy" },
		{ K_GEMM_VIEW, PTO_WORKER_CUBE, gemm_view, "gemm_tile" },
		{ K_ADD_VIEW, PTO_WORKER_VECTOR, add_view, "tile_add" },
		{ K_COPY_VIEW, PTO_WORKER_ACCEL, copy_view, "copy" },
	};
	unsigned int i;
	int ret = 0;

	for (i = 0; i < sizeof(k) / sizeof(k[0]) && !ret; i++)
		ret = pto_kernel_register(rt, k[i].id, k[i].type, k[i].fn,
					  k[i].name);
	return ret;
}

int pto_orchestration_init(struct pto_runtime *rt, int argc, char **argv,
			   void **arg)
{
	struct bgemm *g = calloc(1, sizeof(*g));
	int ret;

	if (!g)
		return -ENOMEM;
	g->prog = "bgemm";
	g->tasks_per_k = 2;
	g->tensors_per_k = 5;
	g->layouts = 1u << SAMPLE_TILED | 1u << SAMPLE_ROWMAJOR |
		     1u << SAMPLE_RANGES;
	ret = bgemm_setup(rt, g, argc, argv);
	if (!ret)
		ret = bgemm_register(rt);
	return bgemm_init_done(rt, g, ret, arg);
}

int pto_orchestration_entry(struct pto_runtime *rt, void *arg)
{
	const struct bgemm *g = arg;

	return bgemm_orchestrate(rt, g, g->layout == SAMPLE_ROWMAJOR ?
				 &bgemm_view_ops : &bgemm_range_ops);
}

int pto_orchestration_fini(struct pto_runtime *rt, void *arg,
			   int run_status)
{
	struct bgemm *g = arg;
	struct sample_err e;
	char how[96];
	double tol;
	int ret = -1;

	if (!run_status) {
		bgemm_reference(g, &tol);
		sample_compare_f32(g->c, g->ref, bgemm_c_elems(g), tol, 0.0,
				   &e);
		/*
		 * The criterion is absolute (the float sum's error bound):
		 * say so, or a rel error above it reads like a failure.
		 */
		snprintf(how, sizeof(how), "double reference; passes when "
			 "every abs error <= %.3g", tol);
		ret = sample_verdict(g->prog, &e, how, bgemm_checksum(g));
	}
	bgemm_teardown(rt, g);
	free(g);
	return ret;
}
