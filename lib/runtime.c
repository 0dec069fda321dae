// SPDX-License-Identifier: MIT
/*
 * The runtime object: creation on a backend, kernels, device memory,
 * pto_run() and statistics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "statspage.h"
#include "sync.h"

static const char *const op_names[PTO_OP_COUNT] = {
	[PTO_OP_NOP] = "nop",
	[PTO_OP_COPY] = "copy",
	[PTO_OP_FILL_U32] = "fill_u32",
	[PTO_OP_ADD_F32] = "add_f32",
	[PTO_OP_MUL_F32] = "mul_f32",
	[PTO_OP_GEMM_F32] = "gemm_f32",
	[PTO_OP_MATMUL_BT_F32] = "matmul_bt_f32",
	[PTO_OP_SOFTMAX_PREP_F32] = "softmax_prep_f32",
	[PTO_OP_ONLINE_UPDATE_F32] = "online_update_f32",
	[PTO_OP_ROW_DIV_F32] = "row_div_f32",
	[PTO_OP_ADD_U32] = "add_u32",
	[PTO_OP_SPIN_NS] = "spin_ns",
};

const char *pto_op_name(uint32_t op)
{
	return op < PTO_OP_COUNT ? op_names[op] : NULL;
}

static uint32_t cring_entries_for(uint32_t num_cores)
{
	uint64_t n = pto_next_pow2((uint64_t)num_cores * PTO_CORE_QUEUE_SLOTS * 2);

	return n < 64 ? 64 : (uint32_t)n;
}

/* One cache line per writer and rate; see include/uapi/pto/pto_uapi.h. */
_Static_assert(sizeof(struct pto_window_geometry) == 64 &&
	       sizeof(struct pto_window_orch) == 64 &&
	       sizeof(struct pto_window_notify) == 64 &&
	       sizeof(struct pto_window_sched) == 64 &&
	       sizeof(struct pto_window_flags) == 64,
	       "each window header part is one cache line");
_Static_assert(sizeof(struct pto_task_desc) == 256,
	       "descriptors are four cache lines");

static int check_window(struct pto_runtime *rt)
{
	const struct pto_window_geometry *g = &rt->win->geo;

	if (g->magic != PTO_WINDOW_MAGIC || g->abi_version != PTO_ABI_VERSION ||
	    g->task_window != rt->cfg.task_window ||
	    g->dep_pool_size != rt->dep_pool_size) {
		pto_log("%s: unexpected shared-window geometry (ABI %u)\n",
			rt->device, g->abi_version);
		return -EPROTO;
	}
	return 0;
}

/*
 * A descriptor is published when its task_id equals the id its slot is
 * waiting for; a zeroed window would make slot 0 look published as task 0.
 */
static void mark_slots_empty(struct pto_runtime *rt)
{
	uint32_t i;

	for (i = 0; i < rt->cfg.task_window; i++)
		rt->desc[i].task_id = UINT64_MAX;
}

static int open_backend(struct pto_runtime *rt)
{
	struct pto_backend_setup s;
	int ret;

	rt->be.ops = pto_backend_for(rt->cfg.device);
	ret = rt->be.ops->open(&rt->be, &rt->cfg);
	if (ret)
		return ret;
	rt->heap_ring_size = pto_align_up(rt->cfg.heap_size, PTO_HEAP_ALIGN);
	rt->dep_pool_size = rt->cfg.dep_pool_size;
	s = (struct pto_backend_setup){
		.task_window = rt->cfg.task_window,
		.dep_pool_size = rt->cfg.dep_pool_size,
		.release_ring_size = rt->cfg.task_window,
		.cring_size = cring_entries_for(rt->be.num_cores),
		.heap_ring_size = rt->heap_ring_size,
		.heap_size = rt->heap_ring_size +
			     pto_align_up(rt->cfg.arena_size, 4096),
	};
	ret = rt->be.ops->setup(&rt->be, &s);
	if (ret)
		return ret;
	rt->win = rt->be.win;
	rt->desc = rt->be.desc;
	rt->window_mask = rt->cfg.task_window - 1;
	rt->release_mask = rt->cfg.task_window - 1;
	ret = check_window(rt);
	if (ret)
		return ret;
	mark_slots_empty(rt);
	return 0;
}

