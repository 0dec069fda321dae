// SPDX-License-Identifier: MIT
/*
 * The runtime object: creation on a backend, device memory and pto_run(),
 * which brings the orchestrator, the scheduler and the device together.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "config.h"
#include "log.h"
#include "pto_layout.h"
#include "runtime.h"
#include "stats.h"
#include "statspage.h"
#include "sync.h"
#include "trace.h"
#include "check.h"

static uint32_t cring_entries_for(uint32_t num_cores)
{
	uint64_t n = pto_next_pow2((uint64_t)num_cores * PTO_CORE_QUEUE_SLOTS * 2);

	return n < 64 ? 64 : (uint32_t)n;
}

/* Whole cache lines per writer and rate; see <pto/pto_uapi.h>. */
_Static_assert(sizeof(struct pto_window_ident) == 64 &&
	       sizeof(struct pto_window_orch) == 128 &&
	       sizeof(struct pto_window_notify) == 64 &&
	       sizeof(struct pto_window_sched) == 192 &&
	       sizeof(struct pto_window_flags) == 64,
	       "each window header part is whole cache lines");
_Static_assert(sizeof(struct pto_task_desc) == 256,
	       "descriptors are four cache lines");

/* "sim" is the in-process simulator; anything else names a /dev/ptoN. */
static const struct pto_backend_ops *backend_for(const char *device)
{
	if (!device || !*device || !strcmp(device, "sim"))
		return &pto_sim_backend_ops;
	return &pto_dev_backend_ops;
}

/*
 * A device charges every region to the user (pto.ko's max_user_memory):
 * where the request would not fit in what the device says is left, the
 * heap, which is most of it, gives way.  The other regions' sizes come
 * from the same layout the device computes.
 */
static void fit_device_memory(struct pto_runtime *rt, struct pto_setup *s)
{
	struct pto_setup l = *s;
	uint64_t other, room;

	if (!rt->be.mem_avail)
		return;
	l.heap_size = pto_layout_rings_heap(&l);
	if (pto_layout(&l, rt->be.num_cores))
		return;		/* the device will say what is wrong */
	other = l.window.size + l.regs.size + l.cring.size;
	room = rt->be.mem_avail > other ? rt->be.mem_avail - other : 0;
	if (room >= rt->be.max_heap)
		return;
	rt->be.max_heap = room & ~(PTO_LAYOUT_PAGE - 1);
	/*
	 * Said only where it costs the heap rings asked for (the arena
	 * shrinks to what is left in any case): a runtime of small rings
	 * has nothing to learn from it.
	 */
	if (l.heap_size <= pto_heap_rings_room(&rt->be))
		return;
	pto_log("%s: this user may set up %llu MiB more (pto.ko's "
		"max_memory and max_user_memory, see pto(4)): the heap gets at "
		"most %llu MiB\n",
		rt->device, (unsigned long long)(rt->be.mem_avail >> 20),
		(unsigned long long)(room >> 20));
}

/*
 * A device's heap is real memory, and the rings must leave room for
 * pto_malloc(): where the configured heap rings would take more than
 * three quarters of what the device allows, they shrink in proportion,
 * and the runtime says so where the sizes were asked for.
 */
static void fit_heap_rings(struct pto_runtime *rt, struct pto_setup *s)
{
	uint64_t want = pto_layout_rings_heap(s);
	uint64_t room = pto_heap_rings_room(&rt->be);
	uint32_t r;

	/* not even a page a ring: the backend's setup says what is short */
	if (want <= room || room < s->nrings * PTO_HEAP_SIZE_MIN)
		return;
	for (r = 0; r < s->nrings; r++) {
		uint64_t h = s->ring[r].heap_size;
		uint64_t fit = (uint64_t)((double)h * room / want) &
			       ~(PTO_LAYOUT_PAGE - 1);

		/* a ring of a few pages keeps them: rounding made it 0 */
		s->ring[r].heap_size = fit >= PTO_HEAP_SIZE_MIN ? fit : h;
	}
	/* libpto's own defaults (256 MiB in all) shrink unsaid */
	if (pto_config_heap_default(&rt->cfg))
		return;
	pto_log("%s allows a %llu MiB heap: the heap rings get %llu MiB of "
		"it, ring 0 %llu MiB (asked %llu MiB in all)\n", rt->device,
		(unsigned long long)(rt->be.max_heap >> 20),
		(unsigned long long)(room >> 20),
		(unsigned long long)(s->ring[0].heap_size >> 20),
		(unsigned long long)(want >> 20));
}

