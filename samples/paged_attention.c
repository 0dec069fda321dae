// SPDX-License-Identifier: MIT
/*
 * paged_attention.so: paged attention with online softmax, C kernels
 * (simulator only).
 *
 *   ptorun paged_attention.so [case=all] [block=16] [chunk=0] [seed=1]
 *		     [layout=tiled|rowmajor]
 *
 * See pa.h for the structure and the layouts; every kernel is written
 * once on (address, row stride) pairs and bound twice, to take pointers
 * (layout=tiled) or view descriptors (layout=rowmajor).  Kernels use libm's expf; the result is
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

/*
 * Tensor argument i of a kernel: its first element and the elements
 * between its rows.  With layout=tiled a dense matrix of cols columns;
 * with layout=rowmajor a view, whose rows must be unit-stride (the
 * kernels walk rows as a DMA engine moves them): else the task fails.
 */
struct pa_arg {
	float *p;
	uint64_t ld;
};

static struct pa_arg pa_arg(const uint64_t *a, uint32_t i, bool view,
			    uint64_t cols, bool *ok)
{
	const struct pto_view_desc *d = pto_arg_view(a, i);
	struct pa_arg t = { F32P(a[i]), cols };

	if (!view)
		return t;
	t.p = F32P(d->addr);
	t.ld = d->stride[0];
	if (d->dtype != PTO_DTYPE_F32 || d->stride[d->ndim - 1] != 1) {
		pto_kernel_set_error(-EINVAL);
		*ok = false;
	}
	return t;
}

/* oi, li, mi, rows, cols: oi = 0, li = 0, mi = -inf */
static void hub(const uint64_t *a, bool view)
{
	bool ok = true;
	struct pa_arg o = pa_arg(a, 0, view, a[4], &ok);
	struct pa_arg l = pa_arg(a, 1, view, 1, &ok);
	struct pa_arg m = pa_arg(a, 2, view, 1, &ok);
	uint64_t r;

	for (r = 0; ok && r < a[3]; r++) {
		memset(o.p + r * o.ld, 0, a[4] * sizeof(float));
		l.p[r] = 0.0f;
		m.p[r] = -INFINITY;
	}
}

/* S, Q, K, rows, tokens, dim: S[r][t] = Q[r] . K[t] */
static void qk(const uint64_t *a, bool view)
{
	uint64_t rows = a[3], n = a[4], d = a[5], r, t, i;
	bool ok = true;
	struct pa_arg s = pa_arg(a, 0, view, n, &ok);
	struct pa_arg q = pa_arg(a, 1, view, d, &ok);
	struct pa_arg k = pa_arg(a, 2, view, d, &ok);
	float acc;

	for (r = 0; ok && r < rows; r++) {
		for (t = 0; t < n; t++) {
			acc = 0.0f;
			for (i = 0; i < d; i++)
				acc += q.p[r * q.ld + i] * k.p[t * k.ld + i];
			s.p[r * s.ld + t] = acc;
		}
	}
}

/* P, m, l, S, scale bits, rows, cols: per row max, exp, sum */
static void sf(const uint64_t *a, bool view)
{
	uint64_t rows = a[5], cols = a[6], r, c;
	bool ok = true;
	struct pa_arg p = pa_arg(a, 0, view, cols, &ok);
	struct pa_arg m = pa_arg(a, 1, view, 1, &ok);
	struct pa_arg l = pa_arg(a, 2, view, 1, &ok);
	struct pa_arg s = pa_arg(a, 3, view, cols, &ok);
	uint32_t bits = (uint32_t)a[4];
	float scale, mx, sum, *pr;
	const float *sr;

	memcpy(&scale, &bits, sizeof(scale));
	for (r = 0; ok && r < rows; r++) {
		pr = p.p + r * p.ld;
		sr = s.p + r * s.ld;
		mx = -INFINITY;
		for (c = 0; c < cols; c++)
			mx = fmaxf(mx, sr[c] * scale);
		sum = 0.0f;
		for (c = 0; c < cols; c++) {
			pr[c] = expf(sr[c] * scale - mx);
			sum += pr[c];
		}
		m.p[r] = mx;
		l.p[r] = sum;
	}
}

/* O_new, P, V, rows, dim, tokens: O_new = P V */
static void pv(const uint64_t *a, bool view)
{
	uint64_t rows = a[3], d = a[4], n = a[5], r, t, i;
	bool ok = true;
	struct pa_arg o = pa_arg(a, 0, view, d, &ok);
	struct pa_arg p = pa_arg(a, 1, view, n, &ok);
	struct pa_arg v = pa_arg(a, 2, view, d, &ok);

	for (r = 0; ok && r < rows; r++) {
		memset(o.p + r * o.ld, 0, d * sizeof(float));
		for (t = 0; t < n; t++)
			for (i = 0; i < d; i++)
				o.p[r * o.ld + i] += p.p[r * p.ld + t] *
						     v.p[t * v.ld + i];
	}
}

