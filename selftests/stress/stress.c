// SPDX-License-Identifier: MIT
/*
 * Stress driver: hunts hangs and stalls in libpto's scheduling and flow
 * control.  Each iteration picks, from its own seed, a runtime (who
 * schedules: a thread or the core threads; 1 to 8 cores over the worker
 * types; 1 to 4 task rings with windows of 4 to 256 slots and heap rings of
 * 4 to 256 KiB each) and runs 1 to 4 programs on it: random scoped programs
 * over overlapping regions (randprog.h; half of them with tensor views and
 * pto_alloc() buffers too) or Task Bench patterns (stencil,
 * fft, tree, all_to_all, spread, trivial) over widths 2 to 8, with kernels
 * that take 0 to 200 us, spinning or asleep.  Every program is generated to
 * fit its runtime, so every run must succeed: an error, a result that
 * differs from the sequential replay, or any line libpto logs (a "stall:"
 * report above all: something stopped moving) fails the iteration, and its
 * seed is printed.
 *
 *	STRESS_SEED=n		first iteration's seed (each next one is
 *				derived from it); a failing iteration's seed
 *				with STRESS_ITERS=1 replays it alone
 *	STRESS_SECONDS=n	stop starting iterations after n s (60)
 *	STRESS_ITERS=n		stop after n iterations
 *	STRESS_SCHED=thread|workers	only that scheduling mode
 *	STRESS_STALL_MS=n	the runtimes' stall timeout (3000)
 *	STRESS_LOG=path		where libpto's stderr goes (default: a
 *				temporary file); scanned after every run
 *	STRESS_HEARTBEAT=path	rewritten before every run with the run
 *				count and the iteration's seed, for the
 *				watchdog (stress.sh)
 *
 *	STRESS_WEDGE=1		the first task never ends: a hang for
 *				the watchdog to catch (tests stress.sh)
 *
 * SIGUSR1 makes it print (to the log) the iteration it is in and the
 * runtime's state, as the stall detector would, then "stress: dumped".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "stall.h"
#include "randprog.h"

#define MAX_PROGS 4
#define MAX_FAILURES 20
#define DUMPS 2

struct opts {
	uint64_t seed;
	uint64_t seconds, iters;
	int sched;		/* 0: either */
	uint32_t stall_ms;
	int log_fd;		/* read side of libpto's stderr */
	int beat_fd;		/* heartbeat file, or -1 */
	int wedge;		/* the first task never ends */
};

struct totals {
	uint64_t iters, runs, tasks, gated, waits;
	uint64_t per_sched[4], per_pattern[RP_NPATTERNS + 1];
	uint64_t pattern_tasks[RP_NPATTERNS + 1];
	uint64_t failed_iters, run_failed, mismatched, bad_out, stalls, logs;
	uint64_t max_run_ns;
	uint64_t max_run_seed;	/* the iteration of the longest run */
};

/* What an iteration is doing, for SIGUSR1 and for failure reports. */
struct iter {
	uint64_t seed;
	struct rp_cfg rc;
	int sched;
	bool deep;		/* queues 16 deep from the start (lib/pace.h) */
	int prog, nprogs;
	const char *what;	/* "random" or a pattern's name */
	int pattern;		/* enum rp_pattern, RP_NPATTERNS: random */
	char why[512];		/* the first failure */
};

static struct iter cur;
static struct pto_runtime *volatile cur_rt;
static const char *const sched_names[] = { "auto", "thread", "workers",
					    "shards" };

/* ---- libpto's log and the heartbeat -------------------------------------- */

/* libpto's stderr into path (or a temporary file); the fd to read it. */
static int redirect_log(const char *path)
{
	char tmp[] = "/tmp/pto-stress-log.XXXXXX";
	int wfd, rfd;

	if (path && *path)
		wfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	else
		wfd = mkstemp(tmp);
	if (wfd < 0)
		bail_out("cannot open the log: %s", strerror(errno));
	rfd = open(path && *path ? path : tmp, O_RDONLY);
	if (rfd < 0)
		bail_out("cannot read the log: %s", strerror(errno));
	if (!(path && *path))
		unlink(tmp);
	fflush(stderr);
	if (dup2(wfd, STDERR_FILENO) < 0)
		bail_out("dup2: %s", strerror(errno));
	close(wfd);
	setvbuf(stderr, NULL, _IOLBF, 0);
	return rfd;
}

/*
 * What libpto logged since the last look: every line is unexpected in a
 * run that must succeed; a "stall:" line means something stopped moving.
 * Returns the number of lines, and counts the stalls.
 */
