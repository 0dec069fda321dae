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
#include <stdio.h>

#include "config.h"
#include "log.h"
#include "flow.h"
#include "orchestrator.h"
#include "ringsize.h"
#include "stall.h"
#include "stats.h"
#include "trace.h"

/* Spins before the orchestrator sleeps on a full ring. */
#define ORCH_SPINS 256
/* Does n fit by the cached view (the TensorMap's: as of its last sync)? */
static bool fits(struct pto_runtime *rt, const struct pto_need *n)
{
	struct pto_heap_alloc ha;

	switch (n->kind) {
	case PTO_RING_TASK:
		return orch_slot_fits(rt, n->ring);
	case PTO_RING_HEAP:
		return orch_heap_place(rt, n->ring, n->amount, &ha);
	case PTO_RING_DEP:
		return orch_dep_fits(rt, n->ring, n->amount);
	case PTO_RING_TENSORMAP:
		return orch_tm_fits(rt, n->ring, n->amount);
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

static uint64_t capacity(struct pto_runtime *rt, const struct pto_need *n)
{
	const struct pto_task_ring *r = &rt->ring[n->ring];

	switch (n->kind) {
	case PTO_RING_TASK:
		return r->task_window;
	case PTO_RING_HEAP:
		return r->heap_size;
	case PTO_RING_DEP:
		return r->dep_pool_size;
	default:
		return r->tm_pool_size;
	}
}

/* n's resource, every ring's size: the list a PTO_* setting gives. */
static void ring_sizes(struct pto_runtime *rt, const struct pto_need *n,
		       uint64_t sizes[PTO_MAX_RINGS])
{
	struct pto_need ni = *n;

	for (ni.ring = 0; ni.ring < rt->nrings; ni.ring++)
		sizes[ni.ring] = capacity(rt, &ni);
}

static uint64_t in_use(struct pto_runtime *rt, const struct pto_need *n)
{
	switch (n->kind) {
	case PTO_RING_TASK:
		return orch_tasks_in_flight(rt, n->ring);
	case PTO_RING_HEAP:
		return orch_heap_used(rt, n->ring);
	case PTO_RING_DEP:
		return orch_dep_used(rt, n->ring);
	default:
		return rt->orch.tm.ring[n->ring].live;
	}
}

/* ---- deadlock diagnosis -------------------------------------------------- */

/* What the diagnosis learns about a ring's oldest task. */
struct oldest {
	uint64_t seq;		/* in its ring */
	uint64_t id;		/* its task id */
	uint32_t depth;		/* of the scope it was submitted in */
	const char *kernel;
	int holder;		/* index of the open scope holding it, or -1 */
	struct pto_ring_head head;	/* the scheduler's view of it */
};

/* Does open scope i hold sequence number seq of its ring? */
static bool scope_holds(struct pto_runtime *rt, uint32_t i, uint64_t seq)
{
	const struct pto_orchestrator *o = &rt->orch;
	const struct pto_scope *sc = &o->scopes[i];
	uint32_t end = i + 1 < o->nscopes ? o->scopes[i + 1].seg_base :
					    o->nsegs;
	uint32_t k;

	if (seq >= sc->seg_start && seq < o->ring[sc->ring].next_seq &&
	    (i + 1 == o->nscopes || o->scopes[i + 1].ring != sc->ring ||
	     seq < o->scopes[i + 1].ring_begin))
		return true;
	for (k = sc->seg_base; k < end; k++)
		if (o->segs[k].ring == sc->ring && seq >= o->segs[k].begin &&
		    seq < o->segs[k].end)
			return true;
	return false;
}

/* Tasks in [begin, end) of a ring that have not retired. */
static uint64_t alive_in(const struct pto_orch_ring *o, uint64_t begin,
			 uint64_t end)
{
	if (begin < o->last_alive)
		begin = o->last_alive;
	return end > begin ? end - begin : 0;
}

/*
 * Tasks of an open scope still in its ring, of its segments and its open
 * one: those that made buffers, and every later one (the ring frees in
 * order); the others before them retired.
 */
static uint64_t scope_tasks(struct pto_runtime *rt, uint32_t i)
{
	const struct pto_orchestrator *o = &rt->orch;
	const struct pto_scope *sc = &o->scopes[i];
	const struct pto_orch_ring *r = &o->ring[sc->ring];
	uint64_t n = alive_in(r, sc->seg_start, r->next_seq);
	uint32_t k;

	for (k = sc->seg_base; k < o->nsegs; k++)
		if (o->segs[k].ring == sc->ring)
			n += alive_in(r, o->segs[k].begin, o->segs[k].end);
	return n;
}

static void find_oldest(struct pto_runtime *rt, uint32_t ring,
			struct oldest *old)
{
	const struct pto_orch_ring *o = &rt->orch.ring[ring];
	const struct pto_task_desc *d;
	uint64_t slot;
	uint32_t i, k;

	old->seq = o->last_alive;
	slot = o->slot_id[old->seq & rt->ring[ring].window_mask];
	old->id = slot & ((1ull << PTO_SLOT_DEPTH_SHIFT) - 1);
	old->depth = (uint32_t)(slot >> PTO_SLOT_DEPTH_SHIFT);
	d = pto_desc(rt, PTO_TASK_HANDLE(ring, old->seq));
	k = d->kernel_id;
	old->kernel = d->flags & PTO_TASK_F_NO_DISPATCH ? "pto_alloc buffer" :
		      rt->kernels[k % PTO_MAX_KERNELS].name;
	/* written by the scheduler when it went idle, which it is now */
	old->head.state = READ_ONCE(rt->win->sched.head[ring].state);
	old->head.scope = READ_ONCE(rt->win->sched.head[ring].scope);
	old->head.consumers = READ_ONCE(rt->win->sched.head[ring].consumers);
	old->holder = -1;
	/* a scope holds only the tasks that made buffers (scan_task()) */
	for (i = 0; old->head.scope && i < rt->orch.nscopes; i++)
		if (rt->orch.scopes[i].ring == ring &&
		    scope_holds(rt, i, old->seq))
			old->holder = (int)i;
}

static const char *state_text(uint16_t state)
{
	switch (state) {
	case PTO_TASK_PENDING:
		return "is waiting for its producers";
	case PTO_TASK_READY:
		return "is ready or running";
	case PTO_TASK_COMPLETED:
		return "has completed";
	default:
		return "has completed";
	}
}

static void explain_oldest(struct pto_runtime *rt, uint32_t ring,
			   const struct oldest *old)
{
	FILE *out = pto_log_begin();

	pto_log("  its oldest task, %" PRIu64 " '%s' (scope depth %u), %s "
		"and is held by ", old->id, old->kernel, old->depth,
		state_text(old->head.state));
	if (old->holder >= 0)
		fprintf(out, "its scope (depth %d), which is still open",
			old->holder);
	else if (old->head.consumers)
		fprintf(out, "%u consumer(s) that have not completed",
			old->head.consumers);
	else
		fputs("nothing the orchestrator knows of", out);
	fprintf(out, "; every later task of ring %u waits behind it\n", ring);
	pto_log_end();
}

/* The smallest size of a resource that holds n: what PTO_* takes. */
static uint64_t size_for(enum pto_ring kind, uint64_t n)
{
	if (kind == PTO_RING_TASK)
		n = pto_next_pow2(n + 1);
	return pto_ring_size_fit(kind, n);
}

/*
 * "at least N so far (PTO_<resource>=...)": the size of ring n->ring's
 * resource that holds the held part and the request, as the setting that
 * gives it that size and leaves the other rings as they are.
 */
static uint64_t print_size_wanted(struct pto_runtime *rt,
				  const struct pto_need *n, uint64_t held)
{
	uint64_t want = size_for(n->kind, held + n->amount);
	uint64_t sizes[PTO_MAX_RINGS];
	FILE *out = pto_log_begin();

	ring_sizes(rt, n, sizes);
	fprintf(out, "at least %" PRIu64 " so far (", want);
	/* 17 tasks asking for 32 slots reads like a miscount otherwise */
	if (n->kind == PTO_RING_TASK)
		fprintf(out, "the power of two above the %" PRIu64 " tasks "
			"held and asked; ", held + n->amount);
	pto_ring_env_fprint(out, n->kind, rt->nrings, sizes, n->ring, want);
	fputc(')', out);
	pto_log_end();
	return want;
}

/*
 * A device's heap rings share three quarters of its heap, and sizes that
 * add up to more are all shrunk in proportion (fit_heap_rings()), the
 * advised ring's with them: a run following the advice deadlocked again.
 * Say so when the advised heap size would be cut, with sizes for the
 * other rings that leave it whole, or that this device cannot give it.
 */
static void advise_device_heap(struct pto_runtime *rt,
			       const struct pto_need *n, uint64_t want)
{
	const uint64_t page = 4096, min = PTO_HEAP_SIZE_MIN;
	uint64_t room = pto_heap_rings_room(&rt->be), others = 0;
	uint64_t sizes[PTO_MAX_RINGS], spare, share;
	/* what it takes of the device's heap: whole pages */
	uint64_t need = pto_align_up(want, page);
	uint32_t i;
	FILE *out;

	for (i = 0; i < rt->nrings; i++)
		if (i != n->ring)
			others += pto_align_up(rt->ring[i].heap_size, page);
	if (n->kind != PTO_RING_HEAP || need + others <= room)
		return;
	if (need + (rt->nrings - 1) * min > room) {
		pto_log("  but %s gives the heap rings %" PRIu64 " MiB in all "
			"(three quarters of its heap): ring %u cannot have "
			"that there, so the scope must hold less\n",
			rt->device, room >> 20, n->ring);
		return;
	}
	/* the others shrunk in proportion above their minimum, to fit */
	spare = room - need - (rt->nrings - 1) * min;
	share = others - (rt->nrings - 1) * min;
	for (i = 0; i < rt->nrings; i++) {
		uint64_t h = pto_align_up(rt->ring[i].heap_size, page) - min;

		sizes[i] = min + (uint64_t)((double)h * spare / share) /
			   page * page;
	}
	out = pto_log_begin();
	pto_log("  but %s gives the heap rings %" PRIu64 " MiB in all (three "
		"quarters of its heap) and shrinks every ring in proportion "
		"when they ask for more, ring %u too: with the other rings "
		"smaller it keeps its size, e.g. ", rt->device, room >> 20,
		n->ring);
	pto_ring_env_fprint(out, PTO_RING_HEAP, rt->nrings, sizes, n->ring,
			    want);
	fputc('\n', out);
	pto_log_end();
}

/*
 * A heap ring places each block whole, never across its end: a block that
 * does not fit there starts the next lap, and the bytes passed over stay
 * in use until the ring's tail passes them.  How many are passed over
 * depends on where the scope's first block landed, so a ring just larger
 * than what the scope holds now (those bytes included) may deadlock again
 * a few bytes later.  Its blocks fit wherever they start when the ring
 * has room for all of them and one more of the largest (what is passed
 * over at the end is less than the block that did not fit): that, with
 * what is held behind the scope, is the size advised, less the request,
 * which the caller adds; behind is what older scopes hold behind it.
 * Blocks of the scope that have gone already are counted too: the size
 * is enough, if not the least that is.
 */
static uint64_t heap_wanted(struct pto_runtime *rt, const struct pto_need *n,
			    const struct pto_scope *sc, uint64_t behind)
{
	const struct pto_orch_ring *o = &rt->orch.ring[n->ring];
	uint64_t blocks = o->heap_blocks - sc->heap_blocks;
	uint64_t largest = o->heap_largest > n->amount ? o->heap_largest :
			   n->amount;

	pto_log("  its blocks take %" PRIu64 " bytes; a block never wraps "
		"around the ring's end, so the ring holds them wherever they "
		"start with room for them and one more of the largest (%"
		PRIu64 " bytes)\n", blocks, largest);
	return behind + blocks + largest;
}

/*
 * "More if it goes on": following the advice run after run grows the ring
 * by what the scope got further each time (a scope of 60 buffers took
 * eight deadlocks, a stall timeout each).  One run with the ring far
 * larger and the statistics printed gives the most it held instead.
 */
static void advise_measure(struct pto_runtime *rt, const struct pto_need *n,
			   uint64_t want)
{
	uint64_t sizes[PTO_MAX_RINGS], big = size_for(n->kind, want * 8);
	FILE *out;

	if (big <= want)
		return;		/* the largest size allowed already */
	ring_sizes(rt, n, sizes);
	out = pto_log_begin();
	pto_log("  to size it for the whole run at once: run it with the ring "
		"far larger, e.g. ");
	pto_ring_env_fprint(out, n->kind, rt->nrings, sizes, n->ring, big);
	fputs(", and print the statistics (ptorun -S, pto_print_stats()): "
	      "their high water is the most each ring held\n", out);
	pto_log_end();
}

/*
 * The oldest task is held by the innermost scope itself: that scope holds
 * all it still has in the ring until it ends, so the ring must hold it.
 */
static void advise_grow(struct pto_runtime *rt, const struct pto_need *n,
			uint32_t scope)
{
	const struct pto_scope *sc = &rt->orch.scopes[scope];
	uint64_t tasks = scope_tasks(rt, scope);
	const char *unit = n->kind == PTO_RING_HEAP ? "bytes" :
			   n->kind == PTO_RING_TASK ? "slots" : "entries";
	uint64_t own = n->kind == PTO_RING_TASK ? tasks :
		       n->kind == PTO_RING_HEAP ?
		       rt->win->orch.heap_top[n->ring] - sc->heap_begin :
		       in_use(rt, n);
	/* the ring frees in order: nothing behind its held task goes */
	uint64_t held = in_use(rt, n) > own ? in_use(rt, n) : own;
	FILE *out;

	/* its first blocks may have gone with tasks that made no buffer */
	if (n->kind == PTO_RING_HEAP && own > in_use(rt, n)) {
		own = in_use(rt, n);
		held = own;
	}

	pto_log("  the scope at depth %u holds %" PRIu64 " of its tasks (%"
		PRIu64 " %s of the %s) until it ends: those that made "
		"buffers, and every later one\n", scope, tasks, own, unit,
		pto_ring_name(n->kind));
	if (held > own)
		pto_log("  behind them, ring %u holds %" PRIu64 " more %s of "
			"scopes that ended (nested in it, sharing the ring), "
			"freed only after them\n", n->ring, held - own, unit);
	if (n->kind == PTO_RING_HEAP)
		held = heap_wanted(rt, n, sc, held - own);
	out = pto_log_begin();
	pto_log("  advice: ring %u's %s must hold everything that scope "
		"submits before it ends: ", n->ring, pto_ring_name(n->kind));
	held = print_size_wanted(rt, n, held);
	fputs(", more if it goes on; or end the scope sooner, e.g. open "
	      "a scope inside its loop\n", out);
	pto_log_end();
	advise_device_heap(rt, n, held);
	advise_measure(rt, n, held);
}

/*
 * The oldest task is held by an outer scope sharing the ring with the
 * scopes nested in it (depths past the last ring): until it ends,
 * everything they submit stays in the ring, so a size only helps a loop
 * of bounded length; a ring per depth helps any.
 */
static void advise_rings(struct pto_runtime *rt, const struct pto_need *n,
			 uint32_t scope)
{
	uint32_t deepest = rt->orch.nscopes - 1;
	uint32_t want = deepest < PTO_MAX_RINGS ? deepest + 1 : PTO_MAX_RINGS;
	uint64_t want_size;
	char depths[32];
	FILE *out;

	if (deepest == scope + 1)
		snprintf(depths, sizeof(depths), "depth %u", deepest);
	else
		snprintf(depths, sizeof(depths), "depths %u-%u", scope + 1,
			 deepest);
	pto_log("  the scope at depth %u holds it while the scopes nested in "
		"it (%s) share ring %u with it: until it ends, all they "
		"submit stays in the ring, so a larger ring only lets a loop "
		"of bounded length through\n", scope, depths, n->ring);
	/* what the open scopes hold now: enough for nesting without a loop */
	out = pto_log_begin();
	pto_log("  the open scopes hold %" PRIu64 " of its %s: ring %u needs ",
		in_use(rt, n), pto_ring_name(n->kind), n->ring);
	want_size = print_size_wanted(rt, n, in_use(rt, n));
	fputs(" to let them this far, more for every task a loop or deeper "
	      "nesting adds\n", out);
	pto_log_end();
	advise_device_heap(rt, n, want_size);
	/* scopes past the last ring share it: the holder needs one apart */
	if (rt->nrings < want && scope + 1 < want)
		pto_log("  advice: %s=%u gives every depth up to %u a ring of "
			"its own%s\n", pto_env_name(PTO_ENV_RINGS), want,
			want - 1, want <= deepest ? " (deeper ones share the "
			"last)" : "");
	else
		pto_log("  advice: there are at most %d rings; end the scope at "
			"depth %u before the loop, or nest the loop's scopes "
			"less deeply\n", PTO_MAX_RINGS, scope);
}

/*
 * The oldest task of the exhausted ring has not run: no scope size is to
 * blame, something failed to dispatch or run it.  That is reported once,
 * and every core and the scheduler are woken, so a lost wake-up shows
 * itself instead of failing the run; only if nothing moves after that
 * either is it a deadlock.
 */
static bool oldest_never_ran(const struct oldest *old)
{
	return old->head.state == PTO_TASK_PENDING ||
	       old->head.state == PTO_TASK_READY;
}

/*
 * Nothing ran or retired for the stall timeout while we waited: explain
 * which ring is exhausted, what holds it and what to change.
 */
static void diagnose_deadlock(struct pto_runtime *rt, const struct pto_need *n,
			      uint64_t waited_ms, const struct oldest *old)
{
	pto_log_begin();	/* the report in one piece */
	pto_log("deadlock: ring %u's %s is exhausted and nothing can free it "
		"(no progress for %" PRIu64 " ms)\n", n->ring,
		pto_ring_name(n->kind), waited_ms);
	pto_log("  ring %u (scope depth %u%s) %s: size %" PRIu64 ", in use %"
		PRIu64 ", requested %" PRIu64 "\n", n->ring, n->ring,
		n->ring + 1 == rt->nrings ? " and deeper" : "",
		pto_ring_name(n->kind), capacity(rt, n), in_use(rt, n),
		n->amount);
	explain_oldest(rt, n->ring, old);
	if (oldest_never_ran(old))	/* not the ring's size: nothing runs */
		pto_stall_report(rt, waited_ms);
	else if (old->holder == (int)rt->orch.nscopes - 1)
		advise_grow(rt, n, (uint32_t)old->holder);
	else if (old->holder >= 0)
		advise_rings(rt, n, (uint32_t)old->holder);
	else
		pto_stall_report(rt, waited_ms);
	pto_log_end();
}

static void kick_everyone(struct pto_runtime *rt)
{
	rt->be.ops->kick(&rt->be, NULL, 0);
	rt->be.ops->notify(&rt->be);
}

static uint64_t waited_ms(uint64_t t0)
{
	return (pto_now_ns() - t0) / 1000000;
}

/* Account for a stall however it ended, the deadlock included. */
static int wait_end(struct pto_runtime *rt, const struct pto_need *n,
		    uint64_t t0, int ret)
{
	STAT_ADD(rt->st.depth[n->ring][n->kind].stall_ns, pto_now_ns() - t0);
	if (rt->trace)
		pto_trace_stall(rt->trace, t0, rt->orch.next_id, n->ring,
				n->kind, n->amount, ret);
	return ret;
}

/*
 * The orchestrator waiting for what the scheduling side makes true: what
 * it last saw move, and by when nothing moving means it is stuck.
 */
struct orch_wait {
	uint32_t seen;		/* sched.progress */
	uint64_t done;		/* sched.tasks_completed */
	struct pto_stall_clock clock;
};

/* What the next look compares against. */
static void orch_wait_snapshot(struct pto_runtime *rt, struct orch_wait *ow)
{
	ow->seen = load_acquire(&rt->win->sched.progress);
	ow->done = READ_ONCE(rt->win->sched.tasks_completed);
}

static void orch_wait_begin(struct pto_runtime *rt, struct orch_wait *ow,
			    uint64_t t0)
{
	pto_stall_clock_start(&ow->clock,
			      (uint64_t)rt->cfg.stall_timeout_ms * 1000000ull,
			      t0);
	orch_wait_snapshot(rt, ow);
}

enum orch_wait_state { WAIT_MET, WAIT_GOES_ON, WAIT_STUCK };

/*
 * Sleep, saying what for (PTO_ORCH_WAITS_*), until the scheduling side
 * signals progress or 10 ms pass, unless met() holds already.  Then: met,
 * or not stuck (something ran, retired or runs, or the last look was too
 * long ago to have watched the time since (pto_stall_look_late()), which
 * move the deadline on, or the deadline is still ahead), or stuck.
 */
static enum orch_wait_state
orch_sleep(struct pto_runtime *rt, struct orch_wait *ow, uint32_t what,
	   bool (*met)(struct pto_runtime *rt, const void *arg),
	   const void *arg)
{
	struct pto_window_header *w = rt->win;
	bool moved;

	WRITE_ONCE(w->orch_flags.sleeping, what);
	/* sleeping before the progress load; pairs with the scheduler */
	smp_mb();
	if (!met(rt, arg) && load_acquire(&w->sched.progress) == ow->seen)
		futex_wait(&w->sched.progress, ow->seen, 10);
	WRITE_ONCE(w->orch_flags.sleeping, 0);
	if (met(rt, arg))
		return WAIT_MET;
	moved = load_acquire(&w->sched.progress) != ow->seen ||
		READ_ONCE(w->sched.tasks_completed) != ow->done ||
		pto_cores_busy(rt);
	/* the clock read after the loads */
	switch (pto_stall_clock_look(&ow->clock, moved, pto_now_ns())) {
	case PTO_STALL_RESTARTED:
		orch_wait_snapshot(rt, ow);
		return WAIT_GOES_ON;
	case PTO_STALL_WATCHING:
		return WAIT_GOES_ON;
	default:
		return WAIT_STUCK;
	}
}

static bool ring_met(struct pto_runtime *rt, const void *n)
{
	return need_met(rt, n);
}

/*
 * On one CPU, a spin that cannot lend a hand only keeps the thread that
 * would meet the wait (the scheduler's, a core's) off the CPU until it
 * ends: one look, then sleep.  With PTO_SCHED_THREAD a pto_wait() round
 * trip took 15 us so, against under 1 us with scheduling on the core
 * threads, where a hand is lent.
 */
static int orch_spins(const struct pto_runtime *rt, bool lend)
{
	if (rt->be.host_cpus > 1 || (lend && pto_sched_can_lend(rt)))
		return ORCH_SPINS;
	return 1;
}

/*
 * Spin up to orch_spins() looks for met(); with lend, lending a hand every
 * PTO_LEND_EVERY looks, and starting over when that found work (the wait
 * is then making progress of its own).  True: met.
 */
static inline bool orch_spin(struct pto_runtime *rt,
			     bool (*met)(struct pto_runtime *rt,
					 const void *arg),
			     const void *arg, bool lend)
{
	int i, spins = orch_spins(rt, lend);

	for (i = 0; i < spins; i++) {
		if (met(rt, arg))
			return true;
		if (lend && i % PTO_LEND_EVERY == 0 &&
		    pto_sched_lend_hand(rt, false))
			i = 0;	/* and look again */
		else
			cpu_relax();
	}
	return false;
}

int pto_flow_wait(struct pto_runtime *rt, const struct pto_need *n)
{
	struct pto_window_header *w = rt->win;
	struct pto_ring_stats *rs = &rt->st.depth[n->ring][n->kind];
	struct orch_wait ow;
	enum orch_wait_state st;
	struct oldest old;
	bool kicked = false;
	uint64_t t0;

	if (need_met(rt, n))
		return 0;
	orch_flush_published(rt);	/* what we wait for may need them to run */
	STAT_ADD(rs->stalls, 1);
	t0 = pto_now_ns();
	orch_wait_begin(rt, &ow, t0);
	/* once: the scheduler then has all it needs until something retires */
	orch_wake_scheduler(rt);
	for (;;) {
		if (orch_spin(rt, ring_met, n, false))
			break;
		if (READ_ONCE(w->sched_flags.error) || pto_run_cancelled(rt))
			return wait_end(rt, n, t0, -ECANCELED);
		pto_sched_publish_pending(rt);
		if (need_met(rt, n))
			break;
		st = orch_sleep(rt, &ow, PTO_ORCH_WAITS_RING, ring_met, n);
		if (st == WAIT_MET)
			break;
		if (st == WAIT_GOES_ON)
			continue;
		orch_refresh_tails(rt);
		find_oldest(rt, n->ring, &old);
		if (!kicked && oldest_never_ran(&old)) {
			pto_stall_report(rt, waited_ms(t0));
			kick_everyone(rt);
			kicked = true;
			pto_stall_clock_start(&ow.clock, ow.clock.timeout_ns,
					      pto_now_ns());
			continue;
		}
		diagnose_deadlock(rt, n, waited_ms(t0), &old);
		return wait_end(rt, n, t0, -EDEADLK);
	}
	return wait_end(rt, n, t0, 0);
}

/* Has every task submitted so far completed? */
static bool tasks_done(struct pto_runtime *rt, const void *unused)
{
	return load_acquire(&rt->win->sched.tasks_completed) ==
	       rt->orch.next_id;
}

static bool run_failed(struct pto_runtime *rt)
{
	return rt->orch.error || READ_ONCE(rt->win->sched_flags.error) ||
	       pto_run_cancelled(rt);
}

int pto_flow_wait_tasks(struct pto_runtime *rt)
{
	uint64_t t0 = pto_now_ns();
	struct orch_wait ow;
	enum orch_wait_state st = WAIT_GOES_ON;
	bool lend = rt->be.host_cpus == 1 ||
		    READ_ONCE(rt->win->sched_flags.sleeping);

	orch_flush_published(rt);
	orch_wait_begin(rt, &ow, t0);
	orch_wake_scheduler(rt);
	while (!tasks_done(rt, NULL) && st != WAIT_MET) {
		if (orch_spin(rt, tasks_done, NULL, lend) || run_failed(rt))
			break;
		/*
		 * A hand only after a first spin: a core thread awake takes
		 * the task at once, and a lender polling the lines it works
		 * on slowed each round trip by a third (wait shape, quiet).
		 * From the start (lend set above) where no core thread is
		 * awake, or the process has one CPU: the thread woken would
		 * wait for a CPU first, ours on one CPU.
		 */
		if (!lend) {
			lend = true;
			continue;
		}
		st = orch_sleep(rt, &ow, PTO_ORCH_WAITS_TASKS, tasks_done, NULL);
		if (st != WAIT_STUCK)
			continue;
		pto_log("pto_wait: no task completed for %llu ms with %llu "
			"of %llu submitted still to complete, and no core "
			"busy\n", (unsigned long long)waited_ms(t0),
			(unsigned long long)(rt->orch.next_id - ow.done),
			(unsigned long long)rt->orch.next_id);
		pto_stall_report(rt, waited_ms(t0));
		return -EDEADLK;
	}
	/* tasks cancelled by a failure completed without running */
	return run_failed(rt) ? -ECANCELED : 0;
}
