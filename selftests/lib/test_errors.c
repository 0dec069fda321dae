// SPDX-License-Identifier: MIT
/*
 * Every error return of the public API (<pto/pto.h>), and that the runtime
 * works again afterwards:
 *  -EINVAL    bad parameter kind, NULL base or ref, too many parameters,
 *             bad worker type, unbalanced pto_scope_end, bad config
 *  -ENOENT    unknown kernel id
 *  -E2BIG     an OUTPUT larger than the heap ring, at once
 *  -EDEADLK   a scope larger than the task window, a heap too small for
 *             one scope's outputs: reported after stall_timeout_ms with a
 *             diagnostic whose suggested size is then shown to work
 *  -EIO       a kernel fails; later submits of the run get -ECANCELED;
 *             the failed task is reported once, naming it
 *  -EINVAL    a built-in op given too few parameters, a length that is
 *             no SCALAR or not whole words, or a region smaller than its
 *             lengths say, at submit, with a message naming op and sizes
 *  -ENOENT    a device that is not "sim" and no device node, with a
 *             message naming the path and what to do
 *  -ENODEV    a device file that is not a PTO device (/dev/null, /)
 * plus the PTO_* environment overrides of pto_config_init(), that
 * messages from two threads at once never mix within a line, and that
 * each message, a report of several lines too, is one write to stderr.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault.h"
#include "kernels.h"
#include "opcheck.h"

/* sets -EIO; EIO, -4242, -134 (no errno) or -ECANCELED for arguments 1-4 */
#define K_FAIL 45
#define K_UNKNOWN 55		/* never registered */

static void k_fail(const uint64_t *a, uint32_t n)
{
	static const int errs[] = { -EIO, EIO, -4242, -134, -ECANCELED };

	pto_kernel_set_error(n && a[0] < 5 ? errs[a[0]] : -EIO);
}

static struct pto_runtime *make_rt(struct pto_config *cfg, struct tl_rec *r)
{
	struct pto_runtime *rt = tl_runtime(cfg);

	tl_rec_init(r, rt);
	if (register_test_kernels(r) ||
	    tl_register(r, K_FAIL, PTO_WORKER_VECTOR, k_fail, "fail"))
		bail_out("cannot register kernels");
	return rt;
}

/* ---- configuration ------------------------------------------------------- */

static int bad_device(void *arg)
{
	struct pto_runtime *rt = NULL;
	struct pto_config cfg;
	int ret;

	tl_config(&cfg, 0, 0);
	cfg.device = "/nonexistent/pto-device";
	ret = pto_runtime_create(&cfg, &rt);
	return ret < 0 && !rt ? 0 : 1;
}

/* In a child: a crash must fail this check, not end the whole test. */
static void test_bad_device(void)
{
	int status = tl_in_child(bad_device, NULL, 60, NULL, 0);
	char how[32];

	if (!ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"config: a device node that does not exist fails cleanly"))
		diag("  child %s", tl_status_text(status, how, sizeof(how)));
}

/*
 * A program built against a newer header passes a larger struct
 * pto_config: fields we do not know must be left at zero, or the runtime
 * refuses it rather than ignore what it asks for.
 */
static void test_config_sizes(void)
{
	struct {
		struct pto_config cfg;
		uint64_t newer[4];
	} big;
	struct pto_runtime *rt = NULL;
	struct pto_stats st[2];

	pto_config_init_sized(&big.cfg, sizeof(big));
	ok(big.cfg.size == sizeof(big) && !big.newer[0] && !big.newer[3],
	   "config: a larger caller's struct is zeroed past our fields");
	big.cfg.cores[PTO_WORKER_VECTOR] = 1;
	ok_eq(pto_runtime_create(&big.cfg, &rt), 0,
	      "config: a larger struct with unknown fields zero is accepted");
	if (rt) {
		memset(st, 0x5a, sizeof(st));
		ok_eq(pto_get_stats_sized(rt, &st[0], sizeof(st)), 0,
		      "stats: a larger caller's buffer is filled");
		ok(st[0].depth[0][PTO_RING_TASK].size == big.cfg.task_window &&
		   st[0].ring[PTO_RING_TASK].size ==
		   st[0].nrings * big.cfg.task_window &&
		   ((unsigned char *)&st[1])[sizeof(st[1]) - 1] == 0,
		   "stats: our fields set, the rest zeroed");
		ok_eq(pto_get_stats_sized(rt, &st[0], 8), -EINVAL,
		      "stats: a buffer smaller than any struct pto_stats");
		pto_runtime_destroy(rt);
		rt = NULL;
	}
	big.newer[2] = 1;
	ok_eq(pto_runtime_create(&big.cfg, &rt), -E2BIG,
	      "config: a field this library does not know is -E2BIG");
	big.newer[2] = 0;
	big.cfg.size = 8;
	ok_eq(pto_runtime_create(&big.cfg, &rt), -EINVAL,
	      "config: a size smaller than any struct pto_config is -EINVAL");
}

/* Does one line of text contain every word of words (NULL-terminated)? */
static int line_has(const char *text, const char *const *words)
{
	const char *line, *eol;
	char buf[1024];
	int i;

	for (line = text; *line; line = *eol ? eol + 1 : eol) {
		eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		snprintf(buf, sizeof(buf), "%.*s", (int)(eol - line), line);
		for (i = 0; words[i] && strstr(buf, words[i]); i++)
			;
		if (!words[i])
			return 1;
	}
	return 0;
}

/* Lines of text containing word. */
static int count_lines(const char *text, const char *word)
{
	const char *p;
	int n = 0;

	for (p = strstr(text, word); p; p = strstr(p + 1, word)) {
		n++;
		p = strchr(p, '\n');
		if (!p)
			break;
	}
	return n;
}

/* A device that cannot be opened is reported naming the path and a fix. */
/*
 * Create on device: rc (test rc_name), and when words is given a line of
 * the message with all of them (test words_name).
 */
static void check_device(const char *device, int rc, const char *rc_name,
			 const char *const *words, const char *words_name)
{
	struct pto_runtime *rt = NULL;
	struct tl_capture cap;
	struct pto_config cfg;
	bool good;
	char *text;
	int ret;

	tl_config(&cfg, 0, 0);
	cfg.device = device;
	tl_capture_begin(&cap);
	ret = pto_runtime_create(&cfg, &rt);
	text = tl_capture_end(&cap);
	good = ok_eq(ret, rc, "%s", rc_name);
	if (words)
		good &= ok(line_has(text, words), "%s", words_name);
	if (!good)
		diag("  stderr: %s", text);
	free(text);
	if (rt)
		pto_runtime_destroy(rt);
}

static void test_device_messages(void)
{
	static const char *const gpu[] = { "\"gpu\"", "sim", "/dev/pto0",
					   "device nodes here", NULL };
	static const char *const missing[] = { "/nonexistent/pto9",
					       "no such device node",
					       "modprobe pto", NULL };
	static const char *const not_pto[] = { "/dev/null",
					       "not a PTO device", NULL };
	static const char *const a_dir[] = { "/: a directory",
					     "not a PTO device", NULL };

	check_device("gpu", -ENOENT, "config: device \"gpu\" is -ENOENT",
		     gpu, "config: device \"gpu\": the message says what a "
		     "device is");
	check_device("/nonexistent/pto9", -ENOENT,
		     "config: a missing device node is -ENOENT", missing,
		     "config: a missing node: the message names it and what "
		     "to do");
	/* a file another driver serves: it opens, and knows no PTO ioctl */
	check_device("/dev/null", -ENODEV,
		     "config: /dev/null is not a PTO device: -ENODEV", not_pto,
		     "config: /dev/null: the message says it is not a PTO "
		     "device");
	/* its driver answers -EINVAL */
	check_device("/dev/urandom", -ENODEV,
		     "config: /dev/urandom is not a PTO device: -ENODEV",
		     NULL, NULL);
	check_device("/", -ENODEV,
		     "config: a directory is not a PTO device: -ENODEV", a_dir,
		     "config: a directory: the message says it is not a PTO "
		     "device");
}

/*
 * Create with the environment var=val: rc, and want said exactly once
 * (NULL: nothing said).
 */
static void check_env(const char *var, const char *val, int rc,
		      const char *want)
{
	struct pto_runtime *rt = NULL;
	struct pto_config cfg;
	struct tl_capture cap;
	char *text;
	int ret;

	setenv(var, val, 1);
	tl_capture_begin(&cap);
	pto_config_init(&cfg);
	ret = pto_runtime_create(&cfg, &rt);
	text = tl_capture_end(&cap);
	if (!ok(ret == rc && (want ? tl_count(text, want) == 1 : !*text),
		"config: %s=%s: create returns %d, says \"%s\" once", var,
		val, rc, want ? want : "nothing"))
		diag("  rc %d, stderr: %s", ret, text);
	free(text);
	if (rt)
		pto_runtime_destroy(rt);
	unsetenv(var);
}

/* Every variable libpto reads (Documentation/libpto.rst, "Environment"). */
static const char *const env_vars[] = {
	"PTO_DEVICE", "PTO_TASK_WINDOW", "PTO_HEAP_SIZE", "PTO_DEP_POOL",
	"PTO_TENSORMAP_POOL", "PTO_SIM_CORES", "PTO_STALL_TIMEOUT_MS",
	"PTO_TRACE", "PTO_ARENA_SIZE", "PTO_STATS", "PTO_RINGS", "PTO_SCHED",
	"PTO_CPUS", "PTO_CHECK",
};

/* A PTO_* value, what create returns with it and says once (NULL: nothing). */
struct env_case {
	const char *var, *val;
	int rc;
	const char *want;
};

