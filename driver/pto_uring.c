// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring commands on a context: PTO_URING_CMD_KICK, and
 * PTO_URING_CMD_WAIT, which parks on the context when nothing is
 * available yet.  A parked WAIT completes, from task work, when
 * completions are posted, when the context fails or goes away, when its
 * timeout expires (at most max_wait_ms), or when it is cancelled: by
 * io_uring on kernels whose commands are cancelable, else when the
 * driver sees its ring closing or its submitter exiting or exec'ing.
 *
 * Parked WAITs sit in two trees, by head and by deadline, so a wake-up
 * looks only at the WAITs it completes (plus one), and the timer only at
 * the expired ones.  At most max_uring_waits park on one context.
 */
#include <linux/io_uring.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <kunit/visibility.h>

#include "pto_drv.h"
#include "pto_compat.h"

/* How often parked WAITs look for a dying ring or submitter. */
#define PTO_UWAIT_POLL	(HZ / 20)

/* The command's pdu holds its struct pto_uwait between issue and done. */
static struct pto_uwait **pto_uwait_slot(struct io_uring_cmd *cmd)
{
	BUILD_BUG_ON(sizeof(struct pto_uwait *) > sizeof(cmd->pdu));
	return (struct pto_uwait **)cmd->pdu;
}

/* ---- the trees: no io_uring here, so the KUnit suite can drive them ---- */

/**
 * pto_uwaits_init() - empty set of parked WAITs
 * @uw: the set
 */
void pto_uwaits_init(struct pto_uwaits *uw)
{
	spin_lock_init(&uw->lock);
	uw->heads = RB_ROOT_CACHED;
	uw->deadlines = RB_ROOT_CACHED;
	uw->count = 0;
	uw->min_head = U64_MAX;
	uw->seq = 0;
	uw->visits = 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_uwaits_init);

static bool pto_head_less(struct rb_node *a, const struct rb_node *b)
{
	const struct pto_uwait *x = rb_entry(a, struct pto_uwait, by_head);
	const struct pto_uwait *y = rb_entry(b, struct pto_uwait, by_head);

	return x->head < y->head || (x->head == y->head && x->seq < y->seq);
}

static bool pto_deadline_less(struct rb_node *a, const struct rb_node *b)
{
	const struct pto_uwait *x = rb_entry(a, struct pto_uwait, by_deadline);
	const struct pto_uwait *y = rb_entry(b, struct pto_uwait, by_deadline);

	return time_before(x->deadline, y->deadline) ||
	       (x->deadline == y->deadline && x->seq < y->seq);
}

/* The lowest head parked, for pto_uring_wake()'s look without the lock. */
static void pto_uwaits_update_min(struct pto_uwaits *uw)
{
	struct rb_node *n = rb_first_cached(&uw->heads);

	WRITE_ONCE(uw->min_head, n ? rb_entry(n, struct pto_uwait,
					      by_head)->head : U64_MAX);
}

/**
 * pto_uwaits_insert() - park a WAIT
 * @uw: the set, locked
 * @w: the WAIT, with head and deadline set
 */
void pto_uwaits_insert(struct pto_uwaits *uw, struct pto_uwait *w)
{
	lockdep_assert_held(&uw->lock);
	w->seq = uw->seq++;
	rb_add_cached(&w->by_head, &uw->heads, pto_head_less);
	rb_add_cached(&w->by_deadline, &uw->deadlines, pto_deadline_less);
	w->parked = true;
	uw->count++;
	pto_uwaits_update_min(uw);
}
EXPORT_SYMBOL_IF_KUNIT(pto_uwaits_insert);

/**
 * pto_uwaits_erase() - unpark a WAIT
 * @uw: the set, locked
 * @w: a parked WAIT
 */
void pto_uwaits_erase(struct pto_uwaits *uw, struct pto_uwait *w)
{
	lockdep_assert_held(&uw->lock);
	rb_erase_cached(&w->by_head, &uw->heads);
	rb_erase_cached(&w->by_deadline, &uw->deadlines);
	w->parked = false;
	uw->count--;
	pto_uwaits_update_min(uw);
}
EXPORT_SYMBOL_IF_KUNIT(pto_uwaits_erase);

