// SPDX-License-Identifier: MIT
/*
 * ptobench: per-task overhead of libpto against OpenMP depend tasks and
 * StarPU; with --metg, Task Bench's METG on a compute-bound kernel
 * (metg.c).
 *
 * The driver runs one worker process per measurement (ptobench-pto,
 * ptobench-gomp, ptobench-omp, ptobench-starpu), interleaving
 * implementations within each repetition so that a change in machine load
 * hits all of them alike.  The worker times its own run (submission start
 * to all tasks complete); the driver takes peak RSS from wait4() and
 * reports medians, min and max.  The sparse shape, one task at a time with
 * host work between, reports how soon each task started instead: the
 * percentiles of its submit-to-start latency.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "ptobench.h"
#include "shapes.h"

const char *const impl_names[NUM_IMPLS] = {
	"pto", "gomp", "omp", "starpu"
};

static const char *const impl_desc[NUM_IMPLS] = {
	"libpto, sim backend", "OpenMP, gcc libgomp", "OpenMP, clang libomp",
	"StarPU"
};

/* The sparse shape's submit-to-start latencies, in ns, of one run. */
enum { LAT_P50, LAT_P99, LAT_MAX, NUM_LAT };

static const char *const lat_keys[NUM_LAT] = { "p50", "p99", "max" };

struct sample {
	double ns_per_task;
	long rss_kb;
	double lat[NUM_LAT];	/* sparse only */
};

struct cell {
	struct sample s[MAX_REPS];
	int n;			/* successful runs */
	int failed;		/* failed runs */
	uint64_t tasks;
	char info[256];		/* worker facts of the last run */
};

struct opts {
	bool shape[NUM_SHAPES];
	bool impl[NUM_IMPLS];
	uint64_t tasks;
	unsigned int gap_us;	/* sparse: host work after each submission */
	int reps;
	unsigned int cores;
	int load;
	unsigned int timeout;
	const char *json;
	uint64_t flat;		/* flatness mode: small task count, 0 = off */
	bool verbose;
	bool flat_bare;		/* --flat without =N */
	bool tasks_given;	/* else each shape's default count */
	bool shapes_given;
};

static char worker_dir[PATH_MAX];
/* 1-minute load average before and after the runs, for the report. */
static double load_before = -1, load_after = -1;
static pid_t loaders[MAX_LOAD];
/* written with __atomic stores: the signal handler reads them */
static int nloaders;

/* ---- workers ------------------------------------------------------------ */

bool worker_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/ptobench-%s", worker_dir, name);
	return access(buf, X_OK) == 0;
}

/*
 * Workers sit next to ptobench (build tree, or installed in one bindir);
 * PTOBENCH_WORKER_DIR overrides.
 */
int find_worker_dir(void)
{
	const char *env = getenv("PTOBENCH_WORKER_DIR");
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(worker_dir, sizeof(worker_dir), "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", worker_dir, sizeof(worker_dir) - 1);
	if (n < 0)
		return -errno;
	worker_dir[n] = '\0';
	slash = strrchr(worker_dir, '/');
	if (slash)
		*slash = '\0';
	return 0;
}

/* sparse: " lat_p50=P lat_p99=Q lat_max=M" of a result line, -1 if not. */
static int parse_latency(const char *line, double *lat)
{
	char key[16];

	for (int k = 0; k < NUM_LAT; k++) {
		const char *v;

		snprintf(key, sizeof(key), " lat_%s=", lat_keys[k]);
		v = strstr(line, key);
		if (!v)
			return -1;
		lat[k] = strtoull(v + strlen(key), NULL, 10);
	}
	return 0;
}

/* Parse "result ... tasks=N ns=T rest" into the cell. */
static int parse_result(const char *out, enum bench_shape sh, struct cell *c,
			struct sample *s)
{
	const char *line = strstr(out, "result ");
	const char *t, *ns, *rest;
	uint64_t tasks, nsv;

	if (!line)
		return -1;
	t = strstr(line, " tasks=");
	ns = strstr(line, " ns=");
	if (!t || !ns)
		return -1;
	tasks = strtoull(t + 7, NULL, 10);
	nsv = strtoull(ns + 4, (char **)&rest, 10);
	if (!tasks || !nsv ||
	    (sh == SHAPE_SPARSE && parse_latency(line, s->lat)))
		return -1;
	c->tasks = tasks;
	s->ns_per_task = (double)nsv / (double)tasks;
	while (*rest == ' ')
		rest++;
	snprintf(c->info, sizeof(c->info), "%.*s", (int)strcspn(rest, "\n"),
		 rest);
	return 0;
}

