// SPDX-License-Identifier: MIT
/*
 * The METG compute kernel.  build.mk compiles this file once, with one
 * compiler and -ffp-contract=off, into an object that every worker and
 * ptobench-peak link: libgomp's and libomp's workers are built by gcc and
 * clang, and the kernel must be the same machine code for all of them, or
 * the efficiencies would compare compilers rather than runtimes.
 */
#include "taskbench.h"

/*
 * Multiply-adds x = x * m + a (separate multiply and add: no FMA) on
 * TB_LANES independent chains, iters times.  m < 1 keeps every chain
 * bounded near a / (1 - m) = 1, so no value overflows or goes subnormal,
 * whatever iters is.  The chains start from the inputs' hash and the
 * result is stored in out, so the loop can neither be hoisted out of a
 * task nor dropped.
 */
uint64_t tb_kernel(struct tb_point *out, const struct tb_point *const *in,
		   uint32_t nin, uint64_t seed, uint64_t iters)
{
	const double m = 1.0 - 0x1p-10, a = 0x1p-10;
	double x[TB_LANES], start, v = 0;
	uint64_t h = seed;

	for (uint32_t k = 0; k < nin; k++)
		h = tb_fold(h, in[k]->h);
	start = 1.0 + (double)(h >> 11) * 0x1p-53;
	for (int j = 0; j < TB_LANES; j++)
		x[j] = start + j * 0x1p-6;
	/* Unrolled, so that the chains live in registers, not on the stack. */
	for (uint64_t it = 0; it < iters; it++)
#pragma GCC unroll 16
		for (int j = 0; j < TB_LANES; j++)
			x[j] = x[j] * m + a;
	for (int j = 0; j < TB_LANES; j++)
		v += x[j];
	out->h = tb_out_hash(h);
	out->v = v;
	return iters * TB_FLOPS_PER_ITER;
}