static void init_stats(struct pto_runtime *rt)
{
	uint32_t t;

	rt->st.ring[PTO_RING_TASK].size = rt->cfg.task_window;
	rt->st.ring[PTO_RING_HEAP].size = rt->heap_ring_size;
	rt->st.ring[PTO_RING_DEP].size = rt->dep_pool_size;
	rt->st.ring[PTO_RING_TENSORMAP].size = rt->cfg.tensormap_pool_size;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		rt->st.cores[t] = rt->be.cores[t];
}

int pto_runtime_create(const struct pto_config *cfg, struct pto_runtime **out)
{
	struct pto_config defaults;
	struct pto_runtime *rt;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg) {
		pto_config_init(&defaults);
		cfg = &defaults;
	}
	ret = pto_config_validate(cfg);
	if (ret)
		return ret;
	/* aligned: the runtime keeps each thread's hot state on its own lines */
	rt = aligned_alloc(_Alignof(struct pto_runtime),
			   pto_align_up(sizeof(*rt), _Alignof(struct pto_runtime)));
	if (!rt)
		return -ENOMEM;
	memset(rt, 0, sizeof(*rt));
	rt->cfg = *cfg;
	snprintf(rt->device, sizeof(rt->device), "%s", cfg->device);
	rt->cfg.device = rt->device;
	rt->cfg.trace_path = NULL;	/* owned by the trace, see below */
	pthread_mutex_init(&rt->arena_lock, NULL);

	ret = open_backend(rt);
	if (!ret)
		ret = pto_orch_init(rt);
	if (!ret)
		ret = pto_sched_init(rt);
	if (!ret) {
		rt->arena = pto_arena_create(rt->heap_ring_size,
					     rt->be.heap_size - rt->heap_ring_size);
		if (!rt->arena)
			ret = -ENOMEM;
	}
	if (!ret && cfg->trace_path) {
		rt->trace = pto_trace_open(cfg->trace_path, rt);
		if (!rt->trace)
			ret = -errno ? -errno : -EIO;
	}
	if (ret) {
		pto_runtime_destroy(rt);
		return ret;
	}
	init_stats(rt);
	rt->page = pto_statspage_create(rt->device);
	pto_sched_publish_stats(rt);
	*out = rt;
	return 0;
}

void pto_runtime_destroy(struct pto_runtime *rt)
{
	if (!rt)
		return;
	pto_statspage_destroy(rt->page);
	pto_trace_close(rt->trace);
	if (rt->be.ops)
		rt->be.ops->close(&rt->be);
	pto_sched_fini(rt);
	pto_orch_fini(rt);
	pto_arena_destroy(rt->arena);
	pthread_mutex_destroy(&rt->arena_lock);
	free(rt);
}

static int register_kernel(struct pto_runtime *rt, uint32_t kernel_id,
			   enum pto_worker_type type, uint32_t op,
			   pto_kernel_fn fn, const char *name)
{
	struct pto_kernel *k;
	int ret;

	if (!rt || kernel_id >= PTO_MAX_KERNELS ||
	    (unsigned int)type >= PTO_NUM_WORKER_TYPES || rt->orch.in_run)
		return -EINVAL;
	k = &rt->kernels[kernel_id];
	if (k->registered)
		return -EEXIST;
	ret = rt->be.ops->bind_kernel(&rt->be, kernel_id, type, op, fn);
	if (ret)
		return ret;
	*k = (struct pto_kernel){ .registered = true, .builtin = !fn,
				  .type = type, .op = op, .fn = fn };
	snprintf(k->name, sizeof(k->name), "%s",
		 name && *name ? name : pto_op_name(op));
	return 0;
}

