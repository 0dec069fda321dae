// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the ops' bounds and cost checks and their sections (pto_exec.c).
 * pto_op_validate() must say what pto_op_exec() says for any arguments;
 * an op run in sections of any size must leave the same bytes as one
 * pto_op_exec() of the whole op, overlapping buffers included.  The
 * reference is this module's own copy of ops/pto_ops.c.
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
	ret = pto_op_exec(op, args, nargs, &mem);
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
	u64 args[PTO_MAX_ARGS];
	struct rnd_state rs;
	int iter, i, want, got, valid = 0;
	u32 op, nargs;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, heap);
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
		got = pto_op_validate(op, args, nargs, HEAP);
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
		ret = pto_op_prepare(run, op, args, nargs, HEAP, U64_MAX,
				     U64_MAX);
		KUNIT_ASSERT_EQ_MSG(test, ret, 0, "op %u", op);
		sections = 0;
		while (!pto_op_done(run)) {
			/* from one unit (budget 0) to everything */
			budget = prandom_u32_state(&rs) % 4 ?
				 prandom_u32_state(&rs) % 300 : U64_MAX;
			KUNIT_ASSERT_EQ(test, pto_op_section(run, cut, HEAP, budget,
							     &ns), 0);
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
	KUNIT_ASSERT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, run->units, 15);
	KUNIT_EXPECT_EQ(test, run->unit_cost, 4);
	while (!pto_op_done(run)) {
		KUNIT_ASSERT_EQ(test, pto_op_section(run, heap, HEAP, 0, &ns), 0);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 15);
	/* a budget of 2.5 units: two per section, rows never straddled */
	KUNIT_ASSERT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, U64_MAX), 0);
	n = 0;
	while (!pto_op_done(run)) {
		u64 pos = run->pos;

		KUNIT_ASSERT_EQ(test, pto_op_section(run, heap, HEAP, 10, &ns), 0);
		KUNIT_EXPECT_LE(test, run->pos - pos, 2);
		KUNIT_EXPECT_EQ(test, pos / 5, (run->pos - 1) / 5);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 9);	/* 2 + 2 + 1 per row */
	/* C over A: whole rows of 20 MACs */
	gemm[1] = 0;
	KUNIT_ASSERT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, run->units, 3);
	KUNIT_EXPECT_EQ(test, run->unit_cost, 20);
	/* nothing to run without rows, columns or K */
	gemm[5] = 0;
	KUNIT_ASSERT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, U64_MAX), 0);
	KUNIT_EXPECT_TRUE(test, pto_op_done(run));
}

/* max_task_macs, then the checks, then max_section_cost. */
static void pto_exec_costs(struct kunit *test)
{
	struct pto_op_run *run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	u64 gemm[6] = { 0, 4096, 8192, 8, 8, 8 };
	u64 bt[6] = { 0, 4096, 8192, 2, 2, 64 };
	u64 sm[7] = { 0, 4096, 4200, 8192, 0x3f800000, 4, 8 };
	u64 div[5] = { 0, 4096, 8192, 16, 64 };

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, run);
	/* M*N*K against max_task_macs, overflow included */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, 512, U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, 511, U64_MAX), -E2BIG);
	gemm[3] = 1ull << 32;
	gemm[4] = 1ull << 32;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, U64_MAX), -E2BIG);
	gemm[4] = 8;
	gemm[5] = 1ull << 32;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, U64_MAX), -E2BIG);
	/* the cost check comes first: a bad address over the cap is E2BIG */
	gemm[3] = 8;
	gemm[5] = 8;
	gemm[0] = HEAP;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, 511, U64_MAX), -E2BIG);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, 512, U64_MAX), -EFAULT);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 5,
					     HEAP, U64_MAX, U64_MAX), -EINVAL);
	gemm[0] = 0;
	/* the smallest section: N multiply-adds, or N*K with C over A */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, 8), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, 7), -E2BIG);
	gemm[1] = 0;
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, 64), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_GEMM_F32, gemm, 6,
					     HEAP, U64_MAX, 63), -E2BIG);
	/* MATMUL_BT: one dot product of K */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_MATMUL_BT_F32, bt, 6,
					     HEAP, U64_MAX, 64), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_MATMUL_BT_F32, bt, 6,
					     HEAP, U64_MAX, 63), -E2BIG);
	/* a softmax row: cols * (2 + exp) */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_SOFTMAX_PREP_F32, sm, 7,
					     HEAP, U64_MAX, 80), 0);
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_SOFTMAX_PREP_F32, sm, 7,
					     HEAP, U64_MAX, 79), -E2BIG);
	/* elements: any row length */
	KUNIT_EXPECT_EQ(test, pto_op_prepare(run, PTO_OP_ROW_DIV_F32, div, 5,
					     HEAP, U64_MAX, 1), 0);
	KUNIT_EXPECT_EQ(test, run->units, 16 * 64);
	/* no op is run here, and no unknown one */
	KUNIT_EXPECT_EQ(test, pto_op_validate(PTO_OP_SPIN_NS, gemm, 6, HEAP),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pto_op_validate(PTO_OP_COUNT, gemm, 6, HEAP),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pto_op_validate(~0u, gemm, 6, HEAP), -EINVAL);
}

static struct kunit_case pto_exec_cases[] = {
	KUNIT_CASE(pto_exec_validate_agrees),
	KUNIT_CASE(pto_exec_sections_match_whole),
	KUNIT_CASE(pto_exec_section_sizes),
	KUNIT_CASE(pto_exec_costs),
	{}
};

static struct kunit_suite pto_exec_suite = {
	.name = "pto_exec",
	.test_cases = pto_exec_cases,
};

kunit_test_suites(&pto_exec_suite);
