// SPDX-License-Identifier: MIT
/*
 * pto_wait(): an orchestration that reads what its tasks computed before
 * it decides what to submit next, under every scheduling policy.
 *
 * - a solver's loop: halve a value until a kernel-computed residual,
 *   read from a runtime-allocated OUTPUT after each wait, is small
 *   enough; the loop runs exactly as many steps as the sequential
 *   program, and its scopes and rings go on being used after each wait;
 * - a wait returns only once every task submitted so far has run:
 *   thousands of independent tasks over all cores, each counted by its
 *   kernel, and a chain whose last link the orchestration reads;
 * - a failing task: pto_wait() returns -ECANCELED, pto_run() the task's
 *   error, and the next run works;
 * - pto_wait() with nothing submitted, outside a run, with no runtime
 *   and from a kernel's thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

enum { K_HALVE = 1, K_RESIDUAL, K_COUNT, K_STEP, K_FAIL, K_WAIT };

static double *value;		/* the solver's state */
static uint64_t *words;		/* the chain's */
static uint64_t counted;	/* tasks K_COUNT ran */
static int wait_in_kernel = 1;	/* what pto_wait() returned in a kernel */
static struct pto_runtime *kernel_rt;

static void k_halve(const uint64_t *a, uint32_t n)
{
	*(double *)(uintptr_t)a[0] *= 0.5;
}

/* out[0] = |x| (a residual the orchestration cannot know in advance) */
static void k_residual(const uint64_t *a, uint32_t n)
{
	double x = *(const double *)(uintptr_t)a[1];

	*(double *)(uintptr_t)a[0] = x < 0 ? -x : x;
}

/* Some work, then one more task counted. */
static void k_count(const uint64_t *a, uint32_t n)
{
	volatile uint64_t spin = 0;
	uint64_t i;

	for (i = 0; i < a[0]; i++)
		spin += i;
	__atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED);
}

static void k_step(const uint64_t *a, uint32_t n)
{
	uint64_t *w = (uint64_t *)(uintptr_t)a[0];

	if (n != 2) {	/* PTO_SUBMIT() counted its parameters wrong */
		pto_kernel_set_error(-EPROTO);
		return;
	}

	*w = tl_mix(*w ^ a[1]);
}

static void k_fail(const uint64_t *a, uint32_t n)
{
	pto_kernel_set_error(-EIO);
}

static void k_wait(const uint64_t *a, uint32_t n)
{
	wait_in_kernel = pto_wait(kernel_rt);
}

static struct pto_runtime *wait_runtime(enum pto_sched_policy sched)
{
	static const struct {
		uint32_t id;
		pto_kernel_fn fn;
		const char *name;
	} kernels[] = {
		{ K_HALVE, k_halve, "halve" },
		{ K_RESIDUAL, k_residual, "residual" },
		{ K_COUNT, k_count, "count" },
		{ K_STEP, k_step, "step" },
		{ K_FAIL, k_fail, "fail" },
		{ K_WAIT, k_wait, "wait" },
	};
	struct pto_config cfg;
	struct pto_runtime *rt;
	uint32_t i, t;

