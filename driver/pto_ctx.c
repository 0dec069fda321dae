// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts: open(), the ioctls, mmap of the four regions, poll and fdinfo
 * (the io_uring commands are in pto_uring.c).  Every open() is isolated:
 * its regions are private vmalloc memory reachable only through its own
 * file.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "pto_drv.h"
#include "pto_compat.h"
#include "pto_layout.h"

static atomic64_t pto_next_client_id = ATOMIC64_INIT(0);

static const char * const pto_worker_type_names[] = PTO_UAPI_WORKER_TYPE_NAMES;
static_assert(ARRAY_SIZE(pto_worker_type_names) == PTO_UAPI_NUM_WORKER_TYPES);

/**
 * pto_ctx_notify() - completions were posted, or the context failed
 * @ctx: the context
 *
 * Wakes every kind of waiter: WAIT ioctls and poll() on the wait queue,
 * parked io_uring WAITs by completing those that are satisfied.
 *
 * Context: any context that may take a spinlock.
 */
void pto_ctx_notify(struct pto_ctx *ctx)
{
	wake_up_all(&ctx->wq);
	pto_uring_wake(ctx);
}

/**
 * pto_ctx_fail() - mark a context failed
 * @ctx: the context
 * @err: the failure, a negative errno
 *
 * The first failure sticks: later calls keep it.  Queued tasks then
 * complete with -ECANCELED without running, KICK fails with -EIO and
 * waiters wake so they can report it.
 */
void pto_ctx_fail(struct pto_ctx *ctx, int err)
{
	if (!cmpxchg(&ctx->failed, 0, err))
		dev_dbg(ctx->pdev->dev, "client %llu failed: %d\n",
			ctx->client_id, err);
	pto_ctx_notify(ctx);
}

/* ---- open / release ------------------------------------------------------ */

static int pto_open(struct inode *inode, struct file *file)
{
	struct pto_device *pdev;
	struct pto_ctx *ctx;
	int ret;

	pdev = pto_device_get_by_minor(iminor(inode));
	if (!pdev)
		return -ENODEV;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx) {
		ret = -ENOMEM;
		goto err_put;
	}
	ctx->pdev = pdev;
	ctx->client_id = atomic64_inc_return(&pto_next_client_id);
	mutex_init(&ctx->lock);
	spin_lock_init(&ctx->cring_lock);
	init_waitqueue_head(&ctx->wq);
	pto_uring_init(ctx);

	mutex_lock(&pdev->lock);
	if (pdev->dead) {
		ret = -ENODEV;
		goto err_unlock;
	}
	list_add_tail(&ctx->node, &pdev->ctxs);
	pdev->nr_contexts++;
	mutex_unlock(&pdev->lock);

	file->private_data = ctx;
	return nonseekable_open(inode, file);

err_unlock:
	mutex_unlock(&pdev->lock);
	kfree(ctx);
err_put:
	pto_device_put(pdev);
	return ret;
}

/**
 * pto_ctx_shutdown() - stop a context's cores and fail its pending waits
 * @ctx: the context; its release started or its device is dead, so
 *	pto_ctx_gone() is true and nothing new gets queued or parked
 * @res: what parked io_uring WAITs complete with
 *
 * Used by release and by device removal.  Returns once no core runs.
 */
void pto_ctx_shutdown(struct pto_ctx *ctx, int res)
{
	wake_up_all(&ctx->wq);
	pto_uring_cancel(ctx, res);
	if (pto_ctx_ready(ctx))
		ctx->pdev->ops->ctx_stop(ctx);
}

static void pto_free_regions(struct pto_ctx *ctx)
{
	int i;

	for (i = 0; i < PTO_NUM_REGIONS; i++) {
		vfree(ctx->region[i]);
		ctx->region[i] = NULL;
	}
}

static int pto_release(struct inode *inode, struct file *file)
{
	struct pto_ctx *ctx = file->private_data;
	struct pto_device *pdev = ctx->pdev;

	WRITE_ONCE(ctx->closing, true);
	pto_ctx_shutdown(ctx, -ECANCELED);
	pto_uring_release(ctx);

	mutex_lock(&pdev->lock);
	list_del(&ctx->node);
	pdev->nr_contexts--;
	mutex_unlock(&pdev->lock);

	pto_free_regions(ctx);
	kfree(ctx->cores);
	kfree(ctx);
	pto_device_put(pdev);
	return 0;
}

/* ---- ioctls ---------------------------------------------------------------- */

