// SPDX-License-Identifier: MIT
/*
 * The scheduler thread: turns published tasks into dispatches and
 * completions into readiness and retirement.
 *
 * One loop, five steps, each batched:
 *   reap      completions from the device's completion ring
 *   scan      newly published tasks, in submission order across the task
 *             rings; those with no pending producer are ready
 *   release   scope ends reported by the orchestrator
 *   dispatch  ready tasks onto the per-core queues, then kick the cores
 *   retire    advance each ring's last_task_alive over its consumed tasks,
 *             and with it that ring's heap and dependency-pool tails; wake
 *             a blocked orchestrator
 * Task states, fanout lists and reference counts are private to this
 * thread: it builds them from the fanin lists the orchestrator publishes,
 * so no lock is shared with the orchestrator.  A task may depend on, and
 * hold, tasks of any ring; each ring still retires in its own order.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "stall.h"
#include "log.h"
#include "runtime.h"
#include "stats.h"
#include "sync.h"
#include "trace.h"

/* A sleep shorter than this was cut short by work: spin longer next time. */
#define SHORT_SLEEP_NS 100000ull
/* Longest sleep; bounds how stale the stats page can get. */
#define SCHED_SLEEP_MS 50
#define RUN_SPIN_NS 50000ull
#define STATS_INTERVAL_NS 10000000ull
/* Descriptors requested ahead of a scan (see prefetch_published()). */
#define SCAN_PREFETCH 64
/* Retirements the orchestrator learns of at a time (publish_retired()). */
#define RETIRE_PUBLISH 32

static struct pto_sched_slot *sslot(struct pto_runtime *rt, uint64_t task)
{
	uint32_t r = PTO_TASK_RING(task);

	return &rt->sched.ring[r].slot[PTO_TASK_SEQ(task) &
				       rt->ring[r].window_mask];
}

/* The scheduler's twin of the dependency entry a link names. */
static struct pto_sched_dep *sdep(struct pto_runtime *rt, uint32_t link)
{
	return &rt->sched.ring[PTO_DEP_LINK_RING(link)]
			.dep[PTO_DEP_LINK_IDX1(link) - 1];
}

/*
 * The counts a completion changes.  With PTO_SCHED_SHARDS several core
 * threads complete tasks at once, so they are atomic there; the other
 * modes change them on one thread at a time and pay nothing for it.
 */
static inline uint32_t count_dec(const struct pto_sched *s, uint32_t *p)
{
	return s->shared ? __atomic_sub_fetch(p, 1, __ATOMIC_ACQ_REL) : --*p;
}

static inline void count_inc(const struct pto_sched *s, uint32_t *p)
{
	if (s->shared)
		__atomic_add_fetch(p, 1, __ATOMIC_RELAXED);
	else
		++*p;
}

/* A counter others only read (the window's, statistics), of any width. */
#define shared_add(s, p, v)						\
	do {								\
		if ((s)->shared)					\
			__atomic_add_fetch((p), (v), __ATOMIC_RELAXED);	\
		else							\
			WRITE_ONCE(*(p), *(p) + (v));			\
	} while (0)

/*
 * Who is making tasks ready, and how many of each type it made: with
 * shards, a core thread takes the next task itself and wakes sleeping
 * core threads for the rest (flush_ready()).
 */
struct ready_batch {
	uint32_t home;		/* the calling core, or UINT32_MAX */
	uint32_t made[PTO_NUM_WORKER_TYPES];
};

static void make_ready(struct pto_runtime *rt, uint64_t task,
		       struct ready_batch *rb)
{
	struct pto_sched *s = &rt->sched;
	uint32_t type = pto_desc(rt, task)->worker_type, n;

	/* read meanwhile by other threads' retirable() */
	WRITE_ONCE(sslot(rt, task)->state, PTO_TASK_READY);
	if (!s->shared) {
		pto_rq_push(&s->ready[type], task);
		return;
	}
	n = s->nshards[type];
	/* sized for every task of every window: never full */
	pto_mpmc_push(&s->shard[type][rb->home < UINT32_MAX ?
				       rb->home % n : 0], task);
	rb->made[type]++;
}

/* A reference dropped: the last one consumes the task (retirable). */
static void unref(struct pto_runtime *rt, uint64_t task)
{
	struct pto_sched_slot *ss = sslot(rt, task);

	if (!count_dec(&rt->sched, &ss->live))
		store_release(&ss->state, PTO_TASK_CONSUMED);
}

/*
 * Take a reference to a scanned producer unless it was consumed already;
 * with shards its last consumer may be completing meanwhile.
 */
