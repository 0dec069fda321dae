// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in ops in bounded sections.  The ops (ops/pto_ops.c) use floating
 * point, so each call runs between pto_fpu_begin() and pto_fpu_end()
 * (pto_compat.h), with preemption off.  A whole op may take seconds;
 * here it is cut into sections of units (elements, rows, a row's steps of
 * K) and each section is one pto_op_run() of a part of the op, so a core
 * can check its deadline and yield between sections.
 *
 * The whole op is checked and its operands resolved first, once
 * (pto_op_resolve(), the code pto_op_exec() runs): every tensor view's
 * descriptor is read out of the heap into the kernel's copy there, never
 * again, and a task with a bad argument, view or address fails having
 * written nothing.  A section is that resolved call narrowed: its tensors
 * moved on along their own strides to the section's first row, column or
 * step of K (pto_op_tensor_skip()), its lengths cut to the section's, so
 * strided operands are cut like contiguous ones.
 *
 * Sections give the same bytes as one call of the whole op: every
 * element is computed by the same code in the same order.  GEMM is cut
 * along K only when the span of C meets neither A's nor B's (C holds
 * partial sums between sections); a plain copy whose destination follows
 * an overlapping source runs its sections from the end, as memmove()
 * would.  The KUnit suite compares sections against pto_op_exec().
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "pto_compat.h"
#include "pto_drv.h"
#include "pto_ops.h"

enum pto_exec_mode {
	PTO_EXEC_NONE,		/* nothing to run */
	PTO_EXEC_LINEAR,	/* 4-byte elements: fill, add, mul, add_u32 */
	PTO_EXEC_COPY,		/* 64-byte blocks, from the start */
	PTO_EXEC_COPY_BACK,	/* 64-byte blocks, from the end */
	PTO_EXEC_GEMM_K,	/* GEMM (row, k) steps of N multiply-adds */
	PTO_EXEC_GEMM_ROWS,	/* GEMM rows: C overlaps A or B */
	PTO_EXEC_MATMUL_BT,	/* (row, column) dot products of K */
	PTO_EXEC_ROWS,		/* rows: softmax_prep, online_update */
	PTO_EXEC_ROW_DIV,	/* (row, column) elements */
};

#define PTO_COPY_BLOCK	64
/* what an exp costs, in multiply-adds, for the softmax ops' cost */
#define PTO_EXP_COST	8

static bool pto_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/* Units and their cost; the caller resolved the op. */
static void pto_op_plan(struct pto_op_run *run)
{
	const struct pto_op_call *c = &run->call;
	const struct pto_op_tensor *t = c->t;
	const u64 *a = c->arg;
	u64 m, n, k;

	run->mode = PTO_EXEC_NONE;
	run->units = 0;
	run->unit_cost = 1;
	switch (run->op) {
	case PTO_OP_COPY:
		if (c->views) {
			/* element by element, in order: any cut will do */
			run->units = c->count;
			run->mode = PTO_EXEC_LINEAR;
			break;
		}
		run->units = DIV_ROUND_UP_ULL(c->count, PTO_COPY_BLOCK);
		run->unit_cost = PTO_COPY_BLOCK / 4;
		/* the destination follows an overlapping source: memmove */
		run->mode = t[0].addr > t[1].addr &&
			    t[0].addr < t[1].addr + c->count ?
			    PTO_EXEC_COPY_BACK : PTO_EXEC_COPY;
		break;
	case PTO_OP_FILL_U32:
	case PTO_OP_ADD_F32:
	case PTO_OP_MUL_F32:
	case PTO_OP_ADD_U32:
		run->units = c->count;
		run->mode = PTO_EXEC_LINEAR;
		break;
	case PTO_OP_GEMM_F32:
		m = a[3];
		n = a[4];
		k = a[5];
		/* C = C + A * B: nothing changes without rows, columns or K */
		if (!m || !n || !k)
			break;
		if (pto_overlap(t[0].addr, t[0].bytes, t[1].addr, t[1].bytes) ||
		    pto_overlap(t[0].addr, t[0].bytes, t[2].addr, t[2].bytes)) {
			run->mode = PTO_EXEC_GEMM_ROWS;
			run->units = m;
			run->unit_cost = n * k;
		} else {
			run->mode = PTO_EXEC_GEMM_K;
			run->units = m * k;
			run->unit_cost = n;
		}
		break;
	case PTO_OP_MATMUL_BT_F32:
		run->mode = PTO_EXEC_MATMUL_BT;
		run->units = a[3] * a[4];
		run->unit_cost = max_t(u64, a[5], 1);
		break;
	case PTO_OP_SOFTMAX_PREP_F32:
		run->mode = PTO_EXEC_ROWS;
		run->units = a[5];
		run->unit_cost = a[6] * (2 + PTO_EXP_COST);
		break;
	case PTO_OP_ONLINE_UPDATE_F32:
		run->mode = PTO_EXEC_ROWS;
		run->units = a[6];
		run->unit_cost = a[7] * 2 + 2 * PTO_EXP_COST;
		break;
	case PTO_OP_ROW_DIV_F32:
		run->mode = PTO_EXEC_ROW_DIV;
		run->units = a[3] * a[4];
		break;
	}
	if (!run->units)
		run->mode = PTO_EXEC_NONE;
}