static bool pto_zero(const void *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

static int pto_copy_in(void *k, size_t ksize, void __user *u, size_t usize)
{
	memset(k, 0, ksize);
	return copy_struct_from_user(k, ksize, u, usize);
}

static int pto_copy_out(void __user *u, size_t usize, const void *k,
			size_t ksize)
{
	return copy_to_user(u, k, min(usize, ksize)) ? -EFAULT : 0;
}

static int pto_ioctl_get_info(struct pto_ctx *ctx, void __user *u, size_t us)
{
	struct pto_device *pdev = ctx->pdev;
	struct pto_info k;
	int ret, i;

	BUILD_BUG_ON(PTO_OP_COUNT > 64);
	ret = pto_copy_in(&k, sizeof(k), u, us);
	if (ret)
		return ret;
	if (k.flags || k.abi_version || !pto_zero(k.__pad, sizeof(k.__pad)))
		return -EINVAL;
	memset(&k, 0, sizeof(k));
	k.abi_version = PTO_ABI_VERSION;
	k.features = PTO_DRV_FEATURES;
	for (i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++)
		k.cores[i] = pdev->cores[i];
	k.max_rings = PTO_MAX_RINGS;
	k.max_task_window = READ_ONCE(pto_max_task_window);
	k.max_dep_pool = READ_ONCE(pto_max_dep_pool);
	k.max_args = PTO_MAX_ARGS;
	k.max_heap_size = READ_ONCE(pto_max_heap_size);
	k.ops = GENMASK_ULL(PTO_OP_COUNT - 1, 0);
	k.task_timeout_ms = READ_ONCE(pto_task_timeout_ms);
	return pto_copy_out(u, us, &k, sizeof(k));
}

/* Every field SETUP fills in, which callers pass as zero. */
static bool pto_setup_out_zero(const struct pto_setup *s)
{
	return pto_zero(&s->window, sizeof(s->window)) &&
	       pto_zero(&s->heap, sizeof(s->heap)) &&
	       pto_zero(&s->regs, sizeof(s->regs)) &&
	       pto_zero(&s->cring, sizeof(s->cring)) &&
	       !s->header_offset && !s->order_offset && !s->release_offset &&
	       !s->arena_offset && !s->cring_entries_offset &&
	       !s->regs_stride && !s->num_cores;
}

/*
 * The in fields of SETUP, before pto_layout() places them.  The limits
 * are module parameters that may change meanwhile: each is read once.
 */
static int pto_setup_check(const struct pto_setup *s)
{
	u32 max_tw = READ_ONCE(pto_max_task_window);
	u32 max_dep = READ_ONCE(pto_max_dep_pool);
	/*
	 * The order ring holds every task in flight, of every ring; the
	 * release ring at most one scope end per task.  4096 keeps small
	 * windows from limiting scopes.
	 */
	u64 max_entries = (u64)max(max_tw, 4096U) * PTO_MAX_RINGS;
	u32 r;

	if (s->flags || s->__pad0 || !pto_zero(s->__pad1, sizeof(s->__pad1)))
		return -EINVAL;
	if (!pto_setup_out_zero(s))
		return -EINVAL;
	if (s->features & ~PTO_DRV_FEATURES)
		return -EINVAL;
	if (!s->nrings || s->nrings > PTO_MAX_RINGS)
		return -EINVAL;
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		const struct pto_ring_geometry *g = &s->ring[r];

		if (r >= s->nrings) {
			if (!pto_zero(g, sizeof(*g)))
				return -EINVAL;
			continue;
		}
		if (g->desc_offset || g->dep_offset || g->heap_offset ||
		    g->__pad)
			return -EINVAL;
		if (!is_power_of_2(g->task_window) || g->task_window > max_tw)
			return -EINVAL;
		if (!g->dep_pool_size || g->dep_pool_size > max_dep)
			return -EINVAL;
		/* every ring has a heap ring: tasks place outputs there */
		if (!g->heap_size || !IS_ALIGNED(g->heap_size, 64))
			return -EINVAL;
	}
	if (!is_power_of_2(s->order_ring_size) ||
	    s->order_ring_size > max_entries)
		return -EINVAL;
	if (!is_power_of_2(s->release_ring_size) ||
	    s->release_ring_size > max_entries)
		return -EINVAL;
	if (!is_power_of_2(s->cring_size) || s->cring_size > PTO_MAX_CRING)
		return -EINVAL;
	/* pto_layout() checks that the heap rings fit */
	if (s->heap_size > READ_ONCE(pto_max_heap_size))
		return -EINVAL;
	return 0;
}

