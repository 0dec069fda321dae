// SPDX-License-Identifier: MIT
/*
 * ptotop: monitor PTO devices and the libpto runtimes using them.
 * Keep usage() in step with ptotop.1.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pto/pto_statspage.h>
#include "ptotop.h"

#define PTOTOP_VERSION	PTO_VERSION_STRING

static void usage(FILE *out)
{
	fprintf(out,
"Usage: ptotop [OPTION]...\n"
"Monitor PTO devices (/dev/ptoN) and the libpto runtimes using them.\n"
"\n"
"  -b, --batch           print text to stdout instead of the interactive UI\n"
"  -j, --json            print one JSON document per iteration (implies -b)\n"
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
"r reverse, f cycle device filter, + and - change the interval.\n"
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

static int parse_args(struct pt_state *st, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "batch", no_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
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
	const char *dev;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "bjn:d:D:p:s:rhV", opts,
				NULL)) != -1) {
		switch (c) {
		case 'b':
			st->batch = true;
			break;
		case 'j':
			st->json = st->batch = true;
			break;
		case 'n':
			st->iterations = strtol(optarg, &end, 10);
			if (*end || st->iterations < 0)
				goto bad;
			break;
		case 'd':
			st->delay_s = strtod(optarg, &end);
			if (*end || !isfinite(st->delay_s) ||
			    st->delay_s < 0.01 || st->delay_s > 86400)
				goto bad;
			break;
		case 'D':
			dev = strrchr(optarg, '/');
			dev = dev ? dev + 1 : optarg;
			snprintf(st->device_filter, sizeof(st->device_filter),
				 "%s", dev);
			break;
		case 'p':
			if (st->npids == PT_MAX_PIDS)
				goto bad;
			st->pids[st->npids++] = strtol(optarg, &end, 10);
			if (*end || st->pids[st->npids - 1] <= 0)
				goto bad;
			break;
		case 's':
			if (parse_sort(optarg, &st->sort))
				goto bad;
			break;
		case 'r':
			st->reverse = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("ptotop (PTO) %s\n", PTOTOP_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ptotop: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
bad:
	fprintf(stderr, "ptotop: invalid argument for -%c: '%s'\n", c, optarg);
	return -EINVAL;
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
		pt_collect(st);
		if (st->json)
			pt_print_json(st, stdout);
		else
			pt_print_text(st, stdout);
		if (ferror(stdout))
			return 1;	/* e.g. the reader went away */
	}
	return 0;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

int main(int argc, char **argv)
{
	struct pt_state st = {
		.delay_s = 1.0,
		.sort = PT_SORT_TASKS,
	};
	int ret;

	if (parse_args(&st, argc, argv))
		return 2;
	st.stats_dir = pto_statspage_dir();
	/* test hooks: a fake /proc and /sys tree */
	st.proc_root = env_or("PTOTOP_PROC_ROOT", "/proc");
	st.sysfs_root = env_or("PTOTOP_SYSFS_ROOT", "/sys");

	if (st.batch)
		ret = run_batch(&st);
	else
		ret = pt_ui_run(&st);
	pt_sample_free(&st.prev);
	pt_sample_free(&st.cur);
	free(st.hist);
	return ret;
}