/* O, l, m, O_new, l_new, m_new, rows, cols: merge a block into the sums */
static void up(const uint64_t *a, bool view)
{
	uint64_t rows = a[6], cols = a[7], r, c;
	bool ok = true;
	struct pa_arg o = pa_arg(a, 0, view, cols, &ok);
	struct pa_arg l = pa_arg(a, 1, view, 1, &ok);
	struct pa_arg m = pa_arg(a, 2, view, 1, &ok);
	struct pa_arg on = pa_arg(a, 3, view, cols, &ok);
	struct pa_arg ln = pa_arg(a, 4, view, 1, &ok);
	struct pa_arg mn = pa_arg(a, 5, view, 1, &ok);
	float mx, alpha, beta;

	for (r = 0; ok && r < rows; r++) {
		mx = fmaxf(m.p[r], mn.p[r]);
		/* the first block: the old sums are empty (m = -inf) */
		alpha = isinf(m.p[r]) ? 0.0f : expf(m.p[r] - mx);
		beta = expf(mn.p[r] - mx);
		l.p[r] = alpha * l.p[r] + beta * ln.p[r];
		for (c = 0; c < cols; c++)
			o.p[r * o.ld + c] = alpha * o.p[r * o.ld + c] +
					    beta * on.p[r * on.ld + c];
		m.p[r] = mx;
	}
}

/* out, O, l, rows, cols: out = O / l per row */
static void norm(const uint64_t *a, bool view)
{
	uint64_t rows = a[3], cols = a[4], r, c;
	bool ok = true;
	struct pa_arg out = pa_arg(a, 0, view, cols, &ok);
	struct pa_arg o = pa_arg(a, 1, view, cols, &ok);
	struct pa_arg l = pa_arg(a, 2, view, 1, &ok);

	for (r = 0; ok && r < rows; r++)
		for (c = 0; c < cols; c++)
			out.p[r * out.ld + c] = o.p[r * o.ld + c] / l.p[r];
}

/* Each kernel twice: on pointers (layout=tiled) and on views. */
static void hub_kernel(const uint64_t *a, uint32_t nargs)
{
	hub(a, false);
}

static void hub_view(const uint64_t *a, uint32_t nargs)
{
	hub(a, true);
}

static void qk_kernel(const uint64_t *a, uint32_t nargs)
{
	qk(a, false);
}

static void qk_view(const uint64_t *a, uint32_t nargs)
{
	qk(a, true);
}

static void sf_kernel(const uint64_t *a, uint32_t nargs)
{
	sf(a, false);
}

static void sf_view(const uint64_t *a, uint32_t nargs)
{
	sf(a, true);
}

static void pv_kernel(const uint64_t *a, uint32_t nargs)
{
	pv(a, false);
}

static void pv_view(const uint64_t *a, uint32_t nargs)
{
	pv(a, true);
}

static void up_kernel(const uint64_t *a, uint32_t nargs)
{
	up(a, false);
}

static void up_view(const uint64_t *a, uint32_t nargs)
{
	up(a, true);
}

static void norm_kernel(const uint64_t *a, uint32_t nargs)
{
	norm(a, false);
}

static void norm_view(const uint64_t *a, uint32_t nargs)
{
	norm(a, true);
}

/* The kernels of the layout the run uses, under the ids pa.h names. */
static int pa_register(struct pto_runtime *rt, bool views)
{
	static const struct {
		uint32_t id;
		enum pto_worker_type type;
		pto_kernel_fn fn[2];	/* on pointers, on views */
		const char *name;
	} k[] = {
		{ PA_K_HUB, PTO_WORKER_VECTOR, { hub_kernel, hub_view },
		  "AIV_HUB" },
		{ PA_K_QK, PTO_WORKER_CUBE, { qk_kernel, qk_view }, "QK" },
		{ PA_K_SF, PTO_WORKER_VECTOR, { sf_kernel, sf_view }, "SF" },
		{ PA_K_PV, PTO_WORKER_CUBE, { pv_kernel, pv_view }, "PV" },
		{ PA_K_UP, PTO_WORKER_VECTOR, { up_kernel, up_view }, "UP" },
		{ PA_K_NORM, PTO_WORKER_VECTOR, { norm_kernel, norm_view },
		  "NORM" },
	};
	unsigned int i;
	int ret = 0;

	for (i = 0; i < sizeof(k) / sizeof(k[0]) && !ret; i++)
		ret = pto_kernel_register(rt, k[i].id, k[i].type,
					  k[i].fn[views], k[i].name);
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
		ret = pa_register(rt, pa->layout == SAMPLE_ROWMAJOR);
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
