// SPDX-License-Identifier: MIT
/*
 * pto_loadgen: keep a libpto runtime busy so monitors have something to
 * show.  Each run submits short chains of small tasks (built-in ops, so it
 * runs on the sim and on /dev/ptoN alike), then pauses briefly so the
 * machine is not saturated.  Stops after -t seconds or on SIGTERM/SIGINT,
 * destroying the runtime (which removes its stats page).
 *
 *   pto_loadgen [-t SECONDS] [-n TASKS] [-s SPIN_NS] [-p PAUSE_MS]
 *		 [-l LEVELS] [-S] [-w]
 *
 * -l LEVELS nests scopes LEVELS deep, putting tasks in as many task rings
 * (one per scope depth); -S prints pto_print_stats() when the load
 * ends and -w then waits for SIGTERM before destroying the runtime, so
 * that a monitor can compare its final page with what libpto printed.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pto/pto.h>

enum { K_CUBE = 1, K_VECTOR = 2 };

struct load {
	unsigned int tasks;
	unsigned int levels;	/* scope depths used, 1: the run's only */
	uint64_t spin_ns;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* Task i of a run: cube and vector in turn, reading in if there is one. */
static int submit(struct pto_runtime *rt, const struct load *ld,
		  unsigned int i, void *in, void **out)
{
	struct pto_param p[3];
	bool cube = i % 2 == 0;
	uint32_t n = 0;
	int64_t id;

	p[n++] = PTO_SCALAR(ld->spin_ns);
	p[n++] = PTO_OUT(out, 256);
	if (in)
		p[n++] = PTO_IN(in, 0, 256);
	id = pto_submit_task(rt, cube ? K_CUBE : K_VECTOR,
			     cube ? PTO_WORKER_CUBE : PTO_WORKER_VECTOR, p, n);
	return id < 0 ? (int)id : 0;
}

/* A chain of four: each task reads its predecessor's output. */
static int chain(struct pto_runtime *rt, const struct load *ld, void *in,
		 void **out, unsigned int *count)
{
	int i, ret = 0;

	for (i = 0; i < 4 && !ret && *count < ld->tasks && !stop; i++) {
		ret = submit(rt, ld, (*count)++, in, out);
		in = *out;
	}
	return ret;
}

/*
 * A scope at depth with a chain reading the chain of the depth above, so
 * that dependencies cross task rings, and the next depth nested in it.
 */
static int nested(struct pto_runtime *rt, const struct load *ld,
		  unsigned int depth, void *in, unsigned int *count)
{
	void *out = NULL;
	int ret, end;

	pto_scope_begin(rt);
	ret = chain(rt, ld, in, &out, count);
	if (!ret && out && depth + 1 < ld->levels)
		ret = nested(rt, ld, depth + 1, out, count);
	end = pto_scope_end(rt);
	return ret ? ret : end;
}

/*
 * One level: chains in the run's own scope.  More: one chain there (what
 * an outer scope holds, like weights), then a loop of nested scopes.
 */
static int orch(struct pto_runtime *rt, void *arg)
{
	const struct load *ld = arg;
	unsigned int count = 0;
	void *out = NULL;
	int ret = 0;

	if (ld->levels > 1)
		ret = chain(rt, ld, NULL, &out, &count);
	while (!ret && count < ld->tasks && !stop) {
		if (ld->levels > 1)
			ret = nested(rt, ld, 1, out, &count);
		else
			ret = chain(rt, ld, NULL, &out, &count);
	}
	return ret;
}

static int register_kernels(struct pto_runtime *rt, uint64_t spin_ns)
{
	uint32_t op = spin_ns ? PTO_OP_SPIN_NS : PTO_OP_NOP;
	int ret;

	ret = pto_kernel_register_builtin(rt, K_CUBE, PTO_WORKER_CUBE, op);
	if (!ret)
		ret = pto_kernel_register_builtin(rt, K_VECTOR,
						  PTO_WORKER_VECTOR, op);
	return ret;
}

/* Keep the runtime, and its final stats page, until told to stop. */
static void wait_for_signal(void)
{
	struct timespec tick = { 0, 10 * 1000000L };

	printf("pto_loadgen: load done, waiting for SIGTERM\n");
	fflush(stdout);
	while (!stop)
		nanosleep(&tick, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct load ld = { .tasks = 64, .levels = 1, .spin_ns = 20000 };
	struct timespec pause = { 0, 5 * 1000000L };
	struct sigaction sa = { .sa_handler = on_signal };
	struct pto_runtime *rt;
	struct pto_config cfg;
	bool print_stats = false, wait_term = false;
	double seconds = 30, end;
	long runs = 0;
	int c, ret;

	while ((c = getopt(argc, argv, "t:n:s:p:l:Sw")) != -1) {
		switch (c) {
		case 't':
			seconds = atof(optarg);
			break;
		case 'n':
			ld.tasks = strtoul(optarg, NULL, 0);
			break;
		case 's':
			ld.spin_ns = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			pause.tv_sec = atol(optarg) / 1000;
			pause.tv_nsec = atol(optarg) % 1000 * 1000000L;
			break;
		case 'l':
			ld.levels = strtoul(optarg, NULL, 0);
			if (ld.levels < 1 || ld.levels > 16)
				ld.levels = 1;
			break;
		case 'S':
			print_stats = true;
			break;
		case 'w':
			wait_term = true;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-t SECONDS] [-n TASKS] [-s SPIN_NS] [-p PAUSE_MS] [-l LEVELS] [-S] [-w]\n",
				argv[0]);
			return 2;
		}
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	pto_config_init(&cfg);
	ret = pto_runtime_create(&cfg, &rt);
	if (ret) {
		fprintf(stderr, "pto_loadgen: runtime: %s\n", strerror(-ret));
		return 1;
	}
	ret = register_kernels(rt, ld.spin_ns);
	if (ret && ld.spin_ns) {
		/* a backend without SPIN_NS: plain NOPs still count */
		ld.spin_ns = 0;
		ret = register_kernels(rt, 0);
	}
	if (ret) {
		fprintf(stderr, "pto_loadgen: kernels: %s\n", strerror(-ret));
		pto_runtime_destroy(rt);
		return 1;
	}
	end = now_s() + seconds;
	while (!stop && now_s() < end) {
		ret = pto_run(rt, orch, &ld);
		if (ret) {
			fprintf(stderr, "pto_loadgen: run: %s\n",
				strerror(-ret));
			break;
		}
		runs++;
		nanosleep(&pause, NULL);
	}
	if (print_stats)
		pto_print_stats(rt, stdout);
	if (wait_term)
		wait_for_signal();
	pto_runtime_destroy(rt);
	printf("pto_loadgen: %ld runs of %u tasks\n", runs, ld.tasks);
	return ret ? 1 : 0;
}