/**
 * pto_op_prepare() - check an op, read its views and plan its sections
 * @run: filled in
 * @op: enum pto_op (not PTO_OP_SPIN_NS)
 * @args: the task's arguments, a kernel copy
 * @nargs: how many, at most PTO_MAX_ARGS
 * @view_mask: the arguments that are tensor views (the caller checked the
 *	task may have them), 0 for none
 * @heap: the heap's kernel mapping, where view descriptors are read
 * @heap_size: bytes of device memory
 * @max_task_macs: largest M*N*K of a GEMM or MATMUL_BT
 * @max_section_cost: largest cost of one unit, the smallest section
 *
 * Context: process context; preemption is off while the views are read
 * (pto_fpu_begin(): the ops' object is built with the FPU).
 * Return: 0; -E2BIG for a matrix op beyond @max_task_macs (checked first,
 * as before any other check) or an op whose smallest section would cost
 * more than @max_section_cost; else what pto_op_exec() would return
 * without touching memory: -EINVAL (op, argument count or values, a
 * view), -EFAULT (a view descriptor or an operand outside the heap, or
 * misaligned).
 */
int pto_op_prepare(struct pto_op_run *run, u32 op, const u64 *args,
		   u32 nargs, u32 view_mask, u8 *heap, u64 heap_size,
		   u64 max_task_macs, u64 max_section_cost)
{
	struct pto_op_mem mem = { .base = 0, .size = heap_size, .host = heap };
	u64 mn, mnk;
	int ret;

	memset(run, 0, sizeof(*run));
	run->op = op;
	run->nargs = min_t(u32, nargs, PTO_MAX_ARGS);
	if (op >= PTO_OP_COUNT || op == PTO_OP_SPIN_NS ||
	    run->nargs < (u32)pto_op_nargs(op))
		return -EINVAL;
	if (op == PTO_OP_GEMM_F32 || op == PTO_OP_MATMUL_BT_F32) {
		if (check_mul_overflow(args[3], args[4], &mn) ||
		    check_mul_overflow(mn, args[5], &mnk) ||
		    mnk > max_task_macs)
			return -E2BIG;
	}
	pto_fpu_begin();
	ret = pto_op_resolve(&run->call, op, args, run->nargs, view_mask,
			     &mem);
	pto_fpu_end();
	if (ret)
		return ret;
	pto_op_plan(run);
	if (run->units && run->unit_cost > max_section_cost)
		return -E2BIG;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_op_prepare);

/*
 * The section of at most *k units at run->pos, as a narrowed copy of the
 * resolved call; *k is set to the units it covers.
 */
static void pto_op_section_call(const struct pto_op_run *run,
				struct pto_op_call *s, u64 *k)
{
	const u64 *a = run->call.arg;
	struct pto_op_tensor *t = s->t;
	u64 p = run->pos, i, j0, j1, rows, off, len, end;
	u32 x;

