// SPDX-License-Identifier: MIT
/*
 * ptorun: load an orchestration shared object and run it with libpto.
 *
 *   ptorun [options] ORCH.so [args...]
 *
 * ORCH.so exports pto_orchestration_entry() and optionally
 * pto_orchestration_init() and pto_orchestration_fini(); see ptorun(1) and
 * Documentation/ptorun.rst.  ORCH.so is not linked against libpto: its pto_*
 * references resolve to the libpto.so this program is linked with.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pto/pto.h>

#include "number.h"		/* numbers read as libpto reads them */
#include "ringsize.h"		/* the sizes and counts libpto accepts */

typedef int (*orch_init_fn)(struct pto_runtime *rt, int argc, char **argv,
			    void **arg);
typedef int (*orch_fini_fn)(struct pto_runtime *rt, void *arg,
			    int run_status);

/* exit codes, as ptorun(1) documents them */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,	/* load, run or verification failed */
	EXIT_USAGE = 2,		/* bad command line */
};

struct ptorun {
	struct pto_config cfg;
	unsigned long repeat;
	int stats;
	int quiet;
	char ring_opts[8];	/* ring size options given: "wHDT" at most */
	const char *so_path;
	int orch_argc;
	char **orch_argv;

	void *dl;
	pto_orch_fn entry;
	orch_init_fn init;
	orch_fini_fn fini;
};

static const char *const worker_names[PTO_NUM_WORKER_TYPES] = {
	[PTO_WORKER_CUBE] = "cube",
	[PTO_WORKER_VECTOR] = "vector",
	[PTO_WORKER_AICPU] = "aicpu",
	[PTO_WORKER_ACCEL] = "accel",
};

static void usage(FILE *out)
{
	fprintf(out,
"Usage: ptorun [OPTION]... ORCH.so [ARG]...\n"
"Load the orchestration shared object ORCH.so and run it with libpto.\n"
"ARGs after ORCH.so go to its pto_orchestration_init().\n"
"\n"
"  -d, --device DEV          sim (default) or a device node such as /dev/pto0\n"
"  -w, --task-window N       task ring slots, a power of two from 4 to 2^24\n"
"  -H, --heap-size SIZE      heap ring bytes from 4K to 1T (suffix K, M, G, T)\n"
"  -A, --arena-size SIZE     pto_malloc arena bytes up to 1T (suffix K, M, G, T)\n"
"  -D, --dep-pool N          dependency list entries, 16 to 2^30 - 2\n"
"  -T, --tensormap-pool N    TensorMap entries, 16 to 2^30\n"
"  -c, --cores LIST          sim cores per type, 0 to 256, e.g.\n"
"                            cube=N,vector=N,aicpu=N,accel=N\n"
"  -s, --stall-timeout MS    report a deadlock after MS >= 1 ms without progress\n"
"  -t, --trace FILE          write a Perfetto/Chrome JSON trace to FILE\n"
"  -S, --stats               print flow-control statistics after the runs\n"
"  -r, --repeat N            run the orchestration N times (default 1)\n"
"  -q, --quiet               print nothing but errors (the sample's own\n"
"                            output is its business)\n"
"  -h, --help                show this help and exit\n"
"  -V, --version             show the version and exit\n"
"\n"
"-w, -H, -D and -T also take one value per task ring from ring 0, as in\n"
"-w 16,64 (later rings take the last), the form of the PTO_* variables.\n"
"Options not given keep the defaults of pto_config_init(), including its\n"
"PTO_* environment overrides.  Numbers are decimal, or hexadecimal after 0x.\n"
"Exit status: 0 on success, 1 when loading, running or verifying failed or\n"
"standard output could not be written, 2 on a bad command line.\n");
}

