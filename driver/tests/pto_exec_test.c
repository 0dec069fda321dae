// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the ops' bounds and cost checks and their sections (pto_exec.c).
 * pto_op_prepare() must say what pto_op_exec() says for any arguments;
 * an op run in sections of any size must leave the same bytes as one
 * pto_op_exec() of the whole op, overlapping buffers included; an op on
 * strided tensor views, in sections, must compute the bits the op
 * computes on contiguous copies of them, whatever happens to the view
 * descriptors once the op was prepared.  The reference is this module's
 * own copy of ops/pto_ops.c.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <asm/fpu/api.h>

#include "pto_drv.h"
#include "pto_ops.h"

#define HEAP	(16 * 1024)

static int pto_ref_exec(u32 op, const u64 *args, u32 nargs, u8 *heap)
{
	struct pto_op_mem mem = { .base = 0, .size = HEAP, .host = heap };
	int ret;

	kernel_fpu_begin();
	ret = pto_op_exec(op, args, nargs, 0, &mem);
	kernel_fpu_end();
	return ret;
}

/* Ops the driver runs itself (PTO_OP_SPIN_NS is timed by the core). */
static const u32 pto_test_ops[] = {
	PTO_OP_NOP, PTO_OP_COPY, PTO_OP_FILL_U32, PTO_OP_ADD_F32,
	PTO_OP_MUL_F32, PTO_OP_GEMM_F32, PTO_OP_MATMUL_BT_F32,
	PTO_OP_SOFTMAX_PREP_F32, PTO_OP_ONLINE_UPDATE_F32,
	PTO_OP_ROW_DIV_F32, PTO_OP_ADD_U32,
};

/* Values at and around every boundary an argument has. */
static u64 pto_boundary(struct rnd_state *rs)
{
	static const u64 v[] = {
		0, 1, 2, 3, 4, 7, 8, 16, 63, 64, 100, 128, 1000,
		HEAP / 16, HEAP / 8, HEAP / 4 - 4, HEAP / 4, HEAP / 2,
		HEAP - 64, HEAP - 5, HEAP - 4, HEAP - 1, HEAP, HEAP + 1,
		HEAP + 4, 1ull << 31, 1ull << 32, (1ull << 32) + 1,
		1ull << 62, (1ull << 62) + 1, U64_MAX / 4, U64_MAX / 4 + 1,
		U64_MAX - 3, U64_MAX - 1, U64_MAX,
	};
	u32 r = prandom_u32_state(rs);

	if (r & 1)
		return prandom_u32_state(rs) % (HEAP + 64);
	return v[(r >> 1) % ARRAY_SIZE(v)];
}

/* For any arguments, the checks agree with what the op itself does. */
static void pto_exec_validate_agrees(struct kunit *test)
{
	u8 *heap = kunit_kzalloc(test, HEAP, GFP_KERNEL);
	struct pto_op_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	u64 args[PTO_MAX_ARGS];
	struct rnd_state rs;
	int iter, i, want, got, valid = 0;
	u32 op, nargs;

	KUNIT_ASSERT_TRUE(test, heap && run);
	prandom_seed_state(&rs, 1414);
	for (iter = 0; iter < 20000; iter++) {
		op = prandom_u32_state(&rs) % (PTO_OP_COUNT + 2);
		nargs = pto_op_nargs(op < PTO_OP_COUNT ? op : 0);
		/* now and then one argument too few */
		if (nargs && !(prandom_u32_state(&rs) % 16))
			nargs--;
		for (i = 0; i < PTO_MAX_ARGS; i++)
			args[i] = pto_boundary(&rs);
		/* small matrix dimensions, or the valid ones run long */
		if (op == PTO_OP_GEMM_F32 || op == PTO_OP_MATMUL_BT_F32) {
			for (i = 3; i < 6; i++)
				if (args[i] > 64 && (prandom_u32_state(&rs) & 3))
					args[i] %= 65;
		}
		want = pto_ref_exec(op, args, nargs, heap);
		got = pto_op_prepare(run, op, args, nargs, 0, heap, HEAP,
				     U64_MAX, U64_MAX);
		/* M*N*K overflowing is -E2BIG first, the op's -EINVAL */
		if (got == -E2BIG && want == -EINVAL)
			got = want;
		KUNIT_EXPECT_EQ_MSG(test, got, want,
				    "op %u nargs %u args %llx %llx %llx %llx %llx %llx %llx %llx",
				    op, nargs, args[0], args[1], args[2], args[3],
				    args[4], args[5], args[6], args[7]);
		valid += !want;
	}
	/* the mix hits both sides */
	KUNIT_EXPECT_GT(test, valid, 1000);
	KUNIT_EXPECT_LT(test, valid, 19000);
}

