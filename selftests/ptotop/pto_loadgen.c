// SPDX-License-Identifier: MIT
/*
 * pto_loadgen: keep a libpto runtime busy so monitors have something to
 * show.  Each run submits short chains of small tasks (built-in ops, so it
 * runs on the sim and on /dev/ptoN alike), then pauses briefly so the
 * machine is not saturated.  Stops after -t seconds or on SIGTERM/SIGINT,
 * destroying the runtime (which removes its stats page).
 *
 *   pto_loadgen [-t SECONDS] [-n TASKS] [-s SPIN_NS] [-p PAUSE_MS]
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
	uint64_t spin_ns;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* Chains of four: each task reads its predecessor's runtime output. */
static int orch(struct pto_runtime *rt, void *arg)
{
	const struct load *ld = arg;
	void *prev = NULL, *out;
	unsigned int i;
	int64_t id;

	for (i = 0; i < ld->tasks && !stop; i++) {
		struct pto_param p[3];
		uint32_t n = 0;
		bool cube = i % 2 == 0;

		if (i % 4 == 0)
			prev = NULL;
		p[n++] = PTO_SCALAR(ld->spin_ns);
		p[n++] = PTO_OUT(&out, 256);
		if (prev)
			p[n++] = PTO_IN(prev, 0, 256);
		id = pto_submit_task(rt, cube ? K_CUBE : K_VECTOR,
				     cube ? PTO_WORKER_CUBE : PTO_WORKER_VECTOR,
				     p, n);
		if (id < 0)
			return (int)id;
		prev = out;
	}
	return 0;
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct load ld = { .tasks = 64, .spin_ns = 20000 };
	struct timespec pause = { 0, 5 * 1000000L };
	struct sigaction sa = { .sa_handler = on_signal };
	struct pto_runtime *rt;
	struct pto_config cfg;
	double seconds = 30, end;
	long runs = 0;
	int c, ret;

	while ((c = getopt(argc, argv, "t:n:s:p:")) != -1) {
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
		default:
			fprintf(stderr, "usage: %s [-t SECONDS] [-n TASKS] "
				"[-s SPIN_NS] [-p PAUSE_MS]\n", argv[0]);
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
	pto_runtime_destroy(rt);
	printf("pto_loadgen: %ld runs of %u tasks\n", runs, ld.tasks);
	return ret ? 1 : 0;
}