	*s = run->call;
	switch (run->mode) {
	case PTO_EXEC_LINEAR:
		s->first = p;
		s->count = *k;
		break;
	case PTO_EXEC_COPY:
		off = p * PTO_COPY_BLOCK;
		len = min_t(u64, *k * PTO_COPY_BLOCK, run->call.count - off);
		s->first = off;
		s->count = len;
		break;
	case PTO_EXEC_COPY_BACK:
		end = run->call.count - p * PTO_COPY_BLOCK;
		len = min_t(u64, *k * PTO_COPY_BLOCK, end);
		s->first = end - len;
		s->count = len;
		break;
	case PTO_EXEC_GEMM_K:
		/* C, A, B, M, N, K: unit p is row p / K, step p % K */
		i = div64_u64_rem(p, a[5], &j0);
		pto_op_tensor_skip(&t[0], 0, i);
		pto_op_tensor_skip(&t[1], 0, i);
		if (!j0 && *k >= a[5]) {
			rows = min(div64_u64(*k, a[5]), a[3] - i);
			s->arg[3] = rows;
			*k = rows * a[5];
			break;
		}
		j1 = min(j0 + *k, a[5]);
		pto_op_tensor_skip(&t[1], 1, j0);
		pto_op_tensor_skip(&t[2], 0, j0);
		s->arg[3] = 1;
		s->arg[5] = j1 - j0;
		*k = j1 - j0;
		break;
	case PTO_EXEC_GEMM_ROWS:
		pto_op_tensor_skip(&t[0], 0, p);
		pto_op_tensor_skip(&t[1], 0, p);
		s->arg[3] = *k;
		break;
	case PTO_EXEC_MATMUL_BT:
		/* C, A, B, M, N, K: unit p is row p / N, column p % N */
		i = div64_u64_rem(p, a[4], &j0);
		pto_op_tensor_skip(&t[0], 0, i);
		pto_op_tensor_skip(&t[1], 0, i);
		if (!j0 && *k >= a[4]) {
			rows = min(div64_u64(*k, a[4]), a[3] - i);
			s->arg[3] = rows;
			*k = rows * a[4];
			break;
		}
		j1 = min(j0 + *k, a[4]);
		pto_op_tensor_skip(&t[0], 1, j0);
		pto_op_tensor_skip(&t[2], 0, j0);
		s->arg[3] = 1;
		s->arg[4] = j1 - j0;
		*k = j1 - j0;
		break;
	case PTO_EXEC_ROWS:
		/*
		 * softmax_prep: P, m, l, S, scale, rows, cols;
		 * online_update: O, l, m, O_new, l_new, m_new, rows, cols:
		 * every tensor moves on by rows, the row count is cut
		 */
		x = run->op == PTO_OP_SOFTMAX_PREP_F32 ? 4 : 6;
		while (x--)
			pto_op_tensor_skip(&t[x], 0, p);
		s->arg[run->op == PTO_OP_SOFTMAX_PREP_F32 ? 5 : 6] = *k;
		break;
	case PTO_EXEC_ROW_DIV:
		/* dst, O, l, rows, cols: unit p is row p / cols, column p % cols */
		i = div64_u64_rem(p, a[4], &j0);
		for (x = 0; x < 3; x++)
			pto_op_tensor_skip(&t[x], 0, i);
		if (!j0 && *k >= a[4]) {
			rows = min(div64_u64(*k, a[4]), a[3] - i);
			s->arg[3] = rows;
			*k = rows * a[4];
			break;
		}
		j1 = min(j0 + *k, a[4]);
		pto_op_tensor_skip(&t[0], 1, j0);
		pto_op_tensor_skip(&t[1], 1, j0);
		s->arg[3] = 1;
		s->arg[4] = j1 - j0;
		*k = j1 - j0;
		break;
	}
}

/**
 * pto_op_section() - run the next section of an op
 * @run: prepared by pto_op_prepare(), not done
 * @budget: cost the section may take; at least one unit always runs
 * @ns: set to how long the section ran with preemption off
 *
 * Runs the section between pto_fpu_begin() and pto_fpu_end(), on the
 * operands pto_op_prepare() resolved (in the heap it was given).
 *
 * Context: process context; preemption is off while the section runs.
 * Return: 0.
 */
int pto_op_section(struct pto_op_run *run, u64 budget, u64 *ns)
{
	struct pto_op_call sub;
	u64 k, t0;

	*ns = 0;
	if (pto_op_done(run))
		return 0;
	k = max_t(u64, div64_u64(budget, run->unit_cost), 1);
	k = min(k, run->units - run->pos);
	pto_op_section_call(run, &sub, &k);
	t0 = ktime_get_ns();
	pto_fpu_begin();
	pto_op_run(&sub);
	pto_fpu_end();
	*ns = ktime_get_ns() - t0;
	run->pos += k;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_op_section);
