// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * Built-in ops, shared by the simulator and pto.ko.  See pto_ops.h.
 *
 * Every op is first resolved (pto_op_resolve()): its argument count, its
 * length arguments, each tensor view's descriptor (read once) and that
 * every span of memory it touches lies inside the context's device memory;
 * only then does it run a fixed-order loop (pto_op_run()), so a task with
 * a bad address fails with -EFAULT having written nothing.
 *
 * A tensor operand is a plain argument (a device address; the tensor is
 * contiguous, row-major) or a tensor view (the address of a struct
 * pto_view_desc).  Both become a struct pto_op_tensor, a host pointer and
 * strides, and the loops index through it: the same loop, in the same
 * order, for both, so a strided view of some numbers gives the same bits
 * as a contiguous copy of them.
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

/*
 * The compiler may not read a descriptor again after this (a peer may
 * rewrite device memory at any time): what was copied is what is used.
 */
static inline void op_barrier(void)
{
	__asm__ __volatile__("" : : : "memory");
}

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

/* ---- what each op's arguments are -------------------------------------- */

enum op_role {
	R_SCALAR,	/* a value */
	R_MAT,		/* a rows x cols matrix (2-D view) */
	R_VEC,		/* a vector of rows elements (1-D view) */
	R_ELEM,		/* an operand of an elementwise op (any shape) */
};

enum op_type {
	E_ANY,		/* COPY: any dtype */
	E_F32,		/* PTO_DTYPE_F32 */
	E_U32,		/* PTO_DTYPE_U32 or PTO_DTYPE_I32 */
	E_W32,		/* FILL_U32: any 4-byte dtype (it writes a bit pattern) */
};

/* rows, cols: the length arguments that size a matrix or a vector */
struct op_arg_shape {
	u8 role;
	signed char rows, cols;
};

/*
 * type: the element type of every tensor; count: an elementwise op's
 * length argument (-1 for the others), in bytes when count_bytes.
 */
struct op_shape {
	u8 type;
	signed char count;
	u8 count_bytes;
	struct op_arg_shape a[PTO_OP_MAX_ARGS];
};

#define S_		{ R_SCALAR, -1, -1 }
#define EL_		{ R_ELEM, -1, -1 }
#define MAT_(r, c)	{ R_MAT, r, c }
#define VEC_(r)		{ R_VEC, r, -1 }

static const struct op_shape op_shapes[PTO_OP_COUNT] = {
	[PTO_OP_NOP] = { E_ANY, -1, 0, { } },
	[PTO_OP_COPY] = { E_ANY, 2, 1, { EL_, EL_, S_ } },
	[PTO_OP_FILL_U32] = { E_W32, 2, 1, { EL_, S_, S_ } },
	[PTO_OP_ADD_F32] = { E_F32, 3, 0, { EL_, EL_, EL_, S_ } },
	[PTO_OP_MUL_F32] = { E_F32, 3, 0, { EL_, EL_, EL_, S_ } },
	[PTO_OP_GEMM_F32] = { E_F32, -1, 0, {
		MAT_(3, 4), MAT_(3, 5), MAT_(5, 4), S_, S_, S_ } },
	[PTO_OP_MATMUL_BT_F32] = { E_F32, -1, 0, {
		MAT_(3, 4), MAT_(3, 5), MAT_(4, 5), S_, S_, S_ } },
	[PTO_OP_SOFTMAX_PREP_F32] = { E_F32, -1, 0, {
		MAT_(5, 6), VEC_(5), VEC_(5), MAT_(5, 6), S_, S_, S_ } },
	[PTO_OP_ONLINE_UPDATE_F32] = { E_F32, -1, 0, {
		MAT_(6, 7), VEC_(6), VEC_(6), MAT_(6, 7), VEC_(6), VEC_(6),
		S_, S_ } },
	[PTO_OP_ROW_DIV_F32] = { E_F32, -1, 0, {
		MAT_(3, 4), MAT_(3, 4), VEC_(3), S_, S_ } },
	[PTO_OP_ADD_U32] = { E_U32, 3, 1, { EL_, EL_, EL_, S_ } },
	[PTO_OP_SPIN_NS] = { E_ANY, -1, 0, { S_ } },
};

