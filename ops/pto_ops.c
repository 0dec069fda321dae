// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Built-in ops, shared by the simulator and pto.ko.  See pto_ops.h.
 *
 * Every op first checks its argument count and that each tensor it touches
 * lies inside the context's device memory, then runs a fixed-order loop, so
 * a task with a bad address fails with -EFAULT having written nothing.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/string.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#endif

#include <pto/pto_uapi.h>
#include "pto_ops.h"

/* Names and argument counts, one row per op. */
static const char *const op_names[PTO_OP_COUNT] = {
	[PTO_OP_NOP] = "nop",
	[PTO_OP_COPY] = "copy",
	[PTO_OP_FILL_U32] = "fill_u32",
	[PTO_OP_ADD_F32] = "add_f32",
	[PTO_OP_MUL_F32] = "mul_f32",
	[PTO_OP_GEMM_F32] = "gemm_f32",
	[PTO_OP_MATMUL_BT_F32] = "matmul_bt_f32",
	[PTO_OP_SOFTMAX_PREP_F32] = "softmax_prep_f32",
	[PTO_OP_ONLINE_UPDATE_F32] = "online_update_f32",
	[PTO_OP_ROW_DIV_F32] = "row_div_f32",
	[PTO_OP_ADD_U32] = "add_u32",
	[PTO_OP_SPIN_NS] = "spin_ns",
};

static const signed char op_nargs[PTO_OP_COUNT] = {
	[PTO_OP_NOP] = 0,
	[PTO_OP_COPY] = 3,
	[PTO_OP_FILL_U32] = 3,
	[PTO_OP_ADD_F32] = 4,
	[PTO_OP_MUL_F32] = 4,
	[PTO_OP_GEMM_F32] = 6,
	[PTO_OP_MATMUL_BT_F32] = 6,
	[PTO_OP_SOFTMAX_PREP_F32] = 7,
	[PTO_OP_ONLINE_UPDATE_F32] = 8,
	[PTO_OP_ROW_DIV_F32] = 5,
	[PTO_OP_ADD_U32] = 4,
	[PTO_OP_SPIN_NS] = 1,
};

const char *pto_op_name(u32 op)
{
	return op < PTO_OP_COUNT ? op_names[op] : (const char *)0;
}

int pto_op_nargs(u32 op)
{
	return op < PTO_OP_COUNT ? op_nargs[op] : -1;
}

/* Host pointer for [addr, addr + len) if it lies inside mem, else NULL. */
static void *mem_ptr(const struct pto_op_mem *mem, u64 addr, u64 len,
		     u64 align)
{
	u64 off = addr - mem->base;

	if (addr < mem->base || off > mem->size || len > mem->size - off)
		return NULL;
	if (addr & (align - 1))
		return NULL;
	/* integer arithmetic: the sim's host base is NULL (identity map) */
	return (void *)((unsigned long)mem->host + off);
}

/* Bytes of an array of count elements of elem bytes; 0 on overflow. */
static int array_bytes(u64 count, u64 elem, u64 *bytes)
{
	return __builtin_mul_overflow(count, elem, bytes) ? -EINVAL : 0;
}

static int matrix_bytes(u64 rows, u64 cols, u64 *bytes)
{
	u64 n;

	if (__builtin_mul_overflow(rows, cols, &n))
		return -EINVAL;
	return array_bytes(n, sizeof(float), bytes);
}

static float f32_from_bits(u32 u)
{
	union { u32 u; float f; } c = { .u = u };

	return c.f;
}

/* 2^n for -126 <= n <= 127 */
static float pow2i(int n)
{
	return f32_from_bits((u32)(n + 127) << 23);
}

/*
 * e^x: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two for an exact
 * product), e^r by its degree-6 Taylor polynomial in Horner form, scaled
 * by 2^n.  Accurate to a few ulp; what matters here is that it is the same
 * bit pattern everywhere.
 */
float pto_op_expf(float x)
{
	const float ln2_hi = 0.693145751953125f;
	const float ln2_lo = 0.000001428606765330187f;
	const float log2e = 1.44269504088896341f;
	float r, p, fn;
	int n;

	if (x != x)
		return x;
	if (x > 88.72283905206835f)
		return f32_from_bits(0x7f800000u);	/* +inf */
	if (x < -103.972077083991796f)
		return 0.0f;

	fn = x * log2e;
	n = (int)(fn + (fn >= 0.0f ? 0.5f : -0.5f));
	fn = (float)n;
	r = x - fn * ln2_hi;
	r = r - fn * ln2_lo;

	p = 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;

	if (n > 127)
		return p * pow2i(127) * pow2i(n - 127);
	if (n < -126)
		return p * pow2i(n + 64) * pow2i(-64);
	return p * pow2i(n);
}

