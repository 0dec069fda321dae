// SPDX-License-Identifier: MIT
/*
 * Checked mode (cfg.check, PTO_CHECK=1) on the simulator:
 *  - a C kernel writing past the end of its OUTPUT buffer fails that task
 *    with -EFAULT and a message naming the task, the kernel, the address
 *    and the parameter it overran; the process goes on, and the runtime
 *    runs the next graph correctly;
 *  - well-behaved kernels give the same results in checked mode, also
 *    when the heap ring wraps and guard pages land on reused memory;
 *  - OUTPUT and pto_alloc() buffers read as 0xff bytes (NaNs) until
 *    written, whatever their memory held before;
 *  - a fault that is not a guard page's (a NULL write) still kills the
 *    process as it would without checked mode: nothing is swallowed;
 *  - an access that reaches, through another base, memory that an access
 *    since the last pto_wait() or run start wrote (or writes what one
 *    read) is refused with a message naming both;
 *  - PTO_CHECK sets the flag, and a value other than 0 or 1 is refused.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"

enum { K_OVERRUN = 1, K_FILL, K_SUM, K_NULL };

#define OUT_BYTES 100	/* not a multiple of anything the runtime rounds to */

/* args: dst, bytes to write */
static void k_overrun(const uint64_t *a, uint32_t n)
{
	volatile uint8_t *d = (uint8_t *)(uintptr_t)a[0];

	for (uint64_t i = 0; i < a[1]; i++)
		d[i] = (uint8_t)i;
}

/* dst[0..words) = seed + i */
static void k_fill(const uint64_t *a, uint32_t n)
{
	for (uint64_t i = 0; i < a[1]; i++)
		((uint64_t *)(uintptr_t)a[0])[i] = a[2] + i;
}

/* acc[0] += sum of src[0..words) */
static void k_sum(const uint64_t *a, uint32_t n)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < a[2]; i++)
		s += ((uint64_t *)(uintptr_t)a[1])[i];
	((uint64_t *)(uintptr_t)a[0])[0] += s;
}

static void k_null(const uint64_t *a, uint32_t n)
{
	*(volatile uint64_t *)(uintptr_t)a[0] = 1;
}

static struct pto_runtime *checked_rt(uint64_t heap)
{
	struct pto_config cfg;
	struct pto_runtime *rt;

	tl_config(&cfg, 64, heap);
	cfg.check = 1;
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_OVERRUN, PTO_WORKER_VECTOR, k_overrun,
				"overrun") ||
	    pto_kernel_register(rt, K_FILL, PTO_WORKER_VECTOR, k_fill, "fill") ||
	    pto_kernel_register(rt, K_SUM, PTO_WORKER_CUBE, k_sum, "sum") ||
	    pto_kernel_register(rt, K_NULL, PTO_WORKER_VECTOR, k_null, "null"))
		bail_out("cannot register kernels");
	return rt;
}

struct overrun {
	uint64_t bytes;		/* the kernel writes this many */
	void *buf;
	int64_t id;
};

/* Two harmless tasks, then the overrunning one: its id is not 0. */
static int orch_overrun(struct pto_runtime *rt, void *arg)
{
	struct overrun *o = arg;
	struct pto_param p[2];
	void *x;
	int i;

	for (i = 0; i < 2; i++) {
		p[0] = PTO_OUT(&x, 64);
		p[1] = PTO_SCALAR(64);
		if (pto_submit_task(rt, K_OVERRUN, PTO_WORKER_VECTOR, p, 2) < 0)
			return -1;
	}
	p[0] = PTO_OUT(&o->buf, OUT_BYTES);
	p[1] = PTO_SCALAR(o->bytes);
	o->id = pto_submit_task(rt, K_OVERRUN, PTO_WORKER_VECTOR, p, 2);
	return o->id < 0 ? (int)o->id : 0;
}

