/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's view of how loaded each core of one worker type is: a
 * bitmap per queue depth (bit i of depth d set when core first + i has d
 * tasks queued).  Finding the least loaded core with room then costs a
 * few word operations whatever the number of cores, where looking at
 * every core made a dispatch cost grow with the device (a task that
 * waited for one idle core among 72 looked at up to 72 counters).
 */
#ifndef PTO_LIB_CORELOAD_H
#define PTO_LIB_CORELOAD_H

#include <stdint.h>

#include <pto/pto_uapi.h>

#include "ringsize.h"	/* PTO_CORES_PER_TYPE_MAX */

#define PTO_CORELOAD_WORDS (PTO_CORES_PER_TYPE_MAX / 64)
#define PTO_CORELOAD_NONE UINT32_MAX

struct pto_coreload {
	uint64_t at[PTO_CORE_QUEUE_SLOTS][PTO_CORELOAD_WORDS];
};

static inline void pto_coreload_set(struct pto_coreload *l, uint32_t depth,
				    uint32_t i)
{
	if (depth < PTO_CORE_QUEUE_SLOTS)
		l->at[depth][i / 64] |= 1ull << (i % 64);
}

static inline void pto_coreload_clear(struct pto_coreload *l,
				      uint32_t depth, uint32_t i)
{
	if (depth < PTO_CORE_QUEUE_SLOTS)
		l->at[depth][i / 64] &= ~(1ull << (i % 64));
}

/* Every one of n cores idle. */
static inline void pto_coreload_init(struct pto_coreload *l, uint32_t n)
{
	uint32_t i;

	*l = (struct pto_coreload){ 0 };
	for (i = 0; i < n; i++)
		pto_coreload_set(l, 0, i);
}

/* Core i's queue went from depth from to depth to. */
static inline void pto_coreload_move(struct pto_coreload *l, uint32_t i,
				     uint32_t from, uint32_t to)
{
	pto_coreload_clear(l, from, i);
	pto_coreload_set(l, to, i);
}

/* The first set bit of bits at or after start, else PTO_CORELOAD_NONE. */
static inline uint32_t pto_coreload_from(const uint64_t *bits,
					 uint32_t start, uint32_t n)
{
	uint32_t w = start / 64, words = (n + 63) / 64;
	uint64_t v;

	if (start >= n)
		return PTO_CORELOAD_NONE;
	v = bits[w] & (~0ull << (start % 64));
	for (;;) {
		if (v)
			return w * 64 + (uint32_t)__builtin_ctzll(v);
		if (++w >= words)
			return PTO_CORELOAD_NONE;
		v = bits[w];
	}
}

/* The first set bit of v at or after bit start, else the first one. */
static inline uint32_t pto_coreload_rotate(uint64_t v, uint32_t start)
{
	uint64_t after = v & (~0ull << start);

	return (uint32_t)__builtin_ctzll(after ? after : v);
}

/*
 * The core with the fewest queued tasks, fewer than max_depth, the first
 * at or after start (wrapping) among those: rotating start spreads work
 * over equally loaded cores.  PTO_CORELOAD_NONE when every core has
 * max_depth queued (at most PTO_CORE_QUEUE_SLOTS).
 * Up to 64 cores of a type (every device so far) take one word a depth.
 */
static inline uint32_t pto_coreload_pick(const struct pto_coreload *l,
					 uint32_t n, uint32_t start,
					 uint32_t max_depth)
{
	uint32_t d, i;

	for (d = 0; d < max_depth; d++) {
		if (n <= 64) {
			if (l->at[d][0])
				return pto_coreload_rotate(l->at[d][0], start);
			continue;
		}
		i = pto_coreload_from(l->at[d], start, n);
		if (i == PTO_CORELOAD_NONE && start)
			i = pto_coreload_from(l->at[d], 0, start);
		if (i != PTO_CORELOAD_NONE)
			return i;
	}
	return PTO_CORELOAD_NONE;
}

#endif /* PTO_LIB_CORELOAD_H */
