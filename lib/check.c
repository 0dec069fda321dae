// SPDX-License-Identifier: MIT
/*
 * Checked mode: guard pages after OUTPUT buffers, and C kernels run with
 * a SIGSEGV handler that turns a fault on a guard into the task's -EFAULT.
 * See check.h for the design; Documentation/libpto.rst for what it does
 * and does not catch.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "check.h"
#include "log.h"
#include "rings.h"
#include "runtime.h"

/*
 * What the report needs of a task, kept apart from what the kernel can
 * write: a kernel that overran a view's descriptor has clobbered it.
 */
struct check_rec {
	uint8_t kind[PTO_MAX_ARGS];
	uint64_t size[PTO_MAX_ARGS];
	uint64_t base[PTO_MAX_ARGS];	/* host address of the data */
	uint64_t views_at, views_size;	/* its view descriptors, if any */
};

struct pto_check {
	struct pto_runtime *rt;
	uint64_t page;			/* 0: no guard pages (a device) */
	bool guards_failed;		/* mprotect refused: said so once */
	uint32_t nguards;		/* guard pages set, every ring's */
	bool guards_capped;		/* CHECK_MAX_GUARDS said */
	uintptr_t lo, hi;		/* host range of every ring's heap */
	struct check_rec *rec[PTO_MAX_RINGS];
	/*
	 * Per ring, a bit per heap page: it is a guard (PROT_NONE) now.  A
	 * layout that repeats lap after lap then costs no mprotect() at all.
	 */
	uint64_t *guard[PTO_MAX_RINGS];
};

/* A kernel running armed on this thread: where a fault jumps back to. */
struct armed {
	sigjmp_buf jb;
	uintptr_t lo, hi;
	void *addr;
};

static __thread struct armed *armed_cur
	__attribute__((tls_model("initial-exec")));

/* The SIGSEGV handler is the process's: installed once for all runtimes. */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int sig_users;
static struct sigaction sig_old;

/* Not a guard fault of an armed kernel: whoever handled it before us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	if (sig_old.sa_flags & SA_SIGINFO) {
		if (sig_old.sa_sigaction)
			sig_old.sa_sigaction(sig, si, uc);
		return;
	}
	if (sig_old.sa_handler == SIG_DFL || sig_old.sa_handler == SIG_IGN) {
		/* the access faults again on return, and kills as it would */
		sigaction(sig, &sig_old, NULL);
		return;
	}
	sig_old.sa_handler(sig);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	struct armed *a = armed_cur;
	uintptr_t addr = (uintptr_t)si->si_addr;

	if (a && addr >= a->lo && addr < a->hi) {
		armed_cur = NULL;
		a->addr = si->si_addr;
		siglongjmp(a->jb, 1);
	}
	chain(sig, si, uc);
}

static int install_handler(void)
{
	struct sigaction sa;
	int ret = 0;

	pthread_mutex_lock(&sig_lock);
	if (!sig_users) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_segv;
		/* on the thread's alternate stack, if it has one (Go's rule) */
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSEGV, &sa, &sig_old))
			ret = -errno;
	}
	if (!ret)
		sig_users++;
	pthread_mutex_unlock(&sig_lock);
	return ret;
}

/*
 * The last checked runtime is gone: the handler from before ours comes
 * back, unless the program has put one of its own in ours' place since
 * (a crash reporter, Python's faulthandler), which stays.
 */
