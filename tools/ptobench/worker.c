// SPDX-License-Identifier: MIT
/*
 * main() of every ptobench worker.  The driver starts one worker process per
 * measurement so that peak RSS (wait4) belongs to one implementation and one
 * shape only.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

#define MAX_COUNTERS 1024
/* Warm-up size: primes thread pools and allocators, not measured. */
#define WARMUP_TASKS 2000

static struct worker_counter counters[MAX_COUNTERS]
	__attribute__((aligned(64)));
static unsigned int ncounters;
static pthread_mutex_t counters_lock = PTHREAD_MUTEX_INITIALIZER;
__thread struct worker_counter *worker_my_counter;

struct worker_counter *worker_counter_register(void)
{
	struct worker_counter *c;

	pthread_mutex_lock(&counters_lock);
	if (ncounters == MAX_COUNTERS) {
		pthread_mutex_unlock(&counters_lock);
		fprintf(stderr, "%s: more than %d threads\n",
			worker_ops.impl, MAX_COUNTERS);
		abort();
	}
	c = &counters[ncounters++];
	pthread_mutex_unlock(&counters_lock);
	worker_my_counter = c;
	return c;
}

uint64_t worker_tasks_counted(void)
{
	uint64_t sum = 0;

	pthread_mutex_lock(&counters_lock);
	for (unsigned int i = 0; i < ncounters; i++)
		sum += counters[i].n;
	pthread_mutex_unlock(&counters_lock);
	return sum;
}

void worker_counters_sum(struct worker_counter *sum)
{
	memset(sum, 0, sizeof(*sum));
	pthread_mutex_lock(&counters_lock);
	for (unsigned int i = 0; i < ncounters; i++) {
		sum->n += counters[i].n;
		sum->flops += counters[i].flops;
		sum->sum_h += counters[i].sum_h;
		sum->sum_v += counters[i].sum_v;
	}
	pthread_mutex_unlock(&counters_lock);
}

uint64_t worker_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void worker_host_work(uint64_t ns)
{
	uint64_t end = worker_now_ns() + ns;

	while (worker_now_ns() < end)
		;
}

uint64_t *worker_submit_ns, *worker_start_ns;
uint64_t worker_stamps;

static int stamps_alloc(uint64_t n)
{
	worker_submit_ns = calloc(n, sizeof(*worker_submit_ns));
	worker_start_ns = calloc(n, sizeof(*worker_start_ns));
	if (!worker_submit_ns || !worker_start_ns) {
		fprintf(stderr, "ptobench-%s: no memory for %" PRIu64
			" start times\n", worker_ops.impl, n);
		return -ENOMEM;
	}
	worker_stamps = n;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The p-th percentile of n sorted values, by nearest rank. */
static uint64_t percentile(const uint64_t *v, uint64_t n, unsigned int p)
{
	uint64_t rank = (n * p + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/*
 * The submit-to-start latencies of the run just made, as " lat_p50=NS
 * lat_p99=NS lat_max=NS" into buf.  -EPROTO when a task has no start time
 * or one before its submission: its kernel got another task's index.
 */
static int sparse_latency(const struct bench_geom *g, char *buf, size_t len)
{
	/* the latencies replace the start times, which are not needed after */
	uint64_t *lat = worker_start_ns, n = g->tasks;

	for (uint64_t i = 0; i < n; i++) {
		if (worker_start_ns[i] < worker_submit_ns[i] ||
		    !worker_start_ns[i]) {
			fprintf(stderr, "ptobench-%s: sparse: task %" PRIu64
				" started at %" PRIu64 " ns, submitted at %"
				PRIu64 "\n", worker_ops.impl, i,
				worker_start_ns[i], worker_submit_ns[i]);
			return -EPROTO;
		}
		lat[i] = worker_start_ns[i] - worker_submit_ns[i];
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	snprintf(buf, len, " lat_p50=%" PRIu64 " lat_p99=%" PRIu64
		 " lat_max=%" PRIu64, percentile(lat, n, 50),
		 percentile(lat, n, 99), lat[n - 1]);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptobench-%s --shape NAME [--tasks N] [--gap-us G]"
		" [--cores C] [--timeout S]\n"
		"A ptobench worker: runs one DAG shape once (after a warm-up)\n"
		"and prints a result line.  Normally started by ptobench(1).\n",
		worker_ops.impl);
}

/* Run g and check that exactly its tasks ran. */
static int run_checked(const struct bench_geom *g, uint64_t *ns)
{
	uint64_t before = worker_tasks_counted(), ran;
	int err;

	/* a start time left from the warm-up must not pass the check */
	if (worker_stamps)
		memset(worker_start_ns, 0,
		       g->tasks * sizeof(*worker_start_ns));
	err = worker_ops.run(g, ns);
	if (err) {
		fprintf(stderr, "ptobench-%s: %s: run failed: %s\n",
			worker_ops.impl, shape_name(g->shape), strerror(-err));
		return err;
	}
	ran = worker_tasks_counted() - before;
	if (ran != g->tasks) {
		fprintf(stderr,
			"ptobench-%s: %s: %" PRIu64 " tasks ran, expected %"
			PRIu64 "\n", worker_ops.impl, shape_name(g->shape),
			ran, g->tasks);
		return -EPROTO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shape", required_argument, NULL, 's' },
		{ "tasks", required_argument, NULL, 'n' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "cores", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct bench_geom warm, g;
	uint64_t tasks = 0, gap_us = 20, ns;
	unsigned int timeout = 0;
	uint32_t cores = 0;
	char info[512] = "", lat[96] = "";
	bool tasks_given = false;
	size_t used;
	int shape = -1, c;

	for (c = 1; c < argc; c++)
		if (!strcmp(argv[c], "--metg"))
			return metg_worker_main(argc, argv);
	while ((c = getopt_long(argc, argv, "s:n:g:c:t:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			shape = shape_lookup(optarg);
			if (shape < 0) {
				fprintf(stderr,
					"ptobench-%s: unknown shape '%s'\n",
					worker_ops.impl, optarg);
				return 2;
			}
			break;
		case 'n':
			tasks = strtoull(optarg, NULL, 0);
			tasks_given = true;
			break;
		case 'g':
			gap_us = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			cores = strtoul(optarg, NULL, 0);
			break;
		case 't':
			timeout = strtoul(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (shape < 0 || (tasks_given && !tasks)) {
		usage(stderr);
		return 2;
	}
	if (!tasks_given)
		tasks = shape_default_tasks(shape);
	/* A hung runtime must not hang the driver: SIGALRM kills us. */
	if (timeout)
		alarm(timeout);

	shape_geom(shape, tasks, &g);
	shape_geom(shape, tasks < WARMUP_TASKS ? tasks : WARMUP_TASKS, &warm);
	g.gap_ns = gap_us * 1000;
	warm.gap_ns = g.gap_ns;
	if (shape == SHAPE_SPARSE && stamps_alloc(g.tasks))
		return 1;
	if (worker_ops.init(cores, shape, info, sizeof(info)))
		return 1;
	if (run_checked(&warm, &ns) || run_checked(&g, &ns) ||
	    (shape == SHAPE_SPARSE && sparse_latency(&g, lat, sizeof(lat)))) {
		worker_ops.fini(NULL, 0);
		return 1;
	}
	used = strlen(info);
	worker_ops.fini(info + used, sizeof(info) - used);
	printf("result impl=%s shape=%s tasks=%" PRIu64 " ns=%" PRIu64 "%s%s\n",
	       worker_ops.impl, shape_name(shape), g.tasks, ns, info, lat);
	return fflush(stdout) ? 1 : 0;
}
