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

#include <pto/pto.h>
#include <pto/pto_statspage.h>

#include "backend.h"
#include "rings.h"
#include "tensormap.h"

#define PTO_KERNEL_NAME_MAX 32

/*
 * State one thread writes all the time starts on a line pair of its own
 * (the adjacent-line prefetcher moves lines in pairs), so the orchestrator
 * and the scheduler never slow each other down through false sharing.
 */
#define PTO_OWN_LINES __attribute__((aligned(128)))

struct pto_kernel {
	bool registered;
	bool builtin;
	uint32_t type;
	uint32_t op;
	pto_kernel_fn fn;
	char name[PTO_KERNEL_NAME_MAX];
};

/* One open scope: where it began and its first held segment. */
struct pto_scope {
	uint64_t begin;		/* first task id submitted inside it */
	uint64_t seg_start;	/* start of the segment it currently owns */
	uint32_t seg_base;	/* segment stack depth when it began */
};

/* A run of task ids owned by one scope, released when that scope ends. */
struct pto_segment {
	uint64_t begin;
	uint64_t end;
};

struct pto_orchestrator {
	struct pto_scope *scopes;
	uint32_t nscopes, scopes_cap;
	struct pto_segment *segs;
	uint32_t nsegs, segs_cap;

	struct pto_tensormap tm;
	uint64_t tm_cleaned;	/* tasks below this had their entries freed */
	uint64_t *dep_seen;	/* per slot: last consumer that linked it */
	uint64_t next_id;	/* next task id; notify.task_head trails it */
	uint64_t heap_floor;	/* live heap data starts no lower than this */
	uint64_t last_alive;	/* copies of the scheduler's tails */
	uint64_t heap_tail;
	uint64_t dep_tail;
	uint64_t release_tail;
	uint64_t release_head;	/* scope-release entries written */
	uint32_t dep_idx;	/* pool index of orch.dep_top */
	uint64_t *scratch_ids;	/* producers of the task being submitted */
	uint32_t scratch_cap;
	int error;		/* first error of this run */
	bool in_run;
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
	uint32_t waiting;	/* producers not yet completed */
	uint32_t refs;		/* 1 (scope) + consumers holding the task */
	uint32_t released;	/* references dropped */
	uint32_t fanout_head;	/* consumers to notify: dep index + 1 */
};

/* Scheduler-private twin of a dependency-pool entry (one edge). */
struct pto_sched_dep {
	uint64_t consumer;	/* the task whose fanin lists this entry */
	uint32_t next;		/* next consumer of the same producer */
	uint32_t held;		/* the consumer holds the producer */
};

struct pto_sched {
	pthread_t thread;
	struct pto_sched_slot *slot;
	struct pto_sched_dep *dep;	/* one per dependency-pool entry */
	struct pto_ready_queue ready[PTO_NUM_WORKER_TYPES];
	uint32_t *core_outstanding;	/* tasks queued on each core */
	uint32_t *rr;			/* per type: next core to try */
	uint64_t scanned;		/* tasks below were scanned */
	uint64_t peeked;		/* tasks below are known complete */
	uint64_t retired;		/* tasks below were retired */
	uint64_t heap_tail;		/* the tails as of retired */
	uint64_t dep_tail;
	uint32_t unpublished;		/* retired, not yet in the window */
	uint64_t cring_head;
	uint32_t outstanding;		/* dispatched, not completed */
	uint32_t cring_size;
	uint32_t idle_sleeps;		/* sleeps since work was last found */
	uint32_t spin_budget;		/* idle iterations before sleeping */
	uint32_t wake_batch;		/* retirements per orchestrator wake */
	uint32_t retired_unwoken;	/* retired since it was last woken */
	uint64_t last_stats_ns;
	bool failed;			/* a task failed: cancel the rest */
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
	struct pto_backend be;
	struct pto_window_header *win;
	struct pto_task_desc *desc;
	uint32_t window_mask;
	uint64_t heap_ring_size;
	uint32_t dep_pool_size;
	uint32_t release_mask;

	struct pto_kernel kernels[PTO_MAX_KERNELS];

	struct pto_orchestrator orch PTO_OWN_LINES;
	struct pto_sched sched PTO_OWN_LINES;

	/* pto_malloc arena: heap offsets [heap_ring_size, heap_size) */
	pthread_mutex_t arena_lock;
	struct pto_arena *arena;

	/* statistics: st is orchestrator-written except the fields in sst */
	struct pto_stats st PTO_OWN_LINES;
	struct pto_sched_stats sst PTO_OWN_LINES;
	struct pto_statspage *page PTO_OWN_LINES;
	struct pto_trace *trace;
};

/* orchestrator.c */
int pto_orch_init(struct pto_runtime *rt);
void pto_orch_fini(struct pto_runtime *rt);
void pto_orch_run_begin(struct pto_runtime *rt);
int pto_orch_run_end(struct pto_runtime *rt);
void pto_orch_run_cleanup(struct pto_runtime *rt);

/* scheduler.c */
int pto_sched_init(struct pto_runtime *rt);
void pto_sched_fini(struct pto_runtime *rt);
int pto_sched_start(struct pto_runtime *rt);
void pto_sched_join(struct pto_runtime *rt);

static inline struct pto_task_desc *pto_desc(struct pto_runtime *rt,
					     uint64_t task_id)
{
	return &rt->desc[task_id & rt->window_mask];
}

#endif /* PTO_LIB_RUNTIME_H */
