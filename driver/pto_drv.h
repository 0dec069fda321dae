/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pto.ko internals: software devices ("vdev"), contexts and their cores.
 *
 * A device is a set of cores per worker type.  Every open() of /dev/ptoN is
 * a context with its own regions (window, heap, registers, completion
 * ring); the context's cores are work items that execute what the host
 * queued in the registers.  A PCI backend would provide its own device ops
 * behind struct pto_dev_ops.
 */
#ifndef _PTO_DRV_H
#define _PTO_DRV_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <pto/pto_uapi.h>

#include "pto_ops.h"

#define PTO_MAX_DEVICES		64
#define PTO_MAX_CORES_PER_TYPE	64
#define PTO_MAX_CRING		65536

/*
 * Hard caps on limits root may raise: a heap region must stay below the
 * distance between two regions' mmap offsets, and its page-aligned size
 * must not wrap.
 */
#define PTO_HEAP_HARD_MAX	BIT_ULL(36)

/* What every device of this driver supports (GET_INFO.features). */
#define PTO_DRV_FEATURES	(PTO_FEATURE_URING_CMD | PTO_FEATURE_POLL | \
				 PTO_FEATURE_VIEWS)
/* Task flags a core accepts (PTO_TASK_F_NO_DISPATCH is never queued). */
#define PTO_DRV_TASK_FLAGS	(PTO_TASK_F_HEAP | PTO_TASK_F_ARGS_IN_HEAP | \
				 PTO_TASK_F_VIEWS)

/*
 * mmap offsets: region r lives at r << PTO_MMAP_SHIFT, far enough apart
 * that no region can reach into the next one's offsets.
 */
#define PTO_MMAP_SHIFT		36
enum pto_region_id {
	PTO_REGION_WINDOW,
	PTO_REGION_HEAP,
	PTO_REGION_REGS,
	PTO_REGION_CRING,
	PTO_NUM_REGIONS,
};

struct pto_ctx;
struct pto_user;
struct io_uring_cmd;

/**
 * struct pto_dev_ops - what a device backend provides
 * @ctx_start: SETUP made the regions; prepare the context's cores
 * @kick: the host wrote a doorbell of @core, which the caller checked
 *	against the context's cores, or PTO_KICK_ALL: every core with work
 *	queued or a task in progress looks at its state again
 * @ctx_stop: the context is closing or its device is gone; stop its cores
 *	and return once none of them touches the context any more
 *
 * The vdev runs tasks on kernel workers (pto_vdev.c).
 */
struct pto_dev_ops {
	int (*ctx_start)(struct pto_ctx *ctx);
	void (*kick)(struct pto_ctx *ctx, u32 core);
	void (*ctx_stop)(struct pto_ctx *ctx);
};

/**
 * struct pto_device - one /dev/ptoN
 * @ref: held by the device list and by every context
 * @node: in the driver's device list, under its lock
 * @id: the minor number, N of /dev/ptoN
 * @cdev: the character device
 * @dev: the class device, parent of the sysfs attributes
 * @ops: the backend
 * @cores: cores of each worker type
 * @num_cores: the sum of @cores
 * @dead: removed; every call on its contexts fails with -ENODEV
 * @lock: protects @ctxs and @nr_contexts
 * @ctxs: the open contexts
 * @nr_contexts: entries of @ctxs, for sysfs
 * @tasks_done: tasks completed with status 0, over all contexts
 * @tasks_failed: tasks completed with an error, over all contexts
 * @busy_ns: execution time per worker type, over all contexts
 * @max_section_ns: the longest stretch one core ran with preemption off
 *	(one pto_fpu_begin/end section), for sysfs
 * @mem_bytes: region bytes its contexts hold, as charged against
 *	max_memory, for sysfs
 */
struct pto_device {
	struct kref ref;
	struct list_head node;
	u32 id;
	struct cdev *cdev;
	struct device *dev;
	const struct pto_dev_ops *ops;

	u32 cores[PTO_UAPI_NUM_WORKER_TYPES];
	u32 num_cores;
	bool dead;

	struct mutex lock;		/* ctxs, nr_contexts */
	struct list_head ctxs;
	u32 nr_contexts;

	atomic64_t tasks_done;
	atomic64_t tasks_failed;
	atomic64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];
	atomic64_t max_section_ns;
	atomic64_t mem_bytes;
};

/**
 * struct pto_limits - the module parameters SETUP obeys, read once
 * @max_task_window: largest task window of a ring
 * @max_dep_pool: largest dependency pool of a ring
 * @max_heap_size: largest heap region, at most PTO_HEAP_HARD_MAX
 */
