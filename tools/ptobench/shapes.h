/* SPDX-License-Identifier: MIT */
/*
 * ptobench DAG shapes.  Every worker (pto, OpenMP with libgomp
 * or libomp) builds the same DAG from the same geometry, so this file is the
 * single place that decides how big each shape is for a task budget.
 */
#ifndef PTOBENCH_SHAPES_H
#define PTOBENCH_SHAPES_H

#include <stdint.h>

enum bench_shape {
	SHAPE_CHAIN,		/* one INOUT region, strictly sequential */
	SHAPE_BGEMM,		/* gemm -> fresh P, add P into C */
	SHAPE_BGEMM_WEIGHT,	/* as BGEMM, every task also reads W */
	SHAPE_BGEMM_SCRATCH,	/* gemm rewrites a scratch tile (WAR) */
	SHAPE_STENCIL,		/* 1-D, three inputs, two arrays */
	SHAPE_PAGED_ATTN,	/* paged attention: hub, QK, SF, PV, UP */
	SHAPE_WAIT,		/* one task on one INOUT region, waited for */
	SHAPE_SPARSE,		/* one task, then host work, no dependencies */
	SHAPE_RUNS,		/* a run of a cube then a vector task, again */
	NUM_SHAPES
};

/* BGEMM tile grid of one batch and the batch slots C/P/S rotate over. */
#define BGEMM_MT	4
#define BGEMM_NT	4
#define BGEMM_KT	4
#define BGEMM_SLOTS	64
/* Stencil cells per step. */
#define STENCIL_WIDTH	256
/* Paged attention: batch 256 in chunks of 16, three KV blocks per chunk. */
#define PA_BATCH	256
#define PA_CORE_BATCH	16
#define PA_CHUNKS	(PA_BATCH / PA_CORE_BATCH)
#define PA_BLOCKS	3
/* Chain tasks per scope (a scope must fit in the task window). */
#define CHAIN_SCOPE	64
/*
 * Sparse: the tiles its tasks rotate over (task i updates tile i % 1024,
 * so that a task depends on one 1024 gaps older, 20 ms by default, long
 * done even on a busy machine), and its task count when none is asked
 * for: every task costs a gap of host work, 20 us by default.
 */
#define SPARSE_TILES	1024
#define SPARSE_TASKS	2000
/*
 * Runs: its task count when none is asked for (two tasks a run): a run
 * costs microseconds, a wake-up and a hand-off at each end.
 */
#define RUNS_TASKS	20000
/* Task count of every other shape when none is asked for. */
#define DEFAULT_TASKS	200000

struct bench_geom {
	enum bench_shape shape;
	uint64_t tasks;		/* exact task count of this geometry */
	uint32_t tile;		/* bytes of every declared region */
	uint64_t chain;		/* chain, wait, sparse: tasks; runs: runs */
	uint32_t batch;		/* bgemm*: batches of MT x NT x KT x 2 */
	uint32_t width;		/* stencil: cells */
	uint32_t steps;		/* stencil: steps */
	uint32_t q_loop;	/* paged attention: passes over the batch */
	uint64_t gap_ns;	/* sparse: host work after each submission */
};

const char *shape_name(enum bench_shape s);
/* -1 when unknown. */
int shape_lookup(const char *name);
/* Tasks per run when the user asks for no count. */
uint64_t shape_default_tasks(enum bench_shape s);
/*
 * Geometry whose task count is as close to target as the shape allows
 * (gap_ns 0: the caller sets it).
 */
void shape_geom(enum bench_shape s, uint64_t target, struct bench_geom *g);

#endif /* PTOBENCH_SHAPES_H */
