// SPDX-License-Identifier: MIT
/*
 * bgemm.so: batched tiled GEMM with C kernels (simulator only).
 *
 *   ptorun bgemm.so [batch=4] [m=4] [n=4] [k=4] [tile=64] [kgroup=0] [seed=1]
 *
 * Per output tile and k step, gemm_tile writes A(i,k) * B(k,j) into a tile
 * the runtime allocates (OUTPUT), and tile_add accumulates it into C(i,j)
 * (INOUT), so the adds of one tile run in k order while gemms of every
 * tile and step run in parallel.  Scopes nest per batch, per output tile
 * and per group of k steps.
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

enum { K_GEMM = 1, K_ADD = 2, K_COPY = 3 };

/* P = A * B on T x T tiles; args: P, A, B, T */
static void gemm_tile(const uint64_t *args, uint32_t nargs)
{
	float *p = (float *)(uintptr_t)args[0];
	const float *a = (const float *)(uintptr_t)args[1];
	const float *b = (const float *)(uintptr_t)args[2];
	uint64_t t = args[3], i, j, l;
	float x;

	/* i-l-j order: each P[i][j] still sums over l in ascending order */
	for (i = 0; i < t; i++) {
		for (j = 0; j < t; j++)
			p[i * t + j] = 0.0f;
		for (l = 0; l < t; l++) {
			x = a[i * t + l];
			for (j = 0; j < t; j++)
				p[i * t + j] += x * b[l * t + j];
		}
	}
}

/* C += P; args: C, P, n */
static void tile_add(const uint64_t *args, uint32_t nargs)
{
	float *c = (float *)(uintptr_t)args[0];
	const float *p = (const float *)(uintptr_t)args[1];
	uint64_t i;

	for (i = 0; i < args[2]; i++)
		c[i] += p[i];
}

/* args: dst, src, nbytes */
static void copy_kernel(const uint64_t *args, uint32_t nargs)
{
	memcpy((void *)(uintptr_t)args[0], (const void *)(uintptr_t)args[1],
	       args[2]);
}

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
	uint64_t tb = bgemm_tile_bytes(g);
	void *tmp = NULL;
	struct pto_param gp[] = {
		PTO_OUT(&tmp, tb),
		PTO_IN(g->a, bgemm_a_off(g, b, i, k), tb),
		PTO_IN(g->b, bgemm_b_off(g, b, k, j), tb),
		PTO_SCALAR(g->tile),
	};
	int ret;

	ret = sample_submit(rt, K_GEMM, PTO_WORKER_CUBE, gp, 4);
	if (ret)
		return ret;
	{
		struct pto_param ap[] = {
			PTO_INOUT(g->c, bgemm_c_off(g, b, i, j), tb),
			PTO_IN(tmp, 0, tb),
			PTO_SCALAR(bgemm_tile_elems(g)),
		};

		return sample_submit(rt, K_ADD, PTO_WORKER_VECTOR, ap, 3);
	}
}

static const struct bgemm_ops bgemm_c_ops = {
	.copy = bgemm_copy,
	.k_step = bgemm_k_step,
};

/* Expected tile (i, j) of batch b in double; returns the largest sum |x|. */
static double bgemm_ref_tile(const struct bgemm *g, uint64_t b, uint64_t i,
			     uint64_t j)
{
	uint64_t co = bgemm_c_off(g, b, i, j), t = g->tile, r, c, k, l;
	double sum, mag, worst = 0.0, x;
	const float *a, *bm;

	for (r = 0; r < t; r++) {
		for (c = 0; c < t; c++) {
			sum = bgemm_at(g->c0, g, co, r, c);
			mag = fabs(sum);
			for (k = 0; k < g->kt; k++) {
				a = g->a + bgemm_a_off(g, b, i, k) / 4 + r * t;
				bm = g->b + bgemm_b_off(g, b, k, j) / 4 + c;
				for (l = 0; l < t; l++) {
					x = (double)a[l] * bm[l * t];
					sum += x;
					mag += fabs(x);
				}
			}
			g->ref[co / sizeof(float) + r * t + c] = (float)sum;
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
	ret = bgemm_setup(rt, g, argc, argv);
	if (!ret)
		ret = pto_kernel_register(rt, K_GEMM, PTO_WORKER_CUBE,
					  gemm_tile, "gemm_tile");
	if (!ret)
		ret = pto_kernel_register(rt, K_ADD, PTO_WORKER_VECTOR,
					  tile_add, "tile_add");
	if (!ret)
		ret = pto_kernel_register(rt, K_COPY, PTO_WORKER_ACCEL,
					  copy_kernel, "copy");
	return bgemm_init_done(rt, g, ret, arg);
}

int pto_orchestration_entry(struct pto_runtime *rt, void *arg)
{
	return bgemm_orchestrate(rt, arg, &bgemm_c_ops);
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
