// SPDX-License-Identifier: GPL-2.0
/*
 * The software device: every core of a context is a work item on pto_wq.
 * A KICK queues the core's work; the work takes what the host queued
 * behind the doorbell, runs it and posts a completion.
 *
 * A work run never sleeps and never runs long: an op runs in sections of
 * bounded cost (pto_exec.c), each between pto_fpu_begin() and
 * pto_fpu_end(), with the deadline, a failure and teardown checked
 * between sections; after PTO_CORE_SLICE_NS or PTO_CORE_BATCH tasks the
 * work requeues itself behind other contexts' cores and returns; a
 * PTO_OP_SPIN_NS task arms the core's hrtimer and returns.  So the bound
 * high-priority workqueue needs no more than a worker or two per CPU
 * however many contexts spin, and no CPU runs with preemption off for
 * longer than one section.
 *
 * Everything in the mapped regions is written by userspace and therefore
 * untrusted: values are read once into kernel copies and validated there.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/nospec.h>
#include <linux/sched.h>

#include "pto_compat.h"
#include "pto_drv.h"

/* Tasks one work run executes before yielding to other contexts. */
#define PTO_CORE_BATCH		32
/* Time one work run may take before yielding to other contexts. */
#define PTO_CORE_SLICE_NS	(2 * NSEC_PER_MSEC)
/* What one section with preemption off should take; budgets adapt to it. */
#define PTO_SECTION_TARGET_NS	(250 * NSEC_PER_USEC)
#define PTO_BUDGET_INIT		BIT_ULL(10)
#define PTO_BUDGET_MAX		BIT_ULL(22)

/* A task's description, copied out of the shared window and checked. */
struct pto_task_copy {
	u32 kernel_id;
	u32 nargs;
	u32 view_mask;
	u64 args[PTO_MAX_ARGS];
};

/*
 * Copy the descriptor a queued handle names.  The handle and the
 * descriptor are userspace's: the ring must be one SETUP made, and the
 * descriptor in the handle's slot must carry that handle.  Every field a
 * core uses is read once and checked: known flags (never
 * PTO_TASK_F_NO_DISPATCH), zero pads, and views only where SETUP enabled
 * PTO_FEATURE_VIEWS, each naming an argument the task has.  Without
 * PTO_TASK_F_VIEWS the view mask means nothing and is not read.
 */
static int pto_copy_task(struct pto_ctx *ctx, u64 handle,
			 struct pto_task_copy *t)
{
	u32 r = PTO_TASK_RING(handle), i;
	const struct pto_ring *ring;
	struct pto_task_desc *d;
	u16 flags;

	if (r >= ctx->nrings)
		return -EINVAL;
	ring = &ctx->ring[array_index_nospec(r, ctx->nrings)];
	d = &ring->desc[PTO_TASK_SEQ(handle) & (ring->task_window - 1)];
	if (READ_ONCE(d->task_id) != handle)
		return -EINVAL;
	t->kernel_id = READ_ONCE(d->kernel_id);
	t->nargs = READ_ONCE(d->nargs);
	flags = READ_ONCE(d->flags);
	if (t->kernel_id >= PTO_MAX_KERNELS || t->nargs > PTO_MAX_ARGS)
		return -EINVAL;
	if (flags & ~PTO_DRV_TASK_FLAGS || READ_ONCE(d->__pad1))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(d->__pad0); i++)
		if (READ_ONCE(d->__pad0[i]))
			return -EINVAL;
	t->view_mask = 0;
	if (flags & PTO_TASK_F_VIEWS) {
		if (!(ctx->features & PTO_FEATURE_VIEWS))
			return -EINVAL;
		t->view_mask = READ_ONCE(d->view_mask);
		/* a view past the task's arguments (nargs <= 24) */
		if (t->view_mask & ~(u32)(BIT_ULL(t->nargs) - 1))
			return -EINVAL;
	}
	t->kernel_id = array_index_nospec(t->kernel_id, PTO_MAX_KERNELS);
	t->nargs = array_index_nospec(t->nargs, PTO_MAX_ARGS + 1);
	memcpy(t->args, d->args, t->nargs * sizeof(u64));
	return 0;
}

/*
 * Begin the task core->handle names: 0 when it is in progress (core->busy),
 * else the status it completes with at once.
 */