static bool ref_get(const struct pto_sched *s, struct pto_sched_slot *ps)
{
	uint32_t v;

	if (!s->shared) {
		if (!ps->live)
			return false;
		ps->live++;
		return true;
	}
	/* acquire: a consumed producer's results are read after this */
	v = __atomic_load_n(&ps->live, __ATOMIC_ACQUIRE);
	do {
		if (!v)
			return false;
	} while (!__atomic_compare_exchange_n(&ps->live, &v, v + 1, true,
					      __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	return true;
}

/*
 * Add consumer link to a producer's fanout, unless the producer completed
 * (closed its fanout): then false, and there is nothing to wait for.
 */
static bool fanout_add(const struct pto_sched *s, struct pto_sched_slot *ps,
		       uint32_t link, struct pto_sched_dep *sd)
{
	uint32_t head;

	if (!s->shared) {
		if (ps->fanout_head == PTO_FANOUT_CLOSED)
			return false;
		sd->next = ps->fanout_head;
		ps->fanout_head = link;
		return true;
	}
	/*
	 * Acquire: seeing the fanout closed, the consumer may run at once,
	 * after the producer's kernel (fanout_close() releases).
	 */
	head = __atomic_load_n(&ps->fanout_head, __ATOMIC_ACQUIRE);
	do {
		if (head == PTO_FANOUT_CLOSED)
			return false;
		sd->next = head;
	} while (!__atomic_compare_exchange_n(&ps->fanout_head, &head, link,
					      true, __ATOMIC_RELEASE,
					      __ATOMIC_ACQUIRE));
	return true;
}

/* Close a completed task's fanout; returns the consumers to notify. */
static uint32_t fanout_close(const struct pto_sched *s,
			     struct pto_sched_slot *ss)
{
	uint32_t head;

	/* acquire the consumers' entries, release the kernel's results */
	if (s->shared)
		return __atomic_exchange_n(&ss->fanout_head, PTO_FANOUT_CLOSED,
					   __ATOMIC_ACQ_REL);
	head = ss->fanout_head;
	ss->fanout_head = PTO_FANOUT_CLOSED;
	return head;
}

/*
 * The run's first failure is said once, naming the task: pto_run()
 * returns only its status, and the tasks cancelled after it are noise.
 */
static void report_failure(struct pto_runtime *rt, uint64_t task,
			   uint32_t core, int status)
{
	const struct pto_task_desc *d = pto_desc(rt, task);
	uint32_t k = d->kernel_id % PTO_MAX_KERNELS;
	const char *hint = rt->be.ops->status_hint ?
			   rt->be.ops->status_hint(status) : NULL;
	char where[32] = "no core";

	if (core < rt->be.num_cores)
		snprintf(where, sizeof(where), "core %u", core);
	pto_log("task %llu (kernel %u \"%s\", %s, %s) failed: %s (%d%s%s); "
		"the run's tasks not started yet, earlier ones too, are "
		"cancelled\n",
		(unsigned long long)sslot(rt, task)->id, d->kernel_id,
		rt->kernels[k].name, pto_worker_type_name(d->worker_type),
		where, strerror(-status), status, hint ? ": " : "",
		hint ? hint : "");
}

/*
 * The run stops: the tasks not started are completed as cancelled and the
 * orchestrator's next submission fails.  True for the one caller (with
 * shards two tasks may fail at once) that then says why and sets the
 * run's status.
 */
static bool stop_run(struct pto_sched *s)
{
	WRITE_ONCE(s->failed, true);
	return !__atomic_exchange_n(&s->error_said, 1, __ATOMIC_RELAXED);
}

static void note_failure(struct pto_runtime *rt, uint64_t task,
			 uint32_t core, int status)
{
	shared_add(&rt->sched, &rt->sst.tasks_failed, 1);
	if (stop_run(&rt->sched)) {
		report_failure(rt, task, core, status);
		WRITE_ONCE(rt->win->sched_flags.error, status);
	}
}

/* pto_run_cancel() asked, and the run has not stopped yet. */
static bool cancel_pending(const struct pto_runtime *rt)
{
	return pto_run_cancelled(rt) && !READ_ONCE(rt->sched.failed);
}

/* pto_run_cancel(): as after a failure, but no task failed. */
static void note_cancel(struct pto_runtime *rt)
{
	if (stop_run(&rt->sched)) {
		pto_log("pto_run: cancelled (pto_run_cancel()); the run's "
			"tasks not started are not run\n");
		WRITE_ONCE(rt->win->sched_flags.error, -ECANCELED);
	}
}

/*
 * Wake an orchestrator asleep in pto_wait() once every task it published
 * has completed.  The idle path (wake_orchestrator()) checks too, after a
 * full barrier: this one, without, wakes it as soon as the last task
 * completes in the common case, and costs a load of a quiet line.
 */
static void wake_task_waiter(struct pto_runtime *rt)
{
	struct pto_window_header *w = rt->win;

	if (READ_ONCE(w->sched.tasks_completed) !=
	    load_acquire(&w->notify.task_head))
		return;
	__atomic_fetch_add(&w->sched.progress, 1, __ATOMIC_RELEASE);
	futex_wake(&w->sched.progress, 1);
}

/* Inlined into reap(): every task completes through it */
static inline __attribute__((always_inline))
void complete_task(struct pto_runtime *rt, uint64_t task, uint32_t core,
		   int status, struct ready_batch *rb)
{
	struct pto_window_sched *ws = &rt->win->sched;
	struct pto_sched *s = &rt->sched;
	struct pto_sched_slot *ss = sslot(rt, task);
	uint32_t ring = PTO_TASK_RING(task);
	const struct pto_dep_entry *dep = rt->ring[ring].dep;
	uint64_t completed;
	uint32_t e, next;

	if (status && status != -ECANCELED)
		note_failure(rt, task, core, status);
	store_release(&ss->state, PTO_TASK_COMPLETED);

	/*
	 * Consumers: one producer fewer to wait for.  An entry is read
	 * before the count drops: the consumer may run, finish and retire
	 * (its entries reused) as soon as it is ready.
	 */
	for (e = fanout_close(s, ss); e; e = next) {
		struct pto_sched_dep *sd = sdep(rt, e);
		uint64_t cid = sd->consumer;

		next = sd->next;
		if (!count_dec(s, &sslot(rt, cid)->waiting)) {
			shared_add(s, &ws->waiting, (uint32_t)-1);
			make_ready(rt, cid, rb);
		}
	}
	/* producers: this consumer no longer needs their results */
	for (e = pto_desc(rt, task)->fanin_head; e; e = dep[e - 1].next)
		if (sdep(rt, PTO_DEP_LINK(ring, e))->held)
			unref(rt, dep[e - 1].task_id);

	shared_add(s, &ws->active, (uint32_t)-1);
	/* release: pto_wait() reads the task's results after this count */
	if (s->shared) {
		completed = __atomic_add_fetch(&ws->tasks_completed, 1,
					       __ATOMIC_RELEASE);
	} else {
		completed = ws->tasks_completed + 1;
		store_release(&ws->tasks_completed, completed);
	}
	shared_add(s, &rt->sst.tasks_completed, 1);
	/* every task taken in has completed: pto_wait() may be sleeping */
	if (completed == READ_ONCE(s->scanned) &&
	    READ_ONCE(rt->win->orch_flags.sleeping) == PTO_ORCH_WAITS_TASKS)
		wake_task_waiter(rt);
	/* last: once consumed the slot may be retired and reused */
	unref(rt, task);
}

static void trace_completion(struct pto_runtime *rt,
			     const struct pto_completion *c)
{
	struct pto_task_desc *d = pto_desc(rt, c->task_id);

	pto_trace_task(rt->trace, rt, c,
		       rt->kernels[d->kernel_id % PTO_MAX_KERNELS].name);
}

/* Core c finished a task: one slot of its queue is free again. */
static void core_done(struct pto_runtime *rt, uint32_t c)
{
	struct pto_sched *s = &rt->sched;
	uint32_t depth = s->core_outstanding[c]--, t = s->core_type[c];

	pto_coreload_move(&s->load[t], c - rt->be.first_core[t], depth,
			  depth - 1);
}

static int reap(struct pto_runtime *rt, struct ready_batch *rb)
{
	struct pto_sched *s = &rt->sched;
	uint32_t mask = s->cring_size - 1;
	int n = 0;

	for (;;) {
		struct pto_completion *c = &rt->be.cring_entries[s->cring_head & mask];
		struct pto_completion cp;

		if (load_acquire(&c->seq) != (uint32_t)(s->cring_head + 1))
			break;
		cp = *c;
		/* read without the lock by work_pending() */
		WRITE_ONCE(s->cring_head, s->cring_head + 1);
		n++;
		if (cp.core < rt->be.num_cores) {
			const struct pto_task_desc *d = pto_desc(rt, cp.task_id);
			uint32_t type = d->worker_type;

			core_done(rt, cp.core);
			if (type < PTO_NUM_WORKER_TYPES && cp.end_ns > cp.start_ns)
				STAT_ADD(rt->sst.busy_ns[type],
					 cp.end_ns - cp.start_ns);
			pto_pace_note(&s->pace, d->kernel_id,
				      cp.end_ns - cp.start_ns);
			if (rt->trace)
				trace_completion(rt, &cp);
		}
		s->outstanding--;
		complete_task(rt, cp.task_id, cp.core, cp.status, rb);
	}
	if (n)
		store_release(&rt->be.cring->head, s->cring_head);
	return n;
}

/* Task ids below the returned one are published and may be scanned. */
static uint64_t published_head(struct pto_runtime *rt)
{
	uint64_t head = load_acquire(&rt->win->notify.task_head);

	uint64_t peeked = READ_ONCE(rt->sched.peeked);

	return head > peeked ? head : peeked;
}

/* The handle an order ring entry names (stored + 1, with a flag). */
static inline uint64_t order_handle(uint64_t entry)
{
	return (entry & ~PTO_ORDER_UNSCOPED) - 1;
}

/*
 * The entry at order position id, if it is complete: a handle naming the
 * next sequence number of its ring.  An entry of the order ring's previous
 * lap names a task scanned already, so it never passes.
 */
static bool order_entry(struct pto_runtime *rt, uint64_t id, uint64_t *entry)
{
	uint64_t e = load_acquire(&rt->order[id & rt->order_mask]);
	uint64_t h = order_handle(e);
	uint32_t r = PTO_TASK_RING(h);

	/* an entry never written holds 0: h is all ones, no ring */
	if (r >= rt->nrings ||
	    PTO_TASK_SEQ(h) != READ_ONCE(rt->sched.ring[r].scanned))
		return false;
	*entry = e;
	return true;
}

/*
 * Find tasks the orchestrator has submitted but not yet published: it
 * publishes in batches (flush_published()), and an orchestration busy
 * with work of its own between two submissions would leave a part batch
 * unseen.  The orchestrator stores a task's order entry last, with
 * release, so an entry that names the next task of its ring is complete.
 * Only an idle scheduler about to sleep looks: the entries being written
 * are on the orchestrator's lines.  Peeked tasks are scanned at once, in
 * order, so each entry is checked against its ring's progress.
 */
static void scan_task(struct pto_runtime *rt, uint64_t id, uint64_t entry,
		      struct ready_batch *rb);

static bool peek_unpublished(struct pto_runtime *rt, struct ready_batch *rb)
{
	struct pto_sched *s = &rt->sched;
	uint64_t from = s->scanned, id, entry;

	for (id = from; order_entry(rt, id, &entry); id++)
		scan_task(rt, id, entry, rb);
	if (id == from)
		return false;
	/* read without the lock by work_pending() */
	WRITE_ONCE(s->scanned, id);
	if (id > s->peeked)
		WRITE_ONCE(s->peeked, id);
	WRITE_ONCE(rt->win->sched.tasks_scanned, id);
	return true;
}

/*
 * Take in one published task: walk the producers the orchestrator listed
 * and link the task into the fanout of each one still unfinished.
 *
 * Only this thread changes a task's state and references, so no lock is
 * needed; what must hold is that a listed producer is still in its slot and
 * still has its results.  The orchestrator lists only producers it saw
 * alive, and a producer stays alive while its scope holds it; scope ends
 * are applied only after every task submitted before them was scanned
 * (process_releases()), so each consumer the scope's producers had when it
 * ended is counted here first.  A producer already retired (below its
 * ring's retired mark) or consumed has finished and its results are
 * final: the task neither waits for it nor holds it.
 */
/* A task never dispatched (a pto_alloc() buffer) completes when scanned. */
static __attribute__((noinline))
void complete_undispatched(struct pto_runtime *rt, uint64_t task,
			   struct ready_batch *rb)
{
	complete_task(rt, task, UINT32_MAX, 0, rb);
}

static void scan_task(struct pto_runtime *rt, uint64_t id, uint64_t entry,
		      struct ready_batch *rb)
{
	struct pto_window_sched *ws = &rt->win->sched;
	struct pto_sched *s = &rt->sched;
	uint64_t task = order_handle(entry);
	struct pto_sched_slot *ss = sslot(rt, task);
	uint32_t ring = PTO_TASK_RING(task);
	const struct pto_dep_entry *dep = rt->ring[ring].dep;
	uint32_t e, linked = 0;

	WRITE_ONCE(ss->state, PTO_TASK_PENDING);
	/* its scope, if it holds the task's buffers; and not completed */
	ss->scope_held = !(entry & PTO_ORDER_UNSCOPED);
	ss->live = ss->scope_held + 1;
	ss->waiting = 1;	/* until the scan is done */
	ss->fanout_head = 0;
	ss->id = id;
	for (e = pto_desc(rt, task)->fanin_head; e; e = dep[e - 1].next) {
		uint64_t pid = dep[e - 1].task_id;
		uint32_t pr = PTO_TASK_RING(pid), link = PTO_DEP_LINK(ring, e);
		struct pto_sched_dep *sd = sdep(rt, link);
		struct pto_sched_ring *psr = &s->ring[pr % PTO_MAX_RINGS];
		struct pto_sched_slot *ps;

		sd->held = pr < rt->nrings &&
			   PTO_TASK_SEQ(pid) >= psr->retired &&
			   PTO_TASK_SEQ(pid) < psr->scanned &&
			   pid != task;
		if (!sd->held)
			continue;
		ps = sslot(rt, pid);
		if (!ref_get(s, ps)) {	/* consumed: its results are final */
			sd->held = 0;
			continue;
		}
		sd->consumer = task;
		count_inc(s, &ss->waiting);
		if (fanout_add(s, ps, link, sd))
			linked++;
		else		/* completed already */
			count_dec(s, &ss->waiting);
	}
	/* read without the lock by retirable() */
	WRITE_ONCE(s->ring[ring].scanned, PTO_TASK_SEQ(task) + 1);
	s->unretired |= 1u << ring;
	shared_add(s, &ws->active, 1);
	if (linked)
		shared_add(s, &ws->waiting, 1);
	/* the scan's own count: whoever drops the last one makes it ready */
	if (count_dec(s, &ss->waiting))
		return;
	if (linked)
		shared_add(s, &ws->waiting, (uint32_t)-1);
	if (pto_desc(rt, task)->flags & PTO_TASK_F_NO_DISPATCH)
		complete_undispatched(rt, task, rb);
	else
		make_ready(rt, task, rb);
}

/*
 * Descriptors and dependency entries arrive from the orchestrator's CPU,
 * a cross-CPU transfer each, which costs more than a whole task's
 * bookkeeping on the machines PTO was measured on.  Asking for a batch's
 * lines at once overlaps those transfers instead of taking them one after
 * the other.
 */
static void prefetch_published(struct pto_runtime *rt, uint64_t from,
			       uint64_t to)
{
	uint64_t id, e;

	if (to - from > SCAN_PREFETCH)
		to = from + SCAN_PREFETCH;
	for (id = from; id < to; id++) {
		e = READ_ONCE(rt->order[id & rt->order_mask]);
		__builtin_prefetch(pto_desc(rt, order_handle(e)));
	}
}

static int scan(struct pto_runtime *rt, struct ready_batch *rb)
{
	struct pto_sched *s = &rt->sched;
	uint64_t from = s->scanned, head = published_head(rt), id;

	if (from == head)
		return 0;
	prefetch_published(rt, from, head);
	for (id = from; id < head; id++)
		scan_task(rt, id, load_acquire(&rt->order[id & rt->order_mask]),
			  rb);
	/* read without the lock by work_pending() */
	WRITE_ONCE(s->scanned, head);
	WRITE_ONCE(rt->win->sched.tasks_scanned, head);
	return (int)(head - from);
}

/*
 * Apply scope ends.  The orchestrator publishes a scope's tasks before it
 * reports the scope's end, so every task the entry covers is published
 * when the entry is seen; scanning them first is what keeps their
 * producers alive for them (see scan_task()).
 */
static int process_releases(struct pto_runtime *rt, struct ready_batch *rb)
{
	struct pto_window_header *w = rt->win;
	uint64_t head = load_acquire(&w->notify.release_head);
	uint64_t tail = w->sched.release_tail;
	int n = 0;

	for (; tail < head; tail++, n++) {
		struct pto_release_entry r = rt->be.release[tail & rt->release_mask];
		uint32_t ring = PTO_TASK_RING(r.begin);
		uint64_t seq;

		if (ring >= rt->nrings)
			continue;
		if (rt->sched.ring[ring].scanned < PTO_TASK_SEQ(r.end))
			scan(rt, rb);
		/*
		 * Tasks the scope did not hold may have retired already, and
		 * their slots gone to later tasks: only those from the
		 * ring's retired mark on are still the scope's.
		 */
		seq = PTO_TASK_SEQ(r.begin);
		if (seq < rt->sched.ring[ring].retired)
			seq = rt->sched.ring[ring].retired;
		for (; seq < PTO_TASK_SEQ(r.end); seq++) {
			uint64_t task = PTO_TASK_HANDLE(ring, seq);
			struct pto_sched_slot *ss = sslot(rt, task);

			if (!ss->scope_held)
				continue;
			ss->scope_held = 0;
			unref(rt, task);
		}
	}
	if (n)
		store_release(&w->sched.release_tail, tail);
	return n;
}

/* Queue task on core c (the device reads the descriptor from the window). */
static void queue_on_core(struct pto_runtime *rt, uint32_t type, uint32_t c,
			  uint64_t task)
{
	struct pto_core_regs *r = pto_regs(&rt->be, c);
	struct pto_sched *s = &rt->sched;
	uint32_t db = r->doorbell, depth = s->core_outstanding[c]++;

	/* atomic: a core may still read a slot it then fails to claim */
	WRITE_ONCE(r->queue[db % PTO_CORE_QUEUE_SLOTS], task + 1);
	store_release(&r->doorbell, db + 1);
	pto_coreload_move(&s->load[type], c - rt->be.first_core[type], depth,
			  depth + 1);
	s->outstanding++;
	/* listed once per round for the kick that follows it */
	if (s->kick_round[c] != s->round) {
		s->kick_round[c] = s->round;
		s->kick[s->nkick++] = c;
	}
}

/*
 * Fill the cores of one type breadth-first: every idle core gets a task
 * before any core gets a second, so queueing never starves a core while
 * others have a backlog.  Each pick costs the same on 2 cores or 200
 * (see coreload.h).
 */
static int dispatch_type(struct pto_runtime *rt, uint32_t type,
			 uint32_t home)
{
	struct pto_sched *s = &rt->sched;
	struct pto_ready_queue *q = &s->ready[type];
	uint32_t n = rt->be.cores[type], first = rt->be.first_core[type];
	uint32_t start = s->rr[type], i, k;
	int dispatched = 0;

	/*
	 * A core thread scheduling after its own task (PTO_SCHED_WORKERS)
	 * is awake and about to look at its queue: among equally loaded
	 * cores its own comes first.  A dependency chain then stays on one
	 * thread instead of waking the other for every task, which on a
	 * machine other processes keep busy waits a time slice for a CPU.
	 */
	if (home - first < n)
		start = home - first;
	while (!pto_rq_empty(q) && s->outstanding < s->cring_size) {
		k = pto_desc(rt, pto_rq_peek(q))->kernel_id;
		i = pto_coreload_pick(&s->load[type], n, start,
				      pto_pace_depth(&s->pace, k));
		if (i == PTO_CORELOAD_NONE)
			break;
		queue_on_core(rt, type, first + i, pto_rq_pop(q));
		dispatched++;
	}
	s->rr[type] = s->rr[type] + 1 < n ? s->rr[type] + 1 : 0;
	return dispatched;
}

/* After a failure nothing more runs: complete the ready tasks as cancelled. */
static int cancel_ready(struct pto_runtime *rt, struct ready_batch *rb)
{
	int n = 0;
	uint32_t t;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		while (!pto_rq_empty(&rt->sched.ready[t])) {
			complete_task(rt, pto_rq_pop(&rt->sched.ready[t]),
				      UINT32_MAX, -ECANCELED, rb);
			n++;
		}
	}
	return n;
}

/*
 * Queue the ready tasks on cores, then tell the device about the cores
 * queued on, all in one kick: it costs one fence (and on pto.ko at most
 * one system call) however many there are.
 */
static int dispatch(struct pto_runtime *rt, struct ready_batch *rb)
{
	struct pto_sched *s = &rt->sched;
	uint32_t t;
	int n = 0;

	if (s->shared)	/* the core threads take ready tasks themselves */
		return 0;
	if (s->failed)
		return cancel_ready(rt, rb);
	s->nkick = 0;
	if (++s->round == 0) {	/* wrapped: no stale mark may match */
		memset(s->kick_round, 0,
		       (rt->be.num_cores + 1) * sizeof(*s->kick_round));
		s->round = 1;
	}
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (!pto_rq_empty(&s->ready[t]))
			n += dispatch_type(rt, t, rb->home);
	if (s->nkick)
		rt->be.ops->kick(&rt->be, s->kick, s->nkick);
	return n;
}

/*
 * A blocked orchestrator is woken in batches: after wake_batch retirements,
 * or as soon as the device is about to run dry (few tasks left active), or
 * when the scheduler itself goes idle (force).  One futex wake per slot
 * freed would make a full window cost a system call per task.  With no
 * retirement since its last wake-up there is nothing to tell it: waking it
 * anyway, as an idle scheduler did, made the two threads wake each other
 * in turn for as long as the orchestrator waited.
 */
static void wake_orchestrator(struct pto_runtime *rt, uint32_t retired,
			      bool force)
{
	struct pto_window_header *w = rt->win;
	struct pto_sched *s = &rt->sched;
	uint32_t sleeping;

	s->retired_unwoken += retired;
	smp_mb();	/* progress store before the sleeping load */
	sleeping = READ_ONCE(w->orch_flags.sleeping);
	if (!sleeping) {
		s->retired_unwoken = 0;
		return;
	}
	/* pto_wait(): it sleeps until every task it published completed */
	if (sleeping == PTO_ORCH_WAITS_TASKS) {
		wake_task_waiter(rt);
		return;
	}
	/* nothing new since its last wake-up: it would only sleep again */
	if (!s->retired_unwoken)
		return;
	if (!force && s->retired_unwoken < s->wake_batch &&
	    READ_ONCE(w->sched.active) > 2 * rt->be.num_cores)
		return;
	s->retired_unwoken = 0;
	futex_wake(&w->sched.progress, 1);
}

/*
 * Tell the orchestrator about the tasks retired since the last call: the
 * ring tails it allocates against, the progress count it sleeps on, and a
 * wake-up if it sleeps.  Every store here moves a line from the
 * orchestrator's CPU if it read the tails since, and the progress bump and
 * the fence before the sleeping flag are locked instructions: so this runs
 * once per RETIRE_PUBLISH retirements, and whenever the scheduler runs out
 * of work, not once per loop.
 */
static void publish_retired(struct pto_runtime *rt)
{
	struct pto_window_sched *ws = &rt->win->sched;
	struct pto_sched *s = &rt->sched;
	uint32_t n = s->unpublished, r;

	if (!n)
		return;
	s->unpublished = 0;
	for (r = 0; r < rt->nrings; r++) {
		const struct pto_sched_ring *sr = &s->ring[r];

		if (ws->last_task_alive[r] == sr->retired)
			continue;
		store_release(&ws->heap_tail[r], sr->heap_tail);
		store_release(&ws->dep_tail[r], sr->dep_tail);
		store_release(&ws->last_task_alive[r], sr->retired);
	}
	__atomic_fetch_add(&ws->progress, 1, __ATOMIC_RELEASE);
	wake_orchestrator(rt, n, false);
}

/* Retire a ring's consumed tasks, oldest first, up to its first live one. */
static int retire_ring(struct pto_runtime *rt, uint32_t ring)
{
	struct pto_sched_ring *sr = &rt->sched.ring[ring];
	uint64_t seq = sr->retired, heap_tail = sr->heap_tail;
	uint64_t dep_tail = sr->dep_tail;
	int n = 0;

	while (seq < sr->scanned) {
		uint64_t task = PTO_TASK_HANDLE(ring, seq);
		struct pto_task_desc *d = pto_desc(rt, task);
		struct pto_sched_slot *ss = sslot(rt, task);

		if (load_acquire(&ss->state) != PTO_TASK_CONSUMED)
			break;
		if (d->flags & PTO_TASK_F_HEAP)
			heap_tail = d->packed_end;
		dep_tail += d->fanin_count;	/* its entries, in task order */
		seq++;
		n++;
	}
	WRITE_ONCE(sr->retired, seq);
	sr->heap_tail = heap_tail;
	sr->dep_tail = dep_tail;
	if (seq == sr->scanned)
		rt->sched.unretired &= ~(1u << ring);
	return n;
}

static int retire(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	uint32_t rings = s->unretired;
	int n = 0;

	/* only rings with something to retire: most runs use one or two */
	for (; rings; rings &= rings - 1)
		n += retire_ring(rt, (uint32_t)__builtin_ctz(rings));
	if (!n)
		return 0;
	s->unpublished += n;
	if (s->unpublished >= RETIRE_PUBLISH)
		publish_retired(rt);
	return n;
}

/*
 * Each ring's oldest task as the scheduler sees it, for the orchestrator's
 * deadlock diagnosis; written only when the scheduler goes idle.
 */
static void publish_heads(struct pto_runtime *rt)
{
	struct pto_window_sched *ws = &rt->win->sched;
	uint32_t r;

	for (r = 0; r < rt->nrings; r++) {
		const struct pto_sched_ring *sr = &rt->sched.ring[r];
		struct pto_ring_head h = { .state = 0xffff };

		if (sr->retired < sr->scanned) {
			const struct pto_sched_slot *ss =
				sslot(rt, PTO_TASK_HANDLE(r, sr->retired));

			uint32_t state = READ_ONCE(ss->state);

			h.state = (uint16_t)state;
			h.scope = (uint16_t)READ_ONCE(ss->scope_held);
			/* live counts the scope and "not completed" too */
			h.consumers = READ_ONCE(ss->live) - h.scope -
				      (state < PTO_TASK_COMPLETED);
		}
		WRITE_ONCE(ws->head[r].state, h.state);
		WRITE_ONCE(ws->head[r].scope, h.scope);
		WRITE_ONCE(ws->head[r].consumers, h.consumers);
	}
}

static bool rings_retired(struct pto_runtime *rt)
{
	uint32_t r;

	for (r = 0; r < rt->nrings; r++)
		if (rt->sched.ring[r].retired != rt->sched.ring[r].scanned)
			return false;
	return true;
}

static bool run_finished(struct pto_runtime *rt)
{
	struct pto_window_header *w = rt->win;

	if (!load_acquire(&w->notify.orch_done))
		return false;
	return rt->sched.scanned == load_acquire(&w->notify.task_head) &&
	       rings_retired(rt) &&
	       w->sched.release_tail == load_acquire(&w->notify.release_head) &&
	       rt->sched.outstanding == 0;
}

/*
 * Anything for the scheduler to do without waiting?  The end of the
 * orchestration is not work by itself: it arrives with a wake-up
 * (sched_wake), and what remains after it are completions.
 */
/*
 * With shards, tasks are consumed by the core threads that complete them,
 * outside the steps: has a ring's oldest task become retirable?
 */
static bool retirable(struct pto_runtime *rt)
{
	uint32_t r;

	for (r = 0; r < rt->nrings; r++) {
		const struct pto_sched_ring *sr = &rt->sched.ring[r];
		uint64_t seq = READ_ONCE(sr->retired);

		if (seq < READ_ONCE(sr->scanned) &&
		    load_acquire(&sslot(rt, PTO_TASK_HANDLE(r, seq))->state) ==
		    PTO_TASK_CONSUMED)
			return true;
	}
	return false;
}

static bool work_pending(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	struct pto_window_header *w = rt->win;
	struct pto_completion *c =
		&rt->be.cring_entries[READ_ONCE(s->cring_head) &
				      (s->cring_size - 1)];

	return load_acquire(&c->seq) ==
		(uint32_t)(READ_ONCE(s->cring_head) + 1) ||
	       published_head(rt) != READ_ONCE(s->scanned) ||
	       load_acquire(&w->notify.release_head) !=
		READ_ONCE(w->sched.release_tail) ||
	       cancel_pending(rt) ||
	       (s->shared && retirable(rt));
}

/*
 * Busy, the page is refreshed every STATS_INTERVAL_NS at most; going idle,
 * whenever tasks completed or retired since, so that a monitor never shows
 * work as still to do while the machine sleeps.
 */
static void maybe_publish_stats(struct pto_runtime *rt, bool idle)
{
	uint64_t now, progress;
	uint32_t r;

	if (!rt->page)
		return;
	now = pto_now_ns();
	/* either changes what the page says */
	progress = READ_ONCE(rt->sst.tasks_completed);
	for (r = 0; r < rt->nrings; r++)
		progress += READ_ONCE(rt->win->sched.last_task_alive[r]);
	if (idle ? progress == rt->sched.stats_progress :
	    now - rt->sched.last_stats_ns < STATS_INTERVAL_NS)
		return;
	rt->sched.last_stats_ns = now;
	rt->sched.stats_progress = progress;
	pto_stats_publish(rt);
}

/* Every step once; how much they did. */
static int sched_steps(struct pto_runtime *rt, struct ready_batch *rb)
{
	int n;

	if (cancel_pending(rt))
		note_cancel(rt);
	n = reap(rt, rb);

	n += scan(rt, rb);
	n += process_releases(rt, rb);
	n += dispatch(rt, rb);
	n += retire(rt);
	if (n) {
		rt->sched.idle_sleeps = 0;
		/*
		 * Look at the clock every 64 steps that found work, in every
		 * mode: a count of completions would skip its multiples when
		 * they come in batches (and with shards they come elsewhere).
		 */
		if ((++rt->sched.busy_steps & 63) == 0)
			maybe_publish_stats(rt, false);
	}
	return n;
}

/*
 * The run is over: say so once, and wake whoever waits for it.  The
 * stats page is left to pto_run(), which refreshes it right after
 * (run_end()): a page refreshed here too cost a run of two tasks a fifth
 * of the orchestrator's instructions on its three refreshes.
 */
/*
 * The run is over: wake the orchestrator if it sleeps on done.  Mostly it
 * does not (it finished the run itself, lending a hand, or spins on done
 * for a run of a few tasks), and a wake-up of nobody was a system call,
 * a fifth of an empty run's time.
 */
static void finish_run(struct pto_runtime *rt)
{
	rt->sched.finished = true;
	publish_heads(rt);
	store_release(&rt->sched.done, 1);
	smp_mb();	/* done before the sleeper's flag: see sleep_on_done() */
	if (READ_ONCE(rt->sched.done_sleeper))
		futex_wake(&rt->sched.done, INT32_MAX);
}

/*
 * Idle spinning is adaptive between these bounds (pause instructions): a
 * sleep cut short by new work was a wasted pair of system calls, so the
 * budget doubles; a long sleep means the spinning took a CPU from the
 * kernels for nothing, so it halves.  The bounds keep a spell of spinning
 * to microseconds, less than a futex round trip costs.
 */
#define SPINS_MIN 64
#define SPINS_MAX 8192

/*
 * Going to sleep (sleeping set, then a fence): has a task been submitted
 * that nobody has seen, its order entry written but not yet published?
 * The orchestrator looks at the flag only after it wrote the entry, so
 * one of the two sees the other but for the orchestrator's store buffer
 * (it has no fence of its own per task): without this look, a task
 * submitted between the last peek and the flag went unseen for the
 * sleeper's whole nap.  Reads only: the scanning is left to the loop
 * that finds it.
 */
static bool unpublished_waiting(struct pto_runtime *rt)
{
	uint64_t entry;

	return order_entry(rt, READ_ONCE(rt->sched.scanned), &entry);
}

/*
 * The scheduling side is going to sleep: a new sleep, which the
 * orchestrator's next task wakes (publish()), whatever it woke before.
 */
static void mark_sleeping(struct pto_runtime *rt)
{
	/* atomic: two core threads may each have been the last awake */
	__atomic_fetch_add(&rt->sched.sleep_gen, 1, __ATOMIC_RELAXED);
	store_release(&rt->win->sched_flags.sleeping, 1);
}

/*
 * The orchestrator publishes without a fence and wakes us when it sees us
 * asleep; if it published just as we went to sleep, neither side saw the
 * other.  The first sleep of an idle spell is therefore short, which bounds
 * that rare delay to a millisecond; later ones are long.
 */
static int sleep_until_work(struct pto_runtime *rt)
{
	struct pto_window_header *w = rt->win;
	uint32_t seen = load_acquire(&w->notify.sched_wake);
	uint32_t ms = rt->sched.idle_sleeps++ ? SCHED_SLEEP_MS : 1;
	struct pto_sched *s = &rt->sched;
	uint64_t t0 = pto_now_ns();
	int ret = 0;

	publish_heads(rt);
	wake_orchestrator(rt, 0, true);
	mark_sleeping(rt);
	/* sleeping before the work loads; pairs with the orchestrator */
	smp_mb();
	if (!work_pending(rt) && !unpublished_waiting(rt))
		ret = rt->be.ops->wait(&rt->be, s->cring_head, seen, ms);
	/* a removed device's wait returns at once: wait for the run's end */
	if (ret == -ENODEV)
		futex_wait(&w->notify.sched_wake, seen, ms);
	/*
	 * So does a failed context's, whose cores still complete what is
	 * queued (cancelled): look for those completions every millisecond.
	 */
	if (ret == -EIO)
		futex_wait(&w->notify.sched_wake, seen, 1);
	WRITE_ONCE(w->sched_flags.sleeping, 0);
	if (pto_now_ns() - t0 < SHORT_SLEEP_NS) {
		if (s->spin_budget < SPINS_MAX)
			s->spin_budget *= 2;
	} else if (s->spin_budget > SPINS_MIN) {
		s->spin_budget /= 2;
	}
	return ret;
}

/*
 * The device was removed during the run (its wait says -ENODEV): the
 * tasks queued on its cores will never complete.  The run fails with
 * -ENODEV, and those tasks are completed here as failed, so that it
 * drains (the tasks not started are cancelled, as after any failure)
 * and pto_run() returns rather than waiting for them forever.  What the
 * device completed before it went is reaped first, so that no task is
 * completed twice; a core runs its queue in order, so the tasks still
 * outstanding on it are the last ones queued on it.
 */
static void device_lost(struct pto_runtime *rt, struct ready_batch *rb)
{
	struct pto_sched *s = &rt->sched;
	uint32_t c;

	reap(rt, rb);

	if (stop_run(s)) {
		pto_log("%s: the device went away during the run; its tasks "
			"in flight fail with -ENODEV and the rest are not "
			"run\n", rt->device);
		WRITE_ONCE(rt->win->sched_flags.error, -ENODEV);
	}
	for (c = 0; c < rt->be.num_cores; c++) {
		const struct pto_core_regs *r = pto_regs(&rt->be, c);

		while (s->core_outstanding[c]) {
			uint32_t slot = (r->doorbell - s->core_outstanding[c]) %
					PTO_CORE_QUEUE_SLOTS;
			uint64_t task = READ_ONCE(r->queue[slot]) - 1;

			core_done(rt, c);
			s->outstanding--;
			complete_task(rt, task, c, -ENODEV, rb);
		}
	}
}

/*
 * How often (idle spins) the scheduling side looks for tasks submitted
 * but not yet published: the orchestrator publishes in batches of
 * PUBLISH_BATCH, so that task_head's line crosses to the scheduler once
 * per batch, and one that does work of its own between submissions left
 * the tasks of a part batch unseen for the whole spin (with 5 us between
 * submissions, a task started 85 us after it was submitted, half of the
 * time).  Every few microseconds bounds that, and costs a streaming
 * orchestrator one order-ring line now and then.
 */
#define PEEK_SPINS 64

/*
 * Idle spins before the scheduler thread sleeps.  On one CPU none: the
 * thread that would bring work (the orchestrator, a core thread) waits
 * for this very CPU until the spin ends, and a pto_wait() round trip
 * took 21 us instead of under 1 us.  The sleep's futex wake-up hands the
 * CPU back at once.
 */
static unsigned int sched_spins(const struct pto_runtime *rt)
{
	return rt->be.host_cpus == 1 ? 0 : rt->sched.spin_budget;
}

/* PTO_SCHED_THREAD: one run's scheduling, on the scheduler's thread. */
static void sched_run(struct pto_runtime *rt)
{
	uint64_t t0 = rt->trace ? pto_now_ns() : 0;
	struct ready_batch rb = { .home = UINT32_MAX };
	unsigned int idle = 0;

	for (;;) {
		if (sched_steps(rt, &rb)) {
			idle = 0;
			continue;
		}
		publish_retired(rt);
		if (run_finished(rt))
			break;
		if (++idle < sched_spins(rt)) {
			if (idle % PEEK_SPINS == 0 &&
			    peek_unpublished(rt, &rb)) {
				idle = 0;
				continue;
			}
			idle_poll(idle);
			continue;
		}
		maybe_publish_stats(rt, true);
		if (peek_unpublished(rt, &rb)) {
			idle = 0;
			continue;
		}
		if (sleep_until_work(rt) == -ENODEV)
			device_lost(rt, &rb);
		idle = 0;
	}
	if (rt->trace)	/* before finish_run() lets the runtime go */
		pto_trace_sched_run(rt->trace, t0);
	finish_run(rt);
}

/*
 * Spin for up to ns while *word is val (the clock read every 64 pauses);
 * true when it moved.  For the hand-offs at the two ends of a run, where
 * a program making many short runs would otherwise pay two wake-ups per
 * run; the bound keeps the CPU the spinning takes to tens of microseconds
 * per run.  With a lender (the orchestrator at a run's end), it lends a
 * hand every PTO_LEND_EVERY pauses, and the ns start over whenever that
 * found work.
 */
static bool spin_while(const uint32_t *word, uint32_t val, uint64_t ns,
		       struct pto_runtime *lender)
{
	unsigned int spins;
	uint64_t until;

	if (load_acquire(word) != val)	/* mostly, at a run's end: no clock */
		return true;
	until = pto_now_ns() + ns;
	for (spins = 1; (spins & 63) || pto_now_ns() < until; spins++) {
		if (load_acquire(word) != val)
			return true;
		if (lender && spins % PTO_LEND_EVERY == 0 &&
		    pto_sched_lend_hand(lender, false))
			until = pto_now_ns() + ns;
		idle_poll(spins);
	}
	return false;
}

/*
 * Between runs the thread waits for the next one (run_seq moves past
 * *seen), spinning a while first, so that a program that runs again at
 * once does not pay a wake-up.  False: the runtime goes.
 */
static bool wait_for_run(struct pto_runtime *rt, uint32_t *seen)
{
	struct pto_sched *s = &rt->sched;

	if (!spin_while(&s->run_seq, *seen, RUN_SPIN_NS, NULL)) {
		WRITE_ONCE(s->parked, 1);
		/* parked before the run_seq load; pairs with sched_thread_start() */
		smp_mb();
		while (load_acquire(&s->run_seq) == *seen)
			futex_wait(&s->run_seq, *seen, UINT32_MAX);
		WRITE_ONCE(s->parked, 0);
	}
	/* it moves once per run: the next only after this one is done */
	*seen = load_acquire(&s->run_seq);
	return !load_acquire(&s->quit);
}

/*
 * PTO_SCHED_THREAD: the scheduler's own thread, started by the first run
 * and kept until the runtime goes: creating and joining a thread per run
 * made most of an empty run's cost.
 */
static void *sched_main(void *arg)
{
	struct pto_runtime *rt = arg;
	uint32_t seen = 0;

	pto_backend_thread_start(&rt->be, rt->be.num_cores);
	while (wait_for_run(rt, &seen))
		sched_run(rt);
	return NULL;
}

/* Start a run on the scheduler's thread, made by the first run. */
static int sched_thread_start(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	int ret;

	if (!s->thread_started) {
		ret = pto_backend_thread_create(&rt->be, rt->be.num_cores,
						"pto-sched", &s->thread,
						sched_main, rt);
		if (ret)
			return ret;
		s->thread_started = true;
	}
	store_release(&s->run_seq, s->run_seq + 1);
	/* the run before the parked load; pairs with wait_for_run() */
	smp_mb();
	if (READ_ONCE(s->parked))
		futex_wake(&s->run_seq, 1);
	return 0;
}

/* Between runs: the scheduler's thread exits. */
static void sched_thread_stop(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;

	if (!s->thread_started)
		return;
	store_release(&s->quit, 1);
	store_release(&s->run_seq, s->run_seq + 1);
	futex_wake(&s->run_seq, 1);
	pthread_join(s->thread, NULL);
	s->thread_started = false;
	s->quit = 0;
	s->run_seq = 0;
}

/* ---- PTO_SCHED_WORKERS and _SHARDS: scheduling on the core threads ----- */

static bool sched_trylock(struct pto_sched *s)
{
	return !READ_ONCE(s->lock) &&
	       !__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE);
}

