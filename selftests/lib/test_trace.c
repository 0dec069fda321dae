// SPDX-License-Identifier: MIT
/*
 * The Perfetto/Chrome trace (cfg.trace_path), checked as a viewer would
 * read it: a small graph whose kernel name needs escaping is traced, and
 * the file is parsed with a real JSON parser (python3's json module) and
 * its structure checked: slices named by kernel with their task, ring,
 * depth and parameters, flow arrows that start in each producer's slice
 * and end in its consumer's, ring and stall counters, metadata naming
 * every track, and the process's own pid and the orchestrator's tid.  A
 * second run deadlocks, and its stall must be in the trace too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

/*
 * Quote, backslash, UTF-8 must survive, a control character as the C
 * escape the runtime names it by (pto_kernel_register()), a byte that is
 * no UTF-8 as U+FFFD: the trace stays valid JSON.
 */
#define TRICKY "scale \"v2\" \\ \x01 \xc3\xa9 \xff"
#define NWORDS 64

enum { K_FILL = 1, K_SCALE, K_ADD, K_SPIN };

/*
 * The fills write the program's memory, so they make no buffer and their
 * scope does not hold them: done before their consumer is submitted, they
 * would retire, and the consumer would need no edge from them.  They wait
 * for the orchestration to have submitted everything.
 */
static struct tl_gate fills_gate;

static void k_fill(const uint64_t *a, uint32_t n)
{
	if (tl_gate_wait(&fills_gate, 10000))
		pto_kernel_set_error(-ETIMEDOUT);
	for (uint64_t i = 0; i < NWORDS; i++)
		((uint64_t *)(uintptr_t)a[0])[i] = a[1] + i;
}

/* dst = 3 * src (in place when they are one buffer) */
static void k_scale(const uint64_t *a, uint32_t n)
{
	for (uint64_t i = 0; i < NWORDS; i++)
		((uint64_t *)(uintptr_t)a[0])[i] =
			3 * ((uint64_t *)(uintptr_t)a[1])[i];
}

static void k_add(const uint64_t *a, uint32_t n)
{
	uint64_t *d = (uint64_t *)(uintptr_t)a[0];

	for (uint64_t i = 0; i < NWORDS; i++)
		d[i] = ((uint64_t *)(uintptr_t)a[1])[i] +
		       ((uint64_t *)(uintptr_t)a[2])[i];
}

static void k_nop(const uint64_t *a, uint32_t n)
{
}

struct graph {
	uint64_t *a, *b, *c;
};

#define SUBMIT(k, type, ...) do {					\
	struct pto_param p_[] = { __VA_ARGS__ };			\
	int64_t id_ = pto_submit_task(rt, (k), (type), p_,		\
				      sizeof(p_) / sizeof(p_[0]));	\
	if (id_ < 0)							\
		return (int)id_;					\
} while (0)

/*
 * Task ids and the edges between them:
 *   0 fill a, 1 fill b, 2 scale a -> t1, 3 scale b -> t2,
 *   4 add t1 t2 -> c, then in a nested scope 5 scale c in place
 *   edges 0->2, 1->3, 2->4, 3->4, 4->5
 */
#define EDGES "0:2,1:3,2:4,3:4,4:5"

static int orch_graph(struct pto_runtime *rt, void *arg)
{
	struct graph *g = arg;
	void *t1, *t2;
	size_t sz = NWORDS * 8;

	SUBMIT(K_FILL, PTO_WORKER_VECTOR, PTO_OUT_EXISTING(g->a, 0, sz),
	       PTO_SCALAR(1));
	SUBMIT(K_FILL, PTO_WORKER_VECTOR, PTO_OUT_EXISTING(g->b, 0, sz),
	       PTO_SCALAR(100));
	SUBMIT(K_SCALE, PTO_WORKER_CUBE, PTO_OUT(&t1, sz),
	       PTO_IN(g->a, 0, sz));
	SUBMIT(K_SCALE, PTO_WORKER_CUBE, PTO_OUT(&t2, sz),
	       PTO_IN(g->b, 0, sz));
	SUBMIT(K_ADD, PTO_WORKER_VECTOR, PTO_OUT_EXISTING(g->c, 0, sz),
	       PTO_IN(t1, 0, sz), PTO_IN(t2, 0, sz));
	pto_scope_begin(rt);
	SUBMIT(K_SCALE, PTO_WORKER_CUBE, PTO_INOUT(g->c, 0, sz),
	       PTO_INOUT(g->c, 0, sz));
	tl_gate_open(&fills_gate);
	return pto_scope_end(rt);
}