static void test_overrun(void)
{
	struct pto_runtime *rt = checked_rt(0);
	struct overrun o = { .bytes = OUT_BYTES };
	struct tl_capture cap;
	char want[64], *err;
	int ret;

	ok_eq(pto_run(rt, orch_overrun, &o), 0,
	      "overrun: writing exactly the OUTPUT's size is fine");
	ok(((uintptr_t)o.buf + OUT_BYTES + 63) / 64 * 64 %
	   (uintptr_t)sysconf(_SC_PAGESIZE) == 0,
	   "overrun: the buffer ends against its guard page (64-byte aligned)");

	o.bytes = 4096;
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_overrun, &o);
	err = tl_capture_end(&cap);
	ok_eq(ret, -EFAULT, "overrun: the run fails with the task's -EFAULT");
	snprintf(want, sizeof(want), "task %lld 'overrun' (vector",
		 (long long)o.id);
	ok(strstr(err, want) != NULL,
	   "overrun: the message names the task and kernel");
	ok(strstr(err, "-EFAULT") && strstr(err, "guard page"),
	   "overrun: ... says what happened");
	ok(strstr(err, "28 bytes past the end of its parameter 0 (OUTPUT, "
		   "100 bytes at") != NULL,
	   "overrun: ... and which buffer it overran, by how much");
	diag("%s", err);
	free(err);

	o.bytes = OUT_BYTES;
	ok_eq(pto_run(rt, orch_overrun, &o), 0,
	      "overrun: the runtime runs again afterwards");
	pto_runtime_destroy(rt);
}

/* args: a view, bytes to write from its base */
static void k_overrun_view(const uint64_t *a, uint32_t n)
{
	const struct pto_view_desc *v = pto_arg_view(a, 0);
	volatile uint8_t *d = (uint8_t *)(uintptr_t)v->addr;

	for (uint64_t i = 0; i < a[1]; i++)
		d[i] = (uint8_t)i;
}

/* 25 floats, as a 5 x 5 OUTPUT view: 100 bytes, like OUT_BYTES */
static int orch_overrun_view(struct pto_runtime *rt, void *arg)
{
	struct pto_view v = pto_view_2d(NULL, PTO_DTYPE_F32, 5, 5, 5);
	struct pto_param p[] = { PTO_OUT_VIEW(&v), PTO_SCALAR(4096) };
	int64_t id;

	(void)arg;
	id = pto_submit_task(rt, K_OVERRUN + 8, PTO_WORKER_VECTOR, p, 2);
	return id < 0 ? (int)id : 0;
}

/*
 * Register kernel kid (fn, a vector kernel) on rt and run orch(arg) once:
 * the run's result into *ret, what it said returned.
 */
static char *run_kernel(struct pto_runtime *rt, uint32_t kid,
			pto_kernel_fn fn, const char *name, pto_orch_fn orch,
			void *arg, int *ret)
{
	struct tl_capture cap;

	if (pto_kernel_register(rt, kid, PTO_WORKER_VECTOR, fn, name))
		bail_out("cannot register kernels");
	tl_capture_begin(&cap);
	*ret = pto_run(rt, orch, arg);
	return tl_capture_end(&cap);
}

/* args: the OUTPUT; a write three pages before it */
static void k_under(const uint64_t *a, uint32_t n)
{
	((volatile uint8_t *)(uintptr_t)a[0])[-3 * 4096] = 1;
}

static uint64_t under_other[8];

/*
 * Two tasks' OUTPUTs (a page and a guard each), then a task that writes
 * three pages before its own: the first's guard.  Its other parameter,
 * an array of the program's far below, is not what it overran.
 */
static int orch_under(struct pto_runtime *rt, void *arg)
{
	void *x;
	int i;

	for (i = 0; i < 2; i++)
		if (PTO_SUBMIT(rt, K_OVERRUN, PTO_WORKER_VECTOR,
			       PTO_OUT(&x, 64), PTO_SCALAR(64)) < 0)
			return -1;
	return PTO_SUBMIT(rt, K_OVERRUN + 11, PTO_WORKER_VECTOR,
			  PTO_OUT(&x, OUT_BYTES),
			  PTO_INOUT(under_other, 0, sizeof(under_other))) < 0;
}

/* An access that hits another buffer's guard is not blamed on a param. */
static void test_underrun(void)
{
	struct pto_runtime *rt = checked_rt(0);
	int ret;
	char *err;

	if (sysconf(_SC_PAGESIZE) != 4096) {
		skip("underrun: the test assumes 4 KiB pages");
		pto_runtime_destroy(rt);
		return;
	}
	err = run_kernel(rt, K_OVERRUN + 11, k_under, "under", orch_under,
			 NULL, &ret);
	ok_eq(ret, -EFAULT, "underrun: a write into an earlier buffer's guard "
	      "fails the task");
	ok(strstr(err, "not just past the end of any of its parameters") &&
	   !strstr(err, "bytes past the end"),
	   "underrun: ... and is not said to overrun one of its parameters");
	diag("%s", err);
	free(err);
	pto_runtime_destroy(rt);
}

