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
#include <stdbool.h>
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

/* Arguments an op takes at most (ONLINE_UPDATE_F32). */
#define PTO_OP_MAX_ARGS		8

/*
 * One tensor operand, resolved: a plain argument (a device address, the
 * tensor contiguous and row-major) or a tensor view (the address of a
 * struct pto_view_desc) both become a host pointer and strides.
 * Element (i0, i1, ...) is at p + (i0 * stride[0] + i1 * stride[1] + ...)
 * * esize.  Matrices use stride[0] (rows) and stride[1] (columns),
 * vectors stride[0]; elementwise ops all four, over pto_op_call.shape.
 */
struct pto_op_tensor {
	u8 *p;			/* host address of element 0; NULL when empty */
	u64 addr;		/* its device address */
	u64 bytes;		/* the span the op may touch, from addr */
	u32 esize;		/* bytes per element (and the alignment) */
	u32 view;		/* 1: from a view */
	u64 stride[4];		/* in elements (PTO_MAX_DIMS) */
};

/*
 * A checked op: its scalars and tensors by argument position (the other
 * kind's slot unused), ready to run.  Elementwise ops (COPY, FILL_U32,
 * ADD_F32, MUL_F32, ADD_U32) run elements [first, first + count) of the
 * index space shape, in row-major order.  The driver runs sections of an
 * op by narrowing these (pto_op_tensor_skip(), first/count, the length
 * scalars).
 */
struct pto_op_call {
	u32 op;
	u32 views;		/* arguments that were views */
	u64 arg[PTO_OP_MAX_ARGS];
	struct pto_op_tensor t[PTO_OP_MAX_ARGS];
	u64 shape[4];		/* elementwise: the index space, 1s first */
	u64 first;		/* elementwise: the elements to run */
	u64 count;
};

/*
 * Check op with its arguments against mem, reading each view descriptor
 * once (into c, never again), and resolve its operands into c.
 * view_mask: arguments that are views (0 for a task without
 * PTO_TASK_F_VIEWS).  Returns 0, -EINVAL (bad op, arguments or view) or
 * -EFAULT (a descriptor or an operand's span outside mem, or
 * misaligned); touches no operand.  On the driver, call it between
 * pto_fpu_begin() and pto_fpu_end() like everything of this file.
 */
int pto_op_resolve(struct pto_op_call *c, u32 op, const u64 *args,
		   u32 nargs, u32 view_mask, const struct pto_op_mem *mem);

/* Run a resolved call (or a section of one). */
void pto_op_run(const struct pto_op_call *c);

/* pto_op_resolve() then pto_op_run(): its return. */
int pto_op_exec(u32 op, const u64 *args, u32 nargs, u32 view_mask,
		const struct pto_op_mem *mem);

/* Move t on by start indices along dimension dim (no checks). */
static inline void pto_op_tensor_skip(struct pto_op_tensor *t, u32 dim,
				      u64 start)
{
	u64 off = start * t->stride[dim] * t->esize;

	if (t->p)
		t->p += off;
	t->addr += off;
}

/* Name of op ("gemm_f32"), or NULL for an unknown op. */
const char *pto_op_name(u32 op);

/* May op's views have elements of dtype (the op's dtype rule)? */
bool pto_op_view_dtype_ok(u32 op, u32 dtype);

/* Number of arguments op needs (NOP: 0), or -1 for an unknown op. */
int pto_op_nargs(u32 op);

/* The exp the ops use (deterministic, no libm). */
float pto_op_expf(float x);

#endif /* PTO_OPS_H */