static int op_copy(const u64 *a, const struct pto_op_mem *mem)
{
	void *dst = mem_ptr(mem, a[0], a[2], 1);
	void *src = mem_ptr(mem, a[1], a[2], 1);

	if (!dst || !src)
		return -EFAULT;
	memmove(dst, src, a[2]);
	return 0;
}

static int op_fill_u32(const u64 *a, const struct pto_op_mem *mem)
{
	u32 *dst = mem_ptr(mem, a[0], a[2], 4);
	u64 i;

	if (a[2] % 4)
		return -EINVAL;
	if (!dst)
		return -EFAULT;
	for (i = 0; i < a[2] / 4; i++)
		dst[i] = (u32)a[1];
	return 0;
}

/* dst, a, b, n over 32-bit elements: the shared checks of binary ops */
static int binary_ptrs(const u64 *a, const struct pto_op_mem *mem,
		       u64 count, void **d, void **x, void **y)
{
	u64 bytes;

	if (array_bytes(count, 4, &bytes))
		return -EINVAL;
	*d = mem_ptr(mem, a[0], bytes, 4);
	*x = mem_ptr(mem, a[1], bytes, 4);
	*y = mem_ptr(mem, a[2], bytes, 4);
	return (*d && *x && *y) ? 0 : -EFAULT;
}

static int op_binary_f32(u32 op, const u64 *a, const struct pto_op_mem *mem)
{
	float *d, *x, *y;
	u64 i, n = a[3];
	int ret;

	ret = binary_ptrs(a, mem, n, (void **)&d, (void **)&x, (void **)&y);
	if (ret)
		return ret;
	if (op == PTO_OP_ADD_F32) {
		for (i = 0; i < n; i++)
			d[i] = x[i] + y[i];
	} else {
		for (i = 0; i < n; i++)
			d[i] = x[i] * y[i];
	}
	return 0;
}

static int op_add_u32(const u64 *a, const struct pto_op_mem *mem)
{
	u32 *d, *x, *y;
	u64 i, n;
	int ret;

	if (a[3] % 4)
		return -EINVAL;
	n = a[3] / 4;
	ret = binary_ptrs(a, mem, n, (void **)&d, (void **)&x, (void **)&y);
	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		d[i] = x[i] + y[i];
	return 0;
}

/* C (M x N), A (M x K), B (K x N or, transposed, N x K) */
static int gemm_ptrs(const u64 *a, const struct pto_op_mem *mem, bool bt,
		     float **c, float **x, float **y)
{
	u64 m = a[3], n = a[4], k = a[5], cb, ab, bb;

	if (matrix_bytes(m, n, &cb) || matrix_bytes(m, k, &ab) ||
	    matrix_bytes(bt ? n : k, bt ? k : n, &bb))
		return -EINVAL;
	*c = mem_ptr(mem, a[0], cb, 4);
	*x = mem_ptr(mem, a[1], ab, 4);
	*y = mem_ptr(mem, a[2], bb, 4);
	return (*c && *x && *y) ? 0 : -EFAULT;
}

static int op_gemm(const u64 *a, const struct pto_op_mem *mem)
{
	u64 m = a[3], n = a[4], k = a[5], i, j, l;
	float *c, *x, *y, acc;
	int ret = gemm_ptrs(a, mem, false, &c, &x, &y);

	if (ret)
		return ret;
	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			acc = c[i * n + j];
			for (l = 0; l < k; l++)
				acc += x[i * k + l] * y[l * n + j];
			c[i * n + j] = acc;
		}
	}
	return 0;
}

static int op_matmul_bt(const u64 *a, const struct pto_op_mem *mem)
{
	u64 m = a[3], n = a[4], k = a[5], i, j, l;
	float *c, *x, *y, acc;
	int ret = gemm_ptrs(a, mem, true, &c, &x, &y);

	if (ret)
		return ret;
	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			acc = 0.0f;
			for (l = 0; l < k; l++)
				acc += x[i * k + l] * y[j * k + l];
			c[i * n + j] = acc;
		}
	}
	return 0;
}