/* The long options; bad_value() names an option by both its names. */
static const struct option longopts[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "task-window", required_argument, NULL, 'w' },
	{ "heap-size", required_argument, NULL, 'H' },
	{ "arena-size", required_argument, NULL, 'A' },
	{ "dep-pool", required_argument, NULL, 'D' },
	{ "tensormap-pool", required_argument, NULL, 'T' },
	{ "cores", required_argument, NULL, 'c' },
	{ "stall-timeout", required_argument, NULL, 's' },
	{ "trace", required_argument, NULL, 't' },
	{ "stats", no_argument, NULL, 'S' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static const char *long_name(int c)
{
	const struct option *o;

	for (o = longopts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/* Say what option c expected instead of val; returns -EINVAL. */
__attribute__((format(printf, 3, 4)))
static int bad_value(int c, const char *val, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ptorun: invalid -%c/--%s '%s': expected ", c,
		long_name(c), val);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* pto_parse_number() from lo to hi (util/number.h) */
static int parse_range(const char *s, bool suffix, uint64_t lo, uint64_t hi,
		       uint64_t *out)
{
	uint64_t v;

	if (pto_parse_number(s, suffix, &v) || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "4096" as "4K": the largest of T, G, M and K that divides v, which parses */
static const char *size_str(uint64_t v, char buf[32])
{
	static const char units[] = "KMGT";
	int i = 0;

	while (i < 4 && v && !(v & 1023)) {
		v >>= 10;
		i++;
	}
	snprintf(buf, 32, "%" PRIu64 "%.*s", v, i ? 1 : 0,
		 i ? &units[i - 1] : "");
	return buf;
}

/* A count of option c from lo to hi, of what; into *out. */
static int set_u32(int c, const char *arg, uint32_t lo, uint32_t hi,
		   const char *what, uint32_t *out)
{
	uint64_t v;

	if (parse_range(arg, false, lo, hi, &v))
		return bad_value(c, arg, "%s from %" PRIu32 " to %" PRIu32,
				 what, lo, hi);
	*out = (uint32_t)v;
	return 0;
}

/* Bytes of option c from lo to hi, with a K, M, G or T suffix; into *out. */
static int set_bytes(int c, const char *arg, uint64_t lo, uint64_t hi,
		     uint64_t *out)
{
	char los[32], his[32];

	if (parse_range(arg, true, lo, hi, out))
		return bad_value(c, arg, "bytes from %s to %s (suffix K, M, G or T)",
				 size_str(lo, los), size_str(hi, his));
	return 0;
}

/*
 * One "TYPE=N" of --cores, the len characters at s, into cores[TYPE];
 * returns TYPE, or -EINVAL.
 */
static int parse_core_item(const char *s, size_t len, uint32_t *cores)
{
	const char *eq = memchr(s, '=', len);
	char num[24];
	uint64_t v;
	int t;

	if (!eq || (size_t)(s + len - eq) > sizeof(num))
		return -EINVAL;
	memcpy(num, eq + 1, s + len - eq - 1);
	num[s + len - eq - 1] = '\0';
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (strlen(worker_names[t]) == (size_t)(eq - s) &&
		    !strncmp(s, worker_names[t], eq - s))
			break;
	if (t == PTO_NUM_WORKER_TYPES ||
	    parse_range(num, false, 0, PTO_CORES_PER_TYPE_MAX, &v))
		return -EINVAL;
	cores[t] = (uint32_t)v;
	return t;
}

/*
 * "cube=4,vector=8": set the named types (0 allowed), keep the others;
 * no empty item, no type twice, and at least one core in all.
 */
static int parse_cores(const char *s, uint32_t cores[PTO_NUM_WORKER_TYPES])
{
	uint32_t tmp[PTO_NUM_WORKER_TYPES], total = 0, seen = 0;
	size_t len;
	int t;

	memcpy(tmp, cores, sizeof(tmp));
	for (;; s += len + 1) {
		len = strcspn(s, ",");
		t = parse_core_item(s, len, tmp);
		if (t < 0 || seen & 1u << t)
			return -EINVAL;
		seen |= 1u << t;
		if (!s[len])
			break;
	}
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		total += tmp[t];
	if (!total)
		return -EINVAL;
	memcpy(cores, tmp, sizeof(tmp));
	return 0;
}

static int set_cores(struct ptorun *pr, const char *arg)
{
	if (parse_cores(arg, pr->cfg.cores))
		return bad_value('c', arg, "TYPE=N[,TYPE=N]... with TYPE cube, "
				 "vector, aicpu or accel, each at most once, N "
				 "from 0 to %d, and at least one core",
				 PTO_CORES_PER_TYPE_MAX);
	return 0;
}

static int set_repeat(struct ptorun *pr, const char *arg)
{
	uint64_t v;

	if (parse_range(arg, false, 1, ULONG_MAX, &v))
		return bad_value('r', arg, "a count from 1 to %lu",
				 ULONG_MAX);
	pr->repeat = (unsigned long)v;
	return 0;
}

/* A non-empty string of option c, which expects what. */
static int set_string(int c, const char *arg, const char *what,
		      const char **out)
{
	if (!*arg)
		return bad_value(c, arg, "%s", what);
	*out = arg;
	return 0;
}

/* ---- ring sizes: -w, -H, -D, -T ------------------------------------------ */

/* One value of ring size option c, checked against its range. */
static int ring_item(int c, const char *s, uint64_t *v)
{
	switch (c) {
	case 'w':
		return parse_range(s, false, PTO_TASK_WINDOW_MIN,
				   PTO_TASK_WINDOW_MAX, v) || (*v & (*v - 1)) ?
		       -EINVAL : 0;
	case 'H':
		return parse_range(s, true, PTO_HEAP_SIZE_MIN, PTO_HEAP_SIZE_MAX,
				   v);
	case 'D':
		return parse_range(s, false, PTO_DEP_POOL_MIN, PTO_DEP_POOL_MAX, v);
	default:	/* 'T' */
		return parse_range(s, false, PTO_TENSORMAP_POOL_MIN,
				   PTO_TENSORMAP_POOL_MAX, v);
	}
}

/* What ring size option c takes, for its refusal. */
static int bad_ring_value(int c, const char *arg)
{
	char lo[32], hi[32];
	const char *list = ", or up to 4 such values separated by commas, "
			   "one per task ring from ring 0";

	switch (c) {
	case 'w':
		return bad_value(c, arg, "a power of two from %u to %u%s",
				 PTO_TASK_WINDOW_MIN, PTO_TASK_WINDOW_MAX, list);
	case 'H':
		return bad_value(c, arg, "bytes from %s to %s (suffix K, M, G "
				 "or T)%s", size_str(PTO_HEAP_SIZE_MIN, lo),
				 size_str(PTO_HEAP_SIZE_MAX, hi), list);
	case 'D':
		return bad_value(c, arg, "entries from %u to %u%s",
				 PTO_DEP_POOL_MIN, PTO_DEP_POOL_MAX, list);
	default:
		return bad_value(c, arg, "entries from %u to %u%s",
				 PTO_TENSORMAP_POOL_MIN, PTO_TENSORMAP_POOL_MAX,
				 list);
	}
}

/*
 * Set option c's size: the common one (ring < 0), or ring's own (0: the
 * common one applies).
 */
static void put_size(struct pto_config *cfg, int ring, int c, uint64_t v)
{
	struct pto_ring_config *rc = ring < 0 ? NULL : &cfg->ring[ring];

	if (c == 'w')
		*(rc ? &rc->task_window : &cfg->task_window) = (uint32_t)v;
	else if (c == 'H')
		*(rc ? &rc->heap_size : &cfg->heap_size) = v;
	else if (c == 'D')
		*(rc ? &rc->dep_pool_size : &cfg->dep_pool_size) = (uint32_t)v;
	else
		*(rc ? &rc->tensormap_pool_size : &cfg->tensormap_pool_size) =
			(uint32_t)v;
}

/*
 * "N" for every task ring, or "N0,N1,..." from ring 0, rings past the
 * list taking its last value: as the PTO_* variables take them, so that
 * the sizes a deadlock report advises can be given here.  Per-ring values
 * the environment set (cfg.ring[]) give way.
 */
static int set_ring_sizes(struct ptorun *pr, int c, const char *arg)
{
	struct pto_config *cfg = &pr->cfg;
	uint64_t v[PTO_MAX_DEPTH_RINGS];
	const char *s = arg;
	uint32_t n = 0, r;
	size_t len;
	char item[32];

	for (;; s += len + 1) {
		len = strcspn(s, ",");
		if (n == PTO_MAX_DEPTH_RINGS || !len || len >= sizeof(item))
			return bad_ring_value(c, arg);
		memcpy(item, s, len);
		item[len] = '\0';
		if (ring_item(c, item, &v[n++]))
			return bad_ring_value(c, arg);
		if (!s[len])
			break;
	}
	if (!strchr(pr->ring_opts, c))
		pr->ring_opts[strlen(pr->ring_opts)] = (char)c;
	/* the common value is v[0]; ring r > 0 differs only from a list */
	put_size(cfg, -1, c, v[0]);
	for (r = 0; r < PTO_MAX_DEPTH_RINGS; r++)
		put_size(cfg, (int)r, c, r && n > 1 ? v[r < n ? r : n - 1] : 0);
	return 0;
}

static int parse_option(struct ptorun *pr, int c, const char *arg)
{
	struct pto_config *cfg = &pr->cfg;

	switch (c) {
	case 'd':
		return set_string(c, arg, "sim or a device node such as "
				  "/dev/pto0", &cfg->device);
	case 'w':
	case 'H':
	case 'D':
	case 'T':
		return set_ring_sizes(pr, c, arg);
	case 'A':
		return set_bytes(c, arg, 1, PTO_ARENA_SIZE_MAX,
				 &cfg->arena_size);
	case 'c':
		return set_cores(pr, arg);
	case 's':
		return set_u32(c, arg, 1, UINT32_MAX, "milliseconds",
			       &cfg->stall_timeout_ms);
	case 't':
		return set_string(c, arg, "a file name", &cfg->trace_path);
	case 'S':
		pr->stats = 1;
		return 0;
	case 'r':
		return set_repeat(pr, arg);
	case 'q':
		pr->quiet = 1;
		return 0;
	}
	return -EINVAL;
}

/* 0: run; 1: --help/--version done; negative: usage error */
static int parse_args(struct ptorun *pr, int argc, char **argv)
{
	int c;

	/* '+': stop at ORCH.so, the rest of the line belongs to it */
	/* getopt's own messages start "ptorun:", as ours do, not the path */
	argv[0] = (char *)"ptorun";
	while ((c = getopt_long(argc, argv, "+d:w:H:A:D:T:c:s:t:Sr:qhV",
				longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf("ptorun (PTO) %s, device ABI %d\n",
			       pto_version(), PTO_ABI_VERSION);
			return 1;
		}
		if (c == '?' || parse_option(pr, c, optarg))
			return -EINVAL;
	}
	if (optind >= argc) {
		fprintf(stderr, "ptorun: missing ORCH.so\n");
		return -EINVAL;
	}
	/* "./" would be tried, and dlopen() say it is a directory */
	if (!*argv[optind]) {
		fprintf(stderr, "ptorun: ORCH.so is an empty string: expected "
			"the file name of an orchestration\n");
		return -EINVAL;
	}
	pr->so_path = argv[optind];
	pr->orch_argc = argc - optind;
	pr->orch_argv = argv + optind;
	return 0;
}

static int load_orchestration(struct ptorun *pr)
{
	char *path = NULL;
	const char *p = pr->so_path;

	/* a bare file name means the current directory, not the lib path */
	if (!strchr(p, '/')) {
		if (asprintf(&path, "./%s", p) < 0)
			return -ENOMEM;
		p = path;
	}
	pr->dl = dlopen(p, RTLD_NOW | RTLD_LOCAL);
	free(path);
	if (!pr->dl) {
		fprintf(stderr, "ptorun: cannot load %s: %s\n", pr->so_path,
			dlerror());
		return -ENOENT;
	}
	*(void **)&pr->entry = dlsym(pr->dl, "pto_orchestration_entry");
	*(void **)&pr->init = dlsym(pr->dl, "pto_orchestration_init");
	*(void **)&pr->fini = dlsym(pr->dl, "pto_orchestration_fini");
	if (!pr->entry) {
		fprintf(stderr,
			"ptorun: %s does not export pto_orchestration_entry "
			"(one defined in C++ needs C linkage: include "
			"<pto/pto_orchestration.h>, which declares it "
			"extern \"C\")\n", pr->so_path);
		return -ENOENT;
	}
	return 0;
}

/*
 * What libpto means by the codes whose strerror() misleads ("Argument
 * list too long" for a task larger than its ring); NULL: strerror() says.
 */
static const char *pto_meaning(int err)
{
	switch (err) {
	case -E2BIG:
		return "a task or buffer larger than its ring can hold";
	case -EDEADLK:
		return "a ring stayed full with nothing able to free it";
	case -ECANCELED:
		return "the run was cancelled, or failed earlier";
	default:
		return NULL;
	}
}

static void report(const char *what, int err)
{
	const char *meaning = pto_meaning(err);

	if (meaning)
		fprintf(stderr, "ptorun: %s: %s (%s, %d)\n", what, meaning,
			strerrorname_np(-err), err);
	else
		fprintf(stderr, "ptorun: %s: %s (%d)\n", what, strerror(-err),
			err);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The first error writing standard output, for flush_stdout() to report */
static int stdout_err;

/* Flush standard output before what another stream or ORCH.so prints. */
static void flush_out(void)
{
	if (fflush(stdout) == EOF && !stdout_err)
		stdout_err = errno;
}

/*
 * SIGINT and SIGTERM: the first cancels the run in progress (and no
 * further run starts), so that fini still runs, the trace is completed
 * and the runtime is destroyed; ptorun then ends by the same signal.  A
 * second one ends the process at once, unless it is the first again from
 * the same process: timeout(1) signals its child and then its process
 * group, which holds the child too, and that echo must not cut the clean
 * stop short.  Ctrl-C comes from the kernel, so a second Ctrl-C still
 * ends it.
 */
static struct pto_runtime *running_rt;	/* atomic: the handler reads it */
static int stop_signal;			/* atomic: the handler writes it */
static pid_t stop_sender;		/* who sent it, if a process did */

static const char stopping[] = "ptorun: stopping once the tasks on a core "
	"have finished (a second signal ends ptorun at once)\n";

static void on_stop_signal(int sig, siginfo_t *si, void *ucontext)
{
	struct pto_runtime *rt = __atomic_load_n(&running_rt,
						 __ATOMIC_ACQUIRE);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	pid_t sender = si->si_code == SI_USER ? si->si_pid : 0;
	int first = 0;

	if (!__atomic_compare_exchange_n(&stop_signal, &first, sig, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (first == sig && sender && sender == stop_sender)
			return;
		/* delivered with its default action once we return */
		sigaction(sig, &dfl, NULL);
		raise(sig);
		return;
	}
	stop_sender = sender;
	if (rt)
		pto_run_cancel(rt);
	/* a kernel that never returns would otherwise leave this unsaid */
	(void)!write(STDERR_FILENO, stopping, sizeof(stopping) - 1);
}

static int stopped_by(void)
{
	return __atomic_load_n(&stop_signal, __ATOMIC_ACQUIRE);
}

/* A signal ignored when we started (a background job's SIGINT) stays so. */
static void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_stop_signal,
				.sa_flags = SA_SIGINFO }, old;
	static const int sigs[] = { SIGINT, SIGTERM };
	size_t i;

	/* one handler at a time: the second sees what the first stored */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!sigaction(sigs[i], NULL, &old) &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

/*
 * A reader gone (ptorun ... | head -1) or a file size limit reached
 * (ulimit -f, the trace growing) killed ptorun on the spot by SIGPIPE or
 * SIGXFSZ: no fini, a trace cut off.  Ignored, they make the write fail
 * instead (EPIPE, EFBIG), which is reported and ends ptorun as any output
 * failure does, after the clean-up.
 */
static void ignore_write_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
}

/* After the clean-up: end by the signal that stopped us, as a shell expects */
static void die_by_stop_signal(void)
{
	int sig = stopped_by();

	if (!sig)
		return;
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * A deadlock's advice names PTO_* variables, which ring size options
 * given here override (ptorun(1)): setting them changes nothing.
 */
static void advice_overridden(const struct ptorun *pr)
{
	const char *p;

	if (!pr->ring_opts[0])
		return;
	fputs("ptorun: ring sizes given with", stderr);
	for (p = pr->ring_opts; *p; p++)
		fprintf(stderr, "%s -%c", p == pr->ring_opts ? "" : ",", *p);
	fputs(" override the PTO_* variables the advice above names: give "
	      "its lists to the options instead (-w PTO_TASK_WINDOW, -H "
	      "PTO_HEAP_SIZE, -D PTO_DEP_POOL, -T PTO_TENSORMAP_POOL)\n",
	      stderr);
}

/* Tasks of rt that failed so far. */
static uint64_t tasks_failed(struct pto_runtime *rt)
{
	struct pto_stats st;

	return pto_get_stats(rt, &st) ? 0 : st.tasks_failed;
}

/* pto_run() repeat times; the first failure, or a stop signal, stops. */
static int run_repeated(struct ptorun *pr, struct pto_runtime *rt, void *arg)
{
	unsigned long i;
	uint64_t failed;
	double t0;
	char what[64];
	int ret;

	for (i = 1; i <= pr->repeat; i++) {
		failed = tasks_failed(rt);
		t0 = now_ms();
		if (stopped_by())
			ret = -ECANCELED;
		else
			ret = pr->entry ? pto_run(rt, pr->entry, arg) : -EINVAL;
		if (ret && stopped_by()) {
			fprintf(stderr, "ptorun: %s: run %lu of %lu cancelled\n",
				strsignal(stopped_by()), i, pr->repeat);
			return ret;
		}
		/* a task's error is the kernel's or device's, not a ring's */
		if (ret && tasks_failed(rt) > failed) {
			fprintf(stderr, "ptorun: run %lu of %lu failed: a task "
				"failed: %s (%d)\n", i, pr->repeat,
				strerror(-ret), ret);
			return ret;
		}
		if (ret) {
			snprintf(what, sizeof(what), "run %lu of %lu failed",
				 i, pr->repeat);
			report(what, ret);
			if (ret == -EDEADLK)
				advice_overridden(pr);
			return ret;
		}
		if (!pr->quiet)
			printf("ptorun: run %lu of %lu: %.3f ms\n", i,
			       pr->repeat, now_ms() - t0);
		flush_out();	/* survives a signal during the next run */
		if (stdout_err) {	/* nobody reads what the runs say */
			fprintf(stderr, "ptorun: stopping after run %lu of "
				"%lu: standard output cannot be written\n", i,
				pr->repeat);
			return -EIO;
		}
	}
	return 0;
}

/* Create the runtime, init, run, fini, stats.  Returns an exit code. */
static int run_orchestration(struct ptorun *pr)
{
	struct pto_runtime *rt = NULL;
	void *arg = NULL;
	int ret, status = EXIT_OK;

	ret = pto_runtime_create(&pr->cfg, &rt);
	if (ret) {
		report("cannot create the runtime", ret);
		return EXIT_FAILED;
	}
	__atomic_store_n(&running_rt, rt, __ATOMIC_RELEASE);
	if (pr->init) {
		flush_out();
		ret = pr->init(rt, pr->orch_argc, pr->orch_argv, &arg);
		/* what init printed survives a signal during the runs */
		flush_out();
		if (ret > 0)	/* e.g. the sample printed its help */
			goto out;
		if (ret) {
			report("pto_orchestration_init failed", ret);
			status = EXIT_FAILED;
			goto out;
		}
	}
	ret = run_repeated(pr, rt, arg);
	if (ret)
		status = EXIT_FAILED;
	flush_out();
	if (pr->fini) {
		/* fini verifies; it frees what init allocated even on error */
		int vret = pr->fini(rt, arg, ret);

		if (vret && !ret) {
			fprintf(stderr,
				"ptorun: %s: verification failed (%d)\n",
				pr->so_path, vret);
			status = EXIT_FAILED;
		}
	}
	if (pr->stats) {
		flush_out();
		pto_print_stats(rt, stdout);
	}
out:
	flush_out();
	ret = pto_trace_flush(rt);
	if (ret) {
		report("writing the trace failed; it is incomplete", ret);
		status = EXIT_FAILED;
	}
	__atomic_store_n(&running_rt, NULL, __ATOMIC_RELEASE);
	pto_runtime_destroy(rt);
	return status;
}

/*
 * Flush standard output and report a write error (a full disk, a closed
 * descriptor) that stdio kept to itself: 0, or -EIO after saying so.  Not
 * fclose(): ORCH.so's and libpto's destructors may still print at exit.
 */
static int flush_stdout(void)
{
	flush_out();
	if (!stdout_err && ferror(stdout))
		stdout_err = EIO;
	if (!stdout_err)
		return 0;
	fprintf(stderr, "ptorun: error writing standard output: %s\n",
		strerror(stdout_err));
	return -EIO;
}

int main(int argc, char **argv)
{
	struct ptorun pr = { .repeat = 1 };
	int ret;

	pto_config_init(&pr.cfg);
	ret = parse_args(&pr, argc, argv);
	if (ret < 0) {
		fprintf(stderr, "Try 'ptorun --help' for more information.\n");
		return EXIT_USAGE;
	}
	if (ret > 0)	/* --help or --version */
		return flush_stdout() ? EXIT_FAILED : EXIT_OK;
	if (load_orchestration(&pr))
		return EXIT_FAILED;
	catch_stop_signals();
	ignore_write_signals();
	ret = run_orchestration(&pr);
	if (flush_stdout())
		ret = EXIT_FAILED;
	die_by_stop_signal();
	/*
	 * ORCH.so stays mapped until exit, so sanitizer reports printed at
	 * exit can still name its functions.
	 */
	return ret;
}