/*
 * The right to schedule, waited for: a core thread holds it only for a
 * round of scheduling steps, unless it lost its CPU, maybe to the waiter
 * itself (the orchestrator and the core threads may outnumber the CPUs):
 * then spinning would keep it from the CPU for a whole time slice.
 */
static void sched_lock(struct pto_sched *s)
{
	unsigned int spins = 0;

	while (!sched_trylock(s)) {
		if (++spins < 256)
			idle_poll(spins);
		else
			sched_yield();
	}
}

/*
 * A core thread lets the right to schedule go after each task it ran, and
 * found no work then.  Publishing the retirements each time, while the
 * orchestrator polled those lines for a free slot, cost each task a few
 * cache-line transfers: NOP bgemm ran at 400 ns/task instead of 180 in
 * about half the runs, whichever core thread held the right.  A core
 * thread with a task of its own queued schedules again once that is done;
 * when its kernel ran briefly last time that is soon, so the retirements
 * wait for it, up to RETIRE_PUBLISH of them.  Before a long task (or one
 * of a kernel not seen yet) they do not: the orchestrator may be waiting
 * for them.
 */
static bool publish_can_wait(struct pto_runtime *rt, uint32_t core)
{
	const struct pto_sched *s = &rt->sched;
	const struct pto_core_regs *r;
	uint32_t next;
	uint64_t task;

	if (s->unpublished >= RETIRE_PUBLISH || core >= rt->be.num_cores)
		return false;
	/* the caller is that core's thread: nobody else claims its tasks */
	r = pto_regs(&rt->be, core);
	next = load_acquire(&r->consumed);
	if (next == READ_ONCE(r->doorbell))
		return false;
	task = READ_ONCE(r->queue[next % PTO_CORE_QUEUE_SLOTS]) - 1;
	return pto_pace_short(&s->pace, pto_desc(rt, task)->kernel_id);
}

