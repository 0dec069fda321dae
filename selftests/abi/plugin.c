// SPDX-License-Identifier: MIT
/*
 * libpto.a linked into a shared object, as a plugin or a Python
 * extension embeds it: test-abi.sh loads this with Python's ctypes and
 * calls plugin_run().  A run with a scope and a buffer made in it.
 */
#include <stdint.h>

#include <pto/pto.h>

static void k_write(const uint64_t *args, uint32_t nargs)
{
	uint32_t *out = pto_arg_data(args, 0);

	(void)nargs;
	*out = (uint32_t)args[1];
}

static void k_copy(const uint64_t *args, uint32_t nargs)
{
	const uint32_t *in = pto_arg_data(args, 0);
	uint32_t *out = pto_arg_data(args, 1);

	(void)nargs;
	*out = *in;
}

static int orch(struct pto_runtime *rt, void *arg)
{
	void *tmp;
	int ret = pto_scope_begin(rt);

	if (ret)
		return ret;
	if (PTO_SUBMIT(rt, 0, PTO_WORKER_VECTOR, PTO_OUT(&tmp, 4),
		       PTO_SCALAR(42)) < 0 ||
	    PTO_SUBMIT(rt, 1, PTO_WORKER_VECTOR, PTO_IN(tmp, 0, 4),
		       PTO_OUT_EXISTING(arg, 0, 4)) < 0)
		return -1;
	return pto_scope_end(rt);
}

/* 0 when the run gave 42, else what went wrong (non-zero). */
int plugin_run(void);

int plugin_run(void)
{
	struct pto_runtime *rt = NULL;
	uint32_t *result;
	int ret;

	ret = pto_runtime_create(NULL, &rt);
	if (ret)
		return ret;
	result = pto_malloc(rt, 4);
	ret = result ? 0 : -1;
	if (!ret)
		ret = pto_kernel_register(rt, 0, PTO_WORKER_VECTOR, k_write,
					  "write");
	if (!ret)
		ret = pto_kernel_register(rt, 1, PTO_WORKER_VECTOR, k_copy,
					  "copy");
	if (!ret)
		ret = pto_run(rt, orch, result);
	if (!ret && *result != 42)
		ret = 1;
	pto_runtime_destroy(rt);
	return ret;
}
