/* SPDX-License-Identifier: MIT */
/*
 * The sizes a task ring's resources may take, shared by libpto (which
 * refuses a configuration outside them) and by whatever advises a size
 * (pto_print_stats(), ptotop): advice the runtime would then refuse is
 * worse than none.
 */
#ifndef PTO_UTIL_RINGSIZE_H
#define PTO_UTIL_RINGSIZE_H

#include <stdint.h>

#include <pto/pto.h>

#define PTO_TASK_WINDOW_MIN	4u
#define PTO_TASK_WINDOW_MAX	(1u << 24)	/* a power of two too */
#define PTO_HEAP_SIZE_MIN	4096ull
#define PTO_HEAP_SIZE_MAX	(1ull << 40)
#define PTO_DEP_POOL_MIN	16u
#define PTO_DEP_POOL_MAX	((1u << 30) - 2)	/* 30-bit links */
#define PTO_TENSORMAP_POOL_MIN	16u
#define PTO_TENSORMAP_POOL_MAX	(1u << 30)

/* The other bounds a configuration (and so a tool's option) must keep. */
#define PTO_CORES_PER_TYPE_MAX	256	/* cores of one type, tracked */
#define PTO_ARENA_SIZE_MAX	(1ull << 40)	/* pto_malloc arena */

/* The smallest and largest size of a resource of kind k. */
static inline uint64_t pto_ring_size_min(enum pto_ring k)
{
	switch (k) {
	case PTO_RING_TASK:
		return PTO_TASK_WINDOW_MIN;
	case PTO_RING_HEAP:
		return PTO_HEAP_SIZE_MIN;
	case PTO_RING_DEP:
		return PTO_DEP_POOL_MIN;
	default:
		return PTO_TENSORMAP_POOL_MIN;
	}
}

static inline uint64_t pto_ring_size_max(enum pto_ring k)
{
	switch (k) {
	case PTO_RING_TASK:
		return PTO_TASK_WINDOW_MAX;
	case PTO_RING_HEAP:
		return PTO_HEAP_SIZE_MAX;
	case PTO_RING_DEP:
		return PTO_DEP_POOL_MAX;
	default:
		return PTO_TENSORMAP_POOL_MAX;
	}
}

/*
 * The size of kind k nearest to v that a configuration may ask for: at
 * least the minimum, at most the maximum, and for a task window a power
 * of two (rounded up).
 */
static inline uint64_t pto_ring_size_fit(enum pto_ring k, uint64_t v)
{
	uint64_t lo = pto_ring_size_min(k), hi = pto_ring_size_max(k), p = 1;

	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	if (k == PTO_RING_TASK) {
		while (p < v)
			p <<= 1;
		v = p;
	}
	return v;
}

#endif /* PTO_UTIL_RINGSIZE_H */
