// SPDX-License-Identifier: MIT
/*
 * The simulator backend: an a2a3 device in the host process.
 *
 * It lays out the same regions as pto.ko (shared window, heap, per-core
 * registers, completion ring) in ordinary memory and runs one thread per
 * core.  A core follows the register protocol of include/uapi/pto/pto_uapi.h: it takes
 * task ids from its doorbell queue, runs the bound C kernel or built-in op
 * on the descriptor's arguments, and posts a completion.  Device addresses
 * are host addresses here, so C kernels get plain pointers.
 *
 * Idle cores and an idle scheduler spin briefly, then sleep on a futex, so
 * the sim stays cheap on a 2-CPU machine and next to other busy processes.
 * Waking a sleeping thread costs microseconds, more than many tasks take:
 * so when the host kicks a sleeping core whose queued tasks are known to be
 * short, the kicking thread runs them itself, on behalf of that core (the
 * core thread and the kicker claim queue entries with a compare-and-swap).
 * Long or not yet measured kernels always wake the core's own thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"
#include "check.h"
#include "config.h"
#include "coreload.h"
#include "kernel.h"
#include "log.h"
#include "place.h"
#include "pto_layout.h"
#include "pto_ops.h"
#include "rings.h"
#include "sync.h"

/*
 * Pause instructions an idle core thread spins before it sleeps: a few
 * microseconds, less than a futex round trip, so a core fed back to back
 * never sleeps, and an idle one soon gives its CPU back.
 */
#define CORE_SPINS 256
/*
 * PTO_SCHED_WORKERS: the last core thread awake is the one new work wakes,
 * and its spinning adapts between these bounds (pause instructions) as the
 * scheduler thread's does: a sleep cut short by work doubles it, a long
 * sleep halves it.  Its upper bound keeps a spell to a few hundred
 * microseconds, in which a streaming orchestrator publishes again.
 */
#define WORKER_SPINS_MAX 8192
#define SHORT_SLEEP_NS 100000ull
#define PAGE 4096u
/* Tasks shorter than this run on the kicking thread when the core sleeps. */
#define INLINE_MAX_NS 2000
/*
 * Others run up to INLINE_CREDIT_NS of a sleeping core's tasks that take
 * CREDIT_TASK_NS or more each before they wake its thread instead (see
 * may_run_for()); shorter tasks, NOP ones say, never pay for a wake-up.
 */
#define INLINE_CREDIT_NS 20000
#define CREDIT_TASK_NS 500
/* One run in this many updates a kernel's average duration. */
#define AVG_SAMPLE 16
/*
 * A kernel that runs long (LONG_RUN_NS or more) twice within LONG_WINDOW
 * sampled runs (about AVG_SAMPLE times as many runs) is not run inline for
 * LONG_HOLD << (score - 1) sampled runs, where its score counts such
 * repeats, less one per SCORE_DECAY sampled runs, up to LONG_SCORE_MAX.
 * A kernel whose calls vary is held off for good; a run that preemption
 * stretched, once in a while (a few in 200000 NOP runs on two busy CPUs),
 * does not hold one off: with its core thread asleep, each of its next
 * runs would then cost a wake-up.  Nor does a run a timer interrupt
 * stretched a little (a few microseconds on a virtual machine), which
 * happens to one run in about a thousand.
 */
#define LONG_RUN_NS (8 * INLINE_MAX_NS)
#define LONG_WINDOW 64
#define LONG_HOLD 16
#define LONG_SCORE_MAX 10
#define SCORE_DECAY 128

struct sim_kernel {
	pto_kernel_fn fn;
	uint32_t op;
	bool bound;
	uint64_t avg_ns;	/* running average duration, 0: never run */
	/*
	 * A kernel whose calls vary (mostly short, now and then
	 * milliseconds) has an average that says short; run inline, its long
	 * calls would hold the thread that schedules, and with it every
	 * other core.  So, in sampled runs (see LONG_RUN_NS):
	 */
	uint32_t long_window;	/* left in which a long run holds it off */
	uint32_t long_hold;	/* left before it may run inline again */
	uint32_t long_score;	/* its repeated long runs, decaying */
	uint32_t samples;	/* all of them */
	/* its last sampled run, or its last of PTO_PLACE_LONG_NS or more */
	uint64_t last_ns;
};

/*
 * An idle thread's look at the other cores (run_stalled()): the core with
 * queued tasks it saw when it last looked (+ 1, 0: none), how far that
 * core's thread had taken its queue then, and since when.
 */
struct stall_watch {
	uint32_t self;		/* the thread's own core, or UINT32_MAX */
	uint32_t core;
	uint32_t taken;
	uint64_t since;		/* pto_now_ns() when it first saw that */
	uint32_t look_next;	/* the core to look at next */
};

/* A thread's chain of task run times: see run_timed(). */
struct run_clock {
	uint64_t ns;
};

struct sim_core {
	struct sim *sim;
	uint32_t index;
	pthread_t thread;
	bool started;
	uint32_t spin_budget;	/* PTO_SCHED_WORKERS, when last awake */
	/* futex its thread sleeps on, scheduling itself (wake_core()) */
	uint32_t wake;
	/*
	 * 1 while a thread runs a task as this core: its own, or one that
	 * runs tasks for it while it sleeps (run_on_host(), help_core()).
	 * A core runs one task at a time whichever thread runs it, which
	 * per-core scratch (pto_core_id()) relies on: a sleeping core
	 * thread can wake, and claim, while the kicker runs its tasks.  A
	 * line of its own: its thread takes it for every task.
	 */
	PTO_OWN_LINES uint32_t running;
	/* when its last task ended, by whichever thread ran it */
	uint64_t last_end;
	/*
	 * Expected time of its tasks of CREDIT_TASK_NS or more that others
	 * ran for it since its thread last woke (may_run_for()).
	 */
	uint64_t inline_ns;
	struct stall_watch watch;	/* idle: the others (run_stalled()) */
	struct pto_place place;		/* its CPU (place.h) */
};

struct sim {
	struct pto_backend *be;
	/* PTO_SCHED_WORKERS: the core threads schedule through these */
	const struct pto_backend_sched *hooks;
	void *hook_ctx;
	uint32_t awake;		/* core threads not asleep */
	/* PTO_SCHED_WORKERS: the core the last awake thread went to sleep as */
	uint32_t last_sleeper;
	uint32_t in_workers;	/* core threads in worker_loop() */
	struct sim_kernel kernels[PTO_MAX_KERNELS];
	struct sim_core *cores;
	uint32_t window_mask[PTO_MAX_RINGS];	/* per ring: task_window - 1 */
	uint32_t cring_mask;
	uint32_t stop;
	uint32_t irq;		/* futex the scheduler sleeps on */
	uint32_t sched_waiting;
	/* PTO_SCHED_SHARDS: per type, bit i: core first + i is asleep */
	uint64_t asleep[PTO_NUM_WORKER_TYPES][PTO_CORELOAD_WORDS];
	/* ... and how many of its core threads are awake looking for work */
	PTO_OWN_LINES uint32_t looking[PTO_NUM_WORKER_TYPES];
	/* the orchestrator's, while it waits for tasks (sim_help()) */
	struct stall_watch host_watch;
	struct pto_place_set place;	/* CPUs core threads are placed on */
};

static int sim_open(struct pto_backend *be, const struct pto_config *cfg)
{
	struct sim *sim = calloc(1, sizeof(*sim));
	uint32_t t, n = 0;

	if (!sim)
		return -ENOMEM;
	sim->be = be;
	be->priv = sim;
	sim->host_watch.self = UINT32_MAX;	/* no core of its own */
	be->c_kernels = true;
	be->max_heap = UINT64_MAX;	/* address space, touched lazily */
	/* its ops are pto_op_exec(), which takes tensor views */
	be->features = PTO_FEATURE_VIEWS;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		be->first_core[t] = n;
		be->cores[t] = cfg->cores[t];
		n += cfg->cores[t];
	}
	be->num_cores = n;
	/* PTO_CPUS pins for good; "any" leaves placement to the kernel */
	if (!be->ncpus && !(cfg->cpus && !strcmp(cfg->cpus, "any")))
		pto_place_plan(&sim->place, n);
	return 0;
}

