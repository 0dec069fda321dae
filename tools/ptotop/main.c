// SPDX-License-Identifier: MIT
/*
 * ptotop: monitor PTO devices and the libpto runtimes using them.
 * The options, and the loop of the batch modes; the interactive screen
 * runs its own loop (view_tui.c).  Keep usage() in step with ptotop.1.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "view.h"

#define PTOTOP_VERSION	PTO_VERSION_STRING
#define PT_MAX_ITERATIONS	INT_MAX		/* -n */

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ptotop [OPTION]...\n"
		"Monitor PTO devices (/dev/ptoN) and the libpto runtimes using them.\n"
		"\n"
		"  -b, --batch           print text to stdout instead of the interactive UI\n"
		"                        (the default when stdout is not a terminal)\n"
		"  -j, --json            print one JSON document per iteration (implies -b)\n"
		"  -R, --rings           batch text: each task ring's figures and sizing\n"
		"                        advice under its process\n"
		"  -n, --iterations=N    stop after N refreshes, N from 1 (default: run\n"
		"                        until quit)\n"
		"  -d, --delay=SECONDS   refresh interval from 0.01 to 86400 (default 1.0)\n"
		"  -D, --device=NAME     show only device NAME (sim, pto0 or /dev/pto0)\n"
		"  -p, --pid=PID         show only process PID (repeatable, at most %d)\n"
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
		"See ptotop(1) for the JSON fields.\n", PT_MAX_PIDS);
}

/* The long options; bad_arg() names an option by both its names. */
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

static const char *long_name(int c)
{
	const struct option *o;

	for (o = opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/* Say what option c expected instead of arg; returns -EINVAL. */
__attribute__((format(printf, 3, 4)))
static int bad_arg(int c, const char *arg, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ptotop: invalid -%c/--%s '%s': expected ", c,
		long_name(c), arg);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* A decimal number from lo to hi: digits only, no sign nor blanks. */
static int parse_long(const char *arg, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)arg[0]))
		return -EINVAL;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
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
	fprintf(stderr, "ptotop: invalid -s/--sort '%s': expected", arg);
	for (i = 0; i < PT_NSORTS; i++)
		fprintf(stderr, "%s %s", !i ? "" : i < PT_NSORTS - 1 ? "," :
			" or", pt_sort_keys[i].name);
	fputc('\n', stderr);
	return -EINVAL;
}

/* 0 means "until quit" inside, but is refused: it reads like "none". */
static int parse_iterations(const char *arg, long *out)
{
	if (parse_long(arg, 1, PT_MAX_ITERATIONS, out))
		return bad_arg('n', arg, "a count from 1 to %d",
			       PT_MAX_ITERATIONS);
	return 0;
}

/* From 10 ms, so that ptotop is no load itself, to a day. */
static int parse_delay(const char *arg, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(arg, &end);
	if ((!isdigit((unsigned char)arg[0]) && arg[0] != '.') || errno ||
	    *end || !isfinite(*out) || *out < PT_DELAY_MIN ||
	    *out > PT_DELAY_MAX)
		return bad_arg('d', arg, "seconds from 0.01 to 86400");
	return 0;
}

static int add_pid(struct pt_state *st, const char *arg)
{
	long pid;

	if (st->npids == PT_MAX_PIDS) {
		fprintf(stderr, "ptotop: -p: at most %d processes\n",
			PT_MAX_PIDS);
		return -EINVAL;
	}
	if (parse_long(arg, 1, INT_MAX, &pid))
		return bad_arg('p', arg, "a process id from 1 to %d",
			       INT_MAX);
	st->pids[st->npids++] = (int)pid;
	return 0;
}

/*
 * Is name "sim" or "pto" and a decimal number, as the driver and the
 * stats pages name them (no leading zero: pto00 would match nothing)?
 */
static bool device_name_ok(const char *name)
{
	const char *digits = name + 3;

	if (!strcmp(name, "sim"))
		return true;
	if (strncmp(name, "pto", 3) || !*digits ||
	    (digits[0] == '0' && digits[1]))
		return false;
	while (*digits >= '0' && *digits <= '9')
		digits++;
	return !*digits;
}

