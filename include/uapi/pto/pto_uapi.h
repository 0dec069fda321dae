/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * PTO device ABI, shared by pto.ko and libpto.
 *
 * A context (one open() of /dev/ptoN, or one simulator instance) exposes
 * four regions, each mapped at the offset PTO_IOCTL_SETUP returns:
 *
 *   window   the shared window: a header, then per ring the task
 *            descriptors and the dependency-list pool, then the submission
 *            order ring and the scope-release ring
 *   heap     device memory: one heap ring per task ring, then the memory
 *            pto_malloc() hands out
 *   regs     one register block per core
 *   cring    the completion ring the cores write
 *
 * Every offset inside a region comes from SETUP too; neither side assumes
 * one.  Device addresses are byte offsets into the heap region (the
 * simulator uses host virtual addresses instead, with the same layouts
 * otherwise).
 *
 * Growing: PTO_ABI_VERSION changes only when a layout changes
 * incompatibly, and both sides refuse another one.  Everything else is a
 * feature bit: GET_INFO says what the device supports, SETUP enables what
 * the library knows and wants, so a newer kernel or library works with an
 * older peer for what both know.  Structs passed by ioctl may grow at the
 * end; the driver zero-fills what an older caller did not pass and
 * refuses non-zero bytes it does not know.
 *
 * Every structure is naturally aligned, explicitly padded and fixed in
 * size; padding must be written as zero and is checked by the driver.
 */
#ifndef _UAPI_PTO_H
#define _UAPI_PTO_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Incompatible layout version; see "Growing" above. */
#define PTO_ABI_VERSION		4
#define PTO_WINDOW_MAGIC	0x50544f57	/* "PTOW" */

/* Parameters a task descriptor carries (tensor addresses and scalars). */
#define PTO_MAX_ARGS		24

/* Tasks the host may queue on one core, so cores never idle between tasks. */
#define PTO_CORE_QUEUE_SLOTS	16	/* power of two */

/*
 * Task rings.  Every task belongs to one ring; each ring has its own
 * descriptors, dependency pool and heap ring, and is retired in order
 * independently of the others.  libpto puts a task in the ring of its
 * scope depth.
 */
#define PTO_MAX_RINGS		4

/*
 * A task is named by a handle: its ring in the top bits and its sequence
 * number within the ring below.  Ring r's descriptor of handle h is
 * desc[PTO_TASK_SEQ(h) & (task_window[r] - 1)].
 */
#define PTO_TASK_RING_SHIFT	56
#define PTO_TASK_SEQ_MASK	((_ULL(1) << PTO_TASK_RING_SHIFT) - 1)
#define PTO_TASK_HANDLE(ring, seq) \
	(((__u64)(ring) << PTO_TASK_RING_SHIFT) | ((seq) & PTO_TASK_SEQ_MASK))
#define PTO_TASK_RING(h)	((__u32)((h) >> PTO_TASK_RING_SHIFT))
#define PTO_TASK_SEQ(h)		((h) & PTO_TASK_SEQ_MASK)

/**
 * enum pto_uapi_worker_type - kinds of cores
 * @PTO_UAPI_WORKER_CUBE: matrix (cube) cores
 * @PTO_UAPI_WORKER_VECTOR: vector cores
 * @PTO_UAPI_WORKER_AICPU: the device's general-purpose CPU cores
 * @PTO_UAPI_WORKER_ACCEL: fixed-function accelerators (DMA and the like)
 * @PTO_UAPI_NUM_WORKER_TYPES: number of worker types
 *
 * Cores are numbered in this order: all cube cores first, then vector,
 * AICPU and accelerator cores.
 */
enum pto_uapi_worker_type {
	PTO_UAPI_WORKER_CUBE = 0,
	PTO_UAPI_WORKER_VECTOR = 1,
	PTO_UAPI_WORKER_AICPU = 2,
	PTO_UAPI_WORKER_ACCEL = 3,
	PTO_UAPI_NUM_WORKER_TYPES = 4,
};

/* Names of the worker types, indexed by enum pto_uapi_worker_type. */
#define PTO_UAPI_WORKER_TYPE_NAMES {		\
	[PTO_UAPI_WORKER_CUBE] = "cube",	\
	[PTO_UAPI_WORKER_VECTOR] = "vector",	\
	[PTO_UAPI_WORKER_AICPU] = "aicpu",	\
	[PTO_UAPI_WORKER_ACCEL] = "accel",	\
}