#define MANY_OUTS 6000

static int orch_many_outs(struct pto_runtime *rt, void *arg)
{
	void *x;
	int i;

	for (i = 0; i < MANY_OUTS; i++)	/* all held by the run's scope */
		if (PTO_SUBMIT(rt, K_OVERRUN, PTO_WORKER_VECTOR,
			       PTO_OUT(&x, 64), PTO_SCALAR(64)) < 0)
			return -1;
	return 0;
}

static unsigned int map_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned int n = 0;
	int c;

	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/*
 * Guard pages split the heap's mapping; a runtime keeps to a few
 * thousand of them, so that checked runtimes cannot use up the process's
 * vm.max_map_count (and with it its threads' stacks).
 */
static void test_guard_cap(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	unsigned int before, after;
	char *err;
	int ret;

	tl_config(&cfg, 8192, 0);
	cfg.check = 1;
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_OVERRUN, PTO_WORKER_VECTOR, k_overrun,
				"overrun"))
		bail_out("cannot register kernels");
	before = map_count();
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_many_outs, NULL);
	err = tl_capture_end(&cap);
	after = map_count();
	ok(ret == 0 && after - before <= 2 * 4096 + 64,
	   "guard cap: %d OUTPUTs held at once add %u mappings, not twice "
	   "as many as OUTPUTs", MANY_OUTS, after - before);
	ok(tl_count(err, "guard pages set in this runtime's heap rings") == 1,
	   "guard cap: ... and say once that the rest go unguarded");
	free(err);
	pto_runtime_destroy(rt);
}

/* A view's overrun is told against the view's buffer, not its descriptor. */
static void test_overrun_view(void)
{
	struct pto_runtime *rt = checked_rt(0);
	int ret;
	char *err = run_kernel(rt, K_OVERRUN + 8, k_overrun_view,
			       "overrun_view", orch_overrun_view, NULL, &ret);

	ok_eq(ret, -EFAULT, "view overrun: the run fails with -EFAULT");
	ok(strstr(err, "28 bytes past the end of its parameter 0 (OUTPUT, "
		   "100 bytes at") != NULL,
	   "view overrun: the message says which view it overran, by how "
	   "much");
	diag("%s", err);
	free(err);
	pto_runtime_destroy(rt);
}

/*
 * args[0] taken for the data: a tile of 64 floats written over the view's
 * descriptor and on (a page and more was caught before, not this)
 */
static void k_desc_as_data(const uint64_t *a, uint32_t n)
{
	memset((void *)(uintptr_t)a[0], 0, 256);
}

static int orch_desc_as_data(struct pto_runtime *rt, void *arg)
{
	uint64_t shape[1] = { 1024 };
	struct pto_view v = pto_view_nd(arg, PTO_DTYPE_F32, 1, shape);
	struct pto_param p[] = { PTO_OUT_EXISTING_VIEW(&v) };
	int64_t id;

	id = pto_submit_task(rt, K_OVERRUN + 9, PTO_WORKER_VECTOR, p, 1);
	return id < 0 ? (int)id : 0;
}

/*
 * A kernel that takes a view's argument for its data overruns the view's
 * descriptor: said as such, not against the descriptor it clobbered.
 */
static void test_overrun_desc(void)
{
	struct pto_runtime *rt = checked_rt(0);
	void *buf = pto_malloc(rt, 4096);
	char *err;
	int ret;

	if (!buf)
		bail_out("pto_malloc");
	err = run_kernel(rt, K_OVERRUN + 9, k_desc_as_data, "desc_as_data",
			 orch_desc_as_data, buf, &ret);
	ok_eq(ret, -EFAULT, "descriptor overrun: the run fails with -EFAULT");
	ok(strstr(err, "past the end of its view descriptors (80 bytes)") &&
	   strstr(err, "pto_arg_view") && !strstr(err, "of its parameter"),
	   "descriptor overrun: the message says a view's argument is its "
	   "descriptor");
	diag("%s", err);
	free(err);
	pto_runtime_destroy(rt);
}

