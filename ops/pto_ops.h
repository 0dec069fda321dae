/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Built-in ops (enum pto_op in include/uapi/pto/pto_uapi.h), one implementation shared
 * by the simulator and pto.ko so their results are bit-identical.
 *
 * Freestanding: no libc and no kernel headers beyond fixed-width types, so
 * it compiles unchanged in both worlds.  Build it with floating-point
 * contraction off (-ffp-contract=off; the kernel brackets calls with
 * kernel_fpu_begin()/kernel_fpu_end()).
 */
#ifndef PTO_OPS_H
#define PTO_OPS_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <linux/types.h>
typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;	/* the uapi's 64-bit type, as in descriptors */
#endif

/*
 * Device memory an op may touch: device addresses [base, base + size) map
 * to host pointers host + (addr - base).  The sim uses base 0, host NULL
 * and size ~0 (device addresses are host addresses); the driver uses its
 * context heap.
 */
struct pto_op_mem {
	u64 base;
	u64 size;
	u8 *host;
};

/* Returns 0, -EINVAL (bad op or args), or -EFAULT (access outside mem). */
int pto_op_exec(u32 op, const u64 *args, u32 nargs,
		const struct pto_op_mem *mem);

/* Name of op ("gemm_f32"), or NULL for an unknown op. */
const char *pto_op_name(u32 op);

/* Number of arguments op needs (NOP: 0), or -1 for an unknown op. */
int pto_op_nargs(u32 op);

/* The exp the ops use (deterministic, no libm). */
float pto_op_expf(float x);

#endif /* PTO_OPS_H */
