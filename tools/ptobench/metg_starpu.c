// SPDX-License-Identifier: MIT
/*
 * METG graphs on StarPU: one registered variable handle per output slot,
 * and per task STARPU_W on its slot and STARPU_R on each input's slot, so
 * that StarPU's sequential consistency derives the dependencies.  Tasks with
 * more handles than STARPU_NMAXBUFS (all_to_all) use dyn_handles, which
 * StarPU frees with the task.  CPU workers only, as worker_starpu.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <starpu.h>

#include "worker.h"

/* The same for every task of a run; set before the first submission. */
static const struct tb_graph *run_graph;
static uint64_t run_iters;
static bool run_has_out;

/* Where a trivial task writes: it accesses no handle at all. */
static __thread struct tb_point sink;

static struct tb_point *ptr(void *buffer)
{
	return (struct tb_point *)STARPU_VARIABLE_GET_PTR(buffer);
}

/* buffers: the output slot (unless trivial), then the inputs. */
static void tb_cpu(void *buffers[], void *arg)
{
	const struct tb_point *in[TB_MAX_WIDTH];
	unsigned int nb = STARPU_TASK_GET_NBUFFERS(starpu_task_get_current());
	unsigned int first = run_has_out, n = 0;
	struct tb_point *out = run_has_out ? ptr(buffers[0]) : &sink;

	for (unsigned int k = first; k < nb && n < TB_MAX_WIDTH; k++)
		in[n++] = ptr(buffers[k]);
	worker_count_metg(out, tb_kernel(out, in, n, (uintptr_t)arg,
					 tb_task_iters(run_graph,
						       (uintptr_t)arg,
						       run_iters)));
}

static struct starpu_codelet tb_cl = {
	.cpu_funcs = { tb_cpu },
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "taskbench",
};

static void set(struct starpu_task *task, int k, starpu_data_handle_t h,
		enum starpu_data_access_mode mode)
{
	STARPU_TASK_SET_HANDLE(task, h, k);
	STARPU_TASK_SET_MODE(task, mode, k);
}

static int submit_point(const struct tb_graph *g, starpu_data_handle_t *hs,
			uint32_t t, uint32_t i)
{
	uint32_t deps[TB_MAX_WIDTH], n = tb_deps(g, t, i, deps);
	int nb = n + run_has_out, k = 0;
	struct starpu_task *task = starpu_task_create();

	if (!task)
		return -ENOMEM;
	task->cl = &tb_cl;
	/* The seed in the pointer: no allocation per task. */
	task->cl_arg = (void *)(uintptr_t)tb_seed(t, i);
	task->nbuffers = nb;
	if (nb > STARPU_NMAXBUFS) {
		task->dyn_handles = malloc(nb * sizeof(*task->dyn_handles));
		task->dyn_modes = malloc(nb * sizeof(*task->dyn_modes));
		if (!task->dyn_handles || !task->dyn_modes)
			return -ENOMEM;
	}
	if (run_has_out)
		set(task, k++, hs[tb_slot(g, t, i)], STARPU_W);
	for (uint32_t d = 0; d < n; d++)
		set(task, k++, hs[tb_slot(g, t - 1, deps[d])], STARPU_R);
	return starpu_task_submit(task);
}

static int submit_all(const struct tb_graph *g, starpu_data_handle_t *hs)
{
	for (uint32_t t = 0; t < g->steps; t++) {
		for (uint32_t i = 0; i < tb_active(g, t); i++) {
			int err = submit_point(g, hs, t, i);

			if (err)
				return err;
		}
	}
	return 0;
}

static int metg_sp_init(uint32_t cores, char *info, size_t len)
{
	struct starpu_conf conf;
	int err;

	/* No banner; no performance-model files in $HOME. */
	setenv("STARPU_SILENT", "1", 0);
	starpu_conf_init(&conf);
	if (cores)
		conf.ncpus = cores;
	conf.ncuda = 0;
	conf.nopencl = 0;
	err = starpu_init(&conf);
	if (err) {
		fprintf(stderr, "ptobench-starpu: starpu_init: %s\n",
			strerror(-err));
		return err;
	}
	snprintf(info, len, " workers=%u sched=%s",
		 starpu_cpu_worker_get_count(),
		 getenv("STARPU_SCHED") ? getenv("STARPU_SCHED") : "default");
	return 0;
}

static int metg_sp_run(const struct tb_graph *g, uint64_t iters,
		       uint64_t *ns)
{
	size_t nslots = (size_t)TB_RING * g->width;
	struct tb_point *buf = aligned_alloc(sizeof(*buf),
					     nslots * sizeof(*buf));
	starpu_data_handle_t *hs = calloc(nslots, sizeof(*hs));
	uint64_t t0;
	int err;

	if (!buf || !hs) {
		free(buf);
		free(hs);
		return -ENOMEM;
	}
	memset(buf, 0, nslots * sizeof(*buf));
	for (size_t s = 0; s < nslots; s++)
		starpu_variable_data_register(&hs[s], STARPU_MAIN_RAM,
					      (uintptr_t)&buf[s],
					      sizeof(buf[s]));
	run_graph = g;
	run_iters = iters;
	run_has_out = g->pattern != TB_TRIVIAL;
	t0 = worker_now_ns();
	err = submit_all(g, hs);
	starpu_task_wait_for_all();
	*ns = worker_now_ns() - t0;
	for (size_t s = 0; s < nslots; s++)
		starpu_data_unregister(hs[s]);
	free(hs);
	free(buf);
	return err;
}

static void metg_sp_fini(char *info, size_t len)
{
	starpu_shutdown();
}

const struct metg_ops metg_ops = {
	.init = metg_sp_init,
	.run = metg_sp_run,
	.fini = metg_sp_fini,
};