static int pto_task_start(struct pto_core *core)
{
	struct pto_ctx *ctx = core->ctx;
	struct pto_task_copy t;
	u16 binding;
	u32 op;
	int ret;

	if (READ_ONCE(ctx->failed) || pto_ctx_gone(ctx))
		return -ECANCELED;
	ret = pto_copy_task(ctx, core->handle, &t);
	if (ret)
		return ret;
	/* one load: the op and the worker type of the same BIND_OP */
	binding = READ_ONCE(ctx->binding[t.kernel_id]);
	if (!binding || PTO_BINDING_TYPE(binding) != core->type)
		return -EINVAL;
	op = PTO_BINDING_OP(binding);
	if (op == PTO_OP_SPIN_NS) {
		if (t.nargs < 1)
			return -EINVAL;
		core->spin = true;
		core->spin_ns = t.args[0];
	} else {
		ret = pto_op_prepare(&core->run, op, t.args, t.nargs,
				     t.view_mask, ctx->region[PTO_REGION_HEAP],
				     ctx->heap_size,
				     READ_ONCE(pto_max_task_macs),
				     READ_ONCE(pto_max_section_cost));
		if (ret)
			return ret;
		core->spin = false;
	}
	WRITE_ONCE(core->busy, true);
	return 0;
}

/* Sections that ran well under the target while using their budget grow. */
static void pto_core_adapt(struct pto_core *core, u64 ns, u64 cost)
{
	if (ns > PTO_SECTION_TARGET_NS) {
		if (core->budget > 1)
			core->budget /= 2;
	} else if (ns < PTO_SECTION_TARGET_NS / 4 && 2 * cost >= core->budget &&
		   core->budget < PTO_BUDGET_MAX) {
		core->budget *= 2;
	}
}

/*
 * Move the task in progress on: its status once it is over, or
 * -EINPROGRESS when the core yielded (its work requeued, or its timer
 * armed for a spinning task).
 */
static int pto_task_advance(struct pto_core *core, u64 slice_end)
{
	struct pto_ctx *ctx = core->ctx;
	u64 timeout_ns = (u64)READ_ONCE(pto_task_timeout_ms) * NSEC_PER_MSEC;
	u64 now, elapsed, left, ns, pos;
	bool ran = false;
	int ret;

	for (;;) {
		if (READ_ONCE(ctx->failed) || pto_ctx_gone(ctx))
			return -ECANCELED;
		now = ktime_get_ns();
		elapsed = now - core->start_ns;
		if (core->spin) {
			if (elapsed >= core->spin_ns)
				return 0;
			if (timeout_ns && elapsed >= timeout_ns)
				return -ETIMEDOUT;
			left = core->spin_ns - elapsed;
			if (timeout_ns)
				left = min(left, timeout_ns - elapsed);
			hrtimer_start(&core->timer, ns_to_ktime(left),
				      HRTIMER_MODE_REL);
			return -EINPROGRESS;
		}
		if (pto_op_done(&core->run))
			return 0;
		if (timeout_ns && elapsed >= timeout_ns)
			return -ETIMEDOUT;
		if (ran && now >= slice_end) {
			queue_work(pto_wq, &core->work);
			return -EINPROGRESS;
		}
		pos = core->run.pos;
		ret = pto_op_section(&core->run, core->budget, &ns);
		if (ret)
			return ret;
		ran = true;
		pto_core_adapt(core, ns,
			       (core->run.pos - pos) * core->run.unit_cost);
		pto_device_note_section(ctx->pdev, ns);
		cond_resched();
	}
}

/*
 * Take the next queued entry: 1 when one was taken (core->handle), 0 when
 * the queue is empty and the core is asleep, -EPROTO when the host
 * queued more than the slots hold (the context failed).
 */
static int pto_core_take(struct pto_core *core)
{
	struct pto_core_regs *r = core->regs;
	u64 entry;
	u32 bell;

	for (;;) {
		WRITE_ONCE(r->core_waiting, 0);
		/* pairs with the host's release of doorbell: queue[] is valid */
		bell = smp_load_acquire(&r->doorbell);
		if (bell != core->consumed)
			break;
		/* publish "asleep", then look once more (host races) */
		WRITE_ONCE(r->core_waiting, 1);
		/*
		 * The waiting store before the doorbell load; the host
		 * orders its doorbell store before its waiting load.
		 */
		smp_mb();
		if (READ_ONCE(r->doorbell) == core->consumed)
			return 0;
	}
	if (bell - core->consumed > PTO_CORE_QUEUE_SLOTS) {
		pto_ctx_fail(core->ctx, -EPROTO);
		return -EPROTO;
	}
	entry = READ_ONCE(r->queue[core->consumed % PTO_CORE_QUEUE_SLOTS]);
	WRITE_ONCE(core->consumed, core->consumed + 1);
	/* the host may reuse the slot once it sees consumed move */
	smp_store_release(&r->consumed, core->consumed);
	/* entries are handle + 1; 0 names no ring, so it fails -EINVAL */
	core->handle = entry - 1;
	WRITE_ONCE(r->status_task, core->handle);
	WRITE_ONCE(r->status, PTO_CORE_ACK);
	core->start_ns = ktime_get_ns();
	return 1;
}