/**
 * pto_uwaits_take_ready() - unpark the WAITs the tail satisfies
 * @uw: the set, locked
 * @tail: completions posted
 * @out: they are added here (on &pto_uwait.done), with their result
 *
 * Looks at the WAITs it takes and at most one more.
 *
 * Return: how many were taken.
 */
u32 pto_uwaits_take_ready(struct pto_uwaits *uw, u64 tail,
			  struct list_head *out)
{
	struct rb_node *n;
	struct pto_uwait *w;
	u32 taken = 0;

	lockdep_assert_held(&uw->lock);
	while ((n = rb_first_cached(&uw->heads))) {
		w = rb_entry(n, struct pto_uwait, by_head);
		uw->visits++;
		if (w->head >= tail)
			break;
		pto_uwaits_erase(uw, w);
		w->res = pto_wait_result(tail, w->head);
		list_add_tail(&w->done, out);
		taken++;
	}
	return taken;
}
EXPORT_SYMBOL_IF_KUNIT(pto_uwaits_take_ready);

/**
 * pto_uwaits_take_expired() - unpark the WAITs whose deadline passed
 * @uw: the set, locked
 * @now: jiffies
 * @out: they are added here, with result 0
 *
 * Return: how many were taken.
 */
u32 pto_uwaits_take_expired(struct pto_uwaits *uw, unsigned long now,
			    struct list_head *out)
{
	struct rb_node *n;
	struct pto_uwait *w;
	u32 taken = 0;

	lockdep_assert_held(&uw->lock);
	while ((n = rb_first_cached(&uw->deadlines))) {
		w = rb_entry(n, struct pto_uwait, by_deadline);
		if (time_before(now, w->deadline))
			break;
		pto_uwaits_erase(uw, w);
		w->res = 0;
		list_add_tail(&w->done, out);
		taken++;
	}
	return taken;
}
EXPORT_SYMBOL_IF_KUNIT(pto_uwaits_take_expired);

/**
 * pto_uwaits_take_all() - unpark every WAIT
 * @uw: the set, locked
 * @res: their result
 * @out: they are added here
 *
 * Return: how many were taken.
 */
u32 pto_uwaits_take_all(struct pto_uwaits *uw, int res, struct list_head *out)
{
	struct rb_node *n;
	struct pto_uwait *w;
	u32 taken = 0;

	lockdep_assert_held(&uw->lock);
	while ((n = rb_first_cached(&uw->heads))) {
		w = rb_entry(n, struct pto_uwait, by_head);
		pto_uwaits_erase(uw, w);
		w->res = res;
		list_add_tail(&w->done, out);
		taken++;
	}
	return taken;
}
EXPORT_SYMBOL_IF_KUNIT(pto_uwaits_take_all);

/**
 * pto_uwaits_next_deadline() - the earliest deadline
 * @uw: the set, locked
 * @next: set to it when a WAIT is parked
 *
 * Return: true when a WAIT is parked.
 */
