/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences within the 6.1.y series and around it, selected by
 * compile probes in Kbuild (PTO_HAVE_*), never by version numbers.
 */
#ifndef _PTO_COMPAT_H
#define _PTO_COMPAT_H

#include <linux/io_uring.h>
#include <linux/mm.h>

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

static inline void pto_vma_clear_mayexec(struct vm_area_struct *vma)
{
#ifdef PTO_HAVE_VM_FLAGS_CLEAR
	vm_flags_clear(vma, VM_MAYEXEC);
#else
	vma->vm_flags &= ~VM_MAYEXEC;
#endif
}

#endif /* _PTO_COMPAT_H */