/* ---- resolving the operands --------------------------------------------- */

/*
 * Copy the view descriptor at device address addr out of mem, once, and
 * check it on its own: a known dtype with its size, 1..PTO_MAX_DIMS
 * dimensions, shape 1 past them (whose strides are taken as 0).
 */
static int view_get(const struct pto_op_mem *mem, u64 addr,
		    struct pto_view_desc *v)
{
	const struct pto_view_desc *src = mem_ptr(mem, addr, sizeof(*v), 8);
	u32 d;

	if (!src)
		return -EFAULT;
	memcpy(v, src, sizeof(*v));
	op_barrier();
	if (!v->ndim || v->ndim > PTO_MAX_DIMS || !v->elem_size ||
	    v->elem_size != pto_dtype_size(v->dtype))
		return -EINVAL;
	for (d = v->ndim; d < PTO_MAX_DIMS; d++) {
		if (v->shape[d] != 1)
			return -EINVAL;
		v->stride[d] = 0;
	}
	return 0;
}

static bool dtype_ok(u32 type, u32 dtype)
{
	switch (type) {
	case E_F32:
		return dtype == PTO_DTYPE_F32;
	case E_U32:
		return dtype == PTO_DTYPE_U32 || dtype == PTO_DTYPE_I32;
	case E_W32:
		return pto_dtype_size(dtype) == 4;
	default:
		return true;
	}
}

bool pto_op_view_dtype_ok(u32 op, u32 dtype)
{
	return op < PTO_OP_COUNT && dtype_ok(op_shapes[op].type, dtype);
}

/*
 * The bytes from a view's first element to just past its last one, 0 for
 * an empty view (a dimension of 0: it touches nothing).
 */
static int view_span(const struct pto_view_desc *v, u64 *bytes)
{
	u64 last = 0, x;
	u32 d;

	*bytes = 0;
	for (d = 0; d < PTO_MAX_DIMS; d++)
		if (!v->shape[d])
			return 0;
	for (d = 0; d < PTO_MAX_DIMS; d++)
		if (__builtin_mul_overflow(v->shape[d] - 1, v->stride[d], &x) ||
		    __builtin_add_overflow(last, x, &last))
			return -EINVAL;
	if (__builtin_add_overflow(last, 1, &x) ||
	    __builtin_mul_overflow(x, (u64)v->elem_size, bytes))
		return -EINVAL;
	return 0;
}

/* t from a checked view: its address, span and strides. */
static int view_tensor(struct pto_op_tensor *t, const struct pto_view_desc *v)
{
	u32 d;

	t->addr = v->addr;
	t->esize = v->elem_size;
	t->view = 1;
	for (d = 0; d < PTO_MAX_DIMS; d++)
		t->stride[d] = v->stride[d];
	return view_span(v, &t->bytes);
}

/* A matrix or vector operand: a view of exactly rows x cols, or plain. */
static int resolve_matrix(struct pto_op_call *c, u32 i,
			  const struct op_arg_shape *a,
			  const struct pto_op_mem *mem)
{
	struct pto_op_tensor *t = &c->t[i];
	u64 rows = c->arg[a->rows];
	u64 cols = a->role == R_MAT ? c->arg[a->cols] : 1;
	struct pto_view_desc v;
	int ret;

	if (!(c->views & (1u << i))) {
		t->addr = c->arg[i];
		t->esize = 4;
		t->stride[0] = a->role == R_MAT ? cols : 1;
		t->stride[1] = 1;
		if (__builtin_mul_overflow(rows, cols, &t->bytes) ||
		    __builtin_mul_overflow(t->bytes, (u64)4, &t->bytes))
			return -EINVAL;
		return 0;
	}
	ret = view_get(mem, c->arg[i], &v);
	if (ret)
		return ret;
	if (v.dtype != PTO_DTYPE_F32 || v.shape[0] != rows ||
	    v.ndim != (a->role == R_MAT ? 2u : 1u) ||
	    (a->role == R_MAT && v.shape[1] != cols))
		return -EINVAL;
	return view_tensor(t, &v);
}

