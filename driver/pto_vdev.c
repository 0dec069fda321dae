// SPDX-License-Identifier: GPL-2.0
/*
 * The software device: every core of a context is a work item on pto_wq.
 * A KICK queues the core's work; the work takes what the host queued
 * behind the doorbell, runs it and posts a completion.
 *
 * Everything in the mapped regions is written by userspace and therefore
 * untrusted: values are read once into kernel copies and validated there.
 */
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/sched.h>

#include "pto_compat.h"
#include "pto_drv.h"
#include "pto_ops.h"

/* Tasks one work run executes before yielding to other contexts. */
#define PTO_CORE_BATCH	32

/* A task's description, copied out of the shared window and checked. */
struct pto_task_copy {
	u32 kernel_id;
	u32 nargs;
	u64 args[PTO_MAX_ARGS];
};

/*
 * PTO_OP_SPIN_NS: keep the core busy for ns.  Sleeps rather than spins so
 * a slow VM is not starved, and stops early on teardown or timeout.
 */
static int pto_spin(struct pto_ctx *ctx, u64 ns, u64 start, u64 timeout_ns)
{
	u64 now;

	for (;;) {
		now = ktime_get_ns();
		if (now - start >= ns)
			return 0;
		if (timeout_ns && now - start >= timeout_ns)
			return -ETIMEDOUT;
		if (pto_ctx_gone(ctx) || READ_ONCE(ctx->failed))
			return -ECANCELED;
		if (ns - (now - start) > 20 * NSEC_PER_USEC)
			usleep_range(10, 1000);
		else
			cond_resched();
	}
}

/*
 * Copy the descriptor a queued handle names.  The handle and the
 * descriptor are userspace's: the ring must be one SETUP made, and the
 * descriptor in the handle's slot must carry that handle.
 */
static int pto_copy_task(struct pto_ctx *ctx, u64 handle,
			 struct pto_task_copy *t)
{
	u32 r = PTO_TASK_RING(handle);
	const struct pto_ring *ring;
	struct pto_task_desc *d;

	if (r >= ctx->nrings)
		return -EINVAL;
	ring = &ctx->ring[array_index_nospec(r, ctx->nrings)];
	d = &ring->desc[PTO_TASK_SEQ(handle) & (ring->task_window - 1)];
	if (READ_ONCE(d->task_id) != handle)
		return -EINVAL;
	t->kernel_id = READ_ONCE(d->kernel_id);
	t->nargs = READ_ONCE(d->nargs);
	if (t->kernel_id >= PTO_MAX_KERNELS || t->nargs > PTO_MAX_ARGS)
		return -EINVAL;
	t->kernel_id = array_index_nospec(t->kernel_id, PTO_MAX_KERNELS);
	memcpy(t->args, d->args, t->nargs * sizeof(u64));
	return 0;
}

/*
 * Ops run with preemption off (pto_fpu_begin), so a matrix op's work is
 * bounded up front: multiply-adds beyond max_task_macs fail with -E2BIG
 * instead of stalling a CPU.  Other ops are linear in the heap size.
 */
static int pto_check_cost(u32 op, const struct pto_task_copy *t)
{
	u64 mn, mnk;

	if (op != PTO_OP_GEMM_F32 && op != PTO_OP_MATMUL_BT_F32)
		return 0;
	if (t->nargs < 6)
		return -EINVAL;
	if (check_mul_overflow(t->args[3], t->args[4], &mn) ||
	    check_mul_overflow(mn, t->args[5], &mnk) ||
	    mnk > READ_ONCE(pto_max_task_macs))
		return -E2BIG;
	return 0;
}

static int pto_run_task(struct pto_core *core, u64 handle, u64 start)
{
	struct pto_ctx *ctx = core->ctx;
	u64 timeout_ns = (u64)READ_ONCE(pto_task_timeout_ms) * NSEC_PER_MSEC;
	struct pto_op_mem mem = {
		.base = 0,
		.size = ctx->heap_size,
		.host = ctx->region[PTO_REGION_HEAP],
	};
	struct pto_task_copy t;
	u32 op;
	int ret;

	if (READ_ONCE(ctx->failed) || pto_ctx_gone(ctx))
		return -ECANCELED;
	ret = pto_copy_task(ctx, handle, &t);
	if (ret)
		return ret;
	op = READ_ONCE(ctx->op_of[t.kernel_id]);
	if (!op || READ_ONCE(ctx->type_of[t.kernel_id]) != core->type)
		return -EINVAL;
	op--;
	if (op == PTO_OP_SPIN_NS)
		return t.nargs < 1 ? -EINVAL :
			pto_spin(ctx, t.args[0], start, timeout_ns);

	ret = pto_check_cost(op, &t);
	if (ret)
		return ret;
	pto_fpu_begin();
	ret = pto_op_exec(op, t.args, t.nargs, &mem);
	pto_fpu_end();
	if (timeout_ns && ktime_get_ns() - start > timeout_ns)
		ret = -ETIMEDOUT;
	return ret;
}

