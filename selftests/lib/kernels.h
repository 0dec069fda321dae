/* SPDX-License-Identifier: MIT */
/*
 * C kernels the integration tests share.  Each is deterministic and its
 * result depends on the order it runs in relative to the other writers and
 * readers of its regions, so any reordering the runtime gets wrong shows up
 * as a difference from the sequential reference.  Words are uint64_t.
 *
 * Every kernel is registered once per worker type, as KID(kernel, type),
 * so a test can spread a DAG over all types.
 */
#ifndef PTO_SELFTESTS_KERNELS_H
#define PTO_SELFTESTS_KERNELS_H

#include <string.h>

#include "testlib.h"

enum {
	K_FILL = 1,	/* dst, nwords, seed: dst[i] = mix(seed + i) */
	K_STEP,		/* INOUT dst, nwords, tag: dst[i] = mix(dst[i] ^ tag + i) */
	K_MAP,		/* dst, src, nwords, tag: dst[i] = mix(src[i] + tag) */
	K_MIX2,		/* INOUT dst, x, y, nwords, tag */
	K_COMBINE,	/* dst, src, tag: dst[0] = mix(31 src[0] + src[1] + tag) */
	K_SCALARS,	/* dst, v...: dst[i] = v[i] */
	K_FILLB,	/* dst, nbytes, seed: bytes of mix(seed + i) */
	K_COPYB,	/* dst, src, nbytes */
	K_MANY,		/* dst, nin, in[nin]..., scalars...: dst[0] = hash */
	K_NKERNELS
};

#define KID(k, type) ((uint32_t)(k) + 10 * (uint32_t)(type))

#define W(a) ((uint64_t *)(uintptr_t)(a))

static void k_fill(const uint64_t *a, uint32_t n)
{
	for (uint64_t i = 0; i < a[1]; i++)
		W(a[0])[i] = tl_mix(a[2] + i);
}

static void k_step(const uint64_t *a, uint32_t n)
{
	for (uint64_t i = 0; i < a[1]; i++)
		W(a[0])[i] = tl_mix(W(a[0])[i] ^ (a[2] + i));
}

static void k_map(const uint64_t *a, uint32_t n)
{
	for (uint64_t i = 0; i < a[2]; i++)
		W(a[0])[i] = tl_mix(W(a[1])[i] + a[3]);
}

static void k_mix2(const uint64_t *a, uint32_t n)
{
	for (uint64_t i = 0; i < a[3]; i++)
		W(a[0])[i] = tl_mix(W(a[0])[i] + 3 * W(a[1])[i] +
				    7 * W(a[2])[i] + a[4]);
}

static void k_combine(const uint64_t *a, uint32_t n)
{
	W(a[0])[0] = tl_mix(31 * W(a[1])[0] + W(a[1])[1] + a[2]);
}

static void k_scalars(const uint64_t *a, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		W(a[0])[i - 1] = a[i];
}

static void k_fillb(const uint64_t *a, uint32_t n)
{
	uint8_t *d = (uint8_t *)(uintptr_t)a[0];

	for (uint64_t i = 0; i < a[1]; i++)
		d[i] = (uint8_t)tl_mix(a[2] + i);
}

static void k_copyb(const uint64_t *a, uint32_t n)
{
	memcpy((void *)(uintptr_t)a[0], (void *)(uintptr_t)a[1], a[2]);
}

static void k_many(const uint64_t *a, uint32_t n)
{
	uint64_t h = n, i;

	for (i = 2; i < 2 + a[1]; i++)
		h = tl_mix(h ^ W(a[i])[0]);
	for (; i < n; i++)
		h = tl_mix(h ^ a[i]);
	W(a[0])[0] = h;
}

static const pto_kernel_fn test_kernels[K_NKERNELS] = {
	[K_FILL] = k_fill, [K_STEP] = k_step, [K_MAP] = k_map,
	[K_MIX2] = k_mix2, [K_COMBINE] = k_combine,
	[K_SCALARS] = k_scalars, [K_FILLB] = k_fillb, [K_COPYB] = k_copyb,
	[K_MANY] = k_many,
};

/* Register every test kernel on every worker type; 0 or the first error. */
static inline int register_test_kernels(struct tl_rec *r)
{
	int k, t, ret;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		for (k = 1; k < K_NKERNELS; k++) {
			ret = tl_register(r, KID(k, t), t, test_kernels[k],
					  "test");
			if (ret)
				return ret;
		}
	return 0;
}

#define NPARAMS(...) \
	(uint32_t)(sizeof((struct pto_param[]){ __VA_ARGS__ }) / \
		   sizeof(struct pto_param))

/* Submit kernel k on type t through the recorder; returns the task id. */
#define SUBMIT(r, k, t, ...)						\
	tl_submit(r, KID(k, t), t, (struct pto_param[]){ __VA_ARGS__ },	\
		  NPARAMS(__VA_ARGS__))

/* SUBMIT() that makes the orchestration return the error. */
#define SUBMIT_OR_RETURN(r, k, t, ...) do {				\
	int64_t id_ = SUBMIT(r, k, t, __VA_ARGS__);			\
	if (id_ < 0)							\
		return (int)id_;					\
} while (0)

#endif /* PTO_SELFTESTS_KERNELS_H */