/* Allocate the regions SETUP placed and write what the device owns. */
static int pto_alloc_regions(struct pto_ctx *ctx, const struct pto_setup *s)
{
	struct pto_window_header *hdr;
	u8 *win, *regs, *cring;
	u32 i;

	ctx->region_size[PTO_REGION_WINDOW] = s->window.size;
	ctx->region_size[PTO_REGION_HEAP] = s->heap.size;
	ctx->region_size[PTO_REGION_REGS] = s->regs.size;
	ctx->region_size[PTO_REGION_CRING] = s->cring.size;
	for (i = 0; i < PTO_NUM_REGIONS; i++) {
		ctx->region[i] = vmalloc_user(ctx->region_size[i]);
		if (!ctx->region[i]) {
			pto_free_regions(ctx);
			return -ENOMEM;
		}
	}
	win = ctx->region[PTO_REGION_WINDOW];
	regs = ctx->region[PTO_REGION_REGS];
	cring = ctx->region[PTO_REGION_CRING];

	hdr = (struct pto_window_header *)(win + s->header_offset);
	hdr->ident.magic = PTO_WINDOW_MAGIC;
	hdr->ident.abi_version = PTO_ABI_VERSION;
	hdr->ident.features = s->features;
	hdr->ident.nrings = s->nrings;

	ctx->heap_size = s->heap_size;
	ctx->nrings = s->nrings;
	for (i = 0; i < s->nrings; i++) {
		ctx->ring[i].desc = (struct pto_task_desc *)
			(win + s->ring[i].desc_offset);
		ctx->ring[i].task_window = s->ring[i].task_window;
	}
	for (i = 0; i < ctx->num_cores; i++) {
		ctx->cores[i].regs = (struct pto_core_regs *)
			(regs + (size_t)i * s->regs_stride);
		/* idle cores sleep on their doorbell: the host must KICK them */
		ctx->cores[i].regs->core_waiting = 1;
	}
	ctx->cring = (struct pto_cring_header *)cring;
	ctx->cring->size = s->cring_size;
	ctx->centries = (struct pto_completion *)
		(cring + s->cring_entries_offset);
	ctx->cring_size = s->cring_size;
	return 0;
}

/* Called with ctx->lock held, once per context. */
static int pto_do_setup(struct pto_ctx *ctx, struct pto_setup *s)
{
	struct pto_device *pdev = ctx->pdev;
	u32 i, t, c = 0;
	int ret;

	if (pto_layout(s, pdev->num_cores))
		return -EINVAL;		/* sizes overflow, or heap too small */
	s->window.offset = (u64)PTO_REGION_WINDOW << PTO_MMAP_SHIFT;
	s->heap.offset = (u64)PTO_REGION_HEAP << PTO_MMAP_SHIFT;
	s->regs.offset = (u64)PTO_REGION_REGS << PTO_MMAP_SHIFT;
	s->cring.offset = (u64)PTO_REGION_CRING << PTO_MMAP_SHIFT;

	ctx->num_cores = pdev->num_cores;
	ctx->cores = kcalloc(ctx->num_cores, sizeof(*ctx->cores), GFP_KERNEL);
	if (!ctx->cores)
		return -ENOMEM;
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		for (i = 0; i < pdev->cores[t]; i++, c++) {
			ctx->cores[c].ctx = ctx;
			ctx->cores[c].index = c;
			ctx->cores[c].type = t;
		}
	}
	ret = pto_alloc_regions(ctx, s);
	if (ret)
		goto err_cores;
	ret = pdev->ops->ctx_start(ctx);
	if (ret)
		goto err_regions;

	/* the regions and cores above are complete before anyone sees this */
	smp_store_release(&ctx->setup_done, true);
	return 0;

err_regions:
	pto_free_regions(ctx);
err_cores:
	kfree(ctx->cores);
	ctx->cores = NULL;
	return ret;
}

static int pto_ioctl_setup(struct pto_ctx *ctx, void __user *u, size_t us)
{
	struct pto_setup k;
	int ret;

	ret = pto_copy_in(&k, sizeof(k), u, us);
	if (ret)
		return ret;
	ret = pto_setup_check(&k);
	if (ret)
		return ret;
	mutex_lock(&ctx->lock);
	if (ctx->setup_done)
		ret = -EBUSY;
	else
		ret = pto_do_setup(ctx, &k);
	mutex_unlock(&ctx->lock);
	if (ret)
		return ret;
	return pto_copy_out(u, us, &k, sizeof(k));
}

