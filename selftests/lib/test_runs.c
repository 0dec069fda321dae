// SPDX-License-Identifier: MIT
/*
 * One runtime over many runs, as a request loop uses it.  The threads
 * that schedule stay from one run to the next (the scheduler's thread, or
 * the core threads with the scheduling hooks installed), so every run must
 * start from the state the last one left, whatever that run did:
 *
 * - runs of a chain of tasks, empty runs, runs of nested scopes with
 *   runtime-allocated intermediates and runs whose task fails follow each
 *   other under every policy, and the results equal a sequential replay;
 * - the scheduler's thread is one thread, the same after every run;
 * - destroying the runtime leaves none of its threads behind;
 * - pto_run_cancel() stops the run in progress, from a kernel's thread,
 *   from a signal handler on the orchestrator's own thread and while the
 *   orchestrator waits for a full ring, and never a later run; a cancel
 *   accepted after every task ran still ends the run -ECANCELED.
 *
 * That no thread writes the stats page between runs is in test_statspage.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels.h"
#include "testlib.h"

#define K_FAIL 45
#define RUNS 240
#define CHAIN 24
#define WORDS 8

static uint64_t *gbuf;	/* the chain's buffer */
static uint64_t *sink;	/* the failing tasks' */

static void k_fail(const uint64_t *a, uint32_t n)
{
	pto_kernel_set_error(-EIO);
}

/* A chain of steps over gbuf, every task a scope of its own. */
static int orch_chain(struct pto_runtime *rt, void *arg)
{
	struct tl_rec *r = arg;
	int i, ret = 0;

	for (i = 0; i < CHAIN && !ret; i++) {
		enum pto_worker_type t = i % 2 ? PTO_WORKER_CUBE :
					 PTO_WORKER_VECTOR;
		struct pto_param p[] = { PTO_INOUT(gbuf, 0, WORDS * 8),
					 PTO_SCALAR(WORDS), PTO_SCALAR(i) };

		pto_scope_begin(rt);
		if (tl_submit(r, KID(K_STEP, t), t, p, 3) < 0)
			ret = -1;
		ret = pto_scope_end(rt) ? : ret;
	}
	return ret;
}

/* Intermediates the runtime allocates, read back into gbuf. */
static int orch_nested(struct pto_runtime *rt, void *arg)
{
	struct tl_rec *r = arg;
	int i, ret = 0;

	for (i = 0; i < 4 && !ret; i++) {
		void *tmp;
		struct pto_param fill[] = { PTO_OUT(&tmp, WORDS * 8),
					    PTO_SCALAR(WORDS), PTO_SCALAR(i) };

		pto_scope_begin(rt);
		if (tl_submit(r, KID(K_FILL, PTO_WORKER_VECTOR),
			      PTO_WORKER_VECTOR, fill, 3) < 0) {
			ret = -1;
		} else {
			struct pto_param mix[] = {
				PTO_INOUT(gbuf, 0, WORDS * 8),
				PTO_IN(tmp, 0, WORDS * 8),
				PTO_IN(tmp, 0, WORDS * 8),
				PTO_SCALAR(WORDS), PTO_SCALAR(i) };

			if (tl_submit(r, KID(K_MIX2, PTO_WORKER_CUBE),
				      PTO_WORKER_CUBE, mix, 5) < 0)
				ret = -1;
		}
		ret = pto_scope_end(rt) ? : ret;
	}
	return ret;
}

static int orch_empty(struct pto_runtime *rt, void *arg)
{
	return 0;
}

/* A task that fails; the run returns its status. */
static int orch_fail(struct pto_runtime *rt, void *arg)
{
	struct pto_param p[] = { PTO_INOUT(sink, 0, 8) };

	return pto_submit_task(rt, K_FAIL, PTO_WORKER_VECTOR, p, 1) < 0 ?
	       -1 : 0;
}

static struct pto_runtime *runtime(enum pto_sched_policy sched,
				   struct tl_rec *r)
{
	struct pto_config cfg;
	struct pto_runtime *rt;

