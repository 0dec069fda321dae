// SPDX-License-Identifier: MIT
/*
 * Built-in op parameters against the op's arity and the declared regions;
 * see opcheck.h.  The shapes here follow ops/pto_ops.c (and enum pto_op in
 * <pto/pto_uapi.h>): what each argument is and how many bytes of it the op
 * touches, computed from the op's length arguments.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "log.h"
#include "opcheck.h"
#include "pto_ops.h"
#include "viewparam.h"

#define MAX_OP_ARGS 8

/*
 * One argument: a scalar (len NULL-like: elem 0), or a region of
 * elem * v[a] (* v[b] when b >= 0) bytes, where v[] are the scalars.
 */
struct op_arg {
	const char *name;
	uint8_t elem;		/* bytes per element; 0: a scalar */
	int8_t a, b;		/* the length arguments that size it */
};

/* the element type an op's tensors have */
enum op_type { E_ANY, E_F32, E_U32, E_W32 };

struct op_shape {
	uint8_t nargs;
	uint8_t type;		/* enum op_type */
	int8_t count;		/* elementwise ops: the length argument */
	int8_t words_of;	/* a byte length that must be a multiple of 4 */
	bool nonzero_b;		/* ... and one that must not be 0 (cols) */
	struct op_arg arg[MAX_OP_ARGS];
};

#define S(n)		{ n, 0, -1, -1 }
#define T(n, e, a, b)	{ n, e, a, b }

static const struct op_shape shapes[PTO_OP_COUNT] = {
	[PTO_OP_NOP] = { 0, E_ANY, -1, -1, false, { } },
	[PTO_OP_COPY] = { 3, E_ANY, 2, -1, false, {
		T("dst", 1, 2, -1), T("src", 1, 2, -1), S("nbytes") } },
	[PTO_OP_FILL_U32] = { 3, E_W32, 2, 2, false, {
		T("dst", 1, 2, -1), S("value"), S("nbytes") } },
	[PTO_OP_ADD_F32] = { 4, E_F32, 3, -1, false, {
		T("dst", 4, 3, -1), T("a", 4, 3, -1), T("b", 4, 3, -1),
		S("n") } },
	[PTO_OP_MUL_F32] = { 4, E_F32, 3, -1, false, {
		T("dst", 4, 3, -1), T("a", 4, 3, -1), T("b", 4, 3, -1),
		S("n") } },
	[PTO_OP_GEMM_F32] = { 6, E_F32, -1, -1, false, {
		T("C", 4, 3, 4), T("A", 4, 3, 5), T("B", 4, 5, 4),
		S("M"), S("N"), S("K") } },
	[PTO_OP_MATMUL_BT_F32] = { 6, E_F32, -1, -1, false, {
		T("C", 4, 3, 4), T("A", 4, 3, 5), T("B", 4, 4, 5),
		S("M"), S("N"), S("K") } },
	[PTO_OP_SOFTMAX_PREP_F32] = { 7, E_F32, -1, -1, true, {
		T("P", 4, 5, 6), T("m", 4, 5, -1), T("l", 4, 5, -1),
		T("S", 4, 5, 6), S("scale"), S("rows"), S("cols") } },
	[PTO_OP_ONLINE_UPDATE_F32] = { 8, E_F32, -1, -1, false, {
		T("O", 4, 6, 7), T("l", 4, 6, -1), T("m", 4, 6, -1),
		T("O_new", 4, 6, 7), T("l_new", 4, 6, -1),
		T("m_new", 4, 6, -1), S("rows"), S("cols") } },
	[PTO_OP_ROW_DIV_F32] = { 5, E_F32, -1, -1, false, {
		T("dst", 4, 3, 4), T("O", 4, 3, 4), T("l", 4, 3, -1),
		S("rows"), S("cols") } },
	[PTO_OP_ADD_U32] = { 4, E_U32, 3, 3, false, {
		T("dst", 1, 3, -1), T("a", 1, 3, -1), T("b", 1, 3, -1),
		S("nbytes") } },
	[PTO_OP_SPIN_NS] = { 1, E_ANY, -1, -1, false, { S("ns") } },
};

