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

/* mmap offsets: region r lives at r << PTO_MMAP_SHIFT */
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

/* What a device backend provides; the vdev runs tasks on kernel workers. */
struct pto_dev_ops {
	int (*ctx_start)(struct pto_ctx *ctx);
	void (*kick)(struct pto_ctx *ctx, u32 core);
	void (*ctx_stop)(struct pto_ctx *ctx);
};

struct pto_device {
	struct kref ref;		/* device list + every context */
	struct list_head node;		/* pto_devices, under pto_lock */
	u32 id;
	struct cdev *cdev;
	struct device *dev;
	const struct pto_dev_ops *ops;

	u32 cores[PTO_UAPI_NUM_WORKER_TYPES];
	u32 num_cores;
	bool dead;			/* removed; contexts get -ENODEV */

	struct mutex lock;		/* ctxs, nr_contexts */
	struct list_head ctxs;
	u32 nr_contexts;

	atomic64_t tasks_done;
	atomic64_t tasks_failed;
	atomic64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];
};

struct pto_core {
	struct pto_ctx *ctx;
	struct pto_core_regs *regs;	/* in the regs region */
	u32 index;
	u32 type;
	u32 consumed;			/* authoritative copy of regs.consumed */
	u32 done;			/* tasks this core completed */
	struct work_struct work;
};

/* What the cores need of one task ring. */
struct pto_ring {
	struct pto_task_desc *desc;	/* in the window */
	u32 task_window;		/* entries of desc, a power of two */
};

/* io_uring WAITs parked on a context (pto_uring.c) */
struct pto_uwaits {
	spinlock_t lock;		/* list, next */
	struct list_head list;
	unsigned long next;		/* earliest deadline on list */
	struct delayed_work timer;	/* expiry, dying submitters */
};

struct pto_ctx {
	struct pto_device *pdev;
	struct list_head node;		/* pdev->ctxs */
	u64 client_id;

	struct mutex lock;		/* setup, bind */
	bool setup_done;
	int failed;			/* first fatal error, or 0 */
	bool closing;

	/* regions (vmalloc_user), sizes are page aligned */
	void *region[PTO_NUM_REGIONS];
	size_t region_size[PTO_NUM_REGIONS];
	u64 heap_size;
	u32 cring_size;

	u32 nrings;
	struct pto_ring ring[PTO_MAX_RINGS];
	struct pto_cring_header *cring;
	struct pto_completion *centries;

	u8 op_of[PTO_MAX_KERNELS];	/* PTO_OP_* + 1, 0 = unbound */
	u8 type_of[PTO_MAX_KERNELS];

	u32 num_cores;
	struct pto_core *cores;

	spinlock_t cring_lock;		/* cring_tail, entries */
	u64 cring_tail;
	wait_queue_head_t wq;		/* completions, failure, removal */

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

/* SETUP finished: regions, cores and sizes may be used without the lock. */
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