/* A random float-ish pattern: finite values mostly, NaN and inf now and then. */
static void pto_fill_heap(struct rnd_state *rs, u8 *heap)
{
	u32 *w = (u32 *)heap;
	size_t i;

	for (i = 0; i < HEAP / 4; i++) {
		u32 r = prandom_u32_state(rs);

		w[i] = r % 97 ? (0x3c000000 + r % 0x04000000) | (r & 0x80000000) :
			       r;
	}
}

static u64 pto_rand_addr(struct rnd_state *rs, u64 len)
{
	if (len >= HEAP)
		return 0;
	return (prandom_u32_state(rs) % ((HEAP - len) / 4 + 1)) * 4;
}

/* Valid arguments of op, with buffers anywhere in the heap (overlaps too). */
static u32 pto_valid_args(struct rnd_state *rs, u32 op, u64 *a)
{
	u64 m, n, k, rows, cols;

	memset(a, 0, PTO_MAX_ARGS * sizeof(u64));
	switch (op) {
	case PTO_OP_COPY:
		a[2] = prandom_u32_state(rs) % (HEAP / 2);
		a[0] = prandom_u32_state(rs) % (HEAP - a[2] + 1);
		/* overlapping copies, in both directions, half the time */
		if (prandom_u32_state(rs) & 1) {
			u64 d = prandom_u32_state(rs) % 200;

			a[1] = a[0] >= d && (prandom_u32_state(rs) & 1) ?
			       a[0] - d : min_t(u64, a[0] + d, HEAP - a[2]);
		} else {
			a[1] = prandom_u32_state(rs) % (HEAP - a[2] + 1);
		}
		return 3;
	case PTO_OP_FILL_U32:
		a[2] = 4 * (prandom_u32_state(rs) % (HEAP / 4));
		a[0] = pto_rand_addr(rs, a[2]);
		a[1] = prandom_u32_state(rs);
		return 3;
	case PTO_OP_ADD_F32:
	case PTO_OP_MUL_F32:
	case PTO_OP_ADD_U32:
		n = prandom_u32_state(rs) % (HEAP / 8);
		a[0] = pto_rand_addr(rs, 4 * n);
		a[1] = pto_rand_addr(rs, 4 * n);
		a[2] = prandom_u32_state(rs) & 1 ? a[0] : pto_rand_addr(rs, 4 * n);
		a[3] = op == PTO_OP_ADD_U32 ? 4 * n : n;
		return 4;
	case PTO_OP_GEMM_F32:
	case PTO_OP_MATMUL_BT_F32:
		m = prandom_u32_state(rs) % 20;
		n = prandom_u32_state(rs) % 20;
		k = prandom_u32_state(rs) % 20;
		a[0] = pto_rand_addr(rs, 4 * m * n);
		a[1] = pto_rand_addr(rs, 4 * m * k);
		a[2] = pto_rand_addr(rs, 4 * k * n);
		/* C written over A now and then: no cutting along K then */
		if (!(prandom_u32_state(rs) % 4))
			a[1] = a[0];
		a[3] = m;
		a[4] = n;
		a[5] = k;
		return 6;
	case PTO_OP_SOFTMAX_PREP_F32:
		rows = prandom_u32_state(rs) % 30;
		cols = 1 + prandom_u32_state(rs) % 40;
		a[0] = pto_rand_addr(rs, 4 * rows * cols);
		a[1] = pto_rand_addr(rs, 4 * rows);
		a[2] = pto_rand_addr(rs, 4 * rows);
		a[3] = pto_rand_addr(rs, 4 * rows * cols);
		a[4] = 0x3e000000 + prandom_u32_state(rs) % 0x01000000;
		a[5] = rows;
		a[6] = cols;
		return 7;
	case PTO_OP_ONLINE_UPDATE_F32:
		rows = prandom_u32_state(rs) % 30;
		cols = prandom_u32_state(rs) % 40;
		a[0] = pto_rand_addr(rs, 4 * rows * cols);
		a[1] = pto_rand_addr(rs, 4 * rows);
		a[2] = pto_rand_addr(rs, 4 * rows);
		a[3] = pto_rand_addr(rs, 4 * rows * cols);
		a[4] = pto_rand_addr(rs, 4 * rows);
		a[5] = pto_rand_addr(rs, 4 * rows);
		a[6] = rows;
		a[7] = cols;
		return 8;
	case PTO_OP_ROW_DIV_F32:
		rows = prandom_u32_state(rs) % 30;
		cols = prandom_u32_state(rs) % 60;
		a[0] = pto_rand_addr(rs, 4 * rows * cols);
		a[1] = prandom_u32_state(rs) & 1 ? a[0] :
		       pto_rand_addr(rs, 4 * rows * cols);
		a[2] = pto_rand_addr(rs, 4 * rows);
		a[3] = rows;
		a[4] = cols;
		return 5;
	}
	return 0;
}