/*
 * With the right to schedule: every step until none has work.  The
 * orchestrator's part batch is not looked at here but by a core thread
 * about to sleep (worker_idle()): a core thread that holds the right after
 * each task it ran would otherwise read the lines the orchestrator is
 * writing once per task (NOP bgemm: 350-500 ns/task against 240-310).
 * A task made ready is never left in a ready queue when the right is let
 * go, since looking for work (work_pending()) does not count ready tasks.
 * (With shards ready tasks wait in the shards, where the core threads
 * look.)
 */
static int sched_locked(struct pto_runtime *rt, struct ready_batch *rb)
{
	int n = 0, k;

	do {
		k = sched_steps(rt, rb);
		n += k;
	} while (k);
	if (!publish_can_wait(rt, rb->home))
		publish_retired(rt);
	if (run_finished(rt) && !rt->sched.finished)
		finish_run(rt);
	return n;
}

static void sched_unlock(struct pto_sched *s)
{
	store_release(&s->lock, 0);
	/* letting go before looking for work; pairs with the posters */
	smp_mb();
}

/*
 * Shards: wake sleeping core threads for the tasks a batch made ready,
 * one per task, except the one the calling core thread (self) takes next
 * itself.
 */
static void flush_ready(struct pto_runtime *rt, struct ready_batch *rb)
{
	struct pto_sched *s = &rt->sched;
	uint32_t self = rb->home < rt->be.num_cores ?
			s->core_type[rb->home] : UINT32_MAX;
	uint32_t t, n;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		n = rb->made[t];
		if (!n)
			continue;
		rb->made[t] = 0;
		if (t == self)
			n--;
		if (n)
			rt->be.ops->ready(&rt->be, t, n);
	}
}

