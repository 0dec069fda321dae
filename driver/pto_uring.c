// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring commands on a context: PTO_URING_CMD_KICK, and
 * PTO_URING_CMD_WAIT, which parks on the context when nothing is
 * available yet.  A parked WAIT completes, from task work, when
 * completions are posted, when the context fails or goes away, when its
 * timeout expires or when its submitter is dying.
 */
#include <linux/io_uring.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "pto_drv.h"
#include "pto_compat.h"

/*
 * A parked WAIT.  It remembers its submitter: 6.1 cannot cancel uring
 * commands, so an exiting submitter would otherwise wait in io_uring's
 * exit path for the WAIT's timeout.
 */
struct pto_uwait {
	struct list_head node;
	struct io_uring_cmd *cmd;
	struct task_struct *task;
	u64 head;
	unsigned long deadline;		/* jiffies */
	s64 res;
};

/* How often parked WAITs look for a dying submitter. */
#define PTO_UWAIT_POLL	(HZ / 20)

/* The command's pdu holds its struct pto_uwait between issue and done. */
static struct pto_uwait **pto_uwait_slot(struct io_uring_cmd *cmd)
{
	BUILD_BUG_ON(sizeof(struct pto_uwait *) > sizeof(cmd->pdu));
	return (struct pto_uwait **)cmd->pdu;
}

static void pto_uwait_free(struct pto_uwait *w)
{
	put_task_struct(w->task);
	kfree(w);
}

static void pto_uwait_complete_cb(PTO_URING_CB_ARGS)
{
	struct pto_uwait *w = *pto_uwait_slot(cmd);
	s64 res = w->res;

	pto_uwait_free(w);
	pto_cmd_done(cmd, res);
}

/* Complete every parked WAIT that pred() selects, with res from it. */
static void pto_uwait_finish(struct pto_ctx *ctx,
			     s64 (*pred)(struct pto_ctx *ctx,
					 struct pto_uwait *w, s64 arg),
			     s64 arg)
{
	struct pto_uwaits *uw = &ctx->uwaits;
	struct pto_uwait *w, *tmp;
	unsigned long next = 0;
	bool more = false;
	LIST_HEAD(done);
	s64 res;

	spin_lock(&uw->lock);
	list_for_each_entry_safe(w, tmp, &uw->list, node) {
		res = pred(ctx, w, arg);
		if (res == S64_MIN) {
			if (!more || time_before(w->deadline, next))
				next = w->deadline;
			more = true;
			continue;
		}
		list_move_tail(&w->node, &done);
		w->res = res;
	}
	uw->next = next;
	spin_unlock(&uw->lock);

	list_for_each_entry_safe(w, tmp, &done, node) {
		list_del(&w->node);
		io_uring_cmd_complete_in_task(w->cmd, pto_uwait_complete_cb);
	}
}

/* S64_MIN: keep waiting; else the result to complete with */
static s64 pto_uwait_ready(struct pto_ctx *ctx, struct pto_uwait *w, s64 tail)
{
	if ((u64)tail > w->head)
		return tail - w->head;
	if (pto_ctx_failed(ctx)) {
		/* the failed task's completion may be newer than tail */
		tail = pto_ctx_tail(ctx);
		return (u64)tail > w->head ? tail - w->head : -EIO;
	}
	if (pto_ctx_gone(ctx))
		return READ_ONCE(ctx->pdev->dead) ? -ENODEV : -ECANCELED;
	if (time_after_eq(jiffies, w->deadline))
		return 0;
	if ((w->task->flags & PF_EXITING) || fatal_signal_pending(w->task))
		return -ECANCELED;
	return S64_MIN;
}

static s64 pto_uwait_all(struct pto_ctx *ctx, struct pto_uwait *w, s64 res)
{
	return res;
}

/* Delay until deadline, but look for dying submitters meanwhile. */
static unsigned long pto_uwait_delay(unsigned long deadline)
{
	if (!time_after(deadline, jiffies))
		return 0;
	return min(deadline - jiffies, (unsigned long)PTO_UWAIT_POLL);
}

static void pto_uwait_timer_fn(struct work_struct *work)
{
	struct pto_uwaits *uw = container_of(to_delayed_work(work),
					     struct pto_uwaits, timer);
	struct pto_ctx *ctx = container_of(uw, struct pto_ctx, uwaits);
	unsigned long next;
	bool more;

	pto_uwait_finish(ctx, pto_uwait_ready, pto_ctx_tail(ctx));
	spin_lock(&uw->lock);
	more = !list_empty(&uw->list);
	next = uw->next;
	spin_unlock(&uw->lock);
	if (more && !READ_ONCE(ctx->closing))
		mod_delayed_work(system_wq, &uw->timer, pto_uwait_delay(next));
}