int pto_kernel_register(struct pto_runtime *rt, uint32_t kernel_id,
			enum pto_worker_type type, pto_kernel_fn fn,
			const char *name)
{
	if (!fn)
		return -EINVAL;
	if (rt && !rt->be.c_kernels)
		return -EOPNOTSUPP;
	return register_kernel(rt, kernel_id, type, PTO_OP_NOP, fn, name);
}

int pto_kernel_register_builtin(struct pto_runtime *rt, uint32_t kernel_id,
				enum pto_worker_type type, uint32_t op)
{
	if (op >= PTO_OP_COUNT)
		return -EINVAL;
	return register_kernel(rt, kernel_id, type, op, NULL, NULL);
}

void *pto_malloc(struct pto_runtime *rt, size_t size)
{
	int64_t off;

	if (!rt)
		return NULL;
	pthread_mutex_lock(&rt->arena_lock);
	off = pto_arena_alloc(rt->arena, size);
	pthread_mutex_unlock(&rt->arena_lock);
	return off < 0 ? NULL : rt->be.heap + off;
}

void pto_free(struct pto_runtime *rt, void *ptr)
{
	uint8_t *p = ptr;
	int ret = -EINVAL;

	if (!rt || !ptr)
		return;
	pthread_mutex_lock(&rt->arena_lock);
	if (p >= rt->be.heap && p < rt->be.heap + rt->be.heap_size)
		ret = pto_arena_free(rt->arena, (uint64_t)(p - rt->be.heap));
	pthread_mutex_unlock(&rt->arena_lock);
	if (ret)
		pto_log("pto_free(%p): not a pto_malloc pointer\n", ptr);
}

int pto_run(struct pto_runtime *rt, pto_orch_fn fn, void *arg)
{
	uint64_t t0;
	int ret, end, err;

	if (!rt || !fn)
		return -EINVAL;
	if (rt->orch.in_run)
		return -EBUSY;
	t0 = pto_now_ns();
	/* before the scheduler starts: it must not see the last run's end */
	WRITE_ONCE(rt->win->notify.orch_done, 0);
	ret = pto_sched_start(rt);
	if (ret)
		return ret;
	STAT_ADD(rt->st.runs, 1);
	pto_orch_run_begin(rt);
	ret = fn(rt, arg);
	end = pto_orch_run_end(rt);
	pto_sched_join(rt);
	pto_orch_run_cleanup(rt);
	STAT_ADD(rt->st.run_ns, pto_now_ns() - t0);
	pto_sched_publish_stats(rt);

	err = READ_ONCE(rt->win->sched_flags.error);
	/* an orchestration passing on -ECANCELED reports the cause instead */
	if (ret < 0 && !(ret == -ECANCELED && err))
		return ret;
	if (err)
		return err;
	if (rt->orch.error)
		return rt->orch.error;
	return end;
}

static void fill_live_stats(struct pto_runtime *rt, struct pto_stats *st)
{
	struct pto_window_header *w = rt->win;

	/* the scheduler's tails, read afresh (not the orchestrator's copies) */
	st->ring[PTO_RING_TASK].in_use = w->notify.task_head -
		load_acquire(&w->sched.last_task_alive);
	st->ring[PTO_RING_HEAP].in_use = pto_heap_ring_used(w->orch.heap_top,
		load_acquire(&w->sched.heap_tail), rt->orch.heap_floor);
	st->ring[PTO_RING_DEP].in_use = w->orch.dep_top -
		load_acquire(&w->sched.dep_tail);
	st->ring[PTO_RING_TENSORMAP].in_use = rt->orch.tm.live;
}

_Static_assert(sizeof(struct pto_stats) % sizeof(uint64_t) == 0,
	       "pto_stats is copied in 64-bit words");

