/* SPDX-License-Identifier: MIT */
/*
 * The device interface libpto drives.  Two implementations: the in-process
 * simulator (backend/sim.c) and the /dev/ptoN driver (backend/dev.c).  Both
 * expose the regions of <pto/pto_uapi.h>, laid out as SETUP answers; the
 * scheduler's dispatch and completion path is the same code for both.
 */
#ifndef PTO_LIB_BACKEND_H
#define PTO_LIB_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <pto/pto.h>

struct pto_backend;

/*
 * How a backend whose core threads are host threads lets them run the
 * scheduler themselves (PTO_SCHED_WORKERS, PTO_SCHED_SHARDS), instead of
 * libpto's own thread: each is called with ctx.
 */
struct pto_backend_sched {
	/*
	 * Schedule until nothing is left; > 0 when there was work.  core:
	 * the calling core thread.
	 */
	int (*schedule)(void *ctx, uint32_t core);
	/*
	 * A core thread found nothing to do and is about to sleep (last:
	 * no other is awake).  False: there is work after all, do not.
	 */
	bool (*idle)(void *ctx, bool last);
	/* A core thread woke up. */
	void (*awake)(void *ctx);
	/*
	 * An idle core thread's look, every few microseconds while it
	 * spins, at tasks submitted but not yet published (the orchestrator
	 * publishes in batches); > 0 when it took some in.
	 */
	int (*peek)(void *ctx, uint32_t core);
	/*
	 * PTO_SCHED_SHARDS (NULL otherwise): core threads take ready tasks
	 * (take(): false when there is none), run them and complete them
	 * (complete()) themselves, with no doorbell queue or completion
	 * ring between; has_work() is asked before sleeping, after the
	 * thread said it sleeps (ready()'s other side).
	 */
	bool (*take)(void *ctx, uint32_t core, uint64_t *task);
	/*
	 * The same, but only a task accept(actx, task) accepts (which must
	 * not look at the task's descriptor: until taken, the task may be
	 * run, retired and its slot reused by another thread meanwhile).
	 */
	bool (*take_if)(void *ctx, uint32_t core, uint64_t *task,
			bool (*accept)(void *actx, uint64_t task), void *actx);
	/* Put back a task taken for core and not run, for another thread. */
	void (*give_back)(void *ctx, uint32_t core, uint64_t task);
	void (*complete)(void *ctx, uint32_t core, uint64_t task, int status,
			 uint64_t start_ns, uint64_t end_ns);
	bool (*has_work)(void *ctx, uint32_t core);
};

struct pto_backend_ops {
	const char *name;
	/*
	 * Open the device named cfg->device, learn its cores (be->cores,
	 * be->num_cores, be->first_core), whether it runs C kernels, and the
	 * features it offers (be->features).
	 */
	int (*open)(struct pto_backend *be, const struct pto_config *cfg);
	/*
	 * Create the regions SETUP request s asks for, fill in its out
	 * fields and map them: be->region[] and be->geo.
	 */
	int (*setup)(struct pto_backend *be, const struct pto_setup *s);
	/* Stop the cores, unmap, close.  Safe after a failed open/setup. */
	void (*close)(struct pto_backend *be);
	/*
	 * In a child after fork(): close what would keep the creator's
	 * device open, touching no thread (the child has none).  NULL:
	 * nothing to close.
	 */
	void (*forget)(struct pto_backend *be);
	/* Bind kernel_id to a built-in op (fn == NULL) or a C function. */
	int (*bind_kernel)(struct pto_backend *be, uint32_t kernel_id,
			   uint32_t worker_type, uint32_t op, pto_kernel_fn fn);
	/*
	 * The host wrote the doorbells of the n cores listed (cores NULL:
	 * of any core); make sure sleeping ones notice.
	 */
	void (*kick)(struct pto_backend *be, const uint32_t *cores,
		     uint32_t n);
	/*
	 * Sleep until the completion ring holds entries past cring_head, the
	 * window's notify.sched_wake differs from sched_wake_seen, or
	 * timeout_ms passes.  Returns 0 or a negative errno (-ENODEV when the
	 * device went away, at once; -EIO when the context failed, at once:
	 * what is queued still completes, cancelled).
	 */
	int (*wait)(struct pto_backend *be, uint64_t cring_head,
		    uint32_t sched_wake_seen, uint32_t timeout_ms);
	/*
	 * Wake a scheduler sleeping in wait(), or with scheduling on the
	 * core threads, one of them (orchestrator side).
	 */
	void (*notify)(struct pto_backend *be);
	/*
	 * Have the core threads schedule through hooks (called with ctx)
	 * for a run; hooks NULL after the run, which returns once no core
	 * thread calls them any more.  The op is NULL when the backend
	 * cannot.
	 */
	void (*set_sched)(struct pto_backend *be,
			  const struct pto_backend_sched *hooks, void *ctx);
	/*
	 * PTO_SCHED_SHARDS: n tasks of worker type became ready; wake up to
	 * n sleeping core threads of that type.
	 */
	void (*ready)(struct pto_backend *be, uint32_t type, uint32_t n);
	/*
	 * The orchestrator waits for tasks with nothing else to do and the
	 * core threads schedule (pto_sched_lend_hand()): run, on this
	 * thread, queued tasks of a core whose thread does not take them.
	 * True when some ran.  NULL when the backend's cores are elsewhere.
	 */
	bool (*help)(struct pto_backend *be);
	/*
	 * What in the device's setup makes a task fail with status (a
	 * negative errno), for the failure's message, or NULL: nothing
	 * more to say.  The op is NULL where no status needs it.
	 */
	const char *(*status_hint)(int status);
	/*
	 * Before a run: 0 while the backend can run tasks, else why it
	 * never will again (-ENODEV: the device went away; -EIO: the
	 * context failed).  NULL: always 0.
	 */
	int (*state)(struct pto_backend *be);
};