/**
 * enum pto_op - built-in ops
 * @PTO_OP_NOP: any arguments: nothing.
 * @PTO_OP_COPY: dst, src, nbytes: memcpy.
 * @PTO_OP_FILL_U32: dst, value, nbytes: every u32 word of dst = value.
 * @PTO_OP_ADD_F32: dst, a, b, n: dst[i] = a[i] + b[i].
 * @PTO_OP_MUL_F32: dst, a, b, n: dst[i] = a[i] * b[i].
 * @PTO_OP_GEMM_F32: C, A, B, M, N, K, row-major: for each i, j:
 *	acc = C[i][j]; for k in 0..K-1: acc += A[i][k] * B[k][j];
 *	C[i][j] = acc.
 * @PTO_OP_MATMUL_BT_F32: C, A, B, M, N, K:
 *	C[i][j] = sum over k of A[i][k] * B[j][k], from 0.0f, k ascending
 *	(C = A * B^T, the QK step of attention).
 * @PTO_OP_SOFTMAX_PREP_F32: P, m, l, S, scale, rows, cols: per row r,
 *	m[r] = max over c of S[r][c] * scale (c ascending);
 *	P[r][c] = pto_exp(S[r][c] * scale - m[r]);
 *	l[r] = sum over c of P[r][c] (c ascending).
 * @PTO_OP_ONLINE_UPDATE_F32: O, l, m, O_new, l_new, m_new, rows, cols:
 *	online-softmax update, per row r: mx = max(m[r], m_new[r]);
 *	a = pto_exp(m[r] - mx); b = pto_exp(m_new[r] - mx);
 *	l[r] = a * l[r] + b * l_new[r]; O[r][c] = a * O[r][c] + b * O_new[r][c];
 *	m[r] = mx.  pto_exp(-inf) is 0, so m = -inf, l = 0, O = 0 is the empty
 *	state.
 * @PTO_OP_ROW_DIV_F32: dst, O, l, rows, cols: dst[r][c] = O[r][c] / l[r].
 * @PTO_OP_ADD_U32: dst, a, b, nbytes: dst[i] = a[i] + b[i] on u32 words
 *	(wrapping).
 * @PTO_OP_SPIN_NS: ns: keep the core busy for ns nanoseconds, then finish.
 *	Timed by the backend's clock; the driver's version can be cancelled,
 *	which makes it the op task-timeout tests use.
 * @PTO_OP_COUNT: number of ops.
 *
 * Arguments are the task's parameters in order: tensor parameters give
 * device addresses, scalars give values.  Float scalars are passed as the
 * IEEE-754 bit pattern in the low 32 bits.  Every op produces
 * bit-identical results on every backend (no fused multiply-add, a fixed
 * evaluation order, the ops' own exp).
 */
enum pto_op {
	PTO_OP_NOP = 0,
	PTO_OP_COPY = 1,
	PTO_OP_FILL_U32 = 2,
	PTO_OP_ADD_F32 = 3,
	PTO_OP_MUL_F32 = 4,
	PTO_OP_GEMM_F32 = 5,
	PTO_OP_MATMUL_BT_F32 = 6,
	PTO_OP_SOFTMAX_PREP_F32 = 7,
	PTO_OP_ONLINE_UPDATE_F32 = 8,
	PTO_OP_ROW_DIV_F32 = 9,
	PTO_OP_ADD_U32 = 10,
	PTO_OP_SPIN_NS = 11,
	PTO_OP_COUNT = 12,
};

/*
 * Feature bits: GET_INFO reports the device's, SETUP enables a subset.
 * A library enables only bits it knows; a device refuses bits it does not.
 */
/* io_uring commands PTO_URING_CMD_KICK and PTO_URING_CMD_WAIT. */
#define PTO_FEATURE_URING_CMD	_BITULL(0)
/* The fd is poll()able for completions. */
#define PTO_FEATURE_POLL	_BITULL(1)
/*
 * Built-in ops take tensor views (struct pto_view_desc) for the arguments
 * a task's @view_mask names (PTO_TASK_F_VIEWS).
 */