	tl_config(&cfg, 16, 1 << 20);
	cfg.sched = sched;
	rt = tl_runtime(&cfg);
	tl_rec_init(r, rt);
	if (register_test_kernels(r) ||
	    pto_kernel_register(rt, K_FAIL, PTO_WORKER_VECTOR, k_fail, "fail"))
		bail_out("cannot register the kernels");
	gbuf = pto_malloc(rt, WORDS * 8);
	sink = pto_malloc(rt, 8);
	if (!gbuf || !sink)
		bail_out("pto_malloc");
	memset(gbuf, 0, WORDS * 8);
	tl_host(r, gbuf, WORDS * 8);
	return rt;
}

/*
 * Runs of every kind in turn; a failed run's error must not reach the
 * next, and the chain's buffer must equal the replay of every task the
 * successful runs took.
 */
static void test_mixed_runs(enum pto_sched_policy sched, const char *name)
{
	uint64_t tasks = 0, failed = 0;
	int i, ret, bad_ok = 0, bad_fail = 0;
	struct pto_stats st;
	struct pto_runtime *rt;
	struct tl_rec r;
	char what[64];

	rt = runtime(sched, &r);
	for (i = 0; i < RUNS; i++) {
		struct tl_capture cap;

		switch (i % 4) {
		case 0:
			ret = pto_run(rt, orch_chain, &r);
			tasks += CHAIN;
			bad_ok += ret != 0;
			break;
		case 1:
			bad_ok += pto_run(rt, orch_empty, NULL) != 0;
			break;
		case 2:
			ret = pto_run(rt, orch_nested, &r);
			tasks += 8;
			bad_ok += ret != 0;
			break;
		default:
			tl_capture_begin(&cap);	/* the failure's report */
			ret = pto_run(rt, orch_fail, NULL);
			free(tl_capture_end(&cap));
			tasks++;
			failed++;
			bad_fail += ret != -EIO;
			break;
		}
	}
	ok(bad_ok == 0, "%s: %d runs of chains, nested scopes and none: "
	   "%d did not return 0", name, RUNS - RUNS / 4, bad_ok);
	ok(bad_fail == 0, "%s: %d runs whose task fails: %d did not return "
	   "-EIO", name, RUNS / 4, bad_fail);
	snprintf(what, sizeof(what), "%s: the buffer after %d runs", name,
		 RUNS);
	if (!ok(tl_replay(&r) == 0, "%s: the replay runs", name))
		diag("  %s", r.err);
	else
		tl_check(&r, gbuf, what);
	ok(pto_get_stats(rt, &st) == 0 && st.tasks_completed == tasks &&
	   st.tasks_failed == failed,
	   "%s: stats count every task of every run (%llu of %llu done, "
	   "%llu of %llu failed)", name,
	   (unsigned long long)st.tasks_completed, (unsigned long long)tasks,
	   (unsigned long long)st.tasks_failed, (unsigned long long)failed);
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/*
 * The scheduler's thread is made by the first run and serves every
 * later one: one thread, the same, however many runs.
 */
static void test_sched_thread_stays(void)
{
	long first = 0, tid = 0;
	int i, n = 0, moved = 0, bad = 0;
	struct pto_runtime *rt;
	struct tl_rec r;

	rt = runtime(PTO_SCHED_THREAD, &r);
	ok(tl_threads_named("pto-sched", NULL) == 0,
	   "thread: no scheduler thread before the first run");
	bad += pto_run(rt, orch_empty, NULL) != 0;
	ok(tl_threads_named("pto-sched", &first) == 1,
	   "thread: the first run leaves one scheduler thread");
	for (i = 0; i < 50; i++) {
		bad += pto_run(rt, i % 2 ? orch_chain : orch_empty, &r) != 0;
		n = tl_threads_named("pto-sched", &tid);
		moved += n != 1 || tid != first;
	}
	ok(!bad && !moved, "thread: after each of 50 more runs, one "
	   "scheduler thread, the first run's (%d runs failed, %d times "
	   "not)", bad, moved);
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* Every policy: the runtime's threads end with it, after runs or none. */
static void test_no_threads_left(void)
{
	size_t p;

	for (p = 0; p < TL_NPOLICIES; p++) {
		int runs;

		for (runs = 0; runs <= 3; runs += 3) {
			struct pto_runtime *rt;
			struct tl_rec r;
			int i;

			rt = runtime(tl_policies[p].sched, &r);
			for (i = 0; i < runs; i++)
				pto_run(rt, orch_chain, &r);
			tl_rec_free(&r);
			pto_runtime_destroy(rt);
			ok(tl_threads_named("pto-", NULL) == 0,
			   "%s: destroyed after %d runs, no pto- thread is "
			   "left", tl_policies[p].name, runs);
		}
	}
}

/* ---- pto_run_cancel() --------------------------------------------------- */

#define K_CANCEL 46
#define K_COUNT 47
#define CANCEL_TASKS 3000
#define CANCEL_AT 100

static struct pto_runtime *cancel_rt;
static uint32_t cancel_ran;	/* kernels run */
static uint32_t cancel_submitted;	/* tasks the orchestration submitted */
static bool cancel_in_kernel;
static bool cancel_waited_out;	/* the 8 submissions never came */

/*
 * Counts itself; the CANCEL_AT-th cancels the run, once the orchestration
 * has submitted 8 more (a chain: none of them can start before this one
 * ends), so that there are tasks to cancel.  Bounded: a runtime that
 * never submits them fails the checks, not hangs.
 */
static void k_cancel(const uint64_t *a, uint32_t n)
{
	uint64_t t0 = tl_now_ns();

	if (__atomic_add_fetch(&cancel_ran, 1, __ATOMIC_RELAXED) != CANCEL_AT ||
	    !cancel_in_kernel)
		return;
	while (__atomic_load_n(&cancel_submitted, __ATOMIC_ACQUIRE) <
	       CANCEL_AT + 8) {
		if (tl_now_ns() - t0 > 10000000000ull) {
			__atomic_store_n(&cancel_waited_out, true,
					 __ATOMIC_RELAXED);
			break;
		}
		sched_yield();
	}
	pto_run_cancel(cancel_rt);
}

struct cancel_run {
	int first_bad;		/* index of the first refused submit */
	int64_t bad_rc;		/* what it returned */
	int64_t again_rc;	/* the submit after it */
	bool raise_at;		/* raise SIGUSR1 after CANCEL_AT submits */
};

static int submit_counter(struct pto_runtime *rt)
{
	struct pto_param p[] = { PTO_INOUT(gbuf, 0, 8) };
	int64_t id;

	pto_scope_begin(rt);
	id = pto_submit_task(rt, K_CANCEL, PTO_WORKER_VECTOR, p, 1);
	pto_scope_end(rt);
	if (id >= 0)
		__atomic_add_fetch(&cancel_submitted, 1, __ATOMIC_RELEASE);
	return id < 0 ? (int)id : 0;
}

/* A chain until a submit is refused; a scope per task. */
static int orch_until_refused(struct pto_runtime *rt, void *arg)
{
	struct cancel_run *c = arg;
	int i;

	c->first_bad = -1;
	for (i = 0; i < CANCEL_TASKS; i++) {
		int rc;

		if (c->raise_at && i == CANCEL_AT)
			raise(SIGUSR1);
		rc = submit_counter(rt);
		if (rc) {
			c->first_bad = i;
			c->bad_rc = rc;
			c->again_rc = submit_counter(rt);
			return rc;
		}
	}
	return 0;
}

static void on_sigusr1(int sig)
{
	pto_run_cancel(cancel_rt);
}

static struct pto_runtime *cancel_runtime(enum pto_sched_policy sched,
					  uint32_t window, struct tl_rec *r)
{
	struct pto_config cfg;
	struct pto_runtime *rt;

	tl_config(&cfg, window, 1 << 20);
	cfg.sched = sched;
	rt = tl_runtime(&cfg);
	tl_rec_init(r, rt);
	if (register_test_kernels(r) ||
	    pto_kernel_register(rt, K_CANCEL, PTO_WORKER_VECTOR, k_cancel,
				"cancel"))
		bail_out("cannot register the kernels");
	gbuf = pto_malloc(rt, WORDS * 8);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, WORDS * 8);
	tl_host(r, gbuf, WORDS * 8);
	cancel_rt = rt;
	return rt;
}

/* After a cancelled run: the next one runs whole and right. */
static void check_next_run(struct pto_runtime *rt, struct tl_rec *r,
			   const char *name, const char *how)
{
	char what[96];

	tl_rec_reset(r);
	tl_host(r, gbuf, WORDS * 8);
	snprintf(what, sizeof(what), "%s: %s: the next run's buffer", name,
		 how);
	if (ok_eq(pto_run(rt, orch_chain, r), 0, "%s: %s: the next run "
		  "returns 0", name, how) && tl_replay(r) == 0)
		tl_check(r, gbuf, what);
}

static void test_cancel_from_kernel(enum pto_sched_policy sched,
				    const char *name)
{
	struct cancel_run c = { 0 };
	struct pto_stats before, after;
	struct pto_runtime *rt;
	struct tl_capture cap;
	struct tl_rec r;
	char *text;
	int ret;

	/*
	 * The cancelling kernel waits for 8 more submissions.  Retired slots
	 * reach the orchestrator in batches of up to 32 (and a kernel may be
	 * run inline by the thread that would publish them): the window
	 * holds the 8 beside a batch not yet published.
	 */
	rt = cancel_runtime(sched, 64, &r);
	cancel_ran = 0;
	cancel_submitted = 0;
	cancel_in_kernel = true;
	cancel_waited_out = false;
	pto_get_stats(rt, &before);
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_until_refused, &c);
	text = tl_capture_end(&cap);
	pto_get_stats(rt, &after);
	ok_eq(ret, -ECANCELED, "%s: a kernel cancels the run: pto_run "
	      "returns -ECANCELED", name);
	ok(c.first_bad >= CANCEL_AT && c.first_bad < CANCEL_TASKS &&
	   c.bad_rc == -ECANCELED && c.again_rc == -ECANCELED,
	   "%s: the submits after it return -ECANCELED (from the %d-th of "
	   "%d on)", name, c.first_bad, CANCEL_TASKS);
	ok(!__atomic_load_n(&cancel_waited_out, __ATOMIC_RELAXED),
	   "%s: the cancelling kernel saw the orchestration submit 8 more "
	   "tasks", name);
	/* a chain: of the tasks in flight then, at most the head runs */
	ok(cancel_ran < (uint32_t)c.first_bad,
	   "%s: tasks submitted and not started did not run (%u of %d ran)",
	   name, cancel_ran, c.first_bad);
	ok(after.tasks_failed == before.tasks_failed,
	   "%s: no task counts as failed", name);
	ok(text && strstr(text, "cancelled") &&
	   !strstr(text, "failed:"), "%s: the run says it was cancelled, "
	   "and no task failed", name);
	free(text);
	ok_eq(pto_run_cancel(rt), -ENOENT,
	      "%s: pto_run_cancel() between runs: -ENOENT", name);
	check_next_run(rt, &r, name, "cancelled from a kernel");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

static void test_cancel_from_signal(void)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 }, old;
	struct cancel_run c = { .raise_at = true };
	struct pto_runtime *rt;
	struct tl_capture cap;
	struct tl_rec r;
	int ret;

	rt = cancel_runtime(PTO_SCHED_AUTO, 0, &r);
	cancel_in_kernel = false;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_until_refused, &c);
	free(tl_capture_end(&cap));
	sigaction(SIGUSR1, &old, NULL);
	ok_eq(ret, -ECANCELED, "signal: a SIGUSR1 handler on the "
	      "orchestrator's thread cancels the run");
	ok(c.first_bad == CANCEL_AT && c.bad_rc == -ECANCELED,
	   "signal: the first submit after the handler returns -ECANCELED "
	   "(the %d-th)", c.first_bad);
	check_next_run(rt, &r, "signal", "cancelled from a handler");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/*
 * Every task in the run's scope, each making a buffer: the scope holds
 * them, and the fifth waits for a slot for ever.
 */