/* In order: the second PTO_STATS_DIR case is said no more (once a process). */
static const struct env_case env_cases[] = {
	{ "PTO_TASK_WINDOW", "abc", -EINVAL,
	  "PTO_TASK_WINDOW=abc: want a size" },
	{ "PTO_TASK_WINDOW", "6", -EINVAL,
	  "power of two in [4, 2^24] (the environment has PTO_TASK_WINDOW=6)" },
	{ "PTO_HEAP_SIZE", "64Q", -EINVAL, "PTO_HEAP_SIZE=64Q" },
	{ "PTO_TASK_WINDOW", "16,,32", -EINVAL,
	  "PTO_TASK_WINDOW=16,,32: want a size" },
	{ "PTO_HEAP_SIZE", "256M,", -EINVAL, "PTO_HEAP_SIZE=256M,: want a size" },
	{ "PTO_SCHED", "fast", -EINVAL,
	  "PTO_SCHED=fast: want auto, thread, workers or shards" },
	{ "PTO_SIM_CORES", "cube=999", -EINVAL,
	  "PTO_SIM_CORES=cube=999: want e.g." },
	{ "PTO_SIM_CORES", "cube=0,vector=0,aicpu=0,accel=0", -EINVAL,
	  "cores[] has no core of any worker type" },
	{ "PTO_SIM_CORES", "cube=1,cube=2", -EINVAL,
	  "PTO_SIM_CORES=cube=1,cube=2: want e.g." },
	{ "PTO_SIM_CORES", ",,cube=2", -EINVAL, "PTO_SIM_CORES=,,cube=2: want" },
	{ "PTO_SIM_CORES", "cube=1,", -EINVAL, "PTO_SIM_CORES=cube=1,: want" },
	/* a count takes no size suffix */
	{ "PTO_STALL_TIMEOUT_MS", "1K", -EINVAL,
	  "PTO_STALL_TIMEOUT_MS=1K: want milliseconds" },
	{ "PTO_STALL_TIMEOUT_MS", "-1", -EINVAL,
	  "PTO_STALL_TIMEOUT_MS=-1: want milliseconds from 1 to 4294967295" },
	{ "PTO_STALL_TIMEOUT_MS", "4294967296", -EINVAL,
	  "PTO_STALL_TIMEOUT_MS=4294967296: want milliseconds" },
	/* hex digits must follow 0x: strtoull() would skip a blank */
	{ "PTO_STALL_TIMEOUT_MS", "0x 10", -EINVAL,
	  "PTO_STALL_TIMEOUT_MS=0x 10: want milliseconds" },
	/* and one 0x: strtoull() would take a second */
	{ "PTO_STALL_TIMEOUT_MS", "0x0x10", -EINVAL,
	  "PTO_STALL_TIMEOUT_MS=0x0x10: want milliseconds" },
	{ "PTO_TASK_WINDOW", "0x0x10", -EINVAL, "PTO_TASK_WINDOW=0x0x10" },
	{ "PTO_RINGS", "x", -EINVAL,
	  "PTO_RINGS=x: want a number of rings from 1 to 4" },
	{ "PTO_CHECK", "yes", -EINVAL, "PTO_CHECK=yes: want 0 (off) or 1 (on)" },
	{ "PTO_STALL_TIMEOUT_MS", "0", -EINVAL,
	  "(the environment has PTO_STALL_TIMEOUT_MS=0)" },
	{ "PTO_CPUS", "x", -EINVAL, "(the environment has PTO_CPUS=x)" },
	{ "PTO_CPUS", "4095", -EINVAL,
	  "CPU 4095 is not one this process may run on" },
	{ "PTO_STATS", "yes", -EINVAL, "PTO_STATS=yes: want 0 (off) or 1 (on)" },
	{ "PTO_RINGS", "9", -EINVAL,
	  "nrings must be in [1, 4] (the environment has PTO_RINGS=9)" },
	{ "PTO_HEAP_SIZE", "64KBzzz", -EINVAL, "PTO_HEAP_SIZE=64KBzzz: want a size" },
	{ "PTO_HEAP_SIZE", " 64K", -EINVAL, "PTO_HEAP_SIZE= 64K: want a size" },
	/* decimal, as ptorun's options: octal 016 is no power of two */
	{ "PTO_TASK_WINDOW", "016", 0, NULL },
	/* not an error: the runtime works, unseen by ptotop, and says so */
	{ "PTO_STATS_DIR", "/nonexistent/pto", 0,
	  "stats page: cannot create it in /nonexistent/pto" },
	{ "PTO_STATS_DIR", "/nonexistent/pto", 0, NULL },
	{ "PTO_ARENA_SIZE", "0", -EINVAL,
	  "arena_size must be in [1, 1 TiB] (the environment has PTO_ARENA_SIZE=0)" },
	/* a name libpto does not read, near one it does: said, no error */
	{ "PTO_CORES", "cube=1", 0, "environment: PTO_CORES is not a libpto "
	  "variable and changes nothing; did you mean PTO_SIM_CORES?" },
	{ "pto_sched", "thread", 0, "pto_sched is not a libpto variable and "
	  "changes nothing; did you mean PTO_SCHED?" },
	{ "PTO_HEAPSIZE", "1M", 0, "did you mean PTO_HEAP_SIZE?" },
	{ "PTO_SHCED", "thread", 0, "did you mean PTO_SCHED?" },
	/* other programs' PTO_* names (the test harness's): nothing */
	{ "PTO_RESULTS", "/tmp/results", 0, NULL },
	{ "PTO_SKIP_VM", "1", 0, NULL },
	{ "PTO_TEST_TIMEOUT", "60", 0, NULL },
};

/* A 1-byte arena is a page: a full one names the size it has. */
static void test_arena_rounded(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct pto_runtime *rt = NULL;
	struct tl_capture cap;
	char *text, want[96];
	void *a, *b;

	setenv("PTO_ARENA_SIZE", "1", 1);
	if (pto_runtime_create(NULL, &rt))
		bail_out("create with PTO_ARENA_SIZE=1");
	unsetenv("PTO_ARENA_SIZE");
	snprintf(want, sizeof(want), "no free block of %zu bytes in the %zu "
		 "byte arena", page, page);
	tl_capture_begin(&cap);
	a = pto_malloc(rt, page);
	b = pto_malloc(rt, page);
	text = tl_capture_end(&cap);
	ok(a && !b && strstr(text, want) && strstr(text, "rounded up"),
	   "config: PTO_ARENA_SIZE=1: one page, and a full arena is said as "
	   "such");
	diag("  stderr: %s", text);
	free(text);
	pto_runtime_destroy(rt);
}

/*
 * A bad PTO_TASK_WINDOW fails the create also when the program then sets
 * task_window itself (as ptorun -w does): out of range as unparsable.
 */
static void test_env_overridden(const char *val, const char *want)
{
	struct pto_runtime *rt = NULL;
	struct pto_config cfg;
	struct tl_capture cap;
	char *text;
	int ret;

	setenv("PTO_TASK_WINDOW", val, 1);
	pto_config_init(&cfg);
	cfg.task_window = 64;
	tl_capture_begin(&cap);
	ret = pto_runtime_create(&cfg, &rt);
	text = tl_capture_end(&cap);
	if (!ok(ret == -EINVAL && tl_count(text, want) == 1,
		"config: PTO_TASK_WINDOW=%s with task_window set to 64: "
		"-EINVAL, said once", val))
		diag("  rc %d, stderr: %s", ret, text);
	free(text);
	if (rt)
		pto_runtime_destroy(rt);
	unsetenv("PTO_TASK_WINDOW");
}

/*
 * Every bad PTO_* value fails pto_runtime_create(), named once, whether it
 * does not parse or is out of range; a NULL configuration reads it too.
 */
static void test_config_env(void)
{
	struct pto_runtime *rt = NULL;
	size_t i;

	for (i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++)
		check_env(env_cases[i].var, env_cases[i].val, env_cases[i].rc,
			  env_cases[i].want);
	setenv("PTO_ARENA_SIZE", "lots", 1);
	ok_eq(pto_runtime_create(NULL, &rt), -EINVAL,
	      "config: a bad PTO_ARENA_SIZE fails a create with no config");
	unsetenv("PTO_ARENA_SIZE");
	check_env("PTO_RINGS", "2", 0, NULL);
	if (rt)
		pto_runtime_destroy(rt);
	/* a ring past PTO_RINGS is unused, and its bad size refused still */
	setenv("PTO_RINGS", "1", 1);
	check_env("PTO_TASK_WINDOW", "16,6", -EINVAL,
		  "ring 1's task_window must be a power of two");
	unsetenv("PTO_RINGS");
	/* VAR= cmd, the shell's way to drop an exported setting: unset */
	for (i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++)
		check_env(env_vars[i], "", 0, NULL);
	test_arena_rounded();
	test_env_overridden("6", "power of two in [4, 2^24] (the environment "
			    "has PTO_TASK_WINDOW=6)");
	test_env_overridden("4k8", "PTO_TASK_WINDOW=4k8: want a size");
}

/*
 * A NULL device is the default, "sim"; a reserved field set is refused,
 * naming it; pto_print_stats() of no runtime names itself.
 */
static void test_config_reserved(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt = NULL;
	struct tl_capture cap;
	char *text;
	int ret;

	tl_config(&cfg, 0, 0);
	cfg.device = NULL;
	ret = pto_runtime_create(&cfg, &rt);
	ok(!ret && rt, "config: device NULL is the default, the simulator "
	   "(%d)", ret);
	if (rt)
		pto_runtime_destroy(rt);

	rt = NULL;
	tl_config(&cfg, 0, 0);
	cfg.ring[1].__pad = 1;
	tl_capture_begin(&cap);
	ret = pto_runtime_create(&cfg, &rt);
	text = tl_capture_end(&cap);
	ok(ret == -EINVAL && !rt && strstr(text, "ring 1's __pad must be 0"),
	   "config: ring[1].__pad set is -EINVAL, naming it");
	free(text);
	if (rt)
		pto_runtime_destroy(rt);

	tl_capture_begin(&cap);
	pto_print_stats(NULL, stdout);
	text = tl_capture_end(&cap);
	ok(strstr(text, "pto_print_stats: the runtime is NULL") != NULL,
	   "pto_print_stats(NULL): the message names pto_print_stats");
	free(text);
}

static void test_config(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt = NULL;

	tl_config(&cfg, 6, 0);
	ok_eq(pto_runtime_create(&cfg, &rt), -EINVAL,
	      "config: task window 6 (not a power of two) is -EINVAL");
	test_bad_device();
	test_device_messages();
	test_config_sizes();
	test_config_env();
	test_config_reserved();

	setenv("PTO_TASK_WINDOW", "32", 1);
	setenv("PTO_HEAP_SIZE", "65536", 1);
	setenv("PTO_DEP_POOL", "5000", 1);
	setenv("PTO_TENSORMAP_POOL", "6000", 1);
	setenv("PTO_SIM_CORES", "cube=3,vector=1,aicpu=2,accel=1", 1);
	setenv("PTO_STALL_TIMEOUT_MS", "1234", 1);
	pto_config_init(&cfg);
	ok(cfg.task_window == 32 && cfg.heap_size == 65536 &&
	   cfg.dep_pool_size == 5000 && cfg.tensormap_pool_size == 6000 &&
	   cfg.stall_timeout_ms == 1234,
	   "config: PTO_* environment overrides the sizes");
	ok(cfg.cores[PTO_WORKER_CUBE] == 3 && cfg.cores[PTO_WORKER_VECTOR] == 1 &&
	   cfg.cores[PTO_WORKER_AICPU] == 2 && cfg.cores[PTO_WORKER_ACCEL] == 1,
	   "config: PTO_SIM_CORES sets the cores per type");
	setenv("PTO_TASK_WINDOW", "6", 1);
	pto_config_init(&cfg);
	ok_eq(pto_runtime_create(&cfg, &rt), -EINVAL,
	      "config: PTO_TASK_WINDOW=6 is -EINVAL at create");
	unsetenv("PTO_TASK_WINDOW");
	unsetenv("PTO_HEAP_SIZE");
	unsetenv("PTO_DEP_POOL");
	unsetenv("PTO_TENSORMAP_POOL");
	unsetenv("PTO_SIM_CORES");
	unsetenv("PTO_STALL_TIMEOUT_MS");
}

/* rc is want, and stderr said one line containing say */
static void said(int rc, int want, struct tl_capture *cap, const char *say,
		 const char *name)
{
	char *text = tl_capture_end(cap);

	if (!ok(rc == want && tl_count(text, say) == 1 &&
		tl_count(text, "\n") == 1,
		"%s is %d, saying \"%s\"", name, want, say))
		diag("  rc %d, stderr: %s", rc, text);
	free(text);
}

/* Before any run no ring needs a change, and the table says so. */
static void print_no_advice(struct pto_runtime *rt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		bail_out("open_memstream");
	pto_print_stats(rt, f);
	fclose(f);
	ok(text && strstr(text, "sizing advice:\n  none: every ring fits"),
	   "pto_print_stats: no advice is said, not left as an empty list");
	free(text);
}