/*
 * Schedule until there is nothing to do.  Whoever holds the right to
 * schedule finishes the work of every thread that found it taken: after
 * letting go it looks once more, so work that arrived just as it let go is
 * never left behind (a thread posting a completion and then finding the
 * right taken relies on that).  core: the calling core thread, or
 * UINT32_MAX.
 */
static int sched_poll(struct pto_runtime *rt, bool force, uint32_t core)
{
	struct ready_batch rb = { .home = core };
	struct pto_sched *s = &rt->sched;
	int n = 0;

	/* idle threads look here often: only lines no one writes per task */
	if (!force && !work_pending(rt))
		return 0;
	do {
		if (READ_ONCE(s->done))
			break;
		/*
		 * Forced (the orchestrator, its run over), the right is
		 * waited for: the end of the orchestration is no work that
		 * others look for, so a holder that read it too early would
		 * leave the run unfinished for a whole wait.
		 */
		if (force)
			sched_lock(s);
		else if (!sched_trylock(s))
			break;
		force = false;
		n += sched_locked(rt, &rb);
		sched_unlock(s);
	} while (!READ_ONCE(s->done) && work_pending(rt));
	if (s->shared)
		flush_ready(rt, &rb);
	return n;
}

/*
 * A worker is going to sleep.  Each looks for the orchestrator's part batch
 * first (the one thread that does when nobody schedules); the last of them
 * also tells the orchestrator (which then wakes one with notify()) and
 * looks for work once more.  One that finds the right to schedule taken
 * sleeps, as the holder looks before it sleeps itself, except the last:
 * the holder may be another worker on its way to sleep, which counted on
 * the last one to tell the orchestrator.  False: do not sleep (yet).
 */