static int scan_log(const struct opts *o, uint64_t *stalls)
{
	static char buf[1 << 16];
	static size_t have;
	ssize_t n;
	char *line, *nl;
	int lines = 0;

	fflush(stderr);
	while ((n = read(o->log_fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			lines++;
			if (strstr(line, "stall:"))
				++*stalls;
			diag("  libpto: %s", line);
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)	/* a huge line: let it go */
			have = 0;
	}
	return lines;
}

static void heartbeat(const struct opts *o, uint64_t runs)
{
	char line[80];
	int len;

	if (o->beat_fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%20llu seed %#018llx\n",
		       (unsigned long long)runs,
		       (unsigned long long)cur.seed);
	if (pwrite(o->beat_fd, line, (size_t)len, 0) != len)
		bail_out("heartbeat: %s", strerror(errno));
}

static void describe(FILE *out, const struct iter *it)
{
	const struct rp_cfg *rc = &it->rc;
	uint32_t r;

	fprintf(out, "seed %#llx (STRESS_SEED=%#llx STRESS_ITERS=1 replays it): sched %s, cores %u/%u/%u/%u, %u rings:",
		(unsigned long long)it->seed, (unsigned long long)it->seed,
		sched_names[it->sched], rc->cores[0], rc->cores[1],
		rc->cores[2], rc->cores[3], rc->nrings);
	for (r = 0; r < rc->nrings; r++)
		fprintf(out, " %u/%lluK", rc->window[r],
			(unsigned long long)rc->heap[r] >> 10);
	fprintf(out, "; %s queues; program %d of %d (%s)",
		it->deep ? "deep" : "learnt", it->prog + 1, it->nprogs,
		it->what);
}

/* SIGUSR1: the watchdog wants to know where we are.  Not async-safe:
 * only ever sent to a process that is about to be killed. */
static void on_usr1(int sig)
{
	struct pto_runtime *rt = cur_rt;

	fprintf(stderr, "stress: SIGUSR1 in ");
	describe(stderr, &cur);
	fprintf(stderr, "\n");
	if (rt)
		pto_stall_report(rt, 0);
	fprintf(stderr, "stress: dumped\n");
	fflush(stderr);
}

/* ---- one iteration ------------------------------------------------------- */

static void random_config(struct tl_rng *rng, struct iter *it, int sched)
{
	struct rp_cfg *rc = &it->rc;
	uint32_t total = tl_range(rng, 1, 8), r;

	memset(rc, 0, sizeof(*rc));
	it->sched = sched ? sched : (int)tl_range(rng, PTO_SCHED_THREAD,
						  PTO_SCHED_SHARDS);
	/* every core to one type, or spread over some */
	if (tl_range(rng, 0, 3) == 0)
		rc->cores[tl_range(rng, 0, PTO_NUM_WORKER_TYPES - 1)] = total;
	else
		while (total--)
			rc->cores[tl_range(rng, 0, PTO_NUM_WORKER_TYPES - 1)]++;
	rc->nrings = tl_range(rng, 1, PTO_MAX_RINGS);
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		rc->window[r] = 1u << tl_range(rng, 2, 8);
		rc->heap[r] = 1ull << tl_range(rng, 12, 18);
	}
}

static struct pto_runtime *make_runtime(const struct iter *it,
					const struct opts *o)
{
	struct pto_config cfg;
	uint32_t r, t;

	tl_config(&cfg, it->rc.window[0], it->rc.heap[0]);
	cfg.nrings = it->rc.nrings;
	for (r = 0; r < it->rc.nrings; r++) {
		cfg.ring[r].task_window = it->rc.window[r];
		cfg.ring[r].heap_size = it->rc.heap[r];
	}
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		cfg.cores[t] = it->rc.cores[t];
	cfg.sched = (uint32_t)it->sched;
	cfg.stall_timeout_ms = o->stall_ms;
	return tl_runtime(&cfg);
}

/*
 * Kernel durations: none, around the simulator's run-inline cutoff
 * (2 us), or up to 200 us on some tasks, spinning or asleep.
 */
static void add_delays(struct rp_prog *pg, struct tl_rng *rng)
{
	uint32_t profile = tl_range(rng, 0, 3), i;

	for (i = 0; i < (uint32_t)pg->nops && profile; i++) {
		struct rp_op *op = &pg->ops[i];

		if (op->op != RP_TASK)
			continue;
		if (profile == 1)
			op->delay = tl_range(rng, 0, 4000);
		else if (tl_range(rng, 0, 7) < profile)
			op->delay = tl_range(rng, 0, 200000) |
				    (tl_range(rng, 0, 1) ? RP_DELAY_SLEEP : 0);
	}
}

static void generate(struct rp_prog *pg, struct tl_rng *rng,
		     struct totals *tot)
{
	struct rp_shape shape = {
		.max_tasks = RP_MAX_TASKS, .max_depth = 5, .max_np = 5,
	};
	int pat = (int)tl_range(rng, 0, 2 * RP_NPATTERNS - 1);

