// SPDX-License-Identifier: MIT
/*
 * The METG mode of every ptobench worker: run one Task Bench graph (see
 * taskbench.h) at one task granularity and check it.
 *
 * A run is correct when every task ran exactly once (the per-thread task
 * counters), executed exactly its FLOPs (the kernels return what their loop
 * did), and read exactly the inputs the pattern names in their final state:
 * the sum of the tasks' output hashes must equal the sequential reference
 * (tb_reference).  The sum of the results' bits is printed as check= so
 * that the driver can also compare the multiply-adds' results across
 * implementations, and the process's CPU time during the run as cpu_ns=,
 * to show how much CPU the runtime used besides the kernels.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "worker.h"

/* Warm-up: the first steps of the same graph at the same granularity. */
#define METG_WARMUP_STEPS 4

struct metg_args {
	struct tb_graph g;
	uint64_t iters;
	uint32_t cores;
	uint32_t warmup;
	unsigned int timeout;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptobench-%s --metg --pattern P --width W --steps S"
		" --iters N\n"
		"       [--radix R] [--vary N:F] [--cores C] [--warmup STEPS]"
		" [--timeout S]\n"
		"A ptobench worker in METG mode: runs one Task Bench graph"
		" once (after a\nwarm-up) and prints a result line.  Normally"
		" started by ptobench --metg.\n", worker_ops.impl);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int run_checked(const struct tb_graph *g, uint64_t iters,
		       uint64_t *ns, uint64_t *cpu, uint64_t *check)
{
	const char *impl = worker_ops.impl, *pat = tb_pattern_name(g->pattern);
	struct worker_counter a, b;
	uint64_t ref = tb_reference(g), flops;
	int err;

	worker_counters_sum(&a);
	*cpu = cpu_ns();
	err = metg_ops.run(g, iters, ns);
	*cpu = cpu_ns() - *cpu;
	if (err) {
		fprintf(stderr, "ptobench-%s: %s: run failed: %s\n", impl, pat,
			strerror(-err));
		return err;
	}
	worker_counters_sum(&b);
	flops = tb_graph_flops(g, iters);
	if (b.n - a.n != g->tasks || b.flops - a.flops != flops) {
		fprintf(stderr, "ptobench-%s: %s: %" PRIu64 " tasks and %"
			PRIu64 " FLOPs ran, expected %" PRIu64 " and %" PRIu64
			"\n", impl, pat, b.n - a.n, b.flops - a.flops,
			g->tasks, flops);
		return -EPROTO;
	}
	if (b.sum_h - a.sum_h != ref) {
		fprintf(stderr, "ptobench-%s: %s width %u: tasks did not read"
			" exactly their inputs' final values (hash sum %016"
			PRIx64 ", expected %016" PRIx64 "): a dependency was"
			" missed\n", impl, pat, g->width, b.sum_h - a.sum_h,
			ref);
		return -EPROTO;
	}
	*check = b.sum_v - a.sum_v;
	return 0;
}

static int parse(int argc, char **argv, struct metg_args *a)
{
	static const struct option opts[] = {
		{ "metg", no_argument, NULL, 'm' },
		{ "pattern", required_argument, NULL, 'p' },
		{ "width", required_argument, NULL, 'w' },
		{ "steps", required_argument, NULL, 's' },
		{ "radix", required_argument, NULL, 'r' },
		{ "iters", required_argument, NULL, 'i' },
		{ "vary", required_argument, NULL, 'v' },
		{ "cores", required_argument, NULL, 'c' },
		{ "warmup", required_argument, NULL, 'W' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	uint32_t width = 0, steps = 0, radix = TB_DEF_RADIX;
	const char *vary = NULL;
	int pattern = -1, c;

	a->warmup = METG_WARMUP_STEPS;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			break;
		case 'p':
			pattern = tb_pattern_lookup(optarg);
			break;
		case 'w':
			width = strtoul(optarg, NULL, 0);
			break;
		case 's':
			steps = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			radix = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			a->iters = strtoull(optarg, NULL, 0);
			break;
		case 'v':
			vary = optarg;
			break;
		case 'c':
			a->cores = strtoul(optarg, NULL, 0);
			break;
		case 'W':
			a->warmup = strtoul(optarg, NULL, 0);
			break;
		case 't':
			a->timeout = strtoul(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (pattern < 0 || !a->iters || optind < argc ||
	    tb_graph_init(&a->g, pattern, width, steps, radix) ||
	    (vary && tb_parse_vary(vary, &a->g.vary_every,
				   &a->g.vary_factor)))
		return -EINVAL;
	return 0;
}

int metg_worker_main(int argc, char **argv)
{
	struct metg_args a = { 0 };
	struct tb_graph warm;
	uint64_t ns, cpu, check;
	char info[512] = "";
	size_t used;
	int err;

	if (parse(argc, argv, &a)) {
		usage(stderr);
		return 2;
	}
	/* A hung runtime must not hang the driver: SIGALRM kills us. */
	if (a.timeout)
		alarm(a.timeout);
	warm = a.g;
	if (a.warmup && a.warmup < a.g.steps) {
		tb_graph_init(&warm, a.g.pattern, a.g.width, a.warmup,
			      a.g.radix);
		warm.vary_every = a.g.vary_every;
		warm.vary_factor = a.g.vary_factor;
	}
	if (metg_ops.init(a.cores, info, sizeof(info)))
		return 1;
	err = a.warmup ? run_checked(&warm, a.iters, &ns, &cpu, &check) : 0;
	if (!err)
		err = run_checked(&a.g, a.iters, &ns, &cpu, &check);
	used = strlen(info);
	metg_ops.fini(err ? NULL : info + used, sizeof(info) - used);
	if (err)
		return 1;
	printf("result impl=%s pattern=%s width=%u steps=%u tasks=%" PRIu64
	       " flops=%" PRIu64 " ns=%" PRIu64 " cpu_ns=%" PRIu64
	       " check=%016" PRIx64 "%s\n", worker_ops.impl,
	       tb_pattern_name(a.g.pattern), a.g.width, a.g.steps, a.g.tasks,
	       tb_graph_flops(&a.g, a.iters), ns, cpu, check, info);
	return fflush(stdout) ? 1 : 0;
}
