// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts: open(), the ioctls, mmap of the four regions, poll and fdinfo
 * (the io_uring commands are in pto_uring.c, the argument checks in
 * pto_check.c).  Every open() is isolated: its regions are private
 * memory reachable only through its own file.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/freezer.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/ratelimit.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>

#include "pto_drv.h"
#include "pto_compat.h"

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
	if (wq_has_sleeper(&ctx->wq))
		wake_up_all(&ctx->wq);
	pto_uring_wake(ctx);
}

/**
 * pto_ctx_fail() - mark a context failed
 * @ctx: the context
 * @err: the failure, a negative errno
 *
 * The first failure sticks: later calls keep it.  Queued tasks then
 * complete with -ECANCELED without running, a task in progress stops at
 * its next section, KICK fails with -EIO and waiters wake so they can
 * report it.
 */
void pto_ctx_fail(struct pto_ctx *ctx, int err)
{
	if (!cmpxchg(&ctx->failed, 0, err))
		dev_dbg(ctx->pdev->dev, "client %llu failed: %d\n",
			ctx->client_id, err);
	pto_ctx_notify(ctx);
	/* spinning cores look at the failure now, not when their time ends */
	if (pto_ctx_ready(ctx))
		ctx->pdev->ops->kick(ctx, PTO_KICK_ALL);
}
EXPORT_SYMBOL_IF_KUNIT(pto_ctx_fail);

/**
 * pto_ctx_post() - post a completion
 * @ctx: the context, set up
 * @core: the core that ran the task
 * @handle: the task
 * @status: 0 or -errno
 * @start_ns: when it started
 * @end_ns: when it ended
 * @fail: if not 0, fail the context with it at the same time
 *
 * Reserves tail, fills the entry and publishes seq last.  A host that
 * does not consume its ring fails the context with -EOVERFLOW instead of
 * having its unread completions overwritten.
 *
 * Context: any context that may take a spinlock.
 * Return: 0, or -EOVERFLOW when the ring is full (nothing was posted).
 */
int pto_ctx_post(struct pto_ctx *ctx, u32 core, u64 handle, int status,
		 u64 start_ns, u64 end_ns, int fail)
{
	struct pto_completion *e;
	u64 pos;

	spin_lock(&ctx->cring_lock);
	pos = ctx->cring_tail;
	if (pos - READ_ONCE(ctx->cring->head) >= ctx->cring_size) {
		spin_unlock(&ctx->cring_lock);
		pto_ctx_fail(ctx, -EOVERFLOW);
		return -EOVERFLOW;
	}
	/*
	 * Fail together with publishing the completion: whoever sees the
	 * failure and then takes cring_lock also sees the completion, so a
	 * waiter never reports -EIO while the failed task's entry is due.
	 */
	if (fail)
		cmpxchg(&ctx->failed, 0, fail);
	ctx->cring_tail = pos + 1;
	WRITE_ONCE(ctx->cring->tail, pos + 1);
	e = &ctx->centries[pos & (ctx->cring_size - 1)];
	WRITE_ONCE(e->task_id, handle);
	WRITE_ONCE(e->core, core);
	WRITE_ONCE(e->status, status);
	WRITE_ONCE(e->start_ns, start_ns);
	WRITE_ONCE(e->end_ns, end_ns);
	/* the entry is complete before the host sees its seq */
	smp_store_release(&e->seq, (u32)(pos + 1));
	spin_unlock(&ctx->cring_lock);

	if (status) {
		atomic64_inc(&ctx->tasks_failed);
		atomic64_inc(&ctx->pdev->tasks_failed);
	} else {
		atomic64_inc(&ctx->tasks_done);
		atomic64_inc(&ctx->pdev->tasks_done);
	}
	pto_ctx_notify(ctx);
	if (fail && pto_ctx_ready(ctx))
		ctx->pdev->ops->kick(ctx, PTO_KICK_ALL);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ctx_post);

/* ---- lifetime ---------------------------------------------------------------- */

/**
 * pto_ctx_create() - a new context of a device
 * @pdev: the device; the context takes over the caller's reference
 * @u: the opener's accounting, from pto_user_get(); taken over too
 * @exempt: the opener may exceed the per-user limits
 *
 * Context: process context.
 * Return: the context with one reference, or NULL (nothing taken over).
 */
