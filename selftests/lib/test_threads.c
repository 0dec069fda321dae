// SPDX-License-Identifier: MIT
/*
 * The threading contract of libpto(3), THREADS: misuse from the wrong
 * thread or at the wrong time returns the documented error with a message
 * naming the call, and never corrupts the runtime:
 *  - outside a run: pto_submit_task, pto_scope_begin, pto_scope_end are
 *    -EINVAL;
 *  - during a run, on a thread other than the one inside pto_run(): the
 *    same calls are -EPERM, pto_run, pto_kernel_register are -EBUSY and
 *    pto_runtime_destroy refuses;
 *  - inside the orchestration function: a nested pto_run is -EBUSY;
 *  - a second thread submitting while the orchestrator submits: every one
 *    of its submits is refused and the run's result is still right;
 *  - two threads calling pto_run at once: one runs, the other gets -EBUSY
 *    or runs after it;
 *  - unbalanced scopes: -EINVAL, and the runtime works afterwards;
 *  - pto_get_stats() on another thread during a run: never more tasks
 *    completed than submitted;
 *  - in a child after fork(): the parent's runtime refuses every call that
 *    needs its threads, device or files (-EPERM, naming its process),
 *    destroy returns at once, a new runtime works, and the parent's
 *    runtime still does.
 * Threads meet through joins and barriers only, so the test is TSan-clean.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels.h"

static uint64_t *gbuf;

static struct pto_runtime *make_rt(struct tl_rec *r)
{
	struct pto_config cfg;
	struct pto_runtime *rt;

	tl_config(&cfg, 64, 1 << 16);
	rt = tl_runtime(&cfg);
	tl_rec_init(r, rt);
	if (register_test_kernels(r))
		bail_out("cannot register kernels");
	gbuf = pto_malloc(rt, 256);
	if (!gbuf)
		bail_out("pto_malloc");
	memset(gbuf, 0, 256);
	return rt;
}

static int64_t submit_step(struct pto_runtime *rt, uint64_t *buf,
			   uint64_t tag)
{
	return pto_submit_task(rt, KID(K_STEP, PTO_WORKER_VECTOR),
			       PTO_WORKER_VECTOR,
			       (struct pto_param[]){ PTO_INOUT(buf, 0, 8),
						     PTO_SCALAR(1),
						     PTO_SCALAR(tag) }, 3);
}

/*
 * In a scope of its own, as a program whose tasks make buffers would
 * submit them (a step makes none, so the outer scope would not hold it
 * either).
 */
static int64_t submit_scoped(struct pto_runtime *rt, uint64_t *buf,
			     uint64_t tag)
{
	int64_t id;
	int ret = pto_scope_begin(rt);

	if (ret)
		return ret;
	id = submit_step(rt, buf, tag);
	ret = pto_scope_end(rt);
	return id < 0 ? id : ret ? ret : id;
}

/* What n K_STEP tasks with tags 0..n-1 make of one word x. */
static uint64_t steps(uint64_t x, int n)
{
	for (int i = 0; i < n; i++)
		x = tl_mix(x ^ (uint64_t)i);
	return x;
}

/* Does a line of text contain a, and b after it (b NULL: just a)? */
static int has(const char *text, const char *a, const char *b)
{
	const char *line, *eol, *p;

	for (line = text; *line; line = eol + 1) {
		eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		p = strstr(line, a);
		if (p && p < eol && (!b || ((p = strstr(p, b)) && p < eol)))
			return 1;
		if (!*eol)
			break;
	}
	return 0;
}

/* A small run whose result is checked: the runtime still works. */
static int orch_ok(struct pto_runtime *rt, void *arg)
{
	struct tl_rec *r = arg;

	if (pto_scope_begin(rt))
		return -EPROTO;
	SUBMIT_OR_RETURN(r, K_STEP, PTO_WORKER_CUBE, PTO_INOUT(gbuf, 0, 16),
			 PTO_SCALAR(2), PTO_SCALAR(99));
	SUBMIT_OR_RETURN(r, K_STEP, PTO_WORKER_VECTOR, PTO_INOUT(gbuf, 8, 16),
			 PTO_SCALAR(2), PTO_SCALAR(98));
	return pto_scope_end(rt);
}

static void check_recovers(struct pto_runtime *rt, struct tl_rec *r,
			   const char *name)
{
	char what[128];

	tl_rec_reset(r);
	tl_host(r, gbuf, 256);
	snprintf(what, sizeof(what), "%s: the next run", name);
	if (ok_eq(pto_run(rt, orch_ok, r), 0, "%s: the next pto_run works",
		  name) && tl_replay(r) == 0)
		tl_check(r, gbuf, what);
}