/* Read the child's stdout until EOF into buf (NUL-terminated). */
static void slurp(int fd, char *buf, size_t len)
{
	char drain[256];
	size_t used = 0;
	ssize_t n;

	while (used + 1 < len) {
		n = read(fd, buf + used, len - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += n;
	}
	buf[used] = '\0';
	/* Drain what did not fit so the child never blocks on us. */
	while ((n = read(fd, drain, sizeof(drain))) > 0 ||
	       (n < 0 && errno == EINTR))
		;
}

/* ---- child processes ---------------------------------------------------- */

/*
 * The worker running now, for the signal handler (__atomic accesses).  A
 * worker, or a competing process, also dies when the driver does, whatever
 * kills it (SIGKILL included): PR_SET_PDEATHSIG.
 */
static pid_t running_worker;
static pid_t driver_pid;
/* written by the signal handler: __atomic accesses */
static int stop_signal;

int bench_stopped(void)
{
	return __atomic_load_n(&stop_signal, __ATOMIC_SEQ_CST);
}

int bench_stop_status(void)
{
	int sig = bench_stopped();

	fprintf(stderr, "ptobench: stopped by %s: the results above are the "
		"runs completed before it\n", strsignal(sig));
	return 128 + sig;
}

/*
 * In a child after fork(): die with the driver, its parent before fork(),
 * which may be gone already.
 */
static void die_with_driver(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
}

static void kill_and_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * SIGINT, SIGTERM: the first ends the run in progress (the driver then
 * reports what it has, see bench_stopped()), a second ends everything
 * now, taking the worker and the competing load along.
 */
static void on_signal(int sig)
{
	pid_t worker = __atomic_load_n(&running_worker, __ATOMIC_SEQ_CST);
	int n = __atomic_load_n(&nloaders, __ATOMIC_SEQ_CST);

	if (getpid() == driver_pid && !bench_stopped()) {
		__atomic_store_n(&stop_signal, sig, __ATOMIC_SEQ_CST);
		/* reaped by wait_worker(), which keeps the pid from reuse */
		if (worker > 0)
			kill(worker, SIGKILL);
		return;
	}
	/* a child, a competing process or one not yet exec()ed, just goes */
	if (getpid() == driver_pid) {
		if (worker > 0)
			kill_and_reap(worker);
		for (int i = 0; i < n; i++)
			kill_and_reap(loaders[i]);
	}
	_exit(128 + sig);
}

/* Catch SIGINT and SIGTERM, unless whoever started us ignores them. */
static void catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	struct sigaction sa = { .sa_handler = on_signal }, old;

	driver_pid = getpid();
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!sigaction(sigs[i], NULL, &old) &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

static pid_t spawn(const char *path, char *const argv[], int *out_fd)
{
	pid_t pid, parent = getpid();
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		die_with_driver(parent);
		dup2(p[1], STDOUT_FILENO);
		execv(path, argv);
		fprintf(stderr, "ptobench: exec %s: %s\n", path,
			strerror(errno));
		_exit(127);
	}
	__atomic_store_n(&running_worker, pid, __ATOMIC_SEQ_CST);
	close(p[1]);
	*out_fd = p[0];
	return pid;
}

/*
 * Wait for the worker and reap it, taking its resource usage.  It stays
 * running_worker until it has exited: the signal handler must never kill
 * a pid that may have been reused.
 */
static int wait_worker(pid_t pid, struct rusage *ru)
{
	int status = -1;	/* "signal 127" should wait4() fail */
	siginfo_t si;

	while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0 &&
	       errno == EINTR)
		;
	__atomic_store_n(&running_worker, 0, __ATOMIC_SEQ_CST);
	while (wait4(pid, &status, 0, ru) < 0 && errno == EINTR)
		;
	return status;
}

int run_worker(const char *path, char *const argv[], char *out, size_t len,
	       struct rusage *ru)
{
	int fd, status;
	pid_t pid = spawn(path, argv, &fd);