struct pto_limits {
	u32 max_task_window;
	u32 max_dep_pool;
	u64 max_heap_size;
};

/**
 * struct pto_op_run - a built-in op being executed in sections
 * @op: enum pto_op
 * @nargs: the task's argument count
 * @mode: how the op is cut into sections (pto_exec.c)
 * @unit_cost: cost of one unit, in multiply-adds or element operations
 * @units: units of the whole op
 * @pos: units done
 * @call: the op, checked and resolved: its scalars, and its tensors as
 *	kernel pointers into the heap with their strides (the kernel's copy
 *	of every view descriptor, read once)
 *
 * pto_op_prepare() checks the whole op, as pto_op_exec() would, before
 * anything runs; pto_op_section() then runs the next units between
 * pto_fpu_begin() and pto_fpu_end().  Sections produce the same
 * bytes as one pto_op_exec() of the whole op.
 */
struct pto_op_run {
	u32 op;
	u32 nargs;
	u32 mode;
	u64 unit_cost;
	u64 units;
	u64 pos;
	struct pto_op_call call;
};

/**
 * struct pto_core - one core of a context
 * @ctx: the context
 * @regs: its register block in the regs region
 * @index: its number, in worker-type order
 * @type: its enum pto_uapi_worker_type
 * @consumed: queue entries taken; the authoritative copy of
 *	@regs->consumed, which userspace may overwrite
 * @busy: a task was taken and has not completed (@handle, @run)
 * @spin: the task in progress is PTO_OP_SPIN_NS of @spin_ns
 * @handle: the task in progress
 * @start_ns: when it started
 * @spin_ns: how long PTO_OP_SPIN_NS lasts
 * @budget: units of cost one section may run, adapted to the
 *	section time target
 * @busy_total: time spent on tasks, the authoritative copy of
 *	@regs->busy_ns
 * @run: the op in progress
 * @work: the vdev's work item that takes and runs the queued tasks
 * @timer: wakes @work when a PTO_OP_SPIN_NS task is due
 *
 * The work item never sleeps: an op runs in bounded sections, a work run
 * yields after a time slice, and a spinning core arms @timer and
 * returns.  @busy and @consumed are written by @work only.
 */
struct pto_core {
	struct pto_ctx *ctx;
	struct pto_core_regs *regs;
	u32 index;
	u32 type;
	u32 consumed;
	bool busy;
	bool spin;
	u64 handle;
	u64 start_ns;
	u64 spin_ns;
	u64 budget;
	u64 busy_total;
	struct pto_op_run run;
	struct work_struct work;
	struct hrtimer timer;
};

/**
 * struct pto_ring - what the cores need of one task ring
 * @desc: the ring's descriptor array in the window
 * @task_window: entries of @desc, a power of two
 */
struct pto_ring {
	struct pto_task_desc *desc;
	u32 task_window;
};

/**
 * struct pto_uwait - a parked io_uring WAIT (pto_uring.c)
 * @by_head: in &pto_uwaits.heads, ordered by @head then @seq
 * @by_deadline: in &pto_uwaits.deadlines, ordered by @deadline then @seq
 * @done: on a list of WAITs being completed, off both trees
 * @cmd: the command
 * @task: its submitter, referenced
 * @head: the host's consumed position: ready once the tail passes it
 * @seq: order of parking, breaks ties
 * @deadline: jiffies when it completes with 0
 * @res: what it completes with
 * @parked: on the trees (under &pto_uwaits.lock)
 */
struct pto_uwait {
	struct rb_node by_head;
	struct rb_node by_deadline;
	struct list_head done;
	struct io_uring_cmd *cmd;
	struct task_struct *task;
	u64 head;
	u64 seq;
	unsigned long deadline;
	int res;
	bool parked;
};

/**
 * struct pto_uwaits - io_uring WAITs parked on a context
 * @lock: protects the trees, @count and @seq
 * @heads: parked WAITs by head: a wake-up takes the leftmost while ready
 * @deadlines: parked WAITs by deadline: the timer takes the expired
 * @count: parked WAITs, at most max_uring_waits
 * @min_head: the lowest head parked (U64_MAX for none), read without the
 *	lock by wake-ups that have nothing to complete
 * @seq: parking counter
 * @visits: WAITs looked at by wake-ups, for the tests
 * @timer: completes expired WAITs and, where commands cannot be
 *	cancelled, those whose ring or submitter goes away
 */
