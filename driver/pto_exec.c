// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in ops in bounded sections.  The ops (ops/pto_ops.c) use floating
 * point, so each call runs between pto_fpu_begin() and pto_fpu_end()
 * (pto_compat.h), with preemption off.  A whole op may take seconds;
 * here it is cut into sections of units (elements, rows, a row's steps of
 * K) and each section is one pto_op_exec() call on a sub-range of the
 * arguments, so a core can check its deadline and yield between sections.
 *
 * Sections give the same bytes as one call of the whole op: every
 * element is computed by the same code in the same order.  GEMM is cut
 * along K only when C overlaps neither A nor B (C holds partial sums
 * between sections); a copy whose destination follows an overlapping
 * source runs its sections from the end, as memmove() would.
 *
 * The whole op is checked first (pto_op_validate(), the same checks in the
 * same order as pto_op_exec()), so a task with a bad address fails having
 * written nothing.  The KUnit suite compares both against pto_op_exec().
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

/* [addr, addr + len) inside [0, heap_size) and aligned: ops' mem_ptr() */
static bool pto_span_ok(u64 heap_size, u64 addr, u64 len, u64 align)
{
	if (addr > heap_size || len > heap_size - addr)
		return false;
	return !(addr & (align - 1));
}

static int pto_array_bytes(u64 count, u64 elem, u64 *bytes)
{
	return check_mul_overflow(count, elem, bytes) ? -EINVAL : 0;
}

static int pto_matrix_bytes(u64 rows, u64 cols, u64 *bytes)
{
	u64 n;

	if (check_mul_overflow(rows, cols, &n))
		return -EINVAL;
	return pto_array_bytes(n, 4, bytes);
}

static bool pto_overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/**
 * pto_op_validate() - pto_op_exec()'s checks of a whole op, without running it
 * @op: enum pto_op
 * @args: the task's arguments
 * @nargs: how many
 * @heap_size: bytes of device memory at device address 0
 *
 * Return: what pto_op_exec() on a heap of @heap_size would return when
 * it fails before touching memory: -EINVAL (op, argument count or values),
 * -EFAULT (an access outside the heap or misaligned), else 0.
 */
