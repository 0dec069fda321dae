/* SPDX-License-Identifier: MIT */
/*
 * How briefly each kernel's tasks have run lately, as the scheduler learns
 * it from their completions, for two of its choices.
 *
 * Short (the last task ran under PTO_PACE_SHORT_NS): retirements may wait
 * for the core thread's next task before they are published (see
 * publish_can_wait() in scheduler.c).
 *
 * Tiny: how deep a core's queue may be for the kernel's tasks.  Every
 * scheduling round (reap, dispatch, kick) has a cost of its own, which a
 * deep queue spreads over more tasks: NOP BGEMM took about 145 ns a task
 * with four tasks a round and 125 with sixteen.  But a queued task waits
 * for those before it on its core, however idle the others are: a kernel
 * of 0.2 us calls, one in a hundred taking 1.6 ms, ran a width-16 stencil
 * at 0.56 of the machine instead of 0.60 with sixteen for every kernel
 * that had just run briefly.  So a kernel's tasks fill the queue
 * only once PTO_PACE_TINY_STREAK of them ran under PTO_PACE_TINY_NS with
 * none of PTO_PACE_LONG_NS or more in between; a kernel not seen yet gets
 * PTO_PACE_SHALLOW.  Times in between neither count nor reset the
 * streak: a core thread's completion times include the scheduling it did
 * just before the task, now and then a microsecond.
 *
 * Long: a kernel whose last task ran PTO_PACE_LONG_NS or more queues
 * PTO_PACE_LONG_DEPTH deep, the task running and the next: that next one
 * starts without a scheduling round between, which is all a queue buys a
 * long task, and no more wait behind a call that runs long.  Kernels of
 * 20-50 us with one call in 10-20 running 20-40 times longer ran a
 * width-16 stencil at 0.89-0.96 of the machine four deep, 0.96-0.98 two
 * deep (FFT 0.83-0.91 and 0.90-0.97).
 */
#ifndef PTO_LIB_PACE_H
#define PTO_LIB_PACE_H

#include <stdbool.h>
#include <stdint.h>

#include <pto/pto_uapi.h>

#define PTO_PACE_SHORT_NS	2000
#define PTO_PACE_TINY_NS	500
#define PTO_PACE_LONG_NS	10000
#define PTO_PACE_TINY_STREAK	256
#define PTO_PACE_SHALLOW	4
#define PTO_PACE_LONG_DEPTH	2

#if PTO_PACE_SHALLOW > PTO_CORE_QUEUE_SLOTS
#error "a shallow queue must fit the device's"
#endif

struct pto_pace {
	uint64_t short_kernels[PTO_MAX_KERNELS / 64];	/* bit per kernel */
	uint64_t tiny_kernels[PTO_MAX_KERNELS / 64];	/* bit per kernel */
	uint64_t long_kernels[PTO_MAX_KERNELS / 64];	/* bit per kernel */
	uint16_t tiny_streak[PTO_MAX_KERNELS];
	/* every kernel's depth, 0: learnt as above (tests set it) */
	uint32_t fixed_depth;
};

static inline bool pto_pace_bit(const uint64_t *map, uint32_t k)
{
	return map[k % PTO_MAX_KERNELS / 64] & 1ull << (k % 64);
}

static inline void pto_pace_set_bit(uint64_t *map, uint32_t k, bool on)
{
	uint64_t *word = &map[k % PTO_MAX_KERNELS / 64];
	uint64_t bit = 1ull << (k % 64);

	*word = on ? *word | bit : *word & ~bit;
}

/* A task of kernel k ran for ns. */
static inline void pto_pace_note(struct pto_pace *p, uint32_t k, uint64_t ns)
{
	uint16_t *streak = &p->tiny_streak[k % PTO_MAX_KERNELS];

	pto_pace_set_bit(p->short_kernels, k, ns < PTO_PACE_SHORT_NS);
	pto_pace_set_bit(p->long_kernels, k, ns >= PTO_PACE_LONG_NS);
	if (ns >= PTO_PACE_LONG_NS)
		*streak = 0;
	else if (ns < PTO_PACE_TINY_NS && *streak < PTO_PACE_TINY_STREAK)
		++*streak;
	pto_pace_set_bit(p->tiny_kernels, k,
			 *streak == PTO_PACE_TINY_STREAK);
}

static inline bool pto_pace_short(const struct pto_pace *p, uint32_t k)
{
	return pto_pace_bit(p->short_kernels, k);
}

/* Tasks a core may have queued, this one included, for kernel k's next. */
static inline uint32_t pto_pace_depth(const struct pto_pace *p, uint32_t k)
{
	if (p->fixed_depth)
		return p->fixed_depth;
	if (pto_pace_bit(p->tiny_kernels, k))
		return PTO_CORE_QUEUE_SLOTS;
	return pto_pace_bit(p->long_kernels, k) ? PTO_PACE_LONG_DEPTH :
						  PTO_PACE_SHALLOW;
}

#endif /* PTO_LIB_PACE_H */
