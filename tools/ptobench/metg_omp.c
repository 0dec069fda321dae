// SPDX-License-Identifier: MIT
/*
 * METG graphs as OpenMP tasks, built with gcc (libgomp) and with clang
 * (libomp) as worker_omp.c is.  Every point of every step is a task with
 * depend(out) on its output slot and, through an OpenMP 5.0 iterator,
 * depend(in) on each input's slot; trivial tasks have no depend clause.
 * One thread (single) submits, the others run tasks; the end of the
 * parallel region is "all complete".
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker.h"

static int nthreads;

/* Where a trivial task writes: it declares no dependency at all. */
static __thread struct tb_point sink;

/* The task body: find the inputs again (cheap), run the kernel. */
static void point(const struct tb_graph *g, struct tb_point *buf,
		  uint32_t t, uint32_t i, uint64_t iters)
{
	const struct tb_point *in[TB_MAX_WIDTH];
	uint32_t deps[TB_MAX_WIDTH], n = tb_deps(g, t, i, deps);
	struct tb_point *out = g->pattern == TB_TRIVIAL ? &sink :
			       &buf[tb_slot(g, t, i)];

	for (uint32_t k = 0; k < n; k++)
		in[k] = &buf[tb_slot(g, t - 1, deps[k])];
	worker_count_metg(out, tb_kernel(out, in, n, tb_seed(t, i),
					 tb_task_iters(g, tb_seed(t, i), iters)));
}

static void step(const struct tb_graph *g, struct tb_point *buf, uint32_t t,
		 uint64_t iters)
{
	uint32_t deps[TB_MAX_WIDTH];

	for (uint32_t i = 0; i < tb_active(g, t); i++) {
		struct tb_point *out = &buf[tb_slot(g, t, i)];
		struct tb_point *prev = t ? &buf[tb_slot(g, t - 1, 0)] : buf;
		uint32_t n = tb_deps(g, t, i, deps);

		(void)out;	/* gcc: depend-only uses look unused */
		(void)prev;
		(void)n;
		if (g->pattern == TB_TRIVIAL) {
#pragma omp task firstprivate(g, buf, t, i, iters)
			point(g, buf, t, i, iters);
		} else {
#pragma omp task depend(out: out[0]) \
	depend(iterator(k = 0:n), in: prev[deps[k]]) \
	firstprivate(g, buf, t, i, iters)
			point(g, buf, t, i, iters);
		}
	}
}

static int metg_omp_init(uint32_t cores, char *info, size_t len)
{
	nthreads = cores ? (int)cores : omp_get_max_threads();
	snprintf(info, len, " threads=%d", nthreads);
	return 0;
}

static int metg_omp_run(const struct tb_graph *g, uint64_t iters,
			uint64_t *ns)
{
	size_t bytes = (size_t)TB_RING * g->width * sizeof(struct tb_point);
	struct tb_point *buf = aligned_alloc(sizeof(*buf), bytes);
	uint64_t t0;

	if (!buf)
		return -ENOMEM;
	memset(buf, 0, bytes);
	t0 = worker_now_ns();
#pragma omp parallel num_threads(nthreads)
#pragma omp single
	for (uint32_t t = 0; t < g->steps; t++)
		step(g, buf, t, iters);
	*ns = worker_now_ns() - t0;
	free(buf);
	return 0;
}

static void metg_omp_fini(char *info, size_t len)
{
}

const struct metg_ops metg_ops = {
	.init = metg_omp_init,
	.run = metg_omp_run,
	.fini = metg_omp_fini,
};