	tl_config(&cfg, 64, 0);
	cfg.sched = sched;
	rt = tl_runtime(&cfg);
	for (i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
			if (pto_kernel_register(rt, kernels[i].id * 4 + t, t,
						kernels[i].fn,
						kernels[i].name))
				bail_out("pto_kernel_register");
	value = pto_malloc(rt, 64);
	words = pto_malloc(rt, 64);
	if (!value || !words)
		bail_out("pto_malloc");
	kernel_rt = rt;
	return rt;
}

#define KID(k, t) ((k) * 4 + (t))
#define SUBMIT(rt, k, t, ...) PTO_SUBMIT(rt, KID(k, t), t, __VA_ARGS__)

/* ---- a solver's loop ---------------------------------------------------- */

struct solve {
	int every;		/* halvings between two tests */
	double tol;
	int steps, waits;
	int wait_ret;
};

/*
 * Halve the value every steps, then test the residual on the host: a
 * runtime buffer of the iteration's scope, read after the wait.
 */
static int orch_solve(struct pto_runtime *rt, void *arg)
{
	struct solve *s = arg;
	int64_t id = 0;
	double *res;
	int k;

	for (;;) {
		pto_scope_begin(rt);
		for (k = 0; k < s->every && id >= 0; k++, s->steps++)
			id = SUBMIT(rt, K_HALVE, k % 2, PTO_INOUT(value, 0, 8));
		if (id >= 0)
			id = SUBMIT(rt, K_RESIDUAL, PTO_WORKER_VECTOR,
				    PTO_OUT((void **)&res, 64),
				    PTO_IN(value, 0, 8));
		if (id < 0) {
			pto_scope_end(rt);
			return (int)id;
		}
		s->wait_ret = pto_wait(rt);
		s->waits++;
		if (s->wait_ret || *res < s->tol) {
			pto_scope_end(rt);
			return s->wait_ret;
		}
		pto_scope_end(rt);
	}
}

static void test_solve(enum pto_sched_policy sched, const char *name)
{
	struct pto_runtime *rt = wait_runtime(sched);
	struct solve s;
	int ret, want_steps, run, bad = 0;

	for (run = 0; run < 50; run++) {
		memset(&s, 0, sizeof(s));
		s.every = 1 + run % 7;
		s.tol = 1e-6;
		*value = 1.0 + run;
		/* the sequential program's steps: tests after every group */
		want_steps = 0;
		for (double x = 1.0 + run; x >= s.tol; )
			for (int k = 0; k < s.every; k++, want_steps++)
				x *= 0.5;
		ret = pto_run(rt, orch_solve, &s);
		if (ret || s.wait_ret || s.steps != want_steps ||
		    *value >= s.tol || s.waits != want_steps / s.every) {
			if (!bad++)
				diag("run %d: ret %d wait %d, %d steps (want "
				     "%d), %d waits, value %g", run, ret,
				     s.wait_ret, s.steps, want_steps,
				     s.waits, *value);
		}
	}
	ok(!bad, "%s: 50 solver runs test a residual after each wait and "
	   "stop after the sequential program's steps (%d wrong)", name,
	   bad);
	pto_runtime_destroy(rt);
}

/* ---- a wait covers every task submitted --------------------------------- */

struct many {
	int waves, per_wave;
	int short_waits;	/* waits that returned with tasks unrun */
	uint64_t chain_seen, chain_want;
};

/*
 * Waves of independent counted tasks over all worker types, and a chain
 * of steps over one word; after each wave's wait the count and the word
 * must be final.
 */
static int orch_many(struct pto_runtime *rt, void *arg)
{
	struct many *m = arg;
	int w, i, ret;

	for (w = 0; w < m->waves; w++) {
		for (i = 0; i < m->per_wave; i++) {
			int64_t id = SUBMIT(rt, K_COUNT, i % 3,
					    PTO_SCALAR(200 + i % 7 * 300));

			if (id >= 0)
				id = SUBMIT(rt, K_STEP, PTO_WORKER_VECTOR,
					    PTO_INOUT(words, 0, 8),
					    PTO_SCALAR(w * 100000 + i));
			if (id < 0)
				return (int)id;
			m->chain_want = tl_mix(m->chain_want ^
					       (w * 100000 + i));
		}
		ret = pto_wait(rt);
		if (ret)
			return ret;
		m->short_waits +=
			__atomic_load_n(&counted, __ATOMIC_RELAXED) !=
			(uint64_t)(w + 1) * m->per_wave ||
			*words != m->chain_want;
	}
	return 0;
}

static void test_many(enum pto_sched_policy sched, const char *name)
{
	struct pto_runtime *rt = wait_runtime(sched);
	struct many m = { .waves = 40, .per_wave = 150 };
	int ret;

	counted = 0;
	*words = 0;
	ret = pto_run(rt, orch_many, &m);
	ok_eq(ret, 0, "%s: waves of %d tasks, a wait after each: pto_run",
	      name, m.per_wave);
	ok_eq(m.short_waits, 0, "%s: every wait returned after all %d tasks "
	      "before it had run, the chain's last link too", name,
	      m.waves * m.per_wave * 2);
	pto_runtime_destroy(rt);
}

/* ---- failures and misuse ------------------------------------------------ */

struct failing {
	int submit_ret;
	int wait_ret;
};

/*
 * The failing task may fail while the later ones are being submitted; a
 * submission then returns -ECANCELED, which is right too.  Either way the
 * wait that follows must report the cancelled run.
 */
static int orch_failing(struct pto_runtime *rt, void *arg)
{
	struct failing *f = arg;
	int64_t id = 0;
	int i;

	for (i = 0; i < 20 && id >= 0; i++)
		id = SUBMIT(rt, K_STEP, PTO_WORKER_VECTOR,
			    PTO_INOUT(words, 0, 8), PTO_SCALAR(i));
	if (id >= 0)
		id = SUBMIT(rt, K_FAIL, PTO_WORKER_VECTOR,
			    PTO_INOUT(words, 0, 8));
	for (i = 0; i < 20 && id >= 0; i++)
		id = SUBMIT(rt, K_STEP, PTO_WORKER_VECTOR,
			    PTO_INOUT(words, 0, 8), PTO_SCALAR(i));
	f->submit_ret = id < 0 ? (int)id : 0;
	f->wait_ret = pto_wait(rt);
	return f->wait_ret ? -1 : 0;
}

static int orch_empty_wait(struct pto_runtime *rt, void *arg)
{
	int *ret = arg;

	*ret = pto_wait(rt);
	return *ret;
}

static int orch_kernel_wait(struct pto_runtime *rt, void *arg)
{
	int64_t id = SUBMIT(rt, K_WAIT, PTO_WORKER_VECTOR,
			    PTO_INOUT(words, 0, 8));

	return id < 0 ? (int)id : pto_wait(rt);
}

static void test_misuse(enum pto_sched_policy sched, const char *name)
{
	struct pto_runtime *rt = wait_runtime(sched);
	struct failing f = { 1, 1 };
	struct solve s = { .every = 3, .tol = 1e-3 };
	struct tl_capture cap;
	int ret, empty = 1;

	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_failing, &f);
	free(tl_capture_end(&cap));
	ok(f.submit_ret == 0 || f.submit_ret == -ECANCELED,
	   "%s: a task failed: the later submissions succeed or return "
	   "-ECANCELED (%d)", name, f.submit_ret);
	ok_eq(f.wait_ret, -ECANCELED, "%s: a task failed: pto_wait returns "
	      "-ECANCELED", name);
	ok_eq(ret, -EIO, "%s: and pto_run the task's error", name);
	*value = 1.0;
	ok(pto_run(rt, orch_solve, &s) == 0 && *value < s.tol,
	   "%s: the next run waits and solves", name);
	ok(pto_run(rt, orch_empty_wait, &empty) == 0 && empty == 0,
	   "%s: pto_wait with nothing submitted: 0", name);
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_kernel_wait, NULL);
	free(tl_capture_end(&cap));
	ok(ret == 0 && wait_in_kernel == -EPERM,
	   "%s: pto_wait from a kernel: -EPERM (%d), and the run goes on",
	   name, wait_in_kernel);
	tl_capture_begin(&cap);
	ok_eq(pto_wait(rt), -EINVAL, "%s: pto_wait outside a run: -EINVAL",
	      name);
	ok_eq(pto_wait(NULL), -EINVAL, "%s: pto_wait(NULL): -EINVAL", name);
	free(tl_capture_end(&cap));
	pto_runtime_destroy(rt);
}

int main(void)
{
	size_t i;

	for (i = 0; i < TL_NPOLICIES; i++) {
		test_solve(tl_policies[i].sched, tl_policies[i].name);
		test_many(tl_policies[i].sched, tl_policies[i].name);
		test_misuse(tl_policies[i].sched, tl_policies[i].name);
	}
	return tap_done();
}