/* More tasks making buffers in one scope than the window holds. */
static int orch_deadlock(struct pto_runtime *rt, void *arg)
{
	void *t;
	int i;

	for (i = 0; i < 8; i++)
		SUBMIT(K_SPIN, PTO_WORKER_VECTOR, PTO_SCALAR(i),
		       PTO_OUT(&t, 64));
	return 0;
}

/*
 * The checker: prints "ok WHAT" or "not ok WHAT: WHY" per check.
 * argv: trace, pid, orchestrator tid, "deadlock" or the expected edges.
 */
static const char checker[] =
"import json, sys\n"
"from collections import Counter, defaultdict\n"
"path, pid, otid, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]\n"
"def check(what, cond, why=''):\n"
"    print(('ok ' if cond else 'not ok ') + what + ('' if cond else ': ' + str(why)))\n"
"try:\n"
"    doc = json.load(open(path, encoding='utf-8'))\n"
"except ValueError as e:\n"
"    check('the trace is valid JSON', False, e); sys.exit(0)\n"
"ev = doc['traceEvents']\n"
"check('the trace is valid JSON', isinstance(ev, list))\n"
"bad = [e for e in ev if e.get('pid') != pid]\n"
"check('every event has the process pid', not bad, bad[:2])\n"
"stack = defaultdict(list); unbalanced = []\n"
"for e in sorted((e for e in ev if e['ph'] in 'BE'), key=lambda e: e['ts']):\n"
"    k = (e['pid'], e['tid'])\n"
"    if e['ph'] == 'B': stack[k].append(e)\n"
"    elif not stack[k]: unbalanced.append(e)\n"
"    else: stack[k].pop()\n"
"check('every B has an E', not unbalanced and not any(stack.values()))\n"
"xs = [e for e in ev if e['ph'] == 'X']\n"
"check('X slices have non-negative ts and dur',\n"
"      xs and all(e['ts'] >= 0 and e['dur'] >= 0 for e in xs))\n"
"meta = [e for e in ev if e['ph'] == 'M']\n"
"tname = {e['tid']: e['args']['name'] for e in meta if e['name'] == 'thread_name'}\n"
"check('process_name metadata', any(e['name'] == 'process_name' for e in meta))\n"
"check('every track of an event is named', all(e['tid'] in tname for e in xs))\n"
"check('the orchestrator track is the calling thread', tname.get(otid) == 'orchestrator', tname)\n"
"subs = [e for e in xs if e['name'] == 'submit']\n"
"stalls = [e for e in xs if e['name'] == 'stall']\n"
"check('submit spans on the orchestrator track', subs and all(e['tid'] == otid for e in subs))\n"
"counters = {e['name'] for e in ev if e['ph'] == 'C'}\n"
"check('ring counters', {'ring0 tasks', 'ring0 heap'} <= counters, counters)\n"
"if mode == 'deadlock':\n"
"    dl = [e for e in stalls if e['args']['result'] == 'EDEADLK']\n"
"    check('the deadlocking stall is traced', len(dl) == 1 and dl[0]['tid'] == otid\n"
"          and dl[0]['args']['waiting for'] == 'task slots', stalls)\n"
"    check('stall counters', {'stalled', 'stalls'} <= counters, counters)\n"
"    sys.exit(0)\n"
"tasks = [e for e in xs if e.get('cat') == 'task']\n"
"names = Counter(e['name'] for e in tasks)\n"
"check('slices are named by kernel', names == Counter({'fill': 2, %s: 3, 'add': 1}), names)\n"
"check('one submit span per task', len(subs) == len(tasks) == 6, (len(subs), len(tasks)))\n"
"check('core tracks are named by core', all(tname[e['tid']][:4] in ('cube', 'vect') for e in tasks),\n"
"      [tname[e['tid']] for e in tasks])\n"
"check('scheduler track named', 'scheduler' in tname.values(), tname)\n"
"by_id = {e['args']['task']: e for e in tasks}\n"
"check('task ids in args', sorted(by_id) == list(range(6)), sorted(by_id))\n"
"a = by_id.get(5, {}).get('args', {})\n"
"check('depth, ring and parameters in args', a.get('depth') == 1 and a.get('ring') == 1\n"
"      and [p['kind'] for p in a.get('params', [])] == ['inout', 'inout']\n"
"      and by_id[0]['args']['depth'] == 0\n"
"      and [p['kind'] for p in by_id[0]['args']['params']] == ['out_existing', 'scalar']\n"
"      and by_id[0]['args']['params'][1]['value'] == 1\n"
"      and by_id[2]['args']['params'][0]['size'] == 512, [a, by_id[0]['args']])\n"
"def inside(tid, ts):\n"
"    return [e for e in tasks if e['tid'] == tid and e['ts'] <= ts <= e['ts'] + e['dur']]\n"
"s = {e['id']: e for e in ev if e['ph'] == 's'}\n"
"f = {e['id']: e for e in ev if e['ph'] == 'f'}\n"
"check('flow starts and finishes pair up', s.keys() == f.keys() and\n"
"      len(s) == sum(1 for e in ev if e['ph'] == 's'), (sorted(s), sorted(f)))\n"
"edges = set(); bad = []\n"
"for i in s:\n"
"    src, dst = inside(s[i]['tid'], s[i]['ts']), inside(f[i]['tid'], f[i]['ts'])\n"
"    if len(src) != 1 or len(dst) != 1 or f[i].get('bp') != 'e' or\\\n"
"       src[0]['args']['task'] != s[i]['args']['producer']:\n"
"        bad.append((s[i], f[i])); continue\n"
"    edges.add((src[0]['args']['task'], dst[0]['args']['task']))\n"
"check('each flow goes from its producer slice to its consumer slice', not bad, bad[:2])\n"
"want = {tuple(map(int, x.split(':'))) for x in mode.split(',')}\n"
"check('the flows are the dependency edges', edges == want, sorted(edges))\n";

