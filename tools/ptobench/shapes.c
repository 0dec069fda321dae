// SPDX-License-Identifier: MIT
/*
 * Shape names and geometry.  Shared by the driver and all workers.
 */
#include <string.h>

#include "shapes.h"

static const char *const names[NUM_SHAPES] = {
	[SHAPE_CHAIN] = "chain",
	[SHAPE_BGEMM] = "bgemm",
	[SHAPE_BGEMM_WEIGHT] = "bgemm-weight",
	[SHAPE_BGEMM_SCRATCH] = "bgemm-scratch",
	[SHAPE_STENCIL] = "stencil",
	[SHAPE_PAGED_ATTN] = "paged-attn",
	[SHAPE_WAIT] = "wait",
	[SHAPE_SPARSE] = "sparse",
	[SHAPE_RUNS] = "runs",
};

const char *shape_name(enum bench_shape s)
{
	return s < NUM_SHAPES ? names[s] : "?";
}

int shape_lookup(const char *name)
{
	for (int s = 0; s < NUM_SHAPES; s++)
		if (!strcmp(name, names[s]))
			return s;
	return -1;
}

uint64_t shape_default_tasks(enum bench_shape s)
{
	switch (s) {
	case SHAPE_SPARSE:
		return SPARSE_TASKS;
	case SHAPE_RUNS:
		return RUNS_TASKS;
	default:
		return DEFAULT_TASKS;
	}
}

/* Round target / unit to the nearest whole number, at least one. */
static uint64_t units(uint64_t target, uint64_t unit)
{
	uint64_t n = (target + unit / 2) / unit;

	return n ? n : 1;
}

void shape_geom(enum bench_shape s, uint64_t target, struct bench_geom *g)
{
	const uint64_t per_batch = 2ull * BGEMM_MT * BGEMM_NT * BGEMM_KT;
	const uint64_t per_q = PA_CHUNKS * (1 + 4ull * PA_BLOCKS);

	memset(g, 0, sizeof(*g));
	g->shape = s;
	/* 16x16 floats; the NOP kernels never touch the data. */
	g->tile = 1024;
	switch (s) {
	case SHAPE_CHAIN:
	case SHAPE_WAIT:
	case SHAPE_SPARSE:
		g->chain = target ? target : 1;
		g->tasks = g->chain;
		break;
	case SHAPE_BGEMM:
	case SHAPE_BGEMM_WEIGHT:
	case SHAPE_BGEMM_SCRATCH:
		g->batch = units(target, per_batch);
		g->tasks = g->batch * per_batch;
		break;
	case SHAPE_STENCIL:
		g->width = STENCIL_WIDTH;
		g->steps = units(target, STENCIL_WIDTH);
		g->tasks = (uint64_t)g->width * g->steps;
		break;
	case SHAPE_PAGED_ATTN:
		g->q_loop = units(target, per_q);
		g->tasks = g->q_loop * per_q;
		break;
	case SHAPE_RUNS:
		g->chain = units(target, 2);
		g->tasks = 2 * g->chain;
		break;
	default:
		break;
	}
}