static void *map_zeroed(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

/*
 * The regions of a context, laid out by pto_layout() exactly as pto.ko
 * lays them out.  Pages are touched as the rings first fill: a ring a
 * program never uses costs no memory, and a used one stops growing once
 * it has come round.
 */
static int map_regions(struct sim *sim)
{
	struct pto_backend *be = sim->be;
	struct pto_setup *s = &be->geo;
	struct pto_window_ident *id;
	uint8_t **region = be->region;

	region[PTO_BE_WINDOW] = map_zeroed(s->window.size);
	region[PTO_BE_HEAP] = map_zeroed(s->heap.size);
	region[PTO_BE_CRING] = map_zeroed(s->cring.size);
	region[PTO_BE_REGS] = aligned_alloc(PAGE, s->regs.size);
	if (!region[PTO_BE_HEAP]) {
		/* reserved, not committed: only an address space limit bites */
		pto_log("sim: cannot reserve %llu MiB of address space for the "
			"device heap (heap rings %llu MiB, PTO_HEAP_SIZE; "
			"pto_malloc() arena %llu MiB, PTO_ARENA_SIZE): %s; "
			"smaller sizes or a larger ulimit -v let it\n",
			(unsigned long long)(s->heap.size >> 20),
			(unsigned long long)(s->arena_offset >> 20),
			(unsigned long long)((s->heap.size - s->arena_offset) >>
					     20), strerror(errno));
		return -ENOMEM;
	}
	if (!region[PTO_BE_WINDOW] || !region[PTO_BE_CRING] ||
	    !region[PTO_BE_REGS]) {
		pto_log("sim: cannot map the shared window (%llu KiB): %s\n",
			(unsigned long long)(s->window.size >> 10),
			strerror(errno));
		return -ENOMEM;
	}
	memset(region[PTO_BE_REGS], 0, s->regs.size);
	id = (struct pto_window_ident *)(region[PTO_BE_WINDOW] +
					 s->header_offset);
	id->magic = PTO_WINDOW_MAGIC;
	id->abi_version = PTO_ABI_VERSION;
	id->features = s->features;
	id->nrings = s->nrings;
	((struct pto_cring_header *)region[PTO_BE_CRING])->size = s->cring_size;
	return 0;
}

static void *core_main(void *arg);

static int start_cores(struct sim *sim)
{
	struct pto_backend *be = sim->be;
	uint32_t i;
	int ret;

	sim->cores = aligned_alloc(_Alignof(struct sim_core),
				   be->num_cores * sizeof(*sim->cores));
	if (!sim->cores)
		return -ENOMEM;
	memset(sim->cores, 0, be->num_cores * sizeof(*sim->cores));
	for (i = 0; i < be->num_cores; i++) {
		char name[24];	/* "pto-core255" at most */

		sim->cores[i].sim = sim;
		sim->cores[i].index = i;
		sim->cores[i].watch.self = i;
		sim->cores[i].spin_budget = CORE_SPINS;
		snprintf(name, sizeof(name), "pto-core%u", i);
		ret = pto_backend_thread_create(be, i, name,
						&sim->cores[i].thread,
						core_main, &sim->cores[i]);
		if (ret)
			return ret;
		sim->cores[i].started = true;
	}
	return 0;
}

static int sim_setup(struct pto_backend *be, const struct pto_setup *req)
{
	struct sim *sim = be->priv;
	uint32_t r;
	int ret;

	be->geo = *req;
	/* enabled: what the library asked for and the sim offers, and views */
	be->geo.features = (req->features | PTO_FEATURE_VIEWS) & be->features;
	if (pto_layout(&be->geo, be->num_cores))
		return -EINVAL;
	for (r = 0; r < req->nrings; r++)
		sim->window_mask[r] = req->ring[r].task_window - 1;
	sim->cring_mask = req->cring_size - 1;
	ret = map_regions(sim);
	if (ret)
		return ret;
	be->heap_dev_base = (uintptr_t)be->region[PTO_BE_HEAP];
	be->host_addresses = true;
	return start_cores(sim);
}

/*
 * Wake core thread c where it sleeps scheduling itself (worker_sleep(),
 * shard_sleep()): by a counter it read before it last looked for work, so
 * a wake-up that comes before it waits is not lost.
 */
static void wake_core(struct sim *sim, uint32_t c)
{
	__atomic_add_fetch(&sim->cores[c].wake, 1, __ATOMIC_SEQ_CST);
	futex_wake(&sim->cores[c].wake, 1);
}

static void sim_close(struct pto_backend *be)
{
	struct sim *sim = be->priv;
	uint32_t i;

	if (!sim)
		return;
	store_release(&sim->stop, 1);
	for (i = 0; sim->cores && i < be->num_cores; i++) {
		if (!sim->cores[i].started)
			continue;
		__atomic_fetch_add(&pto_regs(be, i)->doorbell, 0,
				   __ATOMIC_SEQ_CST);
		futex_wake(&pto_regs(be, i)->doorbell, 1);
		wake_core(sim, i);
		pthread_join(sim->cores[i].thread, NULL);
	}
	free(sim->cores);
	free(be->region[PTO_BE_REGS]);
	unmap(be->region[PTO_BE_WINDOW], be->geo.window.size);
	unmap(be->region[PTO_BE_HEAP], be->geo.heap.size);
	unmap(be->region[PTO_BE_CRING], be->geo.cring.size);
	free(sim);
	be->priv = NULL;
}

static int sim_bind_kernel(struct pto_backend *be, uint32_t kernel_id,
			   uint32_t worker_type, uint32_t op, pto_kernel_fn fn)
{
	struct sim *sim = be->priv;

	if (kernel_id >= PTO_MAX_KERNELS || (!fn && op >= PTO_OP_COUNT))
		return -EINVAL;
	sim->kernels[kernel_id] = (struct sim_kernel){ .fn = fn, .op = op,
						       .bound = true };
	if (!fn && op == PTO_OP_NOP)
		sim->kernels[kernel_id].avg_ns = 1;
	return 0;
}

static bool cring_ready(struct pto_backend *be, uint64_t head)
{
	struct sim *sim = be->priv;
	struct pto_completion *c = &be->cring_entries[head & sim->cring_mask];

	return load_acquire(&c->seq) == (uint32_t)(head + 1);
}

static int sim_wait(struct pto_backend *be, uint64_t cring_head,
		    uint32_t sched_wake_seen, uint32_t timeout_ms)
{
	struct sim *sim = be->priv;
	uint32_t irq = load_acquire(&sim->irq);

	WRITE_ONCE(sim->sched_waiting, 1);
	/* waiting before the completion loads; pairs with cring_post's */
	smp_mb();
	if (!cring_ready(be, cring_head) &&
	    load_acquire(&be->win->notify.sched_wake) == sched_wake_seen)
		futex_wait(&sim->irq, irq, timeout_ms);
	WRITE_ONCE(sim->sched_waiting, 0);
	return 0;
}

/*
 * The "interrupt" to the host: bump irq and wake the scheduler if it is
 * blocked on it.  The increment is a full barrier, and sim_wait() sets
 * sched_waiting before comparing irq in the futex, so one of the two sides
 * always sees the other and no wake-up is lost.
 */
static bool raise_irq(struct sim *sim)
{
	__atomic_fetch_add(&sim->irq, 1, __ATOMIC_SEQ_CST);
	/* only the first raiser of a sleep pays for the system call */
	if (!__atomic_exchange_n(&sim->sched_waiting, 0, __ATOMIC_SEQ_CST))
		return false;
	futex_wake(&sim->irq, 1);
	return true;
}

/*
 * Shards: wake up to n core threads of type asleep, each claimed by
 * clearing its bit, so that two wakers never spend two system calls on
 * one sleeper.  Returns how many were woken.
 */
static uint32_t wake_sleepers(struct sim *sim, uint32_t type, uint32_t n)
{
	uint32_t w, woken = 0, first = sim->be->first_core[type];
	uint64_t *bits = sim->asleep[type];

	for (w = 0; w < PTO_CORELOAD_WORDS && woken < n; w++) {
		uint64_t v = READ_ONCE(bits[w]);

		while (v && woken < n) {
			uint32_t b = (uint32_t)__builtin_ctzll(v);
			uint64_t bit = 1ull << b;

			v &= ~bit;
			if (__atomic_fetch_and(&bits[w], ~bit,
					       __ATOMIC_SEQ_CST) & bit) {
				wake_core(sim, first + w * 64 + b);
				woken++;
			}
		}
	}
	return woken;
}

/*
 * n tasks of type were pushed: wake sleepers for those that the core
 * threads of the type awake and looking for work will not take.  One that
 * stops looking to sleep does so before it sets its asleep bit and looks
 * at the queues once more, so counting it as looking never loses a task.
 */
static void wake_for(struct sim *sim, uint32_t type, uint32_t n)
{
	uint32_t looking;

	smp_mb();	/* the pushes before the loads; see shard_sleep() */
	looking = READ_ONCE(sim->looking[type]);
	if (n > looking)
		wake_sleepers(sim, type, n - looking);
}

/*
 * PTO_SCHED_SHARDS: the wake-ups a core thread took over, per type the
 * tasks readied, settled at the top of its loop (settle_wakeups()).
 */
struct wake_debt {
	uint32_t types;
	uint32_t n[PTO_NUM_WORKER_TYPES];
	bool ran_short;		/* the thread's own last task was short */
};

/* Set while the calling thread is a core thread in shard_loop(). */
static __thread struct wake_debt *thread_wake_debt
	__attribute__((tls_model("initial-exec")));

/*
 * PTO_SCHED_SHARDS: the wake-ups the orchestrator took over while it
 * lends a hand (pto_sched_lend_hand() sets pto_backend_runs_tasks), which
 * sim_help() settles right after, as a core thread settles its own.
 */
static __thread struct wake_debt host_debt
	__attribute__((tls_model("initial-exec")));

static bool shards_hooked(struct sim *sim)
{
	const struct pto_backend_sched *h = READ_ONCE(sim->hooks);

	return h && h->take;
}

/*
 * Tasks were pushed.  A core thread scheduling with shards wakes nobody
 * yet: back at the top of its loop it runs the short ones of a sleeping
 * type itself and wakes sleepers only for the rest (settle_wakeups()).
 * So does the orchestrator lending a hand (host_debt).  Everyone else
 * wakes at once.
 */
static void sim_ready(struct pto_backend *be, uint32_t type, uint32_t n)
{
	struct wake_debt *d = thread_wake_debt;

	if (!d && pto_backend_runs_tasks && shards_hooked(be->priv))
		d = &host_debt;
	if (d) {
		d->types |= 1u << type;
		d->n[type] += n;
		return;
	}
	wake_for(be->priv, type, n);
}

static uint32_t core_type(struct sim *sim, uint32_t core)
{
	uint32_t t = 0;

	while (t + 1 < PTO_NUM_WORKER_TYPES &&
	       core >= sim->be->first_core[t + 1])
		t++;
	return t;
}

/* Wake one sleeping core thread, to schedule what it finds. */
static void wake_a_worker(struct sim *sim, const struct pto_backend_sched *h)
{
	struct pto_backend *be = sim->be;
	uint32_t c, t;

	smp_mb();	/* the caller's stores before the sleepers' loads */
	if (h->take) {
		for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
			if (wake_sleepers(sim, t, 1))
				return;
		return;
	}
	/*
	 * The thread that told the scheduler side it sleeps: by the counter
	 * it sleeps on, which it read before it looked for work the last
	 * time, so a wake-up that comes before it waits is not lost (one
	 * that came while it was still looking cost it a whole nap).
	 */
	c = READ_ONCE(sim->last_sleeper);
	if (c < be->num_cores)
		wake_core(sim, c);
}

static void sim_notify(struct pto_backend *be)
{
	struct sim *sim = be->priv;

	const struct pto_backend_sched *h = load_acquire(&sim->hooks);

	if (h)
		wake_a_worker(sim, h);
	else
		raise_irq(sim);
}

static void wake_all_cores(struct sim *sim)
{
	uint32_t c;

	smp_mb();	/* the caller's stores before the core_waiting loads */
	for (c = 0; c < sim->be->num_cores; c++) {
		futex_wake(&pto_regs(sim->be, c)->doorbell, 1);
		wake_core(sim, c);
	}
}

/*
 * Install the hooks for a run, or (NULL) take them away after it.  Taking
 * them away returns only when no core thread is in worker_loop() any more,
 * so the runtime may then reset its scheduling state for the next run
 * without a core thread reading it meanwhile.  A core thread about to
 * sleep when woken may miss the wake-up, so it is repeated until all
 * have left.
 */
static void sim_set_sched(struct pto_backend *be,
			  const struct pto_backend_sched *hooks, void *ctx)
{
	struct sim *sim = be->priv;

	if (hooks) {
		sim->hook_ctx = ctx;
		store_release(&sim->hooks, hooks);
		/* core threads asleep in core_idle() switch loops */
		wake_all_cores(sim);
		return;
	}
	__atomic_store_n(&sim->hooks, NULL, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&sim->in_workers, __ATOMIC_SEQ_CST)) {
		wake_all_cores(sim);
		futex_wait(&sim->in_workers,
			   __atomic_load_n(&sim->in_workers, __ATOMIC_SEQ_CST),
			   1);
	}
}