/* Sections of any size, one unit up, leave the bytes one call leaves. */
static void pto_exec_sections_match_whole(struct kunit *test)
{
	u8 *orig = kunit_kzalloc(test, HEAP, GFP_KERNEL);
	u8 *whole = kunit_kzalloc(test, HEAP, GFP_KERNEL);
	u8 *cut = kunit_kzalloc(test, HEAP, GFP_KERNEL);
	struct pto_op_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	u64 args[PTO_MAX_ARGS], ns, budget;
	u32 op, nargs, sections, multi = 0;
	struct rnd_state rs;
	int iter, ret;

	KUNIT_ASSERT_TRUE(test, orig && whole && cut && run);
	prandom_seed_state(&rs, 2014);
	for (iter = 0; iter < 3000; iter++) {
		op = pto_test_ops[prandom_u32_state(&rs) % ARRAY_SIZE(pto_test_ops)];
		nargs = pto_valid_args(&rs, op, args);
		pto_fill_heap(&rs, orig);
		memcpy(whole, orig, HEAP);
		memcpy(cut, orig, HEAP);
		KUNIT_ASSERT_EQ(test, pto_ref_exec(op, args, nargs, whole), 0);
		ret = pto_op_prepare(run, op, args, nargs, 0, cut, HEAP,
				     U64_MAX, U64_MAX);
		KUNIT_ASSERT_EQ_MSG(test, ret, 0, "op %u", op);
		sections = 0;
		while (!pto_op_done(run)) {
			/* from one unit (budget 0) to everything */
			budget = prandom_u32_state(&rs) % 4 ?
				 prandom_u32_state(&rs) % 300 : U64_MAX;
			KUNIT_ASSERT_EQ(test, pto_op_section(run, budget, &ns), 0);
			sections++;
			KUNIT_ASSERT_LE(test, sections, run->units);
		}
		multi += sections > 1;
		KUNIT_EXPECT_EQ(test, run->pos, run->units);
		KUNIT_EXPECT_TRUE_MSG(test, !memcmp(whole, cut, HEAP),
				      "op %u args %llx %llx %llx %llx %llx %llx in %u sections",
				      op, args[0], args[1], args[2], args[3],
				      args[4], args[5], sections);
	}
	KUNIT_EXPECT_GT(test, multi, 1000);
}

