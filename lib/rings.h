/* SPDX-License-Identifier: MIT */
/*
 * Ring arithmetic shared by the orchestrator and the scheduler.
 *
 * Every ring position is a monotonic 64-bit counter; the slot or byte
 * offset is the position modulo the ring size.  Full and empty are then
 * never ambiguous, and the scheduler's tails are plain high-water marks.
 */
#ifndef PTO_LIB_RINGS_H
#define PTO_LIB_RINGS_H

#include <stdbool.h>
#include <stdint.h>

#define PTO_HEAP_ALIGN 64

static inline uint64_t pto_align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static inline bool pto_is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static inline uint64_t pto_next_pow2(uint64_t x)
{
	uint64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/*
 * Heap ring.  top and tail are byte positions; the live allocations lie in
 * [max(tail, floor), top).  One task's outputs are one contiguous block
 * that never straddles the end of the ring: a block that would is placed at
 * the next multiple of size instead (the skipped bytes count as used until
 * the tail passes them).
 *
 * floor lets the orchestrator restart at a ring boundary when the ring is
 * empty without the scheduler's help: nothing below floor is live.
 */
struct pto_heap_alloc {
	uint64_t start;		/* position of the block */
	uint64_t end;		/* new top */
	uint64_t offset;	/* start % size: the block's byte offset */
};

/*
 * Try to place n bytes.  Returns true and fills *out when they fit now.
 * n must be <= size (callers reject larger requests with -E2BIG).
 */
static inline bool pto_heap_ring_fit(uint64_t size, uint64_t top,
				     uint64_t tail, uint64_t floor, uint64_t n,
				     struct pto_heap_alloc *out)
{
	uint64_t live = tail > floor ? tail : floor;
	uint64_t off = top % size;
	uint64_t start = top;

	/*
	 * Empty (live >= top): everything is free, so start again at the
	 * ring boundary, on the pages (and cache lines) used last, rather
	 * than touch new ones: a loop of small runs or of scopes that each
	 * drain the ring then keeps one page resident, not the whole ring.
	 */
	if (off + n > size || (live >= top && off)) {
		start = top - off + size;	/* skip to the ring boundary */
		off = 0;
	}
	if (live < top && start + n - live > size)
		return false;
	out->start = start;
	out->end = start + n;
	out->offset = off;
	return true;
}

/* Bytes the heap ring holds (live data plus skipped bytes). */
static inline uint64_t pto_heap_ring_used(uint64_t top, uint64_t tail,
					  uint64_t floor)
{
	uint64_t live = tail > floor ? tail : floor;

	return top > live ? top - live : 0;
}

/* Per-worker-type FIFO of ready task ids (scheduler-private). */
struct pto_ready_queue {
	uint64_t *ids;
	uint32_t mask;
	uint64_t head;	/* next to pop */
	uint64_t tail;	/* next to push */
};

static inline bool pto_rq_empty(const struct pto_ready_queue *q)
{
	return q->head == q->tail;
}

static inline uint64_t pto_rq_len(const struct pto_ready_queue *q)
{
	return q->tail - q->head;
}

/* Capacity is the task window: a task is in at most one queue once. */
static inline void pto_rq_push(struct pto_ready_queue *q, uint64_t id)
{
	q->ids[q->tail++ & q->mask] = id;
}

static inline uint64_t pto_rq_peek(const struct pto_ready_queue *q)
{
	return q->ids[q->head & q->mask];
}

static inline uint64_t pto_rq_pop(struct pto_ready_queue *q)
{
	return q->ids[q->head++ & q->mask];
}

#endif /* PTO_LIB_RINGS_H */