/* args[30]: an OUTPUT of 100 bytes, written 164 */
static void k_overrun_30(const uint64_t *a, uint32_t n)
{
	memset((void *)(uintptr_t)a[30], 1, OUT_BYTES + 64);
}

static int orch_wide(struct pto_runtime *rt, void *arg)
{
	struct pto_param p[31];
	void *x, *y;
	int i;

	for (i = 0; i < 31; i++)
		p[i] = PTO_SCALAR(i);
	p[0] = PTO_OUT(&x, OUT_BYTES);
	p[30] = PTO_OUT(&y, OUT_BYTES);
	return (int)(pto_submit_task(rt, K_OVERRUN + 10, PTO_WORKER_VECTOR,
				     p, 31) < 0);
}

/*
 * Only the first PTO_MAX_ARGS parameters are remembered: an overrun of a
 * later one is not pinned on parameter 0, whose guard is pages away.
 */
static void test_overrun_wide(void)
{
	struct pto_runtime *rt = checked_rt(0);
	int ret;
	char *err = run_kernel(rt, K_OVERRUN + 10, k_overrun_30, "overrun_30",
			       orch_wide, NULL, &ret);

	ok_eq(ret, -EFAULT, "31 parameters: the overrun of the last fails "
	      "the task");
	ok(strstr(err, "past the end of one of its parameters 24 to 30") &&
	   !strstr(err, "of its parameter 0"),
	   "31 parameters: ... and is not blamed on parameter 0");
	diag("%s", err);
	free(err);
	pto_runtime_destroy(rt);
}

static int orch_whole_heap(struct pto_runtime *rt, void *arg)
{
	struct pto_param p[2];
	void *x;
	int64_t id;

	p[0] = PTO_OUT(&x, *(uint64_t *)arg);
	p[1] = PTO_SCALAR(0);
	id = pto_submit_task(rt, K_OVERRUN, PTO_WORKER_VECTOR, p, 2);
	return id < 0 ? (int)id : 0;
}

/*
 * An OUTPUT as large as the heap ring fits unchecked, and checked mode's
 * pages and guard page make it -E2BIG: the message says why.
 */
static void test_whole_heap(void)
{
	uint64_t heap = 64 * 1024;
	struct pto_runtime *rt = checked_rt(heap);
	struct tl_capture cap;
	char *err;
	int ret;

	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_whole_heap, &heap);
	err = tl_capture_end(&cap);
	ok_eq(ret, -E2BIG, "whole heap: an OUTPUT of the heap's size is "
	      "-E2BIG in checked mode");
	ok(strstr(err, "its OUTPUTs (65536 bytes) take") &&
	   strstr(err, "checked mode, PTO_CHECK=1, gives each whole pages"),
	   "whole heap: ... and the message gives the size asked and says "
	   "checked mode grew it");
	diag("%s", err);
	free(err);
	pto_runtime_destroy(rt);
}

#define CHAIN 200
#define WORDS 600	/* 4800 bytes: two pages and a guard each */

/* Many OUTPUTs through a small heap ring: it wraps, guards move. */
static int orch_chain(struct pto_runtime *rt, void *arg)
{
	uint64_t *acc = arg;
	struct pto_param p[3];
	void *x;
	int i;

	for (i = 0; i < CHAIN; i++) {
		pto_scope_begin(rt);
		p[0] = PTO_OUT(&x, WORDS * 8);
		p[1] = PTO_SCALAR(WORDS);
		p[2] = PTO_SCALAR(i);
		if (pto_submit_task(rt, K_FILL, PTO_WORKER_VECTOR, p, 3) < 0)
			return -1;
		p[0] = PTO_INOUT(acc, 0, 8);
		p[1] = PTO_IN(x, 0, WORDS * 8);
		p[2] = PTO_SCALAR(WORDS);
		if (pto_submit_task(rt, K_SUM, PTO_WORKER_CUBE, p, 3) < 0)
			return -1;
		if (pto_scope_end(rt))
			return -1;
	}
	return 0;
}

