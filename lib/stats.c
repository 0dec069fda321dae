// SPDX-License-Identifier: MIT
/*
 * Statistics: the flow-control counters of each ring, task and core
 * counters, pto_get_stats() and pto_print_stats() with sizing advice, and
 * the stats page monitors read.
 *
 * Counters have one writer each: the orchestrator's in rt->st, the
 * scheduler's in rt->sst; readers on other threads use relaxed loads.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "ringsize.h"
#include "runtime.h"
#include "stats.h"
#include "statspage.h"
#include "sync.h"

static const char *const ring_names[PTO_NUM_RINGS] = {
	[PTO_RING_TASK] = "task window",
	[PTO_RING_HEAP] = "heap ring",
	[PTO_RING_DEP] = "dependency pool",
	[PTO_RING_TENSORMAP] = "TensorMap pool",
};

const char *pto_ring_name(enum pto_ring ring)
{
	return (unsigned int)ring < PTO_NUM_RINGS ? ring_names[ring] : "?";
}

void pto_stats_init(struct pto_runtime *rt)
{
	uint32_t r, t;

	rt->st.nrings = rt->nrings;
	for (r = 0; r < rt->nrings; r++) {
		struct pto_ring_stats *d = rt->st.depth[r];

		d[PTO_RING_TASK].size = rt->ring[r].task_window;
		d[PTO_RING_HEAP].size = rt->ring[r].heap_size;
		d[PTO_RING_DEP].size = rt->ring[r].dep_pool_size;
		d[PTO_RING_TENSORMAP].size = rt->ring[r].tm_pool_size;
	}
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		rt->st.cores[t] = rt->be.cores[t];
}

/*
 * The bytes in use in ring r's heap, read while the orchestrator and the
 * scheduler move its three positions.  A ring that empties starts again
 * at a new floor; a top read after that restart with the floor read
 * before it made a ring holding 256 bytes look full.  So the top and the
 * floor are read until neither moved in between (a tail moving meanwhile
 * only understates, as any live figure may), and what is left of a race
 * is bounded by the ring's size.
 */
static uint64_t heap_in_use(struct pto_runtime *rt, uint32_t r)
{
	struct pto_window_header *w = rt->win;
	uint64_t top, tail, floor, used;
	int tries = 0;

	do {
		top = load_acquire(&w->orch.heap_top[r]);
		floor = READ_ONCE(rt->orch.ring[r].heap_floor);
		tail = load_acquire(&w->sched.heap_tail[r]);
	} while ((load_acquire(&w->orch.heap_top[r]) != top ||
		  READ_ONCE(rt->orch.ring[r].heap_floor) != floor) &&
		 ++tries < 16);
	used = pto_heap_ring_used(top, tail, floor);
	return used < rt->ring[r].heap_size ? used : rt->ring[r].heap_size;
}

/*
 * What lies between a monotonic top and its tail, both moving.  The tail
 * is read first: a top read before it (in C's unspecified order, as it
 * was) could be older than a tail that passed it meanwhile, and the
 * difference wrapped round to a huge use.  Read after, the top is at
 * least the tail; it may be ahead of where it stood when the tail was
 * read, so the use is bounded by the size.
 */
static uint64_t span_in_use(const __u64 *top, const __u64 *tail,
			    uint64_t size)
{
	uint64_t t = load_acquire(tail), h = load_acquire(top);

	if (h <= t)
		return 0;
	return h - t < size ? h - t : size;
}

/* What the rings hold now, from the tails read afresh. */
static void fill_live_stats(struct pto_runtime *rt, struct pto_stats *st)
{
	struct pto_window_header *w = rt->win;
	uint32_t r;

	for (r = 0; r < rt->nrings; r++) {
		struct pto_ring_stats *d = st->depth[r];

		d[PTO_RING_TASK].in_use =
			span_in_use(&w->orch.task_top[r],
				    &w->sched.last_task_alive[r],
				    rt->ring[r].task_window);
		d[PTO_RING_HEAP].in_use = heap_in_use(rt, r);
		d[PTO_RING_DEP].in_use =
			span_in_use(&w->orch.dep_top[r], &w->sched.dep_tail[r],
				    rt->ring[r].dep_pool_size);
		d[PTO_RING_TENSORMAP].in_use =
			READ_ONCE(rt->orch.tm.ring[r].live);
	}
}

/* A mark read before a use, never below it (see get_stats()). */
static uint64_t mark_over(uint64_t high_water, uint64_t in_use)
{
	return high_water > in_use ? high_water : in_use;
}