static int run_checker(const char *trace, const char *mode)
{
	char script[] = "/tmp/pto-trace-check-XXXXXX";
	char cmd[512], line[4096], name[64];
	int fd = mkstemp(script), n = 0;
	FILE *out;

	if (fd < 0)
		bail_out("mkstemp: %s", strerror(errno));
	/* the checker compares names with the kernel's, as a Python literal */
	out = fdopen(fd, "w");
	snprintf(name, sizeof(name), "%s",
		 "'scale \"v2\" \\\\ \\\\x01 \\xe9 \\ufffd'");
	fprintf(out, checker, name);
	fclose(out);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %d %ld %s", script, trace,
		 (int)getpid(), (long)syscall(SYS_gettid), mode);
	out = popen(cmd, "r");
	if (!out)
		bail_out("popen: %s", strerror(errno));
	while (fgets(line, sizeof(line), out)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "ok ", 3))
			ok(1, "%s: %s", mode[0] == 'd' ? "deadlock" : "graph",
			   line + 3);
		else
			ok(0, "%s: %s", mode[0] == 'd' ? "deadlock" : "graph",
			   line + 7);
		n++;
	}
	ok(pclose(out) == 0 && n > 0, "%s: the checker ran",
	   mode[0] == 'd' ? "deadlock" : "graph");
	unlink(script);
	return n;
}

static void trace_graph(const char *path)
{
	struct pto_runtime *rt;
	struct pto_config cfg;
	struct graph g;

	tl_config(&cfg, 64, 0);
	cfg.sched = PTO_SCHED_THREAD;	/* so there is a scheduler track */
	cfg.trace_path = path;
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_FILL, PTO_WORKER_VECTOR, k_fill,
				"fill") ||
	    pto_kernel_register(rt, K_SCALE, PTO_WORKER_CUBE, k_scale,
				TRICKY) ||
	    pto_kernel_register(rt, K_ADD, PTO_WORKER_VECTOR, k_add, "add"))
		bail_out("cannot register kernels");
	g.a = pto_malloc(rt, NWORDS * 8);
	g.b = pto_malloc(rt, NWORDS * 8);
	g.c = pto_malloc(rt, NWORDS * 8);
	tl_gate_init(&fills_gate);
	ok_eq(pto_run(rt, orch_graph, &g), 0, "graph: pto_run");
	tl_gate_destroy(&fills_gate);
	ok_eq(g.c[5], 9 * (6 + 105), "graph: the result is right");
	pto_runtime_destroy(rt);
}