static void test_wrap(void)
{
	struct pto_runtime *rt = checked_rt(64 << 10);
	uint64_t *acc = pto_malloc(rt, 8), want = 0;
	int i;

	*acc = 0;
	for (i = 0; i < CHAIN; i++)
		want += (uint64_t)WORDS * i + (uint64_t)WORDS * (WORDS - 1) / 2;
	ok_eq(pto_run(rt, orch_chain, acc), 0,
	      "wrap: 200 guarded OUTPUTs through a 64 KiB heap ring");
	ok_eq(*acc, want, "wrap: same result as unchecked");
	pto_runtime_destroy(rt);
}

static int orch_null(struct pto_runtime *rt, void *arg)
{
	struct pto_param p = PTO_SCALAR(8);	/* an address no one maps */

	return (int)pto_submit_task(rt, K_NULL, PTO_WORKER_VECTOR, &p, 1);
}

static int null_write_run(void *arg)
{
	pto_run(checked_rt(0), orch_null, NULL);
	return 0;
}

/*
 * In a child: the fault must end it, as it would unchecked.  Its stderr
 * (the sanitizers' reports, if any) stays out of the TAP.
 */
static void test_other_fault(void)
{
	int status = tl_in_child(null_write_run, NULL, 60, NULL, 0);

	ok(!(WIFEXITED(status) && WEXITSTATUS(status) == 0),
	   "other faults: a NULL write still ends the process (status %#x)",
	   status);
}

#define PEEK_BYTES 256
#define PEEK_LAPS 40

/*
 * args: an OUTPUT, a pto_alloc() view of PEEK_BYTES each, a counter: adds
 * the bytes of either that are not the poison, then zeroes both, so that
 * the next lap's buffers, on the same heap pages, would read as zeros.
 */
static void k_peek(const uint64_t *a, uint32_t n)
{
	uint8_t *out = (uint8_t *)(uintptr_t)a[0];
	uint8_t *scratch = pto_arg_data(a, 1);
	uint64_t *unpoisoned = (uint64_t *)(uintptr_t)a[2];

	for (uint32_t i = 0; i < PEEK_BYTES; i++)
		*unpoisoned += (out[i] != 0xff) + (scratch[i] != 0xff);
	memset(out, 0, PEEK_BYTES);
	memset(scratch, 0, PEEK_BYTES);
}

static int orch_peek(struct pto_runtime *rt, void *arg)
{
	uint64_t shape = PEEK_BYTES;
	void *x;
	int i;

	for (i = 0; i < PEEK_LAPS; i++) {
		struct pto_view v = pto_view_nd(NULL, PTO_DTYPE_U8, 1, &shape);

		pto_scope_begin(rt);
		if (pto_alloc(rt, &v) ||
		    PTO_SUBMIT(rt, K_OVERRUN + 9, PTO_WORKER_VECTOR,
			       PTO_OUT(&x, PEEK_BYTES), PTO_INOUT_VIEW(&v),
			       PTO_INOUT(arg, 0, 8)) < 0 ||
		    pto_scope_end(rt))
			return -1;
	}
	return 0;
}

/* A buffer read before it is written reads as NaNs, lap after lap. */
static void test_poison(void)
{
	struct pto_runtime *rt = checked_rt(64 << 10);
	uint64_t *unpoisoned = pto_malloc(rt, 8);
	int ret;
	char *err;

	*unpoisoned = 0;
	err = run_kernel(rt, K_OVERRUN + 9, k_peek, "peek", orch_peek,
			 unpoisoned, &ret);
	ok_eq(ret, 0, "poison: %d laps of an OUTPUT and a pto_alloc() read "
	      "before written", PEEK_LAPS);
	ok_eq(*unpoisoned, 0, "poison: each read as 0xff bytes, not as the "
	      "zeros the lap before left");
	free(err);
	pto_runtime_destroy(rt);
}

static void test_config(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt = NULL;

	setenv("PTO_CHECK", "1", 1);
	pto_config_init(&cfg);
	unsetenv("PTO_CHECK");
	ok_eq(cfg.check, 1u, "config: PTO_CHECK=1 sets cfg.check");
	pto_config_init(&cfg);
	ok_eq(cfg.check, 0u, "config: off by default");
	cfg.check = 2;
	ok_eq(pto_runtime_create(&cfg, &rt), -EINVAL,
	      "config: check=2 is refused");
	ok(!rt, "config: ... with no runtime");
}

/* ---- one memory through two bases ------------------------------------ */

#define K_NOP (K_OVERRUN + 12)
#define BIG_BYTES (128ull << 20)	/* 2048 chunks of the alias index */

