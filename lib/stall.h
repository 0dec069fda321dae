/* SPDX-License-Identifier: MIT */
/*
 * Stall reports (stall.c): anyone waiting on a run that stopped moving.
 */
#ifndef PTO_LIB_STALL_H
#define PTO_LIB_STALL_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

/*
 * A stall is nothing happening for the stall timeout as seen by looks at
 * most this far apart: half the timeout, and at least 50 ms (the waits
 * look every 10 ms), so that a short timeout still fires.  A waiter that
 * did not run for longer (its process stopped, or preempted on a busy
 * host) did not watch the time in between, and its first look after may
 * land in an instant when nothing shows progress although tasks run: a
 * core that just ended a task (no longer busy) whose completion is not
 * counted yet, or one whose next task is queued but not yet taken.  That
 * look starts the clock again instead of judging the wait stuck.
 */
#define PTO_STALL_LOOK_GAP_MIN_NS 50000000ull

static inline bool pto_stall_look_late(uint64_t timeout_ns, uint64_t last,
				       uint64_t now)
{
	uint64_t gap = timeout_ns / 2;

	if (gap < PTO_STALL_LOOK_GAP_MIN_NS)
		gap = PTO_STALL_LOOK_GAP_MIN_NS;
	return now - last > gap;
}

/*
 * The clock of one wait: by when nothing moving means it is stuck, and
 * when it last looked.  Only time it watched counts.
 */
struct pto_stall_clock {
	uint64_t timeout_ns;
	uint64_t deadline;
	uint64_t looked;	/* pto_now_ns() of the last look */
};

static inline void pto_stall_clock_start(struct pto_stall_clock *c,
					 uint64_t timeout_ns, uint64_t now)
{
	c->timeout_ns = timeout_ns;
	c->deadline = now + timeout_ns;
	c->looked = now;
}

enum pto_stall_look {
	PTO_STALL_RESTARTED,	/* it moved, or the look came too late */
	PTO_STALL_WATCHING,	/* nothing moved, the deadline is ahead */
	PTO_STALL_STUCK,	/* nothing moved until the deadline */
};

/*
 * One look at the wait, at now (read after the loads that decided
 * moved): progress, or a look too late to have watched the time since the
 * last one, starts the clock again.
 */
static inline enum pto_stall_look
pto_stall_clock_look(struct pto_stall_clock *c, bool moved, uint64_t now)
{
	if (moved || pto_stall_look_late(c->timeout_ns, c->looked, now)) {
		pto_stall_clock_start(c, c->timeout_ns, now);
		return PTO_STALL_RESTARTED;
	}
	c->looked = now;
	return now < c->deadline ? PTO_STALL_WATCHING : PTO_STALL_STUCK;
}

/* Is a core in the middle of a task right now (its status is ACK)? */
bool pto_cores_busy(struct pto_runtime *rt);

/*
 * Nothing has happened for waited_ms while tasks were pending: say what
 * each ring and core is doing, on stderr.
 */
void pto_stall_report(struct pto_runtime *rt, uint64_t waited_ms);

#endif /* PTO_LIB_STALL_H */
