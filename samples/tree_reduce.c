// SPDX-License-Identifier: MIT
/*
 * tree_reduce.so: sum a large array by a recursive tree of tasks.
 *
 *   ptorun tree_reduce.so [type=u32|f32] [n=1048576] [leaf=2048] [seed=1]
 *
 * The orchestration recurses over the index range, opening a scope per
 * subtree: a range of at most leaf elements is one leaf task (a C kernel
 * summing it), a larger one is split in halves whose sums a combining task
 * adds with a built-in op (PTO_OP_ADD_U32 or PTO_OP_ADD_F32).  Every node
 * writes its sum into its own word of a partial-sums array in device
 * memory (OUTPUT_EXISTING), which its parent reads (INPUT): results cannot
 * travel up through heap outputs, which die with their scope.
 *
 * Verification is exact: u32 sums wrap, so each node's sum is compared
 * with a plain loop over its range; f32 nodes are compared bit for bit with
 * the same tree evaluated on the host (and the total with a double sum).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"

enum { K_LEAF = 1, K_COMBINE = 2 };

struct tree {
	const char *type;
	bool f32;
	uint64_t n, leaf, seed;
	uint64_t nodes;		/* 2 * leaves - 1 */
	void *src;		/* n elements, device memory */
	uint32_t *part;		/* one word per node, device memory */
	uint64_t tasks;
};

/* dst, src, n: dst = sum of n u32 (wrapping) */
static void leaf_u32(const uint64_t *a, uint32_t nargs)
{
	const uint32_t *s = (const uint32_t *)(uintptr_t)a[1];
	uint32_t sum = 0;
	uint64_t i;

	for (i = 0; i < a[2]; i++)
		sum += s[i];
	*(uint32_t *)(uintptr_t)a[0] = sum;
}

/* dst, src, n: dst = float sum of n f32, in index order */
static void leaf_f32(const uint64_t *a, uint32_t nargs)
{
	const float *s = (const float *)(uintptr_t)a[1];
	float sum = 0.0f;
	uint64_t i;

	for (i = 0; i < a[2]; i++)
		sum += s[i];
	*(float *)(uintptr_t)a[0] = sum;
}

/* Nodes of the tree over [0, n): halves until a range fits in a leaf. */
static uint64_t tree_nodes(uint64_t n, uint64_t leaf)
{
	if (n <= leaf)
		return 1;
	return 1 + tree_nodes(n / 2, leaf) + tree_nodes(n - n / 2, leaf);
}

/*
 * Sum [lo, hi) into part[*next] (post-order numbering), in a scope of its
 * own; returns 0 or a negative errno, *id the node written.
 */
static int tree_reduce(struct pto_runtime *rt, struct tree *t, uint64_t lo,
		       uint64_t hi, uint64_t *next, uint64_t *id)
{
	uint64_t mid = lo + (hi - lo) / 2, l, r;
	int ret;

	pto_scope_begin(rt);
	if (hi - lo <= t->leaf) {
		struct pto_param p[] = {
			PTO_OUT_EXISTING(t->part, *next * 4, 4),
			PTO_IN(t->src, lo * 4, (hi - lo) * 4),
			PTO_SCALAR(hi - lo),
		};

		*id = (*next)++;
		ret = sample_submit(rt, K_LEAF, PTO_WORKER_VECTOR, p, 3);
		return sample_scope_end(rt, ret);
	}
	ret = tree_reduce(rt, t, lo, mid, next, &l);
	if (!ret)
		ret = tree_reduce(rt, t, mid, hi, next, &r);
	if (!ret) {
		/* ADD_U32 counts bytes, ADD_F32 elements */
		struct pto_param p[] = {
			PTO_OUT_EXISTING(t->part, *next * 4, 4),
			PTO_IN(t->part, l * 4, 4), PTO_IN(t->part, r * 4, 4),
			PTO_SCALAR(t->f32 ? 1 : 4),
		};

		*id = (*next)++;
		ret = sample_submit(rt, K_COMBINE, PTO_WORKER_AICPU, p, 4);
	}
	return sample_scope_end(rt, ret);
}

int pto_orchestration_entry(struct pto_runtime *rt, void *arg)
{
	struct tree *t = arg;
	uint64_t next = 0, root;

	return tree_reduce(rt, t, 0, t->n, &next, &root);
}

static int tree_args(struct tree *t, int argc, char **argv)
{
	const struct sample_opt opts[] = {
		{ "type", NULL, &t->type, "element type: u32 or f32" },
		{ "n", &t->n, NULL, "elements" },
		{ "leaf", &t->leaf, NULL, "most elements one leaf task sums" },
		{ "seed", &t->seed, NULL, "input data seed" },
		{ NULL }
	};
	int ret;

	t->type = "u32";
	t->n = 1 << 20;
	t->leaf = 2048;
	t->seed = 1;
	ret = sample_parse_args("tree_reduce", argc, argv, opts);
	if (ret)
		return ret;
	t->f32 = !strcmp(t->type, "f32");
	if ((!t->f32 && strcmp(t->type, "u32")) || !t->n || !t->leaf ||
	    t->n > (1ull << 32)) {
		fprintf(stderr,
			"tree_reduce: need type=u32|f32, n in [1, 2^32], leaf > 0\n");
		return -EINVAL;
	}
	return 0;
}