/* Every refusal returns its code and says why in one line. */
static void test_register(struct pto_runtime *rt)
{
	static const struct {
		uint32_t id;
		const char *name, *says;
	} taken[] = {
		{ 59, "first", "kernel id 59 is taken (by \"first\")" },
		{ 58, NULL, "kernel id 58 is taken (by \"kernel 58\")" },
		/* one line, whatever the name holds */
		{ 57, "gemm\nrow\t\x01", "kernel id 57 is taken (by "
		  "\"gemm\\nrow\\t\\x01\")" },
		/* 31 bytes fit: the escape is cut whole */
		{ 56, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", "kernel id 56 is taken (by \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\")" },
	};
	struct tl_capture cap;
	struct pto_stats st;
	size_t i;
	int rc;

	tl_capture_begin(&cap);
	rc = pto_kernel_register(rt, 60, PTO_NUM_WORKER_TYPES, k_fail, "x");
	said(rc, -EINVAL, &cap, "worker type 4",
	     "register: bad worker type");
	tl_capture_begin(&cap);
	rc = pto_kernel_register(rt, 61, PTO_WORKER_CUBE, NULL, "x");
	said(rc, -EINVAL, &cap, "the function is NULL",
	     "register: NULL function");
	tl_capture_begin(&cap);
	rc = pto_kernel_register(rt, PTO_MAX_KERNELS, PTO_WORKER_CUBE, k_fail,
				 "x");
	said(rc, -EINVAL, &cap, "kernel id 1024", "register: id too large");
	tl_capture_begin(&cap);
	rc = pto_kernel_register_builtin(rt, 62, PTO_WORKER_CUBE,
					 PTO_OP_COUNT);
	said(rc, -EINVAL, &cap, "is not one of enum pto_op",
	     "register: unknown built-in op");
	tl_capture_begin(&cap);
	rc = pto_kernel_register_builtin(rt, 63, PTO_NUM_WORKER_TYPES,
					 PTO_OP_NOP);
	said(rc, -EINVAL, &cap, "worker type 4",
	     "register_builtin: bad worker type");
	/* an unnamed C kernel is known by its id, not as an op */
	for (i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		ok_eq(pto_kernel_register(rt, taken[i].id, PTO_WORKER_CUBE,
					  k_fail, taken[i].name), 0,
		      "register: kernel %u", taken[i].id);
		tl_capture_begin(&cap);
		rc = pto_kernel_register(rt, taken[i].id, PTO_WORKER_CUBE,
					 k_fail, "again");
		said(rc, -EEXIST, &cap, taken[i].says, "register: a taken id");
	}
	tl_capture_begin(&cap);
	pto_print_stats(rt, NULL);
	said(-EINVAL, -EINVAL, &cap, "pto_print_stats: out is NULL",
	     "pto_print_stats(rt, NULL): a message, no crash");
	print_no_advice(rt);
	tl_capture_begin(&cap);
	rc = pto_malloc(rt, 0) ? 0 : -ENOMEM;
	said(rc, -ENOMEM, &cap, "pto_malloc: a size of 0 bytes", "pto_malloc(0)");
	tl_capture_begin(&cap);
	rc = pto_malloc(rt, (size_t)1 << 50) ? 0 : -ENOMEM;
	said(rc, -ENOMEM, &cap, "no free block of", "pto_malloc(2^50)");
	tl_capture_begin(&cap);
	rc = pto_get_stats(rt, NULL);
	said(rc, -EINVAL, &cap, "st is NULL", "pto_get_stats(rt, NULL)");
	tl_capture_begin(&cap);
	rc = pto_get_stats(NULL, &st);
	said(rc, -EINVAL, &cap, "the runtime is NULL",
	     "pto_get_stats(NULL, st)");
	tl_capture_begin(&cap);
	rc = pto_runtime_create(NULL, NULL);
	said(rc, -EINVAL, &cap, "rt (where the runtime goes) is NULL",
	     "pto_runtime_create(NULL, NULL)");
}

/* ---- bad submits --------------------------------------------------------- */

struct bad {
	const char *name;
	int want;
	uint32_t kid;
	int type;
	struct pto_param p[2];
	uint32_t n;		/* 0: the params are NULL, n = 1 */
};

static uint64_t *gbuf;
static void *gref;
/* a built-in op's kernel id, clear of the KID() range */
#define K_BUILTIN_NOP	60

static int64_t bad_rc;
static uint64_t bad_ns;

static int orch_bad(struct pto_runtime *rt, void *arg)
{
	const struct bad *b = arg;
	struct pto_param many[PTO_MAX_PARAMS + 1];
	uint64_t t0;
	uint32_t i;

	/* a valid task first, so the runtime is busy when the bad one comes */
	if (pto_submit_task(rt, KID(K_STEP, 0), 0,
			    (struct pto_param[]){ PTO_INOUT(gbuf, 0, 8),
						  PTO_SCALAR(1), PTO_SCALAR(0) },
			    3) < 0)
		return -EPROTO;
	t0 = tl_now_ns();
	if (b->n > 2) {		/* many: an OUT_EXISTING, then scalars */
		for (i = 0; i < b->n; i++)
			many[i] = PTO_SCALAR(i);
		many[0] = PTO_OUT_EXISTING(gbuf, 8, 8);
		bad_rc = pto_submit_task(rt, b->kid, b->type, many, b->n);
	} else {
		bad_rc = pto_submit_task(rt, b->kid, b->type,
					 b->n ? b->p : NULL, b->n ? b->n : 1);
	}
	bad_ns = tl_now_ns() - t0;
	return bad_rc < 0 ? (int)bad_rc : -EPROTO;
}

static int orch_ok(struct pto_runtime *rt, void *arg)
{
	struct tl_rec *r = arg;

	pto_scope_begin(rt);
	SUBMIT_OR_RETURN(r, K_STEP, PTO_WORKER_CUBE, PTO_INOUT(gbuf, 0, 16),
			 PTO_SCALAR(2), PTO_SCALAR(99));
	SUBMIT_OR_RETURN(r, K_STEP, PTO_WORKER_VECTOR, PTO_INOUT(gbuf, 8, 16),
			 PTO_SCALAR(2), PTO_SCALAR(98));
	return pto_scope_end(rt);
}

/* The runtime still works: a small run whose result is checked. */
static void check_recovers(struct pto_runtime *rt, struct tl_rec *r,
			   const char *name)
{
	char what[128];

	tl_rec_reset(r);
	tl_host(r, gbuf, 64);
	snprintf(what, sizeof(what), "%s: the next run", name);
	if (ok_eq(pto_run(rt, orch_ok, r), 0, "%s: the next pto_run works",
		  name) && tl_replay(r) == 0)
		tl_check(r, gbuf, what);
}


/* pto_run() of orch_bad on b, checking that its stderr says what. */
static int run_said(struct pto_runtime *rt, struct bad *b, const char *what)
{
	struct tl_capture cap;
	char *text;
	int ret;

	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_bad, b);
	text = tl_capture_end(&cap);
	if (!ok(text && strstr(text, what), "submit: %s: says \"%s\"",
		b->name, what))
		diag("  stderr: %s", text ? text : "(none)");
	free(text);
	return ret;
}

static void test_bad_submits(void)
{
	const struct bad cases[] = {
		{ "parameter kind 99", -EINVAL, KID(K_STEP, 0), 0,
		  { { .kind = 99, .base = gbuf, .size = 8 } }, 1 },
		{ "INPUT with a NULL base", -EINVAL, KID(K_STEP, 0), 0,
		  { PTO_IN(NULL, 0, 8) }, 1 },
		{ "INOUT with a NULL base", -EINVAL, KID(K_STEP, 0), 0,
		  { PTO_INOUT(NULL, 0, 8) }, 1 },
		{ "OUTPUT with a NULL ref", -EINVAL, KID(K_STEP, 0), 0,
		  { PTO_OUT(NULL, 64) }, 1 },
		{ "NULL params", -EINVAL, KID(K_STEP, 0), 0, { { 0 } }, 0 },
		{ "PTO_MAX_PARAMS + 1 params", -EINVAL, KID(K_SCALARS, 0), 0,
		  { { 0 } }, PTO_MAX_PARAMS + 1 },
		{ "a built-in op with PTO_MAX_ARGS + 1 params", -E2BIG,
		  K_BUILTIN_NOP, 0, { { 0 } }, PTO_MAX_ARGS + 1 },
		{ "worker type PTO_NUM_WORKER_TYPES", -EINVAL, KID(K_STEP, 0),
		  PTO_NUM_WORKER_TYPES, { PTO_INOUT(gbuf, 8, 8) }, 1 },
		{ "worker type -1", -EINVAL, KID(K_STEP, 0), -1,
		  { PTO_INOUT(gbuf, 8, 8) }, 1 },
		{ "unknown kernel id", -ENOENT, K_UNKNOWN, 0,
		  { PTO_INOUT(gbuf, 8, 8) }, 1 },
		{ "kernel id >= PTO_MAX_KERNELS", -ENOENT, PTO_MAX_KERNELS, 0,
		  { PTO_INOUT(gbuf, 8, 8) }, 1 },
		{ "OUTPUT larger than the heap ring", -E2BIG, KID(K_FILL, 0), 0,
		  { PTO_OUT(&gref, (1 << 16) + 1) }, 1 },
	};
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_rec r;
	size_t i;
	int ret;

	tl_config(&cfg, 16, 1 << 16);
	cfg.stall_timeout_ms = 30000;
	rt = make_rt(&cfg, &r);
	test_register(rt);
	if (pto_kernel_register_builtin(rt, K_BUILTIN_NOP, PTO_WORKER_CUBE,
					PTO_OP_NOP))
		bail_out("register_builtin NOP");
	gbuf = pto_malloc(rt, 64);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, 64);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *b = &cases[i];
		struct bad copy = *b;

		/* kernel id >= PTO_MAX_KERNELS: -EINVAL is as good */
		if (b->kid == PTO_MAX_KERNELS) {
			ret = run_said(rt, &copy, "kernel id 1024 is out of "
				       "range (0 to 1023)");
			if (bad_rc == -EINVAL)
				copy.want = -EINVAL;
		} else {
			ret = pto_run(rt, orch_bad, &copy);
		}
		ok_eq(bad_rc, copy.want, "submit: %s", b->name);
		ok_eq(ret, copy.want, "submit: %s: pto_run returns it",
		      b->name);
		if (b->want == -E2BIG)
			ok(bad_ns < 5000000000ull,
			   "submit: %s fails at once (%llu ms, stall timeout 30 s)",
			   b->name, (unsigned long long)(bad_ns / 1000000));
	}
	check_recovers(rt, &r, "bad submits");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/*
 * A pointer into the middle of a runtime-made buffer as a parameter's
 * base: the TensorMap names a tensor by its base, so the access was
 * ordered after nothing and held no owner (the buffer could be freed and
 * reused under it).  Refused, naming the parameter; the buffer's own
 * pointer with the offset is accepted, and so is any base in the
 * program's pto_malloc() memory, which the runtime does not free.
 */
struct interior {
	int inside, alloc_inside, as_offset, user_memory;
	char *text;
};

