/* SPDX-License-Identifier: MIT */
/*
 * Placement of the simulator's core threads on host CPUs, when there are
 * no more CPUs than the core threads and the orchestrator need.
 *
 * There, the kernel's scheduler often leaves two core threads on one CPU,
 * taking turns, while another CPU idles: it places a thread where it
 * wakes, beside its waker, and these threads rarely sleep long enough to
 * be moved (seen with perf sched map: 40 ms and more at a time).  A graph
 * two tasks wide then runs at half speed.  Pinned to a CPU each, they
 * cannot pile up; but a pinned thread cannot leave a CPU that something
 * else keeps busy either (another process, or the orchestrator submitting
 * flat out).  So the pinning is soft: each core thread is pinned to a CPU
 * of its own, round robin, and watches how long it waits for that CPU
 * while runnable (its schedstat run delay), between tasks.  A thread that
 * waits more than a quarter of the time it wants the CPU over a window
 * lets the kernel place it anywhere the process may run, for a hold time
 * that doubles while the CPU stays contended each time it tries again.
 * A task that may run longer than a window (its kernel's last run did,
 * or it never ran) runs unpinned: the thread cannot look during it.
 * Someone else setting a core thread's affinity (taskset -a -p) ends its
 * placement: it is never touched again.
 *
 * PTO_CPUS (a list) pins for good instead; PTO_CPUS=any leaves all
 * placement to the kernel.
 */
#ifndef PTO_LIB_BACKEND_PLACE_H
#define PTO_LIB_BACKEND_PLACE_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

/* The CPUs a runtime's core threads are placed on. */
struct pto_place_set {
	uint32_t n;		/* 0: no placement */
	uint32_t cpu[256];
	cpu_set_t allowed;	/* the process's, when the runtime opened */
};

/* One core thread's placement; touched by that thread only. */
struct pto_place {
	int fd;			/* its schedstat, -1: not placed */
	cpu_set_t one;		/* the one CPU it runs on when pinned */
	bool pinned;
	uint64_t next;		/* pto_now_ns() of the next look */
	uint64_t run, delay;	/* schedstat at the window's start */
	uint64_t hold_ns;	/* unpinned: for how long this time */
};

/* A task expected to run this long or longer runs unpinned. */
#define PTO_PLACE_LONG_NS 2000000ull

/*
 * Fill set with the CPUs this process may run on, when they are at least
 * two and fewer than threads + 2 (the core threads and the orchestrator
 * fill them); else set->n = 0.
 */
void pto_place_plan(struct pto_place_set *set, uint32_t threads);

/* Called by core thread index when it starts, and before it ends. */
void pto_place_start(struct pto_place *p, const struct pto_place_set *set,
		     uint32_t index);
void pto_place_stop(struct pto_place *p);

void pto_place_look(struct pto_place *p, const struct pto_place_set *set,
		    uint64_t now);

/* The thread is about to run a task that may be long: not on one CPU. */
void pto_place_release(struct pto_place *p, const struct pto_place_set *set);

/*
 * Called by the core thread now and then while it runs tasks (now: a
 * recent pto_now_ns() or pto_task_clock_ns()); looks every window.  True
 * when it looked: system calls, and perhaps a move to another CPU.
 */
static inline bool pto_place_tick(struct pto_place *p,
				  const struct pto_place_set *set,
				  uint64_t now)
{
	if (now < p->next)
		return false;
	pto_place_look(p, set, now);
	return true;
}

#endif /* PTO_LIB_BACKEND_PLACE_H */
