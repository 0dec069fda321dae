/* SPDX-License-Identifier: MIT */
/*
 * Validation of a built-in op's parameters against its arity and its
 * declared regions, before the task is accepted: the ops themselves trust
 * their length arguments (on the simulator any address is mapped), so a
 * length past a region would corrupt memory or crash a core thread.
 */
#ifndef PTO_LIB_OPCHECK_H
#define PTO_LIB_OPCHECK_H

#include <stdint.h>

#include <pto/pto.h>

/**
 * pto_op_check() - may op run with these parameters?
 * @call: the API call, for the message ("pto_submit_task")
 * @kernel_id: the kernel bound to op, for the message
 * @op: enum pto_op
 * @p: the task's parameters
 * @n: how many
 *
 * Cheap (a few multiplications per parameter), so it runs on every
 * submit of a built-in op; usable by any stricter checking mode too.
 *
 * A view parameter (PTO_PARAM_VIEW, @p[i].view) is checked as the device
 * checks the view it receives (Documentation/ops.rst, "Tensor views"):
 * its dtype, rank and shape against the length arguments, or for an
 * elementwise op its element count and that all its views share a shape.
 *
 * Return: 0, or -EINVAL after a message naming the op, the parameter and
 * the sizes: too few parameters, a length argument that is not a SCALAR,
 * a length that overflows or is not a whole number of words, a region
 * smaller than the op would touch, or a view the op cannot take.
 */
int pto_op_check(const char *call, uint32_t kernel_id, uint32_t op,
		 const struct pto_param *p, uint32_t n);

#endif /* PTO_LIB_OPCHECK_H */