static int orch_interior(struct pto_runtime *rt, void *arg)
{
	struct interior *c = arg;
	uint64_t words = 32;
	struct pto_view v = pto_view_nd(NULL, PTO_DTYPE_U32, 1, &words);
	struct tl_capture cap;
	void *t;
	struct pto_param fill[] = { PTO_OUT(&t, 128), PTO_SCALAR(16),
				    PTO_SCALAR(1) };

	if (pto_submit_task(rt, KID(K_FILL, 0), 0, fill, 3) < 0 ||
	    pto_alloc(rt, &v))
		return -1;
	{
		struct pto_param in[] = { PTO_INOUT(gbuf, 0, 8),
					  PTO_IN((char *)t + 64, 0, 8),
					  PTO_SCALAR(8) };
		struct pto_param al[] = { PTO_INOUT(gbuf, 0, 8),
					  PTO_IN((char *)v.base + 4, 0, 4),
					  PTO_SCALAR(4) };
		struct pto_param off[] = { PTO_INOUT(gbuf, 0, 8),
					   PTO_IN(t, 64, 8), PTO_SCALAR(8) };
		struct pto_param user[] = { PTO_INOUT((char *)gbuf + 8, 0, 8),
					    PTO_IN(t, 0, 8), PTO_SCALAR(8) };

		tl_capture_begin(&cap);
		c->inside = (int)pto_submit_task(rt, KID(K_COPYB, 0), 0, in,
						 3);
		c->alloc_inside = (int)pto_submit_task(rt, KID(K_COPYB, 0), 0,
						       al, 3);
		c->text = tl_capture_end(&cap);
		c->as_offset = pto_submit_task(rt, KID(K_COPYB, 0), 0, off,
					       3) < 0 ? -1 : 0;
		c->user_memory = pto_submit_task(rt, KID(K_COPYB, 0), 0, user,
						 3) < 0 ? -1 : 0;
	}
	return 0;
}

static void test_interior_base(void)
{
	struct interior c = { 0 };
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_rec r;
	int ret;

	tl_config(&cfg, 16, 1 << 16);
	rt = make_rt(&cfg, &r);
	test_register(rt);
	gbuf = pto_malloc(rt, 64);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, 64);
	ret = pto_run(rt, orch_interior, &c);
	ok_eq(ret, 0, "interior base: the run completes");
	ok_eq(c.inside, -EINVAL, "interior base: a pointer 64 bytes into an "
	      "OUTPUT buffer is refused");
	ok_eq(c.alloc_inside, -EINVAL, "interior base: a pointer into a "
	      "pto_alloc() buffer is refused");
	if (!ok(c.text && strstr(c.text, "parameter 1: base 0x") &&
		strstr(c.text, "is not the first byte of a live buffer"),
		"interior base: the message names the parameter and why"))
		diag("  stderr: %s", c.text ? c.text : "(none)");
	ok_eq(c.as_offset, 0, "interior base: the buffer's pointer with "
	      "offset 64 is accepted");
	ok_eq(c.user_memory, 0, "interior base: a pointer into pto_malloc() "
	      "memory is the program's to name: accepted");
	free(c.text);
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/*
 * pto_alloc() of exactly the heap ring's size: its view descriptor shares
 * the task's heap block, so it does not fit; the message names the call
 * the program made and what the block holds.
 */
static int alloc_rc;

/* pto_alloc() of *arg bytes (a multiple of 4) */
static int orch_alloc_whole_heap(struct pto_runtime *rt, void *arg)
{
	uint64_t words = *(uint64_t *)arg / 4;
	struct pto_view v = pto_view_nd(NULL, PTO_DTYPE_U32, 1, &words);

	alloc_rc = pto_alloc(rt, &v);
	return 0;
}

static void test_alloc_too_big(void)
{
	static const char *const words[] = { "pto_alloc:", "the buffer",
					     "(65536 bytes)", "view descriptors",
					     "ring 0's heap ring", NULL };
	static const char *const too_big[] = { "pto_alloc:", "a buffer of "
					       "1048576 bytes", "larger than "
					       "ring 0's heap ring (65536 "
					       "bytes", NULL };
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	char *text;

	tl_config(&cfg, 16, 1 << 16);
	if (pto_runtime_create(&cfg, &rt))
		bail_out("pto_runtime_create");
	uint64_t bytes = 1 << 16;

	tl_capture_begin(&cap);
	pto_run(rt, orch_alloc_whole_heap, &bytes);
	text = tl_capture_end(&cap);
	ok_eq(alloc_rc, -E2BIG, "pto_alloc of the whole heap ring is -E2BIG");
	if (!ok(line_has(text, words),
		"pto_alloc: the message names pto_alloc, the buffer and its "
		"view descriptor"))
		diag("  stderr: %s", text);
	free(text);
	bytes = 1 << 20;
	tl_capture_begin(&cap);
	pto_run(rt, orch_alloc_whole_heap, &bytes);
	text = tl_capture_end(&cap);
	ok_eq(alloc_rc, -E2BIG, "pto_alloc of 16 heap rings is -E2BIG");
	if (!ok(line_has(text, too_big) && !strstr(text, "parameter"),
		"pto_alloc: too big for the ring: the message names the "
		"buffer, not a parameter the program never passed"))
		diag("  stderr: %s", text);
	free(text);
	pto_runtime_destroy(rt);
}

/* ---- a task that needs more of a pool than it has ------------------------ */

/*
 * POOL_PARAMS accesses of words of pool_buf, by one task, in a ring whose
 * pools hold 16 entries: more TensorMap entries than the pool has is
 * refused at once, like an OUTPUT larger than the heap; more producers
 * than the dependency pool holds waits for them to retire, unless a scope
 * still holds them.  Both waited the stall timeout and reported a
 * deadlock of a task that was long retired.
 */
#define POOL_PARAMS 40
#define POOL_SIZE 16
#define K_ONE 72	/* dst: dst[0] = 1 */
#define K_READ 73	/* reads nothing */

enum pool_case { POOL_TM, POOL_DEP_RETIRE, POOL_DEP_HELD };

static uint64_t pool_buf[POOL_PARAMS];
static int64_t pool_rc;

static void k_one(const uint64_t *a, uint32_t n)
{
	*(uint64_t *)(uintptr_t)a[0] = 1;
}

static void k_read(const uint64_t *a, uint32_t n)
{
}

static int orch_pool(struct pto_runtime *rt, void *arg)
{
	enum pool_case c = *(enum pool_case *)arg;
	struct pto_param p[POOL_PARAMS];
	void *out[POOL_PARAMS];
	int64_t id;
	int i;

	for (i = 0; i < POOL_PARAMS; i++) {
		id = 0;
		if (c == POOL_DEP_RETIRE)	/* a writer of each word */
			id = PTO_SUBMIT(rt, K_ONE, PTO_WORKER_VECTOR,
					PTO_INOUT(pool_buf, i * 8, 8));
		else if (c == POOL_DEP_HELD)	/* a buffer the scope holds */
			id = PTO_SUBMIT(rt, K_ONE, PTO_WORKER_VECTOR,
					PTO_OUT(&out[i], 8));
		if (id < 0)
			return (int)id;
		p[i] = c == POOL_DEP_HELD ? (struct pto_param)PTO_IN(out[i], 0, 8) :
		       (struct pto_param)PTO_IN(pool_buf, i * 8, 8);
	}
	pool_rc = pto_submit_task(rt, K_READ, PTO_WORKER_VECTOR, p,
				  POOL_PARAMS);
	return 0;
}

static void test_pool_smaller_than_task(void)
{
	static const char *const tm_words[] = {
		"pto_submit_task:", "40 accesses", "ring 0's TensorMap pool",
		"16 entries", "PTO_TENSORMAP_POOL", NULL };
	static const char *const dep_words[] = {
		"pto_submit_task:", "40 producers alive", "open scopes",
		"ring 0's dependency pool", "PTO_DEP_POOL", NULL };
	enum pool_case c;
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	uint64_t t0;
	char *text;
	int ret;

	tl_config(&cfg, 64, 1 << 16);
	cfg.nrings = 1;
	cfg.tensormap_pool_size = POOL_PARAMS * 2;
	cfg.dep_pool_size = POOL_SIZE;
	cfg.stall_timeout_ms = 5000;
	for (c = POOL_TM; c <= POOL_DEP_HELD; c++) {
		if (c == POOL_TM) {
			cfg.tensormap_pool_size = POOL_SIZE;
			cfg.dep_pool_size = POOL_PARAMS * 2;
		} else {
			cfg.tensormap_pool_size = POOL_PARAMS * 2;
			cfg.dep_pool_size = POOL_SIZE;
		}
		rt = tl_runtime(&cfg);
		if (pto_kernel_register(rt, K_ONE, PTO_WORKER_VECTOR, k_one,
					"one") ||
		    pto_kernel_register(rt, K_READ, PTO_WORKER_VECTOR, k_read,
					"read"))
			bail_out("cannot register kernels");
		memset(pool_buf, 0, sizeof(pool_buf));
		pool_rc = 0;
		t0 = tl_now_ns();
		tl_capture_begin(&cap);
		ret = pto_run(rt, orch_pool, &c);
		text = tl_capture_end(&cap);
		t0 = (tl_now_ns() - t0) / 1000000;
		if (c == POOL_DEP_RETIRE)
			ok(pool_rc >= 0 && ret == 0 && pool_buf[0] == 1 &&
			   pool_buf[POOL_PARAMS - 1] == 1,
			   "40 producers, a dependency pool of 16: they retire, "
			   "and the task runs after them (%lld, run %d)",
			   (long long)pool_rc, ret);
		else
			ok(pool_rc == -E2BIG && ret == 0 && t0 < 2500 &&
			   line_has(text, c == POOL_TM ? tm_words : dep_words),
			   "%s: -E2BIG (%lld after %llu ms), saying which pool, "
			   "its setting and why", c == POOL_TM ?
			   "40 accesses, a TensorMap pool of 16" :
			   "40 producers a scope holds, a dependency pool of 16",
			   (long long)pool_rc, (unsigned long long)t0);
		if (pool_rc < 0 && !strstr(text, "pto_submit_task"))
			diag("  stderr: %s", text);
		free(text);
		pto_runtime_destroy(rt);
	}
}

/*
 * A task whose OUTPUT and argument array (30 words: past the descriptor's
 * 24) together exceed the heap: the message gives each part as asked,
 * 240 bytes of arguments, then the total with the block's rounding
 * (the argument array's 256).
 */
static int64_t args_rc;

static int orch_args_too_big(struct pto_runtime *rt, void *arg)
{
	struct pto_param p[30];
	void *out;
	int i;

	p[0] = (struct pto_param)PTO_OUT(&out, (1 << 16) - 128);
	for (i = 1; i < 30; i++)
		p[i] = (struct pto_param)PTO_SCALAR(i);
	args_rc = pto_submit_task(rt, K_ONE, PTO_WORKER_VECTOR, p, 30);
	return 0;
}

static void test_args_too_big(void)
{
	static const char *const words[] = {
		"pto_submit_task:", "its OUTPUTs (65408 bytes)",
		"argument array (240 bytes)", "take 65664 bytes of heap in all",
		NULL };
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	char *text;

	tl_config(&cfg, 16, 1 << 16);
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_ONE, PTO_WORKER_VECTOR, k_one, "one"))
		bail_out("cannot register the kernel");
	tl_capture_begin(&cap);
	pto_run(rt, orch_args_too_big, NULL);
	text = tl_capture_end(&cap);
	if (!ok(args_rc == -E2BIG && line_has(text, words),
		"an OUTPUT and 30 arguments past the heap: -E2BIG (%lld), the "
		"arguments as asked (240 bytes), the total as taken",
		(long long)args_rc))
		diag("  stderr: %s", text);
	free(text);
	pto_runtime_destroy(rt);
}

/* ---- unbalanced scopes --------------------------------------------------- */

static int scope_rc[2];

static int orch_unbalanced(struct pto_runtime *rt, void *arg)
{
	int which = *(int *)arg;

	if (which == 0) {
		/* closing the outer scope of pto_run is not allowed */
		scope_rc[0] = pto_scope_end(rt);
	} else {
		pto_scope_begin(rt);
		if (pto_scope_end(rt))
			return -EPROTO;
		scope_rc[1] = pto_scope_end(rt);
	}
	return 0;
}

