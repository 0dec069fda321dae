/* SPDX-License-Identifier: MIT */
/*
 * Random programs for the differential tests (test_random, the stress
 * driver): a generator of scoped task lists over overlapping regions, the
 * kernel that hashes what it reads into what it writes, the orchestration
 * that submits a program through the recorder (testlib.h), and the check
 * against its sequential replay.
 *
 * A program is a list of ops: scope begins and ends and tasks with up to
 * RP_MAX_NP tensor parameters on RP_NSHARED shared buffers, a read-only one
 * (the only NODEP target) and the OUTPUT buffers of tasks still alive.
 * The generators keep every program free of deadlock by construction, ring
 * by ring: tasks held by open scopes pin their ring's task window and heap,
 * so in no ring may the tasks from the oldest one still held to the newest
 * exceed window - 1, nor their OUTPUTs the heap ring; they close scopes (or
 * end the program) instead.  A program generated for a configuration must
 * therefore run to completion on it; any error is a bug.
 *
 * With rp_shape.views, a program also passes tensor views (struct
 * pto_view) of its buffers, which it sees as matrices and N-D tensors of
 * elements of 1, 2, 4 or 8 bytes: tiles, rows, columns, strided slices,
 * transposes, 3-D and 4-D splits, broadcasts (a stride of 0, read only)
 * and empty views, mostly in one layout per buffer, sometimes in another
 * dtype or row length over the same bytes, mixed with byte ranges of the
 * same buffers; OUTPUT views, and pto_alloc() buffers that tasks fill
 * (often as disjoint tiles, concurrently) before anything reads them.
 * The kernel reads and writes a view element by element through its
 * descriptor, in index order, and hashes the descriptor too, so a wrong
 * descriptor or a missing dependency changes the result.
 * rp_generate_tiles() makes programs whose dependencies are known
 * exactly: disjoint tiles of a matrix written concurrently, then tasks
 * reading tiles, rows and columns of it (rp_prog.edges).
 */
#ifndef PTO_SELFTESTS_RANDPROG_H
#define PTO_SELFTESTS_RANDPROG_H

#include <stdatomic.h>

#include "testlib.h"

#define RP_MAX_TASKS 256
#define RP_MAX_OPS (3 * RP_MAX_TASKS + 16)
/* tensors per task: 4 scalars + 2 per tensor <= PTO_MAX_PARAMS */
#define RP_MAX_NP 10
#define RP_MAX_OUTS (RP_MAX_TASKS * RP_MAX_NP)
#define RP_MAX_DEPTH 6
#define RP_NSHARED 3
#define RP_CONST_BUF RP_NSHARED	/* read-only: the only NODEP target */
#define RP_SH_BYTES 384
#define RP_OUT_BASE 100		/* buffer ids from here are OUTPUTs */

/* rp_op.delay: sleep instead of spinning for the duration */
#define RP_DELAY_SLEEP (1ull << 63)
/* rp_op.delay: never return (to test a watchdog) */
#define RP_DELAY_FOREVER (RP_DELAY_SLEEP | 1ull << 62)

enum { RP_BEGIN, RP_END, RP_TASK, RP_ALLOC };

/* A view of a program's buffer, in elements (dimensions past ndim: 1, 0). */
struct rp_view {
	uint8_t dtype, ndim;
	uint16_t off;
	uint16_t shape[PTO_MAX_DIMS];
	uint16_t stride[PTO_MAX_DIMS];
};

struct rp_param {
	int kind;
	int buf;
	uint32_t off, nb;	/* in bytes; an OUTPUT view: its buffer's */
	int view;		/* the tensor is v, not off and nb */
	struct rp_view v;
};

/* An RP_ALLOC is a pto_alloc() of OUTPUT view p[0]. */
struct rp_op {
	int op;
	int type;
	int np;
	uint64_t delay;		/* ns the kernel takes | RP_DELAY_SLEEP */
	struct rp_param p[RP_MAX_NP];
};

struct rp_prog {
	struct rp_op ops[RP_MAX_OPS];
	int nops, ntasks, nouts;
	uint32_t out_nb[RP_MAX_OUTS];
	int out_dies[RP_MAX_OUTS];	/* op index of the END freeing it */
	int out_born[RP_MAX_OUTS];
	void *out_addr[RP_MAX_OUTS];
	/*
	 * Dependencies the program takes (pto_stats.edges), when known:
	 * exactly when edges_exact, else at most; -1: not known.
	 */
	int64_t edges;
	int edges_exact;
};