/* The op's arguments, named: "dst, src, nbytes". */
static void arg_list(const struct op_shape *s, char *buf, size_t size)
{
	size_t len = 0;
	uint32_t i;

	buf[0] = 0;
	for (i = 0; i < s->nargs && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					i ? ", " : "", s->arg[i].name);
}

/* Bytes a region argument needs; false when the product overflows. */
static bool need_bytes(const struct op_arg *g, const uint64_t *v,
		       uint64_t *bytes)
{
	uint64_t n = v[g->a];

	if (g->b >= 0 && __builtin_mul_overflow(n, v[g->b], &n))
		return false;
	return !__builtin_mul_overflow(n, (uint64_t)g->elem, bytes);
}

static int check_region(const char *call, uint32_t kid, uint32_t op,
			const struct op_shape *s, const struct pto_param *p,
			uint32_t i, const uint64_t *v)
{
	const struct op_arg *g = &s->arg[i];
	uint64_t need;
	char how[96];

	/* a raw address passed as a scalar: nothing to compare with */
	if (p[i].kind == PTO_PARAM_SCALAR)
		return 0;
	if (!need_bytes(g, v, &need)) {
		pto_log("%s: kernel %u (built-in %s): the size of %s "
			"(parameter %u) overflows\n", call, kid,
			pto_op_name(op), g->name, i);
		return -EINVAL;
	}
	if (need <= p[i].size)
		return 0;
	if (g->b >= 0)
		snprintf(how, sizeof(how), "%s = %llu, %s = %llu, %u-byte "
			 "elements", s->arg[g->a].name,
			 (unsigned long long)v[g->a], s->arg[g->b].name,
			 (unsigned long long)v[g->b], g->elem);
	else
		snprintf(how, sizeof(how), "%s = %llu %s", s->arg[g->a].name,
			 (unsigned long long)v[g->a],
			 g->elem == 1 ? "bytes" : "4-byte elements");
	pto_log("%s: kernel %u (built-in %s): %s (parameter %u) is a region "
		"of %llu bytes, the op touches %llu (%s)\n", call, kid,
		pto_op_name(op), g->name, i, (unsigned long long)p[i].size,
		(unsigned long long)need, how);
	return -EINVAL;
}

static const char *const type_names[] = {
	[E_ANY] = "any", [E_F32] = "f32", [E_U32] = "u32 or i32",
	[E_W32] = "any 4-byte type",
};

/* "2 x 3" */
static void shape_str(const struct pto_view *w, char *buf, size_t size)
{
	size_t len = 0;
	uint32_t d;

	buf[0] = 0;
	for (d = 0; d < w->ndim && d < PTO_MAX_DIMS && len < size; d++)
		len += (size_t)snprintf(buf + len, size - len, "%s%llu",
					d ? " x " : "",
					(unsigned long long)w->shape[d]);
}

/*
 * A view parameter on its own, then against the op: a matrix a 2-D view
 * of rows x cols, a vector a 1-D view of rows, an elementwise operand any
 * shape of the op's element count, the same as the op's other views.
 * first: the elementwise op's first view so far (NULL: this is it).
 */
