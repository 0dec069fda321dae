// SPDX-License-Identifier: MIT
/*
 * The dependence patterns of the METG benchmark (see taskbench.h), and the
 * sequential reference every worker checks its run against.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "taskbench.h"

static const char *const names[TB_NUM_PATTERNS] = {
	[TB_TRIVIAL] = "trivial",
	[TB_STENCIL_1D] = "stencil_1d",
	[TB_NEAREST] = "nearest",
	[TB_SPREAD] = "spread",
	[TB_FFT] = "fft",
	[TB_TREE] = "tree",
	[TB_ALL_TO_ALL] = "all_to_all",
	[TB_RANDOM_NEAREST] = "random_nearest",
};

const char *tb_pattern_name(enum tb_pattern p)
{
	return p < TB_NUM_PATTERNS ? names[p] : "?";
}

int tb_pattern_lookup(const char *name)
{
	for (int p = 0; p < TB_NUM_PATTERNS; p++)
		if (!strcmp(name, names[p]))
			return p;
	return -1;
}

/*
 * The tree fans out from one point: step t has 2^t points until the width
 * is reached.  Every other pattern uses the whole width at every step.
 */
uint32_t tb_active(const struct tb_graph *g, uint32_t t)
{
	if (g->pattern == TB_TREE && t < 31 && (1u << t) < g->width)
		return 1u << t;
	return g->width;
}

int tb_graph_init(struct tb_graph *g, enum tb_pattern p, uint32_t width,
		  uint32_t steps, uint32_t radix)
{
	if (p >= TB_NUM_PATTERNS || !width || width > TB_MAX_WIDTH ||
	    !steps || !radix || radix > TB_MAX_RADIX)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->pattern = p;
	g->width = width;
	g->steps = steps;
	g->radix = radix;
	for (uint32_t t = 0; t < steps; t++)
		g->tasks += tb_active(g, t);
	return 0;
}

/* Points lo..hi of the previous step, clipped to the width. */
static uint32_t range(const struct tb_graph *g, int64_t lo, int64_t hi,
		      uint32_t *deps)
{
	uint32_t n = 0;

	if (lo < 0)
		lo = 0;
	if (hi > (int64_t)g->width - 1)
		hi = g->width - 1;
	for (int64_t j = lo; j <= hi; j++)
		deps[n++] = j;
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Sort and drop duplicates: every runtime gets each input once, in order. */
static uint32_t uniq(uint32_t *deps, uint32_t n)
{
	uint32_t m = 0;

	qsort(deps, n, sizeof(*deps), cmp_u32);
	for (uint32_t k = 0; k < n; k++)
		if (!m || deps[m - 1] != deps[k])
			deps[m++] = deps[k];
	return m;
}

/*
 * radix points, width/radix apart (at least 1), wrapping around; fewer
 * when the width is smaller than the radix (deps has room for the width).
 */
static uint32_t spread(const struct tb_graph *g, uint32_t i, uint32_t *deps)
{
	uint32_t stride = g->width / g->radix ? g->width / g->radix : 1;
	uint32_t all[TB_MAX_RADIX], n;

	for (uint32_t j = 0; j < g->radix; j++)
		all[j] = (i + (uint64_t)j * stride) % g->width;
	n = uniq(all, g->radix);
	memcpy(deps, all, n * sizeof(*deps));
	return n;
}

/*
 * Butterfly: stage k = (t-1) mod log2(width) pairs i with i ^ 2^k, as the
 * stages of a radix-2 FFT do; a partner beyond a width that is not a power
 * of two is dropped.
 */
static uint32_t fft(const struct tb_graph *g, uint32_t t, uint32_t i,
		    uint32_t *deps)
{
	uint32_t stages = 0, partner;

	while ((1u << stages) < g->width)
		stages++;
	deps[0] = i;
	if (!stages)
		return 1;
	partner = i ^ (1u << ((t - 1) % stages));
	if (partner >= g->width)
		return 1;
	deps[1] = partner;
	return uniq(deps, 2);
}

/*
 * nearest's points, each but i itself kept with probability 1/2, drawn
 * from a hash of (t, i, j) so that every implementation builds the same
 * graph.
 */
static uint32_t random_nearest(const struct tb_graph *g, uint32_t t,
			       uint32_t i, uint32_t *deps)
{
	uint32_t all[TB_MAX_RADIX], n, m = 0;

	n = range(g, (int64_t)i - (g->radix - 1) / 2, (int64_t)i + g->radix / 2,
		  all);
	for (uint32_t k = 0; k < n; k++)
		if (all[k] == i || tb_mix(tb_seed(t, i) ^ all[k]) >> 63)
			deps[m++] = all[k];
	return m;
}

uint32_t tb_deps(const struct tb_graph *g, uint32_t t, uint32_t i,
		 uint32_t *deps)
{
	if (!t)
		return 0;
	switch (g->pattern) {
	case TB_STENCIL_1D:
		return range(g, (int64_t)i - 1, (int64_t)i + 1, deps);
	case TB_NEAREST:
		return range(g, (int64_t)i - (g->radix - 1) / 2,
			     (int64_t)i + g->radix / 2, deps);
	case TB_SPREAD:
		return spread(g, i, deps);
	case TB_FFT:
		return fft(g, t, i, deps);
	case TB_TREE:
		deps[0] = i / 2;
		return 1;
	case TB_ALL_TO_ALL:
		return range(g, 0, tb_active(g, t - 1) - 1, deps);
	case TB_RANDOM_NEAREST:
		return random_nearest(g, t, i, deps);
	default:
		return 0;
	}
}

/*
 * What the kernels compute for the hashes, without the multiply-adds: the
 * sum (mod 2^64) of every task's output hash.  A task that ran before one
 * of its inputs was written, or read a stale slot, changes its own hash and
 * those of all its descendants.
 */
int tb_parse_vary(const char *s, uint32_t *every, uint32_t *factor)
{
	unsigned long n, f;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (*end != ':' || end == s)
		return -EINVAL;
	s = end + 1;
	f = strtoul(s, &end, 10);
	if (errno || *end || end == s || n < 2 || n > TB_MAX_VARY || f < 2 ||
	    f > TB_MAX_VARY)
		return -EINVAL;
	*every = n;
	*factor = f;
	return 0;
}

uint64_t tb_graph_flops(const struct tb_graph *g, uint64_t iters)
{
	uint64_t flops = 0;

	for (uint32_t t = 0; t < g->steps; t++)
		for (uint32_t i = 0; i < tb_active(g, t); i++)
			flops += tb_task_iters(g, tb_seed(t, i), iters);
	return flops * TB_FLOPS_PER_ITER;
}

uint64_t tb_reference(const struct tb_graph *g)
{
	uint64_t *h = calloc((size_t)TB_RING * g->width, sizeof(*h)), sum = 0;
	uint32_t *deps = calloc(g->width, sizeof(*deps));

	if (!h || !deps) {
		free(h);
		free(deps);
		return 0;
	}
	for (uint32_t t = 0; t < g->steps; t++) {
		for (uint32_t i = 0; i < tb_active(g, t); i++) {
			uint32_t n = tb_deps(g, t, i, deps);
			uint64_t x = tb_seed(t, i);

			for (uint32_t k = 0; k < n; k++)
				x = tb_fold(x, h[tb_slot(g, t - 1, deps[k])]);
			x = tb_out_hash(x);
			/* trivial writes no slot; nothing reads it anyway */
			h[tb_slot(g, t, i)] = x;
			sum += x;
		}
	}
	free(h);
	free(deps);
	return sum;
}