/* Each section runs at least one unit and no more than its budget buys. */
static void pto_exec_section_sizes(struct kunit *test)
{
	u8 *heap = kunit_kzalloc(test, HEAP, GFP_KERNEL);
	struct pto_op_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	/* C 3x4 at 0, A 3x5 at 1024, B 5x4 at 2048: 15 steps of 4 MACs */
	u64 gemm[6] = { 0, 1024, 2048, 3, 4, 5 }, ns;
	u32 n = 0;

	KUNIT_ASSERT_TRUE(test, heap && run);
	KUNIT_ASSERT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, run->units, 15);
	KUNIT_EXPECT_EQ(test, run->unit_cost, 4);
	while (!pto_op_done(run)) {
		KUNIT_ASSERT_EQ(test, pto_op_section(run, 0, &ns), 0);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 15);
	/* a budget of 2.5 units: two per section, rows never straddled */
	KUNIT_ASSERT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, U64_MAX), 0);
	n = 0;
	while (!pto_op_done(run)) {
		u64 pos = run->pos;

		KUNIT_ASSERT_EQ(test, pto_op_section(run, 10, &ns), 0);
		KUNIT_EXPECT_LE(test, run->pos - pos, 2);
		KUNIT_EXPECT_EQ(test, pos / 5, (run->pos - 1) / 5);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 9);	/* 2 + 2 + 1 per row */
	/* C over A: whole rows of 20 MACs */
	gemm[1] = 0;
	KUNIT_ASSERT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, run->units, 3);
	KUNIT_EXPECT_EQ(test, run->unit_cost, 20);
	/* nothing to run without rows, columns or K */
	gemm[5] = 0;
	KUNIT_ASSERT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, U64_MAX), 0);
	KUNIT_EXPECT_TRUE(test, pto_op_done(run));
}

/* max_task_macs, then the checks, then max_section_cost. */
static void pto_exec_costs(struct kunit *test)
{
	struct pto_op_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	u8 *heap = kunit_kzalloc(test, HEAP, GFP_KERNEL);
	u64 gemm[6] = { 0, 4096, 8192, 8, 8, 8 };
	u64 bt[6] = { 0, 4096, 8192, 2, 2, 64 };
	u64 sm[7] = { 0, 4096, 4200, 8192, 0x3f800000, 4, 8 };
	u64 div[5] = { 0, 4096, 8192, 16, 64 };

	KUNIT_ASSERT_TRUE(test, run && heap);
	/* M*N*K against max_task_macs, overflow included */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, 512, U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, 511, U64_MAX), -E2BIG);
	gemm[3] = 1ull << 32;
	gemm[4] = 1ull << 32;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, U64_MAX), -E2BIG);
	gemm[4] = 8;
	gemm[5] = 1ull << 32;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, U64_MAX), -E2BIG);
	/* the cost check comes first: a bad address over the cap is E2BIG */
	gemm[3] = 8;
	gemm[5] = 8;
	gemm[0] = HEAP;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, 511, U64_MAX), -E2BIG);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, 512, U64_MAX), -EFAULT);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 5, 0,
					     heap, HEAP, U64_MAX, U64_MAX), -EINVAL);
	gemm[0] = 0;
	/* the smallest section: N multiply-adds, or N*K with C over A */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, 8), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, 7), -E2BIG);
	gemm[1] = 0;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, 64), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6, 0,
					     heap, HEAP, U64_MAX, 63), -E2BIG);
	/* MATMUL_BT: one dot product of K */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_MATMUL_BT_F32, bt, 6, 0,
					     heap, HEAP, U64_MAX, 64), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_MATMUL_BT_F32, bt, 6, 0,
					     heap, HEAP, U64_MAX, 63), -E2BIG);
	/* a softmax row: cols * (2 + exp) */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_SOFTMAX_PREP_F32, sm, 7, 0,
					     heap, HEAP, U64_MAX, 80), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_SOFTMAX_PREP_F32, sm, 7, 0,
					     heap, HEAP, U64_MAX, 79), -E2BIG);
	/* elements: any row length */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_ROW_DIV_F32, div, 5, 0,
					     heap, HEAP, U64_MAX, 1), 0);
	KUNIT_EXPECT_EQ(test, run->units, 16 * 64);
	/* no op is run here, and no unknown one */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_SPIN_NS, gemm, 6, 0,
					     heap, HEAP, U64_MAX, U64_MAX),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_COUNT, gemm, 6, 0,
					     heap, HEAP, U64_MAX, U64_MAX),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, ~0u, gemm, 6, 0, heap, HEAP,
					     U64_MAX, U64_MAX), -EINVAL);
}

