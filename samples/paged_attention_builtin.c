// SPDX-License-Identifier: MIT
/*
 * paged_attention_builtin.so: the paged attention sample with built-in ops
 * only, so it runs unchanged on the simulator and on /dev/ptoN.
 *
 *   ptorun paged_attention_builtin.so [case=all] [block=16] [chunk=0] ...
 *		     [layout=tiled|rowmajor]
 *
 * Hub: two PTO_OP_FILL_U32 (mi = -inf; li, oi and the PV tiles = 0).  Per
 * KV block: PTO_OP_MATMUL_BT_F32 (QK), PTO_OP_SOFTMAX_PREP_F32 (SF),
 * PTO_OP_GEMM_F32 into a zeroed tile (PV), PTO_OP_ONLINE_UPDATE_F32 (UP).
 * At the end PTO_OP_ROW_DIV_F32.  See pa.h for the structure.
 *
 * The reference repeats the ops' arithmetic in the same order with the
 * ops' own exp (pto_op_expf() from libpto), so the check is bit-exact;
 * the double-precision reference checks that this is attention at all.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pa.h"

static int pa_register(struct pto_runtime *rt)
{
	static const struct {
		uint32_t id;
		enum pto_worker_type type;
		uint32_t op;
	} k[] = {
		{ PA_K_FILL, PTO_WORKER_VECTOR, PTO_OP_FILL_U32 },
		{ PA_K_QK, PTO_WORKER_CUBE, PTO_OP_MATMUL_BT_F32 },
		{ PA_K_SF, PTO_WORKER_VECTOR, PTO_OP_SOFTMAX_PREP_F32 },
		{ PA_K_PV, PTO_WORKER_CUBE, PTO_OP_GEMM_F32 },
		{ PA_K_UP, PTO_WORKER_VECTOR, PTO_OP_ONLINE_UPDATE_F32 },
		{ PA_K_NORM, PTO_WORKER_VECTOR, PTO_OP_ROW_DIV_F32 },
	};
	unsigned int i;
	int ret = 0;

	for (i = 0; i < sizeof(k) / sizeof(k[0]) && !ret; i++)
		ret = pto_kernel_register_builtin(rt, k[i].id, k[i].type,
						  k[i].op);
	return ret;
}

int pto_orchestration_init(struct pto_runtime *rt, int argc, char **argv,
			   void **arg)
{
	struct pa *pa = calloc(1, sizeof(*pa));
	int ret;

	if (!pa)
		return -ENOMEM;
	pa->prog = "paged_attention_builtin";
	pa->builtin = true;
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

/* Scratch of one row of the reference. */
struct pa_row {
	float *s, *p;		/* block_size each */
	float *on, *o;		/* head_dim each */
	float m, l;
};

/* QK, SF and PV of one block for query row q, as the ops compute them. */
static void pa_ref_block(const struct pa_case *c, const float *q,
			 const float *k, const float *v, uint64_t n,
			 struct pa_row *w, float *mj, float *lj)
{
	uint64_t d = c->head_dim, ld = c->kv_ld, t, i;
	float acc, x, mx, sum;

	for (t = 0; t < n; t++) {		/* MATMUL_BT */
		acc = 0.0f;
		for (i = 0; i < d; i++)
			acc += q[i] * k[t * ld + i];
		w->s[t] = acc;
	}
	mx = w->s[0] * c->scale;		/* SOFTMAX_PREP */
	for (t = 1; t < n; t++) {
		x = w->s[t] * c->scale;
		if (x > mx)
			mx = x;
	}
	sum = 0.0f;
	for (t = 0; t < n; t++) {
		w->p[t] = pto_op_expf(w->s[t] * c->scale - mx);
		sum += w->p[t];
	}
	*mj = mx;
	*lj = sum;
	for (i = 0; i < d; i++) {		/* GEMM into a zeroed tile */
		acc = 0.0f;
		for (t = 0; t < n; t++)
			acc += w->p[t] * v[t * ld + i];
		w->on[i] = acc;
	}
}

/* ONLINE_UPDATE of one row. */
static void pa_ref_update(uint64_t d, struct pa_row *w, float mj, float lj)
{
	float mx = w->m > mj ? w->m : mj;
	float alpha = pto_op_expf(w->m - mx), beta = pto_op_expf(mj - mx);
	uint64_t i;

	if (mx == -INFINITY) {
		alpha = 0.0f;
		beta = 0.0f;
	}
	w->l = alpha * w->l + beta * lj;
	for (i = 0; i < d; i++)
		w->o[i] = alpha * w->o[i] + beta * w->on[i];
	w->m = mx;
}

static void pa_ref_row(const struct pa_case *c, uint64_t b, uint64_t h,
		       struct pa_row *w, float *out)
{
	uint64_t d = c->head_dim, blk, i, n;
	const float *q = c->query + (b * c->heads + h) * d;
	const float *k, *v;
	float mj, lj;

	w->m = -INFINITY;
	w->l = 0.0f;
	memset(w->o, 0, d * sizeof(float));
	for (blk = 0; blk < pa_blocks(c, b); blk++) {
		n = pa_valid(c, b, blk);
		k = c->key_cache + pa_kv_off(c, b, blk) / sizeof(float);
		v = c->value_cache + pa_kv_off(c, b, blk) / sizeof(float);
		pa_ref_block(c, q, k, v, n, w, &mj, &lj);
		pa_ref_update(d, w, mj, lj);
	}
	for (i = 0; i < d; i++)			/* ROW_DIV */
		out[i] = w->o[i] / w->l;
}

static int pa_reference_ops(const struct pa_case *c, float *ref)
{
	uint64_t bs = c->block_size, d = c->head_dim, b, h;
	struct pa_row w;

	w.s = calloc(2 * bs + 2 * d, sizeof(float));
	if (!w.s)
		return -ENOMEM;
	w.p = w.s + bs;
	w.on = w.p + bs;
	w.o = w.on + d;
	for (b = 0; b < c->batch; b++)
		for (h = 0; h < c->heads; h++)
			pa_ref_row(c, b, h, &w,
				   ref + (b * c->heads + h) * d);
	free(w.s);
	return 0;
}

static int pa_verify(const struct pa *pa, const struct pa_case *c)
{
	uint64_t n = pa_out_elems(c);
	float *ref = malloc(2 * n * sizeof(float));
	struct sample_err e, ed;
	char label[64];
	int ret;

	if (!ref || pa_reference_ops(c, ref)) {
		free(ref);
		return -ENOMEM;
	}
	pa_label(pa, c, label, sizeof(label));
	pa_describe(c, label);
	pa_reference_double(c, ref + n);
	sample_compare_f32(c->out, ref + n, n, PA_ABS_TOL, PA_REL_TOL, &ed);
	printf("%s: against double: max abs error %.3g, max rel error %.3g%s\n",
	       label, ed.max_abs, ed.max_rel,
	       ed.bad ? " (OUT OF TOLERANCE)" : "");
	sample_compare_f32(c->out, ref, n, 0.0, 0.0, &e);
	e.bad += ed.bad;
	ret = sample_verdict(label, &e, "bit-exact reference",
			     sample_fnv1a(SAMPLE_FNV_INIT, c->out, n * 4));
	free(ref);
	return ret;
}

int pto_orchestration_fini(struct pto_runtime *rt, void *arg,
			   int run_status)
{
	return pa_fini(rt, arg, run_status, pa_verify);
}