int pto_get_stats(struct pto_runtime *rt, struct pto_stats *st)
{
	const uint64_t *src = (const uint64_t *)&rt->st;
	uint64_t *dst = (uint64_t *)st;
	size_t i;

	if (!rt || !st)
		return -EINVAL;
	/* the scheduler updates its counters while a run goes on */
	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = READ_ONCE(src[i]);
	st->tasks_completed = READ_ONCE(rt->sst.tasks_completed);
	st->tasks_failed = READ_ONCE(rt->sst.tasks_failed);
	for (i = 0; i < PTO_NUM_WORKER_TYPES; i++)
		st->busy_ns[i] = READ_ONCE(rt->sst.busy_ns[i]);
	fill_live_stats(rt, st);
	return 0;
}

static void print_ring_advice(FILE *out, enum pto_ring r,
			      const struct pto_ring_stats *rs)
{
	static const char *const env[PTO_NUM_RINGS] = {
		"PTO_TASK_WINDOW", "PTO_HEAP_SIZE", "PTO_DEP_POOL",
		"PTO_TENSORMAP_POOL",
	};

	if (rs->stalls && rs->stall_ns > 1000000) {
		fprintf(out, "  %s: full %" PRIu64 " times, %.1f ms waited; "
			"%s=%" PRIu64 " would let the orchestrator run further "
			"ahead\n", pto_ring_name(r), rs->stalls,
			rs->stall_ns / 1e6, env[r], rs->size * 2);
	} else if (rs->high_water && rs->high_water * 8 < rs->size &&
		   rs->size > 1024) {
		fprintf(out, "  %s: never more than %" PRIu64 " of %" PRIu64
			" used; %s=%" PRIu64 " would do and save memory\n",
			pto_ring_name(r), rs->high_water, rs->size, env[r],
			pto_next_pow2(rs->high_water * 2));
	}
}

void pto_print_stats(struct pto_runtime *rt, FILE *out)
{
	struct pto_stats st;
	uint32_t r, t;
	double wall;

	if (pto_get_stats(rt, &st))
		return;
	wall = st.run_ns ? (double)st.run_ns : 1.0;
	fprintf(out, "pto stats (%s): %" PRIu64 " runs, %" PRIu64
		" tasks submitted, %" PRIu64 " completed, %" PRIu64
		" failed, %" PRIu64 " dependencies, %.3f ms in pto_run\n",
		rt->device, st.runs, st.tasks_submitted, st.tasks_completed,
		st.tasks_failed, st.edges, st.run_ns / 1e6);
	if (st.tasks_submitted)
		fprintf(out, "  %.3f us per task\n",
			st.run_ns / 1e3 / (double)st.tasks_submitted);
	fprintf(out, "  %-16s %12s %12s %12s %10s %12s\n", "ring", "size",
		"in use", "high water", "stalls", "stall ms");
	for (r = 0; r < PTO_NUM_RINGS; r++) {
		const struct pto_ring_stats *rs = &st.ring[r];

		fprintf(out, "  %-16s %12" PRIu64 " %12" PRIu64 " %12" PRIu64
			" %10" PRIu64 " %12.3f\n", pto_ring_name(r), rs->size,
			rs->in_use, rs->high_water, rs->stalls,
			rs->stall_ns / 1e6);
	}
	fprintf(out, "  %-16s %6s %12s %8s\n", "cores", "count", "busy ms",
		"util");
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		fprintf(out, "  %-16s %6u %12.3f %7.1f%%\n",
			pto_worker_type_name(t), st.cores[t],
			st.busy_ns[t] / 1e6, st.cores[t] ?
			100.0 * st.busy_ns[t] / wall / st.cores[t] : 0.0);
	fprintf(out, "  sizing advice:\n");
	for (r = 0; r < PTO_NUM_RINGS; r++)
		print_ring_advice(out, r, &st.ring[r]);
}