static bool worker_idle(struct pto_runtime *rt, bool last)
{
	struct ready_batch rb = { .home = UINT32_MAX };
	struct pto_window_header *w = rt->win;
	bool found;

	if (!sched_trylock(&rt->sched))
		return !last;
	found = peek_unpublished(rt, &rb);
	if (found) {
		sched_locked(rt, &rb);
	} else if (last && !READ_ONCE(rt->sched.done)) {
		/* (once the run is over, the page is the orchestrator's) */
		publish_heads(rt);
		wake_orchestrator(rt, 0, true);
		/* ptotop sees what is done before the machine goes quiet */
		maybe_publish_stats(rt, true);
	}
	sched_unlock(&rt->sched);
	if (found) {
		if (rt->sched.shared)
			flush_ready(rt, &rb);
		return false;
	}
	if (!last)
		return true;
	mark_sleeping(rt);
	/* sleeping before the work loads; pairs with the orchestrator */
	smp_mb();
	if (work_pending(rt) || unpublished_waiting(rt)) {
		WRITE_ONCE(w->sched_flags.sleeping, 0);
		return false;
	}
	return true;
}

static void worker_awake(struct pto_runtime *rt)
{
	if (READ_ONCE(rt->win->sched_flags.sleeping))
		WRITE_ONCE(rt->win->sched_flags.sleeping, 0);
}

