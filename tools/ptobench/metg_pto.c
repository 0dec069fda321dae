// SPDX-License-Identifier: MIT
/*
 * METG graphs on libpto, through the public API only.  The dependencies
 * are tensor regions: every point writes its slot of a pto_malloc'd array
 * (PTO_OUT_EXISTING) and reads its inputs' slots (PTO_IN), one region per
 * run of consecutive input points, so that stencil_1d, nearest and
 * all_to_all read one region and spread reads at most radix.  One scope
 * per timestep lets the runtime retire a step's tasks while later steps
 * are submitted.  --cores C gives the simulator C vector cores and no
 * other; the rest is the default configuration and the PTO_* environment.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto/pto.h>

#include "worker.h"

enum { K_TB };

/* Kernel arguments: output, iterations, seed, then the input runs. */
enum { ARG_OUT, ARG_ITERS, ARG_SEED, ARG_RUNS };

static struct pto_runtime *rt;
static uint64_t run_edges;
/*
 * PTOBENCH_METG_FAULT: point 0 of step 1 leaves out its last input, so a
 * test can see that a wrong dependency fails the run.
 */
static bool fault;

/* Where a trivial task writes: it declares no region at all. */
static __thread struct tb_point sink;

/*
 * args[ARG_RUNS + 2k] is the address of the k-th run of consecutive input
 * points and args[ARG_RUNS + 2k + 1] its length.
 */
static void tb_pto_kernel(const uint64_t *args, uint32_t nargs)
{
	const struct tb_point *in[TB_MAX_WIDTH];
	struct tb_point *out = args[ARG_OUT] ?
			       (struct tb_point *)args[ARG_OUT] : &sink;
	uint32_t n = 0;

	for (uint32_t k = ARG_RUNS; k + 1 < nargs; k += 2) {
		const struct tb_point *p = (const struct tb_point *)args[k];

		for (uint64_t j = 0; j < args[k + 1] && n < TB_MAX_WIDTH; j++)
			in[n++] = p + j;
	}
	worker_count_metg(out, tb_kernel(out, in, n, args[ARG_SEED],
					 args[ARG_ITERS]));
}

/* One region per run of consecutive inputs; returns the parameter count. */
static int input_runs(const struct tb_graph *g, struct tb_point *buf,
		      uint32_t t, const uint32_t *deps, uint32_t n,
		      struct pto_param *p, int np)
{
	const uint64_t sz = sizeof(struct tb_point);

	for (uint32_t k = 0, len; k < n; k += len) {
		for (len = 1; k + len < n && deps[k + len] == deps[k] + len;)
			len++;
		if (np + 2 > PTO_MAX_PARAMS)
			return -E2BIG;
		p[np++] = PTO_IN(buf, tb_slot(g, t - 1, deps[k]) * sz,
				 len * sz);
		p[np++] = PTO_SCALAR(len);
	}
	return np;
}

static int submit_point(const struct tb_graph *g, struct tb_point *buf,
			uint32_t t, uint32_t i, uint64_t iters)
{
	const uint64_t sz = sizeof(struct tb_point);
	struct pto_param p[PTO_MAX_PARAMS];
	uint32_t deps[TB_MAX_WIDTH], n = tb_deps(g, t, i, deps);
	int64_t id;
	int np;

	if (g->pattern == TB_TRIVIAL)
		p[ARG_OUT] = PTO_SCALAR(0);
	else
		p[ARG_OUT] = PTO_OUT_EXISTING(buf, tb_slot(g, t, i) * sz, sz);
	p[ARG_ITERS] = PTO_SCALAR(tb_task_iters(g, tb_seed(t, i), iters));
	p[ARG_SEED] = PTO_SCALAR(tb_seed(t, i));
	if (fault && t == 1 && i == 0 && n)
		n--;
	np = input_runs(g, buf, t, deps, n, p, ARG_RUNS);
	if (np < 0)
		return np;
	id = pto_submit_task(rt, K_TB, PTO_WORKER_VECTOR, p, np);
	return id < 0 ? (int)id : 0;
}

struct tb_run {
	const struct tb_graph *g;
	struct tb_point *buf;
	uint64_t iters;
};

static int step(const struct tb_run *r, uint32_t t)
{
	for (uint32_t i = 0; i < tb_active(r->g, t); i++) {
		int err = submit_point(r->g, r->buf, t, i, r->iters);

		if (err)
			return err;
	}
	return 0;
}

/* A scope per timestep. */
static int orchestrate(struct pto_runtime *r, void *arg)
{
	const struct tb_run *run = arg;

	for (uint32_t t = 0; t < run->g->steps; t++) {
		int err, end;

		pto_scope_begin(rt);
		err = step(run, t);
		end = pto_scope_end(rt);
		if (err || end)
			return err ? err : end;
	}
	return 0;
}

static int metg_pto_init(uint32_t cores, char *info, size_t len)
{
	struct pto_config cfg;
	int err;

	fault = getenv("PTOBENCH_METG_FAULT");
	pto_config_init(&cfg);
	if (cores) {
		memset(cfg.cores, 0, sizeof(cfg.cores));
		cfg.cores[PTO_WORKER_VECTOR] = cores;
	}
	err = pto_runtime_create(&cfg, &rt);
	if (err) {
		fprintf(stderr, "ptobench-pto: pto_runtime_create: %s\n",
			strerror(-err));
		return err;
	}
	err = pto_kernel_register(rt, K_TB, PTO_WORKER_VECTOR, tb_pto_kernel,
				  "taskbench");
	if (err) {
		fprintf(stderr, "ptobench-pto: pto_kernel_register: %s\n",
			strerror(-err));
		pto_runtime_destroy(rt);
		rt = NULL;
		return err;
	}
	snprintf(info, len, " window=%u", cfg.task_window);
	return 0;
}

static int metg_pto_run(const struct tb_graph *g, uint64_t iters,
			uint64_t *ns)
{
	size_t bytes = (size_t)TB_RING * g->width * sizeof(struct tb_point);
	struct tb_run run = { .g = g, .iters = iters };
	struct pto_stats before, after;
	uint64_t t0;
	int err;

	run.buf = pto_malloc(rt, bytes);
	if (!run.buf)
		return -ENOMEM;
	memset(run.buf, 0, bytes);
	pto_get_stats(rt, &before);
	t0 = worker_now_ns();
	err = pto_run(rt, orchestrate, &run);
	*ns = worker_now_ns() - t0;
	pto_get_stats(rt, &after);
	run_edges = after.edges - before.edges;
	pto_free(rt, run.buf);
	return err;
}

static void metg_pto_fini(char *info, size_t len)
{
	struct pto_stats st;
	uint64_t stalls = 0;

	if (!rt)
		return;
	if (getenv("PTOBENCH_STATS"))
		pto_print_stats(rt, stderr);
	if (info && !pto_get_stats(rt, &st)) {
		for (int r = 0; r < PTO_NUM_RINGS; r++)
			stalls += st.ring[r].stalls;
		snprintf(info, len, " edges=%" PRIu64 " stalls=%" PRIu64
			 " vector_cores=%u", run_edges, stalls,
			 st.cores[PTO_WORKER_VECTOR]);
	}
	pto_runtime_destroy(rt);
	rt = NULL;
}

const struct metg_ops metg_ops = {
	.init = metg_pto_init,
	.run = metg_pto_run,
	.fini = metg_pto_fini,
};
