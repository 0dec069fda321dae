/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * The device ABI header libpto 0.1 installed next to pto.h, kept verbatim
 * for selftests/abi.  Do not change it.
 */
/*
 * PTO device ABI, shared by pto.ko and libpto.
 *
 * A context (one open() of /dev/ptoN, or one sim instance) exposes four
 * regions:
 *
 *   window   shared window: header, task descriptors, dependency-list pool,
 *            scope-release ring
 *   heap     device memory: heap ring followed by the pto_malloc arena
 *   regs     one cache-line register block per core
 *   cring    completion ring written by the cores
 *
 * Device addresses are byte offsets into the heap region.  The sim backend
 * uses host virtual addresses instead, with the same layouts otherwise.
 *
 * Every structure is naturally aligned, explicitly padded and fixed in
 * size; padding must be written as zero and is checked by the driver.
 */
#ifndef _UAPI_PTO_H
#define _UAPI_PTO_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define PTO_ABI_VERSION		2
#define PTO_WINDOW_MAGIC	0x50544f57	/* "PTOW" */

/* Parameters a task descriptor carries (tensor addresses and scalars). */
#define PTO_MAX_ARGS		24

/* Tasks the host may queue on one core, so cores never idle between tasks. */
#define PTO_CORE_QUEUE_SLOTS	4	/* power of two */

enum pto_uapi_worker_type {
	PTO_UAPI_WORKER_CUBE = 0,
	PTO_UAPI_WORKER_VECTOR = 1,
	PTO_UAPI_WORKER_AICPU = 2,
	PTO_UAPI_WORKER_ACCEL = 3,
	PTO_UAPI_NUM_WORKER_TYPES = 4,
};

/*
 * Built-in ops.  Arguments are the task's parameters in order: tensor
 * parameters give device addresses, scalars give values.  Float scalars are
 * passed as the IEEE-754 bit pattern in the low 32 bits.  Every op produces
 * bit-identical results on every backend (no fused multiply-add, fixed
 * evaluation order, the exp below).
 */
enum pto_op {
	PTO_OP_NOP = 0,		/* any args: nothing */
	PTO_OP_COPY = 1,	/* dst, src, nbytes: memcpy */
	PTO_OP_FILL_U32 = 2,	/* dst, value, nbytes: every u32 word = value */
	PTO_OP_ADD_F32 = 3,	/* dst, a, b, n: dst[i] = a[i] + b[i] */
	PTO_OP_MUL_F32 = 4,	/* dst, a, b, n: dst[i] = a[i] * b[i] */
	/*
	 * C, A, B, M, N, K (row-major): for each i, j: acc = C[i][j];
	 * for k in 0..K-1: acc += A[i][k] * B[k][j]; C[i][j] = acc
	 */
	PTO_OP_GEMM_F32 = 5,
	/*
	 * C, A, B, M, N, K: C[i][j] = sum_k A[i][k] * B[j][k], acc from 0.0f,
	 * k ascending (C = A * B^T; the QK step of attention).
	 */
	PTO_OP_MATMUL_BT_F32 = 6,
	/*
	 * P, m, l, S, scale, rows, cols: per row r,
	 *   m[r] = max_c(S[r][c] * scale)          (c ascending)
	 *   P[r][c] = pto_exp(S[r][c] * scale - m[r])
	 *   l[r] = sum_c P[r][c]                   (c ascending)
	 */
	PTO_OP_SOFTMAX_PREP_F32 = 7,
	/*
	 * O, l, m, O_new, l_new, m_new, rows, cols: online-softmax update, per
	 * row r: mx = max(m[r], m_new[r]); a = pto_exp(m[r] - mx);
	 * b = pto_exp(m_new[r] - mx); l[r] = a * l[r] + b * l_new[r];
	 * O[r][c] = a * O[r][c] + b * O_new[r][c]; m[r] = mx.
	 * pto_exp(-inf) is 0, so m = -inf, l = 0, O = 0 is the empty state.
	 */
	PTO_OP_ONLINE_UPDATE_F32 = 8,
	/* dst, O, l, rows, cols: dst[r][c] = O[r][c] / l[r] */
	PTO_OP_ROW_DIV_F32 = 9,
	/* dst, a, b, nbytes: dst[i] = a[i] + b[i] on u32 words (wrapping) */
	PTO_OP_ADD_U32 = 10,
	/*
	 * ns: busy the core for ns nanoseconds, then finish.  Timed by the
	 * backend's clock (not in sim/pto_ops.c); the driver's version can be
	 * cancelled, which makes it the op task-timeout tests use.
	 */
	PTO_OP_SPIN_NS = 11,
	PTO_OP_COUNT = 12,
};