/* ---- outside a run ------------------------------------------------------- */

static void test_outside_run(void)
{
	struct tl_capture cap;
	struct pto_runtime *rt;
	struct tl_rec r;
	int64_t sub;
	int beg, end;
	char *text;

	rt = make_rt(&r);
	tl_capture_begin(&cap);
	sub = submit_step(rt, gbuf, 0);
	beg = pto_scope_begin(rt);
	end = pto_scope_end(rt);
	text = tl_capture_end(&cap);
	ok_eq(sub, -EINVAL, "outside a run: pto_submit_task is -EINVAL");
	ok_eq(beg, -EINVAL, "outside a run: pto_scope_begin is -EINVAL");
	ok_eq(end, -EINVAL, "outside a run: pto_scope_end is -EINVAL");
	ok(has(text, "pto_submit_task", "no run in progress") &&
	   has(text, "pto_scope_begin", "no run in progress") &&
	   has(text, "pto_scope_end", "no run in progress"),
	   "outside a run: each is reported, naming the call");
	diag("  stderr: %s", text);
	free(text);
	check_recovers(rt, &r, "outside a run");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* ---- another thread during a run ----------------------------------------- */

struct intruder {
	struct pto_runtime *rt;
	int64_t submit;
	int scope_begin, scope_end, run, reg;
};

static int orch_never(struct pto_runtime *rt, void *arg)
{
	return -EPROTO;		/* must not be called */
}

static void *intrude(void *arg)
{
	struct intruder *in = arg;

	in->submit = submit_step(in->rt, gbuf + 8, 1);
	in->scope_begin = pto_scope_begin(in->rt);
	in->scope_end = pto_scope_end(in->rt);
	in->run = pto_run(in->rt, orch_never, NULL);
	in->reg = pto_kernel_register(in->rt, 70, PTO_WORKER_CUBE, k_step,
				      "late");
	pto_runtime_destroy(in->rt);	/* refused: the runtime is in use */
	return NULL;
}

/*
 * The orchestration starts the intruder and joins it before it returns,
 * so the intruder's calls all fall inside the run.
 */
static int orch_intruded(struct pto_runtime *rt, void *arg)
{
	struct intruder *in = arg;
	pthread_t t;
	int64_t a, b;

	a = submit_step(rt, gbuf, 0);
	if (pthread_create(&t, NULL, intrude, in))
		return -EAGAIN;
	pthread_join(t, NULL);
	b = submit_step(rt, gbuf, 1);
	return a < 0 ? (int)a : b < 0 ? (int)b : 0;
}

static void test_other_thread(void)
{
	struct intruder in = { 0 };
	struct tl_capture cap;
	struct pto_runtime *rt;
	struct tl_rec r;
	char *text;
	int ret;

	rt = make_rt(&r);
	in.rt = rt;
	gbuf[0] = 5;
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_intruded, &in);
	text = tl_capture_end(&cap);
	ok_eq(ret, 0, "other thread: the orchestrator's run completes");
	ok_eq(gbuf[0], steps(5, 2),
	      "other thread: the orchestrator's tasks ran, in order");
	ok_eq(in.submit, -EPERM, "other thread: pto_submit_task is -EPERM");
	ok_eq(in.scope_begin, -EPERM,
	      "other thread: pto_scope_begin is -EPERM");
	ok_eq(in.scope_end, -EPERM, "other thread: pto_scope_end is -EPERM");
	ok_eq(in.run, -EBUSY, "other thread: pto_run is -EBUSY");
	ok_eq(in.reg, -EBUSY, "other thread: pto_kernel_register is -EBUSY");
	ok(has(text, "pto_submit_task", "orchestrator thread") &&
	   has(text, "pto_scope_begin", "orchestrator thread") &&
	   has(text, "pto_scope_end", "orchestrator thread"),
	   "other thread: the calls are reported as off the orchestrator thread");
	ok(has(text, "pto_run", "in progress") &&
	   has(text, "pto_kernel_register", "in progress"),
	   "other thread: pto_run and registering say a run is in progress");
	ok(has(text, "pto_runtime_destroy", "not destroyed"),
	   "other thread: pto_runtime_destroy refuses, and says so");
	diag("  stderr: %s", text);
	free(text);
	check_recovers(rt, &r, "other thread");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* ---- inside the orchestration function ----------------------------------- */

struct nested {
	int run, reg;
};

static int orch_nested(struct pto_runtime *rt, void *arg)
{
	struct nested *n = arg;

	n->run = pto_run(rt, orch_never, NULL);
	n->reg = pto_kernel_register_builtin(rt, 71, PTO_WORKER_CUBE,
					     PTO_OP_NOP);
	pto_runtime_destroy(rt);	/* refused: we are inside its run */
	return submit_step(rt, gbuf, 0) < 0 ? -EPROTO : 0;
}

static void test_nested(void)
{
	struct nested n = { 0 };
	struct tl_capture cap;
	struct pto_runtime *rt;
	struct tl_rec r;
	char *text;
	int ret;

	rt = make_rt(&r);
	gbuf[0] = 9;
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_nested, &n);
	text = tl_capture_end(&cap);
	ok_eq(n.run, -EBUSY, "nested: pto_run inside a run is -EBUSY");
	ok_eq(n.reg, -EBUSY,
	      "nested: registering a kernel inside a run is -EBUSY");
	ok_eq(ret, 0, "nested: the outer run completes");
	ok_eq(gbuf[0], steps(9, 1), "nested: and its task ran");
	ok(has(text, "pto_run", "inside the orchestration function") &&
	   has(text, "pto_runtime_destroy", "not destroyed"),
	   "nested: each refusal names the call and the reason");
	free(text);
	check_recovers(rt, &r, "nested");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* ---- a second thread submitting while the orchestrator does -------------- */

#define RACE_TASKS 200

struct race {
	struct pto_runtime *rt;
	pthread_barrier_t go;
	int refused;		/* submits of the second thread refused */
	int accepted;
};

static void *race_submitter(void *arg)
{
	struct race *rc = arg;
	int i;

	pthread_barrier_wait(&rc->go);
	for (i = 0; i < RACE_TASKS; i++) {
		int64_t id = submit_step(rc->rt, gbuf + 16, (uint64_t)i);

		rc->refused += id == -EPERM;
		rc->accepted += id >= 0;
	}
	return NULL;
}

static int orch_race(struct pto_runtime *rt, void *arg)
{
	struct race *rc = arg;
	pthread_t t;
	int i, ret = 0;

	if (pthread_create(&t, NULL, race_submitter, rc))
		return -EAGAIN;
	pthread_barrier_wait(&rc->go);
	for (i = 0; i < RACE_TASKS && !ret; i++) {
		int64_t id = submit_scoped(rt, gbuf, (uint64_t)i);

		ret = id < 0 ? (int)id : 0;
	}
	pthread_join(t, NULL);
	return ret;
}

static void test_racing_submits(void)
{
	struct tl_capture cap;
	struct pto_runtime *rt;
	struct race rc = { 0 };
	struct tl_rec r;
	char *text;
	int ret;

	rt = make_rt(&r);
	rc.rt = rt;
	pthread_barrier_init(&rc.go, NULL, 2);
	gbuf[0] = 1;
	gbuf[16] = 2;
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_race, &rc);
	text = tl_capture_end(&cap);
	free(text);
	pthread_barrier_destroy(&rc.go);
	ok_eq(ret, 0, "racing submits: the orchestrator's run completes");
	ok_eq(rc.refused, RACE_TASKS,
	      "racing submits: all %d of the other thread's are -EPERM",
	      RACE_TASKS);
	ok_eq(gbuf[0], steps(1, RACE_TASKS),
	      "racing submits: the orchestrator's %d tasks ran, in order",
	      RACE_TASKS);
	ok_eq(gbuf[16], 2, "racing submits: none of the other thread's ran");
	check_recovers(rt, &r, "racing submits");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* ---- two threads calling pto_run at once ---------------------------------- */

struct runner {
	struct pto_runtime *rt;
	pthread_barrier_t *go;
	uint64_t *buf;
	int ret;
};

static int orch_chain(struct pto_runtime *rt, void *arg)
{
	struct runner *ru = arg;
	int i;

	for (i = 0; i < 100; i++)
		if (submit_scoped(rt, ru->buf, (uint64_t)i) < 0)
			return -EPROTO;
	return 0;
}

#define RETRIES 1000

struct retrier {
	struct pto_runtime *rt;
	int busy;		/* of its RETRIES pto_run and registrations */
};

static void *retry_runs(void *arg)
{
	struct retrier *re = arg;
	int i;

	for (i = 0; i < RETRIES; i++) {
		re->busy += pto_run(re->rt, orch_never, NULL) == -EBUSY;
		re->busy += pto_kernel_register(re->rt, 70, PTO_WORKER_CUBE,
						k_step, "late") == -EBUSY;
	}
	return NULL;
}

static int orch_retried(struct pto_runtime *rt, void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, retry_runs, arg))
		return -EAGAIN;
	pthread_join(t, NULL);
	return 0;
}

