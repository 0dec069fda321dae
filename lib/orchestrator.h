/* SPDX-License-Identifier: MIT */
/*
 * The orchestrator's side of the shared window, shared by the files that
 * make up the orchestrator: orchestrator.c (scopes and submission) and
 * flow.c (waiting on full rings, deadlock diagnosis).
 *
 * Every task ring has its own tails; the scheduler's tails only grow, so a
 * stale copy is a safe, pessimistic view.  The orchestrator works from its
 * copies and re-reads the shared lines only when a ring looks full (or
 * every so often for fresh statistics), which keeps them from bouncing on
 * every submit.
 */
#ifndef PTO_LIB_ORCHESTRATOR_H
#define PTO_LIB_ORCHESTRATOR_H

#include "flow.h"
#include "runtime.h"
#include "stats.h"
#include "sync.h"

/* Free the TensorMap entries of a ring's tasks retired as of our view. */
static inline void orch_tm_sync(struct pto_runtime *rt, uint32_t ring)
{
	struct pto_orch_ring *o = &rt->orch.ring[ring];

	while (o->tm_cleaned < o->last_alive)
		pto_tm_retire_task(&rt->orch.tm,
				   PTO_TASK_HANDLE(ring, o->tm_cleaned++));
}

static inline uint64_t orch_tasks_in_flight(struct pto_runtime *rt,
					    uint32_t ring)
{
	const struct pto_orch_ring *o = &rt->orch.ring[ring];

	return o->next_seq - o->last_alive;
}

static inline uint64_t orch_heap_used(struct pto_runtime *rt, uint32_t ring)
{
	const struct pto_orch_ring *o = &rt->orch.ring[ring];

	return pto_heap_ring_used(rt->win->orch.heap_top[ring], o->heap_tail,
				  o->heap_floor);
}

static inline uint64_t orch_dep_used(struct pto_runtime *rt, uint32_t ring)
{
	return rt->win->orch.dep_top[ring] - rt->orch.ring[ring].dep_tail;
}

/*
 * Raise ring r's high-water marks to what it holds by our view.  That view
 * only grows between two reads of the tails (submissions take, and only
 * the tails give back), so noting it just before the tails are read again
 * records every peak, and costs nothing per task.  A reader during a run
 * also takes what a ring holds now (see get_stats()).
 */
static inline void orch_note_high_water(struct pto_runtime *rt, uint32_t r)
{
	pto_stats_note_use(rt, r, PTO_RING_TASK, orch_tasks_in_flight(rt, r));
	pto_stats_note_use(rt, r, PTO_RING_DEP, orch_dep_used(rt, r));
	pto_stats_note_use(rt, r, PTO_RING_TENSORMAP,
			   rt->orch.tm.ring[r].live);
	pto_stats_note_use(rt, r, PTO_RING_HEAP, orch_heap_used(rt, r));
}

/*
 * Read the scheduler's tails afresh, and free the TensorMap entries of the
 * tasks they show retired: the TensorMap's view never lags the one the
 * slot checks use, so a slot's previous task is always freed before the
 * slot is reused.  Every change of the view passes here (the high-water
 * marks rely on it).
 */
static inline void orch_refresh_tails(struct pto_runtime *rt)
{
	struct pto_window_sched *ws = &rt->win->sched;
	uint32_t r;

	for (r = 0; r < rt->nrings; r++) {
		struct pto_orch_ring *o = &rt->orch.ring[r];

		orch_note_high_water(rt, r);
		o->last_alive = load_acquire(&ws->last_task_alive[r]);
		o->heap_tail = load_acquire(&ws->heap_tail[r]);
		o->dep_tail = load_acquire(&ws->dep_tail[r]);
		orch_tm_sync(rt, r);
	}
}

/*
 * Make every task submitted and every scope end reported so far visible
 * to the scheduler.  Both go out in batches (see publish() in
 * orchestrator.c), and always before the orchestrator waits or ends the
 * run, or when the scheduler sleeps, so the scheduler never waits for
 * something the orchestrator holds back.  Each store to the notify line
 * takes the line from the scheduler's CPU, which polls it: one per batch,
 * not one per task or scope.  Tasks go first: a scope end covers only
 * published tasks.
 */
static inline void orch_flush_published(struct pto_runtime *rt)
{
	struct pto_window_notify *wn = &rt->win->notify;

	if (wn->task_head != rt->orch.next_id)
		store_release(&wn->task_head, rt->orch.next_id);
	if (wn->release_head != rt->orch.release_head)
		store_release(&wn->release_head, rt->orch.release_head);
}

/* Tell the scheduler there is work, and wake it if it sleeps. */
static inline void orch_wake_scheduler(struct pto_runtime *rt)
{
	struct pto_window_header *w = rt->win;

	WRITE_ONCE(w->notify.sched_wake, w->notify.sched_wake + 1);
	/* the bump before the sleeping load; pairs with the scheduler's */
	smp_mb();
	if (READ_ONCE(w->sched_flags.sleeping))
		rt->be.ops->notify(&rt->be);
}

/* Place bytes in a ring's heap by the cached view; false: no room yet. */
static inline bool orch_heap_place(struct pto_runtime *rt, uint32_t ring,
				   uint64_t bytes, struct pto_heap_alloc *ha)
{
	const struct pto_orch_ring *o = &rt->orch.ring[ring];

	return pto_heap_ring_fit(rt->ring[ring].heap_size,
				 rt->win->orch.heap_top[ring], o->heap_tail,
				 o->heap_floor, bytes, ha);
}

static inline bool orch_slot_fits(struct pto_runtime *rt, uint32_t ring)
{
	return orch_tasks_in_flight(rt, ring) < rt->ring[ring].task_window;
}

static inline bool orch_dep_fits(struct pto_runtime *rt, uint32_t ring,
				 uint64_t entries)
{
	return orch_dep_used(rt, ring) + entries <=
	       rt->ring[ring].dep_pool_size;
}

static inline bool orch_tm_fits(struct pto_runtime *rt, uint32_t ring,
				uint64_t entries)
{
	return pto_tm_free_entries(&rt->orch.tm, ring) >= entries;
}

/* The task ring of the innermost open scope: where tasks go now. */
static inline uint32_t orch_ring(struct pto_runtime *rt)
{
	return rt->orch.scopes[rt->orch.nscopes - 1].ring;
}

#endif /* PTO_LIB_ORCHESTRATOR_H */