/* ---- tensor views ------------------------------------------------------- */

#define VHEAP	(64 * 1024)

/* A tensor of the view test: its contiguous copy and its strided view. */
struct pto_vt {
	u32 ndim, esize;
	u16 dtype;
	u64 shape[PTO_MAX_DIMS], stride[PTO_MAX_DIMS], count;
	u64 plain, addr, desc;	/* heap offsets */
	bool view;
};

static u64 pto_vt_alloc(u64 *top, u64 len)
{
	u64 a = ALIGN(*top, 64);

	*top = a + len;
	return a;
}

/* Heap offset of element e (row-major index) of t's view. */
static u64 pto_vt_at(const struct pto_vt *t, u64 e)
{
	u64 off = 0;
	int d;

	for (d = t->ndim - 1; d >= 0; d--) {
		off += (e % t->shape[d]) * t->stride[d];
		e /= t->shape[d];
	}
	return t->addr + off * t->esize;
}

/*
 * Place t: random contents in its contiguous copy and, for a view, the
 * same elements in a layout of its own (dimensions in any order, rows
 * padded), with its descriptor.  False when the heap is full.
 */
static bool pto_vt_make(struct rnd_state *rs, u8 *heap, u64 *top,
			struct pto_vt *t, bool view)
{
	struct pto_view_desc v = { 0 };
	u32 perm[PTO_MAX_DIMS] = { 0, 1, 2, 3 }, d, j, x, q;
	u64 i, st = 1;

	t->count = 1;
	for (d = 0; d < t->ndim; d++)
		t->count *= t->shape[d];
	t->plain = pto_vt_alloc(top, t->count * t->esize);
	for (i = 0; i < t->count * t->esize; i++)
		heap[t->plain + i] = prandom_u32_state(rs);
	if (t->dtype == PTO_DTYPE_F32)
		for (i = 0; i < t->count; i++)
			((u32 *)(heap + t->plain))[i] = 0x3c000000 +
				prandom_u32_state(rs) % 0x04000000;
	t->view = view;
	if (!view)
		return *top <= VHEAP;
	for (d = t->ndim - 1; d > 0; d--) {
		j = prandom_u32_state(rs) % (d + 1);
		x = perm[d];
		perm[d] = perm[j];
		perm[j] = x;
	}
	for (q = t->ndim; q-- > 0;) {
		t->stride[perm[q]] = st;
		st *= t->shape[perm[q]] + prandom_u32_state(rs) % 3;
	}
	t->addr = pto_vt_alloc(top, st * t->esize);
	t->desc = pto_vt_alloc(top, sizeof(v));
	if (*top > VHEAP)
		return false;
	for (i = 0; i < t->count; i++)
		memcpy(heap + pto_vt_at(t, i), heap + t->plain + i * t->esize,
		       t->esize);
	v.addr = t->addr;
	v.ndim = t->ndim;
	v.dtype = t->dtype;
	v.elem_size = t->esize;
	for (d = 0; d < PTO_MAX_DIMS; d++) {
		v.shape[d] = d < t->ndim ? t->shape[d] : 1;
		v.stride[d] = d < t->ndim ? t->stride[d] : 0;
	}
	memcpy(heap + t->desc, &v, sizeof(v));
	return true;
}