/*
 * A thread retrying pto_run() and a registration while a run is in
 * progress: every call is -EBUSY, and each is said once for the run, not
 * once a call (four threads retrying wrote 800000 lines in 3 s).
 */
/* ---- a kernel calling the orchestrator's functions ----------------------- */

#define KERNEL_TRIES 50
#define K_CALLER 60

static struct pto_runtime *caller_rt, *caller_other;
static int caller_ret[3][KERNEL_TRIES];
static int caller_other_ran;

static int orch_other(struct pto_runtime *rt, void *arg)
{
	caller_other_ran++;
	return 0;
}

static int orch_nothing(struct pto_runtime *rt, void *arg)
{
	return 0;
}

/* Its own runtime's submit and run, and another runtime's run, 50 times. */
static void k_caller(const uint64_t *a, uint32_t n)
{
	int i;

	for (i = 0; i < KERNEL_TRIES; i++) {
		caller_ret[0][i] = (int)pto_submit_task(caller_rt, K_CALLER,
							PTO_WORKER_VECTOR,
							NULL, 0);
		caller_ret[1][i] = pto_run(caller_rt, orch_nothing, NULL);
		caller_ret[2][i] = pto_run(caller_other, orch_other, NULL);
	}
}

static int orch_caller(struct pto_runtime *rt, void *arg)
{
	return pto_submit_task(rt, K_CALLER, PTO_WORKER_VECTOR, NULL, 0) < 0;
}