bool pto_uwaits_next_deadline(struct pto_uwaits *uw, unsigned long *next)
{
	struct rb_node *n = rb_first_cached(&uw->deadlines);

	lockdep_assert_held(&uw->lock);
	if (!n)
		return false;
	*next = rb_entry(n, struct pto_uwait, by_deadline)->deadline;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(pto_uwaits_next_deadline);

/* ---- completing parked commands ---------------------------------------- */

static void pto_uwait_free(struct pto_uwait *w)
{
	put_task_struct(w->task);
	kfree(w);
}

static void pto_uwait_complete_cb(PTO_URING_CB_ARGS)
{
	struct pto_uwait *w = *pto_uwait_slot(cmd);

	/*
	 * Done first: it takes the command off io_uring's cancelable list,
	 * after which no cancel callback looks at w any more.
	 */
	pto_cmd_done(cmd, w->res);
	pto_uwait_free(w);
}

/* Complete, from the submitters' task work, the WAITs taken off the trees. */
static void pto_uwaits_complete(struct list_head *done)
{
	struct pto_uwait *w, *tmp;

	list_for_each_entry_safe(w, tmp, done, done) {
		list_del(&w->done);
		io_uring_cmd_complete_in_task(w->cmd, pto_uwait_complete_cb);
	}
}

/* When the timer must look again: a deadline, or a dying ring or task. */
static void pto_uwaits_arm(struct pto_uwaits *uw)
{
	unsigned long next, delay = 0;

	lockdep_assert_held(&uw->lock);
	if (!pto_uwaits_next_deadline(uw, &next))
		return;
	if (time_after(next, jiffies))
		delay = next - jiffies;
	if (!PTO_URING_CANCELABLE)
		delay = min(delay, (unsigned long)PTO_UWAIT_POLL);
	mod_delayed_work(pto_wq, &uw->timer, delay);
}

/* The submitter is dying, or the command's ring or task is going away. */
static bool pto_uwait_orphaned(struct pto_uwait *w)
{
	return (w->task->flags & PF_EXITING) ||
	       fatal_signal_pending(w->task) ||
	       pto_uring_orphaned(w->cmd, w->task);
}

/*
 * Where io_uring cannot cancel commands: orphaned and dying ones.  The
 * WAITs of one context mostly come from one ring and one task: each
 * (ring, task) pair is looked at once per scan.
 */
static void pto_uwaits_take_orphans(struct pto_uwaits *uw,
				    struct list_head *out)
{
	struct pto_uwait *w, *tmp;
	struct task_struct *task = NULL;
	const void *ring = NULL;
	bool orphaned = false;

	lockdep_assert_held(&uw->lock);
	rbtree_postorder_for_each_entry_safe(w, tmp, &uw->heads.rb_root,
					     by_head) {
		if (w->task != task || pto_uring_ring(w->cmd) != ring) {
			task = w->task;
			ring = pto_uring_ring(w->cmd);
			orphaned = pto_uwait_orphaned(w);
		}
		if (!orphaned)
			continue;
		w->res = -ECANCELED;
		list_add_tail(&w->done, out);
	}
	/* erase after the walk: the post-order walk must not see a rebalance */
	list_for_each_entry(w, out, done)
		if (w->parked)
			pto_uwaits_erase(uw, w);
}

static void pto_uwait_timer_fn(struct work_struct *work)
{
	struct pto_uwaits *uw = container_of(to_delayed_work(work),
					     struct pto_uwaits, timer);
	struct pto_ctx *ctx = container_of(uw, struct pto_ctx, uwaits);
	LIST_HEAD(done);

	spin_lock(&uw->lock);
	pto_uwaits_take_expired(uw, jiffies, &done);
	if (!PTO_URING_CANCELABLE)
		pto_uwaits_take_orphans(uw, &done);
	if (!READ_ONCE(ctx->closing))
		pto_uwaits_arm(uw);
	spin_unlock(&uw->lock);
	pto_uwaits_complete(&done);
}

/**
 * pto_uring_init() - prepare a new context for parked WAITs
 * @ctx: the context, not yet visible to anyone
 */
void pto_uring_init(struct pto_ctx *ctx)
{
	pto_uwaits_init(&ctx->uwaits);
	INIT_DELAYED_WORK(&ctx->uwaits.timer, pto_uwait_timer_fn);
}

/**
 * pto_uring_wake() - complete the parked WAITs that are satisfied
 * @ctx: the context; completions were posted or it failed or went away
 *
 * Looks only at the WAITs it completes: cheap enough to follow every
 * completion.
 */
void pto_uring_wake(struct pto_ctx *ctx)
{
	struct pto_uwaits *uw = &ctx->uwaits;
	LIST_HEAD(done);
	int failed;

	if (!READ_ONCE(uw->count))
		return;
	failed = pto_ctx_failed(ctx);
	/* nothing due, nothing failed: no lock, however many are parked */
	if (!failed && !pto_ctx_gone(ctx) &&
	    pto_ctx_tail(ctx) <= READ_ONCE(uw->min_head))
		return;
	spin_lock(&uw->lock);
	pto_uwaits_take_ready(uw, pto_ctx_tail(ctx), &done);
	if (pto_ctx_gone(ctx))
		pto_uwaits_take_all(uw, READ_ONCE(ctx->pdev->dead) ?
				    -ENODEV : -ECANCELED, &done);
	else if (failed)
		/* the failed task's completion, if any, was taken above */
		pto_uwaits_take_all(uw, -EIO, &done);
	spin_unlock(&uw->lock);
	pto_uwaits_complete(&done);
}

/**
 * pto_uring_cancel() - complete every parked WAIT
 * @ctx: the context, which is closing or whose device is gone
 * @res: what they complete with (-ECANCELED, -ENODEV)
 */
void pto_uring_cancel(struct pto_ctx *ctx, int res)
{
	struct pto_uwaits *uw = &ctx->uwaits;
	LIST_HEAD(done);

	spin_lock(&uw->lock);
	pto_uwaits_take_all(uw, res, &done);
	spin_unlock(&uw->lock);
	pto_uwaits_complete(&done);
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

/* io_uring cancels a parked WAIT: its ring or its task is going away. */
static int pto_uring_wait_cancel(struct pto_ctx *ctx, struct io_uring_cmd *cmd,
				 unsigned int issue_flags)
{
	struct pto_uwaits *uw = &ctx->uwaits;
	struct pto_uwait *w = *pto_uwait_slot(cmd);
	bool mine = false;

	spin_lock(&uw->lock);
	if (w->parked) {
		pto_uwaits_erase(uw, w);
		mine = true;
	}
	spin_unlock(&uw->lock);
	/* not parked: its completion is queued as task work, or it is
	 * about to park and io_uring will call back again
	 */
	if (mine) {
		pto_cmd_done(cmd, -ECANCELED);
		pto_uwait_free(w);
	}
	return 0;
}

static int pto_uring_wait(struct pto_ctx *ctx, struct io_uring_cmd *cmd,
			  unsigned int issue_flags)
{
	const struct pto_uring_wait *sqe = pto_uring_cmd_payload(cmd);
	struct pto_uwaits *uw = &ctx->uwaits;
	u32 timeout_ms, max_ms, flags;
	struct pto_uwait *w;
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
		return pto_wait_result(tail, head);
	if (failed)
		return -EIO;
	if (!timeout_ms)
		return 0;
	/* a parked WAIT never outlives max_wait_ms: it completes with 0 */
	max_ms = READ_ONCE(pto_max_wait_ms);
	if (max_ms)
		timeout_ms = min(timeout_ms, max_ms);

	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	w->cmd = cmd;
	w->task = get_task_struct(current);
	w->head = head;
	/* the current jiffy may be nearly over: one more, never early */
	w->deadline = jiffies + msecs_to_jiffies(timeout_ms) + 1;
	*pto_uwait_slot(cmd) = w;
	/*
	 * Cancelable before it can complete: once parked, a wake-up may
	 * complete it from another task at any time.  io_uring calls back
	 * until it is gone, so a cancel before parking is seen again.
	 */
	pto_uring_mark_cancelable(cmd, issue_flags);

	spin_lock(&uw->lock);
	/* pto_uring_cancel() may have run already: it would miss this one */
	if (pto_ctx_gone(ctx))
		ret = -ECANCELED;
	else if (uw->count >= READ_ONCE(pto_max_uring_waits))
		ret = -EBUSY;
	else
		ret = 0;
	if (!ret) {
		pto_uwaits_insert(uw, w);
		pto_uwaits_arm(uw);
	}
	spin_unlock(&uw->lock);
	if (ret) {
		if (PTO_URING_CANCELABLE) {
			/* completing takes it off io_uring's cancelable list */
			pto_cmd_done(cmd, ret);
			ret = -EIOCBQUEUED;
		}
		pto_uwait_free(w);
		return ret;
	}
	/* a completion may have landed before we were on the tree */
	pto_uring_wake(ctx);
	return -EIOCBQUEUED;
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
	if (pto_uring_is_cancel(issue_flags))
		return pto_uring_wait_cancel(ctx, cmd, issue_flags);
	if (READ_ONCE(ctx->pdev->dead))
		return -ENODEV;
	switch (cmd->cmd_op) {
	case PTO_URING_CMD_KICK:
		memcpy(&k, pto_uring_cmd_payload(cmd), sizeof(k));
		return pto_ctx_kick(ctx, &k);
	case PTO_URING_CMD_WAIT:
		return pto_uring_wait(ctx, cmd, issue_flags);
	default:
		return -EINVAL;
	}
}
