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
 * - destroying the runtime leaves none of its threads behind.
 *
 * That no thread writes the stats page between runs is in test_statspage.
 */
#include <dirent.h>
#include <errno.h>
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

static const struct {
	enum pto_sched_policy sched;
	const char *name;
} policies[] = {
	{ PTO_SCHED_THREAD, "thread" },
	{ PTO_SCHED_WORKERS, "workers" },
	{ PTO_SCHED_SHARDS, "shards" },
};

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

/* This process's threads whose name starts with prefix; *tid: the last. */
static int threads_named(const char *prefix, long *tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		bail_out("/proc/self/task: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* it exited meanwhile */
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, prefix, strlen(prefix))) {
			n++;
			if (tid)
				*tid = atol(e->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return n;
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
	ok(threads_named("pto-sched", NULL) == 0,
	   "thread: no scheduler thread before the first run");
	bad += pto_run(rt, orch_empty, NULL) != 0;
	ok(threads_named("pto-sched", &first) == 1,
	   "thread: the first run leaves one scheduler thread");
	for (i = 0; i < 50; i++) {
		bad += pto_run(rt, i % 2 ? orch_chain : orch_empty, &r) != 0;
		n = threads_named("pto-sched", &tid);
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

	for (p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		int runs;

		for (runs = 0; runs <= 3; runs += 3) {
			struct pto_runtime *rt;
			struct tl_rec r;
			int i;

			rt = runtime(policies[p].sched, &r);
			for (i = 0; i < runs; i++)
				pto_run(rt, orch_chain, &r);
			tl_rec_free(&r);
			pto_runtime_destroy(rt);
			ok(threads_named("pto-", NULL) == 0,
			   "%s: destroyed after %d runs, no pto- thread is "
			   "left", policies[p].name, runs);
		}
	}
}

int main(void)
{
	size_t p;

	for (p = 0; p < sizeof(policies) / sizeof(policies[0]); p++)
		test_mixed_runs(policies[p].sched, policies[p].name);
	test_sched_thread_stays();
	test_no_threads_left();
	return tap_done();
}
