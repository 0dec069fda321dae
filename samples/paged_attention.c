// SPDX-License-Identifier: MIT
/*
 * paged_attention.so: paged attention with online softmax, C kernels
 * (simulator only).
 *
 *   ptorun paged_attention.so [case=all] [block=16] [chunk=0] [seed=1]
 *
 * See pa.h for the structure.  Kernels use libm's expf; the result is
 * checked against a double-precision plain-softmax reference with a
 * tolerance.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pa.h"

#define F32P(x) ((float *)(uintptr_t)(x))

/* oi, li, mi, rows, cols: oi = 0, li = 0, mi = -inf */
static void hub_kernel(const uint64_t *a, uint32_t nargs)
{
	uint64_t r;

	memset(F32P(a[0]), 0, a[3] * a[4] * sizeof(float));
	for (r = 0; r < a[3]; r++) {
		F32P(a[1])[r] = 0.0f;
		F32P(a[2])[r] = -INFINITY;
	}
}

/* S, Q, K, rows, tokens, dim: S[r][t] = Q[r] . K[t] */
static void qk_kernel(const uint64_t *a, uint32_t nargs)
{
	const float *q = F32P(a[1]), *k = F32P(a[2]);
	uint64_t rows = a[3], n = a[4], d = a[5], r, t, i;
	float acc;

	for (r = 0; r < rows; r++) {
		for (t = 0; t < n; t++) {
			acc = 0.0f;
			for (i = 0; i < d; i++)
				acc += q[r * d + i] * k[t * d + i];
			F32P(a[0])[r * n + t] = acc;
		}
	}
}

/* P, m, l, S, scale bits, rows, cols: per row max, exp, sum */
static void sf_kernel(const uint64_t *a, uint32_t nargs)
{
	float *p = F32P(a[0]), *m = F32P(a[1]), *l = F32P(a[2]);
	const float *s = F32P(a[3]);
	uint32_t bits = (uint32_t)a[4];
	uint64_t rows = a[5], cols = a[6], r, c;
	float scale, mx, sum;

	memcpy(&scale, &bits, sizeof(scale));
	for (r = 0; r < rows; r++) {
		mx = -INFINITY;
		for (c = 0; c < cols; c++)
			mx = fmaxf(mx, s[r * cols + c] * scale);
		sum = 0.0f;
		for (c = 0; c < cols; c++) {
			p[r * cols + c] = expf(s[r * cols + c] * scale - mx);
			sum += p[r * cols + c];
		}
		m[r] = mx;
		l[r] = sum;
	}
}

/* O_new, P, V, rows, dim, tokens: O_new = P V */
static void pv_kernel(const uint64_t *a, uint32_t nargs)
{
	float *o = F32P(a[0]);
	const float *p = F32P(a[1]), *v = F32P(a[2]);
	uint64_t rows = a[3], d = a[4], n = a[5], r, t, i;

	memset(o, 0, rows * d * sizeof(float));
	for (r = 0; r < rows; r++)
		for (t = 0; t < n; t++)
			for (i = 0; i < d; i++)
				o[r * d + i] += p[r * n + t] * v[t * d + i];
}

/* O, l, m, O_new, l_new, m_new, rows, cols: merge a block into the sums */
static void up_kernel(const uint64_t *a, uint32_t nargs)
{
	float *o = F32P(a[0]), *l = F32P(a[1]), *m = F32P(a[2]);
	const float *on = F32P(a[3]), *ln = F32P(a[4]), *mn = F32P(a[5]);
	uint64_t rows = a[6], cols = a[7], r, c;
	float mx, alpha, beta;

	for (r = 0; r < rows; r++) {
		mx = fmaxf(m[r], mn[r]);
		/* the first block: the old sums are empty (m = -inf) */
		alpha = isinf(m[r]) ? 0.0f : expf(m[r] - mx);
		beta = expf(mn[r] - mx);
		l[r] = alpha * l[r] + beta * ln[r];
		for (c = 0; c < cols; c++)
			o[r * cols + c] = alpha * o[r * cols + c] +
					  beta * on[r * cols + c];
		m[r] = mx;
	}
}

/* out, O, l, rows, cols: out = O / l per row */
static void norm_kernel(const uint64_t *a, uint32_t nargs)
{
	const float *o = F32P(a[1]), *l = F32P(a[2]);
	uint64_t rows = a[3], cols = a[4], r, c;

	for (r = 0; r < rows; r++)
		for (c = 0; c < cols; c++)
			F32P(a[0])[r * cols + c] = o[r * cols + c] / l[r];
}

static int pa_register(struct pto_runtime *rt)
{
	static const struct {
		uint32_t id;
		enum pto_worker_type type;
		pto_kernel_fn fn;
		const char *name;
	} k[] = {
		{ PA_K_HUB, PTO_WORKER_VECTOR, hub_kernel, "AIV_HUB" },
		{ PA_K_QK, PTO_WORKER_CUBE, qk_kernel, "QK" },
		{ PA_K_SF, PTO_WORKER_VECTOR, sf_kernel, "SF" },
		{ PA_K_PV, PTO_WORKER_CUBE, pv_kernel, "PV" },
		{ PA_K_UP, PTO_WORKER_VECTOR, up_kernel, "UP" },
		{ PA_K_NORM, PTO_WORKER_VECTOR, norm_kernel, "NORM" },
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
	struct pa *pa = calloc(1, sizeof(*pa));
	int ret;

	if (!pa)
		return -ENOMEM;
	pa->prog = "paged_attention";
	ret = pa_setup(rt, pa, argc, argv);
	if (!ret)
		ret = pa_register(rt);
	if (ret) {
		if (ret < 0)
			sample_error(pa->prog, "setup", ret);
		pa_teardown(rt, pa);
		free(pa);
		return ret;
	}
	*arg = pa;
	return 0;
}

int pto_orchestration_entry(struct pto_runtime *rt, void *arg)
{
	return pa_orchestrate(rt, arg);
}

static int pa_verify(const struct pa *pa, const struct pa_case *c)
{
	uint64_t n = pa_out_elems(c);
	float *ref = malloc(n * sizeof(float));
	struct sample_err e;
	char label[64];
	int ret;

	if (!ref)
		return -ENOMEM;
	pa_label(pa, c, label, sizeof(label));
	pa_describe(c, label);
	pa_reference_double(c, ref);
	sample_compare_f32(c->out, ref, n, PA_ABS_TOL, PA_REL_TOL, &e);
	ret = sample_verdict(label, &e, "double reference",
			     sample_fnv1a(SAMPLE_FNV_INIT, c->out, n * 4));
	free(ref);
	return ret;
}

int pto_orchestration_fini(struct pto_runtime *rt, void *arg,
			   int run_status)
{
	return pa_fini(rt, arg, run_status, pa_verify);
}