/* The totals over the rings, in the fields libpto 0.1 had. */
static void sum_rings(struct pto_stats *st)
{
	uint32_t r, k;

	for (k = 0; k < PTO_NUM_RINGS; k++) {
		struct pto_ring_stats *sum = &st->ring[k];

		memset(sum, 0, sizeof(*sum));
		for (r = 0; r < st->nrings; r++) {
			const struct pto_ring_stats *d = &st->depth[r][k];

			sum->size += d->size;
			sum->in_use += d->in_use;
			sum->high_water += d->high_water;
			sum->stalls += d->stalls;
			sum->stall_ns += d->stall_ns;
		}
	}
}

_Static_assert(sizeof(struct pto_stats) % sizeof(uint64_t) == 0,
	       "pto_stats is copied in 64-bit words");

/*
 * The runs' wall time so far, the run in progress included (its time so
 * far: busy time over it is utilisation).  run_end() moves a run's time
 * from run_t0 to run_ns under run_seq; a snapshot that raced it is taken
 * again, so that successive snapshots never go back.  The clock is read
 * inside, before run_seq is checked: a snapshot that stands read it
 * before the run's end was taken.
 */
static uint64_t run_ns_now(struct pto_runtime *rt)
{
	uint64_t ns, t0, now;
	uint32_t seq;

	for (;;) {
		seq = load_acquire(&rt->run_seq);
		if (seq & 1) {
			cpu_relax();
			continue;
		}
		ns = READ_ONCE(rt->st.run_ns);
		t0 = READ_ONCE(rt->run_t0);
		now = t0 ? pto_now_ns() : 0;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (READ_ONCE(rt->run_seq) == seq)
			return t0 && now > t0 ? ns + now - t0 : ns;
	}
}

static int get_stats(struct pto_runtime *rt, struct pto_stats *st)
{
	uint64_t *dst = (uint64_t *)st, done, failed;
	const uint64_t *src;
	size_t i;

	if (!rt) {
		pto_log("pto_get_stats: the runtime is NULL\n");
		return -EINVAL;
	}
	src = (const uint64_t *)&rt->st;
	/*
	 * The scheduler's counters first: a task is counted submitted before
	 * it can complete, so read in this order a snapshot taken during a
	 * run never has more tasks done than submitted.
	 */
	done = load_acquire(&rt->sst.tasks_completed);
	failed = load_acquire(&rt->sst.tasks_failed);
	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = READ_ONCE(src[i]);
	st->tasks_completed = done;
	st->tasks_failed = failed;
	st->run_ns = run_ns_now(rt);
	for (i = 0; i < PTO_NUM_WORKER_TYPES; i++)
		st->busy_ns[i] = READ_ONCE(rt->sst.busy_ns[i]);
	/*
	 * The high-water marks were copied above, and the orchestrator
	 * raises one just after it takes what it counts: a use read now
	 * above its mark raises the mark, which by definition is never
	 * below a use seen.
	 */
	fill_live_stats(rt, st);
	for (i = 0; i < rt->nrings; i++) {
		uint32_t k;

		for (k = 0; k < PTO_NUM_RINGS; k++)
			st->depth[i][k].high_water =
				mark_over(st->depth[i][k].high_water,
					  st->depth[i][k].in_use);
	}
	sum_rings(st);
	return 0;
}

int pto_get_stats_sized(struct pto_runtime *rt, struct pto_stats *st,
			size_t size)
{
	struct pto_stats full;
	int ret;

	if (!st || size < PTO_STATS_SIZE_0_1) {
		pto_log("pto_get_stats: %s\n", st ? "size smaller than any "
			"struct pto_stats" : "st is NULL");
		return -EINVAL;
	}
	ret = get_stats(rt, &full);
	if (ret)
		return ret;
	/* a caller newer than us gets our fields and zeroes past them */
	memset(st, 0, size);
	memcpy(st, &full, size < sizeof(full) ? size : sizeof(full));
	return 0;
}

int (pto_get_stats)(struct pto_runtime *rt, struct pto_stats *st)
{
	return pto_get_stats_sized(rt, st, PTO_STATS_SIZE_0_1);
}

/* Print PTO_<resource> set to give ring r a size of v. */
static void print_ring_env(FILE *out, const struct pto_stats *st, uint32_t r,
			   enum pto_ring k, uint64_t v)
{
	uint64_t sizes[PTO_MAX_RINGS];
	uint32_t i;