/*
 * The operands of an elementwise op: every view of one dtype class and
 * one shape whose elements are the op's count; plain operands contiguous
 * over that shape.  The index space is the shape with its dimensions of
 * 1 dropped (the row-major order is the same), right-aligned in c->shape.
 */
static int resolve_elementwise(struct pto_op_call *c, const struct op_shape *s,
			       u32 n, const struct pto_op_mem *mem)
{
	struct pto_view_desc v[3], *first = NULL;
	u64 len = c->arg[(u32)s->count], count, elems = 1, step;
	u32 esize = s->type == E_ANY ? 1 : 4, dim[PTO_MAX_DIMS], i, d, k;
	int ret;

	if (s->count_bytes && s->type == E_U32 && len % 4)
		return -EINVAL;
	/* the operands are the first arguments, at most three */
	for (i = 0; i < n && i < 3; i++) {
		if (!(c->views & (1u << i)))
			continue;
		ret = view_get(mem, c->arg[i], &v[i]);
		if (ret)
			return ret;
		if (!dtype_ok(s->type, v[i].dtype))
			return -EINVAL;
		if (!first) {
			first = &v[i];
			esize = first->elem_size;
			continue;
		}
		if (v[i].elem_size != first->elem_size)
			return -EINVAL;
		for (d = 0; d < PTO_MAX_DIMS; d++)
			if (v[i].shape[d] != first->shape[d])
				return -EINVAL;
	}
	if (s->count_bytes && len % esize)
		return -EINVAL;
	count = s->count_bytes ? len / esize : len;

	/* the index space, dimensions of 1 dropped: dim[k] of the view's */
	for (k = 0; k < PTO_MAX_DIMS; k++) {
		c->shape[k] = 1;
		dim[k] = PTO_MAX_DIMS;
	}
	if (first) {
		for (d = 0; d < PTO_MAX_DIMS; d++)
			if (__builtin_mul_overflow(elems, first->shape[d], &elems))
				return -EINVAL;
		if (elems != count)
			return -EINVAL;
		k = PTO_MAX_DIMS;
		for (d = PTO_MAX_DIMS; d-- > 0;) {
			if (first->shape[d] == 1)
				continue;
			c->shape[--k] = first->shape[d];
			dim[k] = d;
		}
	} else {
		c->shape[PTO_MAX_DIMS - 1] = count;
	}
	c->first = 0;
	c->count = count;

	for (i = 0; i < n && i < 3; i++) {
		struct pto_op_tensor *t = &c->t[i];

		if (s->a[i].role != R_ELEM)
			continue;
		if (c->views & (1u << i)) {
			ret = view_tensor(t, &v[i]);
			if (ret)
				return ret;
			for (k = 0; k < PTO_MAX_DIMS; k++)
				t->stride[k] = dim[k] < PTO_MAX_DIMS ?
					       v[i].stride[dim[k]] : 0;
			continue;
		}
		t->addr = c->arg[i];
		t->esize = esize;
		if (__builtin_mul_overflow(count, (u64)esize, &t->bytes))
			return -EINVAL;
		step = 1;
		for (k = PTO_MAX_DIMS; k-- > 0;) {
			t->stride[k] = step;
			step *= c->shape[k];
		}
	}
	return 0;
}