static void trace_deadlock(const char *path)
{
	struct pto_runtime *rt;
	struct pto_config cfg;

	tl_config(&cfg, 4, 0);
	cfg.nrings = 1;
	cfg.stall_timeout_ms = 200;
	cfg.trace_path = path;
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_SPIN, PTO_WORKER_VECTOR, k_nop, "nop"))
		bail_out("cannot register kernels");
	ok_eq(pto_run(rt, orch_deadlock, NULL), -EDEADLK,
	      "deadlock: pto_run reports it");
	pto_runtime_destroy(rt);
}

/* Three NOP tasks: something in each runtime's trace. */
static int orch_nops(struct pto_runtime *rt, void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 3; i++)
		SUBMIT(K_SPIN, PTO_WORKER_VECTOR, PTO_SCALAR(i));
	return 0;
}

static struct pto_runtime *nop_runtime(const char *path)
{
	struct pto_runtime *rt;
	struct pto_config cfg;

	tl_config(&cfg, 64, 0);
	cfg.trace_path = path;
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_SPIN, PTO_WORKER_VECTOR, k_nop, "nop"))
		bail_out("cannot register kernels");
	return rt;
}

static bool valid_json(const char *path)
{
	char cmd[640];

	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
		 "sys.exit(not d[\"traceEvents\"])' %s", path);
	return system(cmd) == 0;
}

/*
 * Two runtimes alive at once with one trace path: the second writes
 * PATH.1 and says so; both files are whole JSON documents.
 */
static void trace_two(const char *path)
{
	struct pto_runtime *a, *b;
	struct tl_capture cap;
	char second[256];
	char *text;

	snprintf(second, sizeof(second), "%s.1", path);
	unlink(second);
	a = nop_runtime(path);
	tl_capture_begin(&cap);
	b = nop_runtime(path);
	text = tl_capture_end(&cap);
	ok(strstr(text, "is written by another runtime of this process") &&
	   strstr(text, second), "two runtimes: the second says it writes %s",
	   second);
	free(text);
	ok_eq(pto_run(a, orch_nops, NULL), 0, "two runtimes: the first runs");
	ok_eq(pto_run(b, orch_nops, NULL), 0, "two runtimes: the second runs");
	pto_runtime_destroy(b);
	pto_runtime_destroy(a);
	ok(valid_json(path), "two runtimes: the first's trace is valid JSON");
	ok(valid_json(second),
	   "two runtimes: the second's trace is valid JSON");
	unlink(second);
	/* one at a time: each writes path itself */
	a = nop_runtime(path);
	pto_runtime_destroy(a);
	ok(access(second, F_OK) != 0,
	   "a runtime created after the other ended writes the path itself");
}

/* A trace that cannot be written out (a full disk) says so. */
static void trace_full(void)
{
	struct pto_runtime *rt;
	struct pto_config cfg;
	struct tl_capture cap;
	int i, ret = 0;
	char *text;

	tl_config(&cfg, 64, 0);
	cfg.trace_path = "/dev/full";
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_SPIN, PTO_WORKER_VECTOR, k_nop, "nop"))
		bail_out("cannot register kernels");
	ok_eq(pto_run(rt, orch_nops, NULL), 0, "full disk: the run works");
	tl_capture_begin(&cap);
	pto_runtime_destroy(rt);
	text = tl_capture_end(&cap);
	ok(text && strstr(text, "trace /dev/full: writing failed") &&
	   strstr(text, "incomplete"),
	   "full disk: destroying the runtime says the trace is incomplete");
	free(text);

	/* a trace larger than its buffer fails during the runs: said too */
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_SPIN, PTO_WORKER_VECTOR, k_nop, "nop"))
		bail_out("cannot register kernels");
	for (i = 0; i < 100 && !ret; i++)
		ret = pto_run(rt, orch_nops, NULL);
	ok_eq(ret, 0, "full disk: 100 runs work");
	tl_capture_begin(&cap);
	pto_runtime_destroy(rt);
	text = tl_capture_end(&cap);
	ok(text && strstr(text, "trace /dev/full: writing failed (No space "
			  "left on device)"),
	   "full disk: a write that failed during the runs is said at "
	   "destroy, with its cause");
	free(text);

	/* a program that asks is told, and destroy does not say it twice */
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_SPIN, PTO_WORKER_VECTOR, k_nop, "nop"))
		bail_out("cannot register kernels");
	ok_eq(pto_run(rt, orch_nops, NULL), 0, "full disk: a second run works");
	ok_eq(pto_trace_flush(rt), -ENOSPC,
	      "full disk: pto_trace_flush() returns -ENOSPC");
	ok_eq(pto_trace_flush(rt), -ENOSPC,
	      "full disk: and goes on returning it");
	tl_capture_begin(&cap);
	pto_runtime_destroy(rt);
	text = tl_capture_end(&cap);
	ok(text && !strstr(text, "incomplete"),
	   "full disk: after pto_trace_flush() reported it, destroy is quiet");
	free(text);
}

