// SPDX-License-Identifier: MIT
/*
 * The scheduler thread: turns published tasks into dispatches and
 * completions into readiness and retirement.
 *
 * One loop, five steps, each batched:
 *   reap      completions from the device's completion ring
 *   scan      newly published tasks; those with no pending producer are ready
 *   release   scope ends reported by the orchestrator
 *   dispatch  ready tasks onto the per-core queues, then kick the cores
 *   retire    advance last_task_alive over consumed tasks, and with it the
 *             heap and dependency-pool tails; wake a blocked orchestrator
 * Task states, fanout lists and reference counts are private to this
 * thread: it builds them from the fanin lists the orchestrator publishes,
 * so no lock is shared with the orchestrator.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "stats.h"
#include "sync.h"
#include "trace.h"

/*
 * Idle loop iterations before the scheduler sleeps: adaptive between these
 * bounds.  A sleep cut short by new work was a wasted pair of syscalls, so
 * the budget doubles; a long sleep means the spinning was wasted, so it
 * halves.
 */
#define SCHED_SPINS_MIN 1000
#define SCHED_SPINS_MAX 256000
#define SHORT_SLEEP_NS 100000ull
/* Longest sleep; bounds how stale the stats page can get. */
#define SCHED_SLEEP_MS 50
#define STATS_INTERVAL_NS 10000000ull
/* Descriptors requested ahead of a scan (see prefetch_published()). */
#define SCAN_PREFETCH 64
/* Retirements the orchestrator learns of at a time (publish_retired()). */
#define RETIRE_PUBLISH 32

static struct pto_sched_slot *sslot(struct pto_runtime *rt, uint64_t id)
{
	return &rt->sched.slot[id & rt->window_mask];
}

static void make_ready(struct pto_runtime *rt, uint64_t id)
{
	sslot(rt, id)->state = PTO_TASK_READY;
	pto_rq_push(&rt->sched.ready[pto_desc(rt, id)->worker_type], id);
}

/* The last reference dropped after completion consumes a task. */
static void try_consume(struct pto_runtime *rt, uint64_t id)
{
	struct pto_sched_slot *ss = sslot(rt, id);

	if (ss->state == PTO_TASK_COMPLETED && ss->released == ss->refs)
		ss->state = PTO_TASK_CONSUMED;
}

static void release(struct pto_runtime *rt, uint64_t id)
{
	sslot(rt, id)->released++;
	try_consume(rt, id);
}

static void note_failure(struct pto_runtime *rt, int status)
{
	STAT_ADD(rt->sst.tasks_failed, 1);
	rt->sched.failed = true;
	if (!READ_ONCE(rt->win->sched_flags.error))
		WRITE_ONCE(rt->win->sched_flags.error, status);
}

static void complete_task(struct pto_runtime *rt, uint64_t id, int status)
{
	struct pto_window_sched *ws = &rt->win->sched;
	struct pto_sched_slot *ss = sslot(rt, id);
	struct pto_sched_dep *dep = rt->sched.dep;
	uint32_t e;

	if (status && status != -ECANCELED)
		note_failure(rt, status);
	ss->state = PTO_TASK_COMPLETED;

	/* consumers: one producer fewer to wait for */
	for (e = ss->fanout_head; e; e = dep[e - 1].next) {
		uint64_t cid = dep[e - 1].consumer;

		if (--sslot(rt, cid)->waiting == 0) {
			WRITE_ONCE(ws->waiting, ws->waiting - 1);
			make_ready(rt, cid);
		}
	}
	/* producers: this consumer no longer needs their results */
	for (e = pto_desc(rt, id)->fanin_head; e; e = rt->be.ring[0].dep[e - 1].next)
		if (dep[e - 1].held)
			release(rt, rt->be.ring[0].dep[e - 1].task_id);
	try_consume(rt, id);

	WRITE_ONCE(ws->active, ws->active - 1);
	WRITE_ONCE(ws->tasks_completed, ws->tasks_completed + 1);
	STAT_ADD(rt->sst.tasks_completed, 1);
}