struct pto_ctx *pto_ctx_create(struct pto_device *pdev, struct pto_user *u,
			       bool exempt)
{
	struct pto_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;
	kref_init(&ctx->ref);
	ctx->pdev = pdev;
	ctx->user = u;
	ctx->exempt = exempt;
	ctx->client_id = atomic64_inc_return(&pto_next_client_id);
	INIT_LIST_HEAD(&ctx->node);
	INIT_LIST_HEAD(&ctx->kill_node);
	mutex_init(&ctx->lock);
	spin_lock_init(&ctx->cring_lock);
	init_waitqueue_head(&ctx->wq);
	pto_uring_init(ctx);
	return ctx;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ctx_create);

static void pto_free_regions(struct pto_ctx *ctx)
{
	int i;

	for (i = 0; i < PTO_NUM_REGIONS; i++) {
		pto_region_free(ctx->region[i]);
		ctx->region[i] = NULL;
	}
	if (ctx->charged) {
		pto_mem_uncharge(ctx->user, ctx->charged);
		atomic64_sub(ctx->charged, &ctx->pdev->mem_bytes);
	}
	ctx->charged = 0;
}

static void pto_ctx_release(struct kref *ref)
{
	struct pto_ctx *ctx = container_of(ref, struct pto_ctx, ref);

	pto_free_regions(ctx);
	kfree(ctx->cores);
	if (ctx->user)
		pto_user_put(ctx->user);
	pto_device_put(ctx->pdev);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
}

/**
 * pto_ctx_put() - drop a reference to a context
 * @ctx: the context; the last reference frees its memory, its user's
 *	count and its device reference
 *
 * Context: process context (freeing the regions may sleep).
 */
void pto_ctx_put(struct pto_ctx *ctx)
{
	kref_put(&ctx->ref, pto_ctx_release);
}
EXPORT_SYMBOL_IF_KUNIT(pto_ctx_put);

static int pto_open(struct inode *inode, struct file *file)
{
	bool exempt = capable(CAP_SYS_RESOURCE);
	struct pto_device *pdev;
	struct pto_user *u;
	struct pto_ctx *ctx;
	int ret;

	pdev = pto_device_get_by_minor(iminor(inode));
	if (!pdev)
		return -ENODEV;
	u = pto_user_get(current_euid(), exempt, &ret);
	if (!u) {
		if (ret == -EMFILE)
			dev_warn_ratelimited(pdev->dev,
					     "uid %u has max_user_contexts contexts open\n",
					     from_kuid(&init_user_ns, current_euid()));
		pto_device_put(pdev);
		return ret;
	}
	ctx = pto_ctx_create(pdev, u, exempt);
	if (!ctx) {
		pto_user_put(u);
		pto_device_put(pdev);
		return -ENOMEM;
	}

	mutex_lock(&pdev->lock);
	if (pdev->dead) {
		mutex_unlock(&pdev->lock);
		pto_ctx_put(ctx);
		return -ENODEV;
	}
	list_add_tail(&ctx->node, &pdev->ctxs);
	pdev->nr_contexts++;
	mutex_unlock(&pdev->lock);

	file->private_data = ctx;
	return nonseekable_open(inode, file);
}

/**
 * pto_ctx_shutdown() - stop a context's cores and fail its pending waits
 * @ctx: the context; its release started or its device is dead, so
 *	pto_ctx_gone() is true and nothing new gets queued or parked
 * @res: what parked io_uring WAITs complete with
 *
 * Used by release and by device removal, possibly both at once.  Returns
 * once no core runs; a core stops at its next section, so this waits at
 * most one section per core.
 */
void pto_ctx_shutdown(struct pto_ctx *ctx, int res)
{
	wake_up_all(&ctx->wq);
	pto_uring_cancel(ctx, res);
	if (pto_ctx_ready(ctx))
		ctx->pdev->ops->ctx_stop(ctx);
}

static int pto_release(struct inode *inode, struct file *file)
{
	struct pto_ctx *ctx = file->private_data;
	struct pto_device *pdev = ctx->pdev;

	WRITE_ONCE(ctx->closing, true);
	pto_ctx_shutdown(ctx, -ECANCELED);
	pto_uring_release(ctx);

	mutex_lock(&pdev->lock);
	list_del_init(&ctx->node);
	pdev->nr_contexts--;
	mutex_unlock(&pdev->lock);

	pto_ctx_put(ctx);
	return 0;
}

