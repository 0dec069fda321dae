/* SPDX-License-Identifier: MIT */
/*
 * What every ptobench worker (ptobench-pto, ptobench-gomp, ptobench-omp)
 * implements.  worker.c owns main(): it parses the driver's arguments, runs
 * a small warm-up of the same shape, then the timed run, checks that every
 * task ran exactly once and prints one result line the driver parses:
 *
 *   result impl=NAME shape=SHAPE tasks=N ns=T [key=value...]
 */
#ifndef PTOBENCH_WORKER_H
#define PTOBENCH_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "shapes.h"

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
 * Per-thread task counters: a NOP kernel bumps its own thread's counter, so
 * counting costs one uncontended increment, the same in every worker.
 */
struct worker_counter {
	uint64_t n;
	char pad[56];
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

/* Sum of all counters; call only when no task is running. */
uint64_t worker_tasks_counted(void);

uint64_t worker_now_ns(void);

#endif /* PTOBENCH_WORKER_H */