int pto_op_resolve(struct pto_op_call *c, u32 op, const u64 *args,
		   u32 nargs, u32 view_mask, const struct pto_op_mem *mem)
{
	const struct op_shape *s;
	struct pto_op_tensor *t;
	u32 i, n;
	int ret;

	if (op >= PTO_OP_COUNT || nargs < (u32)op_nargs[op] ||
	    op == PTO_OP_SPIN_NS)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	s = &op_shapes[op];
	n = (u32)op_nargs[op];
	c->op = op;
	for (i = 0; i < n; i++)
		c->arg[i] = args[i];
	/* views past the op's arguments are arguments it ignores */
	c->views = view_mask & ((1u << n) - 1);
	for (i = 0; i < n; i++)
		if ((c->views & (1u << i)) && s->a[i].role == R_SCALAR)
			return -EINVAL;
	if (op == PTO_OP_SOFTMAX_PREP_F32 && !c->arg[6])
		return -EINVAL;
	if (s->count >= 0) {
		ret = resolve_elementwise(c, s, n, mem);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		if (s->a[i].role != R_MAT && s->a[i].role != R_VEC)
			continue;
		ret = resolve_matrix(c, i, &s->a[i], mem);
		if (ret)
			return ret;
	}
	/* every span inside mem; an empty view touches nothing */
	for (i = 0; i < n; i++) {
		t = &c->t[i];
		if (s->a[i].role == R_SCALAR || (t->view && !t->bytes))
			continue;
		t->p = mem_ptr(mem, t->addr, t->bytes, t->esize);
		if (!t->p)
			return -EFAULT;
	}
	return 0;
}

/* ---- running them ------------------------------------------------------- */

/*
 * Elements are reached by index, base[i * stride_i + j * stride_j], so no
 * pointer is formed for an element the op does not touch.
 */
#define F32(t)	((float *)(t)->p)

/* One row of an elementwise op: len elements from the pointers p[]. */
static void elementwise_row(const struct pto_op_call *c, u8 *const *p,
			    u64 len)
{
	u64 ds = c->t[0].stride[3], xs = c->t[1].stride[3];
	u64 ys = c->t[2].stride[3], i;

	switch (c->op) {
	case PTO_OP_COPY:
		if (!c->views) {	/* bytes, contiguous: memmove() */
			memmove(p[0], p[1], len);
			break;
		}
		/* element by element, in order, whatever the overlap */
		switch (c->t[0].esize) {
		case 1:
			for (i = 0; i < len; i++)
				p[0][i * ds] = p[1][i * xs];
			break;
		case 2:
			for (i = 0; i < len; i++)
				((__u16 *)p[0])[i * ds] =
					((const __u16 *)p[1])[i * xs];
			break;
		case 4:
			for (i = 0; i < len; i++)
				((u32 *)p[0])[i * ds] =
					((const u32 *)p[1])[i * xs];
			break;
		default:
			for (i = 0; i < len; i++)
				((u64 *)p[0])[i * ds] =
					((const u64 *)p[1])[i * xs];
			break;
		}
		break;
	case PTO_OP_FILL_U32:
		for (i = 0; i < len; i++)
			((u32 *)p[0])[i * ds] = (u32)c->arg[1];
		break;
	case PTO_OP_ADD_F32:
		for (i = 0; i < len; i++)
			((float *)p[0])[i * ds] = ((const float *)p[1])[i * xs] +
						  ((const float *)p[2])[i * ys];
		break;
	case PTO_OP_MUL_F32:
		for (i = 0; i < len; i++)
			((float *)p[0])[i * ds] = ((const float *)p[1])[i * xs] *
						  ((const float *)p[2])[i * ys];
		break;
	case PTO_OP_ADD_U32:
		for (i = 0; i < len; i++)
			((u32 *)p[0])[i * ds] = ((const u32 *)p[1])[i * xs] +
						((const u32 *)p[2])[i * ys];
		break;
	}
}

/* Elements [first, first + count) of the index space, row-major. */
static void run_elementwise(const struct pto_op_call *c)
{
	u64 idx[PTO_MAX_DIMS], rem = c->first, left = c->count, len, off;
	u8 *p[3] = { NULL, NULL, NULL };
	u32 i, d, nt = c->op == PTO_OP_FILL_U32 ? 1 :
		       c->op == PTO_OP_COPY ? 2 : 3;

	if (!left)
		return;
	for (d = PTO_MAX_DIMS; d-- > 0;) {
		idx[d] = rem % c->shape[d];
		rem /= c->shape[d];
	}
	while (left) {
		len = c->shape[3] - idx[3];
		if (len > left)
			len = left;
		for (i = 0; i < nt; i++) {
			const struct pto_op_tensor *t = &c->t[i];

			off = 0;
			for (d = 0; d < PTO_MAX_DIMS; d++)
				off += idx[d] * t->stride[d];
			p[i] = t->p + off * t->esize;
		}
		elementwise_row(c, p, len);
		left -= len;
		idx[3] = 0;
		for (d = PTO_MAX_DIMS - 1; d-- > 0;) {
			if (++idx[d] < c->shape[d])
				break;
			idx[d] = 0;
		}
	}
}

