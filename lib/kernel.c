// SPDX-License-Identifier: MIT
/*
 * Kernels: binding kernel ids to C functions or built-in ops, and the
 * calls a kernel may make while it runs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "log.h"
#include "runtime.h"

/*
 * The name as messages, traces and ptotop show it: a control character
 * (a newline left by fgets(), say) escaped C-style, so that a message
 * naming the kernel stays one line; cut to size, never inside an escape.
 */
static void copy_name(char *dst, size_t size, const char *name)
{
	size_t len = 0, n;
	char esc[8];

	for (; *name; name++) {
		unsigned char c = (unsigned char)*name;

		if (c == '\n' || c == '\t')
			n = (size_t)snprintf(esc, sizeof(esc), "\\%c",
					     c == '\n' ? 'n' : 't');
		else if (c < 0x20 || c == 0x7f)
			n = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		else
			n = (size_t)snprintf(esc, sizeof(esc), "%c", c);
		if (len + n >= size)
			break;
		memcpy(dst + len, esc, n);
		len += n;
	}
	dst[len] = 0;
}

static int bind(struct pto_runtime *rt, uint32_t kernel_id,
		enum pto_worker_type type, uint32_t op, pto_kernel_fn fn,
		const char *name, const char *call);

static int register_kernel(struct pto_runtime *rt, uint32_t kernel_id,
			   enum pto_worker_type type, uint32_t op,
			   pto_kernel_fn fn, const char *name)
{
	const char *call = fn ? "pto_kernel_register" :
			   "pto_kernel_register_builtin";
	const struct pto_log_tag *prev;
	int ret;

	if (!rt) {
		pto_log("%s: the runtime is NULL\n", call);
		return -EINVAL;
	}
	prev = pto_log_enter(&rt->log_tag);
	ret = bind(rt, kernel_id, type, op, fn, name, call);
	pto_log_leave(prev);
	return ret;
}

static int bind(struct pto_runtime *rt, uint32_t kernel_id,
		enum pto_worker_type type, uint32_t op, pto_kernel_fn fn,
		const char *name, const char *call)
{
	struct pto_kernel *k;
	int ret;

	if (kernel_id >= PTO_MAX_KERNELS) {
		pto_log("%s: kernel id %u (at most %u)\n", call, kernel_id,
			PTO_MAX_KERNELS - 1);
		return -EINVAL;
	}
	if ((unsigned int)type >= PTO_NUM_WORKER_TYPES) {
		pto_log("%s: worker type %d is not one of enum "
			"pto_worker_type\n", call, (int)type);
		return -EINVAL;
	}
	/* on a device, binding is the parent's context's after fork() */
	ret = pto_check_process(rt, call);
	if (ret)
		return ret;
	/* the scheduler and the cores read the table during a run */
	ret = pto_check_idle(rt, call);
	if (ret)
		return ret;
	k = &rt->kernels[kernel_id];
	if (k->registered) {
		pto_log("%s: kernel id %u is taken (by \"%s\")\n", call,
			kernel_id, k->name);
		return -EEXIST;
	}
	ret = rt->be.ops->bind_kernel(&rt->be, kernel_id, type, op, fn);
	if (ret)
		return ret;
	*k = (struct pto_kernel){ .registered = true, .builtin = !fn,
				  .type = type, .op = op, .fn = fn };
	/* a C kernel is no op: unnamed, it is known by its id */
	if (name && *name)
		copy_name(k->name, sizeof(k->name), name);
	else if (fn)
		snprintf(k->name, sizeof(k->name), "kernel %u", kernel_id);
	else
		snprintf(k->name, sizeof(k->name), "%s", pto_op_name(op));
	return 0;
}

int pto_kernel_register(struct pto_runtime *rt, uint32_t kernel_id,
			enum pto_worker_type type, pto_kernel_fn fn,
			const char *name)
{
	if (!fn) {
		pto_log("pto_kernel_register: kernel %u: the function is "
			"NULL\n", kernel_id);
		return -EINVAL;
	}
	if (rt && !rt->be.c_kernels) {
		pto_log("pto_kernel_register: %s runs built-in ops only "
			"(pto_kernel_register_builtin)\n", rt->device);
		return -EOPNOTSUPP;
	}
	return register_kernel(rt, kernel_id, type, PTO_OP_NOP, fn, name);
}

int pto_kernel_register_builtin(struct pto_runtime *rt, uint32_t kernel_id,
				enum pto_worker_type type, uint32_t op)
{
	if (op >= PTO_OP_COUNT) {
		pto_log("pto_kernel_register_builtin: op %u is not one of "
			"enum pto_op (below %u)\n", op, PTO_OP_COUNT);
		return -EINVAL;
	}
	return register_kernel(rt, kernel_id, type, op, NULL, NULL);
}

void pto_kernel_set_error(int err)
{
	struct pto_kernel_ctx *c = pto_kernel_current;

	/* an errno as userspace writes it (EIO) fails the task all the same */
	if (err > 0)
		err = -err;
	/*
	 * No errno reads "Unknown error 4242" in every report; -ECANCELED
	 * is the status of a task the runtime did not run, which no one
	 * counts as a failure.  Either fails the task with -EIO.
	 */
	if (err < 0 && (err == -ECANCELED || !strerrorname_np(-err)))
		err = -EIO;
	if (c && err < 0 && !c->status)
		c->status = err;
}

int pto_core_id(void)
{
	struct pto_kernel_ctx *c = pto_kernel_current;

	return c ? (int)c->core : -1;
}

int pto_arg_is_view(uint32_t i)
{
	struct pto_kernel_ctx *c = pto_kernel_current;

	if (!c)
		return -EINVAL;
	if (i >= c->nargs)
		return -ERANGE;
	return pto_desc_arg_is_view(c->desc, c->args, i);
}