/**
 * pto_uring_init() - prepare a new context for parked WAITs
 * @ctx: the context, not yet visible to anyone
 */
void pto_uring_init(struct pto_ctx *ctx)
{
	spin_lock_init(&ctx->uwaits.lock);
	INIT_LIST_HEAD(&ctx->uwaits.list);
	INIT_DELAYED_WORK(&ctx->uwaits.timer, pto_uwait_timer_fn);
}

/**
 * pto_uring_wake() - complete the parked WAITs that are satisfied
 * @ctx: the context; completions were posted or it failed or went away
 *
 * Cheap when nothing is parked, so it can follow every completion.
 */
void pto_uring_wake(struct pto_ctx *ctx)
{
	if (!list_empty_careful(&ctx->uwaits.list))
		pto_uwait_finish(ctx, pto_uwait_ready, pto_ctx_tail(ctx));
}

/**
 * pto_uring_cancel() - complete every parked WAIT
 * @ctx: the context, which is closing or whose device is gone
 * @res: what they complete with (-ECANCELED, -ENODEV)
 */
void pto_uring_cancel(struct pto_ctx *ctx, int res)
{
	pto_uwait_finish(ctx, pto_uwait_all, res);
}

/**
 * pto_uring_release() - wait for the WAITs' timer before freeing @ctx
 * @ctx: the context; pto_ctx_gone() is true and pto_uring_cancel() ran,
 *	so nothing parks any more and the timer does not rearm
 */
void pto_uring_release(struct pto_ctx *ctx)
{
	cancel_delayed_work_sync(&ctx->uwaits.timer);
}

static int pto_uring_wait(struct pto_ctx *ctx, struct io_uring_cmd *cmd)
{
	const struct pto_uring_wait *sqe = pto_uring_cmd_payload(cmd);
	struct pto_uwaits *uw = &ctx->uwaits;
	struct pto_uwait *w;
	u32 timeout_ms, flags;
	u64 head, tail;
	int failed, ret;

	/* the SQE is mapped by userspace: read each field once */
	head = READ_ONCE(sqe->cring_head);
	timeout_ms = READ_ONCE(sqe->timeout_ms);
	flags = READ_ONCE(sqe->flags);
	if (flags || !pto_ctx_ready(ctx))
		return -EINVAL;
	failed = pto_ctx_failed(ctx);
	tail = pto_ctx_tail(ctx);
	if (tail > head)
		return tail - head;
	if (failed)
		return -EIO;
	if (!timeout_ms)
		return 0;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	w->cmd = cmd;
	w->task = get_task_struct(current);
	w->head = head;
	w->deadline = jiffies + msecs_to_jiffies(timeout_ms);
	*pto_uwait_slot(cmd) = w;

	spin_lock(&uw->lock);
	/* pto_uring_cancel() may have run already: it would miss this one */
	if (pto_ctx_gone(ctx)) {
		ret = -ECANCELED;
		goto err_unlock;
	}
	if (list_empty(&uw->list) || time_before(w->deadline, uw->next))
		uw->next = w->deadline;
	list_add_tail(&w->node, &uw->list);
	mod_delayed_work(system_wq, &uw->timer, pto_uwait_delay(uw->next));
	spin_unlock(&uw->lock);
	/* a completion may have landed before we were on the list */
	pto_ctx_notify(ctx);
	return -EIOCBQUEUED;

err_unlock:
	spin_unlock(&uw->lock);
	pto_uwait_free(w);
	return ret;
}

/**
 * pto_uring_cmd() - the file's io_uring command handler
 * @cmd: the command; its 16-byte payload is a struct pto_kick or a
 *	struct pto_uring_wait
 * @issue_flags: io_uring's issue flags
 *
 * Return: the command's result, or -EIOCBQUEUED for a WAIT that was parked
 * and completes later.
 */
int pto_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct pto_ctx *ctx = cmd->file->private_data;
	struct pto_kick k;

	BUILD_BUG_ON(sizeof(struct pto_kick) > 16);
	BUILD_BUG_ON(sizeof(struct pto_uring_wait) > 16);
	if (READ_ONCE(ctx->pdev->dead))
		return -ENODEV;
	switch (cmd->cmd_op) {
	case PTO_URING_CMD_KICK:
		memcpy(&k, pto_uring_cmd_payload(cmd), sizeof(k));
		return pto_ctx_kick(ctx, &k);
	case PTO_URING_CMD_WAIT:
		return pto_uring_wait(ctx, cmd);
	default:
		return -EINVAL;
	}
}
