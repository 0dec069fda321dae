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
	uint32_t t;

	rt->st.ring[PTO_RING_TASK].size = rt->cfg.task_window;
	rt->st.ring[PTO_RING_HEAP].size = rt->heap_ring_size;
	rt->st.ring[PTO_RING_DEP].size = rt->dep_pool_size;
	rt->st.ring[PTO_RING_TENSORMAP].size = rt->cfg.tensormap_pool_size;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		rt->st.cores[t] = rt->be.cores[t];
}

static void fill_live_stats(struct pto_runtime *rt, struct pto_stats *st)
{
	struct pto_window_header *w = rt->win;

	/* the scheduler's tails, read afresh (not the orchestrator's copies) */
	st->ring[PTO_RING_TASK].in_use = w->notify.task_head -
		load_acquire(&w->sched.last_task_alive[0]);
	st->ring[PTO_RING_HEAP].in_use = pto_heap_ring_used(w->orch.heap_top[0],
		load_acquire(&w->sched.heap_tail[0]), rt->orch.heap_floor);
	st->ring[PTO_RING_DEP].in_use = w->orch.dep_top[0] -
		load_acquire(&w->sched.dep_tail[0]);
	st->ring[PTO_RING_TENSORMAP].in_use = rt->orch.tm.live;
}

_Static_assert(sizeof(struct pto_stats) % sizeof(uint64_t) == 0,
	       "pto_stats is copied in 64-bit words");

static int get_stats(struct pto_runtime *rt, struct pto_stats *st)
{
	const uint64_t *src = (const uint64_t *)&rt->st;
	uint64_t *dst = (uint64_t *)st;
	size_t i;

	if (!rt || !st)
		return -EINVAL;
	/* the scheduler updates its counters while a run goes on */
	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = READ_ONCE(src[i]);
	st->tasks_completed = READ_ONCE(rt->sst.tasks_completed);
	st->tasks_failed = READ_ONCE(rt->sst.tasks_failed);
	for (i = 0; i < PTO_NUM_WORKER_TYPES; i++)
		st->busy_ns[i] = READ_ONCE(rt->sst.busy_ns[i]);
	fill_live_stats(rt, st);
	return 0;
}

int pto_get_stats_sized(struct pto_runtime *rt, struct pto_stats *st,
			size_t size)
{
	struct pto_stats full;
	int ret;

	if (!st || size < PTO_STATS_SIZE_0_1)
		return -EINVAL;
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

static void print_ring_advice(FILE *out, enum pto_ring r,
			      const struct pto_ring_stats *rs)
{
	if (rs->stalls && rs->stall_ns > 1000000) {
		fprintf(out, "  %s: full %" PRIu64 " times, %.1f ms waited; "
			"%s=%" PRIu64 " would let the orchestrator run further "
			"ahead\n", pto_ring_name(r), rs->stalls,
			rs->stall_ns / 1e6, pto_ring_env(r), rs->size * 2);
	} else if (rs->high_water && rs->high_water * 8 < rs->size &&
		   rs->size > 1024) {
		fprintf(out, "  %s: never more than %" PRIu64 " of %" PRIu64
			" used; %s=%" PRIu64 " would do and save memory\n",
			pto_ring_name(r), rs->high_water, rs->size, pto_ring_env(r),
			pto_next_pow2(rs->high_water * 2));
	}
}

void pto_print_stats(struct pto_runtime *rt, FILE *out)
{
	struct pto_stats st;
	uint32_t r, t;
	double wall;

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
	fprintf(out, "  %-16s %12s %12s %12s %10s %12s\n", "ring", "size",
		"in use", "high water", "stalls", "stall ms");
	for (r = 0; r < PTO_NUM_RINGS; r++) {
		const struct pto_ring_stats *rs = &st.ring[r];

		fprintf(out, "  %-16s %12" PRIu64 " %12" PRIu64 " %12" PRIu64
			" %10" PRIu64 " %12.3f\n", pto_ring_name(r), rs->size,
			rs->in_use, rs->high_water, rs->stalls,
			rs->stall_ns / 1e6);
	}
	fprintf(out, "  %-16s %6s %12s %8s\n", "cores", "count", "busy ms",
		"util");
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		fprintf(out, "  %-16s %6u %12.3f %7.1f%%\n",
			pto_worker_type_name(t), st.cores[t],
			st.busy_ns[t] / 1e6, st.cores[t] ?
			100.0 * st.busy_ns[t] / wall / st.cores[t] : 0.0);
	fprintf(out, "  sizing advice:\n");
	for (r = 0; r < PTO_NUM_RINGS; r++)
		print_ring_advice(out, r, &st.ring[r]);
}

void pto_stats_publish(struct pto_runtime *rt)
{
	struct pto_statspage *pg = rt->page;
	const struct pto_stats *st = &rt->st;
	const struct pto_sched_stats *sst = &rt->sst;
	uint32_t i;

	if (!pg)
		return;
	pto_statspage_begin(pg);
	for (i = 0; i < PTO_NUM_WORKER_TYPES; i++) {
		pg->cores[i] = rt->be.cores[i];
		pg->busy_ns[i] = sst->busy_ns[i];
	}
	pg->tasks_submitted = READ_ONCE(st->tasks_submitted);
	pg->tasks_completed = sst->tasks_completed;
	pg->tasks_failed = sst->tasks_failed;
	pg->tasks_in_flight = load_acquire(&rt->win->notify.task_head) -
			      load_acquire(&rt->win->sched.last_task_alive[0]);
	pg->runs = READ_ONCE(st->runs);
	pg->running = READ_ONCE(rt->orch.in_run) || pg->tasks_in_flight;
	for (i = 0; i < PTO_NUM_RINGS; i++) {
		const struct pto_ring_stats *rs = &st->ring[i];

		pg->ring[i].size = READ_ONCE(rs->size);
		pg->ring[i].in_use = READ_ONCE(rs->in_use);
		pg->ring[i].high_water = READ_ONCE(rs->high_water);
		pg->ring[i].stalls = READ_ONCE(rs->stalls);
		pg->ring[i].stall_ns = READ_ONCE(rs->stall_ns);
	}
	pg->last_error = READ_ONCE(rt->win->sched_flags.error);
	pto_statspage_end(pg);
}