struct pto_uwaits {
	spinlock_t lock;		/* heads, deadlines, count, seq */
	struct rb_root_cached heads;
	struct rb_root_cached deadlines;
	u32 count;
	u64 min_head;
	u64 seq;
	u64 visits;
	struct delayed_work timer;
};

/**
 * struct pto_ctx - one open() of a device
 * @ref: held by the file and, briefly, by device removal
 * @pdev: the device, referenced
 * @node: in @pdev->ctxs
 * @kill_node: on device removal's private list
 * @user: the opener's accounting (pto_mem.c)
 * @exempt: the opener had CAP_SYS_RESOURCE: no per-user limits
 * @client_id: unique per open, for fdinfo
 * @lock: serializes SETUP and BIND_OP
 * @setup_done: SETUP finished; see pto_ctx_ready()
 * @failed: the first fatal error (-errno), or 0
 * @closing: release() started
 * @region: the regions (pto_region_alloc()), by enum pto_region_id
 * @region_size: their sizes, page aligned
 * @charged: bytes of @region charged to the user and the driver
 * @heap_size: bytes of the heap ops may address (SETUP's heap_size)
 * @features: PTO_FEATURE_* SETUP enabled
 * @nrings: task rings set up
 * @ring: the task rings, @nrings of them
 * @cring: the completion ring's header
 * @centries: the completion ring's entries
 * @cring_size: entries of @centries, a power of two
 * @binding: per kernel id, PTO_BINDING(type, op), 0 when unbound; one
 *	word, so a core never sees the op of one BIND_OP with the worker
 *	type of another
 * @num_cores: entries of @cores
 * @cores: the cores, in worker-type order
 * @cring_lock: protects @cring_tail and the entries the cores fill
 * @cring_tail: completions posted; the authoritative copy of the header's
 * @wq: woken on completions, failure and removal
 * @uwaits: parked io_uring WAITs
 * @busy_ns: execution time per worker type
 * @tasks_done: tasks completed with status 0
 * @tasks_failed: tasks completed with an error
 */
struct pto_ctx {
	struct kref ref;
	struct pto_device *pdev;
	struct list_head node;
	struct list_head kill_node;
	struct pto_user *user;
	bool exempt;
	u64 client_id;

	struct mutex lock;		/* SETUP, BIND_OP */
	bool setup_done;
	int failed;
	bool closing;

	void *region[PTO_NUM_REGIONS];
	size_t region_size[PTO_NUM_REGIONS];
	u64 charged;
	u64 heap_size;
	u64 features;

	u32 nrings;
	struct pto_ring ring[PTO_MAX_RINGS];
	struct pto_cring_header *cring;
	struct pto_completion *centries;
	u32 cring_size;

	u16 binding[PTO_MAX_KERNELS];

	u32 num_cores;
	struct pto_core *cores;

	spinlock_t cring_lock;		/* cring_tail, the entries */
	u64 cring_tail;
	wait_queue_head_t wq;

	struct pto_uwaits uwaits;

	atomic64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];
	atomic64_t tasks_done;
	atomic64_t tasks_failed;
};

/* A kernel id's binding: the worker type and the op, in one word. */
#define PTO_BINDING(type, op)	((u16)(((type) << 8) | ((op) + 1)))
#define PTO_BINDING_TYPE(b)	((u32)(b) >> 8)
#define PTO_BINDING_OP(b)	((u32)((b) & 0xff) - 1)

extern struct workqueue_struct *pto_wq;
extern unsigned int pto_task_timeout_ms;
extern unsigned int pto_max_task_window;
extern unsigned int pto_max_dep_pool;
extern unsigned long pto_max_heap_size;
extern unsigned long pto_max_task_macs;
extern unsigned long pto_max_section_cost;
extern unsigned int pto_max_wait_ms;
extern unsigned int pto_max_uring_waits;
extern unsigned long pto_max_memory;
extern unsigned long pto_max_user_memory;
extern unsigned int pto_max_user_contexts;
extern const struct pto_dev_ops pto_vdev_ops;
extern const struct file_operations pto_fops;

/* pto_main.c */
struct pto_device *pto_device_get_by_minor(unsigned int minor);
void pto_device_put(struct pto_device *pdev);
void pto_device_note_section(struct pto_device *pdev, u64 ns);

