/* SPDX-License-Identifier: MIT */
/*
 * libpto internals: the runtime object and what its parts share.
 *
 * Roles:
 *   orchestrator  the thread inside pto_run(): task ring head, heap ring
 *                 top, dep pool top, TensorMap, scope stack, descriptors
 *   scheduler     a libpto thread: task states, fanin/fanout counts,
 *                 ready queues, last_task_alive, heap_tail
 *   cores         the backend's workers (sim threads or the device)
 * The orchestrator and the scheduler meet only in the shared window, where
 * every field has one writer: the orchestrator lists each task's producers
 * (its fanin), and the scheduler keeps fanout lists, reference counts and
 * states in memory of its own (see scan_task() in scheduler.c).
 */
#ifndef PTO_LIB_RUNTIME_H
#define PTO_LIB_RUNTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <pto/pto.h>
#include <pto/pto_statspage.h>

#include "backend.h"
#include "coreload.h"
#include "kernel.h"
#include "log.h"
#include "mpmc.h"
#include "pace.h"
#include "rings.h"
#include "sync.h"
#include "tensormap.h"

struct pto_view_params;
struct pto_alias;

#define PTO_KERNEL_NAME_MAX 32

struct pto_kernel {
	bool registered;
	bool builtin;
	uint32_t type;
	uint32_t op;
	pto_kernel_fn fn;
	char name[PTO_KERNEL_NAME_MAX];
};

/*
 * One open scope.  Its tasks go to the task ring of its depth (the run's
 * outer scope is depth 0); a scope holds the tasks it submitted itself,
 * not those of scopes nested in it.  Where a nested scope shares its
 * ring (depths past the last ring), the scope's tasks in that ring are
 * no longer one run of sequence numbers: the runs it owns are segments.
 */
struct pto_scope {
	uint64_t begin;		/* first task id (submission order) inside it */
	uint64_t seg_start;	/* start of the segment it currently owns */
	uint64_t ring_begin;	/* its ring's next sequence number at begin */
	uint64_t heap_begin;	/* its ring's heap top at begin */
	uint64_t heap_blocks;	/* its ring's heap_blocks at begin */
	uint64_t heap_largest;	/* its ring's heap_largest before it */
	uint32_t seg_base;	/* segment stack depth when it began */
	uint32_t ring;		/* its task ring */
};

/* A run of one ring's sequence numbers, released when its scope ends. */
struct pto_segment {
	uint64_t begin;
	uint64_t end;
	uint32_t ring;
};

/* One task ring's fixed geometry, from SETUP. */
struct pto_task_ring {
	struct pto_task_desc *desc;
	struct pto_dep_entry *dep;
	uint8_t *heap;		/* host address of the ring's heap */
	uint64_t heap_dev;	/* device address of the ring's heap */
	uint64_t heap_size;
	uint32_t task_window;	/* a power of two */
	uint32_t window_mask;
	uint32_t dep_pool_size;
	uint32_t tm_pool_size;
};

/* The orchestrator's state of one task ring. */
struct pto_orch_ring {
	uint64_t next_seq;	/* next sequence number */
	uint64_t last_alive;	/* copies of the scheduler's tails */
	uint64_t heap_tail;
	uint64_t dep_tail;
	uint64_t heap_floor;	/* live heap data starts no lower than this */
	/* for the deadlock advice (flow.c advise_grow()): */
	uint64_t heap_blocks;	/* bytes of all blocks placed */
	uint64_t heap_largest;	/* largest block since its scope began */
	uint64_t tm_cleaned;	/* tasks below had their entries freed */
	uint32_t dep_idx;	/* pool index of the window's dep_top */
	uint64_t *dep_seen;	/* per slot: last consumer that linked it, + 1 */
	uint64_t *slot_id;	/* per slot: task id | depth << 56 */
};

#define PTO_SLOT_DEPTH_SHIFT	56

struct pto_orchestrator {
	struct pto_scope *scopes;
	uint32_t nscopes, scopes_cap;
	struct pto_segment *segs;
	uint32_t nsegs, segs_cap;