static void test_scopes(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_rec r;
	int which;

	tl_config(&cfg, 16, 1 << 16);
	rt = make_rt(&cfg, &r);
	gbuf = pto_malloc(rt, 64);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, 64);
	for (which = 0; which < 2; which++) {
		pto_run(rt, orch_unbalanced, &which);
		ok_eq(scope_rc[which], -EINVAL,
		      "scope: %s pto_scope_end is -EINVAL",
		      which ? "a second" : "an outermost");
	}
	check_recovers(rt, &r, "unbalanced scopes");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/*
 * With two runtimes, a refusal outside a run says whose runtime it is
 * about, as every other line does: the calling thread is in neither's
 * name then (no run, not a core thread).
 */
static void test_refusal_names_runtime(void)
{
	struct pto_runtime *a, *b;
	struct tl_capture cap;
	struct pto_config cfg;
	char *text;
	int ret;

	tl_config(&cfg, 16, 1 << 16);
	a = tl_runtime(&cfg);
	b = tl_runtime(&cfg);
	tl_capture_begin(&cap);
	ret = pto_scope_begin(b);
	text = tl_capture_end(&cap);
	if (!ok(ret == -EINVAL && strstr(text, "pto: [runtime ") &&
		strstr(text, ", sim] pto_scope_begin: no run in progress"),
		"two runtimes: pto_scope_begin outside a run names its "
		"runtime (%d)", ret))
		diag("  stderr: %s", text);
	free(text);
	pto_runtime_destroy(b);
	pto_runtime_destroy(a);
}

/* ---- deadlocks ----------------------------------------------------------- */

struct dl {
	struct tl_rec *r;
	int ntasks;		/* submit at most this many */
	uint64_t out_size;	/* 0: INOUT chain, else FILLB tasks */
	int64_t rc;		/* first failed submit, or 0 */
	int submitted;		/* successful submits */
};

/* One scope submitting up to ntasks tasks; stops at the first error. */
static int orch_deadlock(struct pto_runtime *rt, void *arg)
{
	struct dl *d = arg;
	void *t;
	int i;

	d->rc = 0;
	d->submitted = 0;
	pto_scope_begin(rt);
	for (i = 0; i < d->ntasks && d->rc >= 0; i++) {
		if (d->out_size)
			d->rc = SUBMIT(d->r, K_FILLB, PTO_WORKER_VECTOR,
				       PTO_OUT(&t, d->out_size),
				       PTO_SCALAR(d->out_size), PTO_SCALAR(i));
		else	/* a buffer each: the scope holds the task */
			d->rc = SUBMIT(d->r, K_STEP, i % 2,
				       PTO_INOUT(gbuf, 0, 8), PTO_SCALAR(1),
				       PTO_SCALAR(i), PTO_OUT(&t, 64));
		d->submitted += d->rc >= 0;
	}
	pto_scope_end(rt);
	return d->rc < 0 ? (int)d->rc : 0;
}

static int has_word(const char *text, const char *word)
{
	const char *p;

	for (p = text; *p; p++)
		if (!strncasecmp(p, word, strlen(word)))
			return 1;
	return 0;
}

struct dl_case {
	const char *name;
	const char *resource;	/* word the diagnostic must contain */
	enum pto_ring ring;
	uint64_t size;		/* of that ring */
	uint64_t out_size;	/* see struct dl */
};

static const char *const ring_env[PTO_NUM_RINGS] = {
	[PTO_RING_TASK] = "PTO_TASK_WINDOW=",
	[PTO_RING_HEAP] = "PTO_HEAP_SIZE=",
	[PTO_RING_DEP] = "PTO_DEP_POOL=",
	[PTO_RING_TENSORMAP] = "PTO_TENSORMAP_POOL=",
};

/*
 * The size the diagnostic suggests: after the ring's environment variable
 * ("PTO_TASK_WINDOW=8") when it names one, else the largest number above
 * the current size that is no duration ("204 ms").
 */
static uint64_t suggestion(const char *text, const struct dl_case *c)
{
	const char *env = strstr(text, ring_env[c->ring]);
	uint64_t best = 0, v;
	const char *p;
	char *end;

	if (env) {
		/* one size per task ring: the largest is the one advised */
		uint64_t list[PTO_MAX_RINGS];
		int n = tl_numbers(env + strlen(ring_env[c->ring]), list,
				   PTO_MAX_RINGS), i;

		for (i = 0; i < n; i++)
			best = list[i] > best ? list[i] : best;
		return best > c->size ? best : 0;
	}
	for (p = text; *p; p++) {
		if (!isdigit((unsigned char)*p) ||
		    (p > text && isalnum((unsigned char)p[-1])))
			continue;
		v = strtoull(p, &end, 10);
		while (*end == ' ')
			end++;
		if (!strncmp(end, "ms", 2) || !strncmp(end, "ns", 2) ||
		    !strncmp(end, "us", 2) ||
		    (end[0] == 's' && !isalpha((unsigned char)end[1])))
			continue;
		if (v > c->size && v <= (1ull << 30) && v > best &&
		    (c->ring != PTO_RING_TASK || !(v & (v - 1))))
			best = v;
	}
	return best;
}

static void dl_config(struct pto_config *cfg, const struct dl_case *c,
		      uint64_t size)
{
	tl_config(cfg, 64, 1 << 20);
	switch (c->ring) {
	case PTO_RING_TASK:
		cfg->task_window = size;
		break;
	case PTO_RING_HEAP:
		cfg->heap_size = size;
		break;
	case PTO_RING_DEP:
		cfg->dep_pool_size = size;
		break;
	default:
		cfg->tensormap_pool_size = size;
	}
}

/*
 * One scope that needs more of a ring than it has: check the error, the
 * time it took and the diagnostic, and that the runtime recovers.  Then
 * re-run the scope up to the submit that blocked (the runtime cannot know
 * what a scope would submit later, but it knows that one) with the size
 * the diagnostic suggested: that must complete.
 */
static void deadlock_case(const struct dl_case *c)
{
	const char *name = c->name;
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	struct tl_rec r;
	struct dl d = { .r = &r, .ntasks = 1000, .out_size = c->out_size };
	uint64_t nums[64], t0, ms, fix = 0;
	char *text;
	int i, n, ret, has_cur = 0;

	dl_config(&cfg, c, c->size);
	cfg.stall_timeout_ms = 200;
	rt = make_rt(&cfg, &r);
	gbuf = pto_malloc(rt, 64);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, 64);

	tl_capture_begin(&cap);
	t0 = tl_now_ns();
	ret = pto_run(rt, orch_deadlock, &d);
	ms = (tl_now_ns() - t0) / 1000000;
	text = tl_capture_end(&cap);

	ok_eq(d.rc, -EDEADLK, "%s: the blocked submit returns -EDEADLK", name);
	ok_eq(ret, -EDEADLK, "%s: pto_run returns -EDEADLK", name);
	ok(ms >= 150 && ms < 10000,
	   "%s: reported after the 200 ms stall timeout (%llu ms)", name,
	   (unsigned long long)ms);
	ok(has_word(text, c->resource), "%s: the diagnostic names the %s",
	   name, c->resource);
	n = tl_numbers(text, nums, 64);
	for (i = 0; i < n; i++)
		has_cur |= nums[i] == c->size;
	fix = suggestion(text, c);
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		diag("  stderr: %s", l);
	ok(has_cur, "%s: the diagnostic gives the size %llu", name,
	   (unsigned long long)c->size);
	ok(fix, "%s: the diagnostic suggests a larger size", name);
	check_recovers(rt, &r, name);
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
	free(text);
	if (!fix || d.rc != -EDEADLK)
		return;

	dl_config(&cfg, c, fix);
	cfg.stall_timeout_ms = 5000;
	rt = make_rt(&cfg, &r);
	gbuf = pto_malloc(rt, 64);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, 64);
	d.ntasks = d.submitted + 1;
	ok_eq(pto_run(rt, orch_deadlock, &d), 0,
	      "%s: the suggested size %llu runs the %d tasks", name,
	      (unsigned long long)fix, d.ntasks);
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

static const struct dl_case dl_cases[] = {
	{ "task window deadlock", "task", PTO_RING_TASK, 4, 0 },
	{ "heap deadlock", "heap", PTO_RING_HEAP, 4096, 1024 },
	{ "dependency pool deadlock", "dep", PTO_RING_DEP, 16, 0 },
	{ "TensorMap pool deadlock", "tensormap", PTO_RING_TENSORMAP, 16, 64 },
};

/* ---- a failing kernel ---------------------------------------------------- */

struct fail_ctx {
	struct tl_rec *r;
	int return_error;	/* the orchestration returns -ECANCELED */
	int64_t first_bad;	/* first failed submit */
	int64_t again;		/* the submit after it */
	long submits;
};

static int orch_fail(struct pto_runtime *rt, void *arg)
{
	struct fail_ctx *f = arg;
	uint64_t t0 = tl_now_ns();
	int64_t id;

	f->first_bad = f->again = 0;
	f->submits = 0;
	/* the second time as userspace spells an errno: EIO */
	if (pto_submit_task(rt, K_FAIL, PTO_WORKER_VECTOR,
			    (struct pto_param[]){
				    PTO_SCALAR(f->return_error) }, 1) < 0)
		return -EPROTO;
	/*
	 * Keep submitting (a scope per task, so the window never fills)
	 * until the runtime has noticed the failure.  The bound only stops
	 * a broken runtime; a working one cancels within microseconds.
	 */
	for (;;) {
		pto_scope_begin(rt);
		id = pto_submit_task(rt, KID(K_STEP, PTO_WORKER_CUBE),
				     PTO_WORKER_CUBE,
				     (struct pto_param[]){
					     PTO_INOUT(gbuf, 0, 8),
					     PTO_SCALAR(1), PTO_SCALAR(0) },
				     3);
		pto_scope_end(rt);
		f->submits++;
		if (id < 0 || tl_now_ns() - t0 > 10000000000ull)
			break;
	}
	f->first_bad = id;
	f->again = pto_submit_task(rt, KID(K_STEP, PTO_WORKER_CUBE),
				   PTO_WORKER_CUBE,
				   (struct pto_param[]){ PTO_INOUT(gbuf, 0, 8),
							 PTO_SCALAR(1),
							 PTO_SCALAR(0) }, 3);
	return f->return_error && id < 0 ? (int)id : 0;
}

static void test_failing_kernel(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_rec r;
	struct fail_ctx f = { .r = &r };
	struct pto_stats st;
	int ret;

	tl_config(&cfg, 16, 1 << 16);
	rt = make_rt(&cfg, &r);
	gbuf = pto_malloc(rt, 64);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, 64);
	for (f.return_error = 0; f.return_error < 5; f.return_error++) {
		static const char *const hows[] = {
			"set_error(-EIO), orchestration returns 0",
			"set_error(EIO), orchestration returns -ECANCELED",
			"set_error(-4242), no errno: -EIO",
			"set_error(-134), no errno: -EIO",
			"set_error(-ECANCELED), the runtime's own: -EIO",
		};
		const char *how = hows[f.return_error];

		static const char *const words[] = {
			"task ", "kernel 45", "\"fail\"", "vector", "core ",
			"Input/output error", "(-5)", "not started yet, earlier "
			"ones too, are cancelled", NULL };
		struct tl_capture cap;
		char *text;

		tl_capture_begin(&cap);
		ret = pto_run(rt, orch_fail, &f);
		text = tl_capture_end(&cap);
		ok_eq(ret, -EIO, "failing kernel (%s): pto_run returns -EIO",
		      how);
		if (!ok(line_has(text, words) &&
			count_lines(text, "failed:") == 1,
			"failing kernel (%s): the failed task is reported once, "
			"with its id, kernel, worker type, core and status", how))
			diag("  stderr: %s", text);
		free(text);
		ok_eq(f.first_bad, -ECANCELED,
		      "failing kernel (%s): a later submit returns -ECANCELED (after %ld)",
		      how, f.submits);
		ok_eq(f.again, -ECANCELED,
		      "failing kernel (%s): and so does the next", how);
		check_recovers(rt, &r, "failing kernel");
	}
	ok(pto_get_stats(rt, &st) == 0 && st.tasks_failed >= 2,
	   "failing kernel: stats count the failed tasks");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* ---- built-in ops: arity and regions, checked at submit ------------------- */

