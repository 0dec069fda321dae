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

void pto_stall_report(struct pto_runtime *rt, uint64_t waited_ms)
{
	struct pto_window_header *w = rt->win;
	uint32_t r, c;

	flockfile(stderr);	/* the report in one piece */
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
		pto_log("  ring %u: submitted %" PRIu64 ", retired %" PRIu64
			", oldest task state %u, held by its scope %u and %u "
			"consumers\n", r,
			(uint64_t)READ_ONCE(w->orch.task_top[r]),
			(uint64_t)READ_ONCE(w->sched.last_task_alive[r]),
			READ_ONCE(w->sched.head[r].state),
			READ_ONCE(w->sched.head[r].scope),
			READ_ONCE(w->sched.head[r].consumers));
	for (c = 0; c < rt->be.num_cores; c++) {
		const struct pto_core_regs *g = pto_regs(&rt->be, c);

		pto_log("  core %u: %u dispatched, %u taken, status %u "
			"(task %#" PRIx64 "), %s\n", c,
			READ_ONCE(g->doorbell), READ_ONCE(g->consumed),
			READ_ONCE(g->status), (uint64_t)READ_ONCE(g->status_task),
			READ_ONCE(g->core_waiting) ? "asleep" : "awake");
	}
	pto_log("  scheduler %s; waking every core and the scheduler\n",
		READ_ONCE(w->sched_flags.sleeping) ? "asleep" : "awake");
	funlockfile(stderr);
}
