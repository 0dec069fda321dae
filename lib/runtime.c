// SPDX-License-Identifier: MIT
/*
 * The runtime object: creation on a backend, device memory and pto_run(),
 * which brings the orchestrator, the scheduler and the device together.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "config.h"
#include "log.h"
#include "runtime.h"
#include "stats.h"
#include "statspage.h"
#include "sync.h"
#include "trace.h"

static uint32_t cring_entries_for(uint32_t num_cores)
{
	uint64_t n = pto_next_pow2((uint64_t)num_cores * PTO_CORE_QUEUE_SLOTS * 2);

	return n < 64 ? 64 : (uint32_t)n;
}

/* Whole cache lines per writer and rate; see <pto/pto_uapi.h>. */
_Static_assert(sizeof(struct pto_window_ident) == 64 &&
	       sizeof(struct pto_window_orch) == 128 &&
	       sizeof(struct pto_window_notify) == 64 &&
	       sizeof(struct pto_window_sched) == 192 &&
	       sizeof(struct pto_window_flags) == 64,
	       "each window header part is whole cache lines");
_Static_assert(sizeof(struct pto_task_desc) == 256,
	       "descriptors are four cache lines");

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

/* "sim" is the in-process simulator; anything else names a /dev/ptoN. */
static const struct pto_backend_ops *backend_for(const char *device)
{
	if (!device || !*device || !strcmp(device, "sim"))
		return &pto_sim_backend_ops;
	return &pto_dev_backend_ops;
}

static int open_backend(struct pto_runtime *rt)
{
	struct pto_setup s;
	int ret;

	rt->be.ops = backend_for(rt->cfg.device);
	ret = rt->be.ops->open(&rt->be, &rt->cfg);
	if (ret)
		return ret;
	rt->heap_ring_size = pto_align_up(rt->cfg.heap_size, PTO_HEAP_ALIGN);
	rt->dep_pool_size = rt->cfg.dep_pool_size;
	memset(&s, 0, sizeof(s));
	s.nrings = 1;
	s.ring[0].task_window = rt->cfg.task_window;
	s.ring[0].dep_pool_size = rt->cfg.dep_pool_size;
	s.ring[0].heap_size = rt->heap_ring_size;
	s.order_ring_size = rt->cfg.task_window;
	s.release_ring_size = rt->cfg.task_window;
	s.cring_size = cring_entries_for(rt->be.num_cores);
	s.heap_size = pto_align_up(rt->heap_ring_size, 4096) +
		      pto_align_up(rt->cfg.arena_size, 4096);
	ret = rt->be.ops->setup(&rt->be, &s);
	if (!ret)
		ret = pto_backend_attach(&rt->be);
	if (ret)
		return ret;
	rt->win = rt->be.win;
	rt->desc = rt->be.ring[0].desc;
	rt->window_mask = rt->cfg.task_window - 1;
	rt->release_mask = rt->cfg.task_window - 1;
	mark_slots_empty(rt);
	return 0;
}

int pto_runtime_create(const struct pto_config *cfg, struct pto_runtime **out)
{
	struct pto_config own;
	struct pto_runtime *rt;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ret = 0;
	if (cfg)
		ret = pto_config_import(cfg, &own);
	else
		pto_config_init(&own);
	if (!ret)
		ret = pto_config_validate(&own);
	if (ret)
		return ret;
	cfg = &own;
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
		rt->arena = pto_arena_create(rt->be.geo.arena_offset,
					     rt->be.heap_size -
					     rt->be.geo.arena_offset);
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
	pto_stats_init(rt);
	rt->page = pto_statspage_create(rt->device);
	pto_stats_publish(rt);
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
	pto_stats_publish(rt);

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
