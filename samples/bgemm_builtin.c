// SPDX-License-Identifier: MIT
/*
 * bgemm_builtin.so: the BGEMM sample with built-in ops only, so the same
 * orchestration runs on the simulator and on /dev/ptoN.
 *
 *   ptorun bgemm_builtin.so [batch=4] [m=4] [n=4] [k=4] [tile=64] ...
 *		     [layout=tiled|rowmajor]
 *
 * Per output tile and k step: PTO_OP_FILL_U32 zeroes a fresh tile the
 * runtime allocates (OUTPUT), PTO_OP_GEMM_F32 accumulates A(i,k) * B(k,j)
 * into it (INOUT), PTO_OP_ADD_F32 adds it into C(i,j) (INOUT).  C starts
 * as a PTO_OP_COPY of C0.  All tensors are pto_malloc (device) memory.
 *
 * layout=rowmajor passes every operand as a 2-D view of row-major
 * matrices (the ops take any strides); the zeroed P tile is a view the
 * runtime allocates.
 *
 * The reference repeats the ops' arithmetic in the same order, so the
 * check is bit-exact.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bgemm.h"

enum { K_FILL = 1, K_GEMM = 2, K_ADD = 3, K_COPY = 4 };

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

static int bgemm_k_step(struct pto_runtime *rt, const struct bgemm *g,
			uint64_t b, uint64_t i, uint64_t j, uint64_t k)
{
	uint64_t tb = bgemm_tile_bytes(g), t = g->tile;
	uint64_t coff = bgemm_c_off(g, b, i, j);
	void *tmp = NULL;
	struct pto_param fill[] = {
		PTO_OUT(&tmp, tb), PTO_SCALAR(0), PTO_SCALAR(tb),
	};
	int ret;

	ret = sample_submit(rt, K_FILL, PTO_WORKER_VECTOR, fill, 3);
	if (ret)
		return ret;
	{
		struct pto_param gemm[] = {
			PTO_INOUT(tmp, 0, tb),
			PTO_IN(g->a, bgemm_a_off(g, b, i, k), tb),
			PTO_IN(g->b, bgemm_b_off(g, b, k, j), tb),
			PTO_SCALAR(t), PTO_SCALAR(t), PTO_SCALAR(t),
		};
		/*
		 * dst and the first operand are both C(i,j): the INOUT
		 * declares the access, the NODEP only passes the address.
		 */
		struct pto_param add[] = {
			PTO_INOUT(g->c, coff, tb),
			PTO_NODEP(g->c, coff, tb),
			PTO_IN(tmp, 0, tb),
			PTO_SCALAR(t * t),
		};

		ret = sample_submit(rt, K_GEMM, PTO_WORKER_CUBE, gemm, 6);
		if (!ret)
			ret = sample_submit(rt, K_ADD, PTO_WORKER_VECTOR,
					    add, 4);
	}
	return ret;
}

static int bgemm_copy_views(struct pto_runtime *rt, const struct bgemm *g,
			    uint64_t b)
{
	struct pto_view c = bgemm_batch_view(g, g->c, b);
	struct pto_view c0 = bgemm_batch_view(g, g->c0, b);
	struct pto_param p[] = {
		PTO_OUT_EXISTING_VIEW(&c), PTO_IN_VIEW(&c0),
		PTO_SCALAR(g->mt * g->nt * bgemm_tile_bytes(g)),
	};

	return sample_submit(rt, K_COPY, PTO_WORKER_ACCEL, p, 3);
}

/*
 * P = 0 (FILL allocates it), P += A(i,k) B(k,j), C(i,j) += P on 2-D
 * views.  FILL_U32 takes u32 or i32 views only: P is allocated as a u32
 * view, and the f32 ops see the same bytes through an f32 copy of it.
 */
static int bgemm_k_step_views(struct pto_runtime *rt, const struct bgemm *g,
			      uint64_t b, uint64_t i, uint64_t j, uint64_t k)
{
	uint64_t t = g->tile;
	struct pto_view p = {
		.dtype = PTO_DTYPE_U32, .ndim = 2, .shape = { t, t },
	}, pf;
	struct pto_view a = bgemm_tile_view(g, g->a, g->mt, g->kt, b, i, k);
	struct pto_view bt = bgemm_tile_view(g, g->b, g->kt, g->nt, b, k, j);
	struct pto_view c = bgemm_tile_view(g, g->c, g->mt, g->nt, b, i, j);
	struct pto_param fill[] = {
		PTO_OUT_VIEW(&p), PTO_SCALAR(0), PTO_SCALAR(bgemm_tile_bytes(g)),
	};
	struct pto_param gemm[] = {
		PTO_INOUT_VIEW(&pf), PTO_IN_VIEW(&a), PTO_IN_VIEW(&bt),
		PTO_SCALAR(t), PTO_SCALAR(t), PTO_SCALAR(t),
	};
	struct pto_param add[] = {	/* C(i,j) twice: see bgemm_k_step */
		PTO_INOUT_VIEW(&c), PTO_NODEP_VIEW(&c), PTO_IN_VIEW(&pf),
		PTO_SCALAR(t * t),
	};
	int ret;

	ret = sample_submit(rt, K_FILL, PTO_WORKER_VECTOR, fill, 3);
	if (ret)
		return ret;
	pf = p;
	pf.dtype = PTO_DTYPE_F32;
	ret = sample_submit(rt, K_GEMM, PTO_WORKER_CUBE, gemm, 6);
	if (!ret)
		ret = sample_submit(rt, K_ADD, PTO_WORKER_VECTOR, add, 4);
	return ret;
}