static void k_nop(const uint64_t *a, uint32_t n)
{
	(void)a;
	(void)n;
}

/* One access of a task, or a pto_wait() (base NULL, wait set). */
struct alias_step {
	enum pto_param_kind kind;
	char *base;
	uint64_t off, size;
	bool with_next;		/* the next step's access is the same task's */
	bool wait;
};

struct alias_run {
	const struct alias_step *step;
	int n;
	int64_t id[8];		/* each step's task id, or its error */
};

static int orch_alias(struct pto_runtime *rt, void *arg)
{
	struct alias_run *ar = arg;
	struct pto_param p[4];
	uint32_t np = 0;
	int64_t id;
	int i, from = 0;

	for (i = 0; i < ar->n; i++) {
		const struct alias_step *s = &ar->step[i];

		if (s->wait) {
			id = pto_wait(rt);
			ar->id[i] = id;
			if (id)
				return (int)id;
			from = i + 1;
			continue;
		}
		p[np++] = (struct pto_param){ .kind = s->kind, .base = s->base,
					      .offset = s->off,
					      .size = s->size };
		if (s->with_next)
			continue;
		id = pto_submit_task(rt, K_NOP, PTO_WORKER_VECTOR, p, np);
		for (; from <= i; from++)
			ar->id[from] = id;
		np = 0;
		if (id < 0)
			return (int)id;
	}
	return 0;
}

struct alias_case {
	const char *name;
	bool refused;		/* the last task is refused */
	const char *says;	/* and the message has this, %ld: first id */
	struct alias_step step[6];
};

/* steps of a case until the one with no base that is no wait */
static int alias_steps(const struct alias_case *c)
{
	int n = 0;

	while (c->step[n].base || c->step[n].wait)
		n++;
	return n;
}

static void alias_case_run(struct pto_runtime *rt, const struct alias_case *c,
			   bool checked)
{
	struct alias_run ar = { .step = c->step, .n = alias_steps(c) };
	bool refused = checked && c->refused;
	struct tl_capture cap;
	char want[256];
	char *err;
	int ret;

	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_alias, &ar);
	err = tl_capture_end(&cap);
	ok_eq(ret, refused ? -EINVAL : 0, "alias%s: %s: the run %s",
	      checked ? "" : " (unchecked)", c->name,
	      refused ? "fails with -EINVAL" : "runs");
	ok_eq(ar.id[ar.n - 1] < 0 ? ar.id[ar.n - 1] : 0,
	      refused ? -EINVAL : 0, "alias%s: %s: the last submission %s",
	      checked ? "" : " (unchecked)", c->name,
	      refused ? "is refused" : "is taken");
	if (refused) {
		snprintf(want, sizeof(want), c->says, (long)ar.id[0]);
		ok(tl_count(err, "checked mode: parameter") == 1 &&
		   strstr(err, want) &&
		   strstr(err, "different bases never alias"),
		   "alias: %s: said once, naming \"%s\"", c->name, want);
		diag("%s", err);
	} else {
		ok(!*err, "alias%s: %s: nothing said",
		   checked ? "" : " (unchecked)", c->name);
	}
	free(err);
}

/*
 * Checked mode refuses an access that reaches, through another base,
 * bytes an access since the last point where every task was complete
 * wrote, or writes bytes one read; unchecked, the same program runs (the
 * documented contract: different bases never alias).
 */
