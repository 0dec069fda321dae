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

/*
 * depths: bit d set when some core has d tasks queued, so that a pick
 * finds the lowest depth in one instruction rather than looking at each
 * depth below it (a core kept 16 deep by NOP tasks cost 16 looks a task).
 */
struct pto_coreload {
	uint32_t depths;
	uint64_t at[PTO_CORE_QUEUE_SLOTS][PTO_CORELOAD_WORDS];
};

static inline void pto_coreload_set(struct pto_coreload *l, uint32_t depth,
				    uint32_t i)
{
	if (depth < PTO_CORE_QUEUE_SLOTS) {
		l->at[depth][i / 64] |= 1ull << (i % 64);
		l->depths |= 1u << depth;
	}
}

static inline void pto_coreload_clear(struct pto_coreload *l,
				      uint32_t depth, uint32_t i)
{
	uint32_t w;

	if (depth >= PTO_CORE_QUEUE_SLOTS)
		return;
	l->at[depth][i / 64] &= ~(1ull << (i % 64));
	if (l->at[depth][i / 64])
		return;
	for (w = 0; w < PTO_CORELOAD_WORDS; w++)
		if (l->at[depth][w])
			return;
	l->depths &= ~(1u << depth);
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
	uint32_t below = max_depth < 32 ? (1u << max_depth) - 1 : ~0u;
	uint32_t d, i;

	if (!(l->depths & below))
		return PTO_CORELOAD_NONE;
	d = (uint32_t)__builtin_ctz(l->depths & below);
	if (n <= 64)
		return pto_coreload_rotate(l->at[d][0], start);
	i = pto_coreload_from(l->at[d], start, n);
	/* depth d has a core: before start, then */
	return i != PTO_CORELOAD_NONE ? i : pto_coreload_from(l->at[d], 0, start);
}

#endif /* PTO_LIB_CORELOAD_H */
