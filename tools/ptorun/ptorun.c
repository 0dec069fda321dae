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
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pto/pto.h>

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
"  -w, --task-window N       task ring slots (a power of two)\n"
"  -H, --heap-size SIZE      heap ring bytes (suffix K, M or G)\n"
"  -A, --arena-size SIZE     pto_malloc arena bytes (suffix K, M or G)\n"
"  -D, --dep-pool N          dependency list entries\n"
"  -T, --tensormap-pool N    TensorMap entries\n"
"  -c, --cores LIST          sim cores per type, e.g.\n"
"                            cube=N,vector=N,aicpu=N,accel=N\n"
"  -s, --stall-timeout MS    report a deadlock after MS ms without progress\n"
"  -t, --trace FILE          write a Perfetto/Chrome JSON trace to FILE\n"
"  -S, --stats               print flow-control statistics after the runs\n"
"  -r, --repeat N            run the orchestration N times (default 1)\n"
"  -q, --quiet               print nothing but errors (the sample's own\n"
"                            output is its business)\n"
"  -h, --help                show this help and exit\n"
"  -V, --version             show the version and exit\n"
"\n"
"Options not given keep the defaults of pto_config_init(), including its\n"
"PTO_* environment overrides.  Exit status: 0 on success, 1 when loading,\n"
"running or verifying failed, 2 on a bad command line.\n");
}

/*
 * A decimal (or 0x hex) number, with a binary K/M/G suffix (KiB, MB, ...
 * accepted too) when suffix is set.  Returns 0 or -EINVAL.
 */
static int parse_num(const char *s, int suffix, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || s[0] == '-' || s[0] == '+')
		return -EINVAL;
	if (suffix && *end) {
		const char *p = strchr("KMG", *end & ~0x20);

		if (!p)
			return -EINVAL;
		shift = 10 * (unsigned int)(p - "KMG" + 1);
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B')
			end++;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* a positive count that fits in 32 bits */
static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_num(s, 0, &v) || !v || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_bytes(const char *s, uint64_t *out)
{
	uint64_t v;

	if (parse_num(s, 1, &v) || !v)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "cube=4,vector=8": set the named types (0 allowed), keep the others */
static int parse_cores(const char *s, uint32_t cores[PTO_NUM_WORKER_TYPES])
{
	char *copy = strdup(s), *tok, *save = NULL, *eq;
	int ret = copy ? 0 : -ENOMEM;
	uint64_t v;
	int t;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq) {
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
			if (!strcmp(tok, worker_names[t]))
				break;
		if (t == PTO_NUM_WORKER_TYPES || parse_num(eq + 1, 0, &v) ||
		    v > 4096)
			ret = -EINVAL;
		else
			cores[t] = (uint32_t)v;
	}
	free(copy);
	return ret;
}

static int bad_value(const char *opt, const char *val, const char *what)
{
	fprintf(stderr, "ptorun: invalid %s '%s': %s\n", opt, val, what);
	return -EINVAL;
}

static int parse_option(struct ptorun *pr, int c, const char *arg)
{
	unsigned long long n;
	uint64_t sz;
	char *end;

	switch (c) {
	case 'd':
		pr->cfg.device = arg;
		return 0;
	case 'w':
		if (parse_u32(arg, &pr->cfg.task_window) ||
		    pr->cfg.task_window & (pr->cfg.task_window - 1))
			return bad_value("--task-window", arg,
					 "expected a power of two");
		return 0;
	case 'H':
		if (parse_bytes(arg, &pr->cfg.heap_size))
			return bad_value("--heap-size", arg,
					 "expected bytes, e.g. 64M");
		return 0;
	case 'A':
		if (parse_bytes(arg, &sz))
			return bad_value("--arena-size", arg,
					 "expected bytes, e.g. 256M");
		pr->cfg.arena_size = sz;
		return 0;
	case 'D':
		if (parse_u32(arg, &pr->cfg.dep_pool_size))
			return bad_value("--dep-pool", arg,
					 "expected a positive count");
		return 0;
	case 'T':
		if (parse_u32(arg, &pr->cfg.tensormap_pool_size))
			return bad_value("--tensormap-pool", arg,
					 "expected a positive count");
		return 0;
	case 'c':
		if (parse_cores(arg, pr->cfg.cores))
			return bad_value("--cores", arg,
					 "expected e.g. cube=2,vector=4");
		return 0;
	case 's':
		if (parse_u32(arg, &pr->cfg.stall_timeout_ms))
			return bad_value("--stall-timeout", arg,
					 "expected milliseconds");
		return 0;
	case 't':
		pr->cfg.trace_path = arg;
		return 0;
	case 'S':
		pr->stats = 1;
		return 0;
	case 'r':
		errno = 0;
		n = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || !n || arg[0] == '-' ||
		    n > ULONG_MAX)
			return bad_value("--repeat", arg,
					 "expected a positive count");
		pr->repeat = n;
		return 0;
	case 'q':
		pr->quiet = 1;
		return 0;
	}
	return -EINVAL;
}

/* 0: run; 1: --help/--version done; negative: usage error */
static int parse_args(struct ptorun *pr, int argc, char **argv)
{
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
	int c;

	/* '+': stop at ORCH.so, the rest of the line belongs to it */
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
			"ptorun: %s does not export pto_orchestration_entry\n",
			pr->so_path);
		return -ENOENT;
	}
	return 0;
}

static void report(const char *what, int err)
{
	fprintf(stderr, "ptorun: %s: %s (%d)\n", what, strerror(-err), err);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* pto_run() repeat times; the first failure stops. */
static int run_repeated(struct ptorun *pr, struct pto_runtime *rt, void *arg)
{
	unsigned long i;
	double t0;
	char what[64];
	int ret;

	for (i = 1; i <= pr->repeat; i++) {
		t0 = now_ms();
		ret = pr->entry ? pto_run(rt, pr->entry, arg) : -EINVAL;
		if (ret) {
			snprintf(what, sizeof(what), "run %lu of %lu failed",
				 i, pr->repeat);
			report(what, ret);
			return ret;
		}
		if (!pr->quiet)
			printf("ptorun: run %lu of %lu: %.3f ms\n", i,
			       pr->repeat, now_ms() - t0);
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
	if (pr->init) {
		fflush(stdout);
		ret = pr->init(rt, pr->orch_argc, pr->orch_argv, &arg);
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
	fflush(stdout);
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
		fflush(stdout);
		pto_print_stats(rt, stdout);
	}
out:
	fflush(stdout);
	pto_runtime_destroy(rt);
	return status;
}

int main(int argc, char **argv)
{
	struct ptorun pr = { .repeat = 1 };
	int ret;

	pto_config_init(&pr.cfg);
	ret = parse_args(&pr, argc, argv);
	if (ret) {
		if (ret < 0)
			fprintf(stderr,
				"Try 'ptorun --help' for more information.\n");
		return ret < 0 ? EXIT_USAGE : EXIT_OK;
	}
	if (load_orchestration(&pr))
		return EXIT_FAILED;
	ret = run_orchestration(&pr);
	/*
	 * ORCH.so stays mapped until exit, so sanitizer reports printed at
	 * exit can still name its functions.
	 */
	return ret;
}
