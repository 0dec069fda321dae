/* SPDX-License-Identifier: MIT */
/*
 * Checked mode: one memory reached through two bases.
 *
 * The TensorMap names a tensor by its base (Documentation/libpto.rst:
 * different bases never alias), so a program that reaches the same bytes
 * as PTO_IN(a + off, 0, n) in one task and PTO_INOUT(a, off, n) in
 * another gets no order between the two: a wrong result that comes and
 * goes with timing.  In checked mode the orchestrator keeps, for each base
 * used since the last point where every task was complete (a run's start,
 * a pto_wait()), the hull of the bytes read through it and of the bytes
 * written through it, and refuses an access that meets another base's
 * hull where either side writes.
 *
 * Only accesses to the program's own memory are looked at: the heap
 * rings' buffers (OUTPUT, pto_alloc()) are named by the runtime's own
 * pointers and an interior base there is refused anyway.  Views with a
 * shape (strided, not one byte range) and NODEP accesses are left out:
 * the first would need the shape to tell disjoint interleavings apart,
 * the second is not tracked by design.
 */
#ifndef PTO_LIB_ALIAS_H
#define PTO_LIB_ALIAS_H

#include <stdbool.h>
#include <stdint.h>

struct pto_alias;

struct pto_alias *pto_alias_new(void);
void pto_alias_free(struct pto_alias *a);

/* Every task is complete: accesses before now order nothing after. */
void pto_alias_reset(struct pto_alias *a);

/* One access of the program's memory, [lo, hi) reached through base. */
struct pto_alias_access {
	uint64_t base, lo, hi;
	uint32_t param;		/* the parameter's index in its task */
	bool writer;
};

/*
 * The n accesses of task id: 0 once recorded; -EINVAL with a message,
 * and none of them recorded, when one reaches bytes that another base
 * reached since the last reset, or another of the task's own accesses
 * does, and one of the two writes.  Out of memory to record them, the
 * check says so and stops until the next reset.
 */
int pto_alias_task(struct pto_alias *a, const char *fn, uint64_t id,
		   const struct pto_alias_access *acc, uint32_t n);

#endif /* PTO_LIB_ALIAS_H */
