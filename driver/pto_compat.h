/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences from 6.1.y on (the support matrix is in
 * Documentation/install.rst), selected by compile probes in Kbuild
 * (PTO_HAVE_*), never by version numbers; and the architecture's way of
 * letting kernel code use floating point.
 */
#ifndef _PTO_COMPAT_H
#define _PTO_COMPAT_H

#include <linux/device.h>
#include <linux/io_uring.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu-refcount.h>
#include <linux/sched.h>

#if defined(CONFIG_X86)
#include <asm/fpu/api.h>
#elif defined(CONFIG_ARM64)
#include <asm/neon.h>
#else
#error "pto.ko runs its built-in ops with the FPU: x86_64 and arm64 only"
#endif

/* struct io_uring_cmd and its helpers moved to their own header in 6.7. */
#ifdef PTO_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#endif

/*
 * io_uring_cmd_done() and the task-work callback gained issue_flags during
 * 6.1.y; callbacks take PTO_URING_CB_ARGS and name their command cmd.
 */
#ifdef PTO_HAVE_CMD_DONE_ISSUE_FLAGS
#define pto_cmd_done(cmd, res)	io_uring_cmd_done((cmd), (res), 0, issue_flags)
#define PTO_URING_CB_ARGS	struct io_uring_cmd *cmd, unsigned int issue_flags
#else
#define pto_cmd_done(cmd, res)	io_uring_cmd_done((cmd), (res), 0)
#define PTO_URING_CB_ARGS	struct io_uring_cmd *cmd
#endif

/* A command's payload: in the SQE, through io_uring_sqe_cmd() from 6.6. */
#ifdef PTO_HAVE_IO_URING_SQE_CMD
#define pto_uring_cmd_payload(c)	io_uring_sqe_cmd((c)->sqe)
#else
#define pto_uring_cmd_payload(c)	((const void *)(c)->cmd)
#endif

static inline void pto_vma_clear_mayexec(struct vm_area_struct *vma)
{
#ifdef PTO_HAVE_VM_FLAGS_CLEAR
	vm_flags_clear(vma, VM_MAYEXEC);
#else
	vma->vm_flags &= ~VM_MAYEXEC;
#endif
}

/* class_create() lost its owner argument in 6.4. */
#ifdef PTO_HAVE_CLASS_CREATE_NO_OWNER
#define pto_class_create(name)	class_create(name)
#else
#define pto_class_create(name)	class_create(THIS_MODULE, (name))
#endif

/* A class's devnode() takes a const struct device from 6.2. */
#ifdef PTO_HAVE_DEVNODE_CONST
#define PTO_DEVNODE_CONST	const
#else
#define PTO_DEVNODE_CONST
#endif

/* Class attributes' show() and store() take const pointers from 6.4. */
#ifdef PTO_HAVE_CLASS_ATTR_CONST
#define PTO_CLASS_ATTR_CONST	const
#else
#define PTO_CLASS_ATTR_CONST
#endif

/*
 * The built-in ops (ops/pto_ops.c, built with the FPU enabled) run only
 * between these: kernel_fpu_begin/end on x86, kernel_neon_begin/end on
 * arm64.  Both disable preemption; both are process-context only.
 */
static inline void pto_fpu_begin(void)
{
#ifdef CONFIG_X86
	kernel_fpu_begin();
#else
	kernel_neon_begin();
#endif
}

static inline void pto_fpu_end(void)
{
#ifdef CONFIG_X86
	kernel_fpu_end();
#else
	kernel_neon_end();
#endif
}

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

#endif /* _PTO_COMPAT_H */
