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
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <pto/pto_uapi.h>

#define PTO_MAX_DEVICES		64
#define PTO_MAX_CORES_PER_TYPE	64
#define PTO_MAX_CRING		65536

/* What every device of this driver supports (GET_INFO.features). */
#define PTO_DRV_FEATURES	(PTO_FEATURE_URING_CMD | PTO_FEATURE_POLL)

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
struct io_uring_cmd;

/**
 * struct pto_dev_ops - what a device backend provides
 * @ctx_start: SETUP made the regions; prepare the context's cores
 * @kick: the host wrote a doorbell of @core (or PTO_KICK_ALL), which the
 *	caller checked against the context's cores
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
};

/**
 * struct pto_core - one core of a context
 * @ctx: the context
 * @regs: its register block in the regs region
 * @index: its number, in worker-type order
 * @type: its enum pto_uapi_worker_type
 * @consumed: queue entries taken; the authoritative copy of
 *	@regs->consumed, which userspace may overwrite
 * @done: tasks completed, for fdinfo's in-flight count
 * @work: the vdev's work item that runs the queued tasks
 */
struct pto_core {
	struct pto_ctx *ctx;
	struct pto_core_regs *regs;
	u32 index;
	u32 type;
	u32 consumed;
	u32 done;
	struct work_struct work;
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
 * struct pto_uwaits - io_uring WAITs parked on a context (pto_uring.c)
 * @lock: protects @list and @next
 * @list: the parked WAITs
 * @next: the earliest deadline on @list (jiffies) while it is not empty
 * @timer: completes expired WAITs and those of dying submitters
 */
struct pto_uwaits {
	spinlock_t lock;		/* list, next */
	struct list_head list;
	unsigned long next;
	struct delayed_work timer;
};

/**
 * struct pto_ctx - one open() of a device
 * @pdev: the device, referenced
 * @node: in @pdev->ctxs
 * @client_id: unique per open, for fdinfo
 * @lock: serializes SETUP and BIND_OP
 * @setup_done: SETUP finished; see pto_ctx_ready()
 * @failed: the first fatal error (-errno), or 0
 * @closing: release() started
 * @region: the regions (vmalloc_user()), indexed by enum pto_region_id
 * @region_size: their sizes, page aligned
 * @heap_size: bytes of the heap ops may address (SETUP's heap_size)
 * @nrings: task rings set up
 * @ring: the task rings, @nrings of them
 * @cring: the completion ring's header
 * @centries: the completion ring's entries
 * @cring_size: entries of @centries, a power of two
 * @op_of: per kernel id, the bound PTO_OP_* + 1, 0 when unbound
 * @type_of: per kernel id, the worker type it is bound to
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
	struct pto_device *pdev;
	struct list_head node;
	u64 client_id;

	struct mutex lock;		/* SETUP, BIND_OP */
	bool setup_done;
	int failed;
	bool closing;

	void *region[PTO_NUM_REGIONS];
	size_t region_size[PTO_NUM_REGIONS];
	u64 heap_size;

	u32 nrings;
	struct pto_ring ring[PTO_MAX_RINGS];
	struct pto_cring_header *cring;
	struct pto_completion *centries;
	u32 cring_size;

	u8 op_of[PTO_MAX_KERNELS];
	u8 type_of[PTO_MAX_KERNELS];

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

extern struct workqueue_struct *pto_wq;
extern unsigned int pto_task_timeout_ms;
extern unsigned int pto_max_task_window;
extern unsigned int pto_max_dep_pool;
extern unsigned long pto_max_heap_size;
extern unsigned long pto_max_task_macs;
extern const struct pto_dev_ops pto_vdev_ops;
extern const struct file_operations pto_fops;

/* pto_main.c */
struct pto_device *pto_device_get_by_minor(unsigned int minor);
void pto_device_put(struct pto_device *pdev);

/* pto_ctx.c */
void pto_ctx_fail(struct pto_ctx *ctx, int err);
void pto_ctx_notify(struct pto_ctx *ctx);
void pto_ctx_shutdown(struct pto_ctx *ctx, int res);
int pto_ctx_kick(struct pto_ctx *ctx, const struct pto_kick *k);

/* pto_uring.c */
void pto_uring_init(struct pto_ctx *ctx);
void pto_uring_wake(struct pto_ctx *ctx);
void pto_uring_cancel(struct pto_ctx *ctx, int res);
void pto_uring_release(struct pto_ctx *ctx);
int pto_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);

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
