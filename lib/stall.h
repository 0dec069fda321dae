/* SPDX-License-Identifier: MIT */
/*
 * Stall reports (stall.c): anyone waiting on a run that stopped moving.
 */
#ifndef PTO_LIB_STALL_H
#define PTO_LIB_STALL_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

/* Is a core in the middle of a task right now (its status is ACK)? */
bool pto_cores_busy(struct pto_runtime *rt);

/*
 * Nothing has happened for waited_ms while tasks were pending: say what
 * each ring and core is doing, on stderr.
 */
void pto_stall_report(struct pto_runtime *rt, uint64_t waited_ms);

#endif /* PTO_LIB_STALL_H */