static long long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long long)st.st_size;
}

/* pto_trace_flush() of a trace that is written, of none, of no runtime. */
static void trace_flush(const char *path)
{
	struct pto_runtime *rt = nop_runtime(path);
	struct pto_config cfg;
	long long flushed;

	ok_eq(pto_run(rt, orch_nops, NULL), 0, "flush: the run works");
	ok_eq(pto_trace_flush(rt), 0, "flush: a written trace: 0");
	flushed = file_size(path);
	pto_runtime_destroy(rt);
	/* destroy adds only the closing "\n]}\n" */
	ok(flushed > 0 && file_size(path) == flushed + 4,
	   "flush: every event is in the file before the runtime is "
	   "destroyed (%lld bytes, then %lld)", flushed, file_size(path));
	ok(valid_json(path), "flush: the trace is still valid JSON");
	tl_config(&cfg, 64, 0);
	cfg.trace_path = NULL;
	rt = tl_runtime(&cfg);
	ok_eq(pto_trace_flush(rt), 0, "flush: no trace: 0");
	pto_runtime_destroy(rt);
	ok_eq(pto_trace_flush(NULL), -EINVAL, "flush: NULL: -EINVAL");
}

/*
 * Several runs into one trace: each thread's track is named once, the
 * scheduler thread's too, though it schedules every run.
 */
static void trace_runs(const char *path)
{
	struct pto_runtime *rt;
	struct pto_config cfg;
	char cmd[900];
	int i;

	tl_config(&cfg, 64, 0);
	cfg.trace_path = path;
	cfg.sched = PTO_SCHED_THREAD;
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_SPIN, PTO_WORKER_VECTOR, k_nop, "nop"))
		bail_out("cannot register kernels");
	for (i = 0; i < 3; i++)
		ok_eq(pto_run(rt, orch_nops, NULL), 0, "runs: run %d", i);
	pto_runtime_destroy(rt);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys,collections\n"
		 "ev = json.load(open(sys.argv[1]))[\"traceEvents\"]\n"
		 "m = [e for e in ev if e[\"name\"] == \"thread_name\"]\n"
		 "n = collections.Counter(e[\"tid\"] for e in m)\n"
		 "s = [e for e in m if e[\"args\"][\"name\"] == \"scheduler\"]\n"
		 "sys.exit(len(s) != 1 or max(n.values()) != 1)' %s", path);
	ok(system(cmd) == 0,
	   "runs: three runs, each thread's track named once (the scheduler's "
	   "too)");
}

/*
 * A child of fork() that ends with exit(), which flushes every stdio
 * stream, writes nothing of the parent's trace: the buffer it inherits
 * is empty.
 */
static void trace_fork(const char *path)
{
	struct pto_runtime *rt = nop_runtime(path);
	int status = -1;
	pid_t pid;

	ok_eq(pto_run(rt, orch_nops, NULL), 0, "fork: the run before works");
	/* not fflush(NULL): that would flush the trace for libpto */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail_out("fork");
	if (!pid)
		exit(0);
	waitpid(pid, &status, 0);
	ok_eq(pto_run(rt, orch_nops, NULL), 0, "fork: the run after works");
	pto_runtime_destroy(rt);
	ok(WIFEXITED(status) && valid_json(path),
	   "fork: a child's exit() leaves the parent's trace valid JSON");
}

static struct pto_runtime *exit_rt;

static void destroy_at_exit(void)
{
	pto_runtime_destroy(exit_rt);
}

