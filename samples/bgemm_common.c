// SPDX-License-Identifier: MIT
/*
 * BGEMM inputs, sizing and the orchestration skeleton shared by both BGEMM
 * samples; see bgemm.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bgemm.h"

/* Defaults: a 4 x 4 x 4 x 4 tile problem with 64 x 64 tiles. */
static void bgemm_defaults(struct bgemm *g)
{
	g->batch = 4;
	g->mt = 4;
	g->nt = 4;
	g->kt = 4;
	g->tile = 64;
	g->kgroup = 0;
	g->seed = 1;
}

static int bgemm_check_sizes(const struct bgemm *g)
{
	const struct {
		const char *name;
		uint64_t rows, cols;
	} mat[] = {
		{ "A", g->mt, g->kt }, { "B", g->kt, g->nt },
		{ "C", g->mt, g->nt },
	};
	uint64_t lim = 1ull << 16;
	unsigned int i;

	if (!g->batch || !g->mt || !g->nt || !g->kt || !g->tile ||
	    g->batch > lim || g->mt > lim || g->nt > lim || g->kt > lim ||
	    g->tile > 1024) {
		fprintf(stderr,
			"%s: batch=, m=, n=, k= must be in [1, 65536] and tile= in [1, 1024]\n",
			g->prog);
		return -EINVAL;
	}
	/* keep every matrix under 2^40 bytes so offsets cannot overflow */
	for (i = 0; i < sizeof(mat) / sizeof(mat[0]); i++) {
		if (g->batch * mat[i].rows * mat[i].cols <=
		    (1ull << 40) / bgemm_tile_bytes(g))
			continue;
		fprintf(stderr,
			"%s: %s (batch=%" PRIu64 " x %" PRIu64 " x %" PRIu64
			" tiles of %" PRIu64 "x%" PRIu64
			" floats) would exceed 1 TiB\n",
			g->prog, mat[i].name, g->batch, mat[i].rows,
			mat[i].cols, g->tile, g->tile);
		return -EINVAL;
	}
	return 0;
}

static int bgemm_alloc(struct pto_runtime *rt, struct bgemm *g)
{
	uint64_t te = bgemm_tile_bytes(g);
	uint64_t ab = g->batch * g->mt * g->kt * te;
	uint64_t bb = g->batch * g->kt * g->nt * te;
	uint64_t cb = g->batch * g->mt * g->nt * te;

	g->a = sample_malloc(rt, g->prog, "A", ab);
	g->b = g->a ? sample_malloc(rt, g->prog, "B", bb) : NULL;
	g->c = g->b ? sample_malloc(rt, g->prog, "C", cb) : NULL;
	g->c0 = g->c ? sample_malloc(rt, g->prog, "C0", cb) : NULL;
	g->ref = g->c0 ? malloc(cb) : NULL;
	if (!g->ref)
		return -ENOMEM;
	return 0;
}

/*
 * Fill matrix m of rt x ct tiles per batch in tile-major order, wherever
 * the layout puts each element, so every layout holds the same values
 * (and layout=tiled the ones it always had).
 */
static void bgemm_fill(const struct bgemm *g, float *m, uint64_t rt,
		       uint64_t ct, uint64_t *state)
{
	uint64_t t = g->tile, b, ti, tj, r, c;

	for (b = 0; b < g->batch; b++)
		for (ti = 0; ti < rt; ti++)
			for (tj = 0; tj < ct; tj++)
				for (r = 0; r < t; r++)
					for (c = 0; c < t; c++)
						m[bgemm_elem(g, rt, ct, b,
							     ti * t + r,
							     tj * t + c)] =
							sample_rand_f32(state);
}

int bgemm_setup(struct pto_runtime *rt, struct bgemm *g, int argc,
		char **argv)
{
	const char *layout = "tiled";
	const struct sample_opt opts[] = {
		{ "batch", &g->batch, NULL, "batches" },
		{ "m", &g->mt, NULL, "output tile rows per batch" },
		{ "n", &g->nt, NULL, "output tile columns per batch" },
		{ "k", &g->kt, NULL, "tiles along the reduction" },
		{ "tile", &g->tile, NULL, "tile edge in elements" },
		{ "kgroup", &g->kgroup, NULL,
		  "k steps per innermost scope (0: fit the rings)" },
		{ "seed", &g->seed, NULL, "input data seed" },
		{ "layout", NULL, &layout, g->layouts & (1u << SAMPLE_RANGES) ?
		  "tiled, rowmajor (2-D tile views) or ranges" :
		  "tiled or rowmajor (2-D tile views)" },
		{ NULL }
	};
	uint64_t state;
	int ret;

	bgemm_defaults(g);
	ret = sample_parse_args(g->prog, argc, argv, opts);
	if (ret)
		return ret;
	ret = sample_parse_layout(g->prog, layout, g->layouts, &g->layout);
	if (!ret)
		ret = bgemm_check_sizes(g);
	if (ret)
		return ret;
	ret = bgemm_alloc(rt, g);
	if (ret) {
		bgemm_teardown(rt, g);
		return ret;
	}
	state = g->seed;
	bgemm_fill(g, g->a, g->mt, g->kt, &state);
	bgemm_fill(g, g->b, g->kt, g->nt, &state);
	bgemm_fill(g, g->c0, g->mt, g->nt, &state);
	memset(g->c, 0, bgemm_c_elems(g) * sizeof(float));
	g->kgroup_run = bgemm_kgroup(rt, g);

	/* one copy task per batch, then the k steps of every tile */
	g->tasks = g->batch * (1 + g->mt * g->nt * g->kt * g->tasks_per_k);
	printf("%s: batch=%" PRIu64 " m=%" PRIu64 " n=%" PRIu64 " k=%" PRIu64
	       " tiles of %" PRIu64 "x%" PRIu64 " (C %" PRIu64 "x%" PRIu64
	       " per batch), %" PRIu64 " tasks per run, %" PRIu64
	       " k steps per scope, layout %s\n", g->prog, g->batch, g->mt, g->nt,
	       g->kt, g->tile, g->tile, g->mt * g->tile, g->nt * g->tile,
	       g->tasks, g->kgroup_run, sample_layout_name(g->layout));
	return 0;
}

