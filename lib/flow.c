// SPDX-License-Identifier: MIT
/*
 * Flow control: the orchestrator waits for room in a ring, and when
 * nothing can make room, explains the deadlock instead of hanging.
 *
 * A wait spins briefly, then sleeps on the scheduler's progress counter.
 * Any progress (a task ran, a tail moved) restarts the stall clock, so
 * only a state in which nothing at all happens for stall_timeout_ms is
 * reported as a deadlock.
 */
#include <errno.h>
#include <inttypes.h>

#include "config.h"
#include "log.h"
#include "orchestrator.h"
#include "stats.h"
#include "trace.h"

/* Spins before the orchestrator sleeps on a full ring. */
#define ORCH_SPINS 256
/* Does n fit by the cached view (the TensorMap's: as of its last sync)? */
static bool fits(struct pto_runtime *rt, const struct pto_need *n)
{
	struct pto_heap_alloc ha;

	switch (n->ring) {
	case PTO_RING_TASK:
		return orch_tasks_in_flight(rt) < (uint64_t)rt->cfg.task_window;
	case PTO_RING_HEAP:
		return orch_heap_place(rt, n->amount, &ha);
	case PTO_RING_DEP:
		return orch_dep_fits(rt, n->amount);
	case PTO_RING_TENSORMAP:
		orch_tm_sync(rt);
		return orch_tm_fits(rt, n->amount);
	default:
		return true;
	}
}

/* Does n fit, by the cached view or else by a fresh one? */
static bool need_met(struct pto_runtime *rt, const struct pto_need *n)
{
	if (fits(rt, n))
		return true;
	orch_refresh_tails(rt);
	return fits(rt, n);
}

static uint64_t ring_capacity(struct pto_runtime *rt, enum pto_ring ring)
{
	switch (ring) {
	case PTO_RING_TASK:
		return rt->cfg.task_window;
	case PTO_RING_HEAP:
		return rt->heap_ring_size;
	case PTO_RING_DEP:
		return rt->dep_pool_size;
	default:
		return rt->orch.tm.pool_size;
	}
}

static uint64_t ring_in_use(struct pto_runtime *rt, enum pto_ring ring)
{
	switch (ring) {
	case PTO_RING_TASK:
		return orch_tasks_in_flight(rt);
	case PTO_RING_HEAP:
		return orch_heap_used(rt);
	case PTO_RING_DEP:
		return orch_dep_used(rt);
	default:
		return rt->orch.tm.live;
	}
}

/*
 * Nothing ran or retired for the stall timeout while we waited: explain
 * which ring is exhausted, what holds it and what size would let the
 * program through.
 */
static void diagnose_deadlock(struct pto_runtime *rt, const struct pto_need *n,
			      uint64_t waited_ms)
{
	struct pto_window_sched *ws = &rt->win->sched;
	uint64_t cap = ring_capacity(rt, n->ring);
	uint64_t used = ring_in_use(rt, n->ring);
	uint64_t inner = 0, want, active, waiting, scanned;
	const struct pto_scope *sc = NULL;

	orch_refresh_tails(rt);
	if (rt->orch.nscopes) {
		sc = &rt->orch.scopes[rt->orch.nscopes - 1];
		inner = rt->orch.next_id - sc->begin;
	}
	want = used + n->amount;
	if (n->ring == PTO_RING_TASK || n->ring == PTO_RING_HEAP)
		want = pto_next_pow2(want + (n->ring == PTO_RING_TASK));

	pto_log("deadlock: the %s is exhausted and nothing can free it "
		"(no progress for %" PRIu64 " ms)\n",
		pto_ring_name(n->ring), waited_ms);
	pto_log("  %s: size %" PRIu64 ", in use %" PRIu64 ", requested %"
		PRIu64 "\n", pto_ring_name(n->ring), cap, used, n->amount);
	/* the scheduler's counters, read racily: good enough to explain */
	active = READ_ONCE(ws->active);
	waiting = READ_ONCE(ws->waiting);
	scanned = READ_ONCE(ws->tasks_scanned);
	pto_log("  tasks in flight: %" PRIu64 " (%" PRIu64 " ready or running, %"
		PRIu64 " waiting for producers, %" PRIu64
		" completed but held by their scope or consumers)\n",
		orch_tasks_in_flight(rt), active > waiting ? active - waiting : 0,
		waiting, scanned - rt->orch.last_alive > active ?
		scanned - rt->orch.last_alive - active : 0);
	pto_log("  open scopes: %u; the innermost has submitted %" PRIu64
		" tasks, which it holds until it ends\n", rt->orch.nscopes,
		inner);
	pto_log("  a %s of at least %" PRIu64 " would let this run on "
		"(%s=%" PRIu64 "), or end scopes sooner\n",
		pto_ring_name(n->ring), want, pto_ring_env(n->ring), want);
}

int pto_flow_wait(struct pto_runtime *rt, const struct pto_need *n)
{
	struct pto_window_header *w = rt->win;
	struct pto_ring_stats *rs = &rt->st.ring[n->ring];
	uint64_t t0, deadline, timeout_ns;
	uint32_t seen;
	int i;

	if (need_met(rt, n))
		return 0;
	orch_flush_published(rt);	/* what we wait for may need them to run */
	STAT_ADD(rs->stalls, 1);
	t0 = pto_now_ns();
	timeout_ns = (uint64_t)rt->cfg.stall_timeout_ms * 1000000ull;
	deadline = t0 + timeout_ns;
	seen = load_acquire(&w->sched.progress);
	for (;;) {
		for (i = 0; i < ORCH_SPINS && !need_met(rt, n); i++)
			cpu_relax();
		if (i < ORCH_SPINS)
			break;
		if (READ_ONCE(w->sched_flags.error))
			goto cancelled;
		orch_wake_scheduler(rt);
		WRITE_ONCE(w->orch_flags.sleeping, 1);
		smp_mb();
		if (!need_met(rt, n) &&
		    load_acquire(&w->sched.progress) == seen)
			futex_wait(&w->sched.progress, seen, 10);
		WRITE_ONCE(w->orch_flags.sleeping, 0);
		if (need_met(rt, n))
			break;
		if (load_acquire(&w->sched.progress) != seen ||
		    READ_ONCE(w->sched.active)) {
			/* something ran or retired: not stuck yet */
			seen = load_acquire(&w->sched.progress);
			deadline = pto_now_ns() + timeout_ns;
			continue;
		}
		if (pto_now_ns() >= deadline) {
			diagnose_deadlock(rt, n, (pto_now_ns() - t0) / 1000000);
			STAT_ADD(rs->stall_ns, pto_now_ns() - t0);
			return -EDEADLK;
		}
	}
	STAT_ADD(rs->stall_ns, pto_now_ns() - t0);
	if (rt->trace)
		pto_trace_span(rt->trace, "stall", t0, pto_now_ns(),
			       rt->orch.next_id);
	return 0;
cancelled:
	STAT_ADD(rs->stall_ns, pto_now_ns() - t0);
	return -ECANCELED;
}