// SPDX-License-Identifier: MIT
/*
 * Where the simulator's core threads run (lib/backend/place.h).  The test
 * keeps itself to two CPUs, so that on any machine the core threads fill
 * them and the soft pinning applies: each core thread is pinned to a CPU
 * of its own, round robin; one that waits for its CPU (a thread of ours
 * spins on it) lets it go, and takes it again once nothing competes.
 * PTO_CPUS=any leaves the threads alone, and a list pins for good.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#define K_BUSY 1
#define K_LONG 2
/* How long a case may take to see what it waits for. */
#define PATIENCE_NS 30000000000ull

static int cpu_a, cpu_b;	/* the two CPUs the test keeps to */
static cpu_set_t both;

static int mask_cpus;	/* CPUs the last kernel's thread might use */

/* a[0]: buf (INOUT, unused), a[1]: microseconds to compute for. */
static void k_busy(const uint64_t *a, uint32_t n)
{
	uint64_t until = tl_now_ns() + a[1] * 1000;
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set))
		__atomic_store_n(&mask_cpus, CPU_COUNT(&set), __ATOMIC_RELAXED);
	while (tl_now_ns() < until)
		;
}

/* The one CPU core c's thread is pinned to, -1: more than one, -2: none. */
static int pinned_to(uint32_t c)
{
	char name[16];
	cpu_set_t set;
	long tid = 0;
	int i;

	snprintf(name, sizeof(name), "pto-core%u", c);	/* c < 10 */
	if (tl_threads_named(name, &tid) != 1 ||
	    sched_getaffinity((pid_t)tid, sizeof(set), &set))
		return -2;
	if (CPU_COUNT(&set) != 1)
		return -1;
	for (i = 0; !CPU_ISSET(i, &set); i++)
		;
	return i;
}

/* sched: a PTO_SCHED_* policy, or -1 for the configuration's */
static struct pto_runtime *runtime_sched(const char *cpus, uint32_t cube,
					 uint32_t vector, int sched)
{
	struct pto_config cfg;
	struct pto_runtime *rt;

	tl_config(&cfg, 0, 0);
	if (sched >= 0)
		cfg.sched = (uint32_t)sched;
	cfg.cores[PTO_WORKER_CUBE] = cube;
	cfg.cores[PTO_WORKER_VECTOR] = vector;
	cfg.cores[PTO_WORKER_AICPU] = 0;
	cfg.cores[PTO_WORKER_ACCEL] = 0;
	cfg.cpus = cpus;
	rt = tl_runtime(&cfg);
	if (cube && (pto_kernel_register(rt, K_BUSY, PTO_WORKER_CUBE, k_busy,
					 "busy") ||
		     pto_kernel_register(rt, K_LONG, PTO_WORKER_CUBE, k_busy,
					 "long")))
		bail_out("cannot register the kernels");
	return rt;
}

static struct pto_runtime *runtime(const char *cpus, uint32_t cube,
				   uint32_t vector)
{
	return runtime_sched(cpus, cube, vector, -1);
}

/* Wait (running nothing) until every core thread is pinned. */
static void test_round_robin(void)
{
	struct pto_runtime *rt = runtime(NULL, 2, 2);
	uint64_t until = tl_now_ns() + PATIENCE_NS;
	uint32_t c, placed = 0;

	while (placed < 4 && tl_now_ns() < until)
		for (c = placed = 0; c < 4; c++)
			placed += pinned_to(c) >= 0;
	for (c = 0; c < 4; c++)
		ok_eq(pinned_to(c), c % 2 ? cpu_b : cpu_a,
		      "default: core %u's thread has CPU %d", c,
		      c % 2 ? cpu_b : cpu_a);
	pto_runtime_destroy(rt);
}

struct busy_run {
	uint32_t tasks, us;
	void *buf;
	uint32_t kernel;	/* 0: K_BUSY */
};

static int orch_busy(struct pto_runtime *rt, void *arg)
{
	const struct busy_run *b = arg;
	uint32_t i;

	for (i = 0; i < b->tasks; i++) {
		struct pto_param prm[] = {
			PTO_INOUT(b->buf, 0, 64), PTO_SCALAR(b->us),
		};
		int64_t id = pto_submit_task(rt, b->kernel ? b->kernel :
					     K_BUSY, PTO_WORKER_CUBE, prm, 2);

		if (id < 0)
			return (int)id;
	}
	return 0;
}