#define PTO_FEATURE_VIEWS	_BITULL(2)
/* Every feature this header defines. */
#define PTO_FEATURES_KNOWN	(PTO_FEATURE_URING_CMD | PTO_FEATURE_POLL | \
				 PTO_FEATURE_VIEWS)

/* ---- tensor views ------------------------------------------------------- */

/* Dimensions of a tensor view. */
#define PTO_MAX_DIMS		4

/**
 * enum pto_dtype - element types of tensor views
 * @PTO_DTYPE_NONE: not a type (0, so a zeroed view is refused)
 * @PTO_DTYPE_U8: unsigned 8-bit integer
 * @PTO_DTYPE_I8: signed 8-bit integer
 * @PTO_DTYPE_U16: unsigned 16-bit integer
 * @PTO_DTYPE_I16: signed 16-bit integer
 * @PTO_DTYPE_F16: IEEE-754 binary16
 * @PTO_DTYPE_BF16: bfloat16
 * @PTO_DTYPE_U32: unsigned 32-bit integer
 * @PTO_DTYPE_I32: signed 32-bit integer
 * @PTO_DTYPE_F32: IEEE-754 binary32
 * @PTO_DTYPE_U64: unsigned 64-bit integer
 * @PTO_DTYPE_I64: signed 64-bit integer
 * @PTO_DTYPE_F64: IEEE-754 binary64
 * @PTO_DTYPE_COUNT: number of values, NONE included
 *
 * Ordered by size, which pto_dtype_size() relies on.
 */
enum pto_dtype {
	PTO_DTYPE_NONE = 0,
	PTO_DTYPE_U8 = 1,
	PTO_DTYPE_I8 = 2,
	PTO_DTYPE_U16 = 3,
	PTO_DTYPE_I16 = 4,
	PTO_DTYPE_F16 = 5,
	PTO_DTYPE_BF16 = 6,
	PTO_DTYPE_U32 = 7,
	PTO_DTYPE_I32 = 8,
	PTO_DTYPE_F32 = 9,
	PTO_DTYPE_U64 = 10,
	PTO_DTYPE_I64 = 11,
	PTO_DTYPE_F64 = 12,
	PTO_DTYPE_COUNT = 13,
};

/**
 * pto_dtype_size() - bytes of one element of a dtype
 * @dtype: enum pto_dtype
 *
 * Return: 1, 2, 4 or 8; 0 for PTO_DTYPE_NONE and unknown values.
 */
static inline __u32 pto_dtype_size(__u32 dtype)
{
	if (dtype == PTO_DTYPE_NONE || dtype >= PTO_DTYPE_COUNT)
		return 0;
	if (dtype <= PTO_DTYPE_I8)
		return 1;
	if (dtype <= PTO_DTYPE_BF16)
		return 2;
	return dtype <= PTO_DTYPE_F32 ? 4 : 8;
}

/**
 * struct pto_view_desc - a tensor view, as a kernel receives it
 * @addr: device address of the view's first element (index 0 in every
 *	dimension; strides are never negative, so its lowest address)
 * @ndim: dimensions in use, 1..PTO_MAX_DIMS
 * @dtype: enum pto_dtype
 * @elem_size: bytes per element, pto_dtype_size(@dtype)
 * @shape: elements along each dimension, outermost first; 1 past @ndim
 * @stride: elements from one index to the next along each dimension;
 *	0 past @ndim
 *
 * Element (i0, i1, ...) is at @addr + (i0 * @stride[0] + i1 * @stride[1]
 * + ...) * @elem_size.  A task's argument for a view parameter is the
 * device address of one of these, in the task's own heap block (it lives
 * as long as the task).
 */
struct pto_view_desc {
	__u64 addr;
	__u32 ndim;
	__u16 dtype;
	__u16 elem_size;
	__u64 shape[PTO_MAX_DIMS];
	__u64 stride[PTO_MAX_DIMS];
};

/* ---- shared window ------------------------------------------------------ */

/**
 * struct pto_window_ident - first line of the window, written at SETUP
 * @magic: PTO_WINDOW_MAGIC
 * @abi_version: PTO_ABI_VERSION of the device
 * @features: PTO_FEATURE_* enabled by SETUP
 * @nrings: task rings set up
 * @__pad0: zero
 * @__pad1: zero
 */