static int reap(struct pto_runtime *rt)
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
		s->cring_head++;
		n++;
		if (cp.core < rt->be.num_cores) {
			struct pto_task_desc *d = pto_desc(rt, cp.task_id);
			uint32_t type = d->worker_type;

			s->core_outstanding[cp.core]--;
			if (type < PTO_NUM_WORKER_TYPES && cp.end_ns > cp.start_ns)
				STAT_ADD(rt->sst.busy_ns[type],
					 cp.end_ns - cp.start_ns);
			if (rt->trace)
				pto_trace_task(rt->trace, &cp, d->kernel_id,
					       rt->kernels[d->kernel_id % PTO_MAX_KERNELS].name);
		}
		s->outstanding--;
		complete_task(rt, cp.task_id, cp.status);
	}
	if (n)
		store_release(&rt->be.cring->head, s->cring_head);
	return n;
}

/* Tasks below the returned id are published and may be scanned. */
static uint64_t published_head(struct pto_runtime *rt)
{
	uint64_t head = load_acquire(&rt->win->notify.task_head);

	return head > rt->sched.peeked ? head : rt->sched.peeked;
}

/*
 * Find tasks the orchestrator has submitted but not yet published: it
 * publishes in batches (flush_published()), and an orchestration busy
 * with work of its own between two submissions would leave a part batch
 * unseen.  A descriptor holding its own task id is complete, as publish()
 * stores that last, with release (task 0 is skipped: a fresh window's
 * descriptors hold id 0).  Only an idle scheduler about to sleep looks:
 * polling the descriptor being filled would take its line from the
 * orchestrator's CPU in the middle of a submission.
 */
