/* SPDX-License-Identifier: MIT */
/*
 * Task graphs of the METG benchmark, after the dependence patterns that
 * Task Bench describes (Slaughter et al., "Task Bench: A Parameterized
 * Benchmark for Evaluating Parallel Runtime Performance", SC'20).  Written
 * from the paper's description; no Task Bench code.
 *
 * A graph has `steps` timesteps of up to `width` points.  Point i of step t
 * depends on the points of step t-1 that its pattern names.  Every point
 * writes one struct tb_point; a point's output lives in one of TB_RING
 * slots, so step t writes slot t % TB_RING and reads slot (t-1) % TB_RING.
 *
 * Every implementation (pto, OpenMP, StarPU), the peak measurement and the
 * sequential reference use this file, so they agree on the graph, the task
 * count and the expected checksum.
 */
#ifndef PTOBENCH_TASKBENCH_H
#define PTOBENCH_TASKBENCH_H

#include <stdint.h>

enum tb_pattern {
	TB_TRIVIAL,		/* no dependencies at all */
	TB_STENCIL_1D,		/* i-1, i, i+1 (clipped at the edges) */
	TB_NEAREST,		/* the radix nearest points (clipped) */
	TB_SPREAD,		/* radix points spread over the width */
	TB_FFT,			/* butterfly: i and i ^ 2^k */
	TB_TREE,		/* fan-out tree: i depends on i/2 */
	TB_ALL_TO_ALL,		/* every point of the previous step */
	TB_RANDOM_NEAREST,	/* a random subset of nearest's points */
	TB_NUM_PATTERNS
};

#define TB_MAX_WIDTH	1024
#define TB_MAX_RADIX	9
#define TB_DEF_RADIX	3
/* --vary N:F: N and F at most */
#define TB_MAX_VARY	1000000
/*
 * Output slots per point.  Two suffice because every pattern reaches back
 * one step only; the price is a write-after-read edge from the readers of
 * slot (t-2) to the writer at step t, the same in every implementation.
 */
#define TB_RING		2
/* Independent multiply-add chains in the kernel; FLOPs per iteration. */
#define TB_LANES	16
#define TB_FLOPS_PER_ITER (2 * TB_LANES)

/*
 * One point's output.  A cache line of its own, so that two cores writing
 * neighbouring points never share a line.
 */
struct tb_point {
	uint64_t h;		/* hash of the inputs: checks dependencies */
	double v;		/* result of the multiply-adds */
	uint64_t pad[6];
} __attribute__((aligned(64)));

struct tb_graph {
	enum tb_pattern pattern;
	uint32_t width;
	uint32_t steps;
	uint32_t radix;
	uint64_t tasks;		/* points over all steps */
	/*
	 * Variable kernels (0: none): one task in vary_every, chosen by its
	 * seed, runs vary_factor times the iterations of the others.
	 */
	uint32_t vary_every;
	uint32_t vary_factor;
};

const char *tb_pattern_name(enum tb_pattern p);
/* -1 when unknown. */
int tb_pattern_lookup(const char *name);
/* 0, or -EINVAL for a width, step count or radix out of range. */
int tb_graph_init(struct tb_graph *g, enum tb_pattern p, uint32_t width,
		  uint32_t steps, uint32_t radix);
/* Points of step t are 0 .. tb_active(g, t) - 1. */
uint32_t tb_active(const struct tb_graph *g, uint32_t t);
/*
 * Dependencies of point i of step t >= 1: points of step t-1, ascending,
 * without duplicates, into deps (room for g->width).  Returns the count.
 */
uint32_t tb_deps(const struct tb_graph *g, uint32_t t, uint32_t i,
		 uint32_t *deps);
/* Sum of every task's output hash, computed sequentially. */
uint64_t tb_reference(const struct tb_graph *g);
/* "N:F" (--vary): 0, or -EINVAL. */
int tb_parse_vary(const char *s, uint32_t *every, uint32_t *factor);
/* FLOPs the whole graph executes when a plain task runs iters. */
uint64_t tb_graph_flops(const struct tb_graph *g, uint64_t iters);

/* Index of the output of point i of step t in a TB_RING * width array. */
static inline uint32_t tb_slot(const struct tb_graph *g, uint32_t t,
			       uint32_t i)
{
	return (t % TB_RING) * g->width + i;
}

/* A 64-bit finaliser: every input bit moves every output bit. */
static inline uint64_t tb_mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dull;
	x ^= x >> 33;
	return x;
}

/* The hash a task starts from; its inputs are folded in ascending order. */
static inline uint64_t tb_seed(uint32_t t, uint32_t i)
{
	return tb_mix(((uint64_t)t << 32 | i) + 0x9e3779b97f4a7c15ull);
}

/* Iterations of the task whose seed is seed, when a plain one runs iters. */
static inline uint64_t tb_task_iters(const struct tb_graph *g, uint64_t seed,
				     uint64_t iters)
{
	return g->vary_every && seed % g->vary_every == 0 ?
	       iters * g->vary_factor : iters;
}

static inline uint64_t tb_fold(uint64_t h, uint64_t input)
{
	return tb_mix(h ^ input);
}

static inline uint64_t tb_out_hash(uint64_t h)
{
	return tb_mix(h + 1);
}

/*
 * The compute kernel (metg_kernel.c, compiled once with one compiler and
 * linked into every worker and the peak program): folds the inputs' hashes
 * into seed, derives the start of TB_LANES multiply-add chains from the
 * result, runs them `iters` times, and writes the hash and the result to
 * out.  Returns the FLOPs it executed: iters * TB_FLOPS_PER_ITER.
 */
uint64_t tb_kernel(struct tb_point *out, const struct tb_point *const *in,
		   uint32_t nin, uint64_t seed, uint64_t iters);

#endif /* PTOBENCH_TASKBENCH_H */