struct pto_window_ident {
	__u32 magic;
	__u32 abi_version;
	__u64 features;
	__u32 nrings;
	__u32 __pad0;
	__u64 __pad1[5];
};

/**
 * struct pto_window_orch - what the orchestrator moves while building tasks
 * @task_top: per ring, sequence numbers below it are submitted
 * @heap_top: per ring, heap ring position allocated up to (monotonic)
 * @dep_top: per ring, dependency entries allocated (monotonic)
 * @__pad0: zero
 *
 * Written for every task; the scheduler never polls it, monitors read it.
 */
struct pto_window_orch {
	__u64 task_top[PTO_MAX_RINGS];
	__u64 heap_top[PTO_MAX_RINGS];
	__u64 dep_top[PTO_MAX_RINGS];
	__u64 __pad0[4];
};

/**
 * struct pto_window_notify - what the orchestrator publishes
 * @task_head: tasks published: positions of the order ring below it
 * @release_head: scope-release entries written (monotonic)
 * @orch_done: the orchestration function has returned
 * @sched_wake: bumped after publishing work for the scheduler
 * @__pad0: zero
 *
 * Written in batches, at scope ends and at the end of a run; the
 * scheduler polls it.  Polling task_head rather than the next descriptor
 * leaves the descriptors' lines alone while the orchestrator fills them.
 */
struct pto_window_notify {
	__u64 task_head;
	__u64 release_head;
	__u32 orch_done;
	__u32 sched_wake;
	__u64 __pad0[5];
};

/**
 * struct pto_ring_head - the scheduler's view of a ring's oldest task
 * @state: libpto's state of the task (0 waiting for producers, 1 ready or
 *	running, 2 completed, 3 consumed), or 0xffff when the ring is empty
 * @scope: 1 while the task's scope still holds it
 * @consumers: consumers still holding it (not completed yet)
 *
 * Refreshed whenever the scheduler goes idle, for the orchestrator's
 * deadlock diagnosis.
 */
struct pto_ring_head {
	__u16 state;
	__u16 scope;
	__u32 consumers;
};

/**
 * struct pto_window_sched - what the scheduler writes
 * @last_task_alive: per ring, the oldest sequence number not yet retired
 * @heap_tail: per ring, heap ring position everything before is free
 * @dep_tail: per ring, dependency entries below it are free
 * @release_tail: scope-release entries consumed
 * @progress: bumped whenever a ring tail advances
 * @active: tasks scanned and not yet completed
 * @waiting: of those, tasks waiting for producers
 * @__pad0: zero
 * @tasks_scanned: tasks the scheduler has taken in
 * @tasks_completed: tasks completed
 * @head: per ring, its oldest task as of the scheduler's last idle moment
 * @__pad1: zero
 */
struct pto_window_sched {
	__u64 last_task_alive[PTO_MAX_RINGS];
	__u64 heap_tail[PTO_MAX_RINGS];
	__u64 dep_tail[PTO_MAX_RINGS];
	__u64 release_tail;
	__u32 progress;
	__u32 active;
	__u32 waiting;
	__u32 __pad0;
	__u64 tasks_scanned;
	__u64 tasks_completed;
	struct pto_ring_head head[PTO_MAX_RINGS];
	__u64 __pad1[3];
};

/**
 * struct pto_window_flags - a side's sleep and failure flags
 * @sleeping: this side is asleep and must be woken (the orchestrator's:
 *	PTO_ORCH_WAITS_*)
 * @error: scheduler's flags: the first task error (-errno) of a run, or 0
 * @__pad1: zero
 *
 * Flags change only when a side goes to sleep, wakes up or fails, so they
 * sit on lines of their own, which stay cached on both sides while work
 * flows.
 */
struct pto_window_flags {
	__u32 sleeping;
	__s32 error;
	__u64 __pad1[7];
};

/* What an orchestrator asleep (orch_flags.sleeping) waits for. */
#define PTO_ORCH_WAITS_RING	1	/* room in a ring */
#define PTO_ORCH_WAITS_TASKS	2	/* every published task done */

