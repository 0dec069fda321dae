/* SPDX-License-Identifier: MIT */
/*
 * What a running C kernel may ask of libpto (pto_kernel_set_error()),
 * and how a backend tells libpto which task a thread is running.
 */
#ifndef PTO_LIB_KERNEL_H
#define PTO_LIB_KERNEL_H

#include <stdint.h>

struct pto_task_desc;

/* The task a thread runs a C kernel for, while it runs it. */
struct pto_kernel_ctx {
	int status;		/* 0, or the first pto_kernel_set_error() */
	uint32_t core;		/* the core it runs on (pto_core_id()) */
	uint32_t nargs;		/* its parameter count */
	/* its descriptor and argument words, for pto_arg_is_view() */
	const struct pto_task_desc *desc;
	const uint64_t *args;
};

/* initial-exec: no __tls_get_addr call per task from inside libpto.so */
extern __thread struct pto_kernel_ctx *pto_kernel_current
	__attribute__((tls_model("initial-exec")));

/* Backends bracket every C kernel call with these. */
static inline void pto_kernel_enter(struct pto_kernel_ctx *c)
{
	c->status = 0;
	pto_kernel_current = c;
}

static inline void pto_kernel_leave(void)
{
	pto_kernel_current = (struct pto_kernel_ctx *)0;
}

#endif /* PTO_LIB_KERNEL_H */