void bgemm_teardown(struct pto_runtime *rt, struct bgemm *g)
{
	if (g->a)
		pto_free(rt, g->a);
	if (g->b)
		pto_free(rt, g->b);
	if (g->c)
		pto_free(rt, g->c);
	if (g->c0)
		pto_free(rt, g->c0);
	free(g->ref);
	g->a = NULL;
	g->b = NULL;
	g->c = NULL;
	g->c0 = NULL;
	g->ref = NULL;
}

uint64_t bgemm_kgroup(struct pto_runtime *rt, const struct bgemm *g)
{
	struct sample_cost step = {
		.tasks = g->tasks_per_k,
		.heap = sample_heap_bytes(bgemm_tile_bytes(g)),
		.tensors = g->tensors_per_k,
	}, none = { 0 };

	if (g->kgroup)
		return g->kgroup < g->kt ? g->kgroup : g->kt;
	/* scopes: the run's, a batch's, a tile's, then the k group's */
	return sample_units_per_scope(rt, 3, &step, &none, g->kt);
}

/*
 * One output tile: its k steps in groups of kgroup, each group in its own
 * scope, so the runtime can retire a group's temporaries while the next
 * group is being submitted (a tile of many k steps still runs in a small
 * task window or heap).
 */
static int bgemm_tile_run(struct pto_runtime *rt, const struct bgemm *g,
			  const struct bgemm_ops *ops, uint64_t b, uint64_t i,
			  uint64_t j, uint64_t kgroup)
{
	uint64_t k0, k;
	int ret = 0;

	pto_scope_begin(rt);
	for (k0 = 0; k0 < g->kt && !ret; k0 += kgroup) {
		pto_scope_begin(rt);
		for (k = k0; k < k0 + kgroup && k < g->kt && !ret; k++)
			ret = ops->k_step(rt, g, b, i, j, k);
		ret = sample_scope_end(rt, ret);
	}
	return sample_scope_end(rt, ret);
}

static int bgemm_batch_run(struct pto_runtime *rt, const struct bgemm *g,
			   const struct bgemm_ops *ops, uint64_t b,
			   uint64_t kgroup)
{
	uint64_t i, j;
	int ret;

	pto_scope_begin(rt);
	/*
	 * C[b] = C0[b] first, in a scope of its own: a task in the batch
	 * scope would stay alive (and pin the task ring) until the batch
	 * ends.  The adds below find it through C's TensorMap entry.
	 */
	pto_scope_begin(rt);
	ret = sample_scope_end(rt, ops->copy(rt, g, b));
	for (i = 0; i < g->mt && !ret; i++)
		for (j = 0; j < g->nt && !ret; j++)
			ret = bgemm_tile_run(rt, g, ops, b, i, j, kgroup);
	return sample_scope_end(rt, ret);
}

int bgemm_orchestrate(struct pto_runtime *rt, const struct bgemm *g,
		      const struct bgemm_ops *ops)
{
	uint64_t kgroup = g->kgroup_run, b;
	int ret = 0;

	for (b = 0; b < g->batch && !ret; b++)
		ret = bgemm_batch_run(rt, g, ops, b, kgroup);
	return ret;
}

/* A tile's row is contiguous in every layout: hash C row by row. */
uint64_t bgemm_checksum(const struct bgemm *g)
{
	uint64_t h = SAMPLE_FNV_INIT, t = g->tile, b, r, j, x;

	for (b = 0; b < g->batch; b++) {
		for (r = 0; r < g->mt * t; r++) {
			for (j = 0; j < g->nt; j++) {
				x = bgemm_elem(g, g->mt, g->nt, b, r, j * t);
				h = sample_fnv1a(h, g->c + x,
						 t * sizeof(float));
			}
		}
	}
	return h;
}

int bgemm_init_done(struct pto_runtime *rt, struct bgemm *g, int ret,
		    void **arg)
{
	if (ret) {
		if (ret < 0)
			sample_error(g->prog, "setup", ret);
		bgemm_teardown(rt, g);
		free(g);
		return ret;
	}
	*arg = g;
	return 0;
}