static bool all_are(const int *v, int want)
{
	int i;

	for (i = 0; i < KERNEL_TRIES; i++)
		if (v[i] != want)
			return false;
	return true;
}

/*
 * A kernel is refused each of them, with a message once per call that
 * says it is a kernel's (not "wait for pto_run() to return", which would
 * never end), and the other runtime's orchestration does not run.
 */
static void test_kernel_calls(void)
{
	struct tl_capture cap;
	struct tl_rec r, ro;
	char *text;
	int ret;

	caller_rt = make_rt(&r);
	caller_other = make_rt(&ro);
	if (pto_kernel_register(caller_rt, K_CALLER, PTO_WORKER_VECTOR,
				k_caller, "caller"))
		bail_out("cannot register kernels");
	tl_capture_begin(&cap);
	ret = pto_run(caller_rt, orch_caller, NULL);
	text = tl_capture_end(&cap);
	ok(ret == 0 && all_are(caller_ret[0], -EPERM) &&
	   all_are(caller_ret[1], -EBUSY) && all_are(caller_ret[2], -EPERM) &&
	   !caller_other_ran,
	   "kernel calls: submit -EPERM, its own run -EBUSY, another "
	   "runtime's run -EPERM and not run, every time");
	ok(tl_count(text, "pto_submit_task: called from a kernel") == 1 &&
	   tl_count(text, "pto_run: called from a kernel of this runtime's "
		    "run") == 1 &&
	   tl_count(text, "pto_run: called from a kernel: kernels may not "
		    "run orchestrations") == 1 &&
	   !strstr(text, "wait for pto_run() to return"),
	   "kernel calls: each said once, as a kernel's");
	diag("%s", text);
	free(text);
	tl_rec_free(&r);
	tl_rec_free(&ro);
	pto_runtime_destroy(caller_rt);
	pto_runtime_destroy(caller_other);
}

static void test_busy_said_once(void)
{
	struct retrier re = { 0 };
	struct tl_capture cap;
	struct tl_rec r;
	char *text;
	int ret;

	re.rt = make_rt(&r);
	tl_capture_begin(&cap);
	ret = pto_run(re.rt, orch_retried, &re);
	text = tl_capture_end(&cap);
	ok(ret == 0 && re.busy == 2 * RETRIES,
	   "retried: all %d calls during the run are -EBUSY (%d)",
	   2 * RETRIES, re.busy);
	ok(tl_count(text, "pto_run: a run is in progress") == 1 &&
	   tl_count(text, "pto_kernel_register: a run is in progress") == 1,
	   "retried: each call is said once for the run (%d and %d times)",
	   tl_count(text, "pto_run: a run is in progress"),
	   tl_count(text, "pto_kernel_register: a run is in progress"));
	free(text);
	tl_capture_begin(&cap);
	ret = pto_run(re.rt, orch_retried, &re);
	text = tl_capture_end(&cap);
	ok(ret == 0 && tl_count(text, "pto_run: a run is in progress") == 1,
	   "retried: and said again in the next run");
	free(text);
	tl_rec_free(&r);
	pto_runtime_destroy(re.rt);
}

static void *runner(void *arg)
{
	struct runner *ru = arg;

	pthread_barrier_wait(ru->go);
	ru->ret = pto_run(ru->rt, orch_chain, ru);
	return NULL;
}