/*
 * A child that runs and calls exit() with its runtime alive; with
 * destroy_first, after it registered an atexit() handler that destroys
 * the runtime, which runs after libpto's (handlers run last registered
 * first, and libpto registers its own with the first trace).
 */
static void trace_exit(const char *path, bool destroy_later,
		       const char *what)
{
	char cmd[640];
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail_out("fork");
	if (!pid) {
		if (destroy_later)
			atexit(destroy_at_exit);
		exit_rt = nop_runtime(path);
		exit(pto_run(exit_rt, orch_nops, NULL) ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys\n"
		 "ev = json.load(open(sys.argv[1]))[\"traceEvents\"]\n"
		 "sys.exit(sum(e.get(\"cat\") == \"task\" for e in ev) != 3)'"
		 " %s", path);
	ok(WIFEXITED(status) && !WEXITSTATUS(status) && system(cmd) == 0,
	   "exit: %s: the trace is valid JSON with the run's three tasks",
	   what);
}

struct views {
	float *m;		/* 8 x 16, row-major */
	struct pto_view tile;	/* rows 2..5, columns 4..11 */
	struct pto_view out;	/* a 4 x 8 OUTPUT view */
};

static int orch_views(struct pto_runtime *rt, void *arg)
{
	struct views *v = arg;

	v->tile = pto_view_tile_2d(pto_view_2d(v->m, PTO_DTYPE_F32, 8, 16, 16),
				   2, 4, 4, 8);
	v->out = pto_view_2d(NULL, PTO_DTYPE_F32, 4, 8, 8);
	SUBMIT(K_SPIN, PTO_WORKER_VECTOR, PTO_IN_VIEW(&v->tile),
	       PTO_INOUT(v->m, 0, 64), PTO_OUT_VIEW(&v->out));
	return 0;
}

/*
 * A view parameter is traced as the view: its first element's address,
 * the bytes it spans, dtype, shape and strides; a region as before.
 */
static void trace_views(const char *path)
{
	struct pto_runtime *rt = nop_runtime(path);
	struct views v;
	char cmd[2048];

	v.m = pto_malloc(rt, 8 * 16 * sizeof(float));
	ok_eq(pto_run(rt, orch_views, &v), 0, "views: pto_run");
	pto_runtime_destroy(rt);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys\n"
		 "ev = json.load(open(sys.argv[1]))[\"traceEvents\"]\n"
		 "p = [e for e in ev if e.get(\"cat\") == \"task\"][0]"
		 "[\"args\"][\"params\"]\n"
		 "want = [dict(kind=\"in\", view=True, addr=hex(%lu), "
		 "size=(3 * 16 + 8) * 4, dtype=\"f32\", shape=[4, 8], "
		 "stride=[16, 1]), dict(kind=\"inout\", addr=hex(%lu), "
		 "size=64), dict(kind=\"out\", view=True, addr=hex(%lu), "
		 "size=128, dtype=\"f32\", shape=[4, 8], stride=[8, 1])]\n"
		 "print(p) if p != want else None\n"
		 "sys.exit(p != want)' %s",
		 (unsigned long)(uintptr_t)(v.m + 2 * 16 + 4),
		 (unsigned long)(uintptr_t)v.m,
		 (unsigned long)(uintptr_t)v.out.base, path);
	ok(system(cmd) == 0, "views: a view parameter is traced as its "
	   "first element's address, bytes, dtype, shape and strides");
}

int main(void)
{
	char path[] = "/tmp/pto-trace-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		bail_out("mkstemp: %s", strerror(errno));
	close(fd);
	{
		struct pto_runtime *rt = NULL;
		struct pto_config cfg;

		tl_config(&cfg, 0, 0);
		cfg.trace_path = "";
		ok(!pto_runtime_create(&cfg, &rt) && rt,
		   "an empty trace_path writes no trace, as PTO_TRACE= does");
		pto_runtime_destroy(rt);
	}
	/* first: each child opens the process's first trace */
	trace_exit(path, false, "exit() with the runtime alive");
	trace_exit(path, true, "then a destroy in an atexit() handler");
	trace_graph(path);
	run_checker(path, EDGES);
	trace_deadlock(path);
	run_checker(path, "deadlock");
	trace_views(path);
	trace_two(path);
	trace_full();
	trace_flush(path);
	trace_runs(path);
	trace_fork(path);
	unlink(path);
	return tap_done();
}