static int check_view(const char *call, uint32_t kid, uint32_t op,
		      const struct op_shape *s, const struct pto_param *p,
		      uint32_t i, const uint64_t *v,
		      const struct pto_view **first)
{
	const struct op_arg *g = &s->arg[i];
	const struct pto_view *w = p[i].view;
	char got[96], want[64];
	uint64_t elems = 1, count;
	uint32_t d, esize;

#define VIEW_FAIL(...)							\
	do {								\
		char why_[256];						\
		snprintf(why_, sizeof(why_), __VA_ARGS__);		\
		pto_log("%s: kernel %u (built-in %s): %s (parameter %u) "	\
			"is a view %s\n", call, kid, pto_op_name(op),	\
			g->name, i, why_);				\
		return -EINVAL;						\
	} while (0)

	if (!w)
		VIEW_FAIL("without a struct pto_view (->view is NULL)");
	if (!w->ndim || w->ndim > PTO_MAX_DIMS)
		VIEW_FAIL("of %u dimensions (1 to %u)%s", w->ndim,
			  PTO_MAX_DIMS, pto_view_ndim_hint(w->ndim));
	/* the ops' own rule, on a dtype the library knows */
	if (!pto_dtype_size(w->dtype) || !pto_op_view_dtype_ok(op, w->dtype))
		VIEW_FAIL("of %s elements, the op takes %s",
			  pto_dtype_name(w->dtype), type_names[s->type]);
	shape_str(w, got, sizeof(got));
	if (s->count < 0) {
		/* a matrix (rows x cols) or a vector (rows) */
		if (g->b >= 0)
			snprintf(want, sizeof(want), "2-D: %s x %s = %llu x "
				 "%llu", s->arg[g->a].name, s->arg[g->b].name,
				 (unsigned long long)v[g->a],
				 (unsigned long long)v[g->b]);
		else
			snprintf(want, sizeof(want), "1-D: %s = %llu",
				 s->arg[g->a].name,
				 (unsigned long long)v[g->a]);
		if (w->ndim != (g->b >= 0 ? 2u : 1u) || w->shape[0] != v[g->a] ||
		    (g->b >= 0 && w->shape[1] != v[g->b]))
			VIEW_FAIL("of shape %s, the op takes %s", got, want);
		return 0;
	}
	/* an elementwise operand */
	esize = s->type == E_ANY ? pto_dtype_size(w->dtype) : 4;
	if (*first) {
		const struct pto_view *f = *first;
		bool same = true;

		/* as the device compares them: 1 past a view's dimensions */
		for (d = 0; same && d < PTO_MAX_DIMS; d++)
			same = (d < f->ndim ? f->shape[d] : 1) ==
			       (d < w->ndim ? w->shape[d] : 1);
		if (!same)
			VIEW_FAIL("of shape %s, another view of the op has a "
				  "different shape", got);
		if (pto_dtype_size(f->dtype) != esize)
			VIEW_FAIL("of %s elements, another view of the op has "
				  "%s", pto_dtype_name(w->dtype),
				  pto_dtype_name(f->dtype));
	} else {
		*first = w;
	}
	for (d = 0; d < w->ndim; d++)
		if (__builtin_mul_overflow(elems, w->shape[d], &elems))
			VIEW_FAIL("of shape %s: its element count overflows",
				  got);
	count = v[s->count];
	if (s->arg[s->count].elem == 0 && g->elem == 1) {
		/* a byte length: whole elements of the view */
		if (count % esize || count / esize != elems)
			VIEW_FAIL("of %llu %u-byte elements (%s), the op "
				  "touches %s = %llu bytes",
				  (unsigned long long)elems, esize, got,
				  s->arg[s->count].name,
				  (unsigned long long)count);
	} else if (count != elems) {
		VIEW_FAIL("of %llu elements (%s), the op touches %s = %llu",
			  (unsigned long long)elems, got,
			  s->arg[s->count].name, (unsigned long long)count);
	}
	return 0;
#undef VIEW_FAIL
}