enum { B_COPY = 80, B_FILL, B_ADD, B_GEMM, B_SOFTMAX };

struct op_case {
	const char *name;
	uint32_t kid;
	struct pto_param p[8];
	uint32_t n;
	const char *const words[6];	/* the message's line has them all */
};

static float *obuf;

static int64_t op_rc;

static int orch_op(struct pto_runtime *rt, void *arg)
{
	const struct op_case *c = arg;

	op_rc = pto_submit_task(rt, c->kid, PTO_WORKER_VECTOR, c->p, c->n);
	return op_rc < 0 ? (int)op_rc : 0;
}

static void test_op_checks(void)
{
	static const struct {
		uint32_t kid, op;
	} reg[] = {
		{ B_COPY, PTO_OP_COPY }, { B_FILL, PTO_OP_FILL_U32 },
		{ B_ADD, PTO_OP_ADD_F32 }, { B_GEMM, PTO_OP_GEMM_F32 },
		{ B_SOFTMAX, PTO_OP_SOFTMAX_PREP_F32 },
	};
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	struct tl_rec r;
	size_t i;
	char *text;
	int ret, all;

	tl_config(&cfg, 16, 1 << 16);
	rt = make_rt(&cfg, &r);
	for (i = 0; i < sizeof(reg) / sizeof(reg[0]); i++)
		if (pto_kernel_register_builtin(rt, reg[i].kid,
						PTO_WORKER_VECTOR, reg[i].op))
			bail_out("register built-in %u", reg[i].op);
	obuf = pto_malloc(rt, 4096);
	/* check_recovers() runs in gbuf: this runtime's, not a gone one's */
	gbuf = pto_malloc(rt, 64);
	if (!obuf || !gbuf)
		bail_out("pto_malloc");
	memset(obuf, 0, 4096);
	{
		const struct op_case cases[] = {
			{ "COPY with 2 of its 3 parameters", B_COPY,
			  { PTO_OUT_EXISTING(obuf, 0, 64), PTO_IN(obuf, 64, 64) },
			  2, { "copy", "takes 3 parameters", "nbytes", "got 2" } },
			{ "COPY writing 128 bytes into a 64-byte OUTPUT", B_COPY,
			  { PTO_OUT_EXISTING(obuf, 0, 64),
			    PTO_IN(obuf, 1024, 128), PTO_SCALAR(128) },
			  3, { "copy", "dst", "64 bytes", "touches 128",
			       "nbytes = 128 bytes" } },
			{ "COPY reading past its INPUT", B_COPY,
			  { PTO_OUT_EXISTING(obuf, 0, 256),
			    PTO_IN(obuf, 1024, 100), PTO_SCALAR(200) },
			  3, { "copy", "src", "100 bytes", "touches 200" } },
			{ "COPY with its length not a SCALAR", B_COPY,
			  { PTO_OUT_EXISTING(obuf, 0, 64),
			    PTO_IN(obuf, 1024, 64), PTO_IN(obuf, 2048, 8) },
			  3, { "copy", "nbytes", "PTO_SCALAR" } },
			{ "FILL_U32 of 6 bytes", B_FILL,
			  { PTO_OUT_EXISTING(obuf, 0, 64), PTO_SCALAR(1),
			    PTO_SCALAR(6) },
			  3, { "fill_u32", "nbytes = 6", "multiple of 4" } },
			{ "ADD_F32 of 32 elements into 64 bytes", B_ADD,
			  { PTO_OUT_EXISTING(obuf, 0, 64), PTO_IN(obuf, 1024, 128),
			    PTO_IN(obuf, 2048, 128), PTO_SCALAR(32) },
			  4, { "add_f32", "dst", "64 bytes", "touches 128",
			       "n = 32 4-byte elements" } },
			{ "GEMM with a B too small for K x N", B_GEMM,
			  { PTO_INOUT(obuf, 0, 64), PTO_IN(obuf, 1024, 64),
			    PTO_IN(obuf, 2048, 60), PTO_SCALAR(4),
			    PTO_SCALAR(4), PTO_SCALAR(4) },
			  6, { "gemm_f32", "B (parameter 2)", "60 bytes",
			       "touches 64", "K = 4, N = 4" } },
			{ "SOFTMAX_PREP with 0 columns", B_SOFTMAX,
			  { PTO_OUT_EXISTING(obuf, 0, 64), PTO_OUT_EXISTING(obuf, 64, 16),
			    PTO_OUT_EXISTING(obuf, 128, 16), PTO_IN(obuf, 1024, 64),
			    PTO_SCALAR(0), PTO_SCALAR(4), PTO_SCALAR(0) },
			  7, { "softmax_prep_f32", "cols", "not be 0" } },
		};

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const struct op_case *c = &cases[i];

			tl_capture_begin(&cap);
			ret = pto_run(rt, orch_op, (void *)c);
			text = tl_capture_end(&cap);
			ok_eq(op_rc, -EINVAL, "op check: %s is -EINVAL at submit",
			      c->name);
			ok_eq(ret, -EINVAL, "op check: %s: pto_run returns it",
			      c->name);
			all = line_has(text, c->words);
			if (!ok(all, "op check: %s: the message names the op and "
				"the sizes", c->name))
				diag("  stderr: %s", text);
			free(text);
		}
	}
	/* the same ops, within their regions, are accepted and run */
	{
		const struct op_case good = { "COPY of 64 bytes", B_COPY,
			{ PTO_OUT_EXISTING(obuf, 0, 64), PTO_IN(obuf, 1024, 64),
			  PTO_SCALAR(64) }, 3, { NULL } };

		obuf[256] = 7.5f;
		ok_eq(pto_run(rt, orch_op, (void *)&good), 0,
		      "op check: a COPY within its regions runs");
		ok(obuf[0] == 7.5f, "op check: and copies");
	}
	check_recovers(rt, &r, "op checks");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/*
 * Tensor view parameters of built-in ops, checked at submit as the device
 * checks the views it receives: pto_op_check() directly.
 */
struct view_case {
	const char *name;
	uint32_t op;
	struct pto_param p[8];
	uint32_t n;
	int ret;
	const char *const words[6];	/* the message's line has them all */
};

