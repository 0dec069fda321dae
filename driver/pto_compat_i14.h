/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences the hardening of issue 14 meets, next to
 * pto_compat.h and selected the same way: by compile probes (Kbuild's
 * PTO_HAVE_*) and by macros the kernel defines, never by version numbers.
 */
#ifndef _PTO_COMPAT_I14_H
#define _PTO_COMPAT_I14_H

#include <linux/io_uring.h>
#include <linux/mm.h>
#include <linux/percpu-refcount.h>
#include <linux/sched.h>

#ifdef PTO_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#endif

/* vm_flags became read-only with vm_flags_set() and vm_flags_clear() */
static inline void pto_vma_set_flags(struct vm_area_struct *vma,
				     unsigned long flags)
{
#ifdef PTO_HAVE_VM_FLAGS_CLEAR
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/*
 * Parked io_uring commands.  Kernels with IORING_URING_CMD_CANCELABLE
 * call ->uring_cmd with IO_URING_F_CANCEL when the ring is closed or its
 * task exits or execs, for commands marked cancelable.  6.1 cannot cancel
 * a command: like ublk's monitor work, the driver looks at its parked
 * commands periodically and completes those whose ring is going away or
 * whose submitter is cancelling its requests (exit, execve).
 */
#ifdef IORING_URING_CMD_CANCELABLE
#define PTO_URING_CANCELABLE	1

static inline void pto_uring_mark_cancelable(struct io_uring_cmd *cmd,
					     unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
}

static inline bool pto_uring_is_cancel(unsigned int issue_flags)
{
	return issue_flags & IO_URING_F_CANCEL;
}

static inline bool pto_uring_orphaned(struct io_uring_cmd *cmd,
				      struct task_struct *task)
{
	return false;	/* io_uring cancels it */
}

static inline const void *pto_uring_ring(struct io_uring_cmd *cmd)
{
	return NULL;
}
#else
#define PTO_URING_CANCELABLE	0

#include <linux/io_uring_types.h>

static inline void pto_uring_mark_cancelable(struct io_uring_cmd *cmd,
					     unsigned int issue_flags)
{
}

static inline bool pto_uring_is_cancel(unsigned int issue_flags)
{
	return false;
}

/*
 * The command's ring is being torn down (its fd closed), or its
 * submitter is in io_uring's cancellation (exit, execve), which waits
 * for every request of the task and would wait for this one's timeout.
 */
static inline bool pto_uring_orphaned(struct io_uring_cmd *cmd,
				      struct task_struct *task)
{
	struct io_kiocb *req = cmd_to_io_kiocb(cmd);

	if (percpu_ref_is_dying(&req->ctx->refs))
		return true;
#ifdef PTO_HAVE_TCTX_IN_IDLE
	if (task->io_uring && atomic_read(&task->io_uring->in_idle))
		return true;
#endif
	return false;
}

/* Which ring a command came from: commands of one ring die together. */
static inline const void *pto_uring_ring(struct io_uring_cmd *cmd)
{
	return cmd_to_io_kiocb(cmd)->ctx;
}
#endif

#endif /* _PTO_COMPAT_I14_H */
