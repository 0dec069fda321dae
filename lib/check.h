/* SPDX-License-Identifier: MIT */
/*
 * Checked mode (cfg.check, PTO_CHECK=1): slower, but a C kernel that
 * writes past the end of an OUTPUT buffer fails its task with -EFAULT and
 * a message naming the task, the address and the buffer, instead of
 * corrupting its neighbour or crashing the process.
 *
 * How (on the simulator, whose kernels run in this process):
 *  - every OUTPUT buffer gets whole pages of the heap ring, placed at the
 *    end of them (64-byte aligned), followed by one PROT_NONE guard page;
 *  - each C kernel runs with this thread armed: a SIGSEGV at an address in
 *    the heap rings jumps back out of the kernel (siglongjmp) and its task
 *    fails.  Any other SIGSEGV goes to the handler installed before ours;
 *  - every OUTPUT (and pto_alloc()) buffer is filled with PTO_CHECK_POISON
 *    bytes when it is placed, so that a kernel reading it before anyone
 *    wrote it sees NaNs, not the plausible data of its last user.
 * With checked mode off none of this exists: the orchestrator and the sim
 * each test one pointer.
 */
#ifndef PTO_LIB_CHECK_H
#define PTO_LIB_CHECK_H

#include <stdint.h>

#include <pto/pto.h>
#include <pto/pto_uapi.h>

#include "kernel.h"

struct pto_runtime;
struct pto_check;

/* 0xff bytes: NaN in f32, f64, f16 and bf16; all ones in integers */
#define PTO_CHECK_POISON 0xff

/* When cfg.check is set: 0, or -errno.  rt->check stays NULL otherwise. */
int pto_check_open(struct pto_runtime *rt);
void pto_check_close(struct pto_runtime *rt);

/* Heap ring bytes an OUTPUT of size bytes takes: its pages and a guard. */
uint64_t pto_check_out_span(const struct pto_check *ck, uint64_t size);
/* Where in its span the buffer starts, so that it ends at the guard. */
uint64_t pto_check_out_lead(const struct pto_check *ck, uint64_t size);

/*
 * After the task's OUTPUT buffers were placed from heap offset off of
 * ring r (then views_size bytes of view descriptors, then args_size bytes
 * of argument array, 0 when it has none): make their pages accessible,
 * their guards not, and remember the parameters to name the one a fault
 * overran.
 */
void pto_check_task(struct pto_runtime *rt, uint64_t handle, uint32_t ring,
		    uint64_t off, const struct pto_param *p, uint32_t n,
		    uint64_t views_size, uint64_t args_size);

/* Run a C kernel armed: its status, -EFAULT when it hit a guard. */
int pto_check_run(struct pto_check *ck, pto_kernel_fn fn,
		  const struct pto_task_desc *d, struct pto_kernel_ctx *kc);

#endif /* PTO_LIB_CHECK_H */