/*
 * Post a completion: reserve tail, fill the entry, publish seq last; fail
 * the context with fail (if not 0) at the same time.  A host that does not
 * consume its ring fails the context instead of having its unread
 * completions overwritten.
 */
static int pto_post_completion(struct pto_core *core, u64 handle, int status,
			       u64 start_ns, u64 end_ns, int fail)
{
	struct pto_ctx *ctx = core->ctx;
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
	WRITE_ONCE(e->core, core->index);
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
	return 0;
}

/* Execute one queued entry; false when the host broke the protocol. */
static bool pto_core_step(struct pto_core *core)
{
	struct pto_ctx *ctx = core->ctx;
	struct pto_core_regs *r = core->regs;
	u64 entry, handle, start, end;
	int status;

	entry = READ_ONCE(r->queue[core->consumed % PTO_CORE_QUEUE_SLOTS]);
	core->consumed++;
	/* the host may reuse the slot once it sees consumed move */
	smp_store_release(&r->consumed, core->consumed);
	/* entries are handle + 1; 0 is never a valid entry */
	handle = entry - 1;
	WRITE_ONCE(r->status_task, handle);
	WRITE_ONCE(r->status, PTO_CORE_ACK);

	start = ktime_get_ns();
	status = entry ? pto_run_task(core, handle, start) : -EINVAL;
	end = ktime_get_ns();

	WRITE_ONCE(r->busy_ns, READ_ONCE(r->busy_ns) + (end - start));
	atomic64_add(end - start, &ctx->busy_ns[core->type]);
	atomic64_add(end - start, &ctx->pdev->busy_ns[core->type]);
	/* a timed-out task fails its context (drm_sched style) */
	if (pto_post_completion(core, handle, status, start, end,
				status == -ETIMEDOUT ? -ETIMEDOUT : 0))
		return false;
	core->done++;
	/* busy_ns and the completion are visible before FIN */
	smp_store_release(&r->status, PTO_CORE_FIN);
	return true;
}

static void pto_core_work(struct work_struct *work)
{
	struct pto_core *core = container_of(work, struct pto_core, work);
	struct pto_ctx *ctx = core->ctx;
	struct pto_core_regs *r = core->regs;
	unsigned int n = 0;
	u32 bell;

	for (;;) {
		if (pto_ctx_gone(ctx))
			return;
		WRITE_ONCE(r->core_waiting, 0);
		/* pairs with the host's release of doorbell: queue[] is valid */
		bell = smp_load_acquire(&r->doorbell);
		if (bell == core->consumed) {
			/* publish "asleep", then look once more (host races) */
			WRITE_ONCE(r->core_waiting, 1);
			/* waiting store before the doorbell load; the host
			 * orders doorbell store before its waiting load
			 */
			smp_mb();
			if (READ_ONCE(r->doorbell) == core->consumed)
				return;
			continue;
		}
		if (bell - core->consumed > PTO_CORE_QUEUE_SLOTS) {
			pto_ctx_fail(ctx, -EPROTO);
			return;
		}
		if (!pto_core_step(core))
			return;
		if (++n == PTO_CORE_BATCH) {
			/* let other contexts' cores run: fairness */
			queue_work(pto_wq, work);
			return;
		}
	}
}

static int pto_vdev_ctx_start(struct pto_ctx *ctx)
{
	u32 i;

	for (i = 0; i < ctx->num_cores; i++)
		INIT_WORK(&ctx->cores[i].work, pto_core_work);
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
		if (READ_ONCE(c->regs->doorbell) != READ_ONCE(c->consumed))
			queue_work(pto_wq, &c->work);
	}
}

/* Caller made pto_ctx_gone() true, so running work ends soon. */
static void pto_vdev_ctx_stop(struct pto_ctx *ctx)
{
	u32 i;

	for (i = 0; i < ctx->num_cores; i++)
		cancel_work_sync(&ctx->cores[i].work);
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