static void pto_vt_mat(struct pto_vt *t, u64 rows, u64 cols)
{
	t->ndim = 2;
	t->shape[0] = rows;
	t->shape[1] = cols;
	t->esize = 4;
	t->dtype = PTO_DTYPE_F32;
}

static void pto_vt_vec(struct pto_vt *t, u64 rows)
{
	t->ndim = 1;
	t->shape[0] = rows;
	t->esize = 4;
	t->dtype = PTO_DTYPE_F32;
}

/* The tensors and scalars of a random op with small shapes; its tensors. */
static u32 pto_vt_op(struct rnd_state *rs, u32 op, struct pto_vt *t, u64 *a)
{
	u64 m = 1 + prandom_u32_state(rs) % 9, n = 1 + prandom_u32_state(rs) % 9;
	u64 k = prandom_u32_state(rs) % 9, cnt = 1;
	u32 nd, d;

	switch (op) {
	case PTO_OP_GEMM_F32:
	case PTO_OP_MATMUL_BT_F32:
		pto_vt_mat(&t[0], m, n);
		pto_vt_mat(&t[1], m, k);
		if (op == PTO_OP_GEMM_F32)
			pto_vt_mat(&t[2], k, n);
		else
			pto_vt_mat(&t[2], n, k);
		a[3] = m;
		a[4] = n;
		a[5] = k;
		return 3;
	case PTO_OP_SOFTMAX_PREP_F32:
		pto_vt_mat(&t[0], m, n);
		pto_vt_vec(&t[1], m);
		pto_vt_vec(&t[2], m);
		pto_vt_mat(&t[3], m, n);
		a[4] = 0x3f000000;	/* 0.5f */
		a[5] = m;
		a[6] = n;
		return 4;
	case PTO_OP_ONLINE_UPDATE_F32:
		pto_vt_mat(&t[0], m, n);
		pto_vt_vec(&t[1], m);
		pto_vt_vec(&t[2], m);
		pto_vt_mat(&t[3], m, n);
		pto_vt_vec(&t[4], m);
		pto_vt_vec(&t[5], m);
		a[6] = m;
		a[7] = n;
		return 6;
	case PTO_OP_ROW_DIV_F32:
		pto_vt_mat(&t[0], m, n);
		pto_vt_mat(&t[1], m, n);
		pto_vt_vec(&t[2], m);
		a[3] = m;
		a[4] = n;
		return 3;
	}
	/* ADD_F32 or COPY: any shape of up to 4 dimensions */
	nd = 1 + prandom_u32_state(rs) % PTO_MAX_DIMS;
	for (d = 0; d < 3; d++) {
		t[d].ndim = nd;
		t[d].esize = 4;
		t[d].dtype = op == PTO_OP_COPY ? PTO_DTYPE_U32 : PTO_DTYPE_F32;
	}
	if (op == PTO_OP_COPY && prandom_u32_state(rs) & 1) {
		for (d = 0; d < 2; d++) {
			t[d].esize = 2;
			t[d].dtype = PTO_DTYPE_BF16;
		}
	}
	for (d = 0; d < nd; d++) {
		t[0].shape[d] = 1 + prandom_u32_state(rs) % 5;
		t[1].shape[d] = t[0].shape[d];
		t[2].shape[d] = t[0].shape[d];
		cnt *= t[0].shape[d];
	}
	if (op == PTO_OP_COPY) {
		a[2] = cnt * t[0].esize;
		return 2;
	}
	a[3] = cnt;
	return 3;
}

