/* SPDX-License-Identifier: MIT */
/*
 * Statistics kept while a run goes on; see stats.c.
 */
#ifndef PTO_LIB_STATS_H
#define PTO_LIB_STATS_H

#include "runtime.h"
#include "sync.h"

/*
 * A task ring's resource holds n now: raise its high-water mark
 * (orchestrator only).  What a ring holds now is read afresh from the
 * tails by whoever asks (pto_get_stats(), the stats page), never kept.
 */
static inline void pto_stats_note_use(struct pto_runtime *rt, uint32_t ring,
				      enum pto_ring kind, uint64_t n)
{
	struct pto_ring_stats *rs = &rt->st.depth[ring][kind];

	if (n > rs->high_water)
		WRITE_ONCE(rs->high_water, n);
}

/* Sizes and core counts, once the backend is set up. */
void pto_stats_init(struct pto_runtime *rt);

/*
 * Copy the counters, and what the rings hold now, into the stats page if
 * there is one.  The page has one writer at a time: the scheduling side
 * during a run, the thread calling pto_run() before and after it.
 */
void pto_stats_publish(struct pto_runtime *rt);

/*
 * A run starts: the page says it runs.  Nothing else on it changed since
 * it was last refreshed (at the end of the run before, or when the
 * runtime was made): tasks run, rings fill and stalls happen only within
 * runs.
 */
void pto_stats_publish_running(struct pto_runtime *rt);

#endif /* PTO_LIB_STATS_H */