/**
 * struct pto_window_header - the window's first page
 * @ident: written once, by the device, at SETUP
 * @orch: orchestrator-written, per task
 * @notify: orchestrator-written, polled by the scheduler
 * @sched: scheduler-written
 * @orch_flags: the orchestrator sleeps on sched.progress
 * @sched_flags: the scheduler sleeps on notify.sched_wake
 *
 * Every line has one writer and one rate.
 */
struct pto_window_header {
	struct pto_window_ident ident;
	struct pto_window_orch orch;
	struct pto_window_notify notify;
	struct pto_window_sched sched;
	struct pto_window_flags orch_flags;
	struct pto_window_flags sched_flags;
};

/**
 * struct pto_task_desc - a task, as the cores read it
 * @task_id: the task's handle (PTO_TASK_HANDLE()), stored last
 * @kernel_id: kernel bound with PTO_IOCTL_BIND_OP (or, on the simulator,
 *	a registered C function)
 * @worker_type: enum pto_uapi_worker_type the task runs on
 * @nargs: arguments the kernel receives: in @args, or with
 *	PTO_TASK_F_ARGS_IN_HEAP in an array @args[0] points to
 * @flags: PTO_TASK_F_*
 * @fanin_count: producers listed from @fanin_head
 * @fanin_head: index + 1 of the first producer's entry in the dependency
 *	pool of the task's ring, 0 for none
 * @packed_end: heap ring position just past this task's outputs
 * @args: tensor device addresses and scalar values, in parameter order
 * @view_mask: with PTO_TASK_F_VIEWS, bit i set when argument i (i < 32)
 *	is the device address of a struct pto_view_desc
 * @__pad1: zero
 * @__pad0: zero
 *
 * Indexed by PTO_TASK_SEQ(task_id) & (task_window - 1) in the descriptor
 * array of the task's ring, written by the orchestrator only.  Consumers,
 * reference counts and states are the scheduler's own and live outside
 * the window, so a producer's lines are never written after publication.
 * The header is 32 bytes: a task with up to four arguments fits in one
 * cache line.  A task's dependency entries are the fanin_count entries
 * allocated for it, in task order, so retiring it frees exactly those.
 */
struct pto_task_desc {
	__u64 task_id;
	__u32 kernel_id;
	__u8 worker_type;
	__u8 nargs;
	__u16 flags;
	__u32 fanin_count;
	__u32 fanin_head;
	__u64 packed_end;
	__u64 args[PTO_MAX_ARGS];
	__u32 view_mask;
	__u32 __pad1;
	__u64 __pad0[3];
};

/* The task owns heap ring space (of its ring) up to packed_end. */
#define PTO_TASK_F_HEAP		_BITUL(0)
/*
 * More than PTO_MAX_ARGS arguments: @args[0] is the address of an array of
 * @nargs words in the task's own heap block (freed with the task).  With
 * PTO_TASK_F_VIEWS too, PTO_ARGS_VIEW_WORDS(@nargs) more words follow the
 * array: bit i % 64 of word i / 64 is set when argument i is a view (all
 * of them, where @view_mask has room for the first 32 only).  Only the
 * simulator's C kernels take that many; pto.ko's built-in ops never do,
 * and it refuses such a task (nargs > PTO_MAX_ARGS).
 */
#define PTO_TASK_F_ARGS_IN_HEAP	_BITUL(1)
#define PTO_ARGS_VIEW_WORDS(nargs)	(((nargs) + 63) / 64)
/*
 * Some arguments are tensor views: @view_mask says which.  Only a device
 * with PTO_FEATURE_VIEWS enabled is given such a task.
 */
#define PTO_TASK_F_VIEWS	_BITUL(2)
/*
 * Never dispatched: the scheduler completes it once its producers have
 * (libpto's runtime-owned buffers, pto_alloc(), are such tasks).  A device
 * never sees one in a core queue.
 */
#define PTO_TASK_F_NO_DISPATCH	_BITUL(3)

/**
 * struct pto_dep_entry - one producer of a task
 * @task_id: the producer's handle (any ring)
 * @next: index + 1 of the next entry in the same pool, 0 ends the list
 * @__pad0: zero
 */
struct pto_dep_entry {
	__u64 task_id;
	__u32 next;
	__u32 __pad0;
};