/* Post the task's completion; false when the host broke the protocol. */
static bool pto_core_finish(struct pto_core *core, int status)
{
	struct pto_ctx *ctx = core->ctx;
	struct pto_core_regs *r = core->regs;
	u64 start = core->start_ns, end = ktime_get_ns();

	WRITE_ONCE(core->busy, false);
	core->busy_total += end - start;
	WRITE_ONCE(r->busy_ns, core->busy_total);
	atomic64_add(end - start, &ctx->busy_ns[core->type]);
	atomic64_add(end - start, &ctx->pdev->busy_ns[core->type]);
	/* a timed-out task fails its context (drm_sched style) */
	if (pto_ctx_post(ctx, core->index, core->handle, status, start, end,
			 status == -ETIMEDOUT ? -ETIMEDOUT : 0))
		return false;
	/* busy_ns and the completion are visible before FIN */
	smp_store_release(&r->status, PTO_CORE_FIN);
	return true;
}

static void pto_core_work(struct work_struct *work)
{
	struct pto_core *core = container_of(work, struct pto_core, work);
	u64 slice_end = ktime_get_ns() + PTO_CORE_SLICE_NS;
	unsigned int n = 0;
	int status;

	for (;;) {
		if (pto_ctx_gone(core->ctx))
			return;
		if (!core->busy) {
			if (pto_core_take(core) <= 0)
				return;
			status = pto_task_start(core);
			if (!status)
				status = pto_task_advance(core, slice_end);
		} else {
			status = pto_task_advance(core, slice_end);
		}
		if (status == -EINPROGRESS)
			return;
		if (!pto_core_finish(core, status))
			return;
		if (++n == PTO_CORE_BATCH || ktime_get_ns() >= slice_end) {
			/* let other contexts' cores run: fairness */
			queue_work(pto_wq, work);
			return;
		}
	}
}

/* A spinning task is due: let the core finish it. */
static enum hrtimer_restart pto_core_timer_fn(struct hrtimer *timer)
{
	struct pto_core *core = container_of(timer, struct pto_core, timer);

	queue_work(pto_wq, &core->work);
	return HRTIMER_NORESTART;
}

static int pto_vdev_ctx_start(struct pto_ctx *ctx)
{
	struct pto_core *c;
	u32 i;

	for (i = 0; i < ctx->num_cores; i++) {
		c = &ctx->cores[i];
		c->budget = PTO_BUDGET_INIT;
		INIT_WORK(&c->work, pto_core_work);
		hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
		c->timer.function = pto_core_timer_fn;
	}
	return 0;
}

static void pto_vdev_kick(struct pto_ctx *ctx, u32 core)
{
	struct pto_core *c;
	u32 i;

	if (core != PTO_KICK_ALL) {
		queue_work(pto_wq, &ctx->cores[core].work);
		return;
	}
	/* only cores with work: a KICK_ALL must not wake every worker */
	for (i = 0; i < ctx->num_cores; i++) {
		c = &ctx->cores[i];
		if (READ_ONCE(c->busy) ||
		    READ_ONCE(c->regs->doorbell) != READ_ONCE(c->consumed))
			queue_work(pto_wq, &c->work);
	}
}

/*
 * The caller made pto_ctx_gone() true: a work run or timer that starts
 * from now on returns at once and queues nothing.  Runs that started
 * before may still queue other cores' work or arm their own timers, so
 * the first pass waits for all of them and the second cancels what they
 * left behind.
 */
static void pto_vdev_ctx_stop(struct pto_ctx *ctx)
{
	int pass;
	u32 i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < ctx->num_cores; i++) {
			hrtimer_cancel(&ctx->cores[i].timer);
			cancel_work_sync(&ctx->cores[i].work);
		}
	}
}

/*
 * The software device's backend: cores are work items of pto_wq, so a
 * device needs no state of its own beyond its contexts.
 */
const struct pto_dev_ops pto_vdev_ops = {
	.ctx_start = pto_vdev_ctx_start,
	.kick = pto_vdev_kick,
	.ctx_stop = pto_vdev_ctx_stop,
};