/*
 * Ops on strided views (tiles, transposes, permuted 4-D layouts, mixed
 * with plain operands) in sections of any size give the bits the op
 * gives on contiguous copies; the descriptors are overwritten once the
 * op is prepared, which must change nothing.
 */
static void pto_exec_views_match_contiguous(struct kunit *test)
{
	static const u32 ops[] = {
		PTO_OP_GEMM_F32, PTO_OP_MATMUL_BT_F32, PTO_OP_SOFTMAX_PREP_F32,
		PTO_OP_ONLINE_UPDATE_F32, PTO_OP_ROW_DIV_F32, PTO_OP_ADD_F32,
		PTO_OP_COPY,
	};
	u8 *ref = kunit_kzalloc(test, VHEAP, GFP_KERNEL);
	u8 *heap = kunit_kzalloc(test, VHEAP, GFP_KERNEL);
	struct pto_op_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	struct pto_op_mem mem = { .base = 0, .size = VHEAP, .host = ref };
	struct pto_vt t[PTO_OP_MAX_ARGS];
	u64 a[PTO_OP_MAX_ARGS], va[PTO_OP_MAX_ARGS], top, e, at, ns, budget;
	u32 op, nt, i, mask, views = 0, multi = 0, sections;
	struct rnd_state rs;
	int iter, ret;

	KUNIT_ASSERT_TRUE(test, ref && heap && run);
	prandom_seed_state(&rs, 1111);
	for (iter = 0; iter < 3000; iter++) {
		op = ops[prandom_u32_state(&rs) % ARRAY_SIZE(ops)];
		memset(t, 0, sizeof(t));
		memset(a, 0, sizeof(a));
		nt = pto_vt_op(&rs, op, t, a);
		top = 64;
		mask = 0;
		for (i = 0; i < nt; i++)
			if (!pto_vt_make(&rs, heap, &top, &t[i],
					 prandom_u32_state(&rs) & 1))
				break;
		if (i < nt)
			continue;
		memcpy(va, a, sizeof(a));
		for (i = 0; i < nt; i++) {
			a[i] = t[i].plain;
			va[i] = t[i].view ? t[i].desc : t[i].plain;
			mask |= t[i].view ? BIT(i) : 0;
		}
		views += !!mask;
		/* the reference: the op on the contiguous copies */
		memcpy(ref, heap, VHEAP);
		kernel_fpu_begin();
		ret = pto_op_exec(op, a, PTO_OP_MAX_ARGS, 0, &mem);
		kernel_fpu_end();
		KUNIT_ASSERT_EQ(test, ret, 0);
		ret = pto_op_prepare(run, op, va, PTO_OP_MAX_ARGS, mask, heap,
				     VHEAP, U64_MAX, U64_MAX);
		KUNIT_ASSERT_EQ_MSG(test, ret, 0, "op %u mask %x", op, mask);
		/* read once: what the descriptors say now does not matter */
		for (i = 0; i < nt; i++)
			if (t[i].view)
				memset(heap + t[i].desc, 0xff,
				       sizeof(struct pto_view_desc));
		sections = 0;
		while (!pto_op_done(run)) {
			/* from one unit (budget 0) to everything */
			budget = prandom_u32_state(&rs) % 4 ?
				 prandom_u32_state(&rs) % 64 : U64_MAX;
			KUNIT_ASSERT_EQ(test, pto_op_section(run, budget, &ns),
					0);
			sections++;
		}
		multi += sections > 1;
		for (i = 0; i < nt; i++) {
			for (e = 0; e < t[i].count; e++) {
				at = t[i].view ? pto_vt_at(&t[i], e) :
				     t[i].plain + e * t[i].esize;
				if (memcmp(heap + at, ref + t[i].plain +
					   e * t[i].esize, t[i].esize))
					break;
			}
			KUNIT_EXPECT_EQ_MSG(test, e, t[i].count,
					    "op %u mask %x tensor %u element %llu of %llu",
					    op, mask, i, e, t[i].count);
		}
	}
	KUNIT_EXPECT_GT(test, views, 1000);
	KUNIT_EXPECT_GT(test, multi, 500);
}

