// SPDX-License-Identifier: MIT
/*
 * View parameters of a submission.  See viewparam.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "viewparam.h"

static const char *const dtype_names[PTO_DTYPE_COUNT] = {
	[PTO_DTYPE_U8] = "u8",		[PTO_DTYPE_I8] = "i8",
	[PTO_DTYPE_U16] = "u16",	[PTO_DTYPE_I16] = "i16",
	[PTO_DTYPE_F16] = "f16",	[PTO_DTYPE_BF16] = "bf16",
	[PTO_DTYPE_U32] = "u32",	[PTO_DTYPE_I32] = "i32",
	[PTO_DTYPE_F32] = "f32",	[PTO_DTYPE_U64] = "u64",
	[PTO_DTYPE_I64] = "i64",	[PTO_DTYPE_F64] = "f64",
};

const char *pto_dtype_name(uint32_t dtype)
{
	if (dtype >= PTO_DTYPE_COUNT || !dtype_names[dtype])
		return "?";
	return dtype_names[dtype];
}

const char *pto_param_where(const char *call, uint32_t i, char *buf,
			    size_t len)
{
	if (!strcmp(call, "pto_alloc"))
		return "";	/* its one view is the call's argument */
	snprintf(buf, len, "parameter %u: ", i);
	return buf;
}

const char *pto_view_ndim_hint(uint32_t ndim)
{
	return ndim ? "" : "; pto_view_slice() past the end of a dimension, "
			   "or pto_view_slice() or pto_view_transpose() of a "
			   "dimension the view does not have, makes one";
}

static int bad_view(const char *call, uint32_t i, const char *why)
{
	char where[32];

	pto_log("%s: %sview %s\n", call,
		pto_param_where(call, i, where, sizeof(where)), why);
	return -EINVAL;
}

/* What every view needs: a known dtype and 1..PTO_MAX_DIMS dimensions. */
static int check_view_type(const struct pto_view *v, const char *call,
			   uint32_t i)
{
	char where[32];

	if (!v)
		return bad_view(call, i, "is NULL");
	if (!pto_dtype_size(v->dtype)) {
		pto_log("%s: %sview of dtype %u, not one of enum pto_dtype\n",
			call, pto_param_where(call, i, where, sizeof(where)),
			v->dtype);
		return -EINVAL;
	}
	if (v->ndim < 1 || v->ndim > PTO_MAX_DIMS) {
		pto_log("%s: %sview of %u dimensions (1 to %u)%s\n", call,
			pto_param_where(call, i, where, sizeof(where)),
			v->ndim, PTO_MAX_DIMS, pto_view_ndim_hint(v->ndim));
		return -EINVAL;
	}
	return 0;
}

int pto_view_out_bytes(const struct pto_view *v, const char *call,
		       uint32_t i, uint64_t *bytes)
{
	uint64_t n;
	uint32_t d;
	int ret = check_view_type(v, call, i);

	if (ret)
		return ret;
	n = pto_dtype_size(v->dtype);
	for (d = 0; d < v->ndim; d++)
		if (__builtin_mul_overflow(n, v->shape[d], &n))
			return bad_view(call, i, "too large: its bytes "
					"overflow 64 bits");
	if (!n)
		return bad_view(call, i, "to allocate is empty (a 0 in its "
				"shape)");
	*bytes = n;
	return 0;
}

void pto_view_set_allocated(struct pto_view *v, void *addr)
{
	uint64_t stride = 1;
	uint32_t d;

	v->base = addr;
	v->offset = 0;
	for (d = PTO_MAX_DIMS; d-- > 0;) {
		if (d >= v->ndim) {
			v->shape[d] = 1;
			v->stride[d] = 0;
			continue;
		}
		v->stride[d] = stride;
		stride *= v->shape[d];
	}
}

/* The descriptor a kernel receives, but for its address. */
static void fill_desc(struct pto_view_desc *d, const struct pto_view *v)
{
	uint32_t dim;

	memset(d, 0, sizeof(*d));
	d->ndim = v->ndim;
	d->dtype = (uint16_t)v->dtype;
	d->elem_size = (uint16_t)pto_dtype_size(v->dtype);
	for (dim = 0; dim < PTO_MAX_DIMS; dim++) {
		d->shape[dim] = dim < v->ndim ? v->shape[dim] : 1;
		d->stride[dim] = dim < v->ndim ? v->stride[dim] : 0;
	}
}

/* An OUTPUT view: a new buffer of its bytes, laid out row-major. */
static int flatten_out(struct pto_view_params *vp, const char *call,
		       uint32_t i, struct pto_view *v)
{
	struct pto_view_arg *a = &vp->arg[i];
	struct pto_param *f = &vp->flat[i];
	struct pto_view laid_out;
	uint64_t bytes;
	int ret = pto_view_out_bytes(v, call, i, &bytes);

	if (ret)
		return ret;
	memset(f, 0, sizeof(*f));
	f->kind = PTO_PARAM_OUTPUT;
	f->ref = &vp->out[i];
	f->size = bytes;
	a->shaped = false;
	/* the descriptor shows the layout the buffer will have */
	laid_out = *v;
	pto_view_set_allocated(&laid_out, NULL);
	fill_desc(&a->desc, &laid_out);
	return 0;
}

/* A view of existing memory: the byte range it spans, and its shape. */
static int flatten_in(struct pto_view_params *vp, const char *call,
		      uint32_t i, uint32_t kind, const struct pto_view *v)
{
	struct pto_view_arg *a = &vp->arg[i];
	struct pto_param *f = &vp->flat[i];
	uint32_t esize;
	int ret = check_view_type(v, call, i);

	if (ret)
		return ret;
	esize = pto_dtype_size(v->dtype);
	ret = pto_vshape_make(&a->vs, v->offset, v->ndim, v->shape,
			      v->stride, esize);
	if (ret)
		return bad_view(call, i, ret == -EOVERFLOW ?
				"past the end of the address space" :
				"malformed");
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->base = v->base;
	/* an empty view is tracked as nothing, like a 0-byte range */
	f->offset = a->vs.ndim ? a->vs.off : v->offset * esize;
	f->size = a->vs.ndim ? pto_vshape_extent(&a->vs) : 0;
	a->shaped = !pto_vshape_solid(&a->vs);
	fill_desc(&a->desc, v);
	return 0;
}

int pto_view_params_flatten(struct pto_view_params *vp, const char *call,
			    const struct pto_param *p, uint32_t n)
{
	uint32_t i, kind;
	int ret;

	vp->nviews = 0;
	for (i = 0; i < n; i++) {
		vp->is_view[i] = p[i].kind & PTO_PARAM_VIEW;
		if (!vp->is_view[i]) {
			vp->flat[i] = p[i];
			continue;
		}
		kind = p[i].kind & ~(uint32_t)PTO_PARAM_VIEW;
		vp->arg[i].user = p[i].view;
		if (kind == PTO_PARAM_OUTPUT)
			ret = flatten_out(vp, call, i, p[i].view);
		else if (kind <= PTO_PARAM_NODEP)
			ret = flatten_in(vp, call, i, kind, p[i].view);
		else
			ret = bad_view(call, i, "flag on a SCALAR or an "
				       "unknown kind");
		if (ret)
			return ret;
		vp->nviews++;
	}
	return 0;
}

void pto_view_params_commit(struct pto_view_params *vp, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (vp->is_view[i] && vp->flat[i].kind == PTO_PARAM_OUTPUT)
			pto_view_set_allocated(vp->arg[i].user, vp->out[i]);
}