	for (i = 0; i < st->nrings; i++)
		sizes[i] = st->depth[i][k].size;
	pto_ring_env_fprint(out, k, st->nrings, sizes, r, v);
}

/* Advice on one ring's resource, if any: the size advised, or 0. */
static uint64_t print_ring_advice(FILE *out, const struct pto_stats *st,
				  uint32_t r, enum pto_ring k)
{
	const struct pto_ring_stats *rs = &st->depth[r][k];
	uint64_t grown = pto_ring_size_fit(k, rs->size * 2);
	uint64_t shrunk = pto_ring_size_fit(k,
					    pto_next_pow2(rs->high_water * 2));

	if (rs->stalls && rs->stall_ns > 1000000 && grown > rs->size) {
		fprintf(out, "  ring %u %s: full %" PRIu64 " times, %.1f ms "
			"waited; ", r, pto_ring_name(k), rs->stalls,
			rs->stall_ns / 1e6);
		print_ring_env(out, st, r, k, grown);
		fputs(" would let the orchestrator run further ahead\n", out);
		return grown;
	}
	if (rs->high_water && rs->high_water * 8 < rs->size &&
		   rs->size > 1024 && shrunk < rs->size) {
		fprintf(out, "  ring %u %s: never more than %" PRIu64 " of %"
			PRIu64 " used; ", r, pto_ring_name(k), rs->high_water,
			rs->size);
		print_ring_env(out, st, r, k, shrunk);
		fputs(" would do and save memory\n", out);
		return shrunk;
	}
	return 0;
}

/*
 * Every ring's advice, each printed on a line of its own, and then, when
 * there was more than one, all of it as one line to paste: each line
 * above names a whole list with one ring changed, so pasting two of them
 * for the same variable kept only the last.  Returns how many there were.
 */
static uint32_t print_advice(FILE *out, const struct pto_stats *st)
{
	uint64_t want[PTO_NUM_RINGS][PTO_MAX_RINGS], v;
	bool changed[PTO_NUM_RINGS] = { false };
	uint32_t r, k, n = 0;

	for (k = 0; k < PTO_NUM_RINGS; k++)
		for (r = 0; r < st->nrings; r++)
			want[k][r] = st->depth[r][k].size;
	for (r = 0; r < st->nrings; r++) {
		for (k = 0; k < PTO_NUM_RINGS; k++) {
			v = print_ring_advice(out, st, r, k);
			if (!v)
				continue;
			want[k][r] = v;
			changed[k] = true;
			n++;
		}
	}
	if (n < 2)
		return n;
	fputs("  all of it at once:", out);
	for (k = 0; k < PTO_NUM_RINGS; k++) {
		if (!changed[k])
			continue;
		fputc(' ', out);
		pto_ring_env_fprint(out, k, st->nrings, want[k], UINT32_MAX, 0);
	}
	fputc('\n', out);
	return n;
}

static bool ring_used(const struct pto_stats *st, uint32_t r)
{
	return st->depth[r][PTO_RING_TASK].high_water ||
	       st->depth[r][PTO_RING_TASK].in_use;
}

static void print_rings(FILE *out, const struct pto_stats *st)
{
	uint32_t r, k;

	fprintf(out, "  %-4s %-16s %12s %12s %12s %10s %12s\n", "ring",
		"resource", "size", "in use", "high water", "stalls",
		"stall ms");
	for (r = 0; r < st->nrings; r++) {
		if (!ring_used(st, r)) {
			fprintf(out, "  %-4u (scope depth %u%s: no tasks)\n",
				r, r, r + 1 == st->nrings ? " and deeper" : "");
			continue;
		}
		for (k = 0; k < PTO_NUM_RINGS; k++) {
			const struct pto_ring_stats *rs = &st->depth[r][k];

			fprintf(out, "  %-4u %-16s %12" PRIu64 " %12" PRIu64
				" %12" PRIu64 " %10" PRIu64 " %12.3f\n", r,
				pto_ring_name(k), rs->size, rs->in_use,
				rs->high_water, rs->stalls,
				rs->stall_ns / 1e6);
		}
	}
}