/*
 * Shards: the next ready task for core, from its own shard of its type's
 * queues first, then from the others (stealing); with accept, only one
 * that accept(actx, task) accepts.  After a failure or a cancel the tasks
 * taken are completed as cancelled instead of run.  The cancel is looked
 * for here, not only in the scheduling steps: a core thread takes the
 * next task without them, and while the holder of the right to schedule
 * was preempted a cancelled chain ran on for thousands of tasks.
 */
static bool shard_take(struct pto_runtime *rt, uint32_t core, uint64_t *task,
		       bool (*accept)(void *actx, uint64_t task), void *actx)
{
	struct pto_sched *s = &rt->sched;
	uint32_t type = s->core_type[core], n = s->nshards[type];
	uint32_t own = (core - rt->be.first_core[type]) % n, i;
	struct pto_mpmc *q = s->shard[type];

	for (;;) {
		struct ready_batch rb = { .home = core };

		for (i = 0; i < n; i++)
			if (accept ? pto_mpmc_pop_if(&q[(own + i) % n], task,
						     accept, actx) :
				 pto_mpmc_pop(&q[(own + i) % n], task))
				break;
		if (i == n)
			return false;
		if (cancel_pending(rt))
			note_cancel(rt);
		if (!READ_ONCE(s->failed))
			return true;
		complete_task(rt, *task, UINT32_MAX, -ECANCELED, &rb);
		flush_ready(rt, &rb);
	}
}

/* Shards: a task taken for core goes back to its type's queues, unrun. */
static void shard_give_back(struct pto_runtime *rt, uint32_t core,
			    uint64_t task)
{
	struct pto_sched *s = &rt->sched;
	uint32_t type = s->core_type[core], n = s->nshards[type];

	/* sized for every task of every window: never full */
	pto_mpmc_push(&s->shard[type][(core - rt->be.first_core[type]) % n],
		      task);
}

/* Shards: core ran task (status, its start and end times); complete it. */
static void shard_complete(struct pto_runtime *rt, uint32_t core,
			   uint64_t task, int status, uint64_t start,
			   uint64_t end)
{
	struct ready_batch rb = { .home = core };
	struct pto_sched *s = &rt->sched;
	uint32_t type = s->core_type[core];

	if (end > start)
		shared_add(s, &rt->sst.busy_ns[type], end - start);
	if (rt->trace) {
		struct pto_completion c = {
			.task_id = task, .core = core, .status = status,
			.start_ns = start, .end_ns = end,
		};

		trace_completion(rt, &c);
	}
	complete_task(rt, task, core, status, &rb);
	flush_ready(rt, &rb);
}

/* Shards: anything for core to do, so that it should not sleep? */
static bool shard_has_work(struct pto_runtime *rt, uint32_t core)
{
	struct pto_sched *s = &rt->sched;
	uint32_t type = s->core_type[core], i;

	for (i = 0; i < s->nshards[type]; i++)
		if (pto_mpmc_maybe_nonempty(&s->shard[type][i]))
			return true;
	return work_pending(rt);
}

static int hook_schedule(void *ctx, uint32_t core)
{
	return sched_poll(ctx, false, core);
}

static bool hook_idle(void *ctx, bool last)
{
	return worker_idle(ctx, last);
}

static int hook_peek(void *ctx, uint32_t core)
{
	struct pto_runtime *rt = ctx;
	struct ready_batch rb = { .home = core };
	bool found;

	if (READ_ONCE(rt->sched.done) || !sched_trylock(&rt->sched))
		return 0;
	found = peek_unpublished(rt, &rb);
	if (found)
		sched_locked(rt, &rb);
	sched_unlock(&rt->sched);
	if (found && rt->sched.shared)
		flush_ready(rt, &rb);
	return found;
}

static void hook_awake(void *ctx)
{
	worker_awake(ctx);
}

static bool hook_take(void *ctx, uint32_t core, uint64_t *task)
{
	return shard_take(ctx, core, task, NULL, NULL);
}

static bool hook_take_if(void *ctx, uint32_t core, uint64_t *task,
			 bool (*accept)(void *actx, uint64_t task), void *actx)
{
	return shard_take(ctx, core, task, accept, actx);
}

static void hook_give_back(void *ctx, uint32_t core, uint64_t task)
{
	shard_give_back(ctx, core, task);
}

static void hook_complete(void *ctx, uint32_t core, uint64_t task,
			  int status, uint64_t start, uint64_t end)
{
	shard_complete(ctx, core, task, status, start, end);
}

static bool hook_has_work(void *ctx, uint32_t core)
{
	return shard_has_work(ctx, core);
}

static const struct pto_backend_sched worker_hooks = {
	.schedule = hook_schedule,
	.idle = hook_idle,
	.awake = hook_awake,
	.peek = hook_peek,
};

static const struct pto_backend_sched shard_hooks = {
	.schedule = hook_schedule,
	.idle = hook_idle,
	.awake = hook_awake,
	.peek = hook_peek,
	.take = hook_take,
	.take_if = hook_take_if,
	.give_back = hook_give_back,
	.complete = hook_complete,
	.has_work = hook_has_work,
};

/*
 * The orchestrator waits for tasks with nothing else to do (pto_wait(),
 * the end of a run): with scheduling on the core threads, it schedules
 * too, and runs the short tasks of a core whose thread sleeps, as that
 * core, instead of waking the thread (sim_kick()).  Each hand-off to a
 * core thread and back costs two wake-ups; on a machine other processes
 * keep busy each waits for a CPU, and a loop of one task and pto_wait()
 * took 33-43 us an iteration where OpenMP's task and taskwait took 2-7.
 * Forced (the orchestration is over), the right to schedule is waited
 * for.  True when there was work.
 */
bool pto_sched_lend_hand(struct pto_runtime *rt, bool force)
{
	bool found;

	if (!pto_sched_can_lend(rt))
		return false;
	pto_backend_runs_tasks = true;
	found = sched_poll(rt, force, UINT32_MAX) > 0;
	/*
	 * workers: a core thread that lost its CPU awake, its queue after a
	 * while; shards: the wake-ups the scheduling took over, always
	 */
	if ((!found || rt->sched.mode == PTO_SCHED_SHARDS) && rt->be.ops->help)
		found |= rt->be.ops->help(&rt->be);
	pto_backend_runs_tasks = false;
	return found;
}

/*
 * The run's end, lending a hand, for up to RUN_SPIN_NS after the last
 * work found; true when it came.
 */
static bool lend_until_done(struct pto_runtime *rt)
{
	pto_sched_lend_hand(rt, true);
	return spin_while(&rt->sched.done, 0, RUN_SPIN_NS, rt);
}

/* ---- run boundaries ------------------------------------------------------ */

/*
 * Has anything happened since the last look: a retirement, a completion,
 * or a core in the middle of a task (a long kernel is work, not a stall)?
 */
static bool progressing(struct pto_runtime *rt, uint64_t *seen)
{
	struct pto_window_sched *ws = &rt->win->sched;
	uint64_t now = (uint64_t)load_acquire(&ws->progress) << 32 |
		       (uint32_t)READ_ONCE(ws->tasks_completed);

	if (now != *seen) {
		*seen = now;
		return true;
	}
	return pto_cores_busy(rt);
}

/*
 * Sleep until the run is done, 10 ms at most.  The flag goes up before
 * done is looked at, and finish_run() sets done before it looks at the
 * flag: one of the two sees the other, so the wake-up it skips when the
 * flag is down is never one this thread waits for.
 */