static void test_concurrent_runs(void)
{
	struct pto_runtime *rt;
	struct runner ru[2];
	struct tl_capture cap;
	pthread_barrier_t go;
	pthread_t t[2];
	struct tl_rec r;
	int i, ran = 0, busy = 0, right = 1;
	char *text;

	rt = make_rt(&r);
	pthread_barrier_init(&go, NULL, 2);
	tl_capture_begin(&cap);
	for (i = 0; i < 2; i++) {
		ru[i] = (struct runner){ rt, &go, gbuf + 8 * i, 1 };
		gbuf[8 * i] = 100 + i;
		if (pthread_create(&t[i], NULL, runner, &ru[i]))
			bail_out("pthread_create");
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	text = tl_capture_end(&cap);
	pthread_barrier_destroy(&go);
	for (i = 0; i < 2; i++) {
		ran += ru[i].ret == 0;
		busy += ru[i].ret == -EBUSY;
		if (ru[i].ret == 0 && gbuf[8 * i] != steps(100 + i, 100))
			right = 0;
		if (ru[i].ret == -EBUSY && gbuf[8 * i] != (uint64_t)(100 + i))
			right = 0;
	}
	ok(ran >= 1 && ran + busy == 2,
	   "concurrent pto_run: %d ran, %d got -EBUSY", ran, busy);
	ok(right, "concurrent pto_run: each run's result is whole, or untouched");
	ok(!busy || has(text, "pto_run", "in progress"),
	   "concurrent pto_run: -EBUSY is reported");
	free(text);
	check_recovers(rt, &r, "concurrent pto_run");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* ---- unbalanced scopes ----------------------------------------------------- */

static int scope_rc[3];

static int orch_unbalanced(struct pto_runtime *rt, void *arg)
{
	int which = *(int *)arg;

	switch (which) {
	case 0:		/* the run's outer scope is pto_run()'s */
		scope_rc[0] = pto_scope_end(rt);
		return 0;
	case 1:		/* one end too many */
		scope_rc[1] = pto_scope_begin(rt);
		if (pto_scope_end(rt))
			return -EPROTO;
		scope_rc[2] = pto_scope_end(rt);
		return 0;
	case 2:		/* returns with a scope open */
		pto_scope_begin(rt);
		return submit_step(rt, gbuf, 0) < 0 ? -EPROTO : 0;
	default:	/* returns an error from inside a scope */
		pto_scope_begin(rt);
		if (submit_step(rt, gbuf, 0) < 0)
			return -EPROTO;
		return -ENOSPC;
	}
}

static void test_unbalanced(void)
{
	struct tl_capture cap;
	struct pto_runtime *rt;
	struct tl_rec r;
	int which, ret[4];
	char *text, *early;

	rt = make_rt(&r);
	tl_capture_begin(&cap);
	for (which = 0; which < 3; which++)
		ret[which] = pto_run(rt, orch_unbalanced, &which);
	text = tl_capture_end(&cap);
	tl_capture_begin(&cap);
	ret[3] = pto_run(rt, orch_unbalanced, &which);
	early = tl_capture_end(&cap);
	ok_eq(ret[3], -ENOSPC, "scopes: an error returned from inside a scope "
	      "is pto_run's");
	ok(!has(early, "still open", NULL),
	   "scopes: and the scope it left open is not reported as a second "
	   "mistake");
	free(early);
	ok_eq(scope_rc[0], -EINVAL,
	      "scopes: ending the run's outer scope is -EINVAL");
	ok_eq(scope_rc[1], 0, "scopes: pto_scope_begin in a run returns 0");
	ok_eq(scope_rc[2], -EINVAL, "scopes: a second pto_scope_end is -EINVAL");
	ok(has(text, "pto_scope_end", "no scope is open"),
	   "scopes: the extra end is reported");
	ok_eq(ret[2], -EINVAL,
	      "scopes: returning with a scope open makes pto_run -EINVAL");
	ok(has(text, "still open", NULL), "scopes: the open scope is reported");
	free(text);
	check_recovers(rt, &r, "unbalanced scopes");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* ---- pto_get_stats() from another thread during a run ------------------ */

struct stats_reader {
	struct pto_runtime *rt;
	int stop;		/* set once pto_run has returned */
	uint64_t samples, bad, worst;
	uint64_t overbusy;	/* cores busier than the run is long */
	uint64_t timeless;	/* tasks done, and no time in pto_run */
	uint64_t overfull;	/* a ring using more than its size */
	uint64_t over_mark;	/* a ring using more than its high water */
};

/* Each ring's use within its size, and at most its high-water mark. */
static void check_rings(struct stats_reader *sr, const struct pto_stats *st)
{
	uint32_t r, k;

	for (r = 0; r < st->nrings; r++) {
		for (k = 0; k < PTO_NUM_RINGS; k++) {
			const struct pto_ring_stats *d = &st->depth[r][k];

			sr->overfull += d->in_use > d->size;
			sr->over_mark += d->in_use > d->high_water;
		}
	}
}

/* More core time than the run has lasted, on every core of a type? */
static bool overbusy(const struct pto_stats *st)
{
	const uint64_t slack = 2000000;	/* clock reads of two threads */

	for (int t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (st->busy_ns[t] > st->run_ns * st->cores[t] + slack)
			return true;
	return false;
}

static void *read_stats(void *arg)
{
	struct stats_reader *sr = arg;
	struct pto_stats st;

	while (!__atomic_load_n(&sr->stop, __ATOMIC_ACQUIRE)) {
		if (pto_get_stats(sr->rt, &st))
			continue;
		sr->samples++;
		sr->overbusy += overbusy(&st);
		sr->timeless += st.tasks_completed && !st.run_ns;
		check_rings(sr, &st);
		if (st.tasks_completed > st.tasks_submitted) {
			sr->bad++;
			if (st.tasks_completed - st.tasks_submitted > sr->worst)
				sr->worst = st.tasks_completed -
					    st.tasks_submitted;
		}
	}
	return NULL;
}

static int orch_many(struct pto_runtime *rt, void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 20000; i++) {
		int64_t id = submit_scoped(rt, &gbuf[i % 32], (uint64_t)i);

		if (id < 0)
			return (int)id;
	}
	return 0;
}

/*
 * A monitor computing "in flight = submitted - completed" from snapshots
 * taken during a run must never see more tasks done than submitted.
 */
static void test_stats_snapshots(void)
{
	struct stats_reader sr = { 0 };
	struct pto_runtime *rt;
	struct tl_rec r;
	pthread_t th;

	rt = make_rt(&r);
	sr.rt = rt;
	if (pthread_create(&th, NULL, read_stats, &sr))
		bail_out("pthread_create");
	ok_eq(pto_run(rt, orch_many, NULL), 0, "stats: a run of 20000 tasks");
	__atomic_store_n(&sr.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ok(sr.samples > 0 && !sr.bad,
	   "stats: %llu snapshots during the run, %llu with more tasks "
	   "completed than submitted (by up to %llu)",
	   (unsigned long long)sr.samples, (unsigned long long)sr.bad,
	   (unsigned long long)sr.worst);
	/* run_ns counts the run in progress: utilisation stays <= 100% */
	ok(!sr.overbusy && !sr.timeless, "stats: during the run, no snapshot "
	   "has cores busier than the run is long, or tasks done in no time "
	   "(%llu, %llu did)", (unsigned long long)sr.overbusy,
	   (unsigned long long)sr.timeless);
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* Scopes of one OUTPUT and its reader: the heap ring empties each time. */
static int orch_buffers(struct pto_runtime *rt, void *arg)
{
	uint32_t i;
	void *out;

	for (i = 0; i < 20000; i++) {
		if (pto_scope_begin(rt) ||
		    pto_submit_task(rt, KID(K_FILL, PTO_WORKER_VECTOR),
				    PTO_WORKER_VECTOR, (struct pto_param[]){
					PTO_OUT(&out, 64), PTO_SCALAR(8),
					PTO_SCALAR(i) }, 3) < 0 ||
		    submit_step(rt, out, i) < 0 ||
		    pto_scope_end(rt))
			return -EPROTO;
	}
	return 0;
}

/*
 * What the rings hold, read during runs whose heap ring empties and
 * starts again at every scope (a window of 8 keeps the two threads at
 * it): never more than a ring's size, nor above its high-water mark.  A
 * heap top read after a restart with the floor from before it once made
 * a ring holding 192 bytes look full.
 */
static void test_stats_rings(void)
{
	struct stats_reader sr = { 0 };
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_rec r;
	pthread_t th;
	int i, ret = 0;

	tl_config(&cfg, 8, 1 << 16);
	cfg.sched = PTO_SCHED_THREAD;
	rt = tl_runtime(&cfg);
	tl_rec_init(&r, rt);
	if (register_test_kernels(&r))
		bail_out("cannot register kernels");
	sr.rt = rt;
	if (pthread_create(&th, NULL, read_stats, &sr))
		bail_out("pthread_create");
	for (i = 0; i < 5 && !ret; i++)
		ret = pto_run(rt, orch_buffers, NULL);
	__atomic_store_n(&sr.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ok_eq(ret, 0, "stats: five runs of 20000 scopes of a buffer");
	ok(sr.samples > 0 && !sr.overfull && !sr.over_mark,
	   "stats: %llu snapshots during the runs, %llu with a ring using "
	   "more than its size, %llu more than its high water",
	   (unsigned long long)sr.samples, (unsigned long long)sr.overfull,
	   (unsigned long long)sr.over_mark);
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

/* ---- where kernels run --------------------------------------------------- */

#define K_WHERE 90	/* + worker type */

static pthread_t orch_thread;
static struct pto_runtime *where_rt;
static uint64_t on_orch_thread;	/* kernels that ran on it */
static uint64_t let_in;		/* orchestration calls they got through */

/*
 * The orchestrator's thread runs short tasks while it waits with nothing
 * else to do (pto_wait(), pto_run() draining).  A kernel that runs there
 * is on the thread pto_orch_check() knows, yet must get -EPERM: one that
 * submitted would change the orchestrator's state under it (a crash once
 * the run's scopes had closed).  Each kernel there tries, once in 64.
 */
static void k_where(const uint64_t *a, uint32_t n)
{
	uint64_t k;

	if (!pthread_equal(pthread_self(), orch_thread))
		return;
	k = __atomic_fetch_add(&on_orch_thread, 1, __ATOMIC_RELAXED);
	if (k % 64)
		return;
	if (pto_scope_begin(where_rt) != -EPERM)
		let_in++;
	if (pto_submit_task(where_rt, K_WHERE, 0, (struct pto_param[]){
				PTO_INOUT(gbuf, 0, 8) }, 1) != -EPERM)
		let_in++;
}

/*
 * Short independent tasks, many still queued when the orchestration
 * returns: pto_run() then drains the run on the orchestrator's thread.
 */
static int orch_where(struct pto_runtime *rt, void *arg)
{
	int i;

	for (i = 0; i < 4000; i++)
		if (pto_submit_task(rt, K_WHERE + i % 2, i % 2,
				    (struct pto_param[]){
					PTO_INOUT(gbuf, 64 * (i % 4), 8) },
				    1) < 0)
			return -1;
	return 0;
}

static void test_where_kernels_run(void)
{
	uint32_t p;
	int t, run, ret = 0;

	for (p = 0; p < TL_NPOLICIES; p++) {
		struct pto_config cfg;
		struct tl_capture cap;
		struct tl_rec r;

		tl_config(&cfg, 64, 1 << 16);
		cfg.sched = tl_policies[p].sched;
		where_rt = tl_runtime(&cfg);
		tl_rec_init(&r, where_rt);
		if (register_test_kernels(&r))
			bail_out("cannot register kernels");
		for (t = 0; t < 2; t++)
			if (pto_kernel_register(where_rt, K_WHERE + t, t,
						k_where, "where"))
				bail_out("cannot register k_where");
		gbuf = pto_malloc(where_rt, 256);
		if (!gbuf)
			bail_out("pto_malloc");
		orch_thread = pthread_self();
		on_orch_thread = 0;
		let_in = 0;
		tl_capture_begin(&cap);
		for (run = 0; run < 20 && !ret; run++)
			ret = pto_run(where_rt, orch_where, NULL);
		free(tl_capture_end(&cap));
		ok(!ret && !let_in,
		   "%s: 80000 short kernels, %llu on the orchestrator's thread "
		   "while pto_run() drains: their orchestration calls are "
		   "-EPERM (%llu let in, run %d)", tl_policies[p].name,
		   (unsigned long long)on_orch_thread,
		   (unsigned long long)let_in, ret);
		tl_rec_free(&r);
		pto_runtime_destroy(where_rt);
	}
}

/* ---- fork() ---------------------------------------------------------------- */

static void k_nothing(const uint64_t *args, uint32_t nargs)
{
}

/* TSan refuses threads in the child of a process that had some. */
#ifdef __SANITIZE_THREAD__
#define FORK_NO_THREADS 1
#else
#define FORK_NO_THREADS 0
#endif

/* What the child found, sent to the parent through a pipe. */
struct fork_result {
	int run, reg, flush, cancel, malloc_null, said, new_run;
	uint64_t new_word;
};

static void fork_child(struct pto_runtime *rt, int fd)
{
	struct fork_result res = { 0 };
	struct tl_capture cap;
	struct tl_rec r2;
	char *text;

	/* a watchdog: a hang fails the test as SIGALRM, not by timeout */
	alarm(60);
	tl_capture_begin(&cap);
	res.run = pto_run(rt, orch_never, NULL);
	res.reg = pto_kernel_register(rt, 60, PTO_WORKER_VECTOR, k_nothing,
				      "nothing");
	res.flush = pto_trace_flush(rt);
	res.cancel = pto_run_cancel(rt);
	res.malloc_null = pto_malloc(rt, 64) == NULL;
	pto_runtime_destroy(rt);	/* must return */
	text = tl_capture_end(&cap);
	res.said = has(text, "pto_run: this runtime belongs to process",
		       "after fork()") && has(text, "pto_malloc", "fork()");
	free(text);

	if (!FORK_NO_THREADS) {
		rt = make_rt(&r2);
		tl_host(&r2, gbuf, 256);
		res.new_run = pto_run(rt, orch_ok, &r2);
		res.new_word = gbuf[1];
		pto_runtime_destroy(rt);
	}
	if (write(fd, &res, sizeof(res)) != sizeof(res))
		_exit(2);
	_exit(0);
}

/* fork() inside an orchestration: what the child's calls return. */
struct fork_in_run {
	int fd;
	pid_t child;
	int64_t submit;
	int wait, scope;
};

static int orch_forks(struct pto_runtime *rt, void *arg)
{
	struct fork_in_run *f = arg;

	if (submit_step(rt, gbuf, 1) < 0)
		return -EPROTO;
	fflush(NULL);
	f->child = fork();
	if (f->child)	/* the parent goes on as before */
		return f->child < 0 ? -errno : submit_step(rt, gbuf, 2) < 0;
	alarm(60);	/* a hang fails as SIGALRM */
	f->submit = submit_step(rt, gbuf, 3);
	f->wait = pto_wait(rt);
	f->scope = pto_scope_begin(rt);
	return 0;	/* back into the child's pto_run() */
}

static void test_fork_in_run(void)
{
	struct fork_in_run f = { .submit = 1 };
	struct pto_runtime *rt;
	struct tl_rec r;
	int fds[2], status = -1, got[4] = { 1, 1, 1, 1 }, run;

	rt = make_rt(&r);
	if (pipe(fds))
		bail_out("pipe");
	run = pto_run(rt, orch_forks, &f);
	if (!f.child) {		/* the child, out of pto_run() */
		int res[4] = { (int)f.submit, f.wait, f.scope, run };

		_exit(write(fds[1], res, sizeof(res)) == sizeof(res) ? 0 : 2);
	}
	close(fds[1]);
	if (read(fds[0], got, sizeof(got)) != sizeof(got))
		diag("  the child sent no result");
	close(fds[0]);
	waitpid(f.child, &status, 0);
	ok_eq(run, 0, "fork in a run: the parent's run goes on");
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got[0] == -EPERM &&
	   got[1] == -EPERM && got[2] == -EPERM && got[3] == -EPERM,
	   "fork in a run: the child's submit, wait, scope and pto_run are "
	   "-EPERM, nothing hangs (status %#x: %d %d %d %d)", status, got[0],
	   got[1], got[2], got[3]);
	check_recovers(rt, &r, "fork in a run: the parent's runtime");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

static void test_fork(void)
{
	struct fork_result res = { -1, -1, -1, -1, 0, 0, -1, 0 };
	struct pto_runtime *rt;
	struct tl_rec r;
	int fds[2], status = -1;
	pid_t pid;

	rt = make_rt(&r);
	check_recovers(rt, &r, "fork: before");
	if (pipe(fds))
		bail_out("pipe");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		bail_out("fork");
	if (!pid)
		fork_child(rt, fds[1]);
	close(fds[1]);
	if (read(fds[0], &res, sizeof(res)) != sizeof(res))
		diag("  the child sent no result");
	close(fds[0]);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "fork: the child ends normally, nothing hangs (status %#x)", status);
	ok(res.run == -EPERM && res.reg == -EPERM && res.flush == -EPERM &&
	   res.cancel == -EPERM && res.malloc_null,
	   "fork: in the child, the parent's runtime refuses pto_run, "
	   "registering, trace flush, cancel and pto_malloc (%d %d %d %d %d)",
	   res.run, res.reg, res.flush, res.cancel, res.malloc_null);
	ok(res.said, "fork: ... saying whose runtime it is and what to do");
	if (FORK_NO_THREADS)
		skip("fork: a runtime in the child: TSan allows no threads there");
	else
		ok(res.new_run == 0 && res.new_word != 0,
		   "fork: a runtime the child creates runs (%d)", res.new_run);
	check_recovers(rt, &r, "fork: the parent's runtime after the child");
	tl_rec_free(&r);
	pto_runtime_destroy(rt);
}

int main(void)
{
	test_outside_run();
	test_other_thread();
	test_nested();
	test_racing_submits();
	test_concurrent_runs();
	test_busy_said_once();
	test_kernel_calls();
	test_unbalanced();
	test_stats_snapshots();
	test_stats_rings();
	test_where_kernels_run();
	test_fork();
	test_fork_in_run();
	return tap_done();
}
