/* SPDX-License-Identifier: MIT */
/*
 * A bounded queue of task handles that any number of threads push to and
 * pop from without a lock: each cell carries a sequence number that says
 * whose turn it is (a pusher's when it equals the position, a popper's
 * when it equals the position + 1), and pushers and poppers each claim
 * positions with a compare-and-swap on their own cache line.  A preempted
 * thread therefore never holds up the others, which a spinning lock would
 * on a host with fewer CPUs than threads.  Cells store the sequence minus
 * their index, so that a zeroed cell is ready for its first push and the
 * queue's pages are touched only as it is used.
 */
#ifndef PTO_LIB_MPMC_H
#define PTO_LIB_MPMC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "sync.h"

struct pto_mpmc_cell {
	uint64_t seq;
	uint64_t val;
};

struct pto_mpmc {
	PTO_OWN_LINES uint64_t tail;	/* next position to push */
	PTO_OWN_LINES uint64_t head;	/* next position to pop */
	PTO_OWN_LINES struct pto_mpmc_cell *cell;
	uint64_t mask;
};

/* size: a power of two, at least the most handles ever queued at once */
static inline int pto_mpmc_init(struct pto_mpmc *q, uint64_t size)
{
	q->cell = calloc(size, sizeof(*q->cell));
	if (!q->cell)
		return -1;
	q->mask = size - 1;
	q->head = 0;
	q->tail = 0;
	return 0;
}

static inline void pto_mpmc_fini(struct pto_mpmc *q)
{
	free(q->cell);
	q->cell = NULL;
}

/* False when full (the caller sized the queue so that it never is). */
static inline bool pto_mpmc_push(struct pto_mpmc *q, uint64_t v)
{
	uint64_t pos = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
	struct pto_mpmc_cell *c;

	for (;;) {
		int64_t lag;

		c = &q->cell[pos & q->mask];
		lag = (int64_t)(load_acquire(&c->seq) + (pos & q->mask) - pos);
		if (lag < 0)
			return false;	/* a lap behind: full */
		if (lag > 0) {		/* taken meanwhile */
			pos = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
			continue;
		}
		if (__atomic_compare_exchange_n(&q->tail, &pos, pos + 1, true,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	__atomic_store_n(&c->val, v, __ATOMIC_RELAXED);	/* see pop_if */
	store_release(&c->seq, pos + 1 - (pos & q->mask));
	return true;
}

/* False when empty. */
static inline bool pto_mpmc_pop(struct pto_mpmc *q, uint64_t *v)
{
	uint64_t pos = __atomic_load_n(&q->head, __ATOMIC_RELAXED);
	struct pto_mpmc_cell *c;

	for (;;) {
		int64_t lag;

		c = &q->cell[pos & q->mask];
		lag = (int64_t)(load_acquire(&c->seq) + (pos & q->mask) -
				(pos + 1));
		if (lag < 0)
			return false;	/* not pushed yet: empty */
		if (lag > 0) {
			pos = __atomic_load_n(&q->head, __ATOMIC_RELAXED);
			continue;
		}
		if (__atomic_compare_exchange_n(&q->head, &pos, pos + 1, true,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	*v = c->val;
	/* the cell is the pushers' again, one lap on */
	store_release(&c->seq, pos + q->mask + 1 - (pos & q->mask));
	return true;
}

/*
 * Pop the oldest handle only if accept(ctx, handle) says so; false when empty
 * or when it does not.  The handle is read before it is claimed: a cell
 * that has been pushed keeps its value until its position is popped, and
 * a claim that succeeds proves nobody popped it, so the value judged is
 * the value taken.  accept() may see a value another popper takes meanwhile
 * (then the claim fails and the next one is judged).
 */
static inline bool pto_mpmc_pop_if(struct pto_mpmc *q, uint64_t *v,
				   bool (*accept)(void *ctx, uint64_t v),
				   void *ctx)
{
	uint64_t pos = __atomic_load_n(&q->head, __ATOMIC_RELAXED), val;
	struct pto_mpmc_cell *c;

	for (;;) {
		int64_t lag;

		c = &q->cell[pos & q->mask];
		lag = (int64_t)(load_acquire(&c->seq) + (pos & q->mask) -
				(pos + 1));
		if (lag < 0)
			return false;	/* not pushed yet: empty */
		if (lag > 0) {
			pos = __atomic_load_n(&q->head, __ATOMIC_RELAXED);
			continue;
		}
		val = __atomic_load_n(&c->val, __ATOMIC_RELAXED);
		if (!accept(ctx, val))
			return false;
		if (__atomic_compare_exchange_n(&q->head, &pos, pos + 1, true,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	*v = val;
	store_release(&c->seq, pos + q->mask + 1 - (pos & q->mask));
	return true;
}

/* A hint: true when a pop might find something. */
static inline bool pto_mpmc_maybe_nonempty(const struct pto_mpmc *q)
{
	return __atomic_load_n(&q->head, __ATOMIC_RELAXED) !=
	       __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
}

#endif /* PTO_LIB_MPMC_H */
