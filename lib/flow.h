/* SPDX-License-Identifier: MIT */
/*
 * Flow control and deadlock diagnosis (flow.c): the orchestrator waiting
 * for room in a ring.
 */
#ifndef PTO_LIB_FLOW_H
#define PTO_LIB_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

/* What a submission waits for: an amount of one resource of one ring. */
struct pto_need {
	enum pto_ring kind;	/* task slots, heap bytes, ... */
	uint32_t ring;		/* which task ring's */
	uint64_t amount;	/* slots, bytes or entries wanted */
};

/*
 * Wait until n fits, publishing what the scheduler has not seen and
 * sleeping while nothing moves.  Returns 0; -EDEADLK when nothing ran or
 * retired for the stall timeout (after explaining why on stderr); or
 * -ECANCELED when a task failed meanwhile.
 */
int pto_flow_wait(struct pto_runtime *rt, const struct pto_need *n);

/*
 * pto_wait(): wait until every task submitted so far has completed.
 * Returns 0; -ECANCELED when the run failed or was cancelled (then the
 * tasks may have completed without running); -EDEADLK when none
 * completed for the stall timeout with no core busy.
 */
int pto_flow_wait_tasks(struct pto_runtime *rt);

#endif /* PTO_LIB_FLOW_H */
