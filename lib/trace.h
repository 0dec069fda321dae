/* SPDX-License-Identifier: MIT */
/*
 * The Chrome/Perfetto trace a runtime writes when cfg.trace_path is set.
 * Every call site tests rt->trace first, so a runtime without a trace pays
 * one predictable branch per event and nothing else.
 */
#ifndef PTO_LIB_TRACE_H
#define PTO_LIB_TRACE_H

#include <stdint.h>

#include <pto/pto.h>
#include <pto/pto_uapi.h>

struct pto_runtime;
struct pto_trace;

struct pto_trace *pto_trace_open(const char *path, struct pto_runtime *rt);
void pto_trace_close(struct pto_trace *t);
/* Flush t (NULL: no trace): 0, or the negative errno of a failed write. */
int pto_trace_flush_file(struct pto_trace *t);

/*
 * Orchestrator, before the task is published: remember what its slice
 * will show (id, scope depth, parameters), since the scheduler that
 * traces the completion no longer has the parameters.
 */
void pto_trace_submit(struct pto_trace *t, uint64_t handle, uint64_t id,
		      uint32_t depth, const struct pto_param *p, uint32_t n);
/* Orchestrator, after publishing: its submit span and ring counters. */
void pto_trace_submitted(struct pto_trace *t, struct pto_runtime *rt,
			 uint64_t start_ns, uint64_t handle, uint64_t id,
			 const char *kernel);
/*
 * Scheduler, on a completion: the task's slice on its core's track, and
 * a flow arrow from each producer's slice to it.
 */
void pto_trace_task(struct pto_trace *t, struct pto_runtime *rt,
		    const struct pto_completion *c, const char *kernel);
/* Orchestrator: a wait for room in a ring, and how it ended (0, -errno). */
void pto_trace_stall(struct pto_trace *t, uint64_t start_ns, uint64_t task,
		     uint32_t ring, enum pto_ring kind, uint64_t amount,
		     int result);
/* The scheduler thread's track: named, with a span for its run. */
void pto_trace_sched_run(struct pto_trace *t, uint64_t start_ns);

#endif /* PTO_LIB_TRACE_H */