	struct pto_tensormap tm;
	struct pto_orch_ring ring[PTO_MAX_RINGS];
	uint64_t next_id;	/* next task id; notify.task_head trails it */
	uint64_t release_tail;
	uint64_t release_head;	/* scope-release entries written */
	uint64_t *scratch_ids;	/* producers of the task being submitted */
	uint32_t scratch_cap;
	struct pto_view_params *views;	/* its views, flattened (or NULL) */
	struct pto_alias *alias;	/* checked mode's, else NULL */
	int error;		/* first error of this run */
	bool in_run;
	uint32_t woken_gen;	/* the scheduler's sleep publish() woke */
	uint64_t woken_id;	/* and the task it published then */
	/*
	 * The thread inside pto_run(): its &pto_thread_token, 0 when no run
	 * is in progress.  Atomic: any thread may read it, to learn that it
	 * is not the orchestrator (see pto_orch_check()).
	 */
	uintptr_t owner;
	/* pto_fork_gen when the runtime was made: a child's differs */
	unsigned int fork_gen;
};

/* A task's life as the scheduler tracks it. */
enum pto_task_state {
	PTO_TASK_PENDING = 0,	/* scanned, waiting for producers */
	PTO_TASK_READY,		/* queued or on a core */
	PTO_TASK_COMPLETED,	/* done, results still referenced */
	PTO_TASK_CONSUMED,	/* done and unreferenced: retirable */
};

/* Scheduler-private state per task slot (zero: free). */
struct pto_sched_slot {
	uint32_t state;		/* enum pto_task_state */
	uint32_t waiting;	/* producers not yet completed (+1 in scan) */
	/*
	 * References that keep it from retiring: its scope, each consumer
	 * holding it, and 1 until it completes.  0: consumed.
	 */
	uint32_t live;
	/* consumers to notify: a dep link; PTO_FANOUT_CLOSED once completed */
	uint32_t fanout_head;
	uint32_t scope_held;	/* its scope has not ended yet */
	uint32_t pad;
	uint64_t id;		/* its task id (submission order) */
};

#define PTO_FANOUT_CLOSED	UINT32_MAX

/*
 * A dependency entry, named across rings: the ring in the top bits, the
 * pool index + 1 below (0: none).
 */
#define PTO_DEP_LINK_SHIFT	30
#define PTO_DEP_LINK(ring, idx1) ((uint32_t)(ring) << PTO_DEP_LINK_SHIFT | (idx1))
#define PTO_DEP_LINK_RING(l)	((l) >> PTO_DEP_LINK_SHIFT)
#define PTO_DEP_LINK_IDX1(l)	((l) & ((1u << PTO_DEP_LINK_SHIFT) - 1))
/*
 * Dependency pools are smaller than the link's index part, and no link is
 * all ones (PTO_FANOUT_CLOSED).
 */
#define PTO_MAX_DEP_POOL	((1u << PTO_DEP_LINK_SHIFT) - 2)

/* Scheduler-private twin of a dependency-pool entry (one edge). */
struct pto_sched_dep {
	uint64_t consumer;	/* handle of the task whose fanin lists it */
	uint32_t next;		/* next consumer of the same producer: a link */
	uint32_t held;		/* the consumer holds the producer */
};

/* The scheduler's state of one task ring. */
struct pto_sched_ring {
	struct pto_sched_slot *slot;
	struct pto_sched_dep *dep;	/* one per dependency-pool entry */
	uint64_t scanned;		/* sequence numbers below were scanned */
	uint64_t retired;		/* ... were retired */
	uint64_t heap_tail;		/* the tails as of retired */
	uint64_t dep_tail;
};

/*
 * The scheduler's state.  Who runs it (mode): a thread of its own, or the
 * simulator's core threads, each after it completes a task or before it
 * goes idle (one at a time), when there are not CPUs enough for a thread
 * that would take one from the kernels; or (SHARDS) the core threads
 * all at once: each completes its own tasks and takes ready ones from
 * sharded queues, and only the steps that follow the submission order
 * (scan, scope ends, retirement) are done one thread at a time.
 */