	if (pid < 0) {
		fprintf(stderr, "ptobench: cannot start %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	slurp(fd, out, len);
	close(fd);
	status = wait_worker(pid, ru);
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (bench_stopped())	/* killed for it: no failure of its own */
		return -1;
	/* the workers' own alarm() for --timeout */
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		fprintf(stderr, "ptobench: %s ran past --timeout and was "
			"stopped\n", path);
		return -1;
	}
	fprintf(stderr, "ptobench: %s failed (%s %d)\n", path,
		WIFSIGNALED(status) ? "signal" : "exit",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return -1;
}

/* -v: one run's figures */
static void print_run(enum impl im, enum bench_shape sh, const struct cell *c,
		      const struct sample *s)
{
	fprintf(stderr, "  %-14s %-6s ", shape_name(sh), impl_names[im]);
	if (sh == SHAPE_SPARSE)
		fprintf(stderr, "p50 %.1f p99 %.1f max %.1f us",
			s->lat[LAT_P50] / 1000, s->lat[LAT_P99] / 1000,
			s->lat[LAT_MAX] / 1000);
	else
		fprintf(stderr, "%9.1f ns/task", s->ns_per_task);
	fprintf(stderr, " %8ld KiB  %s\n", s->rss_kb, c->info);
}

/*
 * One measurement: run the worker, record ns/task (sparse: its latencies)
 * and peak RSS.
 */
static int run_one(const struct opts *o, enum impl im, enum bench_shape sh,
		   uint64_t tasks, struct cell *c)
{
	char path[PATH_MAX + 32], ntasks[32], ncores[16], tmo[16], out[4096];
	char gap[16];
	char *argv[] = { path, "--shape", (char *)shape_name(sh),
			 "--tasks", ntasks, "--cores", ncores,
			 "--timeout", tmo, "--gap-us", gap, NULL };
	struct sample s = { 0 };
	struct rusage ru;

	worker_path(impl_names[im], path, sizeof(path));
	snprintf(ntasks, sizeof(ntasks), "%" PRIu64, tasks);
	snprintf(ncores, sizeof(ncores), "%u", o->cores);
	snprintf(tmo, sizeof(tmo), "%u", o->timeout);
	snprintf(gap, sizeof(gap), "%u", o->gap_us);
	if (run_worker(path, argv, out, sizeof(out), &ru) ||
	    parse_result(out, sh, c, &s)) {
		if (bench_stopped())
			return -1;
		fprintf(stderr, "ptobench: %s %s failed\n", impl_names[im],
			shape_name(sh));
		c->failed++;
		return -1;
	}
	s.rss_kb = ru.ru_maxrss;
	if (c->n < MAX_REPS)
		c->s[c->n++] = s;
	if (o->verbose)
		print_run(im, sh, c, &s);
	return 0;
}

/* ---- competing load ----------------------------------------------------- */

void start_load(int n)
{
	pid_t parent = getpid();

	for (int i = 0; i < n && nloaders < MAX_LOAD; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("ptobench: fork");
			return;
		}
		if (!pid) {
			uint64_t x = 1;

			die_with_driver(parent);
			for (;;) {
				x = x * 6364136223846793005ull + 1;
				/* the loop must burn CPU, not be optimised out */
				__asm__ volatile("" : "+r"(x));
			}
		}
		loaders[nloaders] = pid;
		__atomic_store_n(&nloaders, nloaders + 1, __ATOMIC_SEQ_CST);
	}
}

void stop_load(void)
{
	sigset_t block, old;

	/* not with the signal handler, which would reap them twice */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	for (int i = 0; i < nloaders; i++)
		kill_and_reap(loaders[i]);
	__atomic_store_n(&nloaders, 0, __ATOMIC_SEQ_CST);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* ---- statistics --------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct summary summarize(const double *v, int n)
{
	double s[MAX_REPS];
	struct summary r = { 0, 0, 0 };

	if (!n)
		return r;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.max = s[n - 1];
	r.med = n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	return r;
}

static struct summary cell_ns(const struct cell *c)
{
	double v[MAX_REPS];

	for (int i = 0; i < c->n; i++)
		v[i] = c->s[i].ns_per_task;
	return summarize(v, c->n);
}

static struct summary cell_rss(const struct cell *c)
{
	double v[MAX_REPS];

	for (int i = 0; i < c->n; i++)
		v[i] = c->s[i].rss_kb;
	return summarize(v, c->n);
}

/* sparse: latency k (LAT_P50...) over the reps, in ns */
static struct summary cell_lat(const struct cell *c, int k)
{
	double v[MAX_REPS];

	for (int i = 0; i < c->n; i++)
		v[i] = c->s[i].lat[k];
	return summarize(v, c->n);
}

/* ---- host description --------------------------------------------------- */

double loadavg1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			colon += 2;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

void json_host(FILE *f, double before, double after)
{
	char model[128];
	struct utsname u;

	cpu_model(model, sizeof(model));
	uname(&u);
	fprintf(f, "  \"host\": {\"cpus\": %ld, \"model\": ",
		sysconf(_SC_NPROCESSORS_ONLN));
	pto_json_str(f, model);
	fprintf(f, ", \"kernel\": ");
	pto_json_str(f, u.release);
	fprintf(f, ", \"loadavg_before\": %.2f, \"loadavg_after\": %.2f},\n",
		before, after);
}

static void json_config(FILE *f, const struct opts *o)
{
	json_host(f, load_before, load_after);
	fprintf(f, "  \"config\": {\"tasks\": %" PRIu64 ", \"reps\": %d, "
		"\"cores\": %u, \"load\": %d, \"flat\": %" PRIu64 ", "
		"\"gap_us\": %u},\n", o->tasks, o->reps, o->cores, o->load,
		o->flat, o->gap_us);
}

static void json_summary(FILE *f, const char *key, struct summary s, int n)
{
	if (!n) {
		fprintf(f, "\"%s\": null", key);
		return;
	}
	fprintf(f, "\"%s\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f}",
		key, s.med, s.min, s.max);
}

/* ---- the benchmark proper ----------------------------------------------- */

static struct cell cells[NUM_SHAPES][NUM_IMPLS];

/*
 * --tasks, else the shape's own default (sparse and runs: fewer, each
 * costs a gap or a run)
 */
static uint64_t bench_tasks(const struct opts *o, enum bench_shape sh)
{
	return o->tasks_given ? o->tasks : shape_default_tasks(sh);
}

static void bench(const struct opts *o)
{
	for (int r = 0; r < o->reps; r++) {
		if (o->verbose)
			fprintf(stderr, "rep %d/%d\n", r + 1, o->reps);
		for (int sh = 0; sh < NUM_SHAPES; sh++) {
			if (!o->shape[sh])
				continue;
			/* Rotate the order so no impl always runs first. */
			for (int k = 0; k < NUM_IMPLS; k++) {
				int im = (k + r) % NUM_IMPLS;

				if (bench_stopped())
					return;
				if (o->impl[im])
					run_one(o, im, sh, bench_tasks(o, sh),
						&cells[sh][im]);
			}
		}
	}
}

/*
 * pto median over libgomp median, 0 when either is missing or for sparse,
 * whose ns/task is the gap.
 */
static double ratio(int sh)
{
	const struct cell *p = &cells[sh][IMPL_PTO], *g = &cells[sh][IMPL_GOMP];

	if (!p->n || !g->n || sh == SHAPE_SPARSE)
		return 0;
	return cell_ns(p).med / cell_ns(g).med;
}

/* Shapes of the ns/task table, all but sparse: true when one is chosen. */
static bool timed_shapes(const struct opts *o)
{
	for (int sh = 0; sh < NUM_SHAPES; sh++)
		if (o->shape[sh] && sh != SHAPE_SPARSE)
			return true;
	return false;
}

static void print_header(const struct opts *o)
{
	uint64_t sparse = bench_tasks(o, SHAPE_SPARSE);
	bool timed = timed_shapes(o);
	char model[128];
	int sh;

	cpu_model(model, sizeof(model));
	printf("ptobench: %" PRIu64 " tasks per run", timed ? o->tasks : sparse);
	/* the shapes with counts of their own */
	for (sh = 0; timed && sh < NUM_SHAPES; sh++)
		if (o->shape[sh] && bench_tasks(o, sh) != o->tasks)
			printf(" (%s: %" PRIu64 ")", shape_name(sh),
			       bench_tasks(o, sh));
	printf(", %d reps interleaved, %u cores, %d competing process%s\n",
	       o->reps, o->cores, o->load, o->load == 1 ? "" : "es");
	printf("host: %ld CPUs, %s; load average %.2f before, %.2f after\n",
	       sysconf(_SC_NPROCESSORS_ONLN), model, load_before, load_after);
}

static void print_ns_table(const struct opts *o)
{
	printf("\n%-14s %-6s %9s %21s %10s %8s\n", "shape", "impl", "ns/task",
	       "(min - max)", "RSS MiB", "pto/gomp");
	for (int sh = 0; sh < NUM_SHAPES; sh++) {
		if (!o->shape[sh] || sh == SHAPE_SPARSE)
			continue;
		for (int im = 0; im < NUM_IMPLS; im++) {
			const struct cell *c = &cells[sh][im];
			struct summary ns = cell_ns(c), rss = cell_rss(c);

			if (!o->impl[im])
				continue;
			printf("%-14s %-6s ", shape_name(sh), impl_names[im]);
			if (!c->n) {
				printf("%9s\n", "FAILED");
				continue;
			}
			printf("%9.1f (%8.1f - %8.1f) %10.1f", ns.med, ns.min,
			       ns.max, rss.med / 1024);
			/* %.3g: a ratio below 0.005 must not print as 0.00 */
			if (im == IMPL_PTO && ratio(sh) > 0)
				printf(" %8.3g", ratio(sh));
			if (c->failed)
				printf("  (%d failed)", c->failed);
			printf("\n");
		}
	}
	printf("\nns/task: median wall time per task, submission start to "
	       "all complete;\nRSS: median peak RSS of the worker process; "
	       "pto/gomp < 1: pto faster.\n");
}

/*
 * sparse: its wall time is the tasks times the gap, so the table gives
 * the submit-to-start latencies instead, in us, the p99's range beside.
 */
static void print_lat_table(const struct opts *o)
{
	printf("\n%-14s %-6s %9s %9s %21s %9s %8s\n", "shape", "impl",
	       "p50 us", "p99 us", "(min - max)", "max us", "RSS MiB");
	for (int im = 0; im < NUM_IMPLS; im++) {
		const struct cell *c = &cells[SHAPE_SPARSE][im];
		struct summary p99 = cell_lat(c, LAT_P99);

		if (!o->impl[im])
			continue;
		printf("%-14s %-6s ", shape_name(SHAPE_SPARSE), impl_names[im]);
		if (!c->n) {
			printf("%9s\n", "FAILED");
			continue;
		}
		printf("%9.1f %9.1f (%8.1f - %8.1f) %9.1f %8.1f",
		       cell_lat(c, LAT_P50).med / 1000, p99.med / 1000,
		       p99.min / 1000, p99.max / 1000,
		       cell_lat(c, LAT_MAX).med / 1000, cell_rss(c).med / 1024);
		if (c->failed)
			printf("  (%d failed)", c->failed);
		printf("\n");
	}
	printf("\nsparse: one task, then %u us of host work, %" PRIu64
	       " times.  p50, p99, max: of\nthe run's submit-to-start "
	       "latencies (from just before the submit call to the\n"
	       "kernel's start), medians over the reps; (min - max): of "
	       "the p99.\n", o->gap_us, bench_tasks(o, SHAPE_SPARSE));
}

static void print_table(const struct opts *o)
{
	print_header(o);
	if (timed_shapes(o))
		print_ns_table(o);
	if (o->shape[SHAPE_SPARSE])
		print_lat_table(o);
}

/* sparse: "latency_ns" {"p50", "p99", "max"} and every run's three */
static void json_latency(FILE *f, const struct cell *c)
{
	fprintf(f, ",\n      \"latency_ns\": {");
	for (int k = 0; k < NUM_LAT; k++) {
		fprintf(f, "%s", k ? ", " : "");
		json_summary(f, lat_keys[k], cell_lat(c, k), c->n);
	}
	fprintf(f, "},\n      \"samples_latency_ns\": [");
	for (int i = 0; i < c->n; i++)
		fprintf(f, "%s[%.0f, %.0f, %.0f]", i ? ", " : "",
			c->s[i].lat[LAT_P50], c->s[i].lat[LAT_P99],
			c->s[i].lat[LAT_MAX]);
	fprintf(f, "]");
}

static void json_cell(FILE *f, int sh, int im, bool *first)
{
	const struct cell *c = &cells[sh][im];

	fprintf(f, "%s    {\"shape\": \"%s\", \"impl\": \"%s\", "
		"\"tasks\": %" PRIu64 ", \"runs\": %d, \"failed\": %d,\n      ",
		*first ? "" : ",\n", shape_name(sh), impl_names[im], c->tasks,
		c->n, c->failed);
	json_summary(f, "ns_per_task", cell_ns(c), c->n);
	fprintf(f, ",\n      ");
	json_summary(f, "peak_rss_kib", cell_rss(c), c->n);
	fprintf(f, ",\n      \"samples_ns_per_task\": [");
	for (int i = 0; i < c->n; i++)
		fprintf(f, "%s%.3f", i ? ", " : "", c->s[i].ns_per_task);
	fprintf(f, "]");
	if (sh == SHAPE_SPARSE)
		json_latency(f, c);
	fprintf(f, ",\n      \"info\": ");
	pto_json_str(f, c->info);
	fprintf(f, "}");
	*first = false;
}

static void json_bench(FILE *f, const struct opts *o)
{
	bool first = true;

	fprintf(f, "  \"results\": [\n");
	for (int sh = 0; sh < NUM_SHAPES; sh++)
		for (int im = 0; im < NUM_IMPLS; im++)
			if (o->shape[sh] && o->impl[im])
				json_cell(f, sh, im, &first);
	fprintf(f, "\n  ],\n  \"ratio_pto_over_gomp\": {");
	first = true;
	for (int sh = 0; sh < NUM_SHAPES; sh++) {
		if (!o->shape[sh] || ratio(sh) <= 0)
			continue;
		fprintf(f, "%s\"%s\": %.4f", first ? "" : ", ", shape_name(sh),
			ratio(sh));
		first = false;
	}
	fprintf(f, "}");
}

/* ---- memory flatness ---------------------------------------------------- */

static struct cell flat_cells[NUM_SHAPES][NUM_IMPLS][2];

static void flat(const struct opts *o)
{
	const uint64_t n[2] = { o->flat, o->flat * 10 };

	for (int r = 0; r < o->reps; r++) {
		for (int sh = 0; sh < NUM_SHAPES; sh++) {
			if (!o->shape[sh])
				continue;
			for (int k = 0; k < NUM_IMPLS * 2; k++) {
				int im = (k / 2 + r) % NUM_IMPLS;
				int big = (k + r) & 1;

				if (bench_stopped())
					return;
				if (o->impl[im])
					run_one(o, im, sh, n[big],
						&flat_cells[sh][im][big]);
			}
		}
	}
}

/* Peak RSS at 10 N tasks over that at N that still counts as flat. */
#define FLAT_RATIO 1.15

static double flat_ratio(int sh, int im)
{
	const struct cell *c = flat_cells[sh][im];

	if (!c[0].n || !c[1].n)
		return 0;
	return cell_rss(&c[1]).med / cell_rss(&c[0]).med;
}

static void print_flat(const struct opts *o)
{
	printf("ptobench memory flatness: peak RSS at %" PRIu64 " and %" PRIu64
	       " tasks, %d reps, %u cores\n", o->flat, o->flat * 10,
	       o->reps, o->cores);
	printf("load average %.2f before, %.2f after\n\n", load_before,
	       load_after);
	printf("%-14s %-6s %12s %12s %8s %10s %10s\n", "shape", "impl",
	       "small MiB", "large MiB", "ratio", "ns small", "ns large");
	for (int sh = 0; sh < NUM_SHAPES; sh++) {
		for (int im = 0; im < NUM_IMPLS; im++) {
			const struct cell *c = flat_cells[sh][im];

			if (!o->shape[sh] || !o->impl[im])
				continue;
			printf("%-14s %-6s ", shape_name(sh), impl_names[im]);
			if (!c[0].n || !c[1].n) {
				printf("%12s\n", "FAILED");
				continue;
			}
			printf("%12.1f %12.1f %8.3f %10.1f %10.1f%s\n",
			       cell_rss(&c[0]).med / 1024,
			       cell_rss(&c[1]).med / 1024, flat_ratio(sh, im),
			       cell_ns(&c[0]).med, cell_ns(&c[1]).med,
			       flat_ratio(sh, im) > FLAT_RATIO ? "  grows" : "");
		}
	}
	printf("\nratio: median peak RSS large / small (flat: <= %.2f; "
	       "'grows' marks one above)\n", FLAT_RATIO);
	if (o->flat < 100000)
		printf("(under %d tasks the fixed costs weigh more, so a flat "
		       "runtime may show a larger ratio)\n", 100000);
}

static void json_flat(FILE *f, const struct opts *o)
{
	bool first = true;

	fprintf(f, "  \"flat\": [");
	for (int sh = 0; sh < NUM_SHAPES; sh++) {
		for (int im = 0; im < NUM_IMPLS; im++) {
			const struct cell *c = flat_cells[sh][im];

			if (!o->shape[sh] || !o->impl[im])
				continue;
			fprintf(f, "%s\n    {\"shape\": \"%s\", "
				"\"impl\": \"%s\", \"small_tasks\": %" PRIu64
				", \"large_tasks\": %" PRIu64 ",\n      ",
				first ? "" : ",", shape_name(sh),
				impl_names[im], c[0].tasks, c[1].tasks);
			json_summary(f, "small_rss_kib", cell_rss(&c[0]),
				     c[0].n);
			fprintf(f, ",\n      ");
			json_summary(f, "large_rss_kib", cell_rss(&c[1]),
				     c[1].n);
			fprintf(f, ",\n      \"ratio\": ");
			if (flat_ratio(sh, im) > 0)
				fprintf(f, "%.4f}", flat_ratio(sh, im));
			else
				fprintf(f, "null}");
			first = false;
		}
	}
	fprintf(f, "\n  ]");
}

static int write_json(const struct opts *o)
{
	FILE *f = output_open(o->json);

	if (!f)
		return -1;
	fprintf(f, "{\n  \"ptobench\": 1,\n");
	json_config(f, o);
	if (o->flat)
		json_flat(f, o);
	else
		json_bench(f, o);
	fprintf(f, "\n}\n");
	return output_close(f, o->json);
}

/* ---- options ------------------------------------------------------------ */

void ptobench_usage(FILE *f)
{
	fprintf(f,
"usage: ptobench [options]\n"
"Per-task overhead of libpto against OpenMP depend tasks on fixed DAG\n"
"shapes with no-op kernels, interleaved, medians of repetitions.\n\n"
"  --shapes LIST   comma-separated shapes (default: all):\n"
"                  chain,bgemm,bgemm-weight,bgemm-scratch,stencil,paged-attn,\n"
"                  wait,sparse,runs\n"
"  --impls LIST    comma-separated implementations (default: all built):\n"
"                  pto (libpto sim), gomp (gcc libgomp), omp (clang libomp),\n"
"                  starpu (StarPU)\n"
"  --tasks N       tasks per run, rounded to the shape (default 200000;\n"
"                  sparse 2000, runs 20000)\n"
"  --gap-us G      sparse: microseconds of host work after each submission\n"
"                  (default 20)\n"
"  --reps N        repetitions of every cell (default 5)\n"
"  --cores N       pto sim cores = OpenMP threads, at most 256\n"
"                  (default: the CPUs the process may use)\n"
"  --load N        run N CPU-bound competing processes meanwhile\n"
"  --json FILE     also write the results as JSON (- for stdout, the\n"
"                  table then going to stderr)\n"
"  --flat[=N]      memory flatness: peak RSS at N and 10*N tasks\n"
"                  (default N = 100000) instead of the timing table\n"
"  --timeout S     kill a worker run after S seconds (default 600,\n"
"                  0: never)\n"
"  -v, --verbose   print every run on stderr\n"
"  -V, --version   print the version and exit\n"
"  -h, --help      this text\n\n"
"usage: ptobench --metg [options]\n"
"Task Bench's METG: efficiency (achieved / peak FLOP/s) of a compute-bound\n"
"kernel over task granularity, and the smallest granularity still at 50%%\n"
"of peak, per dependence pattern and width.  --impls, --reps (default 3),\n"
"--cores, --load, --json, --timeout and -v as above, and:\n"
"  --patterns LIST trivial,stencil_1d,nearest,spread,fft,tree,all_to_all,\n"
"                  random_nearest (default: all)\n"
"  --widths LIST   points per timestep; 'cores' is --cores\n"
"                  (default: 2,16,cores)\n"
"  --steps N       timesteps per graph (default 1000)\n"
"  --radix N       dependencies of nearest, spread, random_nearest\n"
"                  (default 3, at most 9)\n"
"  --max-grain US  largest task granularity, us of kernel (default 4000)\n"
"  --min-grain US  smallest task granularity, us of kernel (default 1)\n"
"  --plot DIR      write an SVG plot per pattern and width into DIR\n"
"                  (created if missing)\n"
"  --peak-ms MS    duration of each peak measurement (default 200)\n"
"  --vary N:F      one task in N runs F times the iterations (variable\n"
"                  kernels; default: all the same)\n\n"
"usage: ptobench --views [--reps N] [--tasks N] [--json FILE] [-v]\n"
"Tensor views: a row-major BGEMM whose tiles are 1-D bounding\n"
"byte ranges (false dependencies) or 2-D views, tile-major as the\n"
"reference: dependencies inferred and wall time with GEMM and sleeping\n"
"kernels on 2 and 8 simulated cube cores, and ns per task of NOP tasks\n"
"(the cost of a 2-D lookup against a 1-D one).  --reps (default 5),\n"
"--json and -v as above, and:\n"
"  --tasks N       NOP tasks per run (default 200000, at least 64)\n\n"
"Exit status: 0 when every run succeeded, 1 when one failed, 2 on bad\n"
"usage, 128 + the signal on SIGINT or SIGTERM (after printing the runs\n"
"completed so far).\n");
}

/* The names a list option takes, for its error message. */
static void list_names(const char *const *names, int n)
{
	fprintf(stderr, "  one of:");
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", names[i]);
	fprintf(stderr, "\n");
}

int list_has_empty(const char *opt, const char *arg)
{
	size_t len = strlen(arg);

	if (arg[0] != ',' && !(len && arg[len - 1] == ',') &&
	    !strstr(arg, ",,"))
		return 0;
	fprintf(stderr, "ptobench: %s: an empty item in the list '%s'\n", opt,
		arg);
	return -1;
}

int parse_names(const char *opt, const char *arg, bool *set,
		const char *const *names, int n)
{
	char *dup, *save = NULL, *tok;
	int err = 0, found = 0;

	if (list_has_empty(opt, arg))
		return -1;
	dup = strdup(arg);
	if (!dup)
		return -1;
	memset(set, 0, n * sizeof(*set));
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int i = n - 1;

		while (i >= 0 && strcmp(tok, names[i]))
			i--;
		if (i < 0) {
			fprintf(stderr, "ptobench: %s: unknown name '%s'\n",
				opt, tok);
			list_names(names, n);
			err = -1;
			continue;
		}
		found += !set[i];
		set[i] = true;
	}
	free(dup);
	if (!err && !found)
		fprintf(stderr, "ptobench: %s: the list '%s' is empty\n", opt,
			arg);
	return err || !found ? -1 : 0;
}

static int parse_shapes(const char *arg, bool *shape)
{
	const char *names[NUM_SHAPES];

	for (int sh = 0; sh < NUM_SHAPES; sh++)
		names[sh] = shape_name(sh);
	return parse_names("--shapes", arg, shape, names, NUM_SHAPES);
}

int parse_impls(const char *arg, bool *impl)
{
	return parse_names("--impls", arg, impl, impl_names, NUM_IMPLS);
}

/*
 * Drop implementations whose worker was not built (clang or libomp-dev
 * missing), unless the user asked for them by name.
 */
int check_impls(bool *impl, bool impls_given)
{
	char path[PATH_MAX + 32];
	int left = 0;

	for (int im = 0; im < NUM_IMPLS; im++) {
		if (!impl[im])
			continue;
		if (worker_path(impl_names[im], path, sizeof(path))) {
			left++;
			continue;
		}
		fprintf(stderr, "ptobench: %s (%s): no worker %s%s\n",
			impl_names[im], impl_desc[im], path,
			impls_given ? "" : ", skipped");
		if (impls_given)
			return -1;
		impl[im] = false;
	}
	if (!left)
		fprintf(stderr, "ptobench: no implementation to run\n");
	return left ? 0 : -1;
}

/*
 * The CPUs this process may run on (taskset, cgroup cpusets), as libgomp
 * counts them for its default thread count: under "taskset -c 0" on a
 * two-CPU machine, one.
 */
unsigned int default_cores(void)
{
	cpu_set_t set;
	long n;

	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > MAX_CORES ? MAX_CORES : n;
}

const struct option nop_long_opts[] = {
	{ "shapes", required_argument, NULL, 's' },
	{ "impls", required_argument, NULL, 'i' },
	{ "tasks", required_argument, NULL, 'n' },
	{ "gap-us", required_argument, NULL, 'g' },
	{ "reps", required_argument, NULL, 'r' },
	{ "cores", required_argument, NULL, 'c' },
	{ "load", required_argument, NULL, 'l' },
	{ "json", required_argument, NULL, 'j' },
	{ "flat", optional_argument, NULL, 'f' },
	{ "timeout", required_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void nop_defaults(struct opts *o)
{
	for (int sh = 0; sh < NUM_SHAPES; sh++)
		o->shape[sh] = true;
	for (int im = 0; im < NUM_IMPLS; im++)
		o->impl[im] = true;
	o->tasks = DEFAULT_TASKS;
	o->gap_us = 20;
	o->reps = 5;
	o->cores = default_cores();
	o->timeout = 600;
}

/* One option of the NOP benchmark (c from getopt_long, its optarg). */
static int nop_option(int c, struct opts *o, bool *impls_given)
{
	switch (c) {
	case 's':
		o->shapes_given = true;
		return parse_shapes(optarg, o->shape);
	case 'i':
		*impls_given = true;
		return parse_impls(optarg, o->impl);
	case 'n':
		o->tasks_given = true;
		return opt_u64("--tasks", optarg, 1, MAX_TASKS, &o->tasks);
	case 'g':
		return opt_uint("--gap-us", optarg, 0, MAX_GAP_US, &o->gap_us);
	case 'r':
		return opt_int("--reps", optarg, 1, MAX_REPS, &o->reps);
	case 'c':
		return opt_uint("--cores", optarg, 1, MAX_CORES, &o->cores);
	case 'l':
		return opt_int("--load", optarg, 0, MAX_LOAD, &o->load);
	case 'j':
		o->json = optarg;
		return 0;
	case 'f':
		o->flat = 100000;
		o->flat_bare = !optarg;
		return optarg ? opt_u64("--flat", optarg, 1, MAX_TASKS / 10,
					&o->flat) : 0;
	case 't':
		return opt_uint("--timeout", optarg, 0, MAX_TIMEOUT,
				&o->timeout);
	case 'v':
		o->verbose = true;
		return 0;
	case 'V':
		printf("ptobench (PTO) %s\n", PTO_VERSION_STRING);
		exit(0);
	default:	/* 'h' */
		ptobench_usage(stdout);
		exit(0);
	}
}

/*
 * --flat runs every shape but sparse, whose worker keeps two times per
 * task: its RSS grows with the task count by design, and 10^6 tasks of 20
 * us would take 20 s a run.
 */
static int flat_shapes(struct opts *o)
{
	if (!o->shape[SHAPE_SPARSE])
		return 0;
	o->shape[SHAPE_SPARSE] = false;
	if (!o->shapes_given)
		return 0;
	fprintf(stderr, "ptobench: --flat does not measure sparse (its "
		"worker keeps two times per task)\n");
	return -1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	bool impls_given = false;
	int c;

	nop_defaults(o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vVh", nop_long_opts,
				NULL)) != -1) {
		if (c == '?' || c == ':') {
			opt_refused(c, argv, nop_long_opts, NULL);
			return -1;
		}
		if (nop_option(c, o, &impls_given))
			return -1;
	}
	/* getopt takes an optional value only as --flat=N */
	if (o->flat_bare && optind < argc && argv[optind][0] &&
	    strspn(argv[optind], "0123456789") == strlen(argv[optind])) {
		fprintf(stderr, "ptobench: unexpected argument '%s': write "
			"--flat=%s (the value of --flat is optional, so it "
			"follows an '=')\n", argv[optind], argv[optind]);
		return -1;
	}
	if (opt_no_operands(argc, argv) || (o->flat && flat_shapes(o)) ||
	    (o->json && check_output_file("--json", o->json)))
		return -1;
	return check_impls(o->impl, impls_given);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	int failed = 0;

	check_stdout_at_exit();
	catch_signals();
	if (find_worker_dir()) {
		fprintf(stderr, "ptobench: cannot locate the workers\n");
		return 1;
	}
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--metg"))
			return metg_main(argc, argv);
		else if (!strcmp(argv[i], "--views"))
			return views_main(argc, argv);
	if (parse_opts(argc, argv, &o))
		return 2;
	load_before = loadavg1();
	start_load(o.load);
	if (o.flat)
		flat(&o);
	else
		bench(&o);
	load_after = loadavg1();
	stop_load();
	if (o.flat)
		print_flat(&o);
	else
		print_table(&o);
	if (o.json && write_json(&o))
		return 1;
	if (bench_stopped())
		return bench_stop_status();
	for (int sh = 0; sh < NUM_SHAPES; sh++)
		for (int im = 0; im < NUM_IMPLS; im++)
			failed += cells[sh][im].failed +
				  flat_cells[sh][im][0].failed +
				  flat_cells[sh][im][1].failed;
	return failed ? 1 : 0;
}