/* A bad view fails the op before it runs: -EINVAL, or -EFAULT outside. */
static void pto_exec_views_checked(struct kunit *test)
{
	u8 *heap = kunit_kzalloc(test, VHEAP, GFP_KERNEL);
	struct pto_op_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	/* GEMM 4 x 4 x 4: C, A plain, B the view at 4096 */
	u64 gemm[6] = { 0, 1024, 4096, 4, 4, 4 };
	struct pto_view_desc good = {
		.addr = 2048, .ndim = 2, .dtype = PTO_DTYPE_F32, .elem_size = 4,
		.shape = { 4, 4, 1, 1 }, .stride = { 1, 16, 0, 0 },
	}, v;
	struct pto_view_desc *d = (struct pto_view_desc *)(heap + 4096);
	int i;
	const struct {
		const char *what;
		int ret;
	} cases[] = {
		{ "good", 0 },
		{ "dtype f16", -EINVAL },
		{ "elem_size 2", -EINVAL },
		{ "ndim 0", -EINVAL },
		{ "ndim 5", -EINVAL },
		{ "ndim 1", -EINVAL },
		{ "shape 4 x 3", -EINVAL },
		{ "shape past ndim 2", -EINVAL },
		{ "span past the heap", -EFAULT },
		{ "span overflows", -EINVAL },
		{ "misaligned", -EFAULT },
		{ "empty: K = 0", 0 },
	};

	KUNIT_ASSERT_TRUE(test, heap && run);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		v = good;
		gemm[2] = 4096;
		gemm[5] = 4;
		switch (i) {
		case 1:
			v.dtype = PTO_DTYPE_F16;
			break;
		case 2:
			v.elem_size = 2;
			break;
		case 3:
			v.ndim = 0;
			break;
		case 4:
			v.ndim = 5;
			break;
		case 5:
			v.ndim = 1;
			break;
		case 6:
			v.shape[1] = 3;
			break;
		case 7:
			v.shape[2] = 2;
			break;
		case 8:
			v.stride[1] = VHEAP / 8;
			break;
		case 9:
			v.stride[1] = U64_MAX / 2;
			break;
		case 10:
			v.addr = 2050;
			break;
		case 11:
			v.shape[0] = 0;
			v.addr = U64_MAX - 3;
			gemm[5] = 0;
			break;
		}
		*d = v;
		KUNIT_EXPECT_EQ_MSG(test, pto_op_prepare(run, PTO_OP_GEMM_F32,
							 gemm, 6, BIT(2), heap,
							 VHEAP, U64_MAX,
							 U64_MAX),
				    cases[i].ret, "%s", cases[i].what);
	}
	/* the descriptor itself outside the heap, or misaligned */
	gemm[2] = VHEAP - 8;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     BIT(2), heap, VHEAP, U64_MAX,
					     U64_MAX), -EFAULT);
	gemm[2] = 4100;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     BIT(2), heap, VHEAP, U64_MAX,
					     U64_MAX), -EFAULT);
	/* a view where the op takes a scalar */
	gemm[2] = 4096;
	*d = good;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     BIT(3), heap, VHEAP, U64_MAX,
					     U64_MAX), -EINVAL);
}

static struct kunit_case pto_exec_cases[] = {
	KUNIT_CASE(pto_exec_validate_agrees),
	KUNIT_CASE(pto_exec_sections_match_whole),
	KUNIT_CASE(pto_exec_section_sizes),
	KUNIT_CASE(pto_exec_costs),
	KUNIT_CASE(pto_exec_views_match_contiguous),
	KUNIT_CASE(pto_exec_views_checked),
	{}
};

static struct kunit_suite pto_exec_suite = {
	.name = "pto_exec",
	.test_cases = pto_exec_cases,
};

kunit_test_suites(&pto_exec_suite);