static const struct bgemm_ops bgemm_view_ops = {
	.copy = bgemm_copy_views,
	.k_step = bgemm_k_step_views,
};

static const struct bgemm_ops bgemm_builtin_ops = {
	.copy = bgemm_copy,
	.k_step = bgemm_k_step,
};

/*
 * Tile (i, j) of batch b exactly as the ops compute it: C = C0; per k,
 * acc = 0.0f (the FILL), acc += A[r][l] * B[l][c] for l ascending (GEMM,
 * no fused multiply-add: built with -ffp-contract=off), C = C + acc (ADD).
 */
static void bgemm_ref_tile(const struct bgemm *g, uint64_t b, uint64_t i,
			   uint64_t j)
{
	uint64_t t = g->tile, r, c, k, l, x;
	uint64_t lda = bgemm_ld(g, g->kt), ldb = bgemm_ld(g, g->nt);
	const float *a, *bm;
	float acc;

	for (r = 0; r < t; r++) {
		for (c = 0; c < t; c++) {
			/* C has B's leading dimension */
			x = bgemm_c_off(g, b, i, j) / 4 + r * ldb + c;
			g->ref[x] = g->c0[x];
			for (k = 0; k < g->kt; k++) {
				a = g->a + bgemm_a_off(g, b, i, k) / 4 +
				    r * lda;
				bm = g->b + bgemm_b_off(g, b, k, j) / 4 + c;
				acc = 0.0f;
				for (l = 0; l < t; l++)
					acc += a[l] * bm[l * ldb];
				g->ref[x] = g->ref[x] + acc;
			}
		}
	}
}

static void bgemm_reference(const struct bgemm *g)
{
	uint64_t b, i, j;

	for (b = 0; b < g->batch; b++)
		for (i = 0; i < g->mt; i++)
			for (j = 0; j < g->nt; j++)
				bgemm_ref_tile(g, b, i, j);
}

static int bgemm_register(struct pto_runtime *rt)
{
	int ret;

	ret = pto_kernel_register_builtin(rt, K_FILL, PTO_WORKER_VECTOR,
					  PTO_OP_FILL_U32);
	if (!ret)
		ret = pto_kernel_register_builtin(rt, K_GEMM, PTO_WORKER_CUBE,
						  PTO_OP_GEMM_F32);
	if (!ret)
		ret = pto_kernel_register_builtin(rt, K_ADD,
						  PTO_WORKER_VECTOR,
						  PTO_OP_ADD_F32);
	if (!ret)
		ret = pto_kernel_register_builtin(rt, K_COPY,
						  PTO_WORKER_ACCEL,
						  PTO_OP_COPY);
	return ret;
}

int pto_orchestration_init(struct pto_runtime *rt, int argc, char **argv,
			   void **arg)
{
	struct bgemm *g = calloc(1, sizeof(*g));
	int ret;

	if (!g)
		return -ENOMEM;
	g->prog = "bgemm_builtin";
	g->tasks_per_k = 3;
	g->tensors_per_k = 8;
	g->layouts = 1u << SAMPLE_TILED | 1u << SAMPLE_ROWMAJOR;
	ret = bgemm_setup(rt, g, argc, argv);
	if (!ret)
		ret = bgemm_register(rt);
	return bgemm_init_done(rt, g, ret, arg);
}

int pto_orchestration_entry(struct pto_runtime *rt, void *arg)
{
	const struct bgemm *g = arg;

	return bgemm_orchestrate(rt, g, g->layout == SAMPLE_ROWMAJOR ?
				 &bgemm_view_ops : &bgemm_builtin_ops);
}

int pto_orchestration_fini(struct pto_runtime *rt, void *arg,
			   int run_status)
{
	struct bgemm *g = arg;
	struct sample_err e;
	int ret = -1;

	if (!run_status) {
		bgemm_reference(g);
		sample_compare_f32(g->c, g->ref, bgemm_c_elems(g), 0.0, 0.0,
				   &e);
		ret = sample_verdict(g->prog, &e, "bit-exact reference",
				     bgemm_checksum(g));
	}
	bgemm_teardown(rt, g);
	free(g);
	return ret;
}