static void remove_handler(void)
{
	struct sigaction now;

	pthread_mutex_lock(&sig_lock);
	if (!--sig_users && !sigaction(SIGSEGV, NULL, &now) &&
	    (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_segv)
		sigaction(SIGSEGV, &sig_old, NULL);
	pthread_mutex_unlock(&sig_lock);
}

/* Guard pages need host memory the kernels address directly: the sim. */
static void setup_guards(struct pto_check *ck, struct pto_runtime *rt)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t r;

	if (!rt->be.c_kernels || !rt->be.host_addresses || page <= 0)
		return;
	for (r = 0; r < rt->nrings; r++)
		if ((uintptr_t)rt->ring[r].heap % (uint64_t)page)
			return;
	for (r = 0; r < rt->nrings; r++) {
		uint64_t pages = rt->ring[r].heap_size / (uint64_t)page + 1;

		ck->guard[r] = calloc((pages + 63) / 64, sizeof(uint64_t));
		if (!ck->guard[r])
			return;
	}
	ck->page = (uint64_t)page;
	ck->lo = UINTPTR_MAX;
	for (r = 0; r < rt->nrings; r++) {
		uintptr_t lo = (uintptr_t)rt->ring[r].heap;

		if (lo < ck->lo)
			ck->lo = lo;
		if (lo + rt->ring[r].heap_size > ck->hi)
			ck->hi = lo + rt->ring[r].heap_size;
	}
}

static void free_check(struct pto_check *ck)
{
	uint32_t r;

	for (r = 0; r < PTO_MAX_RINGS; r++) {
		free(ck->rec[r]);
		free(ck->guard[r]);
	}
	free(ck);
}

int pto_check_open(struct pto_runtime *rt)
{
	struct pto_check *ck;
	uint32_t r;
	int ret;

	if (!rt->cfg.check)
		return 0;
	ck = calloc(1, sizeof(*ck));
	if (!ck)
		return -ENOMEM;
	ck->rt = rt;
	for (r = 0; r < rt->nrings; r++) {
		ck->rec[r] = calloc(rt->ring[r].task_window, sizeof(*ck->rec[r]));
		if (!ck->rec[r]) {
			free_check(ck);
			return -ENOMEM;
		}
	}
	setup_guards(ck, rt);
	if (ck->page) {
		ret = install_handler();
		if (ret) {
			free_check(ck);
			return ret;
		}
	}
	rt->be.check = ck;
	return 0;
}

void pto_check_close(struct pto_runtime *rt)
{
	struct pto_check *ck = rt->be.check;

	if (!ck)
		return;
	if (ck->page)
		remove_handler();
	rt->be.check = NULL;
	free_check(ck);
}

uint64_t pto_check_out_span(const struct pto_check *ck, uint64_t size)
{
	if (!ck->page)
		return pto_align_up(size, PTO_HEAP_ALIGN);
	return pto_align_up(size, ck->page) + ck->page;
}

uint64_t pto_check_out_lead(const struct pto_check *ck, uint64_t size)
{
	if (!ck->page)
		return 0;
	return pto_align_up(size, ck->page) - pto_align_up(size, PTO_HEAP_ALIGN);
}

static struct check_rec *task_rec(struct pto_check *ck, uint64_t handle)
{
	uint32_t r = PTO_TASK_RING(handle) % PTO_MAX_RINGS;

	return &ck->rec[r][PTO_TASK_SEQ(handle) & ck->rt->ring[r].window_mask];
}

/* The parameters as submitted; OUTPUTs are placed by pto_check_task(). */
static void remember(struct check_rec *rec, const struct pto_param *p,
		     uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && i < PTO_MAX_ARGS; i++) {
		rec->kind[i] = (uint8_t)p[i].kind;
		rec->size[i] = p[i].size;
		rec->base[i] = (uintptr_t)p[i].base + p[i].offset;
	}
	rec->views_size = 0;
}

static bool protect(struct pto_check *ck, uint8_t *addr, uint64_t len,
		    int prot)
{
	if (!mprotect(addr, len, prot))
		return true;
	/* e.g. vm.max_map_count: carry on unguarded rather than fail */
	if (!ck->guards_failed)
		pto_log("checked mode: mprotect: %s; OUTPUT buffers are no "
			"longer guarded\n", strerror(errno));
	ck->guards_failed = true;
	return false;
}

/*
 * Guard pages one runtime may have set at a time.  Each splits the heap's
 * mapping in two more, and the kernel allows a process vm.max_map_count
 * of them (65530 by default) in all, its threads' stacks and its other
 * libraries' included: a run holding 4000 OUTPUTs in each of a few nested
 * scopes took some 32000, and the third such runtime left the process
 * unable to start a thread.  Beyond the cap, OUTPUTs go unguarded until
 * pages are given back.
 */