/* The runtime a program is generated for. */
struct rp_cfg {
	uint32_t nrings;
	uint32_t window[PTO_MAX_RINGS];
	uint64_t heap[PTO_MAX_RINGS];
	uint32_t cores[PTO_NUM_WORKER_TYPES];
};

/* Shape of the programs. */
struct rp_shape {
	int max_tasks;		/* at most RP_MAX_TASKS */
	int max_depth;		/* scopes nested inside the run's, <= 5 */
	int max_np;		/* tensor parameters of a random task */
	int views;		/* also views and pto_alloc() (see above) */
};

/* Task Bench's dependence patterns (rp_generate_pattern()). */
enum rp_pattern {
	RP_TRIVIAL, RP_STENCIL, RP_FFT, RP_TREE, RP_ALL_TO_ALL, RP_SPREAD,
	RP_NPATTERNS
};

extern const char *const rp_pattern_names[RP_NPATTERNS];

/* Once, before anything below. */
void rp_init(void);

/* Random scopes and tasks on worker types with cores. */
void rp_generate(struct rp_prog *pg, struct tl_rng *rng,
		 const struct rp_cfg *cfg, const struct rp_shape *shape);
/*
 * Disjoint tiles (some as byte ranges, some transposed or split into
 * 4-D) of a row-major matrix in shared buffer 0 written by concurrent
 * tasks, then tasks reading views of it of the same layout, each writing
 * its own part of buffer 2, all in one scope: sets pg->edges.
 */
void rp_generate_tiles(struct rp_prog *pg, struct tl_rng *rng,
		       const struct rp_cfg *cfg);
/*
 * A pattern over width points for steps timesteps, a scope per timestep
 * nested inside outer scopes that hold an OUTPUT every step reads.  The
 * program stops early where a ring could not hold what its scopes keep.
 */
void rp_generate_pattern(struct rp_prog *pg, struct tl_rng *rng,
			 const struct rp_cfg *cfg, enum rp_pattern pat,
			 int width, int steps);

/* The kernel, registered as kernel id type + 1 on every type with cores. */
int rp_register(struct tl_rec *rec, const struct rp_cfg *cfg);

/*
 * Have rt fill the cores' queues PTO_CORE_QUEUE_SLOTS deep with every
 * kernel's tasks, long ones too, where it would only for kernels that
 * have run very briefly many times (lib/pace.h): programs are too short
 * to earn that, and their first tasks run long, cold.
 */
void rp_deep_queues(struct pto_runtime *rt);

/* A running program; the shared buffers are pto_malloc()ed by the caller. */
struct rp_ctx {
	struct tl_rec *rec;
	struct rp_prog *pg;
	uint64_t *shared[RP_NSHARED + 1];
	uint64_t tag;
	int bad_out;		/* misaligned or overlapping live OUTPUTs */
	int gated;		/* tasks wait until the last submit */
};

/*
 * Could the whole program be submitted with nothing completing (all tasks
 * in the task window, all OUTPUTs in half the heap ring, in every ring)?
 * Then its tasks may be gated: held until the last submit.
 */
int rp_gate_ok(const struct rp_prog *pg, const struct rp_cfg *cfg);
/* New random contents for the shared buffers, recorded as host buffers. */
void rp_fill_shared(struct rp_ctx *c, struct tl_rng *rng);
/* The orchestration: pto_run(rt, rp_orch, ctx). */
int rp_orch(struct pto_runtime *rt, void *arg);
/*
 * Replay the program and compare the shared buffers: 0, or -1 with why
 * (and where) in msg.
 */
int rp_check(struct rp_ctx *c, char *msg, size_t len);
/* The program as TAP diagnostics. */
void rp_dump(const struct rp_prog *pg);

/* Gated tasks that gave up waiting (a wrongly inferred dependency). */
extern atomic_int rp_gate_timeouts;
/* Tasks that started on a core (pto_core_id()) already running one. */
extern atomic_int rp_core_overlaps;

#endif /* PTO_SELFTESTS_RANDPROG_H */
