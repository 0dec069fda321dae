/* SPDX-License-Identifier: MIT */
/*
 * Fault injection for libpto's own tests: the orchestrator's bookkeeping
 * (the scope stack, the segments of scopes that share a ring) grows
 * through pto_grow(), and a test sets pto_fault_countdown to n to make
 * the n-th such call from then on fail as realloc() does when memory
 * runs out.  Those paths are otherwise reached only under real memory
 * pressure, where a failure that lost a scope's tasks hung the run.
 * Zero, and one predicted branch, in every other program; not exported
 * from libpto.so (libpto.map).
 */
#ifndef PTO_LIB_FAULT_H
#define PTO_LIB_FAULT_H

#include <stdlib.h>

extern unsigned int pto_fault_countdown;

static inline void *pto_grow(void *p, size_t size)
{
	if (__builtin_expect(pto_fault_countdown != 0, 0) &&
	    !--pto_fault_countdown)
		return NULL;
	return realloc(p, size);
}

#endif /* PTO_LIB_FAULT_H */