static void sleep_on_done(struct pto_sched *s)
{
	WRITE_ONCE(s->done_sleeper, 1);
	smp_mb();	/* the flag before futex_wait() looks at done */
	futex_wait(&s->done, 0, 10);
	WRITE_ONCE(s->done_sleeper, 0);
}

/*
 * Wait for the run's last task to retire.  With scheduling on the
 * workers, this thread lends a hand before it sleeps.  Nothing at all
 * happening for the stall timeout (as looks at most
 * pto_stall_look_late() apart saw it) is reported with the state of every
 * ring and core, and every core and the scheduler are woken: a lost
 * wake-up shows itself here instead of hanging in silence.
 */
void pto_sched_wait_done(struct pto_runtime *rt)
{
	struct pto_stall_clock clock;
	uint64_t seen = 0, t0 = 0;
	bool reported = false, moved;

	/* a short run is done within microseconds: no sleep and wake-up */
	if (!pto_sched_can_lend(rt))
		spin_while(&rt->sched.done, 0, RUN_SPIN_NS, NULL);
	while (!load_acquire(&rt->sched.done)) {
		if (pto_sched_can_lend(rt) && lend_until_done(rt))
			break;
		if (!t0) {	/* the stall clock starts with the first sleep */
			t0 = pto_now_ns();
			pto_stall_clock_start(&clock,
				(uint64_t)rt->cfg.stall_timeout_ms * 1000000ull,
				t0);
		}
		sleep_on_done(&rt->sched);
		moved = progressing(rt, &seen);
		/* the clock read after the loads */
		if (pto_stall_clock_look(&clock, moved, pto_now_ns()) !=
		    PTO_STALL_STUCK || load_acquire(&rt->sched.done))
			continue;
		if (!reported)
			pto_stall_report(rt, (pto_now_ns() - t0) / 1000000);
		reported = true;
		rt->be.ops->kick(&rt->be, NULL, 0);
		rt->be.ops->notify(&rt->be);
		pto_stall_clock_start(&clock, clock.timeout_ns, pto_now_ns());
	}
}

/*
 * The orchestrator waits for ring space and is about to sleep: publish the
 * retirements a core thread kept back for after its next task
 * (publish_can_wait()).  That task was expected to be short, but a kernel
 * may run as long as it likes, or even wait for the orchestrator.  The
 * holder let the right to schedule go before running it.
 */
void pto_sched_publish_pending(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;

	if (s->mode != PTO_SCHED_WORKERS || !sched_trylock(s))
		return;
	publish_retired(rt);
	sched_unlock(s);
}

/*
 * Shards: per worker type, up to SHARDS_MAX ready queues, each able to
 * hold every task of every window (a task is in one queue at a time).
 */
#define SHARDS_MAX 4

static int init_shards(struct pto_runtime *rt, uint64_t windows)
{
	struct pto_sched *s = &rt->sched;
	uint32_t t, i, n;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		n = rt->be.cores[t] < SHARDS_MAX ? rt->be.cores[t] : SHARDS_MAX;
		if (!n)
			continue;
		s->shard[t] = aligned_alloc(128, n * sizeof(*s->shard[t]));
		if (!s->shard[t])
			return -ENOMEM;
		memset(s->shard[t], 0, n * sizeof(*s->shard[t]));
		s->nshards[t] = n;
		for (i = 0; i < n; i++)
			if (pto_mpmc_init(&s->shard[t][i], windows))
				return -ENOMEM;
	}
	return 0;
}

int pto_sched_init(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	uint64_t windows = 0;
	uint32_t r, t;

	for (r = 0; r < rt->nrings; r++) {
		s->ring[r].slot = calloc(rt->ring[r].task_window,
					 sizeof(*s->ring[r].slot));
		s->ring[r].dep = calloc(rt->ring[r].dep_pool_size,
					sizeof(*s->ring[r].dep));
		if (!s->ring[r].slot || !s->ring[r].dep)
			return -ENOMEM;
		windows += rt->ring[r].task_window;
	}
	s->core_outstanding = calloc(rt->be.num_cores + 1, sizeof(uint32_t));
	s->kick = calloc(rt->be.num_cores + 1, sizeof(uint32_t));
	s->kick_round = calloc(rt->be.num_cores + 1, sizeof(uint32_t));
	if (!s->core_outstanding || !s->kick || !s->kick_round)
		return -ENOMEM;
	s->core_type = calloc(rt->be.num_cores + 1, sizeof(uint8_t));
	if (!s->core_type)
		return -ENOMEM;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		memset(s->core_type + rt->be.first_core[t], t, rt->be.cores[t]);
		if (rt->be.cores[t] > PTO_CORES_PER_TYPE_MAX) {
			pto_log("%s: %u %s cores; the scheduler handles at "
				"most %u of a type\n", rt->device,
				rt->be.cores[t], pto_worker_type_name(t),
				PTO_CORES_PER_TYPE_MAX);
			return -EINVAL;
		}
		pto_coreload_init(&s->load[t], rt->be.cores[t]);
	}
	/* a task is in at most one queue once: all windows together */
	windows = pto_next_pow2(windows);
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		s->ready[t].ids = calloc(windows, sizeof(uint64_t));
		s->ready[t].mask = (uint32_t)windows - 1;
		if (!s->ready[t].ids)
			return -ENOMEM;
	}
	s->cring_size = rt->be.cring->size;
	s->shared = s->mode == PTO_SCHED_SHARDS;
	return s->shared ? init_shards(rt, windows) : 0;
}

void pto_sched_fini(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	uint32_t r, t;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		free(s->ready[t].ids);
		for (r = 0; r < s->nshards[t]; r++)
			pto_mpmc_fini(&s->shard[t][r]);
		free(s->shard[t]);
	}
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		free(s->ring[r].slot);
		free(s->ring[r].dep);
	}
	free(s->core_outstanding);
	free(s->kick);
	free(s->kick_round);
	free(s->core_type);
	memset(s, 0, sizeof(*s));
}

/*
 * A backend that will never run a task again (a removed device, a failed
 * device context) refuses every later run at its start, saying why,
 * rather than queueing tasks that would never complete.
 */
static int backend_unusable(struct pto_runtime *rt)
{
	int st = rt->be.ops->state ? rt->be.ops->state(&rt->be) : 0;

	if (st == -EIO)
		pto_log("pto_run: %s: this runtime's device context has failed "
			"(a task timed out, or the device found the context "
			"broken; see the first failure's message) and runs no "
			"task again: destroy the runtime and create another\n",
			rt->device);
	else if (st)
		pto_log("pto_run: %s: the device is gone (%s): this runtime "
			"runs no task again\n", rt->device, strerror(-st));
	return st;
}

/*
 * Ready for a run: the rings' tails as the last run left them, and the
 * scheduler's thread woken, or the core threads told to schedule.  Those
 * keep the hooks from one run to the next: switching every core thread
 * into scheduling and back took two wake-ups of each, per run.  Between
 * runs they find no work and sleep; the state below is reset with the
 * right to schedule held, so that none of them reads it half done, and
 * the first task of the run wakes one (the orchestrator sees the
 * scheduler asleep).
 */
int pto_sched_start(struct pto_runtime *rt)
{
	struct pto_window_sched *ws = &rt->win->sched;
	struct pto_sched *s = &rt->sched;
	uint32_t r;
	int ret;

	ret = backend_unusable(rt);
	if (ret)
		return ret;
	sched_lock(s);
	s->unretired = 0;
	for (r = 0; r < rt->nrings; r++) {
		struct pto_sched_ring *sr = &s->ring[r];

		WRITE_ONCE(sr->retired, ws->last_task_alive[r]);
		sr->heap_tail = ws->heap_tail[r];
		sr->dep_tail = ws->dep_tail[r];
		if (sr->retired != sr->scanned)
			s->unretired |= 1u << r;
	}
	s->unpublished = 0;
	WRITE_ONCE(s->failed, false);
	s->error_said = 0;
	s->finished = false;
	s->wake_batch = rt->ring[0].task_window / 8;
	if (!s->spin_budget)
		s->spin_budget = SPINS_MIN;
	WRITE_ONCE(rt->win->sched_flags.error, 0);
	store_release(&s->done, 0);
	sched_unlock(s);
	if (s->mode == PTO_SCHED_THREAD)
		return sched_thread_start(rt);
	if (!s->hooked) {
		/* publishes the state above to the core threads */
		rt->be.ops->set_sched(&rt->be, s->shared ? &shard_hooks :
					       &worker_hooks, rt);
		s->hooked = true;
	}
	return 0;
}

/*
 * No thread schedules from now on: the scheduler's thread has exited, or
 * no core thread is in the hooks any more (before the runtime goes).
 */
void pto_sched_stop(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;

	if (s->hooked)
		rt->be.ops->set_sched(&rt->be, NULL, NULL);
	s->hooked = false;
	sched_thread_stop(rt);
}