/* The length arguments: SCALARs, with the values the op accepts. */
static int check_scalars(const char *call, uint32_t kid, uint32_t op,
			 const struct op_shape *s, const struct pto_param *p,
			 uint64_t *v)
{
	uint32_t i;

	for (i = 0; i < s->nargs; i++) {
		if (s->arg[i].elem)
			continue;
		if (p[i].kind != PTO_PARAM_SCALAR) {
			pto_log("%s: kernel %u (built-in %s): %s (parameter "
				"%u) must be a PTO_SCALAR\n", call, kid,
				pto_op_name(op), s->arg[i].name, i);
			return -EINVAL;
		}
		v[i] = p[i].value;
	}
	if (s->words_of >= 0 && v[s->words_of] % 4) {
		pto_log("%s: kernel %u (built-in %s): %s = %llu is not a "
			"multiple of 4 (the op works on u32 words)\n", call,
			kid, pto_op_name(op), s->arg[s->words_of].name,
			(unsigned long long)v[s->words_of]);
		return -EINVAL;
	}
	if (s->nonzero_b && !v[s->nargs - 1]) {
		pto_log("%s: kernel %u (built-in %s): %s must not be 0\n",
			call, kid, pto_op_name(op),
			s->arg[s->nargs - 1].name);
		return -EINVAL;
	}
	return 0;
}

/*
 * The device reaches an operand's elements only at addresses aligned to
 * their size (the ops fail with -EFAULT otherwise): a view at its base
 * plus offset elements, a plain region at base + offset, with the f32 and
 * u32 ops' 4 bytes, or a COPY's view elements.  A buffer the runtime
 * allocates (PTO_OUT) is always aligned.
 */
static int check_aligned(const char *call, uint32_t kid, uint32_t op,
			 const struct op_shape *s, const struct pto_param *p,
			 uint32_t i, const struct pto_view *first)
{
	uint32_t kind = p[i].kind & ~(uint32_t)PTO_PARAM_VIEW;
	uint32_t esize = s->type == E_ANY ? 1 : 4;
	uintptr_t addr;

	if (kind == PTO_PARAM_OUTPUT || kind == PTO_PARAM_SCALAR)
		return 0;
	if (p[i].kind & PTO_PARAM_VIEW) {
		esize = pto_dtype_size(p[i].view->dtype);
		addr = (uintptr_t)p[i].view->base +
		       (uintptr_t)(p[i].view->offset * esize);
	} else {
		if (first)
			esize = pto_dtype_size(first->dtype);
		addr = (uintptr_t)p[i].base + (uintptr_t)p[i].offset;
	}
	if (addr % esize == 0)
		return 0;
	pto_log("%s: kernel %u (built-in %s): %s (parameter %u) at %p is not "
		"aligned to its %u-byte elements\n", call, kid,
		pto_op_name(op), s->arg[i].name, i, (void *)addr, esize);
	return -EINVAL;
}

int pto_op_check(const char *call, uint32_t kernel_id, uint32_t op,
		 const struct pto_param *p, uint32_t n)
{
	const struct pto_view *first = NULL;
	const struct op_shape *s;
	uint64_t v[MAX_OP_ARGS] = { 0 };
	char names[128];
	uint32_t i;
	int ret;

	if (op >= PTO_OP_COUNT)
		return -EINVAL;
	s = &shapes[op];
	if (n < s->nargs) {
		arg_list(s, names, sizeof(names));
		pto_log("%s: kernel %u (built-in %s) takes %u parameters (%s), "
			"got %u\n", call, kernel_id, pto_op_name(op), s->nargs,
			names, n);
		return -EINVAL;
	}
	ret = check_scalars(call, kernel_id, op, s, p, v);
	for (i = 0; !ret && i < s->nargs; i++) {
		if (!s->arg[i].elem)
			continue;
		if (p[i].kind & PTO_PARAM_VIEW)
			ret = check_view(call, kernel_id, op, s, p, i, v,
					 &first);
		else
			ret = check_region(call, kernel_id, op, s, p, i, v);
	}
	/* once every view is known: a COPY's plain operand takes theirs */
	for (i = 0; !ret && i < s->nargs; i++)
		if (s->arg[i].elem)
			ret = check_aligned(call, kernel_id, op, s, p, i,
					    first);
	return ret;
}