/* pto_check.c: the ioctls' and mmap's arguments, without side effects */
#define PTO_IOCTL_NEEDS_RW	BIT(0)
int pto_ioctl_lookup(unsigned int cmd, fmode_t mode, unsigned int *nr);
unsigned int pto_ioctl_count(void);
void pto_limits_read(struct pto_limits *lim);
int pto_info_check(const struct pto_info *k);
int pto_setup_check(const struct pto_setup *s, const struct pto_limits *lim);
int pto_setup_layout(struct pto_setup *s, u32 num_cores);
int pto_bind_check(const struct pto_bind_op *b, const u32 *cores, u16 *binding);
int pto_kick_check(const struct pto_kick *k, u32 num_cores, u32 *core);
int pto_wait_check(const struct pto_wait *w);
int pto_mmap_check(unsigned long pgoff, unsigned long len,
		   const size_t *region_size, u32 *region);
int pto_wait_result(u64 tail, u64 head);

/* pto_exec.c: the ops, cut into bounded sections */
int pto_op_prepare(struct pto_op_run *run, u32 op, const u64 *args,
		   u32 nargs, u32 view_mask, u8 *heap, u64 heap_size,
		   u64 max_task_macs, u64 max_section_cost);
int pto_op_section(struct pto_op_run *run, u64 budget, u64 *ns);
static inline bool pto_op_done(const struct pto_op_run *run)
{
	return run->pos >= run->units;
}

/* pto_mem.c: accounted regions and the per-user limits */
void *pto_region_alloc(size_t size);
void pto_region_free(void *p);
struct pto_user *pto_user_get(kuid_t uid, bool exempt, int *err);
void pto_user_put(struct pto_user *u);
int pto_mem_charge(struct pto_user *u, bool exempt, u64 bytes);
void pto_mem_uncharge(struct pto_user *u, u64 bytes);
u64 pto_mem_avail(struct pto_user *u, bool exempt);
u64 pto_mem_limit(unsigned long param, unsigned int ram_shift);

/* pto_ctx.c */
struct pto_ctx *pto_ctx_create(struct pto_device *pdev, struct pto_user *u,
			       bool exempt);
void pto_ctx_put(struct pto_ctx *ctx);
void pto_ctx_fail(struct pto_ctx *ctx, int err);
void pto_ctx_notify(struct pto_ctx *ctx);
void pto_ctx_shutdown(struct pto_ctx *ctx, int res);
int pto_ctx_kick(struct pto_ctx *ctx, const struct pto_kick *k);
int pto_ctx_post(struct pto_ctx *ctx, u32 core, u64 handle, int status,
		 u64 start_ns, u64 end_ns, int fail);

/* pto_uring.c */
void pto_uring_init(struct pto_ctx *ctx);
void pto_uring_wake(struct pto_ctx *ctx);
void pto_uring_cancel(struct pto_ctx *ctx, int res);
void pto_uring_release(struct pto_ctx *ctx);
int pto_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
void pto_uwaits_init(struct pto_uwaits *uw);
void pto_uwaits_insert(struct pto_uwaits *uw, struct pto_uwait *w);
void pto_uwaits_erase(struct pto_uwaits *uw, struct pto_uwait *w);
u32 pto_uwaits_take_ready(struct pto_uwaits *uw, u64 tail,
			  struct list_head *out);
u32 pto_uwaits_take_expired(struct pto_uwaits *uw, unsigned long now,
			    struct list_head *out);
u32 pto_uwaits_take_all(struct pto_uwaits *uw, int res,
			struct list_head *out);
bool pto_uwaits_next_deadline(struct pto_uwaits *uw, unsigned long *next);

/*
 * SETUP finished: regions, rings, cores and sizes may be used without the
 * lock.
 */
static inline bool pto_ctx_ready(struct pto_ctx *ctx)
{
	/* pairs with the release in pto_do_setup() */
	return smp_load_acquire(&ctx->setup_done);
}

/*
 * Read the failure before the completion tail (pto_ctx_tail() takes
 * cring_lock): a failure seen implies its completion is seen too.
 */
static inline int pto_ctx_failed(struct pto_ctx *ctx)
{
	/* orders this load before the cring_lock taken by pto_ctx_tail() */
	return smp_load_acquire(&ctx->failed);
}

/* Completions posted so far; the mapped header's copy is not trusted. */
static inline u64 pto_ctx_tail(struct pto_ctx *ctx)
{
	u64 tail;

	spin_lock(&ctx->cring_lock);
	tail = ctx->cring_tail;
	spin_unlock(&ctx->cring_lock);
	return tail;
}

static inline bool pto_ctx_gone(struct pto_ctx *ctx)
{
	return READ_ONCE(ctx->closing) || READ_ONCE(ctx->pdev->dead);
}

#endif /* _PTO_DRV_H */