/* P, m, l, S, scale, rows, cols */
static int op_softmax_prep(const u64 *a, const struct pto_op_mem *mem)
{
	u64 rows = a[5], cols = a[6], mb, vb, r, c;
	float scale = f32_from_bits((u32)a[4]);
	float *p, *m, *l, *s, mx, v, sum;

	if (matrix_bytes(rows, cols, &mb) || array_bytes(rows, 4, &vb) ||
	    !cols)
		return -EINVAL;
	p = mem_ptr(mem, a[0], mb, 4);
	m = mem_ptr(mem, a[1], vb, 4);
	l = mem_ptr(mem, a[2], vb, 4);
	s = mem_ptr(mem, a[3], mb, 4);
	if (!p || !m || !l || !s)
		return -EFAULT;
	for (r = 0; r < rows; r++) {
		mx = s[r * cols] * scale;
		for (c = 1; c < cols; c++) {
			v = s[r * cols + c] * scale;
			if (v > mx)
				mx = v;
		}
		sum = 0.0f;
		for (c = 0; c < cols; c++) {
			v = pto_op_expf(s[r * cols + c] * scale - mx);
			p[r * cols + c] = v;
			sum += v;
		}
		m[r] = mx;
		l[r] = sum;
	}
	return 0;
}

/* O, l, m, O_new, l_new, m_new, rows, cols */
static int op_online_update(const u64 *a, const struct pto_op_mem *mem)
{
	u64 rows = a[6], cols = a[7], mb, vb, r, c;
	float *o, *l, *m, *on, *ln, *mn, mx, alpha, beta;

	if (matrix_bytes(rows, cols, &mb) || array_bytes(rows, 4, &vb))
		return -EINVAL;
	o = mem_ptr(mem, a[0], mb, 4);
	l = mem_ptr(mem, a[1], vb, 4);
	m = mem_ptr(mem, a[2], vb, 4);
	on = mem_ptr(mem, a[3], mb, 4);
	ln = mem_ptr(mem, a[4], vb, 4);
	mn = mem_ptr(mem, a[5], vb, 4);
	if (!o || !l || !m || !on || !ln || !mn)
		return -EFAULT;
	for (r = 0; r < rows; r++) {
		mx = m[r] > mn[r] ? m[r] : mn[r];
		alpha = pto_op_expf(m[r] - mx);
		beta = pto_op_expf(mn[r] - mx);
		/* both -inf: nothing seen yet on either side */
		if (mx == f32_from_bits(0xff800000u)) {
			alpha = 0.0f;
			beta = 0.0f;
		}
		l[r] = alpha * l[r] + beta * ln[r];
		for (c = 0; c < cols; c++)
			o[r * cols + c] = alpha * o[r * cols + c] +
					  beta * on[r * cols + c];
		m[r] = mx;
	}
	return 0;
}

/* dst, O, l, rows, cols */
static int op_row_div(const u64 *a, const struct pto_op_mem *mem)
{
	u64 rows = a[3], cols = a[4], mb, vb, r, c;
	float *d, *o, *l;

	if (matrix_bytes(rows, cols, &mb) || array_bytes(rows, 4, &vb))
		return -EINVAL;
	d = mem_ptr(mem, a[0], mb, 4);
	o = mem_ptr(mem, a[1], mb, 4);
	l = mem_ptr(mem, a[2], vb, 4);
	if (!d || !o || !l)
		return -EFAULT;
	for (r = 0; r < rows; r++)
		for (c = 0; c < cols; c++)
			d[r * cols + c] = o[r * cols + c] / l[r];
	return 0;
}

int pto_op_exec(u32 op, const u64 *args, u32 nargs,
		const struct pto_op_mem *mem)
{
	if (op >= PTO_OP_COUNT || nargs < (u32)op_nargs[op])
		return -EINVAL;

	switch (op) {
	case PTO_OP_NOP:
		return 0;
	case PTO_OP_COPY:
		return op_copy(args, mem);
	case PTO_OP_FILL_U32:
		return op_fill_u32(args, mem);
	case PTO_OP_ADD_F32:
	case PTO_OP_MUL_F32:
		return op_binary_f32(op, args, mem);
	case PTO_OP_GEMM_F32:
		return op_gemm(args, mem);
	case PTO_OP_MATMUL_BT_F32:
		return op_matmul_bt(args, mem);
	case PTO_OP_SOFTMAX_PREP_F32:
		return op_softmax_prep(args, mem);
	case PTO_OP_ONLINE_UPDATE_F32:
		return op_online_update(args, mem);
	case PTO_OP_ROW_DIV_F32:
		return op_row_div(args, mem);
	case PTO_OP_ADD_U32:
		return op_add_u32(args, mem);
	case PTO_OP_SPIN_NS:
		/* timed by the backend, which handles it before calling here */
		return -EINVAL;
	}
	return -EINVAL;
}