static bool peek_unpublished(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	uint64_t id = s->scanned > s->peeked ? s->scanned : s->peeked;
	uint64_t from = id;

	while (id && load_acquire(&pto_desc(rt, id)->task_id) == id)
		id++;
	s->peeked = id;
	return id != from;
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
 * ended is counted here first.  A producer already retired (below
 * sched->retired) or consumed has finished and its results are final: the
 * task neither waits for it nor holds it.
 */
static void scan_task(struct pto_runtime *rt, uint64_t id)
{
	struct pto_sched *s = &rt->sched;
	struct pto_window_sched *ws = &rt->win->sched;
	struct pto_sched_slot *ss = sslot(rt, id);
	uint32_t e;

	ss->state = PTO_TASK_PENDING;
	ss->refs = 1;	/* the owning scope */
	for (e = pto_desc(rt, id)->fanin_head; e; e = rt->be.ring[0].dep[e - 1].next) {
		uint64_t pid = rt->be.ring[0].dep[e - 1].task_id;
		struct pto_sched_dep *sd = &s->dep[e - 1];
		struct pto_sched_slot *ps = sslot(rt, pid);

		sd->held = pid >= s->retired && pid < id &&
			   ps->state != PTO_TASK_CONSUMED;
		if (!sd->held)
			continue;
		ps->refs++;
		if (ps->state >= PTO_TASK_COMPLETED)
			continue;
		sd->consumer = id;
		sd->next = ps->fanout_head;
		ps->fanout_head = e;
		ss->waiting++;
	}
	WRITE_ONCE(ws->active, ws->active + 1);
	if (ss->waiting)
		WRITE_ONCE(ws->waiting, ws->waiting + 1);
	else
		make_ready(rt, id);
}

/*
 * Descriptors and dependency entries arrive from the orchestrator's CPU,
 * a cross-CPU transfer each, which costs more than a whole task's
 * bookkeeping on the machines PTO was measured on.  Asking for a batch's lines at once overlaps those transfers
 * instead of taking them one after the other.
 */
static void prefetch_published(struct pto_runtime *rt, uint64_t from,
			       uint64_t to)
{
	uint64_t id;

	if (to - from > SCAN_PREFETCH)
		to = from + SCAN_PREFETCH;
	for (id = from; id < to; id++)
		__builtin_prefetch(pto_desc(rt, id));
}

static int scan(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	uint64_t head = published_head(rt);
	int n = 0;

	if (s->scanned < head)
		prefetch_published(rt, s->scanned, head);
	for (; s->scanned < head; s->scanned++, n++)
		scan_task(rt, s->scanned);
	if (n)
		WRITE_ONCE(rt->win->sched.tasks_scanned, s->scanned);
	return n;
}

/*
 * Apply scope ends.  The orchestrator publishes a scope's tasks before it
 * reports the scope's end, so every task below r.end is published when r
 * is seen; scanning them first is what keeps their producers alive for
 * them (see scan_task()).
 */
static int process_releases(struct pto_runtime *rt)
{
	struct pto_window_header *w = rt->win;
	uint64_t head = load_acquire(&w->notify.release_head);
	uint64_t tail = w->sched.release_tail;
	int n = 0;

	for (; tail < head; tail++, n++) {
		struct pto_release_entry r = rt->be.release[tail & rt->release_mask];
		uint64_t id;

		if (rt->sched.scanned < r.end)
			scan(rt);
		for (id = r.begin; id < r.end; id++)
			release(rt, id);
	}
	if (n)
		store_release(&w->sched.release_tail, tail);
	return n;
}

/* Queue task id on core c (the device reads the descriptor from the window). */
static void queue_on_core(struct pto_runtime *rt, uint32_t c, uint64_t id)
{
	struct pto_core_regs *r = pto_regs(&rt->be, c);
	uint32_t db = r->doorbell;

	/* atomic: a core may still read a slot it then fails to claim */
	WRITE_ONCE(r->queue[db % PTO_CORE_QUEUE_SLOTS], id + 1);
	store_release(&r->doorbell, db + 1);
	rt->sched.core_outstanding[c]++;
	rt->sched.outstanding++;
}

/*
 * Fill the cores of one type breadth-first: every idle core gets a task
 * before any core gets a second, so queueing never starves a core while
 * others have a backlog.
 */
static int dispatch_type(struct pto_runtime *rt, uint32_t type, bool *kick)
{
	struct pto_sched *s = &rt->sched;
	struct pto_ready_queue *q = &s->ready[type];
	uint32_t first = rt->be.first_core[type], n = rt->be.cores[type];
	uint32_t depth, i, c;
	int dispatched = 0;

	for (depth = 1; depth <= PTO_CORE_QUEUE_SLOTS; depth++) {
		for (i = 0; i < n && !pto_rq_empty(q); i++) {
			c = first + (s->rr[type] + i) % n;
			if (s->core_outstanding[c] >= depth ||
			    s->outstanding >= s->cring_size)
				continue;
			queue_on_core(rt, c, pto_rq_pop(q));
			kick[c] = true;
			dispatched++;
		}
		if (pto_rq_empty(q))
			break;
	}
	s->rr[type] = (s->rr[type] + 1) % (n ? n : 1);
	return dispatched;
}

/* After a failure nothing more runs: complete the ready tasks as cancelled. */
static int cancel_ready(struct pto_runtime *rt)
{
	int n = 0;
	uint32_t t;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		while (!pto_rq_empty(&rt->sched.ready[t])) {
			complete_task(rt, pto_rq_pop(&rt->sched.ready[t]),
				      -ECANCELED);
			n++;
		}
	}
	return n;
}

static int dispatch(struct pto_runtime *rt)
{
	bool kick[rt->be.num_cores ? rt->be.num_cores : 1];
	uint32_t t, c, kicked = 0;
	int n = 0;

	if (rt->sched.failed)
		return cancel_ready(rt);
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (!pto_rq_empty(&rt->sched.ready[t]))
			break;
	if (t == PTO_NUM_WORKER_TYPES)
		return 0;	/* the common idle case: nothing to clear */
	memset(kick, 0, sizeof(kick));
	for (; t < PTO_NUM_WORKER_TYPES; t++)
		if (!pto_rq_empty(&rt->sched.ready[t]))
			n += dispatch_type(rt, t, kick);
	if (!n)
		return 0;
	for (c = 0; c < rt->be.num_cores; c++)
		kicked += kick[c];
	if (kicked > 1 && rt->be.batch_kick) {
		/* one call tells the device about every doorbell */
		rt->be.ops->kick(&rt->be, PTO_KICK_ALL);
		return n;
	}
	for (c = 0; c < rt->be.num_cores; c++)
		if (kick[c])
			rt->be.ops->kick(&rt->be, c);
	return n;
}