/* "/dev/pto0" and "pto0" both mean device pto0. */
static int set_device(struct pt_state *st, const char *arg)
{
	const char *name = arg;

	if (!strncmp(arg, "/dev/", 5))
		name = arg + 5;
	if (!device_name_ok(name) ||
	    strlen(name) >= sizeof(st->device_filter))
		return bad_arg('D', arg, "a device name: sim, pto0 or "
			       "/dev/pto0");
	strcpy(st->device_filter, name);
	return 0;
}

/* Apply option c: 0; 1 when it was --help or --version; -EINVAL. */
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
		return set_device(st, arg);
	case 'p':
		return add_pid(st, arg);
	case 's':
		return parse_sort(arg, &st->sort);
	case 'r':
		st->reverse = true;
		return 0;
	case 'h':
		usage(stdout);
		return 1;
	case 'V':
		printf("ptotop (PTO) %s\n", PTOTOP_VERSION);
		return 1;
	}
	return -EINVAL;		/* '?': getopt_long said what was wrong */
}

/* 0: run; 1: --help or --version done; -EINVAL: a bad command line. */
static int parse_args(struct pt_state *st, int argc, char **argv)
{
	int c, ret;

	/* getopt's own messages start "ptotop:", as ours do, not the path */
	argv[0] = (char *)"ptotop";
	while ((c = getopt_long(argc, argv, "bjRn:d:D:p:s:rhV", opts,
				NULL)) != -1) {
		ret = apply_option(st, c, optarg);
		if (ret)
			return ret;
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
		if (ferror(stdout))	/* e.g. a full disk */
			return -(errno ? errno : EIO);
	}
	return 0;
}

static int write_error(int err)
{
	fprintf(stderr, "ptotop: error writing standard output: %s\n",
		strerror(err));
	return 1;
}

/*
 * Flush standard output and report a write error (a full disk, a closed
 * descriptor) that stdio kept to itself: 0, or 1 after saying so.
 */
static int flush_stdout(void)
{
	if (fflush(stdout) == EOF)
		return write_error(errno);
	return ferror(stdout) ? write_error(EIO) : 0;
}

/*
 * A stats directory that is not there (PTO_STATS_DIR mistyped) would
 * only show as "no runtimes found": say why once.  ptotop goes on, as
 * it does when no device is there, so that it can wait for one.
 */
static void warn_stats_dir(const char *dir)
{
	struct stat sb;

	if (stat(dir, &sb))
		fprintf(stderr, "ptotop: stats directory %s: %s (PTO_STATS_DIR); "
			"no libpto runtime can be shown\n", dir,
			strerror(errno));
	else if (!S_ISDIR(sb.st_mode))
		fprintf(stderr, "ptotop: stats directory %s is not a "
			"directory (PTO_STATS_DIR); no libpto runtime can be "
			"shown\n", dir);
	else if (access(dir, R_OK | X_OK))
		fprintf(stderr, "ptotop: stats directory %s: %s "
			"(PTO_STATS_DIR); no libpto runtime can be shown\n",
			dir, strerror(errno));
}

/*
 * The interactive screen needs a terminal: into a file or a pipe, ptotop
 * prints batch text rather than the screen's escape sequences.
 */
static int run(struct pt_state *st)
{
	const char *term = getenv("TERM");

	if (!st->batch && !isatty(STDOUT_FILENO))
		st->batch = true;
	warn_stats_dir(st->roots.stats_dir);
	if (!st->batch && pt_ui_run(st) == -ENOTTY) {
		/* TERM unset or unknown: the text is what it can show */
		fprintf(stderr, "ptotop: the terminal (TERM=%s) is unknown to "
			"curses; printing text as -b does\n",
			term && *term ? term : "(unset)");
		st->batch = true;
	}
	return st->batch ? run_batch(st) : 0;
}

int main(int argc, char **argv)
{
	struct pt_state st;
	int ret;

	pt_state_init(&st);
	ret = parse_args(&st, argc, argv);
	if (ret < 0) {
		fprintf(stderr, "Try 'ptotop --help' for more information.\n");
		pt_state_free(&st);
		return 2;
	}
	ret = ret ? 0 : run(&st);
	pt_state_free(&st);
	if (ret < 0)
		return write_error(-ret);
	return flush_stdout() ? 1 : ret;
}