/**
 * struct pto_release_entry - a scope's end: release [begin, end)
 * @begin: handle of the first task released
 * @end: handle just past the last; same ring as @begin
 */
struct pto_release_entry {
	__u64 begin;
	__u64 end;
};

/*
 * The submission order ring: entry g (mod its size) holds the handle + 1
 * of the g-th task submitted, across all rings (0: not written yet), with
 * PTO_ORDER_UNSCOPED or'ed in, stored with release once the descriptor is
 * complete.  The scheduler takes tasks in this order.
 */
/*
 * The task made no runtime-owned buffer (no OUTPUT parameter), so its
 * scope does not hold it: it retires once it and its consumers are done,
 * while its scope goes on.  Only the scheduler reads the order ring.
 */
#define PTO_ORDER_UNSCOPED	_BITULL(63)

/* ---- registers ---------------------------------------------------------- */

/**
 * enum pto_core_status - what a core reports in its register block
 * @PTO_CORE_IDLE: nothing yet
 * @PTO_CORE_ACK: the task in status_task started
 * @PTO_CORE_FIN: the task in status_task finished
 */
enum pto_core_status {
	PTO_CORE_IDLE = 0,
	PTO_CORE_ACK = 1,
	PTO_CORE_FIN = 2,
};

/**
 * struct pto_core_regs - one core's register block
 * @doorbell: host: tasks dispatched (count)
 * @__pad0: zero
 * @queue: host: task handle + 1 of dispatched tasks, see below
 * @__pad1: zero
 * @consumed: core: tasks taken (count)
 * @status: core: enum pto_core_status
 * @core_waiting: core: asleep on the doorbell, must be kicked
 * @__pad2: zero
 * @status_task: core: the task status refers to
 * @busy_ns: core: total time spent executing
 * @__pad3: zero
 *
 * The first three cache lines only the host writes, the last only the
 * core, so dispatching and executing never fight over a line.  The host
 * queues up to PTO_CORE_QUEUE_SLOTS tasks: it stores handle + 1 in
 * queue[doorbell % PTO_CORE_QUEUE_SLOTS] and then increments doorbell
 * (release); the core takes entries up to doorbell and advances consumed.
 * Blocks are regs_stride bytes apart (SETUP).
 */
struct pto_core_regs {
	__u32 doorbell;
	__u32 __pad0;
	__u64 queue[PTO_CORE_QUEUE_SLOTS];
	__u64 __pad1[7];
	__u32 consumed;
	__u32 status;
	__u32 core_waiting;
	__u32 __pad2;
	__u64 status_task;
	__u64 busy_ns;
	__u64 __pad3[4];
};

/* ---- completion ring ---------------------------------------------------- */

/**
 * struct pto_completion - one completed task
 * @task_id: the task's handle
 * @core: the core that ran it
 * @status: 0 or a negative errno
 * @start_ns: CLOCK_MONOTONIC when it started
 * @end_ns: CLOCK_MONOTONIC when it ended
 * @seq: low 32 bits of the ring position + 1, stored last once valid
 * @__pad0: zero
 * @__pad1: zero
 */
struct pto_completion {
	__u64 task_id;
	__u32 core;
	__s32 status;
	__u64 start_ns;
	__u64 end_ns;
	__u32 seq;
	__u32 __pad0;
	__u64 __pad1[3];
};

/**
 * struct pto_cring_header - the completion ring's header
 * @size: entries, a power of two
 * @__pad0: zero
 * @__pad1: zero
 * @tail: cores: entries reserved
 * @__pad2: zero
 * @head: host: entries consumed
 * @__pad3: zero
 *
 * The entries follow at cring_entries_offset (SETUP).  Cores reserve an
 * entry by incrementing tail, fill it, then store seq last.
 */
struct pto_cring_header {
	__u32 size;
	__u32 __pad0;
	__u64 __pad1[7];
	__u64 tail;
	__u64 __pad2[7];
	__u64 head;
	__u64 __pad3[7];
};

/* ---- ioctls ------------------------------------------------------------- */

/* 0xBA 00-0F: see Documentation/userspace-api/ioctl/ioctl-number.rst */
#define PTO_IOCTL_BASE		0xBA