/*
 * The SETUP request: every ring's sizes, an order ring and a release ring
 * as large as all task windows together (each entry stands for a task
 * that is not retired yet), and the pto_malloc arena after the rings.
 */
static void setup_request(struct pto_runtime *rt, struct pto_setup *s)
{
	uint64_t windows = 0;
	uint32_t r;

	memset(s, 0, sizeof(*s));
	s->nrings = rt->nrings;
	for (r = 0; r < rt->nrings; r++) {
		struct pto_ring_config c = pto_ring_cfg(&rt->cfg, r);

		s->ring[r].task_window = c.task_window;
		s->ring[r].dep_pool_size = c.dep_pool_size;
		s->ring[r].heap_size = pto_align_up(c.heap_size, PTO_HEAP_ALIGN);
		windows += c.task_window;
		rt->ring[r].tm_pool_size = c.tensormap_pool_size;
	}
	s->order_ring_size = (uint32_t)pto_next_pow2(windows);
	s->release_ring_size = s->order_ring_size;
	s->cring_size = cring_entries_for(rt->be.num_cores);
	fit_device_memory(rt, s);
	fit_heap_rings(rt, s);
	s->heap_size = pto_layout_rings_heap(s) +
		       pto_layout_page_align(rt->cfg.arena_size);
}

/* The rings as SETUP laid them out. */
static void attach_rings(struct pto_runtime *rt)
{
	const struct pto_setup *s = &rt->be.geo;
	uint32_t r;

	for (r = 0; r < rt->nrings; r++) {
		struct pto_task_ring *ring = &rt->ring[r];

		ring->desc = rt->be.ring[r].desc;
		ring->dep = rt->be.ring[r].dep;
		ring->heap = rt->be.ring[r].heap;
		ring->heap_dev = rt->be.heap_dev_base + s->ring[r].heap_offset;
		ring->heap_size = s->ring[r].heap_size;
		ring->task_window = s->ring[r].task_window;
		ring->window_mask = ring->task_window - 1;
		ring->dep_pool_size = s->ring[r].dep_pool_size;
	}
	rt->win = rt->be.win;
	rt->order = rt->be.order;
	rt->order_mask = s->order_ring_size - 1;
	rt->release_mask = s->release_ring_size - 1;
}

/*
 * Who schedules.  A thread of its own reacts fastest, but only when it has
 * a CPU of its own: where the core threads alone fill the host's CPUs, it
 * would take one from the kernels every time it woke, so the core threads
 * schedule themselves.
 */
static enum pto_sched_policy sched_mode(struct pto_runtime *rt)
{
	uint32_t ncpu = rt->be.host_cpus;

	if (!rt->be.ops->set_sched)
		return PTO_SCHED_THREAD;
	if (rt->cfg.sched != PTO_SCHED_AUTO)
		return rt->cfg.sched;
	return ncpu >= rt->be.num_cores + 2 ? PTO_SCHED_THREAD :
					      PTO_SCHED_WORKERS;
}

static int open_backend(struct pto_runtime *rt)
{
	struct pto_setup s;
	int ret;

	if (rt->cfg.cpus && strcmp(rt->cfg.cpus, "any"))
		rt->be.ncpus = (uint32_t)pto_parse_cpus(rt->cfg.cpus,
							rt->be.cpus, 256);
	rt->be.host_cpus = rt->be.ncpus ? rt->be.ncpus : pto_host_cpus();
	rt->be.ops = backend_for(rt->cfg.device);
	ret = rt->be.ops->open(&rt->be, &rt->cfg);
	if (ret)
		return ret;
	rt->nrings = rt->cfg.nrings;
	setup_request(rt, &s);
	ret = rt->be.ops->setup(&rt->be, &s);
	if (!ret)
		ret = pto_backend_attach(&rt->be);
	if (ret)
		return ret;
	attach_rings(rt);
	rt->sched.mode = sched_mode(rt);
	return 0;
}