	if (pat >= RP_NPATTERNS) {
		/* half with views, by a hash: the stream of programs stays */
		shape.views = tl_mix(cur.seed ^ tl_mix(0x7a1e0000ull +
						       cur.prog)) & 1;
		rp_generate(pg, rng, &cur.rc, &shape);
		cur.what = shape.views ? "random with views" : "random";
		cur.pattern = RP_NPATTERNS;
		tot->per_pattern[RP_NPATTERNS]++;
	} else {
		rp_generate_pattern(pg, rng, &cur.rc, pat, tl_range(rng, 2, 8),
				    tl_range(rng, 2, 40));
		cur.what = rp_pattern_names[pat];
		cur.pattern = pat;
		tot->per_pattern[pat]++;
	}
	add_delays(pg, rng);
}

/* Note the iteration's first failure. */
static __attribute__((format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	if (cur.why[0])
		return;
	va_start(ap, fmt);
	vsnprintf(cur.why, sizeof(cur.why), fmt, ap);
	va_end(ap);
}

static void check_run(struct rp_ctx *c, int ret, int gate_before,
		      const struct opts *o, struct totals *tot)
{
	char msg[256];

	tot->bad_out += c->bad_out;
	if (ret) {
		tot->run_failed++;
		fail("pto_run returned %d (%s)", ret, strerror(-ret));
	} else if (rp_check(c, msg, sizeof(msg))) {
		tot->mismatched++;
		fail("%s", msg);
	}
	if (c->bad_out)
		fail("%d OUTPUTs misaligned or overlapping", c->bad_out);
	if (atomic_load(&rp_gate_timeouts) != gate_before)
		fail("a gated task waited in vain");
	if (scan_log(o, &tot->stalls)) {
		tot->logs++;
		fail("libpto logged (see above)");
	}
}

static void run_one(struct pto_runtime *rt, struct rp_ctx *c,
		    struct tl_rng *rng, const struct opts *o,
		    struct totals *tot)
{
	static struct rp_prog pg;
	int ret, gate_before = atomic_load(&rp_gate_timeouts);
	uint64_t t0;

	generate(&pg, rng, tot);
	if (o->wedge && !tot->runs)
		pg.ops[0].delay = RP_DELAY_FOREVER;
	c->pg = &pg;
	c->gated = rp_gate_ok(&pg, &cur.rc) && !tl_range(rng, 0, 3);
	rp_fill_shared(c, rng);
	heartbeat(o, tot->runs);
	t0 = tl_now_ns();
	ret = pto_run(rt, rp_orch, c);
	t0 = tl_now_ns() - t0;
	if (t0 > tot->max_run_ns) {
		tot->max_run_ns = t0;
		tot->max_run_seed = cur.seed;
	}
	tot->runs++;
	tot->tasks += pg.ntasks;
	tot->pattern_tasks[cur.pattern] += pg.ntasks;
	tot->gated += c->gated;
	check_run(c, ret, gate_before, o, tot);
	if (cur.why[0] && tot->failed_iters < DUMPS)
		rp_dump(&pg);
}

static uint64_t flow_waits(struct pto_runtime *rt)
{
	struct pto_stats st;
	uint64_t n = 0;
	int r, k;

	if (pto_get_stats(rt, &st))
		return 0;
	for (r = 0; r < PTO_MAX_DEPTH_RINGS; r++)
		for (k = 0; k < PTO_NUM_RINGS; k++)
			n += st.depth[r][k].stalls;
	return n;
}

static void run_iteration(uint64_t seed, const struct opts *o,
			  struct totals *tot)
{
	struct tl_rng rng;
	struct pto_runtime *rt;
	struct tl_rec rec;
	struct rp_ctx c = { .rec = &rec };
	int i;

	memset(&cur, 0, sizeof(cur));
	cur.seed = seed;
	tl_rng_seed(&rng, seed);
	random_config(&rng, &cur, o->sched);
	cur.nprogs = tl_range(&rng, 1, MAX_PROGS);
	/* from the seed, not the stream: the programs stay as they were */
	cur.deep = tl_mix(seed ^ 0xdee90000ull) & 1;
	rt = make_runtime(&cur, o);
	if (cur.deep)
		rp_deep_queues(rt);
	tl_rec_init(&rec, rt);
	if (rp_register(&rec, &cur.rc))
		bail_out("cannot register the kernel");
	for (i = 0; i <= RP_NSHARED; i++)
		if (!(c.shared[i] = pto_malloc(rt, RP_SH_BYTES)))
			bail_out("pto_malloc");
	cur_rt = rt;
	for (cur.prog = 0; cur.prog < cur.nprogs && !cur.why[0]; cur.prog++)
		run_one(rt, &c, &rng, o, tot);
	cur_rt = NULL;
	tot->waits += flow_waits(rt);
	tl_rec_free(&rec);
	pto_runtime_destroy(rt);
	tot->iters++;
	tot->per_sched[cur.sched]++;
}

/* ---- main ---------------------------------------------------------------- */

static void report_failure(struct totals *tot)
{
	char line[1024];
	FILE *f = fmemopen(line, sizeof(line), "w");

	cur.prog = cur.prog ? cur.prog - 1 : 0;
	if (f) {
		describe(f, &cur);
		fclose(f);
		diag("FAIL %s", line);
	}
	diag("  %s", cur.why);
	tot->failed_iters++;
}

static void options(struct opts *o)
{
	const char *s = getenv("STRESS_SCHED"), *beat;

	o->seed = tl_env_seed("STRESS_SEED");
	o->seconds = tl_env_u64("STRESS_SECONDS", 60);
	o->iters = tl_env_u64("STRESS_ITERS", UINT64_MAX);
	o->stall_ms = (uint32_t)tl_env_u64("STRESS_STALL_MS", 3000);
	o->sched = 0;
	if (s && !strcmp(s, "thread"))
		o->sched = PTO_SCHED_THREAD;
	else if (s && !strcmp(s, "workers"))
		o->sched = PTO_SCHED_WORKERS;
	else if (s && !strcmp(s, "shards"))
		o->sched = PTO_SCHED_SHARDS;
	else if (s && *s)
		bail_out("STRESS_SCHED must be thread, workers or shards");
	o->wedge = (int)tl_env_u64("STRESS_WEDGE", 0);
	o->log_fd = redirect_log(getenv("STRESS_LOG"));
	beat = getenv("STRESS_HEARTBEAT");
	o->beat_fd = beat && *beat ? open(beat, O_WRONLY | O_CREAT, 0644) : -1;
}

static void summary(const struct totals *tot, uint64_t ns)
{
	int p;

	diag("%llu iterations (%llu thread, %llu workers, %llu shards), "
	     "%llu runs, %llu tasks in %.1f s",
	     (unsigned long long)tot->iters,
	     (unsigned long long)tot->per_sched[PTO_SCHED_THREAD],
	     (unsigned long long)tot->per_sched[PTO_SCHED_WORKERS],
	     (unsigned long long)tot->per_sched[PTO_SCHED_SHARDS],
	     (unsigned long long)tot->runs, (unsigned long long)tot->tasks,
	     ns / 1e9);
	diag("programs held until their last submit: %llu",
	     (unsigned long long)tot->gated);
	for (p = 0; p <= RP_NPATTERNS; p++)
		diag("programs: %llu %s, %llu tasks",
		     (unsigned long long)tot->per_pattern[p],
		     p < RP_NPATTERNS ? rp_pattern_names[p] : "random",
		     (unsigned long long)tot->pattern_tasks[p]);
	diag("orchestrator waits for room in a ring: %llu; longest run %.1f ms (seed %#llx)",
	     (unsigned long long)tot->waits, tot->max_run_ns / 1e6,
	     (unsigned long long)tot->max_run_seed);
}

int main(void)
{
	struct totals tot = { 0 };
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	struct opts o;
	uint64_t seed, t0 = tl_now_ns(), i;

	options(&o);
	rp_init();
	/* let the watchdog's gdb attach where Yama restricts ptrace */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	sigaction(SIGUSR1, &sa, NULL);
	diag("seed %#llx (STRESS_SEED=%#llx repeats this run), %llu s",
	     (unsigned long long)o.seed, (unsigned long long)o.seed,
	     (unsigned long long)o.seconds);
	seed = o.seed;
	for (i = 0; i < o.iters && tot.failed_iters < MAX_FAILURES; i++) {
		if (tl_now_ns() - t0 >= o.seconds * 1000000000ull)
			break;
		run_iteration(seed, &o, &tot);
		if (cur.why[0])
			report_failure(&tot);
		seed = tl_mix(seed);
	}
	summary(&tot, tl_now_ns() - t0);
	ok(tot.iters > 0, "stress: ran at least one iteration");
	ok_eq(tot.failed_iters, 0, "stress: every iteration passed");
	ok_eq(tot.run_failed, 0, "stress: every pto_run returned 0");
	ok_eq(tot.mismatched, 0,
	      "stress: every result equals the sequential replay");
	ok_eq(tot.stalls, 0, "stress: libpto reported no stall");
	ok_eq(tot.logs, 0, "stress: libpto logged nothing else");
	ok_eq(tot.bad_out, 0,
	      "stress: OUTPUTs aligned to 64 and disjoint while alive");
	ok_eq(atomic_load(&rp_gate_timeouts), 0,
	      "stress: no gated task waited in vain");
	ok_eq(atomic_load(&rp_core_overlaps), 0,
	      "stress: no core ran two tasks at once (pto_core_id())");
	return tap_done();
}