/* Busy the core for ns (PTO_OP_SPIN_NS), like a kernel that computes. */
static void spin_ns(uint64_t ns)
{
	uint64_t end = pto_now_ns() + ns;

	while (pto_now_ns() < end)
		cpu_relax();
}

/*
 * A kernel left by unwinding: a C++ exception, or pthread_exit().  On a
 * core thread an exception would end the process anyway (nothing above
 * catches it) and pthread_exit() would leave its core dead; on the
 * orchestrator's thread, lending a hand, either would unwind through the
 * scheduler into the caller with the scheduler's state half changed.  So
 * the process ends here, saying which task's kernel it was.
 */
static void kernel_unwound(const struct pto_task_desc **running)
{
	if (!*running)
		return;
	pto_log("kernel %u (task %#llx) did not return (a C++ exception or "
		"pthread_exit()): kernels must return\n",
		(*running)->kernel_id,
		(unsigned long long)(*running)->task_id);
	abort();
}

static int run_task(struct sim *sim, const struct pto_task_desc *d,
		    uint32_t core)
{
	static const struct pto_op_mem host_mem = { .base = 0, .size = ~0ull };
	const struct sim_kernel *k;
	bool in_heap = d->flags & PTO_TASK_F_ARGS_IN_HEAP;
	struct pto_kernel_ctx kc;

	if (d->kernel_id >= PTO_MAX_KERNELS ||
	    (!in_heap && d->nargs > PTO_MAX_ARGS))
		return -EINVAL;
	k = &sim->kernels[d->kernel_id];
	if (!k->bound)
		return -ENOENT;
	if (in_heap && !k->fn)
		return -EINVAL;
	if (k->fn) {
		const struct pto_task_desc *running
			__attribute__((cleanup(kernel_unwound))) = d;
		int ret;

		kc.core = core;
		kc.nargs = d->nargs;
		kc.desc = d;
		kc.args = pto_desc_args(d);
		if (sim->be->check) {
			ret = pto_check_run(sim->be->check, k->fn, d, &kc);
		} else {
			pto_kernel_enter(&kc);
			k->fn(pto_desc_args(d), d->nargs);
			pto_kernel_leave();
			ret = kc.status;
		}
		running = NULL;
		return ret;
	}
	if (k->op == PTO_OP_SPIN_NS) {
		if (d->nargs < 1)
			return -EINVAL;
		spin_ns(d->args[0]);
		return 0;
	}
	return pto_op_exec(k->op, d->args, d->nargs,
			   d->flags & PTO_TASK_F_VIEWS ? d->view_mask : 0,
			   &host_mem);
}

/*
 * Reserve n consecutive completion-ring positions.  The host keeps no more
 * tasks outstanding than the ring holds, so this never waits; the acquire
 * orders our writes after the host's reads of the entries' previous lap.
 */
static uint64_t cring_reserve(struct sim *sim, uint32_t n)
{
	struct pto_backend *be = sim->be;
	uint64_t pos = __atomic_fetch_add(&be->cring->tail, n, __ATOMIC_RELAXED);

	while (pos + n - 1 - load_acquire(&be->cring->head) > sim->cring_mask)
		cpu_relax();
	return pos;
}

/* Fill the completion at ring position pos and make it visible. */
static void cring_post(struct sim *sim, uint64_t pos, uint32_t core,
		       uint64_t id, int status, uint64_t start, uint64_t end)
{
	struct pto_completion *c =
		&sim->be->cring_entries[pos & sim->cring_mask];

	c->task_id = id;
	c->core = core;
	c->status = status;
	c->start_ns = start;
	c->end_ns = end;
	store_release(&c->seq, (uint32_t)(pos + 1));
}

/*
 * Completions posted reach a sleeping scheduler thread (PTO_SCHED_THREAD;
 * with the hooks, the thread that posted them schedules next).  True when
 * it woke that thread (a system call).
 */