static int create(struct pto_runtime *rt, const char *trace_path);

int pto_runtime_create(const struct pto_config *cfg, struct pto_runtime **out)
{
	const struct pto_log_tag *prev;
	struct pto_config own, dflt;
	struct pto_runtime *rt;
	int ret;

	if (!out) {
		pto_log("pto_runtime_create: rt (where the runtime goes) is "
			"NULL\n");
		return -EINVAL;
	}
	*out = NULL;
	if (!cfg) {
		pto_config_init(&dflt);
		cfg = &dflt;
	}
	/* the import also refuses a bad PTO_* variable, naming it */
	ret = pto_config_import(cfg, &own);
	if (!ret)
		ret = pto_config_validate(&own);
	if (ret)
		return ret;
	cfg = &own;
	/* aligned: the runtime keeps each thread's hot state on its own lines */
	rt = aligned_alloc(_Alignof(struct pto_runtime),
			   pto_align_up(sizeof(*rt), _Alignof(struct pto_runtime)));
	if (!rt)
		return -ENOMEM;
	memset(rt, 0, sizeof(*rt));
	rt->run_state = PTO_RUN_OVER;
	pto_fork_watch();
	rt->pid = getpid();
	rt->orch.fork_gen = __atomic_load_n(&pto_fork_gen, __ATOMIC_RELAXED);
	rt->cfg = *cfg;
	snprintf(rt->device, sizeof(rt->device), "%s", cfg->device);
	rt->cfg.device = rt->device;
	rt->cfg.trace_path = NULL;	/* owned by the trace, see create() */
	pthread_mutex_init(&rt->arena_lock, NULL);
	pto_log_tag_init(&rt->log_tag, rt->device);
	rt->be.log_tag = &rt->log_tag;

	prev = pto_log_enter(&rt->log_tag);
	ret = create(rt, cfg->trace_path);
	pto_log_leave(prev);
	if (ret) {
		pto_runtime_destroy(rt);
		return ret;
	}
	*out = rt;
	return 0;
}

/* The rest of pto_runtime_create(), speaking for the runtime. */
static int create(struct pto_runtime *rt, const char *trace_path)
{
	int ret = open_backend(rt);

	if (!ret)
		ret = pto_orch_init(rt);
	if (!ret)
		ret = pto_sched_init(rt);
	if (!ret) {
		rt->arena = pto_arena_create(rt->be.geo.arena_offset,
					     rt->be.heap_size -
					     rt->be.geo.arena_offset);
		if (!rt->arena)
			ret = -ENOMEM;
	}
	if (!ret && trace_path && *trace_path) {	/* "": none, as PTO_TRACE= */
		rt->trace = pto_trace_open(trace_path, rt);
		if (!rt->trace)
			ret = -errno ? -errno : -EIO;
	}
	if (!ret)
		ret = pto_check_open(rt);
	if (ret)
		return ret;
	pto_stats_init(rt);
	rt->page = pto_statspage_create(rt->device);
	pto_stats_publish(rt);
	return 0;
}

/*
 * pto_runtime_destroy() in a child after fork(): the threads to stop are
 * the parent's, the stats page and the trace file too (unlinking the one
 * or flushing the other would spoil the parent's).  Only the device's
 * descriptors, which would keep the parent's context open, are closed;
 * the rest is the child's copy of memory, which goes with the child.
 */
static void forget(struct pto_runtime *rt)
{
	if (rt->be.ops && rt->be.ops->forget)
		rt->be.ops->forget(&rt->be);
}