static int pto_ioctl_bind_op(struct pto_ctx *ctx, void __user *u, size_t us)
{
	struct pto_bind_op k;
	u32 kid, type;
	int ret;

	ret = pto_copy_in(&k, sizeof(k), u, us);
	if (ret)
		return ret;
	if (k.flags || k.kernel_id >= PTO_MAX_KERNELS ||
	    k.worker_type >= PTO_UAPI_NUM_WORKER_TYPES || k.op >= PTO_OP_COUNT)
		return -EINVAL;
	kid = array_index_nospec(k.kernel_id, PTO_MAX_KERNELS);
	type = array_index_nospec(k.worker_type, PTO_UAPI_NUM_WORKER_TYPES);
	if (!ctx->pdev->cores[type])
		return -ENXIO;		/* no core could ever run it */
	mutex_lock(&ctx->lock);
	WRITE_ONCE(ctx->type_of[kid], type);
	WRITE_ONCE(ctx->op_of[kid], k.op + 1);
	mutex_unlock(&ctx->lock);
	return 0;
}

/**
 * pto_ctx_kick() - the host wrote a doorbell: let the core look at it
 * @ctx: the context
 * @k: the request, copied from userspace (ioctl or io_uring command)
 *
 * Return: 0, -EINVAL for a malformed request or a context not set up,
 * -EIO once the context failed.
 */
int pto_ctx_kick(struct pto_ctx *ctx, const struct pto_kick *k)
{
	u32 core = k->core;

	if (k->flags || k->__pad)
		return -EINVAL;
	if (!pto_ctx_ready(ctx))
		return -EINVAL;
	if (core != PTO_KICK_ALL) {
		if (core >= ctx->num_cores)
			return -EINVAL;
		core = array_index_nospec(core, ctx->num_cores);
	}
	if (READ_ONCE(ctx->failed))
		return -EIO;
	ctx->pdev->ops->kick(ctx, core);
	return 0;
}

static int pto_ioctl_kick(struct pto_ctx *ctx, void __user *u, size_t us)
{
	struct pto_kick k;
	int ret;

	ret = pto_copy_in(&k, sizeof(k), u, us);
	if (ret)
		return ret;
	return pto_ctx_kick(ctx, &k);
}

static bool pto_wait_done(struct pto_ctx *ctx, u64 head)
{
	return pto_ctx_tail(ctx) > head || READ_ONCE(ctx->failed) ||
	       pto_ctx_gone(ctx);
}

static int pto_ioctl_wait(struct pto_ctx *ctx, void __user *u, size_t us)
{
	struct pto_wait k;
	ktime_t timeout;
	int failed;
	long ret;

	ret = pto_copy_in(&k, sizeof(k), u, us);
	if (ret)
		return ret;
	if (k.flags || k.__pad0 || k.cring_tail)
		return -EINVAL;
	if (!pto_ctx_ready(ctx))
		return -EINVAL;
	timeout = ns_to_ktime(min_t(u64, k.timeout_ns, KTIME_MAX));
	if (k.timeout_ns)
		ret = wait_event_interruptible_hrtimeout(ctx->wq,
							 pto_wait_done(ctx, k.cring_head),
							 timeout);
	if (ret == -ERESTARTSYS)
		return -EINTR;
	if (READ_ONCE(ctx->pdev->dead))
		return -ENODEV;
	failed = pto_ctx_failed(ctx);
	k.cring_tail = pto_ctx_tail(ctx);
	if (k.cring_tail <= k.cring_head && failed)
		return -EIO;
	return pto_copy_out(u, us, &k, sizeof(k));
}

typedef int (*pto_ioctl_fn)(struct pto_ctx *ctx, void __user *u, size_t us);

static const struct {
	unsigned int cmd;
	pto_ioctl_fn fn;
} pto_ioctls[] = {
	{ PTO_IOCTL_GET_INFO, pto_ioctl_get_info },
	{ PTO_IOCTL_SETUP, pto_ioctl_setup },
	{ PTO_IOCTL_BIND_OP, pto_ioctl_bind_op },
	{ PTO_IOCTL_KICK, pto_ioctl_kick },
	{ PTO_IOCTL_WAIT, pto_ioctl_wait },
};