/*
 * C += A B: C (M x N), A (M x K), B (K x N).  One loop, inlined twice:
 * with unit column strides of C and B as constants (plain matrices and
 * tiles of row-major ones), where the compiler vectorizes across columns
 * (each column's sum still in k order), and for any strides.
 */
static inline __attribute__((always_inline)) void
gemm_loop(float *C, const float *A, const float *B, u64 m, u64 n, u64 k,
	  u64 cr, u64 cc, u64 ar, u64 ac, u64 br, u64 bc)
{
	u64 i, j, l;
	float acc;

	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			acc = C[i * cr + j * cc];
			for (l = 0; l < k; l++)
				acc += A[i * ar + l * ac] * B[l * br + j * bc];
			C[i * cr + j * cc] = acc;
		}
	}
}

static void run_gemm(const struct pto_op_call *c)
{
	const struct pto_op_tensor *tc = &c->t[0], *ta = &c->t[1];
	const struct pto_op_tensor *tb = &c->t[2];

	if (tc->stride[1] == 1 && tb->stride[1] == 1)
		gemm_loop(F32(tc), F32(ta), F32(tb), c->arg[3], c->arg[4],
			  c->arg[5], tc->stride[0], 1, ta->stride[0],
			  ta->stride[1], tb->stride[0], 1);
	else
		gemm_loop(F32(tc), F32(ta), F32(tb), c->arg[3], c->arg[4],
			  c->arg[5], tc->stride[0], tc->stride[1],
			  ta->stride[0], ta->stride[1], tb->stride[0],
			  tb->stride[1]);
}

/* C = A B^T: C (M x N), A (M x K), B (N x K); as gemm_loop() */
static inline __attribute__((always_inline)) void
matmul_bt_loop(float *C, const float *A, const float *B, u64 m, u64 n,
	       u64 k, u64 cr, u64 cc, u64 ar, u64 ac, u64 br, u64 bc)
{
	u64 i, j, l;
	float acc;

	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++) {
			acc = 0.0f;
			for (l = 0; l < k; l++)
				acc += A[i * ar + l * ac] * B[j * br + l * bc];
			C[i * cr + j * cc] = acc;
		}
	}
}

static void run_matmul_bt(const struct pto_op_call *c)
{
	const struct pto_op_tensor *tc = &c->t[0], *ta = &c->t[1];
	const struct pto_op_tensor *tb = &c->t[2];

	if (tc->stride[1] == 1 && ta->stride[1] == 1 && tb->stride[1] == 1)
		matmul_bt_loop(F32(tc), F32(ta), F32(tb), c->arg[3],
			       c->arg[4], c->arg[5], tc->stride[0], 1,
			       ta->stride[0], 1, tb->stride[0], 1);
	else
		matmul_bt_loop(F32(tc), F32(ta), F32(tb), c->arg[3],
			       c->arg[4], c->arg[5], tc->stride[0],
			       tc->stride[1], ta->stride[0], ta->stride[1],
			       tb->stride[0], tb->stride[1]);
}

/* P, m, l, S, scale, rows, cols */
static void run_softmax_prep(const struct pto_op_call *c)
{
	u64 rows = c->arg[5], cols = c->arg[6], r, j;
	u64 pr = c->t[0].stride[0], pc = c->t[0].stride[1];
	u64 ms = c->t[1].stride[0], ls = c->t[2].stride[0];
	u64 sr = c->t[3].stride[0], sc = c->t[3].stride[1];
	float scale = f32_from_bits((u32)c->arg[4]);
	float *P = F32(&c->t[0]), *M = F32(&c->t[1]), *L = F32(&c->t[2]);
	const float *S = F32(&c->t[3]);
	float mx, v, sum;

	for (r = 0; r < rows; r++) {
		mx = S[r * sr] * scale;
		for (j = 1; j < cols; j++) {
			v = S[r * sr + j * sc] * scale;
			if (v > mx)
				mx = v;
		}
		sum = 0.0f;
		for (j = 0; j < cols; j++) {
			v = pto_op_expf(S[r * sr + j * sc] * scale - mx);
			P[r * pr + j * pc] = v;
			sum += v;
		}
		M[r * ms] = mx;
		L[r * ls] = sum;
	}
}