struct pto_sched {
	pthread_t thread;
	enum pto_sched_policy mode;	/* THREAD, WORKERS or SHARDS */
	bool thread_started;
	bool hooked;			/* WORKERS, SHARDS: hooks installed */
	bool shared;			/* SHARDS: tasks complete concurrently */
	struct pto_sched_ring ring[PTO_MAX_RINGS];
	struct pto_ready_queue ready[PTO_NUM_WORKER_TYPES];
	/* SHARDS: ready tasks, nshards queues per worker type */
	struct pto_mpmc *shard[PTO_NUM_WORKER_TYPES];
	uint32_t nshards[PTO_NUM_WORKER_TYPES];
	uint32_t *core_outstanding;	/* tasks queued on each core */
	uint8_t *core_type;		/* each core's worker type */
	struct pto_coreload load[PTO_NUM_WORKER_TYPES];
	uint32_t rr[PTO_NUM_WORKER_TYPES];	/* next core to try first */
	uint32_t *kick;			/* cores a dispatch round queued on */
	uint32_t *kick_round;		/* per core: the round it was listed */
	uint32_t nkick;
	uint32_t round;
	uint64_t scanned;		/* task ids below were scanned */
	uint64_t peeked;		/* task ids below are known complete */
	uint32_t unpublished;		/* retired, not yet in the window */
	uint32_t unretired;		/* rings with tasks scanned, not retired */
	struct pto_pace pace;		/* how briefly kernels ran lately */
	uint64_t cring_head;
	uint32_t outstanding;		/* dispatched, not completed */
	uint32_t cring_size;
	uint32_t idle_sleeps;		/* sleeps since work was last found */
	uint32_t busy_steps;		/* steps that found work */
	uint32_t spin_budget;		/* idle iterations before sleeping */
	uint32_t wake_batch;		/* retirements per orchestrator wake */
	uint32_t retired_unwoken;	/* retired since it was last woken */
	uint64_t last_stats_ns;
	uint64_t stats_progress;	/* completed + retired, published */
	bool failed;			/* a task failed: cancel the rest */
	uint32_t error_said;		/* the first failure was reported */
	bool finished;			/* every task of the run retired */
	/* shared by every thread that may schedule: lines of their own */
	PTO_OWN_LINES uint32_t lock;	/* workers: the right to schedule */
	PTO_OWN_LINES uint32_t done;	/* futex: the run has finished */
	uint32_t done_sleeper;		/* the orchestrator sleeps on done */
	/* sleeps begun (sched_flags.sleeping set): see publish() */
	PTO_OWN_LINES uint32_t sleep_gen;
	/* THREAD: the thread waits between runs for run_seq to move */
	PTO_OWN_LINES uint32_t run_seq;	/* futex: runs started */
	uint32_t parked;		/* the thread sleeps on run_seq */
	uint32_t quit;			/* the thread is to exit */
};

/* Counters only the scheduler writes; pto_get_stats() merges them in. */
struct pto_sched_stats {
	uint64_t tasks_completed;
	uint64_t tasks_failed;
	uint64_t busy_ns[PTO_NUM_WORKER_TYPES];
};

struct pto_arena;
struct pto_trace;

struct pto_runtime {
	struct pto_config cfg;
	char device[64];
	struct pto_log_tag log_tag;	/* its messages' tag (log.h) */
	struct pto_backend be;
	struct pto_window_header *win;
	uint32_t nrings;
	struct pto_task_ring ring[PTO_MAX_RINGS];
	uint64_t *order;	/* the submission order ring */
	uint32_t order_mask;
	uint32_t release_mask;
	/*
	 * The run: its number << 2 | PTO_RUN_CANCELLED | PTO_RUN_OVER,
	 * changed by compare-and-swap only.  pto_run_cancel() sets
	 * CANCELLED while OVER is clear and the number is the one it read,
	 * and the run's end sets OVER and reads CANCELLED in one swap: a
	 * request accepted is one the run returns -ECANCELED for, and a
	 * request as one run ends never stops the next.
	 */
	uint32_t run_state;
	/* when the run in progress started, 0 between runs (for the stats) */
	uint64_t run_t0;
	/* odd while run_t0 and st.run_ns change together: see run_ns_now() */
	uint32_t run_seq;
	/* -EBUSY said: calls (hashed to a slot) and the run_state they met */
	struct {
		const char *call;
		uint32_t run;
	} busy_said[4];

	struct pto_kernel kernels[PTO_MAX_KERNELS];

	struct pto_orchestrator orch PTO_OWN_LINES;
	struct pto_sched sched PTO_OWN_LINES;

	/* pto_malloc arena: heap offsets [arena_offset, heap_size) */
	pthread_mutex_t arena_lock;
	struct pto_arena *arena;

	/* statistics: st is orchestrator-written except the fields in sst */
	struct pto_stats st PTO_OWN_LINES;
	struct pto_sched_stats sst PTO_OWN_LINES;
	struct pto_statspage *page PTO_OWN_LINES;
	struct pto_trace *trace;
	pid_t pid;		/* of the process that created it */
};

/*
 * One byte per thread whose address names the thread: cheaper to compare
 * than pthread_self() and never equal for two live threads.
 */
extern __thread char pto_thread_token
	__attribute__((tls_model("initial-exec")));

static inline uintptr_t pto_self(void)
{
	return (uintptr_t)&pto_thread_token;
}