static long pto_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pto_ctx *ctx = file->private_data;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != PTO_IOCTL_BASE || nr >= ARRAY_SIZE(pto_ioctls))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(pto_ioctls));
	/* any size: copy_struct_from_user() extensibility; same direction */
	if ((cmd & ~IOCSIZE_MASK) != (pto_ioctls[nr].cmd & ~IOCSIZE_MASK))
		return -ENOTTY;
	if (READ_ONCE(ctx->pdev->dead))
		return -ENODEV;
	return pto_ioctls[nr].fn(ctx, (void __user *)arg, _IOC_SIZE(cmd));
}

/* ---- mmap, poll ------------------------------------------------------------ */

static int pto_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pto_ctx *ctx = file->private_data;
	unsigned long off = vma->vm_pgoff;
	unsigned long shift = PTO_MMAP_SHIFT - PAGE_SHIFT;
	unsigned long r = off >> shift;

	if (READ_ONCE(ctx->pdev->dead))
		return -ENODEV;
	if (!pto_ctx_ready(ctx))
		return -EINVAL;
	if ((off & ((1UL << shift) - 1)) || r >= PTO_NUM_REGIONS)
		return -EINVAL;
	r = array_index_nospec(r, PTO_NUM_REGIONS);
	if (vma->vm_end - vma->vm_start > ctx->region_size[r])
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	pto_vma_clear_mayexec(vma);
	return remap_vmalloc_range(vma, ctx->region[r], 0);
}

static __poll_t pto_poll(struct file *file, poll_table *pt)
{
	struct pto_ctx *ctx = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &ctx->wq, pt);
	if (pto_ctx_gone(ctx))
		return EPOLLERR | EPOLLHUP;
	if (!pto_ctx_ready(ctx))
		return 0;
	if (pto_ctx_tail(ctx) != READ_ONCE(ctx->cring->head))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(ctx->failed))
		mask |= EPOLLERR;
	return mask;
}

/* ---- fdinfo -------------------------------------------------------------------- */

static void pto_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct pto_ctx *ctx = file->private_data;
	bool setup = pto_ctx_ready(ctx);
	u64 inflight = 0, slots = 0;
	u32 i, c;
	int t;

	seq_puts(m, "pto-driver:\tpto\n");
	seq_printf(m, "pto-device:\tpto%u\n", ctx->pdev->id);
	seq_printf(m, "pto-client-id:\t%llu\n", ctx->client_id);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		seq_printf(m, "pto-engine-%s:\t%lld ns\n",
			   pto_worker_type_names[t],
			   (s64)atomic64_read(&ctx->busy_ns[t]));
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		seq_printf(m, "pto-engine-capacity-%s:\t%u\n",
			   pto_worker_type_names[t], ctx->pdev->cores[t]);
	seq_printf(m, "pto-memory-heap:\t%zu KiB\n",
		   setup ? ctx->region_size[PTO_REGION_HEAP] >> 10 : 0);
	seq_printf(m, "pto-memory-window:\t%zu KiB\n",
		   setup ? ctx->region_size[PTO_REGION_WINDOW] >> 10 : 0);
	/* task slots over all rings */
	for (i = 0; setup && i < ctx->nrings; i++)
		slots += ctx->ring[i].task_window;
	seq_printf(m, "pto-task-window:\t%llu\n", slots);
	for (i = 0; setup && i < ctx->num_cores; i++) {
		c = READ_ONCE(ctx->cores[i].regs->doorbell) -
		    READ_ONCE(ctx->cores[i].done);
		inflight += min_t(u32, c, PTO_CORE_QUEUE_SLOTS);
	}
	seq_printf(m, "pto-tasks-in-flight:\t%llu\n", inflight);
	seq_printf(m, "pto-tasks-done:\t%lld\n",
		   (s64)atomic64_read(&ctx->tasks_done));
	seq_printf(m, "pto-tasks-failed:\t%lld\n",
		   (s64)atomic64_read(&ctx->tasks_failed));
	seq_printf(m, "pto-state:\t%s\n", READ_ONCE(ctx->failed) ? "failed" :
		   inflight ? "active" : "idle");
}

const struct file_operations pto_fops = {
	.owner = THIS_MODULE,
	.open = pto_open,
	.release = pto_release,
	.unlocked_ioctl = pto_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = pto_mmap,
	.poll = pto_poll,
	.uring_cmd = pto_uring_cmd,
	.show_fdinfo = pto_show_fdinfo,
};
