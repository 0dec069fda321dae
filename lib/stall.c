// SPDX-License-Identifier: MIT
/*
 * Stall reports: what every ring and core is doing, for whoever finds a
 * run that stopped moving (the orchestrator waiting for room, pto_run()
 * waiting for the end).  Apart from flow control and the scheduler, which
 * both use it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "log.h"
#include "stall.h"

bool pto_cores_busy(struct pto_runtime *rt)
{
	uint32_t c;

	for (c = 0; c < rt->be.num_cores; c++)
		if (READ_ONCE(pto_regs(&rt->be, c)->status) == PTO_CORE_ACK)
			return true;
	return false;
}

/* A ring's oldest task, as the scheduler last saw it (pto_ring_head). */
static const char *head_state(uint16_t state)
{
	switch (state) {
	case PTO_TASK_PENDING:
		return "waiting for producers";
	case PTO_TASK_READY:
		return "ready or running";
	case PTO_TASK_COMPLETED:
		return "completed";
	case 0xffff:	/* see struct pto_ring_head */
		return "none: the ring is empty";
	default:
		return "consumed";
	}
}

static const char *core_status(uint32_t status)
{
	switch (status) {
	case PTO_CORE_IDLE:
		return "none yet";
	case PTO_CORE_ACK:
		return "running";
	case PTO_CORE_FIN:
		return "finished";
	default:
		return "unknown status";
	}
}

/* The worker type of core c: its types' cores are numbered in order. */
static uint32_t core_type_of(const struct pto_runtime *rt, uint32_t c)
{
	uint32_t t;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (c - rt->be.first_core[t] < rt->be.cores[t])
			return t;
	return PTO_NUM_WORKER_TYPES;	/* "?" */
}

static void ring_line(const struct pto_window_header *w, uint32_t r)
{
	uint64_t top = READ_ONCE(w->orch.task_top[r]);
	uint64_t alive = READ_ONCE(w->sched.last_task_alive[r]);

	if (top == alive) {
		pto_log("  ring %u: submitted %" PRIu64 ", all retired\n", r,
			top);
		return;
	}
	pto_log("  ring %u: submitted %" PRIu64 ", retired %" PRIu64 ", oldest "
		"task %s, %sheld by its scope, held by %u consumers\n", r, top,
		alive, head_state(READ_ONCE(w->sched.head[r].state)),
		READ_ONCE(w->sched.head[r].scope) ? "" : "not ",
		READ_ONCE(w->sched.head[r].consumers));
}

static void core_line(struct pto_runtime *rt, uint32_t c)
{
	const struct pto_core_regs *g = pto_regs(&rt->be, c);
	uint32_t status = READ_ONCE(g->status);
	char task[48] = "";

	if (status != PTO_CORE_IDLE)
		snprintf(task, sizeof(task), " (handle %#" PRIx64 ")",
			 (uint64_t)READ_ONCE(g->status_task));
	pto_log("  core %u (%s): %u dispatched, %u taken, last task %s%s, "
		"%s\n", c, pto_worker_type_name(core_type_of(rt, c)),
		READ_ONCE(g->doorbell), READ_ONCE(g->consumed),
		core_status(status), task,
		READ_ONCE(g->core_waiting) ? "asleep" : "awake");
}

void pto_stall_report(struct pto_runtime *rt, uint64_t waited_ms)
{
	struct pto_window_header *w = rt->win;
	uint32_t r, c;

	pto_log_begin();	/* the report in one piece */
	pto_log("stall: nothing has run or retired for %" PRIu64 " ms while "
		"tasks are pending; the runtime's state:\n", waited_ms);
	pto_log("  submitted %" PRIu64 " (published %" PRIu64 "), scanned %"
		PRIu64 ", completed %" PRIu64 ", %u active, %u waiting for "
		"producers, orchestration %s\n", rt->orch.next_id,
		(uint64_t)READ_ONCE(w->notify.task_head),
		(uint64_t)READ_ONCE(w->sched.tasks_scanned),
		(uint64_t)READ_ONCE(w->sched.tasks_completed),
		READ_ONCE(w->sched.active), READ_ONCE(w->sched.waiting),
		READ_ONCE(w->notify.orch_done) ? "done" : "running");
	for (r = 0; r < rt->nrings; r++)
		ring_line(w, r);
	for (c = 0; c < rt->be.num_cores; c++)
		core_line(rt, c);
	pto_log("  scheduler %s; waking every core and the scheduler\n",
		READ_ONCE(w->sched_flags.sleeping) ? "asleep" : "awake");
	pto_log_end();
}