#define CHECK_MAX_GUARDS 4096

/* Page pg of ring r's heap: make it a guard or not, if it is not already. */
static bool set_guard(struct pto_check *ck, uint32_t r, uint64_t pg, bool on)
{
	uint64_t bit = 1ull << (pg % 64), *w = &ck->guard[r][pg / 64];

	if (!(*w & bit) == !on)
		return true;
	if (on && ck->nguards >= CHECK_MAX_GUARDS) {
		if (!ck->guards_capped)
			pto_log("checked mode: %u guard pages set in this "
				"runtime's heap rings; OUTPUT buffers placed "
				"while that many are go unguarded (each splits "
				"the heap's mapping, of which a process has "
				"vm.max_map_count)\n", CHECK_MAX_GUARDS);
		ck->guards_capped = true;
		return true;
	}
	if (!protect(ck, ck->rt->ring[r].heap + pg * ck->page, ck->page,
		     on ? PROT_NONE : PROT_READ | PROT_WRITE))
		return false;
	*w ^= bit;
	if (on)
		ck->nguards++;
	else
		ck->nguards--;
	return true;
}

/* The span of size bytes from page *pg on: accessible, then its guard. */
static bool guard_span(struct pto_check *ck, uint32_t r, uint64_t *pg,
		       uint64_t size)
{
	uint64_t last = *pg + pto_check_out_span(ck, size) / ck->page - 1;

	for (; *pg < last; (*pg)++)
		if (!set_guard(ck, r, *pg, false))
			return false;
	return set_guard(ck, r, (*pg)++, true);
}

void pto_check_task(struct pto_runtime *rt, uint64_t handle, uint32_t ring,
		    uint64_t off, const struct pto_param *p, uint32_t n,
		    uint64_t views_size, uint64_t args_size)
{
	struct pto_check *ck = rt->be.check;
	struct check_rec *rec = task_rec(ck, handle);
	uint8_t *heap = rt->ring[ring].heap;
	uint64_t pg = off / (ck->page ? ck->page : 1);
	uint32_t i;

	remember(rec, p, n);
	if (!ck->page || ck->guards_failed)
		return;
	/* each OUTPUT's span, in order: off is page-aligned */
	for (i = 0; i < n; i++) {
		if (p[i].kind != PTO_PARAM_OUTPUT)
			continue;
		if (i < PTO_MAX_ARGS)
			rec->base[i] = (uintptr_t)(heap + pg * ck->page +
				       pto_check_out_lead(ck, p[i].size));
		if (!guard_span(ck, ring, &pg, p[i].size))
			return;
	}
	/*
	 * The view descriptors and the argument array past them, which the
	 * orchestrator writes next.
	 */
	rec->views_at = (uintptr_t)(heap + pg * ck->page);
	rec->views_size = views_size;
	if (views_size && !guard_span(ck, ring, &pg, views_size))
		return;
	if (args_size)
		guard_span(ck, ring, &pg, args_size);
}

/* The parameter whose buffer starts closest below addr, or -1. */
static int overran(const struct check_rec *rec,
		   const struct pto_task_desc *d, uintptr_t addr)
{
	uint32_t i, n = d->nargs < PTO_MAX_ARGS ? d->nargs : PTO_MAX_ARGS;
	uint64_t best = 0;
	int found = -1;

	/* the first PTO_MAX_ARGS parameters are remembered, see remember() */
	for (i = 0; i < n; i++) {
		if (rec->kind[i] == PTO_PARAM_SCALAR ||
		    rec->base[i] > addr || rec->base[i] < best)
			continue;
		best = rec->base[i];
		found = (int)i;
	}
	return found;
}

/* Did the fault at addr run off the end of the task's view descriptors? */
static bool overran_views(const struct pto_check *ck,
			  const struct check_rec *rec, uintptr_t addr)
{
	uint64_t span = pto_check_out_span(ck, rec->views_size);

	return rec->views_size && addr >= rec->views_at &&
	       addr < rec->views_at + span;
}