/* ---- shared window ------------------------------------------------------ */

/*
 * The header is six cache lines, one per writer and rate: the read-only
 * geometry; what the orchestrator writes while building a task; what it
 * publishes (task head, scope and run boundaries), which the scheduler
 * polls; what the scheduler writes; and each side's sleep flags.
 */
struct pto_window_geometry {
	__u32 magic;		/* PTO_WINDOW_MAGIC */
	__u32 abi_version;	/* PTO_ABI_VERSION */
	__u32 task_window;	/* task slots, power of two */
	__u32 dep_pool_size;	/* dependency-list entries */
	__u32 release_ring_size;	/* scope-release entries, power of two */
	__u32 max_args;		/* PTO_MAX_ARGS */
	__u64 heap_ring_size;	/* bytes of the heap used as the heap ring */
	__u64 heap_size;	/* whole heap region: ring + malloc arena */
	__u64 desc_offset;	/* byte offset of the descriptor array */
	__u64 dep_offset;	/* byte offset of the dependency-list pool */
	__u64 release_offset;	/* byte offset of the scope-release ring */
};

/* Orchestrator-written while it builds a task; the scheduler never polls it. */
struct pto_window_orch {
	__u64 heap_top;		/* heap ring allocation offset */
	__u64 dep_top;		/* dependency pool entries allocated (monotonic) */
	__u64 __pad0[6];
};

/*
 * Orchestrator-written once per task and at scope and run boundaries; the
 * scheduler polls it.  Polling task_head rather than the next descriptor
 * leaves the descriptor's lines alone while the orchestrator fills them.
 */
struct pto_window_notify {
	__u64 task_head;	/* next task id; tasks below it are published */
	__u64 release_head;	/* scope-release entries written (monotonic) */
	__u32 orch_done;	/* the orchestration function has returned */
	__u32 sched_wake;	/* bumped after publishing work for the scheduler */
	__u64 __pad0[5];
};

/* Scheduler-written. */
struct pto_window_sched {
	__u64 last_task_alive;	/* oldest task not yet retired */
	__u64 heap_tail;	/* heap ring offset everything before is free */
	__u64 dep_tail;		/* dependency entries below it are free */
	__u64 release_tail;	/* scope-release entries consumed */
	__u32 progress;		/* bumped whenever a ring tail advances */
	__u32 active;		/* tasks scanned and not yet completed */
	__u32 waiting;		/* of those, tasks waiting for producers */
	__u32 __pad0;
	__u64 tasks_scanned;	/* tasks the scheduler has taken in */
	__u64 tasks_completed;
};

/*
 * Flags that change only when a side goes to sleep, wakes up or fails sit on
 * lines of their own, which stay cached on both sides while work flows.
 */
struct pto_window_flags {
	__u32 sleeping;		/* this side is asleep (see above) */
	__s32 error;		/* scheduler: first task error (-errno) or 0 */
	__u64 __pad1[7];
};

struct pto_window_header {
	struct pto_window_geometry geo;
	struct pto_window_orch orch;
	struct pto_window_notify notify;
	struct pto_window_sched sched;
	struct pto_window_flags orch_flags;	/* sleeping on sched.progress */
	struct pto_window_flags sched_flags;	/* sleeping on notify.sched_wake */
};