static void test_alias(void)
{
	const size_t mib = 1 << 20;
	char *buf = malloc(mib), *big = malloc(BIG_BYTES);
	const enum pto_param_kind in = PTO_PARAM_INPUT,
		io = PTO_PARAM_INOUT, out = PTO_PARAM_OUTPUT_EXISTING;
	const struct alias_case cases[] = {
		{ "an interior base wrote, the whole one reads", true,
		  "parameter 0 (reading 64 bytes at", {
			{ io, buf + 4096, 0, 256 },
			{ in, buf, 4096 + 128, 64 } } },
		{ "the whole base wrote, an interior one reads", true,
		  "task %ld's parameter 0 writes through another base", {
			{ out, buf, 0, 8192 },
			{ in, buf + 100, 0, 8 } } },
		{ "an interior base read, the whole one writes", true,
		  "task %ld's parameter 0 reads through another base", {
			{ in, buf + 64, 0, 64 },
			{ io, buf, 0, 256 } } },
		{ "two bases in one task", true,
		  "its own parameter 0 reads through another base", {
			{ in, buf + 64, 0, 64, true },
			{ io, buf, 0, 256 } } },
		{ "a hull grown upwards", true, "reading 8 bytes", {
			{ io, buf, 0, 64 },
			{ io, buf, 900000, 64 },
			{ in, buf + 900000 + 16, 0, 8 } } },
		{ "a hull grown downwards", true, "reading 8 bytes", {
			{ io, buf, 900000, 64 },
			{ io, buf, 0, 64 },
			{ in, buf + 8, 0, 8 } } },
		{ "a wide read, then a write inside it", true,
		  "writing 64 bytes", {
			{ in, big, 0, BIG_BYTES },
			{ io, big + (100 << 20), 0, 64 } } },
		{ "a write, then a wide read over it", true,
		  "reading 134217728 bytes", {
			{ io, big + (100 << 20), 0, 64 },
			{ in, big, 0, BIG_BYTES } } },
		{ "both read", false, NULL, {
			{ in, buf + 64, 0, 64 },
			{ in, buf, 0, 256 } } },
		{ "neighbouring bytes", false, NULL, {
			{ io, buf, 0, 4096 },
			{ io, buf + 4096, 0, 4096 } } },
		{ "a pto_wait() between", false, NULL, {
			{ io, buf + 64, 0, 64 },
			{ .wait = true },
			{ io, buf, 0, 256 } } },
	};
	const struct alias_step first = { io, buf + 64, 0, 64 };
	const struct alias_step then = { io, buf, 0, 256 };
	struct alias_case next_run = { "the next run", false, NULL,
				       { first } };
	struct pto_config cfg;
	struct pto_runtime *rt;
	size_t i;

	if (!buf || !big)
		bail_out("out of memory");
	rt = checked_rt(0);
	if (pto_kernel_register(rt, K_NOP, PTO_WORKER_VECTOR, k_nop, "nop"))
		bail_out("cannot register kernels");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		alias_case_run(rt, &cases[i], true);
	/* a run's start is such a point too */
	alias_case_run(rt, &next_run, true);
	next_run.step[0] = then;
	alias_case_run(rt, &next_run, true);
	pto_runtime_destroy(rt);

	tl_config(&cfg, 64, 0);
	cfg.check = 0;
	rt = tl_runtime(&cfg);
	if (pto_kernel_register(rt, K_NOP, PTO_WORKER_VECTOR, k_nop, "nop"))
		bail_out("cannot register kernels");
	alias_case_run(rt, &cases[0], false);
	alias_case_run(rt, &cases[3], false);
	pto_runtime_destroy(rt);
	free(buf);
	free(big);
}

static void app_segv(int sig)
{
	(void)sig;
	_exit(3);
}

static bool segv_is(void (*handler)(int))
{
	struct sigaction now;

	return !sigaction(SIGSEGV, NULL, &now) &&
	       !(now.sa_flags & SA_SIGINFO) && now.sa_handler == handler;
}

static void set_segv(void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL))
		bail_out("sigaction: %s", strerror(errno));
}

/*
 * The process's SIGSEGV handler after the last checked runtime: the one
 * from before it, or one the program installed meanwhile (a crash
 * reporter, which destroy used to take away).
 */
static void test_handler_restored(void)
{
	struct pto_runtime *rt;

	set_segv(app_segv);
	rt = checked_rt(0);
	ok(!segv_is(app_segv), "handler: a checked runtime installs its own");
	pto_runtime_destroy(rt);
	ok(segv_is(app_segv), "handler: destroy puts the one from before back");

	set_segv(SIG_DFL);
	rt = checked_rt(0);
	set_segv(app_segv);
	pto_runtime_destroy(rt);
	ok(segv_is(app_segv), "handler: one the program installed after "
	   "create stays after destroy");
	set_segv(SIG_DFL);
}

int main(void)
{
	test_config();
	test_overrun();
	test_overrun_view();
	test_underrun();
	test_guard_cap();
	test_overrun_desc();
	test_whole_heap();
	test_overrun_wide();
	test_wrap();
	test_poison();
	test_alias();
	test_other_fault();
	test_handler_restored();
	return tap_done();
}