/*
 * A blocked orchestrator is woken in batches: after wake_batch retirements,
 * or as soon as the device is about to run dry (few tasks left active), or
 * when the scheduler itself goes idle (force).  One futex wake per slot
 * freed would make a full window cost a system call per task.
 */
static void wake_orchestrator(struct pto_runtime *rt, uint32_t retired,
			      bool force)
{
	struct pto_window_header *w = rt->win;
	struct pto_sched *s = &rt->sched;

	s->retired_unwoken += retired;
	smp_mb();	/* progress store before the sleeping load */
	if (!READ_ONCE(w->orch_flags.sleeping)) {
		s->retired_unwoken = 0;
		return;
	}
	if (!force && s->retired_unwoken < s->wake_batch &&
	    READ_ONCE(w->sched.active) > 2 * rt->be.num_cores)
		return;
	s->retired_unwoken = 0;
	futex_wake(&w->sched.progress, 1);
}

/*
 * Tell the orchestrator about the tasks retired since the last call: the
 * ring tails it allocates against, the progress count it sleeps on, and a
 * wake-up if it sleeps.  Every store here moves the line from the
 * orchestrator's CPU if it read the tails since, and the progress bump and
 * the fence before the sleeping flag are locked instructions: so this runs
 * once per RETIRE_PUBLISH retirements, and whenever the scheduler runs out
 * of work, not once per loop.
 */
static void publish_retired(struct pto_runtime *rt)
{
	struct pto_window_header *w = rt->win;
	struct pto_sched *s = &rt->sched;
	uint32_t n = s->unpublished;

	if (!n)
		return;
	s->unpublished = 0;
	store_release(&w->sched.heap_tail[0], s->heap_tail);
	store_release(&w->sched.dep_tail[0], s->dep_tail);
	store_release(&w->sched.last_task_alive[0], s->retired);
	__atomic_fetch_add(&w->sched.progress, 1, __ATOMIC_RELEASE);
	wake_orchestrator(rt, n, false);
}

static int retire(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	uint64_t id = s->retired, heap_tail = s->heap_tail;
	uint64_t dep_tail = s->dep_tail;
	int n = 0;

	while (id < rt->sched.scanned) {
		struct pto_task_desc *d = pto_desc(rt, id);
		struct pto_sched_slot *ss = sslot(rt, id);

		if (ss->state != PTO_TASK_CONSUMED)
			break;
		if (d->flags & PTO_TASK_F_HEAP)
			heap_tail = d->packed_end;
		dep_tail += d->fanin_count;	/* its entries, in task order */
		*ss = (struct pto_sched_slot){ 0 };
		id++;
		n++;
	}
	if (!n)
		return 0;
	s->retired = id;
	s->heap_tail = heap_tail;
	s->dep_tail = dep_tail;
	s->unpublished += n;
	if (s->unpublished >= RETIRE_PUBLISH)
		publish_retired(rt);
	return n;
}

static bool run_finished(struct pto_runtime *rt)
{
	struct pto_window_header *w = rt->win;

	if (!load_acquire(&w->notify.orch_done))
		return false;
	return w->sched.last_task_alive[0] == load_acquire(&w->notify.task_head) &&
	       w->sched.release_tail == load_acquire(&w->notify.release_head) &&
	       rt->sched.outstanding == 0;
}

/* Anything for the scheduler to do without waiting? */
static bool work_pending(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	struct pto_window_header *w = rt->win;
	struct pto_completion *c =
		&rt->be.cring_entries[s->cring_head & (s->cring_size - 1)];

	return load_acquire(&c->seq) == (uint32_t)(s->cring_head + 1) ||
	       published_head(rt) != s->scanned ||
	       load_acquire(&w->notify.release_head) != w->sched.release_tail ||
	       load_acquire(&w->notify.orch_done);
}

/*
 * The orchestrator publishes without a fence and wakes us when it sees us
 * asleep; if it published just as we went to sleep, neither side saw the
 * other.  The first sleep of an idle spell is therefore short, which bounds
 * that rare delay to a millisecond; later ones are long.
 */