/**
 * struct pto_info - PTO_IOCTL_GET_INFO: what the device is and supports
 * @abi_version: out: PTO_ABI_VERSION of the driver
 * @flags: in: must be 0
 * @features: out: PTO_FEATURE_* the device supports
 * @cores: out: cores of each worker type
 * @max_rings: out: task rings a context may set up
 * @max_task_window: out: largest task window of one ring
 * @max_dep_pool: out: largest dependency pool of one ring
 * @max_args: out: PTO_MAX_ARGS
 * @max_heap_size: out: largest heap region of a context (bytes)
 * @ops: out: bit n set when built-in op n is supported
 * @task_timeout_ms: out: a task running longer fails, 0 for never
 * @max_wait_ms: out: longest a parked PTO_URING_CMD_WAIT stays parked; a
 *	longer timeout_ms completes with 0 after this long (0: no bound, or
 *	a driver older than this field)
 * @max_uring_waits: out: PTO_URING_CMD_WAITs one context may have parked;
 *	one more completes with -EBUSY (0: no bound, or an older driver)
 * @mem_avail: out: bytes of regions the caller may still set up, under
 *	the driver's max_memory and the user's max_user_memory at the time
 *	of the call (0: an older driver; ~0 would mean no bound)
 * @__pad: must be 0
 *
 * The whole struct is an out field but @flags, which is in: GET_INFO
 * must be passed a zeroed struct.
 */
struct pto_info {
	__u32 abi_version;
	__u32 flags;
	__u64 features;
	__u32 cores[PTO_UAPI_NUM_WORKER_TYPES];
	__u32 max_rings;
	__u32 max_task_window;
	__u32 max_dep_pool;
	__u32 max_args;
	__u64 max_heap_size;
	__u64 ops;
	__u64 task_timeout_ms;
	__u32 max_wait_ms;
	__u32 max_uring_waits;
	__u64 mem_avail;
	__u64 __pad[2];
};

/**
 * struct pto_ring_geometry - sizes and places of one task ring
 * @task_window: in: descriptors, a power of two
 * @dep_pool_size: in: dependency-list entries
 * @heap_size: in: bytes of the ring's heap, a multiple of 64
 * @desc_offset: out: the descriptor array, from the window's start
 * @dep_offset: out: the dependency pool, from the window's start
 * @heap_offset: out: the ring's heap, from the heap region's start
 * @__pad: must be 0
 */
struct pto_ring_geometry {
	__u32 task_window;
	__u32 dep_pool_size;
	__u64 heap_size;
	__u64 desc_offset;
	__u64 dep_offset;
	__u64 heap_offset;
	__u64 __pad;
};

/**
 * struct pto_region - one mmap()able region
 * @offset: out: the mmap offset to map it at (page aligned)
 * @size: out: its length in bytes (page aligned)
 */
struct pto_region {
	__u64 offset;
	__u64 size;
};

/**
 * struct pto_setup - PTO_IOCTL_SETUP: create a context's regions
 * @flags: in: must be 0
 * @nrings: in: task rings, 1..max_rings
 * @features: in: PTO_FEATURE_* to enable, a subset of GET_INFO's
 * @order_ring_size: in: submission order entries, a power of two
 * @release_ring_size: in: scope-release entries, a power of two
 * @cring_size: in: completion entries, a power of two
 * @__pad0: must be 0
 * @heap_size: in: the whole heap region: every ring's heap, then
 *	pto_malloc() memory; at most max_heap_size
 * @ring: in and out, one per ring (entries past @nrings must be 0)
 * @window: out: the shared window region
 * @heap: out: the heap region
 * @regs: out: the register blocks
 * @cring: out: the completion ring
 * @header_offset: out: struct pto_window_header, in the window
 * @order_offset: out: the order ring (__u64 handles), in the window
 * @release_offset: out: the scope-release ring, in the window
 * @arena_offset: out: the heap's first byte past the rings
 * @cring_entries_offset: out: the first struct pto_completion, in cring
 * @regs_stride: out: bytes from one core's register block to the next
 * @num_cores: out: register blocks, cores in worker-type order
 * @__pad1: must be 0
 *
 * Out fields must be passed as 0.  A context is set up once; SETUP again
 * fails with -EBUSY.
 */
