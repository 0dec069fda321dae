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

#endif /* _PTO_COMPAT_H */