/*
 * Forks this process's children went through: each child adds one, so a
 * runtime made before the fork (its orch.fork_gen) is not the child's.
 * The thread that forked keeps its pto_self() in the child, so this, not
 * the owner, tells an orchestration that forked.
 */
extern unsigned int pto_fork_gen;

static inline bool pto_forked(const struct pto_runtime *rt)
{
	return __atomic_load_n(&pto_fork_gen, __ATOMIC_RELAXED) !=
	       rt->orch.fork_gen;
}

/* Count forks from the first runtime on (pthread_atfork, once). */
void pto_fork_watch(void);

/* Owner value of a runtime being destroyed: no run may start. */
#define PTO_OWNER_DESTROYING ((uintptr_t)1)

/* threads.c: the threading contract */
int pto_orch_check_slow(struct pto_runtime *rt, const char *call);
/* A kernel called call on rt: -EPERM, said once per call and run. */
int pto_say_in_kernel(struct pto_runtime *rt, const char *call);

/*
 * 0 when the caller is the orchestrator thread of a run in progress on
 * rt, and not a kernel that thread runs while it waits
 * (pto_sched_lend_hand()); else says why on the log and returns -EINVAL
 * (no run) or -EPERM (another thread's run, or a kernel).  Reads nothing
 * else of rt before it knows.
 */
static inline int pto_orch_check(struct pto_runtime *rt, const char *call)
{
	if (rt && __atomic_load_n(&rt->orch.owner, __ATOMIC_RELAXED) ==
		  pto_self() && !pto_forked(rt) && !pto_kernel_current)
		return 0;
	return pto_orch_check_slow(rt, call);
}

/* -EBUSY (said on the log) when a run is in progress on rt. */
int pto_check_idle(struct pto_runtime *rt, const char *call);
/*
 * -EPERM (said on the log) in a child process after fork(): the runtime
 * is its creator's; the child has none of its threads, and shares its
 * device and trace file.
 */
int pto_check_process(const struct pto_runtime *rt, const char *call);
/*
 * Say why call cannot go on while owner holds the runtime: -EBUSY.  Said
 * once per call and run in progress: threads retrying it would flood.
 */
int pto_say_busy(struct pto_runtime *rt, const char *call, uintptr_t owner);

/* orchestrator.c */
int pto_orch_scope_begin(struct pto_runtime *rt);
int pto_orch_init(struct pto_runtime *rt);
void pto_orch_fini(struct pto_runtime *rt);
void pto_orch_run_begin(struct pto_runtime *rt);
uint32_t pto_orch_run_end(struct pto_runtime *rt);
void pto_orch_run_cleanup(struct pto_runtime *rt);

/* scheduler.c */
int pto_sched_init(struct pto_runtime *rt);
void pto_sched_fini(struct pto_runtime *rt);
int pto_sched_start(struct pto_runtime *rt);
void pto_sched_wait_done(struct pto_runtime *rt);
void pto_sched_publish_pending(struct pto_runtime *rt);
bool pto_sched_lend_hand(struct pto_runtime *rt, bool force);

/* Can pto_sched_lend_hand() do anything: not with a scheduler thread. */
static inline bool pto_sched_can_lend(const struct pto_runtime *rt)
{
	return rt->sched.mode != PTO_SCHED_THREAD;
}

/* Spins between two looks for work of an orchestrator lending a hand. */
#define PTO_LEND_EVERY 16
void pto_sched_stop(struct pto_runtime *rt);

#define PTO_RUN_CANCELLED	1u
#define PTO_RUN_OVER		2u	/* no run in progress */

/* Has pto_run_cancel() stopped the run in progress? */
static inline bool pto_run_cancelled(const struct pto_runtime *rt)
{
	return (__atomic_load_n(&rt->run_state, __ATOMIC_ACQUIRE) &
		(PTO_RUN_CANCELLED | PTO_RUN_OVER)) == PTO_RUN_CANCELLED;
}

/* The descriptor of a task handle. */
static inline struct pto_task_desc *pto_desc(struct pto_runtime *rt,
					     uint64_t handle)
{
	struct pto_task_ring *r = &rt->ring[PTO_TASK_RING(handle)];

	return &r->desc[PTO_TASK_SEQ(handle) & r->window_mask];
}

/* The task ring of a scope depth: depths past the last ring share it. */
static inline uint32_t pto_ring_of_depth(struct pto_runtime *rt,
					 uint32_t depth)
{
	return depth < rt->nrings ? depth : rt->nrings - 1;
}

#endif /* PTO_LIB_RUNTIME_H */