/* O, l, m, O_new, l_new, m_new, rows, cols */
static void run_online_update(const struct pto_op_call *c)
{
	u64 rows = c->arg[6], cols = c->arg[7], r, j;
	u64 orr = c->t[0].stride[0], oc = c->t[0].stride[1];
	u64 ls = c->t[1].stride[0], ms = c->t[2].stride[0];
	u64 nr = c->t[3].stride[0], nc = c->t[3].stride[1];
	u64 lns = c->t[4].stride[0], mns = c->t[5].stride[0];
	float *O = F32(&c->t[0]), *L = F32(&c->t[1]), *M = F32(&c->t[2]);
	const float *On = F32(&c->t[3]), *Ln = F32(&c->t[4]);
	const float *Mn = F32(&c->t[5]);
	float mx, alpha, beta;

	for (r = 0; r < rows; r++) {
		mx = M[r * ms] > Mn[r * mns] ? M[r * ms] : Mn[r * mns];
		alpha = pto_op_expf(M[r * ms] - mx);
		beta = pto_op_expf(Mn[r * mns] - mx);
		/* both -inf: nothing seen yet on either side */
		if (mx == f32_from_bits(0xff800000u)) {
			alpha = 0.0f;
			beta = 0.0f;
		}
		L[r * ls] = alpha * L[r * ls] + beta * Ln[r * lns];
		for (j = 0; j < cols; j++)
			O[r * orr + j * oc] = alpha * O[r * orr + j * oc] +
					      beta * On[r * nr + j * nc];
		M[r * ms] = mx;
	}
}

/* dst, O, l, rows, cols */
static void run_row_div(const struct pto_op_call *c)
{
	u64 rows = c->arg[3], cols = c->arg[4], r, j;
	u64 dr = c->t[0].stride[0], dc = c->t[0].stride[1];
	u64 orr = c->t[1].stride[0], oc = c->t[1].stride[1];
	u64 ls = c->t[2].stride[0];
	float *D = F32(&c->t[0]);
	const float *O = F32(&c->t[1]), *L = F32(&c->t[2]);

	for (r = 0; r < rows; r++)
		for (j = 0; j < cols; j++)
			D[r * dr + j * dc] = O[r * orr + j * oc] / L[r * ls];
}

void pto_op_run(const struct pto_op_call *c)
{
	switch (c->op) {
	case PTO_OP_COPY:
	case PTO_OP_FILL_U32:
	case PTO_OP_ADD_F32:
	case PTO_OP_MUL_F32:
	case PTO_OP_ADD_U32:
		run_elementwise(c);
		break;
	case PTO_OP_GEMM_F32:
		run_gemm(c);
		break;
	case PTO_OP_MATMUL_BT_F32:
		run_matmul_bt(c);
		break;
	case PTO_OP_SOFTMAX_PREP_F32:
		run_softmax_prep(c);
		break;
	case PTO_OP_ONLINE_UPDATE_F32:
		run_online_update(c);
		break;
	case PTO_OP_ROW_DIV_F32:
		run_row_div(c);
		break;
	}
}

int pto_op_exec(u32 op, const u64 *args, u32 nargs, u32 view_mask,
		const struct pto_op_mem *mem)
{
	struct pto_op_call c;
	int ret;

	if (op == PTO_OP_NOP)
		return 0;
	ret = pto_op_resolve(&c, op, args, nargs, view_mask, mem);
	if (ret)
		return ret;
	pto_op_run(&c);
	return 0;
}
