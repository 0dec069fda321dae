/* SPDX-License-Identifier: MIT */
/*
 * The Chrome/Perfetto trace a runtime writes when cfg.trace_path is set.
 */
#ifndef PTO_LIB_TRACE_H
#define PTO_LIB_TRACE_H

#include <stdint.h>

#include <pto/pto_uapi.h>

struct pto_runtime;
struct pto_trace;

struct pto_trace *pto_trace_open(const char *path, struct pto_runtime *rt);
void pto_trace_close(struct pto_trace *t);
/* Task id's slice on its core's track, from its completion. */
void pto_trace_task(struct pto_trace *t, const struct pto_completion *c,
		    uint64_t id, uint32_t kernel_id, const char *name);
/* A span of the orchestrator's (a submission, a stall). */
void pto_trace_span(struct pto_trace *t, const char *name, uint64_t start_ns,
		    uint64_t end_ns, uint64_t task_id);

#endif /* PTO_LIB_TRACE_H */
