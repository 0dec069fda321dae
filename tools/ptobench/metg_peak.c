// SPDX-License-Identifier: MIT
/*
 * ptobench-peak: the machine's peak for the METG benchmark.  Runs the METG
 * kernel (the same object the workers link) back to back on one thread per
 * core, with no runtime at all, at one granularity, for about --ms
 * milliseconds, and prints
 *
 *   result impl=peak iters=N threads=C tasks=T flops=F ns=W cpu_ns=U
 *
 * where W is the wall time from the first thread's start until the last
 * thread is done and U the CPU time the threads used: on a machine shared
 * with other work U / T is still the kernel's time per task, W is not.
 * Each thread chains its tasks through one output (a task reads the
 * previous one's), as a Task Bench point does along its steps.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "taskbench.h"

#define MAX_THREADS 1024

struct peak_thread {
	pthread_t tid;
	struct tb_point p;
	uint64_t flops;
	uint64_t start, end;
	uint64_t cpu;		/* this thread's CPU time for its chain */
};

static pthread_barrier_t start;
static uint64_t iters, per_thread;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t chain(struct tb_point *p, uint64_t n)
{
	const struct tb_point *in = p;
	uint64_t flops = 0;

	for (uint64_t k = 0; k < n; k++)
		flops += tb_kernel(p, &in, 1, k, iters);
	return flops;
}

static void *thread_main(void *arg)
{
	struct peak_thread *th = arg;

	pthread_barrier_wait(&start);
	/*
	 * Each thread times itself: on a loaded machine the main thread
	 * may be preempted between the barrier and a clock read of its own.
	 */
	th->start = now_ns();
	th->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	th->flops = chain(&th->p, per_thread);
	th->cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - th->cpu;
	th->end = now_ns();
	return NULL;
}

/* Tasks per thread for about target_ns, timed on this thread. */
static uint64_t calibrate(uint64_t target_ns)
{
	struct tb_point p = { 0 };
	uint64_t n = 1, t;

	for (;;) {
		t = now_ns();
		chain(&p, n);
		t = now_ns() - t;
		if (t >= 2000000 || n >= (1ull << 40))
			break;
		n *= 2;
	}
	n = (uint64_t)((double)target_ns * n / (t ? t : 1));
	return n < 4 ? 4 : n;
}

static int run(unsigned int nthreads, uint64_t *ns, uint64_t *cpu,
	       uint64_t *flops)
{
	static struct peak_thread th[MAX_THREADS];
	uint64_t first = UINT64_MAX, last = 0;
	unsigned int k;
	int err;

	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (k = 0; k < nthreads; k++) {
		err = pthread_create(&th[k].tid, NULL, thread_main, &th[k]);
		if (err) {
			fprintf(stderr, "ptobench-peak: pthread_create: %s\n",
				strerror(err));
			exit(1);	/* the barrier would wait forever */
		}
	}
	pthread_barrier_wait(&start);
	*flops = 0;
	*cpu = 0;
	for (k = 0; k < nthreads; k++) {
		pthread_join(th[k].tid, NULL);
		*flops += th[k].flops;
		*cpu += th[k].cpu;
		first = th[k].start < first ? th[k].start : first;
		last = th[k].end > last ? th[k].end : last;
	}
	*ns = last - first;
	pthread_barrier_destroy(&start);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptobench-peak --iters N [--cores C] [--ms T]"
		" [--timeout S]\n"
		"Runs the METG kernel with N iterations per task on C threads"
		" (default:\nonline CPUs) for about T ms (default 250) and"
		" prints a result line.\n"
		"Normally started by ptobench --metg.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iters", required_argument, NULL, 'i' },
		{ "cores", required_argument, NULL, 'c' },
		{ "ms", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned int nthreads = sysconf(_SC_NPROCESSORS_ONLN), timeout = 0;
	uint64_t ms = 250, ns, cpu, flops;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			iters = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			nthreads = strtoul(optarg, NULL, 0);
			break;
		case 'm':
			ms = strtoull(optarg, NULL, 0);
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
	if (!iters || !nthreads || nthreads > MAX_THREADS || !ms ||
	    optind < argc) {
		usage(stderr);
		return 2;
	}
	if (timeout)
		alarm(timeout);
	per_thread = calibrate(ms * 1000000);
	run(nthreads, &ns, &cpu, &flops);
	if (flops != per_thread * nthreads * iters * TB_FLOPS_PER_ITER) {
		fprintf(stderr, "ptobench-peak: %" PRIu64 " FLOPs, expected %"
			PRIu64 "\n", flops,
			per_thread * nthreads * iters * TB_FLOPS_PER_ITER);
		return 1;
	}
	printf("result impl=peak iters=%" PRIu64 " threads=%u tasks=%" PRIu64
	       " flops=%" PRIu64 " ns=%" PRIu64 " cpu_ns=%" PRIu64 "\n", iters,
	       nthreads, per_thread * nthreads, flops, ns, cpu);
	return fflush(stdout) ? 1 : 0;
}
