// SPDX-License-Identifier: MIT
/*
 * ptotop: monitor PTO devices and the libpto runtimes using them.
 * The options, and the loop of the batch modes; the interactive screen
 * runs its own loop (view_tui.c).  Keep usage() in step with ptotop.1.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "view.h"

#define PTOTOP_VERSION	PTO_VERSION_STRING

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ptotop [OPTION]...\n"
		"Monitor PTO devices (/dev/ptoN) and the libpto runtimes using them.\n"
		"\n"
		"  -b, --batch           print text to stdout instead of the interactive UI\n"
		"  -j, --json            print one JSON document per iteration (implies -b)\n"
		"  -R, --rings           batch text: each task ring's figures and sizing\n"
		"                        advice under its process\n"
		"  -n, --iterations=N    stop after N refreshes (default: run until quit)\n"
		"  -d, --delay=SECONDS   refresh interval, fractions allowed (default 1.0)\n"
		"  -D, --device=NAME     show only device NAME (sim, pto0 or /dev/pto0)\n"
		"  -p, --pid=PID         show only process PID (repeatable)\n"
		"  -s, --sort=KEY        sort by KEY: pid, tasks, inflight, stalls,\n"
		"                        failures, device, command, user (default tasks)\n"
		"  -r, --reverse         reverse the sort order\n"
		"  -h, --help            print this help and exit\n"
		"  -V, --version         print the version and exit\n"
		"\n"
		"Interactive keys: q quit, h help, space pause, P T I S F D C U sort,\n"
		"r reverse, f cycle device filter, + and - change the interval,\n"
		"up and down select a process, Enter shows its task rings.\n"
		"\n"
		"Environment: PTO_STATS_DIR (stats pages, default /dev/shm).\n"
		"See ptotop(1) for the JSON fields.\n");
}

static int parse_sort(const char *arg, enum pt_sort *out)
{
	int i;

	for (i = 0; i < PT_NSORTS; i++) {
		if (!strcmp(arg, pt_sort_keys[i].name)) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_iterations(const char *arg, long *out)
{
	char *end;

	*out = strtol(arg, &end, 10);
	return *end || *out < 0 ? -EINVAL : 0;
}

/* From 10 ms, so that ptotop is no load itself, to a day. */
static int parse_delay(const char *arg, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	if (*end || !isfinite(*out) || *out < 0.01 || *out > 86400)
		return -EINVAL;
	return 0;
}

static int add_pid(struct pt_state *st, const char *arg)
{
	char *end;

	if (st->npids == PT_MAX_PIDS)
		return -EINVAL;
	st->pids[st->npids] = strtol(arg, &end, 10);
	if (*end || st->pids[st->npids] <= 0)
		return -EINVAL;
	st->npids++;
	return 0;
}

/* "/dev/pto0" and "pto0" both mean device pto0. */
static void set_device(struct pt_state *st, const char *arg)
{
	const char *slash = strrchr(arg, '/');

	snprintf(st->device_filter, sizeof(st->device_filter), "%s",
		 slash ? slash + 1 : arg);
}

/* Apply option c; -EINVAL when its argument is not valid. */
static int apply_option(struct pt_state *st, int c, const char *arg)
{
	switch (c) {
	case 'b':
		st->batch = true;
		return 0;
	case 'j':
		st->json = true;
		st->batch = true;
		return 0;
	case 'R':
		st->task_rings = true;
		return 0;
	case 'n':
		return parse_iterations(arg, &st->iterations);
	case 'd':
		return parse_delay(arg, &st->delay_s);
	case 'D':
		set_device(st, arg);
		return 0;
	case 'p':
		return add_pid(st, arg);
	case 's':
		return parse_sort(arg, &st->sort);
	case 'r':
		st->reverse = true;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	case 'V':
		printf("ptotop (PTO) %s\n", PTOTOP_VERSION);
		exit(0);
	}
	return 0;
}

static int parse_args(struct pt_state *st, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "rings", no_argument, NULL, 'R' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "delay", required_argument, NULL, 'd' },
		{ "device", required_argument, NULL, 'D' },
		{ "pid", required_argument, NULL, 'p' },
		{ "sort", required_argument, NULL, 's' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "bjRn:d:D:p:s:rhV", opts,
				NULL)) != -1) {
		if (c == '?') {		/* getopt_long said what was wrong */
			usage(stderr);
			return -EINVAL;
		}
		if (apply_option(st, c, optarg)) {
			fprintf(stderr,
				"ptotop: invalid argument for -%c: '%s'\n",
				c, optarg);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptotop: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void sleep_s(double s)
{
	struct timespec ts = {
		.tv_sec = (time_t)s,
		.tv_nsec = (long)((s - (time_t)s) * 1e9),
	};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int run_batch(struct pt_state *st)
{
	long i;

	for (i = 0; !st->iterations || i < st->iterations; i++) {
		if (i)
			sleep_s(st->delay_s);
		pt_take_sample(st);
		if (st->json)
			pt_print_json(st, stdout);
		else
			pt_print_text(st, stdout);
		if (ferror(stdout))
			return 1;	/* e.g. the reader went away */
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pt_state st;
	int ret;

	pt_state_init(&st);
	if (parse_args(&st, argc, argv))
		return 2;
	if (st.batch)
		ret = run_batch(&st);
	else
		ret = pt_ui_run(&st);
	pt_state_free(&st);
	return ret;
}