static int orch_held(struct pto_runtime *rt, void *arg)
{
	void *t;
	int i;

	for (i = 0; i < 5; i++) {
		struct pto_param p[] = { PTO_INOUT(gbuf, 0, 8),
					 PTO_OUT(&t, 64) };
		int64_t id = pto_submit_task(rt, K_CANCEL, PTO_WORKER_VECTOR,
					     p, 2);

		if (id < 0)
			return (int)id;
	}
	return 0;
}

/* Cancel once the orchestrator has waited for a slot; bounded. */
static void *cancel_when_stalled(void *arg)
{
	struct pto_runtime *rt = arg;
	struct pto_stats st;
	int polls;

	for (polls = 0; polls < 20000; polls++) {
		if (!pto_get_stats(rt, &st) && st.ring[PTO_RING_TASK].stalls)
			break;
		usleep(1000);
	}
	pto_run_cancel(rt);
	return NULL;
}

static void test_cancel_stalled(void)
{
	struct pto_runtime *rt;
	struct tl_capture cap;
	struct tl_rec r;
	pthread_t th;
	char *text;
	int ret;

	/* the stall timeout (20 s) is far off: only the cancel ends it */
	rt = cancel_runtime(PTO_SCHED_AUTO, 4, &r);
	cancel_in_kernel = false;
	tl_capture_begin(&cap);
	if (pthread_create(&th, NULL, cancel_when_stalled, rt))
		bail_out("pthread_create");
	ret = pto_run(rt, orch_held, NULL);
	pthread_join(th, NULL);
	text = tl_capture_end(&cap);
	ok_eq(ret, -ECANCELED, "stalled: an orchestrator waiting for a full "
	      "task ring is cancelled from another thread");
	ok(text && !strstr(text, "deadlock"),
	   "stalled: no deadlock is reported");
	free(text);
	check_next_run(rt, &r, "stalled", "cancelled while stalled");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/*
 * The tasks have all run (pto_wait()), then a cancel comes: accepted
 * (0), so the run must end -ECANCELED, as the caller was told; a second
 * request finds it made already (-EALREADY); the next run, with no
 * cancel, ends 0.
 */
struct late_cancel {
	int accepted;		/* the first request's answer */
	int again;		/* the second's */
};

static int orch_done_then_cancel(struct pto_runtime *rt, void *arg)
{
	struct late_cancel *lc = arg;
	int ret = submit_counter(rt) ?: pto_wait(rt);

	if (ret || !lc)		/* NULL: a plain run */
		return ret;
	lc->accepted = pto_run_cancel(rt);
	lc->again = pto_run_cancel(rt);
	return 0;
}

static void test_cancel_late(void)
{
	struct pto_runtime *rt;
	struct tl_capture cap;
	struct tl_rec r;
	int i, ret, bad = 0, again = 0, plain = 0;
	struct late_cancel lc;

	for (size_t p = 0; p < TL_NPOLICIES; p++) {
		rt = cancel_runtime(tl_policies[p].sched, 64, &r);
		cancel_in_kernel = false;
		tl_capture_begin(&cap);
		for (i = 0; i < 200; i++) {
			lc.accepted = lc.again = -1;
			ret = pto_run(rt, orch_done_then_cancel, &lc);
			bad += lc.accepted != 0 || ret != -ECANCELED;
			again += lc.again != -EALREADY;
			plain += pto_run(rt, orch_done_then_cancel, NULL) != 0;
		}
		free(tl_capture_end(&cap));
		ok(!bad && !plain, "%s: a cancel accepted after every task ran "
		   "ends the run -ECANCELED (%d of 200 runs did not), and "
		   "never the next (%d did)", tl_policies[p].name, bad, plain);
		ok(!again, "%s: a second cancel of the run is -EALREADY (%d of "
		   "200 were not)", tl_policies[p].name, again);
		tl_rec_free(&r);
		pto_runtime_destroy(rt);
	}
}

/*
 * Cancels from another thread at any moment of runs of one task each.
 * A cancel accepted (0) while the count of runs done stood still, before
 * and after it, was one for the run in progress then: that run must end
 * -ECANCELED.  Once accepted, the thread waits for that run to end.
 */
#define RACE_RUNS 20000		/* at most; until RACE_TOLD accepted */
#define RACE_TOLD 300

struct cancel_race {
	struct pto_runtime *rt;
	uint32_t done;			/* runs ended */
	uint32_t told;			/* cancels accepted */
	bool stop;
	int result[RACE_RUNS];
	bool cancelled[RACE_RUNS];	/* a cancel accepted during it */
};

static void *cancel_racer(void *arg)
{
	struct cancel_race *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		uint32_t before = __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
		int ret = pto_run_cancel(c->rt);
		uint32_t after = __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);

		if (ret || before != after || before >= RACE_RUNS)
			continue;
		c->cancelled[before] = true;
		__atomic_add_fetch(&c->told, 1, __ATOMIC_RELAXED);
		while (__atomic_load_n(&c->done, __ATOMIC_ACQUIRE) == before &&
		       !__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	return NULL;
}

static void test_cancel_race(void)
{
	struct cancel_race *c = calloc(1, sizeof(*c));
	struct tl_capture cap;
	struct tl_rec r;
	pthread_t th;
	int i, runs, told = 0, wrong = 0;

	if (!c)
		bail_out("out of memory");
	c->rt = cancel_runtime(PTO_SCHED_THREAD, 64, &r);
	cancel_in_kernel = false;
	tl_capture_begin(&cap);
	if (pthread_create(&th, NULL, cancel_racer, c))
		bail_out("pthread_create");
	for (i = 0; i < RACE_RUNS &&
	     __atomic_load_n(&c->told, __ATOMIC_RELAXED) < RACE_TOLD; i++) {
		c->result[i] = pto_run(c->rt, orch_done_then_cancel, NULL);
		__atomic_store_n(&c->done, i + 1, __ATOMIC_RELEASE);
	}
	runs = i;
	__atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	free(tl_capture_end(&cap));
	for (i = 0; i < runs; i++) {
		told += c->cancelled[i];
		wrong += c->cancelled[i] && c->result[i] != -ECANCELED;
	}
	ok(told && !wrong, "cancels racing %d runs: every one accepted ends "
	   "its run -ECANCELED (%d accepted, %d runs ended otherwise)",
	   runs, told, wrong);
	tl_rec_free(&r);
	pto_runtime_destroy(c->rt);
	free(c);
}

/*
 * A cancel from another thread while a chain runs, every run: once
 * pto_run_cancel() has returned 0, a chain (one task ready at a time)
 * runs at most the tasks already taken.  With shards the core threads
 * take the next task themselves; only a thread holding the right to
 * schedule noticed the cancel, and while the holder was preempted (the
 * spinning canceller makes the CPUs scarce) the chain ran on: up to
 * thousands of tasks in about one run in fifty.
 */
#define CHAIN_RUNS 400
#define CHAIN_TASKS 4000
#define CHAIN_CANCEL_AT 400
#define CHAIN_SLACK 16

struct chain_cancel {
	struct pto_runtime *rt;
	uint64_t *x;		/* the chain's counter */
	bool over;		/* the run has returned */
	uint64_t at;		/* *x once pto_run_cancel() returned 0 */
	bool told;		/* it did */
};

static void k_count(const uint64_t *a, uint32_t n)
{
	__atomic_add_fetch((uint64_t *)(uintptr_t)a[0], 1, __ATOMIC_SEQ_CST);
}

static void *cancel_chain(void *arg)
{
	struct chain_cancel *c = arg;

	while (__atomic_load_n(c->x, __ATOMIC_SEQ_CST) < CHAIN_CANCEL_AT)
		if (__atomic_load_n(&c->over, __ATOMIC_ACQUIRE))
			return NULL;
	c->told = pto_run_cancel(c->rt) == 0;
	c->at = __atomic_load_n(c->x, __ATOMIC_SEQ_CST);
	return NULL;
}

static int orch_count_chain(struct pto_runtime *rt, void *arg)
{
	struct chain_cancel *c = arg;
	int i;

	for (i = 0; i < CHAIN_TASKS; i++) {
		struct pto_param p[] = { PTO_INOUT(c->x, 0, 8) };
		int64_t id = pto_submit_task(rt, K_COUNT,
					     PTO_WORKER_VECTOR, p, 1);

		if (id < 0)
			return (int)id;
	}
	return 0;
}

static void test_cancel_chain(enum pto_sched_policy sched, const char *name)
{
	struct chain_cancel c = { 0 };
	uint64_t worst = 0;
	int i, late = 0, wrong = 0, told = 0;
	struct tl_capture cap;
	struct tl_rec r;
	pthread_t th;

	c.rt = cancel_runtime(sched, 0, &r);
	if (pto_kernel_register(c.rt, K_COUNT, PTO_WORKER_VECTOR,
				k_count, "count"))
		bail_out("cannot register the kernel");
	c.x = gbuf;
	tl_capture_begin(&cap);
	for (i = 0; i < CHAIN_RUNS; i++) {
		int ret;

		*c.x = 0;
		c.over = false;
		c.told = false;
		if (pthread_create(&th, NULL, cancel_chain, &c))
			bail_out("pthread_create");
		ret = pto_run(c.rt, orch_count_chain, &c);
		__atomic_store_n(&c.over, true, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		if (!c.told)
			continue;
		told++;
		wrong += ret != -ECANCELED;
		if (*c.x > c.at + CHAIN_SLACK) {
			late++;
			if (*c.x - c.at > worst)
				worst = *c.x - c.at;
		}
	}
	free(tl_capture_end(&cap));
	ok(told && !wrong && !late, "%s: a chain cancelled from another "
	   "thread, %d runs: at most %d more tasks ran after the cancel "
	   "(%d of %d accepted did not stop, worst %llu; %d did not end "
	   "-ECANCELED)", name, CHAIN_RUNS, CHAIN_SLACK, late, told,
	   (unsigned long long)worst, wrong);
	tl_rec_free(&r);
	pto_runtime_destroy(c.rt);
}

/*
 * pto_get_stats() from another thread while runs come and go: run_ns
 * ("the run in progress included") never goes back.  A snapshot as a run
 * ended counted the run twice for a moment, or read the clock after the
 * end was taken, and the next one went back.
 */
#define STATS_RUNS 300

struct stats_poll {
	struct pto_runtime *rt;
	bool stop;
	uint64_t polls, back, worst;
};

static void *poll_run_ns(void *arg)
{
	struct stats_poll *sp = arg;
	struct pto_stats st;
	uint64_t last = 0;

	while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
		if (pto_get_stats(sp->rt, &st))
			continue;
		sp->polls++;
		if (st.run_ns < last) {
			sp->back++;
			if (last - st.run_ns > sp->worst)
				sp->worst = last - st.run_ns;
		}
		last = st.run_ns;
	}
	return NULL;
}

static void test_stats_while_running(void)
{
	struct stats_poll sp = { 0 };
	struct pto_stats st;
	struct tl_rec r;
	pthread_t th;
	int i, bad = 0;

	sp.rt = runtime(PTO_SCHED_AUTO, &r);
	if (pthread_create(&th, NULL, poll_run_ns, &sp))
		bail_out("pthread_create");
	for (i = 0; i < STATS_RUNS; i++)
		bad += pto_run(sp.rt, orch_chain, &r) != 0;
	__atomic_store_n(&sp.stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ok(!bad && sp.polls > STATS_RUNS && !sp.back,
	   "pto_get_stats() polled during %d runs: run_ns never goes back "
	   "(%llu polls, %llu went back, by up to %llu ns; %d runs failed)",
	   STATS_RUNS, (unsigned long long)sp.polls,
	   (unsigned long long)sp.back, (unsigned long long)sp.worst, bad);
	ok(!pto_get_stats(sp.rt, &st) && st.runs == STATS_RUNS,
	   "pto_get_stats() after them: %d runs", STATS_RUNS);
	tl_rec_free(&r);
	pto_runtime_destroy(sp.rt);
}

int main(void)
{
	size_t p;

	for (p = 0; p < TL_NPOLICIES; p++)
		test_mixed_runs(tl_policies[p].sched, tl_policies[p].name);
	test_sched_thread_stays();
	test_no_threads_left();
	for (p = 0; p < TL_NPOLICIES; p++)
		test_cancel_from_kernel(tl_policies[p].sched, tl_policies[p].name);
	test_cancel_from_signal();
	test_cancel_stalled();
	test_cancel_late();
	test_cancel_race();
	for (p = 0; p < TL_NPOLICIES; p++)
		test_cancel_chain(tl_policies[p].sched, tl_policies[p].name);
	test_stats_while_running();
	ok_eq(pto_run_cancel(NULL), -EINVAL, "pto_run_cancel(NULL): -EINVAL");
	return tap_done();
}
