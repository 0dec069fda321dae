/* SPDX-License-Identifier: MIT */
/*
 * View parameters of a submission (PTO_PARAM_VIEW): checked, then turned
 * into the byte-range parameters the rest of the orchestrator knows, with
 * what only views have kept beside them: the canonical shape the
 * TensorMap tracks, and the struct pto_view_desc the kernel receives.
 *
 * A submission without views never comes here but for one test of each
 * parameter's kind (pto_params_have_views()).
 */
#ifndef PTO_LIB_VIEWPARAM_H
#define PTO_LIB_VIEWPARAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pto/pto.h>

#include "view.h"

/**
 * struct pto_view_arg - what a view parameter adds to its byte range
 * @vs: its bytes from the tensor's base, canonical
 * @desc: what its kernel receives (@desc.addr is set when the task is
 *	filled in)
 * @user: the caller's view (an OUTPUT view is filled in on success)
 * @shaped: tracked with its shape (not one solid range)
 */
struct pto_view_arg {
	struct pto_vshape vs;
	struct pto_view_desc desc;
	struct pto_view *user;
	bool shaped;
};

/**
 * struct pto_view_params - a submission's parameters, views flattened
 * @flat: the parameters, each view as the byte range it spans (an OUTPUT
 *	view as an OUTPUT of its bytes whose ref is @out[i])
 * @is_view: parameter i was a view; @arg[i] holds the rest of it
 * @nviews: view parameters
 * @out: where OUTPUT views receive their buffer's host address
 * @arg: per view parameter
 */
struct pto_view_params {
	struct pto_param flat[PTO_MAX_PARAMS];
	bool is_view[PTO_MAX_PARAMS];
	uint32_t nviews;
	void *out[PTO_MAX_PARAMS];
	struct pto_view_arg arg[PTO_MAX_PARAMS];
};

static inline bool pto_params_have_views(const struct pto_param *p,
					 uint32_t n)
{
	uint32_t i, kinds = 0;

	for (i = 0; i < n; i++)
		kinds |= p[i].kind;
	return kinds & PTO_PARAM_VIEW;
}

/*
 * Check the view parameters of p[0..n) and fill vp.  -EINVAL with a
 * message naming the parameter for a bad view (call names the API call).
 */
int pto_view_params_flatten(struct pto_view_params *vp, const char *call,
			    const struct pto_param *p, uint32_t n);

/*
 * Check a view that is to be allocated (pto_alloc(), PTO_OUT_VIEW()): its
 * dtype, ndim and shape; *bytes is its size.  -EINVAL with a message.
 */
/*
 * "parameter I: " for a message of call about its parameter i, or "" for
 * pto_alloc(), whose one view is the call's argument; buf holds len bytes.
 */
const char *pto_param_where(const char *call, uint32_t i, char *buf,
			    size_t len);

/* For a message about a view of ndim dimensions: how one gets 0, or "". */
const char *pto_view_ndim_hint(uint32_t ndim);

int pto_view_out_bytes(const struct pto_view *v, const char *call,
		       uint32_t i, uint64_t *bytes);

/* A freshly allocated view at host address addr: base, offset, strides. */
void pto_view_set_allocated(struct pto_view *v, void *addr);

/* After a successful submission: fill in its OUTPUT views. */
void pto_view_params_commit(struct pto_view_params *vp, uint32_t n);

#endif /* PTO_LIB_VIEWPARAM_H */