static const char *const kind_name[] = {
	[PTO_PARAM_INPUT] = "INPUT",
	[PTO_PARAM_OUTPUT] = "OUTPUT",
	[PTO_PARAM_INOUT] = "INOUT",
	[PTO_PARAM_OUTPUT_EXISTING] = "OUTPUT_EXISTING",
	[PTO_PARAM_NODEP] = "NODEP",
	[PTO_PARAM_SCALAR] = "SCALAR",
};

static void report(struct pto_check *ck, const struct pto_task_desc *d,
		   uint32_t core, void *addr)
{
	struct pto_runtime *rt = ck->rt;
	uint64_t h = d->task_id;
	uint32_t r = PTO_TASK_RING(h) % PTO_MAX_RINGS;
	uint64_t slot = PTO_TASK_SEQ(h) & rt->ring[r].window_mask;
	uint64_t id = rt->orch.ring[r].slot_id[slot] &
		      ((1ull << PTO_SLOT_DEPTH_SHIFT) - 1);
	const struct check_rec *rec = task_rec(ck, h);
	int i = overran(rec, d, (uintptr_t)addr);

	pto_log("checked mode: task %" PRIu64 " '%s' (%s, core %u) accessed "
		"%p, in a guard page of the heap ring; the task fails with "
		"-EFAULT\n", id, rt->kernels[d->kernel_id % PTO_MAX_KERNELS].name,
		pto_worker_type_name(d->worker_type), core, addr);
	if (overran_views(ck, rec, (uintptr_t)addr)) {
		pto_log("  that is past the end of its view descriptors (%"
			PRIu64 " bytes): a view parameter's argument is the "
			"address of its struct pto_view_desc, not of the data; "
			"pto_arg_view(args, i) reads it\n", rec->views_size);
		return;
	}
	/*
	 * A guard is at most a page past the end of the buffer overrun; a
	 * farther one is not the culprit, which is among the parameters
	 * from PTO_MAX_ARGS on, not remembered.
	 */
	if (d->nargs > PTO_MAX_ARGS &&
	    (i < 0 || (uintptr_t)addr - rec->base[i] - rec->size[i] >=
		      ck->page)) {
		pto_log("  that is past the end of one of its parameters %u "
			"to %u (checked mode names only the first %u)\n",
			PTO_MAX_ARGS, d->nargs - 1, PTO_MAX_ARGS);
		return;
	}
	/* the guard right after a buffer is its; any other, a stray access */
	if (i < 0 || (uintptr_t)addr < rec->base[i] + rec->size[i] ||
	    (uintptr_t)addr - rec->base[i] - rec->size[i] >= ck->page) {
		pto_log("  that is not just past the end of any of its "
			"parameters: an index before a buffer's start, or a "
			"page or more past its end, reached the guard of "
			"another buffer\n");
		return;
	}
	pto_log("  that is %" PRIu64 " bytes past the end of its parameter "
		"%d (%s, %" PRIu64 " bytes at %#" PRIx64 ")\n",
		(uint64_t)((uintptr_t)addr - rec->base[i] - rec->size[i]),
		i, rec->kind[i] <= PTO_PARAM_SCALAR ? kind_name[rec->kind[i]] : "?",
		rec->size[i], rec->base[i]);
}

int pto_check_run(struct pto_check *ck, pto_kernel_fn fn,
		  const struct pto_task_desc *d, struct pto_kernel_ctx *kc)
{
	struct armed a;

	a.lo = ck->lo;
	a.hi = ck->hi;
	a.addr = NULL;
	pto_kernel_enter(kc);
	/* 1: restore the signal mask, SIGSEGV is blocked in the handler */
	if (sigsetjmp(a.jb, 1)) {
		pto_kernel_leave();
		report(ck, d, kc->core, a.addr);
		return -EFAULT;
	}
	armed_cur = &a;
	fn(pto_desc_args(d), d->nargs);
	armed_cur = NULL;
	pto_kernel_leave();
	return kc->status;
}