static bool tell_scheduler(struct sim *sim)
{
	if (load_acquire(&sim->hooks))
		return false;
	smp_mb();	/* completions visible before the sched_waiting load */
	return READ_ONCE(sim->sched_waiting) && raise_irq(sim);
}

/*
 * A core thread's completion: post it, then interrupt a sleeping host.
 * With the core threads scheduling, the poster schedules next itself.
 * True when it woke the scheduler thread.
 */
static bool post_completion(struct sim *sim, uint32_t core, uint64_t id,
			    int status, uint64_t start, uint64_t end)
{
	cring_post(sim, cring_reserve(sim, 1), core, id, status, start, end);
	return tell_scheduler(sim);
}

/*
 * The descriptor of a task handle; the caller checks its task_id, which a
 * handle naming no ring never matches.
 */
static const struct pto_task_desc *task_desc(struct sim *sim, uint64_t id)
{
	static const struct pto_task_desc no_task = { .task_id = ~0ull };
	uint32_t r = PTO_TASK_RING(id);

	if (r >= sim->be->geo.nrings)
		return &no_task;
	return &sim->be->ring[r].desc[PTO_TASK_SEQ(id) & sim->window_mask[r]];
}

/*
 * A run of k took longer than a task run inline may: the second within
 * LONG_WINDOW holds the kernel off inline runs, the longer the more often
 * that happened lately.  Every long run counts, not only sampled ones: it
 * is rare, and costs far more than the stores.
 */
static void note_long_run(struct sim_kernel *k)
{
	uint32_t score = __atomic_load_n(&k->long_score, __ATOMIC_RELAXED);
	bool again = __atomic_load_n(&k->long_window, __ATOMIC_RELAXED);

	__atomic_store_n(&k->long_window, LONG_WINDOW, __ATOMIC_RELAXED);
	if (!again)
		return;
	if (score < LONG_SCORE_MAX)
		__atomic_store_n(&k->long_score, ++score, __ATOMIC_RELAXED);
	__atomic_store_n(&k->long_hold, LONG_HOLD << (score - 1),
			 __ATOMIC_RELAXED);
}

/* A sampled run of k: count its window, its hold (if short), its score. */
static void note_sampled_run(struct sim_kernel *k, bool is_short)
{
	uint32_t hold = __atomic_load_n(&k->long_hold, __ATOMIC_RELAXED);
	uint32_t n = __atomic_load_n(&k->samples, __ATOMIC_RELAXED) + 1;
	uint32_t window = __atomic_load_n(&k->long_window, __ATOMIC_RELAXED);
	uint32_t score;

	__atomic_store_n(&k->samples, n, __ATOMIC_RELAXED);
	if (window)
		__atomic_store_n(&k->long_window, window - 1, __ATOMIC_RELAXED);
	if (hold && is_short)
		__atomic_store_n(&k->long_hold, hold - 1, __ATOMIC_RELAXED);
	score = __atomic_load_n(&k->long_score, __ATOMIC_RELAXED);
	if (n % SCORE_DECAY == 0 && score)
		__atomic_store_n(&k->long_score, score - 1, __ATOMIC_RELAXED);
}

/*
 * Keep a running average of each kernel's duration, and a hold after long
 * runs, for the inline-run decision.  Every thread samples one run in
 * AVG_SAMPLE: the table is read by every core and the scheduler, and a
 * store per task would bounce its lines between them.  (Updates race;
 * one lost now and then only skews a guess.)
 */
static void note_duration(struct sim *sim, const struct pto_task_desc *d,
			  uint64_t ns)
{
	static __thread uint32_t runs __attribute__((tls_model("initial-exec")));
	struct sim_kernel *k;
	uint64_t avg;

	if (d->kernel_id >= PTO_MAX_KERNELS)
		return;
	k = &sim->kernels[d->kernel_id];
	avg = __atomic_load_n(&k->avg_ns, __ATOMIC_RELAXED);
	/* (a first run is a cold one) */
	if (ns >= LONG_RUN_NS && avg)
		note_long_run(k);
	if (ns >= PTO_PLACE_LONG_NS)
		__atomic_store_n(&k->last_ns, ns, __ATOMIC_RELAXED);
	if ((runs++ % AVG_SAMPLE) && avg)
		return;
	__atomic_store_n(&k->last_ns, ns, __ATOMIC_RELAXED);
	note_sampled_run(k, ns < INLINE_MAX_NS);
	/*
	 * A run stretched by preemption must not make a short kernel look
	 * long for many runs: one sample moves the average by at most
	 * INLINE_MAX_NS / 4, while a kernel that really is long still ends
	 * up above INLINE_MAX_NS.
	 */
	if (ns > 2 * INLINE_MAX_NS)
		ns = 2 * INLINE_MAX_NS;
	avg = avg ? avg - avg / 8 + ns / 8 : ns + 1;
	__atomic_store_n(&k->avg_ns, avg, __ATOMIC_RELAXED);
}

/* The placement of the core thread running this, NULL: not one. */
static __thread struct pto_place *thread_place
	__attribute__((tls_model("initial-exec")));

/*
 * May the task run longer than a placement window?  Yes when its
 * kernel's last run did, or when it never ran.
 */
static bool may_run_long(struct sim *sim, const struct pto_task_desc *d)
{
	const struct sim_kernel *k;

	if (d->kernel_id >= PTO_MAX_KERNELS)
		return false;
	k = &sim->kernels[d->kernel_id];
	return !__atomic_load_n(&k->avg_ns, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&k->last_ns, __ATOMIC_RELAXED) >=
	       PTO_PLACE_LONG_NS;
}

/*
 * Run one task and time it.  clock->ns is the end time of the task run
 * just before on this thread (0: none), which then doubles as this one's
 * start: back-to-back tasks read the clock once each, not twice.  Only
 * back to back on one core, though: the chain holds if that core's last
 * task is the one this thread ended at clock->ns.  Otherwise another
 * thread ran the core's tasks since (a sleeping core's, on its behalf)
 * or the last one was another core's, and a start taken from the chain
 * drew this task over the others on the core's trace track.  Anything
 * else in between ends the chain too, as it is no task's time: a
 * scheduling pass, waking the scheduler thread after a task
 * (post_completion()), placement's system calls (place.h).  On a busy
 * two-CPU machine each can cost tens of microseconds; charged to the next
 * task, they made a short kernel's runs look long, and its trace slice
 * up to three times its run.
 */
static int run_timed(struct sim *sim, struct pto_core_regs *r, uint32_t core,
		     uint64_t id, struct run_clock *clock, uint64_t *start)
{
	const struct pto_task_desc *d = task_desc(sim, id);
	struct sim_core *c = &sim->cores[core];
	uint64_t end;
	int status;

	WRITE_ONCE(r->status_task, id);
	WRITE_ONCE(r->status, PTO_CORE_ACK);
	/* it cannot look at its CPU during the task: not pinned for a long one */
	if (thread_place && thread_place->pinned && may_run_long(sim, d)) {
		pto_place_release(thread_place, &sim->place);
		clock->ns = 0;
	}
	*start = clock->ns && clock->ns == c->last_end ? clock->ns :
		 pto_task_clock_ns();
	/* the previous thread's clock may be a little ahead of ours */
	if (*start < c->last_end)
		*start = c->last_end;
	status = d->task_id == id ? run_task(sim, d, core) : -EINVAL;
	end = pto_task_clock_ns();
	if (end < *start)	/* the thread re-anchored its clock */
		end = *start;
	clock->ns = end;
	c->last_end = end;
	WRITE_ONCE(r->status, PTO_CORE_FIN);
	if (d->task_id == id)
		note_duration(sim, d, end - *start);
	return status;
}

/* A core thread runs one task it claimed. */
static void execute(struct sim *sim, struct pto_core_regs *r, uint32_t core,
		    uint64_t id, struct run_clock *clock)
{
	uint64_t start;
	int status = run_timed(sim, r, core, id, clock, &start);

	__atomic_fetch_add(&r->busy_ns, clock->ns - start, __ATOMIC_RELAXED);
	if (post_completion(sim, core, id, status, start, clock->ns))
		clock->ns = 0;	/* no task's time: see run_timed() */
}