/*
 * Task descriptor, indexed by task_id & (task_window - 1), written by the
 * orchestrator only.  It stores task_id last, then publishes the task by
 * advancing notify.task_head (release).  Consumers, reference counts and
 * states are the scheduler's own and live outside the window, so a
 * producer's line is never written after it is published.
 *
 * The header is 32 bytes, so a task with up to four parameters fits in
 * one cache line: the line that moves from the orchestrator's CPU to the
 * scheduler's and the core's for every task.  A task's dependency entries
 * are the fanin_count entries allocated for it, in task order, so retiring
 * it frees exactly those.
 */
struct pto_task_desc {
	__u64 task_id;
	__u32 kernel_id;
	__u8 worker_type;
	__u8 nargs;
	__u16 flags;		/* PTO_TASK_F_* */
	__u32 fanin_count;	/* producers listed from fanin_head */
	__u32 fanin_head;	/* dep-pool index + 1 of the producer list, 0 none */
	__u64 packed_end;	/* heap ring offset just past this task's outputs */
	__u64 args[PTO_MAX_ARGS];
	__u64 __pad0[4];
};

/* The task owns heap ring space up to packed_end. */
#define PTO_TASK_F_HEAP		_BITUL(0)

/* A dependency-list node: one producer of a task. */
struct pto_dep_entry {
	__u64 task_id;
	__u32 next;		/* pool index + 1 of the next node, 0 ends */
	__u32 __pad0;
};

/* A scope's end, as the orchestrator reports it: release [begin, end). */
struct pto_release_entry {
	__u64 begin;
	__u64 end;
};

/* ---- registers ---------------------------------------------------------- */

enum pto_core_status {
	PTO_CORE_IDLE = 0,
	PTO_CORE_ACK = 1,	/* task_id in status_task started */
	PTO_CORE_FIN = 2,	/* task_id in status_task finished */
};

/*
 * One block per core, two cache lines: the first only the host writes, the
 * second only the core writes, so dispatching and executing never fight
 * over a line.  The host queues up to PTO_CORE_QUEUE_SLOTS tasks: it stores
 * task_id + 1 in queue[doorbell % PTO_CORE_QUEUE_SLOTS] and then increments
 * doorbell (release); the core takes entries up to doorbell and advances
 * consumed.
 */
struct pto_core_regs {
	/* host-written */
	__u32 doorbell;		/* dispatched count */
	__u32 __pad0;
	__u64 queue[PTO_CORE_QUEUE_SLOTS];	/* task_id + 1, see above */
	__u64 __pad1[3];
	/* core-written */
	__u32 consumed;		/* taken count */
	__u32 status;		/* enum pto_core_status */
	__u32 core_waiting;	/* core is asleep on doorbell */
	__u32 __pad2;
	__u64 status_task;	/* task the status refers to */
	__u64 busy_ns;		/* total time spent executing */
	__u64 __pad3[4];
};

/* ---- completion ring ---------------------------------------------------- */

struct pto_completion {
	__u64 task_id;
	__u32 core;
	__s32 status;		/* 0 or negative errno */
	__u64 start_ns;		/* CLOCK_MONOTONIC */
	__u64 end_ns;
	__u32 seq;		/* low 32 bits of ring position + 1 once valid */
	__u32 __pad0;
	__u64 __pad1[3];
};

/*
 * The completion ring header sits in its own page, followed by the entries.
 * Cores reserve an entry by incrementing tail, fill it, then store seq last.
 */
struct pto_cring_header {
	__u32 size;		/* entries, power of two */
	__u32 __pad0;
	__u64 __pad1[7];
	__u64 tail;		/* cores: entries reserved */
	__u64 __pad2[7];
	__u64 head;		/* host: entries consumed */
	__u64 __pad3[7];
};

/* ---- ioctls ------------------------------------------------------------- */

#define PTO_IOCTL_BASE		'P'