/* ---- ioctls ---------------------------------------------------------------- */

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
	ret = pto_info_check(&k);
	if (ret)
		return ret;
	k.abi_version = PTO_ABI_VERSION;
	k.features = PTO_DRV_FEATURES;
	for (i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++)
		k.cores[i] = pdev->cores[i];
	k.max_rings = PTO_MAX_RINGS;
	k.max_task_window = READ_ONCE(pto_max_task_window);
	k.max_dep_pool = READ_ONCE(pto_max_dep_pool);
	k.max_args = PTO_MAX_ARGS;
	k.max_heap_size = min_t(u64, READ_ONCE(pto_max_heap_size),
				PTO_HEAP_HARD_MAX);
	k.ops = GENMASK_ULL(PTO_OP_COUNT - 1, 0);
	k.task_timeout_ms = READ_ONCE(pto_task_timeout_ms);
	k.max_wait_ms = READ_ONCE(pto_max_wait_ms);
	k.max_uring_waits = READ_ONCE(pto_max_uring_waits);
	k.mem_avail = pto_mem_avail(ctx->user, ctx->exempt);
	return pto_copy_out(u, us, &k, sizeof(k));
}

/* Allocate and charge the regions SETUP placed; write what the device owns. */
static int pto_alloc_regions(struct pto_ctx *ctx, const struct pto_setup *s)
{
	struct pto_window_header *hdr;
	u8 *win, *regs, *cring;
	u64 bytes;
	u32 i;
	int ret;

	ctx->region_size[PTO_REGION_WINDOW] = s->window.size;
	ctx->region_size[PTO_REGION_HEAP] = s->heap.size;
	ctx->region_size[PTO_REGION_REGS] = s->regs.size;
	ctx->region_size[PTO_REGION_CRING] = s->cring.size;
	bytes = s->window.size + s->heap.size + s->regs.size + s->cring.size;
	ret = pto_mem_charge(ctx->user, ctx->exempt, bytes);
	if (ret) {
		dev_warn_ratelimited(ctx->pdev->dev,
				     "SETUP of %llu bytes refused: max_memory or max_user_memory\n",
				     bytes);
		return ret;
	}
	ctx->charged = bytes;
	atomic64_add(bytes, &ctx->pdev->mem_bytes);
	for (i = 0; i < PTO_NUM_REGIONS; i++) {
		ctx->region[i] = pto_region_alloc(ctx->region_size[i]);
		if (!ctx->region[i]) {
			dev_warn_ratelimited(ctx->pdev->dev,
					     "SETUP: no memory for %zu bytes\n",
					     ctx->region_size[i]);
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
	ctx->features = s->features;
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

	ret = pto_setup_layout(s, pdev->num_cores);
	if (ret)
		return ret;		/* sizes overflow, or heap too small */
	ctx->num_cores = pdev->num_cores;
	ctx->cores = kcalloc(ctx->num_cores, sizeof(*ctx->cores),
			     GFP_KERNEL_ACCOUNT);
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
	ctx->num_cores = 0;
	return ret;
}

static int pto_ioctl_setup(struct pto_ctx *ctx, void __user *u, size_t us)
{
	struct pto_limits lim;
	struct pto_setup k;
	int ret;

	ret = pto_copy_in(&k, sizeof(k), u, us);
	if (ret)
		return ret;
	pto_limits_read(&lim);
	ret = pto_setup_check(&k, &lim);
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
	u16 binding;
	u32 kid;
	int ret;

	ret = pto_copy_in(&k, sizeof(k), u, us);
	if (ret)
		return ret;
	ret = pto_bind_check(&k, ctx->pdev->cores, &binding);
	if (ret)
		return ret;
	kid = array_index_nospec(k.kernel_id, PTO_MAX_KERNELS);
	/* one store: a running core sees the old binding or the new one */
	WRITE_ONCE(ctx->binding[kid], binding);
	return 0;
}

/**
 * pto_ctx_kick() - the host wrote a doorbell: let the core look at it
 * @ctx: the context
 * @k: the request, copied from userspace (ioctl or io_uring command)
 *
 * A failed context runs nothing more, but a core is woken all the same:
 * what the host queued completes with -ECANCELED without running.  A
 * core asleep when the failure came would otherwise keep what was queued
 * after it for ever, and the host would wait for it for ever.
 *
 * Return: 0, -EINVAL for a malformed request or a context not set up,
 * -EIO once the context failed (the core was woken).
 */
int pto_ctx_kick(struct pto_ctx *ctx, const struct pto_kick *k)
{
	u32 core;
	int ret;

	if (!pto_ctx_ready(ctx))
		return -EINVAL;
	ret = pto_kick_check(k, ctx->num_cores, &core);
	if (ret)
		return ret;
	ret = READ_ONCE(ctx->failed) ? -EIO : 0;
	ctx->pdev->ops->kick(ctx, core);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ctx_kick);

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

/* a WAIT sleeps interruptibly, and freezes in place on suspend */
#define PTO_WAIT_STATE	(TASK_INTERRUPTIBLE | TASK_FREEZABLE)

/*
 * Sleeps interruptibly and freezably.  A signal returns -ERESTARTSYS with
 * the time left written back to timeout_ns, so a restarted WAIT (SA_RESTART)
 * or a caller that retries after -EINTR waits for the rest only.
 */
static int pto_ioctl_wait(struct pto_ctx *ctx, void __user *u, size_t us)
{
	struct pto_wait k;
	ktime_t start, timeout;
	u64 spent;
	int failed;
	long ret;

	ret = pto_copy_in(&k, sizeof(k), u, us);
	if (ret)
		return ret;
	ret = pto_wait_check(&k);
	if (ret)
		return ret;
	if (!pto_ctx_ready(ctx))
		return -EINVAL;
	if (k.timeout_ns) {
		start = ktime_get();
		timeout = ns_to_ktime(min_t(u64, k.timeout_ns, KTIME_MAX));
		ret = 0;
		if (!pto_wait_done(ctx, k.cring_head))
			ret = __wait_event_hrtimeout(ctx->wq,
						     pto_wait_done(ctx, k.cring_head),
						     timeout, PTO_WAIT_STATE);
		if (ret == -ERESTARTSYS) {
			spent = ktime_to_ns(ktime_sub(ktime_get(), start));
			k.timeout_ns = k.timeout_ns > spent ?
				       k.timeout_ns - spent : 0;
			if (pto_copy_out(u, us, &k, sizeof(k)))
				return -EFAULT;
			return -ERESTARTSYS;
		}
	}
	if (READ_ONCE(ctx->pdev->dead))
		return -ENODEV;
	failed = pto_ctx_failed(ctx);
	k.cring_tail = pto_ctx_tail(ctx);
	if (k.cring_tail <= k.cring_head && failed)
		return -EIO;
	return pto_copy_out(u, us, &k, sizeof(k));
}

typedef int (*pto_ioctl_fn)(struct pto_ctx *ctx, void __user *u, size_t us);

/* Indexed like pto_check.c's table. */
static const pto_ioctl_fn pto_ioctl_fns[] = {
	pto_ioctl_get_info,
	pto_ioctl_setup,
	pto_ioctl_bind_op,
	pto_ioctl_kick,
	pto_ioctl_wait,
};

static long pto_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pto_ctx *ctx = file->private_data;
	unsigned int nr;
	int ret;

	ret = pto_ioctl_lookup(cmd, file->f_mode, &nr);
	if (ret)
		return ret;
	if (READ_ONCE(ctx->pdev->dead))
		return -ENODEV;
	if (WARN_ON_ONCE(nr >= ARRAY_SIZE(pto_ioctl_fns)))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(pto_ioctl_fns));
	return pto_ioctl_fns[nr](ctx, (void __user *)arg, _IOC_SIZE(cmd));
}