static void test_view_op_checks(void)
{
	static float m[64 * 64];
	struct pto_view a = pto_view_2d(m, PTO_DTYPE_F32, 4, 8, 64);
	struct pto_view bt = pto_view_transpose(
		pto_view_2d(m, PTO_DTYPE_F32, 16, 8, 64), 0, 1);
	struct pto_view c = pto_view_tile_2d(
		pto_view_2d(m, PTO_DTYPE_F32, 64, 64, 64), 8, 8, 4, 16);
	struct pto_view a_t = pto_view_transpose(a, 0, 1);
	struct pto_view h = a, d3 = a, d0 = a, vec = pto_view_2d(m,
		PTO_DTYPE_F32, 1, 4, 4);
	struct pto_view u8 = pto_view_2d(m, PTO_DTYPE_U8, 4, 4, 64);
	struct pto_view f16 = pto_view_2d(m, PTO_DTYPE_F16, 4, 4, 64);
	struct pto_view e16 = pto_view_2d(m, PTO_DTYPE_F32, 4, 4, 64);
	struct pto_view e8 = pto_view_2d(m, PTO_DTYPE_F32, 2, 4, 64);
	struct pto_view e16f = pto_view_slice(pto_view_2d(m, PTO_DTYPE_F32,
		1, 16, 16), 0, 0, 1);
	struct pto_view u32v = pto_view_2d(m, PTO_DTYPE_I32, 4, 4, 64);
	struct pto_view v4 = e16;
	/* 2 bytes past an element boundary; u8 views may start anywhere */
	struct pto_view off2 = pto_view_2d((char *)m + 2, PTO_DTYPE_F32, 4, 4,
					   64);
	struct pto_view h_odd = pto_view_2d((char *)m + 1, PTO_DTYPE_F16, 4,
					    4, 64);
	struct pto_view u8_odd = pto_view_2d((char *)m + 1, PTO_DTYPE_U8, 4,
					     4, 64);
	uint64_t n4 = 4;
	struct tl_capture cap;
	size_t i;
	char *text;
	int ret;

	h.dtype = PTO_DTYPE_F16;
	d3.ndim = 3;
	d3.shape[2] = 1;
	d0.ndim = 0;
	e16f.ndim = 1;		/* 16 elements, 1-D */
	v4 = pto_view_nd(m, PTO_DTYPE_F32, 1, &n4);
	{
		const struct view_case cases[] = {
			{ "GEMM on a tile of C, B as a transposed view",
			  PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(&c), PTO_IN_VIEW(&a),
			    PTO_IN_VIEW(&bt), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, 0, { NULL } },
			{ "GEMM with a plain C and A, B a view",
			  PTO_OP_GEMM_F32,
			  { PTO_INOUT(m, 0, 4 * 16 * 4), PTO_IN(m, 0, 4 * 8 * 4),
			    PTO_IN_VIEW(&bt), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, 0, { NULL } },
			{ "GEMM with A of the wrong shape", PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(&c), PTO_IN_VIEW(&a_t),
			    PTO_IN_VIEW(&bt), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, -EINVAL,
			  { "gemm_f32", "A (parameter 1)", "shape 8 x 4",
			    "M x K = 4 x 8" } },
			{ "GEMM with an f16 view", PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(&c), PTO_IN_VIEW(&h),
			    PTO_IN_VIEW(&bt), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, -EINVAL,
			  { "A (parameter 1)", "f16 elements", "takes f32" } },
			{ "GEMM with a 3-D view", PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(&c), PTO_IN_VIEW(&d3),
			    PTO_IN_VIEW(&bt), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, -EINVAL,
			  { "A (parameter 1)", "shape 4 x 8 x 1", "2-D" } },
			{ "GEMM with a view of 0 dimensions", PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(&c), PTO_IN_VIEW(&d0),
			    PTO_IN_VIEW(&bt), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, -EINVAL,
			  { "A (parameter 1)", "0 dimensions" } },
			{ "GEMM with a NULL view", PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(NULL), PTO_IN_VIEW(&a),
			    PTO_IN_VIEW(&bt), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, -EINVAL,
			  { "C (parameter 0)", "NULL" } },
			{ "GEMM with M a view", PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(&c), PTO_IN_VIEW(&a),
			    PTO_IN_VIEW(&bt), PTO_IN_VIEW(&a), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, -EINVAL,
			  { "M (parameter 3)", "PTO_SCALAR" } },
			{ "GEMM: a plain B too small next to views",
			  PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(&c), PTO_IN_VIEW(&a),
			    PTO_IN(m, 0, 100), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, -EINVAL,
			  { "B (parameter 2)", "100 bytes", "touches 512" } },
			{ "SOFTMAX_PREP with m a 2-D view",
			  PTO_OP_SOFTMAX_PREP_F32,
			  { PTO_OUT_EXISTING_VIEW(&e16), PTO_OUT_EXISTING_VIEW(&vec),
			    PTO_OUT_EXISTING_VIEW(&v4), PTO_IN_VIEW(&e16),
			    PTO_SCALAR(0), PTO_SCALAR(4), PTO_SCALAR(4) }, 7,
			  -EINVAL, { "softmax_prep_f32", "m (parameter 1)",
				     "1-D: rows = 4" } },
			{ "SOFTMAX_PREP with 1-D m and l", PTO_OP_SOFTMAX_PREP_F32,
			  { PTO_OUT_EXISTING_VIEW(&e16), PTO_OUT_EXISTING_VIEW(&v4),
			    PTO_OUT_EXISTING_VIEW(&v4), PTO_IN_VIEW(&e16),
			    PTO_SCALAR(0), PTO_SCALAR(4), PTO_SCALAR(4) }, 7, 0,
			  { NULL } },
			{ "ADD_F32 of a 4 x 4 and a 1-D 16 view", PTO_OP_ADD_F32,
			  { PTO_OUT_EXISTING_VIEW(&e16), PTO_IN_VIEW(&e16f),
			    PTO_IN(m, 0, 64), PTO_SCALAR(16) }, 4, -EINVAL,
			  { "add_f32", "a (parameter 1)", "different shape" } },
			{ "ADD_F32 of 8 elements with n = 16", PTO_OP_ADD_F32,
			  { PTO_OUT_EXISTING_VIEW(&e8), PTO_IN_VIEW(&e8),
			    PTO_IN(m, 0, 64), PTO_SCALAR(16) }, 4, -EINVAL,
			  { "dst (parameter 0)", "8 elements", "n = 16" } },
			{ "ADD_F32 of 4 x 4 views and a plain b", PTO_OP_ADD_F32,
			  { PTO_OUT_EXISTING_VIEW(&e16), PTO_IN_VIEW(&e16),
			    PTO_IN(m, 0, 64), PTO_SCALAR(16) }, 4, 0,
			  { NULL } },
			{ "COPY of a u8 view of 16 elements, 16 bytes",
			  PTO_OP_COPY,
			  { PTO_OUT_EXISTING_VIEW(&u8), PTO_IN_VIEW(&u8),
			    PTO_SCALAR(16) }, 3, 0, { NULL } },
			{ "COPY of a u8 view of 16 elements, 20 bytes",
			  PTO_OP_COPY,
			  { PTO_OUT_EXISTING_VIEW(&u8), PTO_IN_VIEW(&u8),
			    PTO_SCALAR(20) }, 3, -EINVAL,
			  { "copy", "16 1-byte elements", "nbytes = 20" } },
			{ "COPY between u8 and f16 views", PTO_OP_COPY,
			  { PTO_OUT_EXISTING_VIEW(&u8), PTO_IN_VIEW(&f16),
			    PTO_SCALAR(16) }, 3, -EINVAL,
			  { "src (parameter 1)", "f16 elements", "u8" } },
			{ "FILL_U32 of an f32 view (a bit pattern)",
			  PTO_OP_FILL_U32,
			  { PTO_OUT_EXISTING_VIEW(&e16), PTO_SCALAR(0),
			    PTO_SCALAR(64) }, 3, 0, { NULL } },
			{ "FILL_U32 of an f16 view", PTO_OP_FILL_U32,
			  { PTO_OUT_EXISTING_VIEW(&f16), PTO_SCALAR(0),
			    PTO_SCALAR(32) }, 3, -EINVAL,
			  { "fill_u32", "f16 elements", "any 4-byte type" } },
			{ "ADD_F32 with a view 2 bytes off its f32 elements",
			  PTO_OP_ADD_F32,
			  { PTO_OUT_EXISTING_VIEW(&e16), PTO_IN_VIEW(&off2),
			    PTO_IN_VIEW(&e16), PTO_SCALAR(16) }, 4, -EINVAL,
			  { "add_f32", "a (parameter 1)",
			    "not aligned to its 4-byte elements" } },
			{ "GEMM with a plain A 2 bytes off", PTO_OP_GEMM_F32,
			  { PTO_INOUT_VIEW(&c), PTO_IN(m, 2, 4 * 8 * 4),
			    PTO_IN_VIEW(&bt), PTO_SCALAR(4), PTO_SCALAR(16),
			    PTO_SCALAR(8) }, 6, -EINVAL,
			  { "gemm_f32", "A (parameter 1)", "not aligned" } },
			{ "FILL_U32 of a plain dst 1 byte off", PTO_OP_FILL_U32,
			  { PTO_OUT_EXISTING(m, 1, 64), PTO_SCALAR(0),
			    PTO_SCALAR(64) }, 3, -EINVAL,
			  { "fill_u32", "dst (parameter 0)", "not aligned" } },
			{ "COPY of u8 views at an odd address", PTO_OP_COPY,
			  { PTO_OUT_EXISTING_VIEW(&u8), PTO_IN_VIEW(&u8_odd),
			    PTO_SCALAR(16) }, 3, 0, { NULL } },
			{ "COPY of bytes at odd addresses", PTO_OP_COPY,
			  { PTO_OUT_EXISTING(m, 3, 16), PTO_IN(m, 101, 16),
			    PTO_SCALAR(16) }, 3, 0, { NULL } },
			{ "COPY from an f16 view to a plain dst 1 byte off",
			  PTO_OP_COPY,
			  { PTO_OUT_EXISTING(m, 1, 32), PTO_IN_VIEW(&f16),
			    PTO_SCALAR(32) }, 3, -EINVAL,
			  { "copy", "dst (parameter 0)",
			    "its 2-byte elements" } },
			{ "COPY of an f16 view at an odd address", PTO_OP_COPY,
			  { PTO_OUT_EXISTING_VIEW(&f16), PTO_IN_VIEW(&h_odd),
			    PTO_SCALAR(32) }, 3, -EINVAL,
			  { "copy", "src (parameter 1)", "not aligned" } },
			{ "ADD_U32 of i32 views, 64 bytes", PTO_OP_ADD_U32,
			  { PTO_OUT_EXISTING_VIEW(&u32v), PTO_IN_VIEW(&u32v),
			    PTO_IN_VIEW(&u32v), PTO_SCALAR(64) }, 4, 0,
			  { NULL } },
		};

		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const struct view_case *vc = &cases[i];

			tl_capture_begin(&cap);
			ret = pto_op_check("pto_submit_task", 7, vc->op, vc->p,
					   vc->n);
			text = tl_capture_end(&cap);
			ok_eq(ret, vc->ret, "view op check: %s", vc->name);
			if (vc->ret && !ok(line_has(text, vc->words),
					   "view op check: %s: the message "
					   "names the parameter", vc->name))
				diag("  stderr: %s", text);
			if (!vc->ret && !ok(!*text, "view op check: %s: no "
					    "message", vc->name))
				diag("  stderr: %s", text);
			free(text);
		}
	}
}

struct run_case {
	struct tl_rec *r;
	int ret;	/* what the orchestration returns */
	bool block;	/* after filling a window of 4 in one scope */
};

static int orch_status(struct pto_runtime *rt, void *arg)
{
	struct run_case *c = arg;
	int64_t rc = 0;
	void *t;
	int i;

	pto_scope_begin(rt);
	for (i = 0; c->block && i < 16 && rc >= 0; i++)
		rc = SUBMIT(c->r, K_STEP, PTO_WORKER_VECTOR,
			    PTO_INOUT(gbuf, 0, 8), PTO_SCALAR(1),
			    PTO_SCALAR(i), PTO_OUT(&t, 64));
	pto_scope_end(rt);
	return c->ret;
}

/*
 * pto_run() reports the run's own error whatever the function returned
 * (the usual "if (pto_submit_task(...) < 0) return -1;"), the function's
 * negative value otherwise, and refuses a positive one.
 */
static void test_run_status(void)
{
	static const struct {
		int ret;
		bool block;
		int want;
		const char *say, *name;
	} cases[] = {
		{ -1, true, -EDEADLK, "deadlock", "-1 after a deadlock" },
		{ -ECANCELED, true, -EDEADLK, "deadlock",
		  "-ECANCELED after a deadlock" },
		{ -ENOENT, false, -ENOENT, NULL, "its own -ENOENT" },
		{ 1, false, -EINVAL, "returned 1; return 0 or a negative errno",
		  "a positive value" },
	};
	uint64_t *outer = gbuf;	/* the tests after this one use it */
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	struct run_case c;
	struct tl_rec r;
	char *text;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tl_config(&cfg, 4, 1 << 20);
		cfg.stall_timeout_ms = 100;
		rt = make_rt(&cfg, &r);
		gbuf = pto_malloc(rt, 64);
		if (!gbuf)
			bail_out("pto_malloc");
		c = (struct run_case){ &r, cases[i].ret, cases[i].block };
		tl_capture_begin(&cap);
		ret = pto_run(rt, orch_status, &c);
		text = tl_capture_end(&cap);
		if (!ok(ret == cases[i].want &&
			(!cases[i].say || strstr(text, cases[i].say)),
			"pto_run: the function returns %s: pto_run returns %d",
			cases[i].name, cases[i].want))
			diag("  got %d, stderr: %s", ret, text);
		free(text);
		tl_rec_free(&r);
		pto_runtime_destroy(rt);
	}
	gbuf = outer;
}

#define LOG_LINES 20000
#define LOG_TEXT "pto: pto_malloc: the runtime is NULL"

/* Fails and says why, LOG_LINES times: one line each time. */
static void *log_a_lot(void *arg)
{
	int i;

	for (i = 0; i < LOG_LINES; i++)
		if (pto_malloc(NULL, 8))
			break;
	return NULL;
}

/*
 * Two threads log at once: every line is one whole message, never a
 * prefix of one followed by another's text.
 */
static void test_log_lines(void)
{
	struct tl_capture cap;
	pthread_t th[2];
	char *text, *line, *save = NULL;
	int lines = 0, whole = 0, i;

	tl_capture_begin(&cap);
	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, log_a_lot, NULL))
			bail_out("pthread_create");
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	text = tl_capture_end(&cap);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		lines++;
		whole += !strcmp(line, LOG_TEXT);
	}
	ok(lines == 2 * LOG_LINES && whole == lines, "two threads logging "
	   "at once: %d lines, %d of them whole messages (want %d)", lines,
	   whole, 2 * LOG_LINES);
	free(text);
}

/* ---- messages of two runtimes in one process ----------------------------- */

/* One message said on the orchestrator's thread, one on another. */
static int orch_two_messages(struct pto_runtime *rt, void *arg)
{
	struct pto_param p = PTO_SCALAR(0);

	/* a kernel never registered: the orchestrator's thread says it */
	if (pto_submit_task(rt, K_UNKNOWN, PTO_WORKER_VECTOR, &p, 1) !=
	    -ENOENT)
		return -EPROTO;
	/* a failing task: the scheduler's or a core's thread says it */
	return pto_submit_task(rt, K_FAIL, PTO_WORKER_VECTOR, &p, 1) < 0 ?
	       -EPROTO : 0;
}

/*
 * The tag ("[...]" after "pto: ") of the line of text holding word, into
 * tag; "" when the line has none, "?" when there is no such line.
 */
static void tag_of(const char *text, const char *word, char *tag, size_t n)
{
	const char *w = text ? strstr(text, word) : NULL, *line, *end;

	snprintf(tag, n, "?");
	if (!w)
		return;
	for (line = w; line > text && line[-1] != '\n'; line--)
		;
	if (strncmp(line, "pto: ", 5))
		return;
	line += 5;
	end = *line == '[' ? strstr(line, "] ") : NULL;
	snprintf(tag, n, "%.*s", end && end < w ? (int)(end - line + 1) : 0,
		 line);
}