void pto_print_stats(struct pto_runtime *rt, FILE *out)
{
	struct pto_stats st;
	uint32_t t;
	double wall;

	if (!rt || !out) {
		pto_log("pto_print_stats: %s is NULL\n", rt ? "out" :
			"the runtime");
		return;
	}
	if (pto_get_stats_sized(rt, &st, sizeof(st)))
		return;
	wall = st.run_ns ? (double)st.run_ns : 1.0;
	fprintf(out, "pto stats (%s): %" PRIu64 " runs, %" PRIu64
		" tasks submitted, %" PRIu64 " completed, %" PRIu64
		" failed, %" PRIu64 " dependencies, %.3f ms in pto_run\n",
		rt->device, st.runs, st.tasks_submitted, st.tasks_completed,
		st.tasks_failed, st.edges, st.run_ns / 1e6);
	if (st.tasks_submitted)
		fprintf(out, "  %.3f us per task\n",
			st.run_ns / 1e3 / (double)st.tasks_submitted);
	print_rings(out, &st);
	fprintf(out, "  %-16s %6s %12s %8s\n", "cores", "count", "busy ms",
		"util");
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		fprintf(out, "  %-16s %6u %12.3f %7.1f%%\n",
			pto_worker_type_name(t), st.cores[t],
			st.busy_ns[t] / 1e6, st.cores[t] ?
			100.0 * st.busy_ns[t] / wall / st.cores[t] : 0.0);
	fprintf(out, "  sizing advice:\n");
	if (!print_advice(out, &st))
		fprintf(out, "  none: every ring fits what the runs used\n");
}

/* One ring's resource into the page, and into the total over rings. */
static void page_ring(struct pto_statspage_ring *d,
		      struct pto_statspage_ring *sum,
		      const struct pto_ring_stats *rs, uint64_t in_use)
{
	d->size = READ_ONCE(rs->size);
	d->in_use = in_use;
	d->high_water = mark_over(READ_ONCE(rs->high_water), in_use);
	d->stalls = READ_ONCE(rs->stalls);
	d->stall_ns = READ_ONCE(rs->stall_ns);
	sum->size += d->size;
	sum->in_use += d->in_use;
	sum->high_water += d->high_water;
	sum->stalls += d->stalls;
	sum->stall_ns += d->stall_ns;
}

/*
 * live: what each ring holds now, read from the window (every field a
 * reader may load during a run is written with WRITE_ONCE or a release),
 * so that a draining run shows its rings emptying.
 */
static void publish(struct pto_runtime *rt, const struct pto_stats *live)
{
	struct pto_statspage *pg = rt->page;
	const struct pto_stats *st = &rt->st;
	const struct pto_sched_stats *sst = &rt->sst;
	uint32_t i, r;

	pto_statspage_begin(pg);
	for (i = 0; i < PTO_NUM_WORKER_TYPES; i++) {
		pg->cores[i] = rt->be.cores[i];
		/* with shards the core threads add to them meanwhile */
		pg->busy_ns[i] = READ_ONCE(sst->busy_ns[i]);
	}
	/* done before submitted, as in get_stats() */
	pg->tasks_completed = load_acquire(&sst->tasks_completed);
	pg->tasks_failed = load_acquire(&sst->tasks_failed);
	pg->tasks_submitted = READ_ONCE(st->tasks_submitted);
	pg->tasks_in_flight = 0;
	for (r = 0; r < rt->nrings; r++)
		pg->tasks_in_flight += live->depth[r][PTO_RING_TASK].in_use;
	pg->runs = READ_ONCE(st->runs);
	pg->running = READ_ONCE(rt->orch.in_run) || pg->tasks_in_flight;
	pg->nrings = rt->nrings;
	memset(pg->ring, 0, sizeof(pg->ring));
	for (r = 0; r < rt->nrings; r++)
		for (i = 0; i < PTO_NUM_RINGS; i++)
			page_ring(&pg->depth[r][i], &pg->ring[i],
				  &st->depth[r][i], live->depth[r][i].in_use);
	pg->last_error = READ_ONCE(rt->win->sched_flags.error);
	pto_statspage_end(pg);
}

void pto_stats_publish(struct pto_runtime *rt)
{
	struct pto_stats live;

	if (!rt->page)
		return;
	fill_live_stats(rt, &live);
	publish(rt, &live);
}

/*
 * The one field a run's start changes, not the whole page: a refresh
 * reads every ring's state and writes some 100 fields, a tenth of what
 * the orchestrator does for a run of two tasks.
 */
void pto_stats_publish_running(struct pto_runtime *rt)
{
	if (!rt->page)
		return;
	pto_statspage_begin(rt->page);
	rt->page->running = 1;
	pto_statspage_end(rt->page);
}