/* Claim the next queued task of a core; false when the queue is empty. */
static bool claim(struct pto_core_regs *r, uint64_t *id)
{
	uint32_t taken = load_acquire(&r->consumed);

	do {
		if (taken == load_acquire(&r->doorbell))
			return false;
		/*
		 * A slot read here may be rewritten by the host before the
		 * compare-and-swap below, but then the swap fails (the host
		 * reuses a slot only once its task was claimed) and we retry.
		 */
		*id = READ_ONCE(r->queue[taken % PTO_CORE_QUEUE_SLOTS]) - 1;
	} while (!__atomic_compare_exchange_n(&r->consumed, &taken, taken + 1,
					      false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return true;
}

/*
 * Is a task one worth running without a wake-up (known to be short)?
 * short_task_ns(): its expected time plus one, 0 when it is not.
 */
static uint64_t short_task_ns(struct sim *sim, const struct pto_task_desc *d)
{
	const struct sim_kernel *k;
	uint64_t avg;

	if (d->kernel_id >= PTO_MAX_KERNELS)
		return 0;
	k = &sim->kernels[d->kernel_id];
	if (!k->fn && k->op == PTO_OP_SPIN_NS)
		return d->nargs && d->args[0] < INLINE_MAX_NS ?
		       d->args[0] + 1 : 0;
	avg = __atomic_load_n(&k->avg_ns, __ATOMIC_RELAXED);
	return avg < INLINE_MAX_NS &&
	       !__atomic_load_n(&k->long_hold, __ATOMIC_RELAXED) ? avg : 0;
}

static bool task_is_short(struct sim *sim, const struct pto_task_desc *d)
{
	return short_task_ns(sim, d);
}

/*
 * Claim the short tasks at the head of a sleeping core's queue, all with
 * one compare-and-swap; their ids go to ids[], the expected time of those
 * of CREDIT_TASK_NS or more to *credit.  Returns how many.  A slot read
 * here may be rewritten once the core thread (woken meanwhile) takes it,
 * but then the swap fails and we look again.
 */
static uint32_t claim_short(struct sim *sim, struct pto_core_regs *r,
			    uint64_t ids[PTO_CORE_QUEUE_SLOTS], uint64_t *credit)
{
	uint32_t taken = load_acquire(&r->consumed), n;
	uint64_t ns;

	do {
		uint32_t db = load_acquire(&r->doorbell);

		*credit = 0;
		for (n = 0; taken + n != db && n < PTO_CORE_QUEUE_SLOTS; n++) {
			ids[n] = READ_ONCE(r->queue[(taken + n) %
						    PTO_CORE_QUEUE_SLOTS]) - 1;
			ns = short_task_ns(sim, task_desc(sim, ids[n]));
			if (!ns)
				break;
			if (ns > CREDIT_TASK_NS)
				*credit += ns - 1;
		}
		if (!n)
			return 0;
	} while (!__atomic_compare_exchange_n(&r->consumed, &taken, taken + n,
					      false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return n;
}

/*
 * Run tasks as core c, alone (sim_core.running): its own thread around
 * each task, a thread running tasks on its behalf around a batch.
 */
static bool core_try_enter(struct sim_core *c)
{
	return !__atomic_exchange_n(&c->running, 1, __ATOMIC_ACQUIRE);
}

static void core_enter(struct sim_core *c)
{
	unsigned int spins = 0;

	/* another thread, for a few short tasks: unless it lost its CPU */
	while (!core_try_enter(c))
		if (++spins < 1000)
			cpu_relax();
		else
			sched_yield();
}

static void core_leave(struct sim_core *c)
{
	__atomic_store_n(&c->running, 0, __ATOMIC_RELEASE);
}

/*
 * Run core's short queued tasks, as that core (the caller has entered it):
 * one claim, one ring reservation and one busy-time update per batch, not
 * one per task.  Completions need no interrupt: the caller schedules next.
 * Returns how many ran.
 */
static uint32_t run_short_batches(struct sim *sim, struct pto_core_regs *r,
				  uint32_t core, struct run_clock *clock,
				  uint64_t *credit)
{
	uint64_t ids[PTO_CORE_QUEUE_SLOTS], start[PTO_CORE_QUEUE_SLOTS];
	uint64_t end[PTO_CORE_QUEUE_SLOTS], pos, busy = 0, more;
	int status[PTO_CORE_QUEUE_SLOTS];
	uint32_t n, i, ran = 0;

	*credit = 0;
	while ((n = claim_short(sim, r, ids, &more))) {
		*credit += more;
		for (i = 0; i < n; i++) {
			status[i] = run_timed(sim, r, core, ids[i], clock,
					      &start[i]);
			end[i] = clock->ns;
			busy += end[i] - start[i];
		}
		pos = cring_reserve(sim, n);
		for (i = 0; i < n; i++)
			cring_post(sim, pos + i, core, ids[i], status[i],
				   start[i], end[i]);
		ran += n;
	}
	if (busy)
		__atomic_fetch_add(&r->busy_ns, busy, __ATOMIC_RELAXED);
	return ran;
}

/*
 * Run a sleeping core's short queued tasks on the kicking thread, on the
 * core's behalf.  The host's own thread is awake and reaps after the kick
 * returns, so the completions need no interrupt, nor the fence that
 * orders one against the host going to sleep.
 */
static void run_on_host(struct sim *sim, struct pto_core_regs *r,
			uint32_t core, struct run_clock *clock)
{
	struct sim_core *c = &sim->cores[core];
	uint64_t credit;

	if (!core_try_enter(c))
		return;		/* its thread is awake and running: it claims */
	run_short_batches(sim, r, core, clock, &credit);
	WRITE_ONCE(c->inline_ns, READ_ONCE(c->inline_ns) + credit);
	core_leave(c);
}

/*
 * Run a sleeping core's short tasks here rather than wake its thread?
 * Yes while that saves a wake-up per task; but the tasks then run one
 * after another on this thread, however many cores sleep.  Once they took
 * INLINE_CREDIT_NS since the core's thread was last woken, and a CPU is
 * free for it (fewer core threads awake than CPUs), the thread is woken:
 * 1 us tasks on two cores otherwise ran on one thread at half the
 * machine's rate while the other CPU idled.
 */
static bool may_run_for(struct sim *sim, uint32_t core)
{
	return READ_ONCE(sim->cores[core].inline_ns) < INLINE_CREDIT_NS ||
	       READ_ONCE(sim->awake) >= sim->be->host_cpus;
}

/*
 * Kick the listed cores (NULL: every core) with one fence and one clock
 * chain: a core asleep with short tasks queued has them run here, one
 * left with others is woken.  Cores that are awake see their doorbell
 * before they sleep (core_idle()).
 */
static void sim_kick(struct pto_backend *be, const uint32_t *cores,
		     uint32_t n)
{
	struct sim *sim = be->priv;
	struct run_clock clock = { 0 };	/* one chain for the whole kick */
	uint32_t i, c;

	smp_mb();	/* doorbell store before the core_waiting load */
	if (!cores)
		n = be->num_cores;
	for (i = 0; i < n; i++) {
		struct pto_core_regs *r;

		c = cores ? cores[i] : i;
		r = pto_regs(be, c);
		if (!READ_ONCE(r->core_waiting))
			continue;
		/* an orchestrator that submits kicks too: it only wakes */
		if (pto_backend_runs_tasks && may_run_for(sim, c))
			run_on_host(sim, r, c, &clock);
		if (load_acquire(&r->consumed) == load_acquire(&r->doorbell))
			continue;
		/* scheduling themselves, core threads sleep on their wake */
		if (load_acquire(&sim->hooks))
			wake_core(sim, c);
		else
			futex_wake(&r->doorbell, 1);
	}
	/* everyone: with shards, the core threads asleep in shard_sleep() */
	for (c = 0; !cores && c < PTO_NUM_WORKER_TYPES; c++)
		wake_sleepers(sim, c, UINT32_MAX);
}

/* A core thread is back from sleep: others may run its tasks afresh. */
static void core_awake(struct sim_core *sc, struct pto_core_regs *r)
{
	WRITE_ONCE(r->core_waiting, 0);
	WRITE_ONCE(sc->inline_ns, 0);
}

/*
 * A thread-mode core sleeps until kicked; bounded, so that a core asleep
 * when the runtime switches the core threads to scheduling themselves
 * (sim_set_sched()) notices within a tenth of a second even if it missed
 * that wake-up.
 */
static void core_idle(struct sim *sim, struct sim_core *sc,
		      struct pto_core_regs *r, uint32_t db)
{
	WRITE_ONCE(r->core_waiting, 1);
	/* waiting before the doorbell load; pairs with sim_kick() */
	smp_mb();
	if (load_acquire(&r->doorbell) == db && !load_acquire(&sim->stop) &&
	    !load_acquire(&sim->hooks))
		futex_wait(&r->doorbell, db, 100);
	core_awake(sc, r);
}

/*
 * Run core's queued tasks (the caller has entered it), the short ones at
 * the queue's head all at once (a batch, as run_on_host() runs them),
 * else the next one.  Returns how many ran.
 */
static uint32_t run_queued(struct sim *sim, struct pto_core_regs *r,
			   uint32_t core, struct run_clock *clock)
{
	uint64_t id, credit;	/* (the core's own tasks: no credit to keep) */
	uint32_t ran = run_short_batches(sim, r, core, clock, &credit);

	if (!ran && claim(r, &id)) {
		execute(sim, r, core, id, clock);
		ran = 1;
	}
	return ran;
}

/* PTO_SCHED_WORKERS: run this core's queued tasks; how many ran. */
static uint32_t run_own(struct sim *sim, struct sim_core *sc,
			struct pto_core_regs *r, struct run_clock *clock)
{
	uint32_t ran;

	if (load_acquire(&r->consumed) == load_acquire(&r->doorbell))
		return 0;
	core_enter(sc);
	ran = run_queued(sim, r, sc->index, clock);
	core_leave(sc);
	return ran;
}

/*
 * How often (spins) an idle core thread looks for a core whose thread
 * does not take its queued tasks: every few microseconds.
 */
#define STALLED_LOOK 64
/*
 * How long a core's queued tasks wait for its thread before another takes
 * them: longer than a scheduling pass of that thread, far shorter than
 * the time slice a thread that lost its CPU waits for it again.
 */
#define STALLED_NS 20000

/* Cores an idle thread looks at per look: a look costs the same on 72. */
#define STALLED_SCAN 4

/*
 * On one CPU nothing arrives while a thread spins: whoever would bring the
 * work (the orchestrator, another core's thread) waits for that very CPU,
 * until the spinner's time slice ends.  A task submitted between spells
 * of host work started about 1 ms late so.  One look for a stalled core
 * and unpublished tasks, then sleep: the waker's futex wake-up gets the
 * sleeper the CPU at once.
 */
#define ONE_CPU_SPINS (STALLED_LOOK + 1)

/* Has core c tasks queued that no thread runs?  *taken: how far it got. */
static bool core_stalled(struct sim *sim, uint32_t c, uint32_t *taken)
{
	struct pto_core_regs *r = pto_regs(sim->be, c);

	*taken = load_acquire(&r->consumed);
	return *taken != load_acquire(&r->doorbell) &&
	       !READ_ONCE(sim->cores[c].running);
}

/*
 * The next core (after the last one looked at) whose queued tasks no
 * thread runs, for the caller to watch; false: none among the next
 * STALLED_SCAN.
 */
static bool find_stalled(struct sim *sim, struct stall_watch *w)
{
	uint32_t n = sim->be->num_cores, i, c, taken;

	for (i = 0; i < STALLED_SCAN && i < n; i++) {
		c = w->look_next;
		w->look_next = c + 1 < n ? c + 1 : 0;
		if (c != w->self && core_stalled(sim, c, &taken)) {
			w->core = c + 1;
			w->taken = taken;
			w->since = pto_now_ns();
			return true;
		}
	}
	return false;
}

/*
 * An idle core thread (either mode): watch a core whose queued tasks
 * no thread runs, and once its own thread has taken none of them for
 * STALLED_NS, run them here, as that core.  That thread lost its CPU to
 * another process (or is not back from a sleep yet): on a machine others
 * kept busy, graphs of 15-60 us tasks over two cores reached a fifth of
 * the machine's peak while their tasks waited a time slice behind it.
 * True when tasks ran here; *watching: a core is being watched (keep
 * spinning rather than sleep: it is at most STALLED_NS).  The waiting
 * orchestrator does the same (sim_help()), for short tasks only
 * (short_only): it is no core thread, and the last one idle does not
 * sleep while a run drains (worker_idle()), so a long kernel here would
 * keep that one spinning as long as it ran.
 */
static bool run_stalled(struct sim *sim, struct stall_watch *w,
			struct run_clock *clock, bool *watching,
			bool short_only)
{
	uint32_t c = w->core - 1, taken, ran;
	uint64_t credit;

	*watching = false;
	if (!w->core || !core_stalled(sim, c, &taken) || taken != w->taken) {
		w->core = 0;
		*watching = find_stalled(sim, w);
		return false;
	}
	/* on one CPU its thread cannot run while this one does: at once */
	if (sim->be->host_cpus > 1 && pto_now_ns() - w->since < STALLED_NS) {
		*watching = true;
		return false;
	}
	w->core = 0;
	if (!core_try_enter(&sim->cores[c]))
		return false;	/* its thread is back */
	ran = short_only ? run_short_batches(sim, pto_regs(sim->be, c), c,
					     clock, &credit) :
			   run_queued(sim, pto_regs(sim->be, c), c, clock);
	core_leave(&sim->cores[c]);
	return ran;
}

/*
 * PTO_SCHED_THREAD: run what the scheduler's thread queues, and when idle
 * the tasks of a core whose thread does not take them (run_stalled()).
 */
static void core_loop(struct sim *sim, struct sim_core *sc)
{
	struct pto_core_regs *r = pto_regs(sim->be, sc->index);
	unsigned int idle = 0;
	struct run_clock clock = { 0 };
	bool watching = false;

	for (;;) {
		uint32_t db = load_acquire(&r->doorbell);
		uint32_t taken = load_acquire(&r->consumed);
		uint64_t id;

		if (taken == db) {
			clock.ns = 0;	/* idle time is not busy time */
			if (load_acquire(&sim->stop) ||
			    load_acquire(&sim->hooks))
				break;
			if (++idle < CORE_SPINS || watching) {
				if (idle % STALLED_LOOK == 0 &&
				    run_stalled(sim, &sc->watch, &clock,
						&watching, false)) {
					tell_scheduler(sim);
					idle = 0;
					continue;
				}
				idle_poll(idle);
				continue;
			}
			core_idle(sim, sc, r, db);
			idle = 0;
			continue;
		}
		idle = 0;
		if (!claim(r, &id))
			continue;
		/*
		 * After a short task, sleep as soon as the queue is empty
		 * instead of spinning: the host runs short tasks itself while
		 * the core sleeps, and a spinning core thread would take a
		 * CPU from the host's threads.  Long tasks keep the core
		 * spinning, so the next one starts without a wake-up.  (Asked
		 * before running it: once completed, the slot may be reused.)
		 */
		if (task_is_short(sim, task_desc(sim, id)))
			idle = CORE_SPINS;
		core_enter(sc);
		execute(sim, r, sc->index, id, &clock);
		core_leave(sc);
		if (pto_place_tick(&sc->place, &sim->place, clock.ns))
			clock.ns = 0;	/* no task's time: see run_timed() */
	}
}

/*
 * A core thread that went to sleep at t0 is awake again.  Woken soon
 * after: spin longer next time; else shorter.
 */
static void woke_up(struct sim *sim, const struct pto_backend_sched *h,
		    struct sim_core *sc, uint64_t t0)
{
	__atomic_add_fetch(&sim->awake, 1, __ATOMIC_SEQ_CST);
	h->awake(sim->hook_ctx);
	if (pto_now_ns() - t0 < SHORT_SLEEP_NS) {
		if (sc->spin_budget < WORKER_SPINS_MAX)
			sc->spin_budget *= 2;
	} else if (sc->spin_budget > CORE_SPINS) {
		sc->spin_budget /= 2;
	}
}

/*
 * The scheduling side said not to sleep yet: something is to be done
 * first, most often by whoever holds the right to schedule (the
 * orchestrator running a task on a core's behalf, say).  On one CPU that
 * thread runs only when this one lets it: a wait shape round trip with
 * two vector cores took 43 us while this thread looked again and again.
 */
static void not_yet_asleep(struct sim *sim)
{
	if (sim->be->host_cpus == 1)
		sched_yield();
}

/*
 * PTO_SCHED_WORKERS: a core thread that runs out of work sleeps; the last
 * one awake tells the scheduler side (which then has the orchestrator wake
 * one with notify()) and sleeps a bounded time, which covers the rare race
 * in which neither side saw the other.
 */
static void worker_sleep(struct sim *sim, const struct pto_backend_sched *h,
			 struct sim_core *sc, struct pto_core_regs *r,
			 uint32_t *naps)
{
	uint32_t db = load_acquire(&r->doorbell);
	uint32_t seen = load_acquire(&sc->wake);
	bool last = __atomic_sub_fetch(&sim->awake, 1, __ATOMIC_SEQ_CST) == 0;
	uint64_t t0 = pto_now_ns();

	if (last)	/* before it says so: see wake_a_worker() */
		WRITE_ONCE(sim->last_sleeper, sc->index);
	if (h->idle(sim->hook_ctx, last)) {
		WRITE_ONCE(r->core_waiting, 1);
		/* waiting before the doorbell load; pairs with the kicker */
		smp_mb();
		if (load_acquire(&r->doorbell) == db &&
		    load_acquire(&r->consumed) == db &&
		    !load_acquire(&sim->stop) && load_acquire(&sim->hooks))
			futex_wait(&sc->wake, seen, !last ? UINT32_MAX :
				   (*naps)++ ? 50 : 1);
		core_awake(sc, r);
	} else {
		not_yet_asleep(sim);
	}
	woke_up(sim, h, sc, t0);
}

/*
 * Pause instructions to spin before sleeping.  Spinning costs the kernels
 * nothing while every awake core thread has a CPU of its own, and saves a
 * futex wake-up on each hand-off between cores (a chain of dependent
 * tasks over two cores hands off every task): then the adaptive budget.
 * With more awake threads than CPUs a spinning thread would take a CPU
 * from a kernel: then a short spin, except for the last awake thread.
 * On one CPU, hardly any.
 */
static unsigned int worker_spins(struct sim *sim, struct sim_core *sc)
{
	uint32_t awake = READ_ONCE(sim->awake);

	if (sim->be->host_cpus == 1)
		return ONE_CPU_SPINS;
	return awake <= sim->be->host_cpus || awake == 1 ? sc->spin_budget :
						       CORE_SPINS;
}

/*
 * PTO_SCHED_WORKERS: run own tasks, and schedule after each (each batch
 * of short ones), with the hooks h the caller found installed, until they
 * change.
 */
static void worker_loop(struct sim *sim, struct sim_core *sc,
			const struct pto_backend_sched *h)
{
	struct pto_core_regs *r = pto_regs(sim->be, sc->index);
	unsigned int idle = 0;
	uint32_t naps = 0;
	struct run_clock clock = { 0 };
	bool watching = false;

	for (;;) {
		if (run_own(sim, sc, r, &clock)) {
			if (pto_place_tick(&sc->place, &sim->place, clock.ns))
				clock.ns = 0;	/* see run_timed() */
			h->schedule(sim->hook_ctx, sc->index);
			clock.ns = 0;	/* scheduling is no task's time */
			idle = 0;
			naps = 0;
			continue;
		}
		clock.ns = 0;	/* idle time is not busy time */
		if (load_acquire(&sim->stop) || load_acquire(&sim->hooks) != h)
			break;
		if (h->schedule(sim->hook_ctx, sc->index) > 0) {
			idle = 0;
			naps = 0;
			continue;
		}
		if (++idle < worker_spins(sim, sc) || watching) {
			if (idle % STALLED_LOOK == 0 &&
			    run_stalled(sim, &sc->watch, &clock,
					&watching, false)) {
				h->schedule(sim->hook_ctx, sc->index);
				clock.ns = 0;	/* scheduling is no task's time */
				idle = 0;
				naps = 0;
				continue;
			}
			if (idle % STALLED_LOOK == 0 &&
			    h->peek(sim->hook_ctx, sc->index) > 0) {
				idle = 0;
				naps = 0;
				continue;
			}
			idle_poll(idle);
			continue;
		}
		worker_sleep(sim, h, sc, r, &naps);
		idle = 0;
	}
}

/*
 * PTO_SCHED_SHARDS: sleep until a task of this core's type is ready (its
 * bit in asleep[], cleared by the waker) or the scheduling steps have
 * work.  The bit is set before looking for work, and ready() pushes
 * before it looks at the bits, so one of the two always sees the other.
 */
static void shard_sleep(struct sim *sim, const struct pto_backend_sched *h,
			struct sim_core *sc, struct pto_core_regs *r,
			uint32_t *naps)
{
	uint32_t type = core_type(sim, sc->index), i;
	uint32_t seen = load_acquire(&sc->wake);
	bool last = __atomic_sub_fetch(&sim->awake, 1, __ATOMIC_SEQ_CST) == 0;
	uint64_t t0 = pto_now_ns(), bit, *word;

	i = sc->index - sim->be->first_core[type];
	word = &sim->asleep[type][i / 64];
	bit = 1ull << (i % 64);
	if (h->idle(sim->hook_ctx, last)) {
		WRITE_ONCE(r->core_waiting, 1);
		__atomic_fetch_or(word, bit, __ATOMIC_SEQ_CST);
		if (!h->has_work(sim->hook_ctx, sc->index) &&
		    !thread_wake_debt->types &&
		    !load_acquire(&sim->stop) && load_acquire(&sim->hooks) == h)
			futex_wait(&sc->wake, seen, !last ? UINT32_MAX :
				   (*naps)++ ? 50 : 1);
		__atomic_fetch_and(word, ~bit, __ATOMIC_SEQ_CST);
		core_awake(sc, r);
	} else {
		not_yet_asleep(sim);
	}
	woke_up(sim, h, sc, t0);
}

/*
 * Run a task taken for core c on this thread and complete it; returns
 * when the task ended.  The completion ends the clock chain (see
 * run_timed()), so that clock->ns is 0 again on return: the completion
 * readies the successors, maybe waking a thread, and writes the trace,
 * and the thread may lose its CPU meanwhile.  Chained, a task taken next
 * on the same core started at the last one's end: in traces of
 * tree_reduce under shards, one run in five had a slice that began
 * before its producer ended, or before it was even submitted.
 */
static uint64_t shard_run(struct sim *sim, const struct pto_backend_sched *h,
			  uint32_t c, uint64_t id, struct run_clock *clock)
{
	struct pto_core_regs *r = pto_regs(sim->be, c);
	uint64_t start, end;
	int status;

	status = run_timed(sim, r, c, id, clock, &start);
	end = clock->ns;
	__atomic_fetch_add(&r->busy_ns, end - start, __ATOMIC_RELAXED);
	h->complete(sim->hook_ctx, c, id, status, start, end);
	clock->ns = 0;
	return end;
}

/*
 * Whether core c's type has ready tasks queued.  Only the queue cells are
 * read: the descriptor of a task not taken may be rewritten meanwhile.
 */
static bool look_any(void *ctx, uint64_t id)
{
	*(bool *)ctx = true;
	return false;
}

static bool tasks_queued(struct sim *sim, const struct pto_backend_sched *h,
			 uint32_t c)
{
	bool any = false;
	uint64_t id;

	h->take_if(sim->hook_ctx, c, &id, look_any, &any);
	return any;
}

/* A core of type t whose thread sleeps, or UINT32_MAX. */
static uint32_t sleeping_core(struct sim *sim, uint32_t t)
{
	uint32_t w;

	for (w = 0; w < PTO_CORELOAD_WORDS; w++) {
		uint64_t v = READ_ONCE(sim->asleep[t][w]);

		if (v)
			return sim->be->first_core[t] + w * 64 +
			       (uint32_t)__builtin_ctzll(v);
	}
	return UINT32_MAX;
}

/* Tasks one thread runs for a sleeping type before it looks at its own. */
#define HELP_BATCH 32

/*
 * Run type t's ready tasks as its sleeping core c while they are short,
 * up to budget; the first that is not goes back to the queue.  While it
 * does, the thread counts as looking for t, so that the tasks it readies
 * there wake no sleeper; when it stops, one that is left needs one: the
 * decrement before the look pairs with wake_for()'s push before its load.
 */
static uint32_t help_core(struct sim *sim, const struct pto_backend_sched *h,
			  uint32_t t, uint32_t c, uint32_t budget,
			  struct run_clock *clock)
{
	uint32_t ran = 0;
	uint64_t id;

	if (!core_try_enter(&sim->cores[c]))
		return 0;
	__atomic_add_fetch(&sim->looking[t], 1, __ATOMIC_SEQ_CST);
	while (ran < budget && h->take(sim->hook_ctx, c, &id)) {
		if (!task_is_short(sim, task_desc(sim, id))) {
			h->give_back(sim->hook_ctx, c, id);
			break;
		}
		shard_run(sim, h, c, id, clock);
		ran++;
	}
	core_leave(&sim->cores[c]);
	__atomic_sub_fetch(&sim->looking[t], 1, __ATOMIC_SEQ_CST);
	if (tasks_queued(sim, h, c))
		wake_for(sim, t, 1);
	return ran;
}

/*
 * The wake-ups this thread took over (sim_ready()), back at the top of
 * its loop, mine being its type (UINT32_MAX: the orchestrator's).  Of its
 * own type it takes one itself (flush_ready() did not count it), and the
 * others are worth a sleeper only when its own tasks are not short (the
 * one it ran last says); another type's tasks it runs as a sleeping core
 * of that type while they are short (help_core(), whose tasks add to the
 * debt, settled in turn), and wakes sleepers for the rest.  Returns the
 * tasks it ran.
 */
static uint32_t settle_wakeups(struct sim *sim, uint32_t mine,
			       const struct pto_backend_sched *h,
			       struct wake_debt *d, struct run_clock *clock)
{
	uint32_t ran = 0, k;

	while (d->types) {
		uint32_t t = (uint32_t)__builtin_ctz(d->types), n = d->n[t];
		uint32_t c = UINT32_MAX;

		d->types &= ~(1u << t);
		d->n[t] = 0;
		if (t == mine) {	/* n counts none it takes itself */
			if (!d->ran_short)
				wake_for(sim, t, n);
			continue;
		}
		smp_mb();	/* the pushes before the loads: see wake_for() */
		if (!READ_ONCE(sim->looking[t]))
			c = sleeping_core(sim, t);
		k = c == UINT32_MAX ? 0 : help_core(sim, h, t, c, HELP_BATCH,
						    clock);
		ran += k;
		if (!k)		/* else it woke a sleeper if one is needed */
			wake_for(sim, t, n);
	}
	return ran;
}

/*
 * PTO_SCHED_SHARDS, a thread that found nothing of its own type to do:
 * run the short ready tasks of a type whose core threads all sleep, as
 * one of those cores, instead of waking it, as the kick does for a
 * sleeping core in the other modes.  A wake-up costs more than such a
 * task, and on a host with fewer CPUs than core threads the woken one
 * would take a CPU from a thread with work.  True when it ran something.
 */
static bool help_sleepers(struct sim *sim, uint32_t mine,
			  const struct pto_backend_sched *h, struct run_clock *clock)
{
	uint32_t t, c, ran = 0;

	for (t = 0; t < PTO_NUM_WORKER_TYPES && ran < HELP_BATCH; t++) {
		if (t == mine || !sim->be->cores[t] ||
		    READ_ONCE(sim->looking[t]))
			continue;
		c = sleeping_core(sim, t);
		if (c == UINT32_MAX || !tasks_queued(sim, h, c))
			continue;
		ran += help_core(sim, h, t, c, HELP_BATCH - ran, clock);
	}
	return ran;
}

/*
 * The orchestrator waits for tasks with nothing else to do
 * (pto_sched_lend_hand()).  PTO_SCHED_WORKERS: like an idle core thread,
 * it runs the short tasks of a core whose thread has taken none of them
 * for STALLED_NS (it lost its CPU while awake, where sim_kick() leaves its
 * tasks to it).  PTO_SCHED_SHARDS: it settles the wake-ups it took over
 * as it scheduled and runs the short ready tasks of the types whose
 * threads all sleep, as a core thread with no type of its own would.
 * The thread it would wake most often lands on its CPU and waits there:
 * on two CPUs, a run of a cube and a vector NOP task took 150 us instead
 * of 3.  True when tasks ran.
 */
static bool sim_help(struct pto_backend *be)
{
	struct sim *sim = be->priv;
	const struct pto_backend_sched *h = load_acquire(&sim->hooks);
	struct run_clock clock = { 0 };
	bool watching;
	uint32_t ran;

	if (!h || !h->take)
		return run_stalled(sim, &sim->host_watch, &clock, &watching,
				   true);
	ran = settle_wakeups(sim, UINT32_MAX, h, &host_debt, &clock);
	/* and what those readied: the debt is never left for later */
	if (help_sleepers(sim, UINT32_MAX, h, &clock))
		ran += 1 + settle_wakeups(sim, UINT32_MAX, h, &host_debt,
					  &clock);
	return ran;
}

/*
 * PTO_SCHED_SHARDS: take ready tasks of this core's type and run them,
 * complete each here, and do the scheduling steps (scan, scope ends,
 * retirement) when there are some and no other thread does, with the
 * hooks h the caller found installed, until they change.
 */
static void shard_loop(struct sim *sim, struct sim_core *sc,
		       const struct pto_backend_sched *h)
{
	struct pto_core_regs *r = pto_regs(sim->be, sc->index);
	uint32_t mine = core_type(sim, sc->index), t;
	uint32_t *looking = &sim->looking[mine];
	struct wake_debt debt = { 0 };
	unsigned int idle = 0;
	uint32_t naps = 0;
	struct run_clock clock = { 0 };
	uint64_t id, end;

	thread_wake_debt = &debt;
	for (;;) {
		settle_wakeups(sim, mine, h, &debt, &clock);
		if (h->take(sim->hook_ctx, sc->index, &id)) {
			if (idle)
				__atomic_sub_fetch(looking, 1, __ATOMIC_SEQ_CST);
			/* busy for long: what waits behind it needs a sleeper */
			debt.ran_short = task_is_short(sim, task_desc(sim, id));
			if (!debt.ran_short && tasks_queued(sim, h, sc->index))
				wake_for(sim, core_type(sim, sc->index), 1);
			core_enter(sc);
			end = shard_run(sim, h, sc->index, id, &clock);
			core_leave(sc);
			pto_place_tick(&sc->place, &sim->place, end);
			h->schedule(sim->hook_ctx, sc->index);
			idle = 0;
			naps = 0;
			continue;
		}
		if (help_sleepers(sim, mine, h, &clock)) {
			h->schedule(sim->hook_ctx, sc->index);
			if (idle)	/* still looking: spin afresh */
				idle = 1;
			naps = 0;
			continue;
		}
		if (!idle++)	/* looking from now on: see sim_ready() */
			__atomic_add_fetch(looking, 1, __ATOMIC_SEQ_CST);
		if (load_acquire(&sim->stop) || load_acquire(&sim->hooks) != h)
			break;
		if (h->schedule(sim->hook_ctx, sc->index) > 0) {
			idle = 1;	/* still looking: spin afresh */
			naps = 0;
			continue;
		}
		if (idle < worker_spins(sim, sc)) {
			if (idle % STALLED_LOOK == 0 &&
			    h->peek(sim->hook_ctx, sc->index) > 0) {
				idle = 1;	/* still looking: spin afresh */
				naps = 0;
				continue;
			}
			idle_poll(idle);
			continue;
		}
		__atomic_sub_fetch(looking, 1, __ATOMIC_SEQ_CST);
		idle = 0;
		shard_sleep(sim, h, sc, r, &naps);
	}
	if (idle)
		__atomic_sub_fetch(looking, 1, __ATOMIC_SEQ_CST);
	thread_wake_debt = NULL;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)	/* leaving: wake */
		if (debt.types & 1u << t)
			wake_for(sim, t, debt.n[t]);
}

static void *core_main(void *arg)
{
	struct sim_core *sc = arg;
	struct sim *sim = sc->sim;

	pto_backend_thread_start(sim->be, sc->index);
	pto_place_start(&sc->place, &sim->place, sc->index);
	thread_place = &sc->place;
	__atomic_add_fetch(&sim->awake, 1, __ATOMIC_SEQ_CST);
	while (!load_acquire(&sim->stop)) {
		const struct pto_backend_sched *h;

		/* counted first: sim_set_sched(NULL) then waits for us */
		__atomic_add_fetch(&sim->in_workers, 1, __ATOMIC_SEQ_CST);
		/* one load: the hooks may go away right after it */
		h = __atomic_load_n(&sim->hooks, __ATOMIC_SEQ_CST);
		if (h && h->take)
			shard_loop(sim, sc, h);
		else if (h)
			worker_loop(sim, sc, h);
		if (!__atomic_sub_fetch(&sim->in_workers, 1, __ATOMIC_SEQ_CST))
			futex_wake(&sim->in_workers, 1);
		if (!load_acquire(&sim->hooks))
			core_loop(sim, sc);
	}
	pto_place_stop(&sc->place);
	return NULL;
}

const struct pto_backend_ops pto_sim_backend_ops = {
	.name = "sim",
	.open = sim_open,
	.setup = sim_setup,
	.close = sim_close,
	.bind_kernel = sim_bind_kernel,
	.kick = sim_kick,
	.wait = sim_wait,
	.notify = sim_notify,
	.set_sched = sim_set_sched,
	.ready = sim_ready,
	.help = sim_help,
};