/* mmap offsets returned by SETUP, page aligned and distinct */
struct pto_info {
	__u32 abi_version;	/* out */
	__u32 flags;		/* in: must be 0 */
	__u32 cores[PTO_UAPI_NUM_WORKER_TYPES];	/* out */
	__u32 max_task_window;	/* out */
	__u32 max_dep_pool;	/* out */
	__u64 max_heap_size;	/* out */
	__u32 num_ops;		/* out: PTO_OP_COUNT of the driver */
	__u32 max_args;		/* out: PTO_MAX_ARGS */
	__u64 task_timeout_ms;	/* out */
	__u64 __pad[4];		/* must be 0 */
};

struct pto_setup {
	__u32 flags;		/* in: must be 0 */
	__u32 task_window;	/* in: power of two */
	__u32 dep_pool_size;	/* in */
	__u32 release_ring_size;	/* in: power of two */
	__u64 heap_ring_size;	/* in */
	__u64 heap_size;	/* in: ring + arena, >= heap_ring_size */
	__u32 cring_size;	/* in: power of two */
	__u32 __pad0;		/* must be 0 */
	__u64 window_offset;	/* out: mmap offsets */
	__u64 window_size;	/* out */
	__u64 heap_offset;	/* out */
	__u64 regs_offset;	/* out */
	__u64 regs_size;	/* out */
	__u64 cring_offset;	/* out */
	__u64 cring_size_bytes;	/* out */
	__u32 num_cores;	/* out: register blocks, cores in type order */
	__u32 __pad1;		/* must be 0 */
	__u64 __pad2[2];	/* must be 0 */
};

struct pto_bind_op {
	__u32 kernel_id;	/* in: < PTO_MAX_KERNELS */
	__u32 worker_type;	/* in: enum pto_uapi_worker_type */
	__u32 op;		/* in: enum pto_op */
	__u32 flags;		/* in: must be 0 */
};

#define PTO_MAX_KERNELS		1024

struct pto_kick {
	__u32 flags;		/* in: must be 0 */
	__u32 core;		/* in: core whose doorbell was written */
	__u64 __pad;		/* must be 0 */
};

#define PTO_KICK_ALL		0xffffffffu	/* core value: check every core */

struct pto_wait {
	__u32 flags;		/* in: must be 0 */
	__u32 __pad0;		/* must be 0 */
	__u64 timeout_ns;	/* in: 0 = do not sleep */
	__u64 cring_head;	/* in: host's consumed position */
	__u64 cring_tail;	/* out: completions reserved by the cores */
};

#define PTO_IOCTL_GET_INFO	_IOWR(PTO_IOCTL_BASE, 0x00, struct pto_info)
#define PTO_IOCTL_SETUP		_IOWR(PTO_IOCTL_BASE, 0x01, struct pto_setup)
#define PTO_IOCTL_BIND_OP	_IOW(PTO_IOCTL_BASE, 0x02, struct pto_bind_op)
#define PTO_IOCTL_KICK		_IOW(PTO_IOCTL_BASE, 0x03, struct pto_kick)
#define PTO_IOCTL_WAIT		_IOWR(PTO_IOCTL_BASE, 0x04, struct pto_wait)

/*
 * io_uring: IORING_OP_URING_CMD with these cmd_op values; the 16-byte
 * sqe->cmd area holds the struct, so plain 64-byte SQEs suffice.
 */
#define PTO_URING_CMD_KICK	0x01	/* struct pto_kick; res = 0 or -errno */
#define PTO_URING_CMD_WAIT	0x02	/* struct pto_uring_wait */

/*
 * Completes once the completion ring holds entries beyond cring_head, or
 * after timeout_ms (0: at once).  res = completions available (tail - head),
 * 0 on timeout, or -errno (-ENODEV once the device is gone, -ECANCELED when
 * the context is torn down).
 */
struct pto_uring_wait {
	__u64 cring_head;
	__u32 timeout_ms;
	__u32 flags;		/* must be 0 */
};

#endif /* _UAPI_PTO_H */