struct pto_setup {
	__u32 flags;
	__u32 nrings;
	__u64 features;
	__u32 order_ring_size;
	__u32 release_ring_size;
	__u32 cring_size;
	__u32 __pad0;
	__u64 heap_size;
	struct pto_ring_geometry ring[PTO_MAX_RINGS];
	struct pto_region window;
	struct pto_region heap;
	struct pto_region regs;
	struct pto_region cring;
	__u64 header_offset;
	__u64 order_offset;
	__u64 release_offset;
	__u64 arena_offset;
	__u64 cring_entries_offset;
	__u32 regs_stride;
	__u32 num_cores;
	__u64 __pad1[4];
};

/* Kernel ids a context may bind. */
#define PTO_MAX_KERNELS		1024

/**
 * struct pto_bind_op - PTO_IOCTL_BIND_OP: bind a kernel id to a built-in op
 * @kernel_id: in: < PTO_MAX_KERNELS
 * @worker_type: in: enum pto_uapi_worker_type whose cores run it
 * @op: in: enum pto_op
 * @flags: in: must be 0
 */
struct pto_bind_op {
	__u32 kernel_id;
	__u32 worker_type;
	__u32 op;
	__u32 flags;
};

/**
 * struct pto_kick - PTO_IOCTL_KICK: the host wrote a doorbell
 * @flags: in: must be 0
 * @core: in: the core whose doorbell was written, or PTO_KICK_ALL
 * @__pad: must be 0
 */
struct pto_kick {
	__u32 flags;
	__u32 core;
	__u64 __pad;
};

/* struct pto_kick core value: look at every core's doorbell. */
#define PTO_KICK_ALL		0xffffffffu

/**
 * struct pto_wait - PTO_IOCTL_WAIT: sleep until completions are posted
 * @flags: in: must be 0
 * @__pad0: must be 0
 * @timeout_ns: in: 0 = do not sleep; out, when interrupted by a signal:
 *	the time left, so a restarted (SA_RESTART) or retried WAIT sleeps
 *	only for the rest
 * @cring_head: in: the host's consumed position
 * @cring_tail: out: completions reserved by the cores
 */
struct pto_wait {
	__u32 flags;
	__u32 __pad0;
	__u64 timeout_ns;
	__u64 cring_head;
	__u64 cring_tail;
};

#define PTO_IOCTL_GET_INFO	_IOWR(PTO_IOCTL_BASE, 0x00, struct pto_info)
#define PTO_IOCTL_SETUP		_IOWR(PTO_IOCTL_BASE, 0x01, struct pto_setup)
#define PTO_IOCTL_BIND_OP	_IOW(PTO_IOCTL_BASE, 0x02, struct pto_bind_op)
#define PTO_IOCTL_KICK		_IOW(PTO_IOCTL_BASE, 0x03, struct pto_kick)
#define PTO_IOCTL_WAIT		_IOWR(PTO_IOCTL_BASE, 0x04, struct pto_wait)

/*
 * io_uring: IORING_OP_URING_CMD with these cmd_op values (feature
 * PTO_FEATURE_URING_CMD); the 16-byte sqe->cmd area holds the struct, so
 * plain 64-byte SQEs suffice.
 */
#define PTO_URING_CMD_KICK	0x01	/* struct pto_kick; res = 0 or -errno */
#define PTO_URING_CMD_WAIT	0x02	/* struct pto_uring_wait */

/**
 * struct pto_uring_wait - PTO_URING_CMD_WAIT
 * @cring_head: the host's consumed position
 * @timeout_ms: complete with 0 after this long; 0 completes at once
 * @flags: must be 0
 *
 * Completes once the completion ring holds entries beyond cring_head, or
 * after timeout_ms (at most struct pto_info's max_wait_ms).  res =
 * completions available (tail - head, at most INT_MAX), 0 on timeout, or
 * -errno: -EIO for a failed context, -ENODEV once the device is gone,
 * -ECANCELED when the context is torn down or the WAIT cancelled (its
 * ring closed, its submitter exiting or exec'ing), -EBUSY when the
 * context has max_uring_waits WAITs parked already.
 */
struct pto_uring_wait {
	__u64 cring_head;
	__u32 timeout_ms;
	__u32 flags;
};

#endif /* _UAPI_PTO_H */
