// SPDX-License-Identifier: MIT
/*
 * A program written and built against libpto 0.1's header (include-0.1/),
 * run against today's libpto.so: it must keep working.  It uses what 0.1
 * offered: pto_config_init() and pto_get_stats() without sizes, the 0.1
 * struct layouts, scopes, OUTPUT buffers, C kernels and built-in ops.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pto/pto.h>

#include "../lib/tap.h"

/*
 * Linked against 0.1's libpto.so, this program got pto_scope_begin's only
 * version then, LIBPTO_0 (void); linked today it would get the default,
 * LIBPTO_0.2 (int).  Bind it as a 0.1 build did, so the old version is
 * what runs.
 */
__asm__(".symver pto_scope_begin, pto_scope_begin@LIBPTO_0");

#define N 64

static void add_one(const uint64_t *args, uint32_t nargs)
{
	const uint32_t *in = (const uint32_t *)args[1];
	uint32_t *out = (uint32_t *)args[0];

	out[0] = in[0] + 1;
}

struct chain {
	uint32_t *src;
	uint32_t *result;
};

/* N scopes, each copying the running value through an OUTPUT buffer. */
static int orchestrate(struct pto_runtime *rt, void *arg)
{
	struct chain *c = arg;
	int i;

	for (i = 0; i < N; i++) {
		void *tmp;
		struct pto_param p[2] = {
			PTO_OUT(&tmp, 64), PTO_IN(c->src, 0, 4),
		};

		pto_scope_begin(rt);
		if (pto_submit_task(rt, 1, PTO_WORKER_VECTOR, p, 2) < 0)
			return -1;
		struct pto_param q[3] = {
			PTO_OUT_EXISTING(c->src, 0, 4), PTO_IN(tmp, 0, 4),
			PTO_SCALAR(4),
		};
		if (pto_submit_task(rt, 2, PTO_WORKER_VECTOR, q, 3) < 0)
			return -1;
		if (pto_scope_end(rt))
			return -1;
	}
	return 0;
}

/*
 * A 0.1 program need not call pto_config_init(): it may fill every field
 * itself, with a designated initializer (padding zeroed) or one by one
 * (padding whatever the stack held).  Neither padding may count.
 */
static void create_without_init(unsigned char pad)
{
	struct pto_config cfg;
	struct pto_runtime *rt = NULL;
	struct pto_stats st;
	int ret;

	memset(&cfg, pad, sizeof(cfg));
	cfg.device = "sim";
	cfg.task_window = 64;
	cfg.heap_size = 1 << 20;
	cfg.dep_pool_size = 1024;
	cfg.tensormap_pool_size = 1024;
	cfg.cores[PTO_WORKER_CUBE] = 1;
	cfg.cores[PTO_WORKER_VECTOR] = 3;
	cfg.cores[PTO_WORKER_AICPU] = 1;
	cfg.cores[PTO_WORKER_ACCEL] = 1;
	cfg.stall_timeout_ms = 20000;
	cfg.trace_path = NULL;
	cfg.arena_size = 1 << 20;
	cfg.flags = 0;
	ret = pto_runtime_create(&cfg, &rt);
	ok(ret == 0, "a 0.1 config filled without pto_config_init(), padding "
	   "0x%02x: pto_runtime_create() (%d)", pad, ret);
	if (ret)
		return;
	ok(pto_get_stats(rt, &st) == 0 &&
	   st.ring[PTO_RING_TASK].size % 64 == 0 &&
	   st.cores[PTO_WORKER_VECTOR] == 3,
	   "padding 0x%02x: the runtime has its task window and cores", pad);
	pto_runtime_destroy(rt);
}

int main(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct pto_stats st;
	struct chain c;
	int ret;

	memset(&cfg, 0x5a, sizeof(cfg));
	pto_config_init(&cfg);
	ok(cfg.flags == 0 || cfg.flags == sizeof(cfg),
	   "0.1 pto_config_init() fills the 0.1 struct (last field %u)",
	   cfg.flags);
	ok(cfg.task_window && cfg.heap_size && cfg.device,
	   "defaults are set");
	cfg.task_window = 64;
	cfg.cores[PTO_WORKER_VECTOR] = 2;
	ret = pto_runtime_create(&cfg, &rt);
	ok(ret == 0, "pto_runtime_create() takes the 0.1 config (%d)", ret);
	if (ret)
		return tap_done();
	ok(pto_kernel_register(rt, 1, PTO_WORKER_VECTOR, add_one, "add1") == 0,
	   "C kernel registered");
	ok(pto_kernel_register_builtin(rt, 2, PTO_WORKER_VECTOR,
				       PTO_OP_COPY) == 0,
	   "built-in op registered");
	c.src = pto_malloc(rt, 64);
	ok(c.src != NULL, "pto_malloc");
	c.src[0] = 7;
	ret = pto_run(rt, orchestrate, &c);
	ok(ret == 0, "pto_run (%d)", ret);
	ok(c.src[0] == 7 + N, "result %u, want %u", c.src[0], 7 + N);

	memset(&st, 0xa5, sizeof(st));
	ok(pto_get_stats(rt, &st) == 0, "0.1 pto_get_stats()");
	ok(st.tasks_submitted == 2 * N && st.tasks_completed == 2 * N,
	   "stats count %llu/%llu tasks",
	   (unsigned long long)st.tasks_submitted,
	   (unsigned long long)st.tasks_completed);
	/* today's libpto has one such window per scope depth, summed here */
	ok(st.ring[PTO_RING_TASK].size >= 64 &&
	   st.ring[PTO_RING_TASK].size % 64 == 0,
	   "stats report the 0.1 config's task window (%llu in all rings)",
	   (unsigned long long)st.ring[PTO_RING_TASK].size);
	ok(st.runs == 1 && st.cores[PTO_WORKER_VECTOR] == 2,
	   "stats' last fields are in 0.1's places");
	pto_runtime_destroy(rt);
	create_without_init(0);
	create_without_init(0xab);
	return tap_done();
}