/* ---- mmap, poll ------------------------------------------------------------ */

/*
 * Pages zapped by madvise(MADV_DONTNEED) fault back in from the region:
 * the mapping always shows the device memory, never a private page.
 */
static vm_fault_t pto_vm_fault(struct vm_fault *vmf)
{
	struct pto_ctx *ctx = vmf->vma->vm_file->private_data;
	const unsigned long shift = PTO_MMAP_SHIFT - PAGE_SHIFT;
	unsigned long r = vmf->pgoff >> shift;
	unsigned long idx = vmf->pgoff & ((1UL << shift) - 1);
	struct page *page;

	if (r >= PTO_NUM_REGIONS)
		return VM_FAULT_SIGBUS;
	r = array_index_nospec(r, PTO_NUM_REGIONS);
	if (!ctx->region[r] || idx >= ctx->region_size[r] >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	page = vmalloc_to_page((u8 *)ctx->region[r] + (idx << PAGE_SHIFT));
	if (!page)
		return VM_FAULT_SIGBUS;
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct pto_vm_ops = {
	.fault = pto_vm_fault,
};

static int pto_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pto_ctx *ctx = file->private_data;
	u32 r;
	int ret;

	if (READ_ONCE(ctx->pdev->dead))
		return -ENODEV;
	if (!pto_ctx_ready(ctx))
		return -EINVAL;
	ret = pto_mmap_check(vma->vm_pgoff, vma->vm_end - vma->vm_start,
			     ctx->region_size, &r);
	if (ret)
		return ret;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	pto_vma_clear_mayexec(vma);
	/*
	 * The context's memory is its opener's: a forked child does not
	 * inherit the mapping (it may map the inherited fd itself), and the
	 * mapping neither grows nor appears in core dumps.
	 */
	pto_vma_set_flags(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &pto_vm_ops;
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

/*
 * Documentation/gpu/drm-usage-stats.rst keys (drm-driver, drm-client-id,
 * drm-engine-*, drm-total-*, drm-resident-*), then this driver's own,
 * prefixed pto-.  Every value comes from the kernel's own state, none
 * from the mapped regions.  The pto-driver, pto-client-id, pto-engine-*
 * and pto-memory-* keys repeat drm-* values for tools that read them.
 */
static void pto_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct pto_ctx *ctx = file->private_data;
	bool setup = pto_ctx_ready(ctx);
	u64 inflight = 0, slots = 0, busy[PTO_UAPI_NUM_WORKER_TYPES];
	size_t heap_kib = 0, win_kib = 0;
	const char *name;
	u32 i;
	int t;

	if (setup) {
		heap_kib = ctx->region_size[PTO_REGION_HEAP] >> 10;
		win_kib = ctx->region_size[PTO_REGION_WINDOW] >> 10;
		for (i = 0; i < ctx->nrings; i++)
			slots += ctx->ring[i].task_window;
		for (i = 0; i < ctx->num_cores; i++)
			inflight += READ_ONCE(ctx->cores[i].busy);
	}
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		busy[t] = atomic64_read(&ctx->busy_ns[t]);

	seq_puts(m, "drm-driver:\tpto\n");
	seq_printf(m, "drm-client-id:\t%llu\n", ctx->client_id);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		name = pto_worker_type_names[t];
		seq_printf(m, "drm-engine-%s:\t%llu ns\n", name, busy[t]);
		seq_printf(m, "drm-engine-capacity-%s:\t%u\n", name,
			   ctx->pdev->cores[t]);
	}
	seq_printf(m, "drm-total-heap:\t%zu KiB\n", heap_kib);
	seq_printf(m, "drm-resident-heap:\t%zu KiB\n", heap_kib);
	seq_printf(m, "drm-total-window:\t%zu KiB\n", win_kib);
	seq_printf(m, "drm-resident-window:\t%zu KiB\n", win_kib);

	seq_printf(m, "pto-device:\tpto%u\n", ctx->pdev->id);
	seq_printf(m, "pto-task-window:\t%llu\n", slots);
	seq_printf(m, "pto-tasks-in-flight:\t%llu\n", inflight);
	seq_printf(m, "pto-tasks-done:\t%lld\n",
		   (s64)atomic64_read(&ctx->tasks_done));
	seq_printf(m, "pto-tasks-failed:\t%lld\n",
		   (s64)atomic64_read(&ctx->tasks_failed));
	seq_printf(m, "pto-state:\t%s\n", READ_ONCE(ctx->failed) ? "failed" :
		   inflight ? "active" : "idle");

	/* the same values under their earlier names (tools/ptotop) */
	seq_puts(m, "pto-driver:\tpto\n");
	seq_printf(m, "pto-client-id:\t%llu\n", ctx->client_id);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		seq_printf(m, "pto-engine-%s:\t%llu ns\n",
			   pto_worker_type_names[t], busy[t]);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		seq_printf(m, "pto-engine-capacity-%s:\t%u\n",
			   pto_worker_type_names[t], ctx->pdev->cores[t]);
	seq_printf(m, "pto-memory-heap:\t%zu KiB\n", heap_kib);
	seq_printf(m, "pto-memory-window:\t%zu KiB\n", win_kib);
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