static void sleep_until_work(struct pto_runtime *rt)
{
	struct pto_window_header *w = rt->win;
	uint32_t seen = load_acquire(&w->notify.sched_wake);
	uint32_t ms = rt->sched.idle_sleeps++ ? SCHED_SLEEP_MS : 1;
	struct pto_sched *s = &rt->sched;
	uint64_t t0 = pto_now_ns();

	wake_orchestrator(rt, 0, true);
	WRITE_ONCE(w->sched_flags.sleeping, 1);
	smp_mb();
	if (!work_pending(rt))
		rt->be.ops->wait(&rt->be, s->cring_head, seen, ms);
	WRITE_ONCE(w->sched_flags.sleeping, 0);
	if (pto_now_ns() - t0 < SHORT_SLEEP_NS) {
		if (s->spin_budget < SCHED_SPINS_MAX)
			s->spin_budget *= 2;
	} else if (s->spin_budget > SCHED_SPINS_MIN) {
		s->spin_budget /= 2;
	}
}

static void maybe_publish_stats(struct pto_runtime *rt)
{
	uint64_t now;

	if (!rt->page)
		return;
	now = pto_now_ns();
	if (now - rt->sched.last_stats_ns < STATS_INTERVAL_NS)
		return;
	rt->sched.last_stats_ns = now;
	pto_stats_publish(rt);
}

static void *sched_main(void *arg)
{
	struct pto_runtime *rt = arg;
	unsigned int idle = 0;
	int n;

	pthread_setname_np(pthread_self(), "pto-sched");
	for (;;) {
		n = reap(rt);
		n += scan(rt);
		n += process_releases(rt);
		n += dispatch(rt);
		n += retire(rt);
		if (n) {
			idle = 0;
			rt->sched.idle_sleeps = 0;
			if ((rt->sst.tasks_completed & 1023) == 0)
				maybe_publish_stats(rt);
			continue;
		}
		publish_retired(rt);
		if (run_finished(rt))
			break;
		if (++idle < rt->sched.spin_budget) {
			idle_poll(idle);
			continue;
		}
		maybe_publish_stats(rt);
		if (peek_unpublished(rt)) {
			idle = 0;
			continue;
		}
		sleep_until_work(rt);
		idle = 0;
	}
	pto_stats_publish(rt);
	return NULL;
}

int pto_sched_init(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	uint32_t t;

	s->slot = calloc(rt->cfg.task_window, sizeof(*s->slot));
	s->dep = calloc(rt->dep_pool_size, sizeof(*s->dep));
	s->core_outstanding = calloc(rt->be.num_cores + 1, sizeof(uint32_t));
	s->rr = calloc(PTO_NUM_WORKER_TYPES, sizeof(uint32_t));
	if (!s->slot || !s->dep || !s->core_outstanding || !s->rr)
		return -ENOMEM;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		s->ready[t].ids = calloc(rt->cfg.task_window, sizeof(uint64_t));
		s->ready[t].mask = rt->cfg.task_window - 1;
		if (!s->ready[t].ids)
			return -ENOMEM;
	}
	s->cring_size = rt->be.cring->size;
	return 0;
}

void pto_sched_fini(struct pto_runtime *rt)
{
	struct pto_sched *s = &rt->sched;
	uint32_t t;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		free(s->ready[t].ids);
	free(s->slot);
	free(s->dep);
	free(s->core_outstanding);
	free(s->rr);
	memset(s, 0, sizeof(*s));
}

int pto_sched_start(struct pto_runtime *rt)
{
	struct pto_window_sched *ws = &rt->win->sched;

	/* the window's tails are where the last run left them */
	rt->sched.retired = ws->last_task_alive[0];
	rt->sched.heap_tail = ws->heap_tail[0];
	rt->sched.dep_tail = ws->dep_tail[0];
	rt->sched.unpublished = 0;
	rt->sched.failed = false;
	rt->sched.wake_batch = rt->cfg.task_window / 8;
	if (!rt->sched.spin_budget)
		rt->sched.spin_budget = SCHED_SPINS_MIN;
	WRITE_ONCE(rt->win->sched_flags.error, 0);
	return -pthread_create(&rt->sched.thread, NULL, sched_main, rt);
}

void pto_sched_join(struct pto_runtime *rt)
{
	pthread_join(rt->sched.thread, NULL);
}