static int tree_setup(struct pto_runtime *rt, struct tree *t)
{
	uint64_t state = t->seed, i;
	uint32_t *u;

	t->nodes = tree_nodes(t->n, t->leaf);
	t->tasks = t->nodes;
	t->src = sample_malloc(rt, "tree_reduce", "the array", t->n * 4);
	t->part = t->src ? sample_malloc(rt, "tree_reduce", "partial sums",
					 t->nodes * 4) : NULL;
	if (!t->part)
		return -ENOMEM;
	if (t->f32) {
		sample_fill_f32(t->src, t->n, &state);
	} else {
		u = t->src;
		for (i = 0; i < t->n; i++)
			u[i] = (uint32_t)sample_rand(&state);
	}
	memset(t->part, 0xff, t->nodes * 4);
	printf("tree_reduce: %" PRIu64 " %s elements, leaves of at most %"
	       PRIu64 ", %" PRIu64 " tasks per run\n", t->n, t->type,
	       t->leaf, t->tasks);
	return 0;
}

static void tree_free(struct pto_runtime *rt, struct tree *t)
{
	if (t->src)
		pto_free(rt, t->src);
	if (t->part)
		pto_free(rt, t->part);
	free(t);
}

int pto_orchestration_init(struct pto_runtime *rt, int argc, char **argv,
			   void **arg)
{
	struct tree *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	ret = tree_args(t, argc, argv);
	if (!ret)
		ret = tree_setup(rt, t);
	if (!ret)
		ret = pto_kernel_register(rt, K_LEAF, PTO_WORKER_VECTOR,
					  t->f32 ? leaf_f32 : leaf_u32,
					  t->f32 ? "sum_f32" : "sum_u32");
	if (!ret)
		ret = pto_kernel_register_builtin(rt, K_COMBINE,
						  PTO_WORKER_AICPU,
						  t->f32 ? PTO_OP_ADD_F32 :
						  PTO_OP_ADD_U32);
	if (ret) {
		if (ret < 0)
			sample_error("tree_reduce", "setup", ret);
		tree_free(rt, t);
		return ret;
	}
	*arg = t;
	return 0;
}

/*
 * The expected word of every node, numbered as tree_reduce() numbers them:
 * u32 by a plain loop over the node's range (order does not matter for a
 * wrapping sum), f32 by the same tree (order matters).
 */
static uint32_t tree_expect(const struct tree *t, uint64_t lo, uint64_t hi,
			    uint64_t *next, uint32_t *ref)
{
	uint64_t mid = lo + (hi - lo) / 2, i;
	uint32_t l, r, u = 0;
	float f = 0.0f, fl, fr;

	if (hi - lo <= t->leaf || !t->f32) {
		if (hi - lo > t->leaf) {	/* u32: children first */
			tree_expect(t, lo, mid, next, ref);
			tree_expect(t, mid, hi, next, ref);
		}
		for (i = lo; i < hi; i++) {
			if (t->f32)
				f += ((const float *)t->src)[i];
			else
				u += ((const uint32_t *)t->src)[i];
		}
		if (t->f32)
			memcpy(&u, &f, 4);
	} else {
		l = tree_expect(t, lo, mid, next, ref);
		r = tree_expect(t, mid, hi, next, ref);
		memcpy(&fl, &l, 4);
		memcpy(&fr, &r, 4);
		f = fl + fr;
		memcpy(&u, &f, 4);
	}
	ref[(*next)++] = u;
	return u;
}

static int tree_verify(const struct tree *t)
{
	uint32_t *ref = malloc(t->nodes * 4), root;
	uint64_t next = 0, i, bad = 0;
	struct sample_err e = { 0 };
	double dsum = 0.0, dabs = 0.0, tol;
	float f;
	int ret;

	if (!ref)
		return -ENOMEM;
	tree_expect(t, 0, t->n, &next, ref);
	for (i = 0; i < t->nodes; i++)
		if (t->part[i] != ref[i] && !bad++)
			e.first_bad = i;
	e.bad = bad;
	root = t->part[t->nodes - 1];
	if (t->f32) {
		for (i = 0; i < t->n; i++) {
			dsum += ((const float *)t->src)[i];
			dabs += fabs(((const float *)t->src)[i]);
		}
		memcpy(&f, &root, 4);
		printf("tree_reduce: sum %.9g (double sum %.9g)\n", f, dsum);
		/* a float sum through leaf + depth additions is this close */
		tol = (double)(t->leaf + 64) * ldexp(dabs, -24);
		if (!(fabs(f - dsum) <= tol))
			e.bad++;
		e.max_abs = fabs(f - dsum);
		e.max_rel = dsum != 0.0 ? e.max_abs / fabs(dsum) : e.max_abs;
	} else {
		printf("tree_reduce: sum %" PRIu32 " (mod 2^32)\n", root);
	}
	ret = sample_verdict("tree_reduce", &e, t->f32 ?
			     "every node bit-exact; error against a double sum" :
			     "every node exact",
			     sample_fnv1a(SAMPLE_FNV_INIT, t->part,
					  t->nodes * 4));
	free(ref);
	return ret;
}

int pto_orchestration_fini(struct pto_runtime *rt, void *arg,
			   int run_status)
{
	struct tree *t = arg;
	int ret = run_status ? -1 : tree_verify(t);

	tree_free(rt, t);
	return ret;
}
