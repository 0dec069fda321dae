/* SPDX-License-Identifier: MIT */
/*
 * What every ptobench worker (ptobench-pto, ptobench-gomp, ptobench-omp,
 * ptobench-starpu) implements.  worker.c owns main(): it parses the
 * driver's arguments, runs a small warm-up of the same shape, then the
 * timed run, checks that every task ran exactly once and prints one result
 * line the driver parses:
 *
 *   result impl=NAME shape=SHAPE tasks=N ns=T [key=value...]
 *
 * The sparse shape ends it with its submit-to-start latencies, in ns:
 * lat_p50=P lat_p99=Q lat_max=M.
 */
#ifndef PTOBENCH_WORKER_H
#define PTOBENCH_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "shapes.h"
#include "taskbench.h"

struct worker_ops {
	const char *impl;
	/*
	 * Set up for shape runs on `cores` workers (0: the implementation's
	 * default).  May append " key=value" facts to info.
	 */
	int (*init)(uint32_t cores, enum bench_shape shape,
		    char *info, size_t len);
	/* Submit the whole DAG of g and wait for it; *ns is the wall time. */
	int (*run)(const struct bench_geom *g, uint64_t *ns);
	/* Tear down; may append " key=value" facts about the runs to info. */
	void (*fini)(char *info, size_t len);
};

extern const struct worker_ops worker_ops;

/*
 * The METG mode of a worker (ptobench --metg): one Task Bench graph at one
 * task granularity, after a warm-up of the same graph's first steps.
 * metg_worker.c parses the arguments, checks the run and prints
 *
 *   result impl=NAME pattern=P width=W steps=S tasks=N flops=F ns=T
 *	cpu_ns=U check=HEX [key=value...]
 */
struct metg_ops {
	/* Set up for `cores` workers; may append " key=value" facts. */
	int (*init)(uint32_t cores, char *info, size_t len);
	/* Run the graph, each task `iters` kernel iterations; time it. */
	int (*run)(const struct tb_graph *g, uint64_t iters, uint64_t *ns);
	/* Tear down; may append " key=value" facts about the runs. */
	void (*fini)(char *info, size_t len);
};

extern const struct metg_ops metg_ops;
int metg_worker_main(int argc, char **argv);

/*
 * Per-thread task counters: a NOP kernel bumps its own thread's counter, so
 * counting costs one uncontended increment, the same in every worker.  The
 * METG kernels also add their FLOPs and output hashes and results (as
 * bits, mod 2^64, so that the sums do not depend on the order tasks ran).
 */
struct worker_counter {
	uint64_t n;
	uint64_t flops;
	uint64_t sum_h;
	uint64_t sum_v;
	char pad[32];
};

extern __thread struct worker_counter *worker_my_counter;
struct worker_counter *worker_counter_register(void);

static inline void worker_count_task(void)
{
	struct worker_counter *c = worker_my_counter;

	if (__builtin_expect(!c, 0))
		c = worker_counter_register();
	c->n++;
}

/* Account one METG task that wrote out and executed flops FLOPs. */
static inline void worker_count_metg(const struct tb_point *out,
				     uint64_t flops)
{
	struct worker_counter *c = worker_my_counter;
	union { double d; uint64_t u; } v = { .d = out->v };

	if (__builtin_expect(!c, 0))
		c = worker_counter_register();
	c->n++;
	c->flops += flops;
	c->sum_h += out->h;
	c->sum_v += v.u;
}

/* Sum of all counters; call only when no task is running. */
uint64_t worker_tasks_counted(void);
/* All counters summed into *sum; call only when no task is running. */
void worker_counters_sum(struct worker_counter *sum);

uint64_t worker_now_ns(void);

/*
 * The sparse shape's submit-to-start latency.  Its orchestration stores
 * the time just before it submits task i in worker_submit_ns[i], and task
 * i's kernel, first thing, its start time in worker_start_ns[i] through
 * worker_task_started(i), i reaching it as a task argument.  worker.c
 * sizes both arrays to the run's tasks.
 */
extern uint64_t *worker_submit_ns, *worker_start_ns;
extern uint64_t worker_stamps;	/* their length */

static inline void worker_task_started(uint64_t i)
{
	/* a wrong index records nothing, and the check after the run fails */
	if (i < worker_stamps)
		worker_start_ns[i] = worker_now_ns();
}

/* Host work between two submissions: spin on the clock, no runtime call. */
void worker_host_work(uint64_t ns);

#endif /* PTOBENCH_WORKER_H */