void pto_runtime_destroy(struct pto_runtime *rt)
{
	const struct pto_log_tag *prev;
	uintptr_t idle = 0;

	if (!rt)
		return;
	if (pto_forked(rt)) {
		forget(rt);
		return;
	}
	prev = pto_log_enter(&rt->log_tag);
	/* a runtime in use is leaked rather than freed under its user */
	if (!__atomic_compare_exchange_n(&rt->orch.owner, &idle,
					 PTO_OWNER_DESTROYING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		pto_say_busy(rt, "pto_runtime_destroy", idle);
		pto_log("pto_runtime_destroy: not destroyed\n");
		pto_log_leave(prev);
		return;
	}
	if (rt->be.ops)
		pto_sched_stop(rt);
	pto_statspage_destroy(rt->page);
	pto_trace_close(rt->trace);
	pto_check_close(rt);
	if (rt->be.ops)
		rt->be.ops->close(&rt->be);
	pto_sched_fini(rt);
	pto_orch_fini(rt);
	pto_arena_destroy(rt->arena);
	pthread_mutex_destroy(&rt->arena_lock);
	pto_log_leave(prev);
	pto_log_tag_fini(&rt->log_tag);
	free(rt);
}

int pto_trace_flush(struct pto_runtime *rt)
{
	if (!rt)
		return -EINVAL;
	return pto_check_process(rt, "pto_trace_flush") ?:
	       pto_trace_flush_file(rt->trace);
}

/*
 * Async-signal-safe: loads, a compare-and-swap and the backend's wake-up
 * (a futex or an eventfd write).  The request and the run's end meet in
 * one word (run_state): whichever swaps first decides, so a request that
 * returns 0 is one the run ends with -ECANCELED for, even when its tasks
 * had all finished, and one that comes as the run ends, or is held up
 * across the next run's start, finds it over and stops nothing.
 */
int pto_run_cancel(struct pto_runtime *rt)
{
	uint32_t seen, now;
	uintptr_t owner;

	/* nothing is said from a signal handler */
	if (!rt || pto_forked(rt))
		return !rt ? -EINVAL : -EPERM;
	owner = __atomic_load_n(&rt->orch.owner, __ATOMIC_ACQUIRE);
	if (!owner || owner == PTO_OWNER_DESTROYING)
		return -ENOENT;
	seen = __atomic_load_n(&rt->run_state, __ATOMIC_ACQUIRE);
	now = seen;
	do {
		if ((now & PTO_RUN_OVER) || now >> 2 != seen >> 2)
			return -ENOENT;
		if (now & PTO_RUN_CANCELLED)
			return -EALREADY;
	} while (!__atomic_compare_exchange_n(&rt->run_state, &now,
					      now | PTO_RUN_CANCELLED, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	/* a scheduler asleep looks at its work once woken */
	rt->be.ops->notify(&rt->be);
	/* and an orchestrator waiting for ring space at its request */
	futex_wake(&rt->win->sched.progress, 1);
	return 0;
}

/* Say that the arena has no free block of size bytes. */
static void no_block(const struct pto_runtime *rt, size_t size)
{
	/* the arena as made: arena_size rounded up to whole pages */
	uint64_t made = rt->be.heap_size - rt->be.geo.arena_offset;

	pto_log("pto_malloc: no free block of %zu bytes in the %llu byte arena "
		"(arena_size, PTO_ARENA_SIZE%s)\n", size,
		(unsigned long long)made, made > rt->cfg.arena_size ?
		", rounded up to whole pages" : made < rt->cfg.arena_size ?
		", cut to what the device allows: pto.ko's max_heap_size and "
		"memory limits, less the heap rings, see pto(4); smaller heap "
		"rings, PTO_HEAP_SIZE, leave it more" : "");
}

void *pto_malloc(struct pto_runtime *rt, size_t size)
{
	const struct pto_log_tag *prev;
	int64_t off;

	if (!rt) {
		pto_log("pto_malloc: the runtime is NULL\n");
		return NULL;
	}
	prev = pto_log_enter(&rt->log_tag);
	if (!size) {
		pto_log("pto_malloc: a size of 0 bytes (ask for 1 or "
			"more)\n");
		off = -EINVAL;
	} else if (pto_check_process(rt, "pto_malloc")) {
		off = -EPERM;	/* the parent's arena: not the child's to share */
	} else {
		pthread_mutex_lock(&rt->arena_lock);
		off = pto_arena_alloc(rt->arena, size);
		pthread_mutex_unlock(&rt->arena_lock);
		if (off < 0)
			no_block(rt, size);
	}
	pto_log_leave(prev);
	return off < 0 ? NULL : rt->be.heap + off;
}

void pto_free(struct pto_runtime *rt, void *ptr)
{
	uint8_t *p = ptr;
	int ret = -EINVAL;

	if (!rt || !ptr)
		return;
	if (pto_forked(rt)) {
		const struct pto_log_tag *prev = pto_log_enter(&rt->log_tag);

		pto_check_process(rt, "pto_free");
		pto_log_leave(prev);
		return;
	}
	pthread_mutex_lock(&rt->arena_lock);
	if (p >= rt->be.heap && p < rt->be.heap + rt->be.heap_size)
		ret = pto_arena_free(rt->arena, (uint64_t)(p - rt->be.heap));
	pthread_mutex_unlock(&rt->arena_lock);
	if (ret) {
		const struct pto_log_tag *prev = pto_log_enter(&rt->log_tag);

		pto_log("pto_free(%p): %s\n", ptr, ret == -EALREADY ?
			"not allocated now: freed already, or never given "
			"by pto_malloc()" : ret == -EFAULT ?
			"inside a pto_malloc() block, not at its start: pass "
			"the pointer pto_malloc() returned" :
			"not a pto_malloc pointer");
		pto_log_leave(prev);
	}
}

/*
 * What pto_run() returns.  The run's own error comes first: an
 * orchestration usually fails because a submission did, and passes on
 * -ECANCELED, -1 or whatever it likes, while the cause is a failed task
 * (task_err) or a ring that could not make room (orch_err).  Then the
 * function's negative value, then a scope left open (end).
 */
/*
 * The run's status: the first failure, else what the orchestration did
 * wrong.  Scopes left open are its error only when nothing failed: an
 * orchestration that returns a submission's error from inside a scope
 * (the usual "if (id < 0) return id;") leaves them open by design.
 */
static int run_status(int ret, int task_err, int orch_err,
		      uint32_t left_open)
{
	if (task_err)
		return task_err;
	if (orch_err)
		return orch_err;
	if (ret < 0)
		return ret;
	if (ret > 0) {
		pto_log("pto_run: the orchestration function returned %d; "
			"return 0 or a negative errno\n", ret);
		return -EINVAL;
	}
	if (left_open) {
		pto_log("pto_run: the orchestration returned with %u scope(s) "
			"still open: end every scope it begins\n", left_open);
		return -EINVAL;
	}
	return 0;
}

static int run(struct pto_runtime *rt, pto_orch_fn fn, void *arg);
static int run_end(struct pto_runtime *rt, uint64_t t0, int ret);

static void log_leave(const struct pto_log_tag **prev)
{
	pto_log_leave(*prev);
}

#define LEAVE_LOG_AT_EXIT __attribute__((cleanup(log_leave)))

int pto_run(struct pto_runtime *rt, pto_orch_fn fn, void *arg)
{
	if (!rt || !fn) {
		pto_log("pto_run: %s is NULL\n", rt ? "the function" :
			"the runtime");
		return -EINVAL;
	}
	{
		/* the orchestration's calls speak for rt too, until it ends */
		const struct pto_log_tag *prev LEAVE_LOG_AT_EXIT =
			pto_log_enter(&rt->log_tag);

		return pto_check_process(rt, "pto_run") ?: run(rt, fn, arg);
	}
}

/*
 * A C++ orchestration threw: the exception passes through pto_run() to
 * the caller, and on its way the run ends as if the function had returned
 * an error (its tasks finish, the scopes it left open close), so that the
 * runtime takes its next run.  libpto is built with -fexceptions so that
 * this cleanup runs while the stack unwinds.
 */
struct run_frame {
	struct pto_runtime *rt;
	uint64_t t0;
	bool returned;
};

static void run_unwound(struct run_frame *f)
{
	if (f->returned || pto_forked(f->rt))
		return;
	pto_log("pto_run: the orchestration function exited by an "
		"exception; the run ends once the tasks it submitted have "
		"run\n");
	run_end(f->rt, f->t0, -ECANCELED);
}

static int run(struct pto_runtime *rt, pto_orch_fn fn, void *arg)
{
	uintptr_t idle = 0;
	uint64_t t0;
	int ret;

	/*
	 * Taking the runtime makes this thread its orchestrator; a second
	 * pto_run() (another thread's, or a nested one) finds it taken.
	 */
	if (!__atomic_compare_exchange_n(&rt->orch.owner, &idle, pto_self(),
					 false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return pto_say_busy(rt, "pto_run", idle);
	/* its submissions would all be refused (another runtime's kernel) */
	if (pto_kernel_current) {
		__atomic_store_n(&rt->orch.owner, 0, __ATOMIC_RELEASE);
		return pto_say_in_kernel(rt, "pto_run");
	}
	t0 = pto_now_ns();
	WRITE_ONCE(rt->run_t0, t0);
	/* the next number, nothing cancelled: a request may come from now */
	__atomic_store_n(&rt->run_state,
			 ((__atomic_load_n(&rt->run_state, __ATOMIC_RELAXED) >>
			   2) + 1) << 2, __ATOMIC_RELEASE);
	/* before the scheduler starts: it must not see the last run's end */
	WRITE_ONCE(rt->win->notify.orch_done, 0);
	/* ptotop shows the run from its start (the page has one writer) */
	WRITE_ONCE(rt->orch.in_run, true);
	pto_stats_publish_running(rt);
	ret = pto_sched_start(rt);
	if (ret) {
		__atomic_fetch_or(&rt->run_state, PTO_RUN_OVER,
				  __ATOMIC_RELAXED);
		WRITE_ONCE(rt->run_t0, 0);
		WRITE_ONCE(rt->orch.in_run, false);
		__atomic_store_n(&rt->orch.owner, 0, __ATOMIC_RELEASE);
		return ret;
	}
	STAT_ADD(rt->st.runs, 1);
	pto_orch_run_begin(rt);
	{
		struct run_frame frame __attribute__((cleanup(run_unwound))) = {
			.rt = rt, .t0 = t0,
		};

		ret = fn(rt, arg);
		frame.returned = true;
	}
	/* the orchestration forked, and this is the child: no one to wait for */
	if (pto_forked(rt))
		return pto_check_process(rt, "pto_run");
	return run_end(rt, t0, ret);
}

/* The orchestration function is over: the run ends once its tasks are. */
static int run_end(struct pto_runtime *rt, uint64_t t0, int ret)
{
	int err, orch_err;
	uint32_t left_open;

	left_open = pto_orch_run_end(rt);
	pto_sched_wait_done(rt);
	pto_orch_run_cleanup(rt);
	/*
	 * The run's time moves from run_t0 to run_ns as one change: a
	 * snapshot meanwhile counted it twice, and the next one went back
	 * (see run_ns_now()).  The end is read inside: it is then later
	 * than the clock of any snapshot taken before.
	 */
	store_release(&rt->run_seq, rt->run_seq + 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	STAT_ADD(rt->st.run_ns, pto_now_ns() - t0);
	WRITE_ONCE(rt->run_t0, 0);
	store_release(&rt->run_seq, rt->run_seq + 1);
	pto_stats_publish(rt);

	err = READ_ONCE(rt->win->sched_flags.error);
	/* a request accepted ends the run cancelled, though all had run */
	if ((__atomic_fetch_or(&rt->run_state, PTO_RUN_OVER, __ATOMIC_ACQ_REL) &
	     PTO_RUN_CANCELLED) && !err)
		err = -ECANCELED;
	orch_err = rt->orch.error;
	/* the next run may start: nothing below touches the run's state */
	__atomic_store_n(&rt->orch.owner, 0, __ATOMIC_RELEASE);
	return run_status(ret, err, orch_err, left_open);
}