int pto_op_validate(u32 op, const u64 *args, u32 nargs, u64 heap_size)
{
	const u64 *a = args;
	u64 mb, vb, bytes, n;
	bool bt;

	if (op >= PTO_OP_COUNT || nargs < (u32)pto_op_nargs(op))
		return -EINVAL;
	switch (op) {
	case PTO_OP_NOP:
		return 0;
	case PTO_OP_COPY:
		return pto_span_ok(heap_size, a[0], a[2], 1) &&
		       pto_span_ok(heap_size, a[1], a[2], 1) ? 0 : -EFAULT;
	case PTO_OP_FILL_U32:
		if (a[2] % 4)
			return -EINVAL;
		return pto_span_ok(heap_size, a[0], a[2], 4) ? 0 : -EFAULT;
	case PTO_OP_ADD_F32:
	case PTO_OP_MUL_F32:
	case PTO_OP_ADD_U32:
		if (op == PTO_OP_ADD_U32) {
			if (a[3] % 4)
				return -EINVAL;
			n = a[3] / 4;
		} else {
			n = a[3];
		}
		if (pto_array_bytes(n, 4, &bytes))
			return -EINVAL;
		return pto_span_ok(heap_size, a[0], bytes, 4) &&
		       pto_span_ok(heap_size, a[1], bytes, 4) &&
		       pto_span_ok(heap_size, a[2], bytes, 4) ? 0 : -EFAULT;
	case PTO_OP_GEMM_F32:
	case PTO_OP_MATMUL_BT_F32: {
		u64 cb, ab, bb;

		bt = op == PTO_OP_MATMUL_BT_F32;
		if (pto_matrix_bytes(a[3], a[4], &cb) ||
		    pto_matrix_bytes(a[3], a[5], &ab) ||
		    pto_matrix_bytes(bt ? a[4] : a[5], bt ? a[5] : a[4], &bb))
			return -EINVAL;
		return pto_span_ok(heap_size, a[0], cb, 4) &&
		       pto_span_ok(heap_size, a[1], ab, 4) &&
		       pto_span_ok(heap_size, a[2], bb, 4) ? 0 : -EFAULT;
	}
	case PTO_OP_SOFTMAX_PREP_F32:
		if (pto_matrix_bytes(a[5], a[6], &mb) ||
		    pto_array_bytes(a[5], 4, &vb) || !a[6])
			return -EINVAL;
		return pto_span_ok(heap_size, a[0], mb, 4) &&
		       pto_span_ok(heap_size, a[1], vb, 4) &&
		       pto_span_ok(heap_size, a[2], vb, 4) &&
		       pto_span_ok(heap_size, a[3], mb, 4) ? 0 : -EFAULT;
	case PTO_OP_ONLINE_UPDATE_F32:
		if (pto_matrix_bytes(a[6], a[7], &mb) ||
		    pto_array_bytes(a[6], 4, &vb))
			return -EINVAL;
		return pto_span_ok(heap_size, a[0], mb, 4) &&
		       pto_span_ok(heap_size, a[1], vb, 4) &&
		       pto_span_ok(heap_size, a[2], vb, 4) &&
		       pto_span_ok(heap_size, a[3], mb, 4) &&
		       pto_span_ok(heap_size, a[4], vb, 4) &&
		       pto_span_ok(heap_size, a[5], vb, 4) ? 0 : -EFAULT;
	case PTO_OP_ROW_DIV_F32:
		if (pto_matrix_bytes(a[3], a[4], &mb) ||
		    pto_array_bytes(a[3], 4, &vb))
			return -EINVAL;
		return pto_span_ok(heap_size, a[0], mb, 4) &&
		       pto_span_ok(heap_size, a[1], mb, 4) &&
		       pto_span_ok(heap_size, a[2], vb, 4) ? 0 : -EFAULT;
	default:
		/* PTO_OP_SPIN_NS is timed by the backend, not run here */
		return -EINVAL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(pto_op_validate);

/* Units and their cost; the caller validated the op. */
static void pto_op_plan(struct pto_op_run *run)
{
	const u64 *a = run->args;
	u64 m, n, k;

	run->mode = PTO_EXEC_NONE;
	run->units = 0;
	run->unit_cost = 1;
	switch (run->op) {
	case PTO_OP_COPY:
		run->units = DIV_ROUND_UP_ULL(a[2], PTO_COPY_BLOCK);
		run->unit_cost = PTO_COPY_BLOCK / 4;
		/* the destination follows an overlapping source: memmove */
		run->mode = a[0] > a[1] && a[0] < a[1] + a[2] ?
			    PTO_EXEC_COPY_BACK : PTO_EXEC_COPY;
		break;
	case PTO_OP_FILL_U32:
		run->units = a[2] / 4;
		run->mode = PTO_EXEC_LINEAR;
		break;
	case PTO_OP_ADD_F32:
	case PTO_OP_MUL_F32:
		run->units = a[3];
		run->mode = PTO_EXEC_LINEAR;
		break;
	case PTO_OP_ADD_U32:
		run->units = a[3] / 4;
		run->mode = PTO_EXEC_LINEAR;
		break;
	case PTO_OP_GEMM_F32:
		m = a[3];
		n = a[4];
		k = a[5];
		/* C = C + A * B: nothing changes without rows, columns or K */
		if (!m || !n || !k)
			break;
		if (pto_overlap(a[0], m * n * 4, a[1], m * k * 4) ||
		    pto_overlap(a[0], m * n * 4, a[2], k * n * 4)) {
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
 * pto_op_prepare() - check an op and plan its sections
 * @run: filled in
 * @op: enum pto_op (not PTO_OP_SPIN_NS)
 * @args: the task's arguments
 * @nargs: how many, at most PTO_MAX_ARGS
 * @heap_size: bytes of device memory
 * @max_task_macs: largest M*N*K of a GEMM or MATMUL_BT
 * @max_section_cost: largest cost of one unit, the smallest section
 *
 * Return: 0; -E2BIG for a matrix op beyond @max_task_macs (checked first,
 * as before any other check) or an op whose smallest section would cost
 * more than @max_section_cost; else what pto_op_validate() says.
 */
int pto_op_prepare(struct pto_op_run *run, u32 op, const u64 *args,
		   u32 nargs, u64 heap_size, u64 max_task_macs,
		   u64 max_section_cost)
{
	u64 mn, mnk;
	int ret;

	memset(run, 0, sizeof(*run));
	run->op = op;
	run->nargs = min_t(u32, nargs, PTO_MAX_ARGS);
	memcpy(run->args, args, run->nargs * sizeof(u64));
	if (op == PTO_OP_GEMM_F32 || op == PTO_OP_MATMUL_BT_F32) {
		if (run->nargs < 6)
			return -EINVAL;
		if (check_mul_overflow(args[3], args[4], &mn) ||
		    check_mul_overflow(mn, args[5], &mnk) ||
		    mnk > max_task_macs)
			return -E2BIG;
	}
	ret = pto_op_validate(op, run->args, run->nargs, heap_size);
	if (ret)
		return ret;
	pto_op_plan(run);
	if (run->units && run->unit_cost > max_section_cost)
		return -E2BIG;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_op_prepare);

/*
 * The arguments of the section of at most *k units at run->pos; *k is set
 * to the units it covers.
 */
static void pto_op_section_args(const struct pto_op_run *run, u64 *s, u64 *k)
{
	const u64 *a = run->args;
	u64 p = run->pos, i, j0, j1, rows, off, len, end;

	memcpy(s, a, sizeof(run->args));
	switch (run->mode) {
	case PTO_EXEC_LINEAR:
		s[0] = a[0] + 4 * p;
		if (run->op == PTO_OP_FILL_U32) {
			s[2] = 4 * *k;
			break;
		}
		s[1] = a[1] + 4 * p;
		s[2] = a[2] + 4 * p;
		s[3] = run->op == PTO_OP_ADD_U32 ? 4 * *k : *k;
		break;
	case PTO_EXEC_COPY:
		off = p * PTO_COPY_BLOCK;
		len = min_t(u64, *k * PTO_COPY_BLOCK, a[2] - off);
		s[0] = a[0] + off;
		s[1] = a[1] + off;
		s[2] = len;
		break;
	case PTO_EXEC_COPY_BACK:
		end = a[2] - p * PTO_COPY_BLOCK;
		len = min_t(u64, *k * PTO_COPY_BLOCK, end);
		s[0] = a[0] + end - len;
		s[1] = a[1] + end - len;
		s[2] = len;
		break;
	case PTO_EXEC_GEMM_K:
		/* C, A, B, M, N, K: unit p is row p / K, step p % K */
		i = div64_u64_rem(p, a[5], &j0);
		if (!j0 && *k >= a[5]) {
			rows = min(div64_u64(*k, a[5]), a[3] - i);
			s[0] = a[0] + i * a[4] * 4;
			s[1] = a[1] + i * a[5] * 4;
			s[3] = rows;
			*k = rows * a[5];
			break;
		}
		j1 = min(j0 + *k, a[5]);
		s[0] = a[0] + i * a[4] * 4;
		s[1] = a[1] + (i * a[5] + j0) * 4;
		s[2] = a[2] + j0 * a[4] * 4;
		s[3] = 1;
		s[5] = j1 - j0;
		*k = j1 - j0;
		break;
	case PTO_EXEC_GEMM_ROWS:
		s[0] = a[0] + p * a[4] * 4;
		s[1] = a[1] + p * a[5] * 4;
		s[3] = *k;
		break;
	case PTO_EXEC_MATMUL_BT:
		/* C, A, B, M, N, K: unit p is row p / N, column p % N */
		i = div64_u64_rem(p, a[4], &j0);
		if (!j0 && *k >= a[4]) {
			rows = min(div64_u64(*k, a[4]), a[3] - i);
			s[0] = a[0] + i * a[4] * 4;
			s[1] = a[1] + i * a[5] * 4;
			s[3] = rows;
			*k = rows * a[4];
			break;
		}
		j1 = min(j0 + *k, a[4]);
		s[0] = a[0] + (i * a[4] + j0) * 4;
		s[1] = a[1] + i * a[5] * 4;
		s[2] = a[2] + j0 * a[5] * 4;
		s[3] = 1;
		s[4] = j1 - j0;
		*k = j1 - j0;
		break;
	case PTO_EXEC_ROWS:
		if (run->op == PTO_OP_SOFTMAX_PREP_F32) {
			/* P, m, l, S, scale, rows, cols */
			s[0] = a[0] + p * a[6] * 4;
			s[1] = a[1] + p * 4;
			s[2] = a[2] + p * 4;
			s[3] = a[3] + p * a[6] * 4;
			s[5] = *k;
		} else {
			/* O, l, m, O_new, l_new, m_new, rows, cols */
			s[0] = a[0] + p * a[7] * 4;
			s[1] = a[1] + p * 4;
			s[2] = a[2] + p * 4;
			s[3] = a[3] + p * a[7] * 4;
			s[4] = a[4] + p * 4;
			s[5] = a[5] + p * 4;
			s[6] = *k;
		}
		break;
	case PTO_EXEC_ROW_DIV:
		/* dst, O, l, rows, cols: unit p is row p / cols, column p % cols */
		i = div64_u64_rem(p, a[4], &j0);
		if (!j0 && *k >= a[4]) {
			rows = min(div64_u64(*k, a[4]), a[3] - i);
			s[0] = a[0] + i * a[4] * 4;
			s[1] = a[1] + i * a[4] * 4;
			s[2] = a[2] + i * 4;
			s[3] = rows;
			*k = rows * a[4];
			break;
		}
		j1 = min(j0 + *k, a[4]);
		s[0] = a[0] + (i * a[4] + j0) * 4;
		s[1] = a[1] + (i * a[4] + j0) * 4;
		s[2] = a[2] + i * 4;
		s[3] = 1;
		s[4] = j1 - j0;
		*k = j1 - j0;
		break;
	}
}

/**
 * pto_op_section() - run the next section of an op
 * @run: prepared by pto_op_prepare(), not done
 * @heap: the heap's kernel mapping
 * @heap_size: its size, as given to pto_op_prepare()
 * @budget: cost the section may take; at least one unit always runs
 * @ns: set to how long the section ran with preemption off
 *
 * Runs the section between pto_fpu_begin() and pto_fpu_end().
 *
 * Context: process context; preemption is off while the section runs.
 * Return: 0, or the error of pto_op_exec(), which cannot happen for an op
 * pto_op_prepare() accepted.
 */
int pto_op_section(struct pto_op_run *run, u8 *heap, u64 heap_size,
		   u64 budget, u64 *ns)
{
	struct pto_op_mem mem = { .base = 0, .size = heap_size, .host = heap };
	u64 sub[PTO_MAX_ARGS], k, t0;
	int ret;

	*ns = 0;
	if (pto_op_done(run))
		return 0;
	k = max_t(u64, div64_u64(budget, run->unit_cost), 1);
	k = min(k, run->units - run->pos);
	pto_op_section_args(run, sub, &k);
	t0 = ktime_get_ns();
	pto_fpu_begin();
	ret = pto_op_exec(run->op, sub, run->nargs, &mem);
	pto_fpu_end();
	*ns = ktime_get_ns() - t0;
	run->pos += k;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(pto_op_section);