static volatile int hog_stop;

/* Keeps cpu_a busy until told to stop. */
static void *hog(void *arg)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu_a, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return NULL;
	while (!__atomic_load_n(&hog_stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/*
 * Run 1 ms tasks on core 0 (the only cube core, whose thread has cpu_a)
 * until its placement is want (-1: any CPU), or the patience runs out.
 */
static int run_until(struct pto_runtime *rt, struct busy_run *b, int want)
{
	uint64_t until = tl_now_ns() + PATIENCE_NS;
	int ret = 0;

	while (!ret && pinned_to(0) != want && tl_now_ns() < until)
		ret = pto_run(rt, orch_busy, b);
	return ret ? ret : pinned_to(0);
}

/*
 * sched: -1, the configuration's policy; PTO_SCHED_SHARDS, whose core
 * threads look at their CPU from a loop of their own (shard_loop()).
 */
static void test_contended(int sched, const char *name)
{
	struct pto_runtime *rt = runtime_sched(NULL, 1, 1, sched);
	struct busy_run b = { .tasks = 20, .us = 1000 };
	pthread_t t;

	b.buf = pto_malloc(rt, 64);
	if (!b.buf)
		bail_out("pto_malloc");
	ok_eq(run_until(rt, &b, cpu_a), cpu_a,
	      "%score 0's thread has CPU %d", name, cpu_a);
	hog_stop = 0;
	if (pthread_create(&t, NULL, hog, NULL))
		bail_out("pthread_create");
	ok_eq(run_until(rt, &b, -1), -1,
	      "%swith CPU %d kept busy by another thread, it lets it go",
	      name, cpu_a);
	__atomic_store_n(&hog_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	ok_eq(run_until(rt, &b, cpu_a), cpu_a,
	      "%sonce that thread is gone, it takes CPU %d again", name,
	      cpu_a);
	pto_runtime_destroy(rt);
}

/*
 * Run the 100 us tasks of b until one ran pinned (the thread may have let
 * its CPU go for a while if something else ran there); false: none did
 * within the patience.
 */
static bool short_pinned(struct pto_runtime *rt, struct busy_run *b)
{
	uint64_t until = tl_now_ns() + PATIENCE_NS;

	do {
		mask_cpus = 0;
		if (pto_run(rt, orch_busy, b))
			return false;
	} while (mask_cpus != 1 && tl_now_ns() < until);
	return mask_cpus == 1;
}

/*
 * The thread cannot look at its CPU while it runs a task: one that may be
 * longer than a look's window (its kernel's last run was, or it never
 * ran) runs unpinned, and the thread takes its CPU again after it.
 */
static void test_long_tasks(void)
{
	struct pto_runtime *rt = runtime(NULL, 1, 1);
	struct busy_run b = { .tasks = 20, .us = 100 };
	struct busy_run l = { .tasks = 1, .us = 5000, .kernel = K_LONG };

	b.buf = pto_malloc(rt, 64);
	if (!b.buf)
		bail_out("pto_malloc");
	l.buf = b.buf;
	ok(short_pinned(rt, &b), "long tasks: a 100 us task runs pinned");
	ok_eq(pto_run(rt, orch_busy, &l), 0, "long tasks: a kernel's first");
	ok_eq(mask_cpus, 2, "long tasks: a kernel's first task runs unpinned");
	ok_eq(pto_run(rt, orch_busy, &l), 0, "long tasks: its second");
	ok_eq(mask_cpus, 2, "long tasks: after a 5 ms run, its next runs "
	      "unpinned");
	ok(short_pinned(rt, &b), "long tasks: then short ones run pinned "
	   "again");
	pto_runtime_destroy(rt);
}

/*
 * A mask someone else gives a core thread (taskset -a -p) stands: here
 * given while the thread is unpinned for a contended CPU, and still its
 * mask well after the hold (a second) would have ended.
 */
static void test_theirs(void)
{
	struct pto_runtime *rt = runtime(NULL, 1, 1);
	struct busy_run b = { .tasks = 20, .us = 1000 };
	uint64_t until;
	cpu_set_t one;
	pthread_t t;
	long tid = 0;

	b.buf = pto_malloc(rt, 64);
	if (!b.buf)
		bail_out("pto_malloc");
	ok_eq(run_until(rt, &b, cpu_a), cpu_a, "theirs: pinned to CPU %d",
	      cpu_a);
	hog_stop = 0;
	if (pthread_create(&t, NULL, hog, NULL))
		bail_out("pthread_create");
	ok_eq(run_until(rt, &b, -1), -1, "theirs: CPU %d contended, let go",
	      cpu_a);
	__atomic_store_n(&hog_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	CPU_ZERO(&one);
	CPU_SET(cpu_b, &one);
	tl_threads_named("pto-core0", &tid);
	ok(tid && !sched_setaffinity((pid_t)tid, sizeof(one), &one),
	   "theirs: the program sets core 0's thread to CPU %d", cpu_b);
	until = tl_now_ns() + 2500000000ull;
	while (tl_now_ns() < until && !pto_run(rt, orch_busy, &b))
		;
	ok_eq(pinned_to(0), cpu_b, "theirs: 2.5 s of tasks later, still on "
	      "CPU %d", cpu_b);
	pto_runtime_destroy(rt);
}

/* "any": no thread pinned; a list: all on it for good. */
static void test_settings(void)
{
	struct pto_runtime *rt = runtime("any", 1, 1);
	struct busy_run b = { .tasks = 20, .us = 100 };
	char list[16];
	uint32_t c;

	b.buf = pto_malloc(rt, 64);
	if (!b.buf)
		bail_out("pto_malloc");
	ok_eq(pto_run(rt, orch_busy, &b), 0, "any: a run");
	for (c = 0; c < 2; c++)
		ok_eq(pinned_to(c), -1, "any: core %u's thread is not pinned",
		      c);
	pto_runtime_destroy(rt);

	/* named and pinned as made, not when each first runs */
	snprintf(list, sizeof(list), "%d", cpu_b);
	rt = runtime(list, 1, 1);
	for (c = 0; c < 2; c++)
		ok_eq(pinned_to(c), cpu_b, "PTO_CPUS=%s: core %u's thread, "
		      "as pto_runtime_create() returns", list, c);
	b.buf = pto_malloc(rt, 64);
	if (!b.buf)
		bail_out("pto_malloc");
	ok_eq(pto_run(rt, orch_busy, &b), 0, "PTO_CPUS=%s: a run", list);
	for (c = 0; c < 2; c++)
		ok_eq(pinned_to(c), cpu_b, "PTO_CPUS=%s: core %u's thread",
		      list, c);
	pto_runtime_destroy(rt);
}

/*
 * A program started with standard input closed: the descriptor placement
 * keeps open (each core thread's schedstat) goes above 2, not on 0.
 */
static void test_stdin_closed(void)
{
	struct pto_runtime *rt;
	uint64_t until = tl_now_ns() + PATIENCE_NS;
	int saved = dup(0);

	if (saved < 0 || close(0))
		bail_out("cannot close standard input");
	rt = runtime(NULL, 1, 1);
	while (pinned_to(0) < 0 && tl_now_ns() < until)
		;
	ok(pinned_to(0) >= 0 && fcntl(0, F_GETFD) < 0 && errno == EBADF,
	   "standard input closed: placed, and descriptor 0 stays free");
	pto_runtime_destroy(rt);
	if (dup2(saved, 0) != 0 || close(saved))
		bail_out("cannot restore standard input");
}

/* Keep to the first two CPUs this process may use; false: fewer. */
static bool keep_to_two(void)
{
	cpu_set_t set;
	int i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	CPU_ZERO(&both);
	for (i = 0; i < CPU_SETSIZE && n < 2; i++) {
		if (!CPU_ISSET(i, &set))
			continue;
		*(n++ ? &cpu_b : &cpu_a) = i;
		CPU_SET(i, &both);
	}
	return n == 2 && !sched_setaffinity(0, sizeof(both), &both);
}

int main(void)
{
	if (!keep_to_two()) {
		skip("placement: needs two CPUs this process may use");
		return tap_done();
	}
	test_round_robin();
	test_contended(-1, "");
	test_contended(PTO_SCHED_SHARDS, "shards: ");
	test_long_tasks();
	test_theirs();
	test_settings();
	test_stdin_closed();
	return tap_done();
}