/* Run the two messages on rt; their tags, which must agree, into tag. */
static void two_messages(struct pto_runtime *rt, const char *who, char *tag,
			 size_t n)
{
	struct tl_capture cap;
	char other[64];
	char *text;
	int ret;

	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_two_messages, NULL);
	text = tl_capture_end(&cap);
	ok_eq(ret, -EIO, "two runtimes: %s: the run fails with its task", who);
	tag_of(text, "is not registered", tag, n);
	tag_of(text, "failed:", other, sizeof(other));
	if (!ok(!strcmp(tag, other) && strcmp(tag, "?"),
		"two runtimes: %s: the orchestrator's and the scheduler's "
		"messages carry one tag (\"%s\", \"%s\")", who, tag, other))
		diag("  stderr: %s", text);
	free(text);
}

/*
 * Two runtimes in one process: each message says which runtime it comes
 * from, whichever thread says it; with one runtime left, none does.
 */
static void test_two_runtimes(void)
{
	struct pto_runtime *a, *b;
	struct pto_config cfg;
	struct tl_rec ra, rb;
	char ta[64], tb[64], alone[64];

	tl_config(&cfg, 16, 1 << 16);
	a = make_rt(&cfg, &ra);
	b = make_rt(&cfg, &rb);
	two_messages(a, "the first", ta, sizeof(ta));
	two_messages(b, "the second", tb, sizeof(tb));
	ok(strstr(ta, "sim") && strstr(tb, "sim") && strcmp(ta, tb),
	   "two runtimes: the tags name the device and tell the runtimes "
	   "apart (\"%s\", \"%s\")", ta, tb);
	tl_rec_free(&ra);
	pto_runtime_destroy(a);
	two_messages(b, "one left", alone, sizeof(alone));
	ok_eq(strlen(alone), 0, "two runtimes: with one left its messages "
	      "carry no tag");
	tl_rec_free(&rb);
	pto_runtime_destroy(b);
}

/* ---- every message in one write ------------------------------------------ */

#define MAX_WRITES 64

/* What reached stderr, one entry per write. */
static struct {
	char *chunk[MAX_WRITES];
	int n;
} writes;

/* Called under the stream's lock: threads come one at a time. */
static ssize_t record_write(void *cookie, const char *buf, size_t size)
{
	if (writes.n < MAX_WRITES)
		writes.chunk[writes.n++] = strndup(buf, size);
	return (ssize_t)size;
}

/*
 * A message reaches stderr in one write, so that neither another thread
 * nor another process writing to the same pipe comes between its parts:
 * a tagged line (two runtimes), one line made in parts, and the several
 * lines of a deadlock report.  stderr is made an unbuffered stream that
 * records each write it makes, as stderr makes them.
 */
static void test_log_writes(void)
{
	cookie_io_functions_t io = { .write = record_write };
	struct dl d = { .ntasks = 1000 };
	struct pto_runtime *a, *b, *c;
	FILE *saved = stderr, *rec;
	struct tl_rec ra, rb, rc;
	struct pto_config cfg;
	uint64_t bytes = 1 << 16;
	int i, whole = 0, report = -1;

	rec = fopencookie(NULL, "w", io);
	if (!rec || setvbuf(rec, NULL, _IONBF, 0))
		bail_out("fopencookie");
	tl_config(&cfg, 16, 1 << 16);
	a = make_rt(&cfg, &ra);
	b = make_rt(&cfg, &rb);
	dl_config(&cfg, &dl_cases[0], dl_cases[0].size);
	cfg.stall_timeout_ms = 200;
	c = make_rt(&cfg, &rc);
	d.r = &rc;
	gbuf = pto_malloc(c, 64);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, 64);

	stderr = rec;
	pto_run(a, orch_two_messages, NULL);
	pto_run(b, orch_alloc_whole_heap, &bytes);
	pto_run(c, orch_deadlock, &d);
	stderr = saved;
	fclose(rec);

	for (i = 0; i < writes.n; i++) {
		const char *w = writes.chunk[i];

		whole += !strncmp(w, "pto: [", 6) && w[strlen(w) - 1] == '\n';
		if (strstr(w, "deadlock:"))
			report = i;
	}
	if (!ok(writes.n >= 4 && whole == writes.n,
		"each message reaches stderr in one write, tag and text: %d "
		"of %d writes", whole, writes.n))
		for (i = 0; i < writes.n; i++)
			diag("  write %d: \"%s\"", i, writes.chunk[i]);
	ok(report >= 0 && strstr(writes.chunk[report], "its oldest task") &&
	   strstr(writes.chunk[report], "advice:"),
	   "a deadlock report of several lines is one write");
	for (i = 0; i < writes.n; i++)
		free(writes.chunk[i]);
	tl_rec_free(&ra);
	tl_rec_free(&rb);
	tl_rec_free(&rc);
	pto_runtime_destroy(a);
	pto_runtime_destroy(b);
	pto_runtime_destroy(c);
}

static void k_thread_exit(const uint64_t *a, uint32_t n)
{
	pthread_exit(NULL);
}

static int orch_thread_exit(struct pto_runtime *rt, void *arg)
{
	return pto_submit_task(rt, 1, PTO_WORKER_VECTOR,
			       (struct pto_param[]){ PTO_SCALAR(0) }, 1) < 0;
}

static int thread_exit_run(void *arg)
{
	struct pto_runtime *rt = NULL;
	struct pto_config cfg;

	tl_config(&cfg, 0, 0);
	if (pto_runtime_create(&cfg, &rt) ||
	    pto_kernel_register(rt, 1, PTO_WORKER_VECTOR, k_thread_exit,
				"leaves"))
		return 2;
	return pto_run(rt, orch_thread_exit, NULL) ? 3 : 0;
}

/*
 * A kernel that calls pthread_exit() would leave its core thread dead
 * and the run hung (or, lent to the orchestrator's thread, end the
 * caller's thread): the process ends at once, saying which kernel.
 */
static void test_kernel_thread_exit(void)
{
	char msg[512], how[32];
	/* a watchdog: a core thread gone may hang the run */
	int status = tl_in_child(thread_exit_run, NULL, 60, msg, sizeof(msg));

	if (!ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
		strstr(msg, "kernel 1 (task ") &&
		strstr(msg, "did not return (a C++ exception or pthread_exit())"),
		"a kernel calling pthread_exit() ends the process, saying so"))
		diag("  child %s, stderr: %s",
		     tl_status_text(status, how, sizeof(how)), msg);
}

/* ---- a create refused by the process's limits -------------------------- */

/* In a child: address space for all but the sim's heap reservation. */
static int create_limited(void *arg)
{
	unsigned long long vm_kib = 0;
	struct pto_runtime *rt = NULL;
	struct pto_config cfg;
	struct rlimit lim;
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %llu kB", &vm_kib) == 1)
			break;
	if (f)
		fclose(f);
	if (!vm_kib)
		return 2;
	tl_config(&cfg, 0, 0);
	/* the heap rings and the arena: 1280 MiB; 512 MiB left */
	lim.rlim_cur = lim.rlim_max = (vm_kib << 10) + (512ull << 20);
	if (setrlimit(RLIMIT_AS, &lim))
		return 3;
	return pto_runtime_create(&cfg, &rt) == -ENOMEM && !rt ? 0 : 4;
}

/* ulimit -v below the heap: -ENOMEM, and a line saying what was asked. */
static void test_create_limits(void)
{
	char msg[1024], how[32];
	int status;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	skip("create under ulimit -v: sanitizers reserve the address space");
	return;
#endif
	status = tl_in_child(create_limited, NULL, 60, msg, sizeof(msg));
	if (!ok(WIFEXITED(status) && !WEXITSTATUS(status) &&
		strstr(msg, "MiB of address space for the device heap") &&
		strstr(msg, "ulimit -v"),
		"create under ulimit -v: -ENOMEM, naming the heap's size"))
		diag("  child %s, stderr: %s",
		     tl_status_text(status, how, sizeof(how)), msg);
}

/* ---- out of memory for the scopes' bookkeeping ------------------------ */

#define NEST_DEPTH 20

struct nest {
	unsigned int countdown;	/* pto_fault_countdown for the first run */
	int depth;		/* the pto_scope_begin() that failed, or -1 */
};

static void k_mark(const uint64_t *a, uint32_t n)
{
	*(uint64_t *)(uintptr_t)a[0] = 1;
}

/* NEST_DEPTH scopes, each holding a buffer before the next opens. */
static int orch_nest(struct pto_runtime *rt, void *arg)
{
	struct nest *ns = arg;
	int d, opened, ret = 0;
	void *p;

	ns->depth = -1;
	for (opened = 0; opened < NEST_DEPTH; opened++) {
		ret = pto_scope_begin(rt);
		if (ret) {
			ns->depth = opened;
			break;
		}
		if (PTO_SUBMIT(rt, 1, PTO_WORKER_VECTOR, PTO_OUT(&p, 64)) < 0)
			ret = -EIO;
	}
	for (d = 0; d < opened; d++)
		pto_scope_end(rt);
	return ret;
}

/*
 * The growth that fails is the countdown-th; the run returns -ENOMEM
 * (rather than hang on tasks no scope end let go), and the runtime's
 * next run works.  Child status: 0, or the step that went wrong.
 */
static int nest_run(void *arg)
{
	struct nest *ns = arg;
	struct pto_runtime *rt = NULL;
	struct pto_config cfg;
	int ret;

	tl_config(&cfg, 0, 0);
	if (pto_runtime_create(&cfg, &rt) ||
	    pto_kernel_register(rt, 1, PTO_WORKER_VECTOR, k_mark, "mark"))
		return 2;
	pto_fault_countdown = ns->countdown;
	ret = pto_run(rt, orch_nest, ns);
	pto_fault_countdown = 0;
	if (ret != -ENOMEM || ns->depth < 1)
		return 3;
	if (pto_run(rt, orch_nest, ns) || ns->depth != -1)
		return 4;
	pto_runtime_destroy(rt);
	return 0;
}

static void test_scope_nomem(void)
{
	static const struct {
		unsigned int countdown;
		const char *what;
	} cases[] = {
		{ 1, "the first growth (a segment of scopes sharing a ring)" },
		{ 2, "the second (the scope stack, 16 deep)" },
	};
	char msg[2048], how[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nest ns = { .countdown = cases[i].countdown };
		int status = tl_in_child(nest_run, &ns, 60, msg, sizeof(msg));

		if (!ok(WIFEXITED(status) && !WEXITSTATUS(status) &&
			tl_count(msg, "pto_scope_begin: out of memory for "
				 "scope ") == 1,
			"out of memory in %s: the run fails with -ENOMEM, "
			"saying so once, and the next run works",
			cases[i].what))
			diag("  child %s, stderr: %s",
			     tl_status_text(status, how, sizeof(how)), msg);
	}
}

int main(void)
{
	test_config();
	test_bad_submits();
	test_alloc_too_big();
	test_interior_base();
	test_pool_smaller_than_task();
	test_args_too_big();
	test_scopes();
	test_scope_nomem();
	test_create_limits();
	test_refusal_names_runtime();
	for (size_t i = 0; i < sizeof(dl_cases) / sizeof(dl_cases[0]); i++)
		deadlock_case(&dl_cases[i]);
	test_failing_kernel();
	test_kernel_thread_exit();
	test_run_status();
	test_op_checks();
	test_view_op_checks();
	test_log_lines();
	test_two_runtimes();
	test_log_writes();
	return tap_done();
}