/* The regions of a context, in the order of enum pto_backend_region. */
enum pto_backend_region {
	PTO_BE_WINDOW,
	PTO_BE_HEAP,
	PTO_BE_REGS,
	PTO_BE_CRING,
	PTO_BE_NUM_REGIONS
};

/* One task ring's arrays, from SETUP's offsets. */
struct pto_backend_ring {
	struct pto_task_desc *desc;
	struct pto_dep_entry *dep;
	uint8_t *heap;			/* host address of the ring's heap */
};

struct pto_backend {
	const struct pto_backend_ops *ops;
	void *priv;

	/* from open() */
	bool c_kernels;			/* runs pto_kernel_fn kernels */
	uint64_t features;		/* PTO_FEATURE_* the device offers */
	uint64_t max_heap;		/* largest heap region it allows */
	/* bytes of regions this process may still set up, 0: no bound */
	uint64_t mem_avail;
	uint32_t cores[PTO_NUM_WORKER_TYPES];
	uint32_t num_cores;		/* cores are numbered in type order */
	uint32_t first_core[PTO_NUM_WORKER_TYPES];
	/* host CPUs threads are pinned to, round robin (0: not pinned) */
	uint32_t ncpus;
	uint32_t cpus[256];
	/* host CPUs the process's threads may run on: ncpus, or all it may */
	uint32_t host_cpus;

	/*
	 * from setup(): the request with SETUP's answer, and the mappings;
	 * geo.features holds the features enabled (PTO_FEATURE_VIEWS: built-in
	 * ops take tensor views)
	 */
	struct pto_setup geo;
	uint8_t *region[PTO_BE_NUM_REGIONS];
	/*
	 * Device address of heap offset 0: the sim uses host addresses
	 * (heap_dev_base = (uintptr_t)heap), the driver heap offsets (0).
	 */
	uint64_t heap_dev_base;
	bool host_addresses;		/* any host address is a device address */
	/* checked mode (check.h), or NULL: set before the first run */
	struct pto_check *check;
	/* the runtime's, which the backend's threads log with */
	const struct pto_log_tag *log_tag;

	/* derived from the above by pto_backend_attach() */
	struct pto_window_header *win;
	struct pto_backend_ring ring[PTO_MAX_RINGS];
	uint64_t *order;		/* submission order ring */
	struct pto_release_entry *release;
	uint8_t *heap;			/* host address of heap offset 0 */
	uint64_t heap_size;
	struct pto_cring_header *cring;
	struct pto_completion *cring_entries;
};

/* Core c's register block. */
static inline struct pto_core_regs *pto_regs(const struct pto_backend *be,
					     uint32_t c)
{
	return (struct pto_core_regs *)(be->region[PTO_BE_REGS] +
					(uint64_t)c * be->geo.regs_stride);
}

/*
 * Point the backend's arrays into its regions by SETUP's offsets, after
 * checking the window's identity.  0 or -EPROTO.
 */
int pto_backend_attach(struct pto_backend *be);

/*
 * Set on the threads that may run a core's tasks on its behalf: libpto's
 * own (pto_backend_thread_create()), and the orchestrator's while it waits
 * for tasks with nothing else to do (pto_sched_lend_hand()), never while
 * it submits.  A kernel run there gets -EPERM from the orchestration
 * calls, as on any other thread (pto_orch_check()).
 */
extern __thread bool pto_backend_runs_tasks;

/*
 * Make a thread of the runtime's running fn(arg) into *thread: named, and
 * with PTO_CPUS set, pinned to the index-th CPU of the list (round robin)
 * from its first instruction, so that whoever looks at it (ptotop,
 * taskset, a test) right after sees it as it stays.  0 or -errno.
 */
int pto_backend_thread_create(const struct pto_backend *be, uint32_t index,
			      const char *name, pthread_t *thread,
			      void *(*fn)(void *arg), void *arg);

/*
 * The thread starts: its messages' tag, that it is libpto's, and its CPU
 * again, to say so when that CPU was no longer the process's to use.
 */
void pto_backend_thread_start(const struct pto_backend *be, uint32_t index);

extern const struct pto_backend_ops pto_sim_backend_ops;
extern const struct pto_backend_ops pto_dev_backend_ops;

/*
 * What the heap rings may take of a backend's heap in all: three
 * quarters of the largest it allows, the rest left for pto_malloc().
 */
static inline uint64_t pto_heap_rings_room(const struct pto_backend *be)
{
	return be->max_heap / 4 * 3;
}

/* A task's argument words: in its descriptor, or in its heap block. */
static inline const uint64_t *pto_desc_args(const struct pto_task_desc *d)
{
	if (d->flags & PTO_TASK_F_ARGS_IN_HEAP)
		return (const uint64_t *)(uintptr_t)d->args[0];
	return (const uint64_t *)d->args;
}

/*
 * Is argument i (below d->nargs) of a task a view, its word the address
 * of a view descriptor?  args is pto_desc_args(d).  With its arguments in
 * its heap block, a bitmap after them says; else the descriptor's
 * view_mask, which covers the PTO_MAX_ARGS it holds.
 */
static inline bool pto_desc_arg_is_view(const struct pto_task_desc *d,
					const uint64_t *args, uint32_t i)
{
	if (!(d->flags & PTO_TASK_F_VIEWS))
		return false;
	if (d->flags & PTO_TASK_F_ARGS_IN_HEAP)
		return (args[d->nargs + i / 64] >> (i % 64)) & 1;
	return i < 32 && ((d->view_mask >> i) & 1);
}

#endif /* PTO_LIB_BACKEND_H */
