// SPDX-License-Identifier: MIT
/*
 * The orchestrator: scopes and pto_submit_task().
 *
 * Every task goes to the task ring of its scope's depth: the run's outer
 * scope is depth 0, and depths past the last ring share it.  Each ring has
 * its own task window, dependency pool, heap ring and TensorMap pool, and
 * is retired in order independently of the others, so a task an outer
 * scope still holds never keeps a deeper scope's tasks from retiring.
 *
 * A submission first finds everything it needs (task slot, producers,
 * dependency entries, TensorMap entries, heap space), waiting on its ring
 * as back-pressure (flow.c), and only then changes shared state: lists its
 * producers in the dependency pool, records its accesses and publishes the
 * descriptor.  A failed wait (deadlock, cancellation) therefore leaves
 * nothing half-done.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alias.h"
#include "fault.h"
#include "log.h"
#include "opcheck.h"
#include "orchestrator.h"
#include "stats.h"
#include "check.h"
#include "trace.h"
#include "viewparam.h"

unsigned int pto_fault_countdown;

/* Tasks published to the scheduler at a time (see publish()). */
#define PUBLISH_BATCH 32

/* ---- scopes -------------------------------------------------------------- */

static int push_segment(struct pto_runtime *rt, uint32_t ring,
			uint64_t begin, uint64_t end)
{
	struct pto_orchestrator *o = &rt->orch;

	if (begin == end)
		return 0;
	if (o->nsegs == o->segs_cap) {
		uint32_t cap = o->segs_cap ? o->segs_cap * 2 : 64;
		struct pto_segment *s = pto_grow(o->segs, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		o->segs = s;
		o->segs_cap = cap;
	}
	o->segs[o->nsegs++] = (struct pto_segment){
		.begin = begin, .end = end, .ring = ring,
	};
	return 0;
}

/* Tell the scheduler a scope no longer holds the tasks of a segment. */
static void release_segment(struct pto_runtime *rt, const struct pto_segment *s)
{
	struct pto_window_header *w = rt->win;
	uint64_t head = rt->orch.release_head;

	/*
	 * Each queued segment holds at least one unreleased task, so the
	 * release ring (as large as all task windows) cannot overflow; wait
	 * out the scheduler's lag all the same (after publishing what it has
	 * not seen yet).  The scheduler's tail is re-read only when the
	 * cached one says full: its line changes with every task.
	 */
	while (head - rt->orch.release_tail > rt->release_mask) {
		rt->orch.release_tail = load_acquire(&w->sched.release_tail);
		if (head - rt->orch.release_tail <= rt->release_mask)
			break;
		orch_flush_published(rt);
		orch_wake_scheduler(rt);
		cpu_relax();
	}
	rt->be.release[head & rt->release_mask] = (struct pto_release_entry){
		PTO_TASK_HANDLE(s->ring, s->begin),
		PTO_TASK_HANDLE(s->ring, s->end),
	};
	rt->orch.release_head = head + 1;	/* published by flush_published() */
}

/*
 * Release tasks [begin, end) of ring at once, holding no segment: a
 * scope's end needs no memory, so that it cannot fail to let its tasks
 * go (a lost segment's tasks never retired, and the run never ended).
 */
static void release_range(struct pto_runtime *rt, uint32_t ring,
			  uint64_t begin, uint64_t end)
{
	const struct pto_segment s = {
		.begin = begin, .end = end, .ring = ring,
	};

	if (begin != end)
		release_segment(rt, &s);
}

static int grow_scopes(struct pto_orchestrator *o)
{
	uint32_t cap = o->scopes_cap ? o->scopes_cap * 2 : 16;
	struct pto_scope *s = pto_grow(o->scopes, cap * sizeof(*s));

	if (!s)
		return -ENOMEM;
	o->scopes = s;
	o->scopes_cap = cap;
	return 0;
}

static int scope_begin(struct pto_runtime *rt)
{
	struct pto_orchestrator *o = &rt->orch;
	uint32_t ring;
	uint64_t seq;

	if (o->nscopes == o->scopes_cap && grow_scopes(o))
		goto nomem;
	ring = pto_ring_of_depth(rt, o->nscopes);
	seq = o->ring[ring].next_seq;
	if (o->nscopes) {
		struct pto_scope *parent = &o->scopes[o->nscopes - 1];

		/*
		 * Past the last ring, a nested scope shares its parent's
		 * ring: what the parent submitted so far becomes a segment
		 * of its own, and the parent starts a new one at the
		 * nested scope's end.  Without room for the segment the
		 * scope is not opened: nothing is changed.
		 */
		if (parent->ring == ring) {
			if (push_segment(rt, ring, parent->seg_start, seq))
				goto nomem;
			parent->seg_start = seq;
		}
	}
	o->scopes[o->nscopes++] = (struct pto_scope){
		.begin = o->next_id, .seg_start = seq, .ring_begin = seq,
		.heap_begin = rt->win->orch.heap_top[ring],
		.heap_blocks = o->ring[ring].heap_blocks,
		.heap_largest = o->ring[ring].heap_largest,
		.seg_base = o->nsegs, .ring = ring,
	};
	o->ring[ring].heap_largest = 0;
	return 0;
nomem:
	pto_log("pto_scope_begin: out of memory for scope %u's bookkeeping; "
		"the scope is not opened and the run fails\n", o->nscopes);
	if (!o->error)
		o->error = -ENOMEM;
	return -ENOMEM;
}

/* pto_scope_begin(), bound to its symbol versions in compat.c */
int pto_orch_scope_begin(struct pto_runtime *rt)
{
	int ret = pto_orch_check(rt, "pto_scope_begin");

	return ret ? ret : scope_begin(rt);
}

static void scope_end(struct pto_runtime *rt)
{
	struct pto_orchestrator *o = &rt->orch;
	struct pto_scope *sc, *parent;
	uint64_t seq;
	uint32_t i;

	sc = &o->scopes[o->nscopes - 1];
	seq = o->ring[sc->ring].next_seq;
	for (i = sc->seg_base; i < o->nsegs; i++)
		release_segment(rt, &o->segs[i]);
	release_range(rt, sc->ring, sc->seg_start, seq);
	o->nsegs = sc->seg_base;
	/* a parent sharing the ring has the blocks of its nested scopes */
	if (sc->heap_largest > o->ring[sc->ring].heap_largest)
		o->ring[sc->ring].heap_largest = sc->heap_largest;
	o->nscopes--;
	parent = &o->scopes[o->nscopes - 1];
	if (parent->ring == sc->ring)
		parent->seg_start = seq;
	/* a sleeping scheduler misses this by at most its first, 1 ms sleep */
	if (READ_ONCE(rt->win->sched_flags.sleeping)) {
		orch_flush_published(rt);
		orch_wake_scheduler(rt);
	}
}

int pto_scope_end(struct pto_runtime *rt)
{
	int ret = pto_orch_check(rt, "pto_scope_end");

	if (ret)
		return ret;
	/* the outer scope belongs to pto_run() */
	if (rt->orch.nscopes <= 1) {
		pto_log("pto_scope_end: no scope is open (more ends than "
			"begins; the run's outer scope is pto_run()'s)\n");
		return -EINVAL;
	}
	scope_end(rt);
	return 0;
}

/* ---- submission ---------------------------------------------------------- */

/* Device address of a host address, or -1 when the device cannot see it. */
static int64_t dev_addr(struct pto_runtime *rt, uint64_t host, uint64_t size)
{
	uint64_t lo = (uint64_t)(uintptr_t)rt->be.heap;

	if (rt->be.host_addresses)
		return (int64_t)host;
	if (host < lo || host - lo > rt->be.heap_size ||
	    size > rt->be.heap_size - (host - lo))
		return -1;
	return (int64_t)(host - lo + rt->be.heap_dev_base);
}

/* What a submission needs from its ring, from one pass over its params. */
struct plan {
	uint32_t ring;		/* the task ring it goes to */
	uint64_t out_bytes;	/* heap ring bytes for its OUTPUT params */
	uint64_t views_bytes;	/* and its view descriptors, past them */
	uint64_t args_bytes;	/* and its argument array, past those */
	uint64_t args_size;	/* the array's bytes, 0: in the descriptor */
	uint32_t tm_entries;	/* accesses it records in the TensorMap */
	uint64_t first_out;	/* size of its first OUTPUT, 0: none */
	uint64_t out_asked;	/* its OUTPUTs' sizes as submitted */
};

/*
 * Bytes of a task's argument array in its heap block, 0 when its
 * arguments fit the descriptor: the words, and with views the bitmap
 * saying which are views (PTO_TASK_F_ARGS_IN_HEAP).
 */
static uint64_t args_array_size(uint32_t n, uint32_t nviews)
{
	if (n <= PTO_MAX_ARGS)
		return 0;
	return (n + (nviews ? PTO_ARGS_VIEW_WORDS(n) : 0)) * sizeof(uint64_t);
}

/* Refuse parameter i of a submission, saying why; returns err. */
static int bad_param(uint32_t i, int err, const char *why)
{
	pto_log("pto_submit_task: parameter %u: %s\n", i, why);
	return err;
}

/*
 * A tensor the device cannot reach: all of it elsewhere (host memory),
 * or a range that starts in device memory and runs past its end.
 */
static int not_in_device(struct pto_runtime *rt, const struct pto_param *p,
			 uint32_t i)
{
	if (dev_addr(rt, (uintptr_t)p->base + p->offset, 0) < 0)
		return bad_param(i, -EFAULT, "not in device memory (use "
				 "pto_malloc() memory on a device)");
	pto_log("pto_submit_task: parameter %u: starts in device memory but "
		"its %llu bytes (from offset %llu) run past the end of the "
		"device's heap\n", i, (unsigned long long)p->size,
		(unsigned long long)p->offset);
	return -EFAULT;
}

static int check_tensor(struct pto_runtime *rt, const struct pto_param *p,
			uint32_t i)
{
	uint64_t end;

	if (!p->base)
		return bad_param(i, -EINVAL, "NULL base");
	if (__builtin_add_overflow((uint64_t)(uintptr_t)p->base, p->offset,
				   &end) ||
	    __builtin_add_overflow(end, p->size, &end))
		return bad_param(i, -EINVAL, "base + offset + size overflows");
	if (!rt->be.host_addresses &&
	    dev_addr(rt, (uintptr_t)p->base + p->offset, p->size) < 0)
		return not_in_device(rt, p, i);
	return 0;
}

/*
 * Heap ring bytes an OUTPUT takes, and where in them the buffer starts:
 * in checked mode, whole pages and a guard page, the buffer against it.
 */
static inline uint64_t out_span(const struct pto_runtime *rt, uint64_t size)
{
	if (!rt->be.check)
		return pto_align_up(size, PTO_HEAP_ALIGN);
	return pto_check_out_span(rt->be.check, size);
}

static inline uint64_t out_lead(const struct pto_runtime *rt, uint64_t size)
{
	return !rt->be.check ? 0 : pto_check_out_lead(rt->be.check, size);
}

/*
 * A task's heap block does not fit its ring's heap: say what is in it,
 * each part as asked (views and args: its bytes of view descriptors and
 * of argument words), then the total with the block's rounding.  fn: the
 * call the program made.
 */
static int block_too_big(const char *fn, const struct plan *plan,
			 uint64_t heap_size, bool checked, uint64_t views,
			 uint64_t args)
{
	FILE *out = pto_log_begin();	/* one line, in parts */

	pto_log("%s: %s (%llu bytes)", fn, plan->views_bytes &&
		!strcmp(fn, "pto_alloc") ? "the buffer" : "its OUTPUTs",
		(unsigned long long)plan->out_asked);
	if (views)
		fprintf(out, " and view descriptors (%llu bytes)",
			(unsigned long long)views);
	if (args)
		fprintf(out, " and argument array (%llu bytes)",
			(unsigned long long)args);
	fprintf(out, " take %llu bytes of heap in all%s, more than ring "
		"%u's heap ring (%llu bytes)\n",
		(unsigned long long)plan->out_bytes, checked ?
		" (checked mode, PTO_CHECK=1, gives each whole pages and a "
		"guard page)" : "", plan->ring, (unsigned long long)heap_size);
	pto_log_end();
	return -E2BIG;
}

/* An OUTPUT (or pto_alloc()'s buffer) no heap ring of its depth can hold. */
static int out_too_big(const char *fn, uint32_t i, uint64_t size,
		       uint32_t ring, uint64_t heap_size)
{
	char where[32];

	pto_log("%s: %s%s of %llu bytes, larger than ring %u's heap ring (%llu "
		"bytes; the heap_size setting, PTO_HEAP_SIZE)\n", fn,
		pto_param_where(fn, i, where, sizeof(where)),
		strcmp(fn, "pto_alloc") ? "OUTPUT" : "a buffer",
		(unsigned long long)size, ring, (unsigned long long)heap_size);
	return -E2BIG;
}

/*
 * A task needs more entries of a pool than it has at all: no wait can
 * end, so it is refused at once rather than reported as a deadlock after
 * the stall timeout.
 */
static int pool_too_small(const char *fn, const char *what, uint32_t need,
			  const char *pool, uint32_t ring, uint32_t size,
			  const char *setting)
{
	pto_log("%s: the task has %u %s, more than ring %u's %s holds (%u "
		"entries; the %s setting)\n", fn, need, what, ring, pool, size,
		setting);
	return -E2BIG;
}

static int check_params(struct pto_runtime *rt, const char *fn,
			const struct pto_param *p, uint32_t n, uint32_t nviews,
			struct plan *plan)
{
	uint64_t heap_size = rt->ring[plan->ring].heap_size;
	uint32_t i;
	int ret;

	plan->out_bytes = 0;
	plan->out_asked = 0;
	plan->tm_entries = 0;
	plan->first_out = 0;
	for (i = 0; i < n; i++) {
		switch (p[i].kind) {
		case PTO_PARAM_SCALAR:
			continue;
		case PTO_PARAM_OUTPUT:
			if (!p[i].ref || !p[i].size)
				return bad_param(i, -EINVAL, p[i].ref ?
						 "OUTPUT of size 0" :
						 "OUTPUT with a NULL ref");
			if (p[i].size > heap_size)
				return out_too_big(fn, i, p[i].size, plan->ring,
						   heap_size);
			if (!plan->first_out)
				plan->first_out = p[i].size;
			plan->out_bytes += out_span(rt, p[i].size);
			plan->out_asked += p[i].size;
			plan->tm_entries++;
			continue;
		case PTO_PARAM_INPUT:
		case PTO_PARAM_INOUT:
		case PTO_PARAM_OUTPUT_EXISTING:
			plan->tm_entries += p[i].size != 0;
			fallthrough;
		case PTO_PARAM_NODEP:
			ret = check_tensor(rt, &p[i], i);
			if (ret)
				return ret;
			continue;
		default:
			return bad_param(i, -EINVAL, "unknown kind");
		}
	}
	/*
	 * View descriptors, and arguments beyond the descriptor's, go in the
	 * task's heap block too.
	 */
	plan->views_bytes = nviews ?
		out_span(rt, nviews * sizeof(struct pto_view_desc)) : 0;
	plan->args_size = args_array_size(n, nviews);
	plan->args_bytes = plan->args_size ? out_span(rt, plan->args_size) : 0;
	plan->out_bytes += plan->views_bytes + plan->args_bytes;
	if (plan->out_bytes > heap_size)
		return block_too_big(fn, plan, heap_size, rt->be.check,
				     nviews * sizeof(struct pto_view_desc),
				     plan->args_size);
	if (plan->tm_entries > rt->ring[plan->ring].tm_pool_size)
		return pool_too_small(fn, "accesses to record", plan->tm_entries,
				      "TensorMap pool", plan->ring,
				      rt->ring[plan->ring].tm_pool_size,
				      "tensormap_pool_size, PTO_TENSORMAP_POOL");
	return 0;
}

static int check_submit(struct pto_runtime *rt, uint32_t kernel_id,
			enum pto_worker_type type,
			const struct pto_param *params, uint32_t nparams)
{
	const struct pto_kernel *k;
	int ret = pto_orch_check(rt, "pto_submit_task");

	if (ret)
		return ret;
	if (nparams && !params) {
		pto_log("pto_submit_task: %u parameters, but params is NULL\n",
			nparams);
		return -EINVAL;
	}
	if (nparams > PTO_MAX_PARAMS) {
		pto_log("pto_submit_task: %u parameters (at most %u)\n",
			nparams, PTO_MAX_PARAMS);
		return -EINVAL;
	}
	if ((unsigned int)type >= PTO_NUM_WORKER_TYPES) {
		pto_log("pto_submit_task: worker type %d is not one of "
			"enum pto_worker_type\n", (int)type);
		return -EINVAL;
	}
	if (kernel_id >= PTO_MAX_KERNELS) {
		pto_log("pto_submit_task: kernel id %u is out of range (0 to "
			"%u), so never registered\n", kernel_id,
			PTO_MAX_KERNELS - 1);
		return -ENOENT;
	}
	if (!rt->kernels[kernel_id].registered) {
		pto_log("pto_submit_task: kernel %u is not registered\n",
			kernel_id);
		return -ENOENT;
	}
	k = &rt->kernels[kernel_id];
	if (k->type != (uint32_t)type) {
		pto_log("pto_submit_task: kernel %u \"%s\" is registered for "
			"%s cores, submitted for %s\n", kernel_id, k->name,
			pto_worker_type_name(k->type),
			pto_worker_type_name(type));
		return -EINVAL;
	}
	if (nparams > PTO_MAX_ARGS && !k->fn) {
		/* ops read their arguments from the descriptor */
		pto_log("pto_submit_task: kernel %u \"%s\" is a built-in op: "
			"%u parameters, at most %u\n", kernel_id, k->name,
			nparams, PTO_MAX_ARGS);
		return -E2BIG;
	}
	/* cheap, and the ops trust their lengths: always checked */
	if (k->builtin) {
		ret = pto_op_check("pto_submit_task", kernel_id, k->op,
				   params, nparams);
		if (ret)
			return ret;
	}
	if (!rt->be.cores[type]) {
		pto_log("pto_submit_task: kernel %u \"%s\": %s has no %s "
			"cores\n", kernel_id, k->name, rt->device,
			pto_worker_type_name(type));
		return -ENODEV;
	}
	return 0;
}

/* A producer of the task being submitted. */
struct producer {
	uint64_t task;		/* its handle */
	uint64_t order;		/* its task id */
};

/* Producers found for the task being submitted (deduplicated). */
struct producers {
	struct pto_runtime *rt;
	uint64_t self;		/* the task's id */
	struct producer *list;
	uint32_t n, cap;
	int error;
	uint64_t owner;			/* of the param being looked up */
	uint64_t newest;		/* its newest task found, + 1 */
	uint64_t owners[PTO_MAX_PARAMS];	/* per param, for its entry */
	struct pto_tm_key keys[PTO_MAX_PARAMS];	/* per tracked param */
};

/* The dedup word of a task's slot: the last consumer that listed it, + 1. */
static uint64_t *dep_seen(struct pto_runtime *rt, uint64_t task)
{
	uint32_t ring = PTO_TASK_RING(task);

	return &rt->orch.ring[ring].dep_seen[PTO_TASK_SEQ(task) &
					     rt->ring[ring].window_mask];
}

static void note_producer(struct producers *pr, uint64_t task, uint64_t order)
{
	uint64_t *seen = dep_seen(pr->rt, task);

	if (*seen == pr->self + 1)
		return;
	*seen = pr->self + 1;
	if (pr->n == pr->cap) {
		uint32_t cap = pr->cap * 2;
		struct producer *l = realloc(pr->list, cap * sizeof(*l));

		if (!l) {
			pr->error = -ENOMEM;
			return;
		}
		pr->list = l;
		pr->cap = cap;
	}
	pr->list[pr->n++] = (struct producer){ task, order };
}

static void add_producer(void *ctx, uint64_t task, uint64_t order,
			 uint64_t owner, bool proven)
{
	struct producers *pr = ctx;

	if (owner != PTO_TM_NO_OWNER)
		pr->owner = owner;
	/* only a proven overlap implies an order after the covering writer */
	if (proven && order + 1 > pr->newest)
		pr->newest = order + 1;
	note_producer(pr, task, order);
}

/*
 * Drop the covering writer (task id cover) of a parameter from the
 * producers listed since index from, when a newer task found for the same
 * parameter orders the task after it already.  That task overlaps the
 * writer's range (the writer covers the whole range looked up), so its own
 * submission found the writer, or found a newer writer over its range that
 * (by the same argument) comes after it: an edge to the writer adds
 * nothing but a dependency entry and a fanout link.  BGEMM with a reused
 * scratch tile and the stencil see this on every write: the previous
 * writer, and the readers that came after it.
 */
static void drop_implied_cover(struct producers *pr, uint32_t from,
			       uint64_t cover)
{
	uint32_t i;

	for (i = from; i < pr->n; i++) {
		if (pr->list[i].order != cover)
			continue;
		/* a later parameter may need the writer for itself */
		*dep_seen(pr->rt, pr->list[i].task) = 0;
		pr->list[i] = pr->list[--pr->n];
		return;
	}
}

/* Is a task still alive, as far as the orchestrator knows? */
static bool task_alive(struct pto_runtime *rt, uint64_t task)
{
	return PTO_TASK_SEQ(task) >=
	       rt->orch.ring[PTO_TASK_RING(task)].last_alive;
}

/*
 * Is host address base inside the heap rings, where only runtime-made
 * buffers (OUTPUTs, pto_alloc()) live?  The rings come first in the heap
 * region, the pto_malloc() arena after them.
 */
static bool in_heap_rings(const struct pto_runtime *rt, uint64_t base)
{
	/* below the heap, base - heap wraps past every offset */
	return base - (uint64_t)(uintptr_t)rt->be.heap <
	       rt->be.geo.arena_offset;
}

/*
 * An access whose base lies in the heap rings found no live entry of that
 * base: not the first byte of a live buffer (whose OUTPUT's entry lives as
 * long as the buffer).  The TensorMap names tensors by their base, so a
 * pointer into the middle of a buffer would get no order after the
 * buffer's writer and no hold on its owner: a silent wrong result, or a
 * read of memory freed and reused.
 */
static int not_a_buffer(uint32_t i, uint64_t base)
{
	pto_log("pto_submit_task: parameter %u: base %p is in the runtime's "
		"heap rings but is not the first byte of a live buffer: pass "
		"the pointer an OUTPUT or pto_alloc() gave as the base and the "
		"distance into the buffer as the offset (a buffer whose scope "
		"has ended is freed)\n", i, (void *)(uintptr_t)base);
	return -EINVAL;
}

/* An access the TensorMap records (and looks up): not OUTPUT, NODEP, SCALAR */
static inline bool tracked(const struct pto_param *p)
{
	return p->kind == PTO_PARAM_INPUT || p->kind == PTO_PARAM_INOUT ||
	       p->kind == PTO_PARAM_OUTPUT_EXISTING;
}

/* Parameter i is a view with a shape, not one byte range. */
static inline bool shaped(const struct pto_view_params *vp, uint32_t i)
{
	return vp && vp->is_view[i] && vp->arg[i].shaped;
}

/*
 * Checked mode: the task's tracked accesses to the program's own memory,
 * for the check that no two bases reach the same bytes (alias.h).
 */
static __attribute__((noinline))
int note_aliases(struct pto_runtime *rt, const char *fn,
		 const struct pto_param *p, uint32_t n,
		 const struct pto_view_params *vp)
{
	struct pto_alias_access acc[PTO_MAX_PARAMS];
	uint32_t i, k = 0;

	for (i = 0; i < n; i++) {
		uint64_t base = (uintptr_t)p[i].base;

		if (!tracked(&p[i]) || !p[i].size || in_heap_rings(rt, base) ||
		    shaped(vp, i))
			continue;
		acc[k++] = (struct pto_alias_access){
			.base = base, .lo = base + p[i].offset,
			.hi = base + p[i].offset + p[i].size, .param = i,
			.writer = p[i].kind != PTO_PARAM_INPUT,
		};
	}
	return pto_alias_task(rt->orch.alias, fn, rt->orch.next_id, acc, k);
}

/*
 * The producers of a task: the tasks its accesses depend on, and for an
 * access to a heap-ring buffer also the buffer's owner, which must not
 * retire (and free the buffer) before this task is done with it.  The
 * lookup that finds the newest writer may stop before it reaches the
 * owner (a later writer covers the range), so the owner is taken from the
 * entries found.  Owners may sit in any ring.
 */
static void find_producers(struct pto_runtime *rt, const struct pto_param *p,
			   uint32_t n, const struct pto_view_params *vp,
			   uint32_t ring, struct producers *pr)
{
	uint64_t cover;
	uint32_t i, from;

	for (i = 0; i < n; i++) {
		uint64_t base = (uintptr_t)p[i].base, begin = p[i].offset;

		pr->owners[i] = PTO_TM_NO_OWNER;
		if (!tracked(&p[i]))
			continue;
		pr->owner = PTO_TM_NO_OWNER;
		pr->newest = 0;
		from = pr->n;
		if (shaped(vp, i)) {
			pr->error = pto_tm_key_shaped(&rt->orch.tm,
						      &pr->keys[i], ring,
						      base, &vp->arg[i].vs);
			if (pr->error)
				return;
		} else {
			pto_tm_key(&rt->orch.tm, &pr->keys[i], base, begin,
				   begin + p[i].size);
		}
		cover = pto_tm_lookup_key(&rt->orch.tm, &pr->keys[i],
					  p[i].kind != PTO_PARAM_INPUT,
					  add_producer, pr);
		if (cover != PTO_TM_NO_COVER && pr->newest > cover + 1)
			drop_implied_cover(pr, from, cover);
		/* the owner is held whatever orders the access */
		if (pr->owner != PTO_TM_NO_OWNER && task_alive(rt, pr->owner)) {
			pr->owners[i] = pr->owner;
			note_producer(pr, pr->owner, UINT64_MAX);
		} else if (pr->owner == PTO_TM_NO_OWNER && p[i].size &&
			   in_heap_rings(rt, base)) {
			pr->error = not_a_buffer(i, base);
			return;
		}
	}
}

/*
 * How long the rings' tails must stand still, with every task submitted
 * so far complete, before the tasks still alive count as held by scopes
 * (retiring the rest takes the scheduler microseconds).
 */
#define RETIRE_SETTLE_NS 10000000ull

static uint64_t tails_sum(const struct pto_runtime *rt)
{
	uint64_t sum = 0;
	uint32_t r;

	for (r = 0; r < rt->nrings; r++)
		sum += rt->orch.ring[r].last_alive;
	return sum;
}

/*
 * The task has more producers alive than its ring's dependency pool
 * holds, so no wait for free entries could end: every task submitted so
 * far completes, and those no scope holds retire; the producers are
 * looked for again each time some did.  When the rest stay alive (their
 * scopes are still open), the task is refused.  (40000 readers of pieces
 * of a buffer, then one writer of all of it, otherwise waited for the
 * stall timeout and reported a deadlock of a task long retired.)
 */
static int producers_fit(struct pto_runtime *rt, const struct pto_param *p,
			 uint32_t n, const struct pto_view_params *vp,
			 uint32_t r, struct producers *pr)
{
	uint32_t pool = rt->ring[r].dep_pool_size, i;
	uint64_t seen = tails_sum(rt), since = pto_now_ns();
	int ret = pto_flow_wait_tasks(rt);

	while (!ret && !pr->error && pr->n > pool) {
		pto_sched_publish_pending(rt);
		orch_refresh_tails(rt);
		if (tails_sum(rt) == seen) {
			if (pto_now_ns() - since > RETIRE_SETTLE_NS)
				return pool_too_small("pto_submit_task",
					"producers alive (held by open scopes)",
					pr->n, "dependency pool", r, pool,
					"dep_pool_size, PTO_DEP_POOL");
			cpu_relax();
			continue;
		}
		seen = tails_sum(rt);
		since = pto_now_ns();
		for (i = 0; i < pr->n; i++)
			*dep_seen(rt, pr->list[i].task) = 0;
		pr->n = 0;
		find_producers(rt, p, n, vp, r, pr);
	}
	return ret ? ret : pr->error;
}

/*
 * List producer task in the fanin of the task being submitted, in its
 * ring's dependency pool.  The scheduler links the task into the
 * producer's fanout when it scans it; nothing of the producer's is
 * written here (see scan_task()).
 */
static void list_producer(struct pto_runtime *rt, uint32_t ring,
			  struct pto_task_desc *c, uint64_t task)
{
	struct pto_orch_ring *o = &rt->orch.ring[ring];
	/* the pool index of position dep_top, kept without a division */
	uint32_t idx = o->dep_idx;

	o->dep_idx = idx + 1 == rt->ring[ring].dep_pool_size ? 0 : idx + 1;
	/* pto_get_stats() reads it during a run */
	STAT_ADD(rt->win->orch.dep_top[ring], 1);
	rt->ring[ring].dep[idx] = (struct pto_dep_entry){
		.task_id = task, .next = c->fanin_head,
	};
	c->fanin_head = idx + 1;
	c->fanin_count++;
}

static uint64_t tensor_arg(struct pto_runtime *rt, const struct pto_param *p)
{
	uint64_t host = (uintptr_t)p->base + p->offset;

	return rt->be.host_addresses ? host :
	       (uint64_t)dev_addr(rt, host, p->size);
}

/* The task being filled in: what fill_args() needs of it. */
struct new_task {
	uint64_t handle;
	uint64_t id;
	uint64_t heap_off;	/* where its outputs go in its ring's heap */
	uint64_t views_off;	/* and its view descriptors, if it has views */
	uint64_t args_off;	/* and its argument array, if it has one */
};

/*
 * Where the task's argument words go: its descriptor, or past its outputs
 * in its heap block when there are more than the descriptor holds (the
 * block was sized for them, see check_params()).
 */
static __u64 *task_args(struct pto_runtime *rt, struct pto_task_desc *d,
			const struct new_task *t, uint32_t n)
{
	const struct pto_task_ring *r = &rt->ring[PTO_TASK_RING(t->handle)];
	uint64_t off;

	if (n <= PTO_MAX_ARGS)
		return d->args;
	off = t->args_off;
	d->args[0] = rt->be.host_addresses ? (uintptr_t)(r->heap + off) :
		     r->heap_dev + off;
	d->flags |= PTO_TASK_F_ARGS_IN_HEAP;
	return (__u64 *)(void *)(r->heap + off);
}

/*
 * Put the descriptor of view parameter i (whose device address args[i]
 * holds) in the task's heap block, and pass its address instead.
 */
static void fill_view(struct pto_runtime *rt, struct pto_task_desc *d,
		      struct new_task *t, struct pto_view_arg *a,
		      uint32_t i, __u64 *args)
{
	const struct pto_task_ring *r = &rt->ring[PTO_TASK_RING(t->handle)];
	uint64_t off = t->views_off;

	a->desc.addr = args[i];
	memcpy(r->heap + off, &a->desc, sizeof(a->desc));
	args[i] = rt->be.host_addresses ? (uintptr_t)(r->heap + off) :
		  r->heap_dev + off;
	t->views_off += sizeof(a->desc);
	d->flags |= PTO_TASK_F_VIEWS;
	if (i < 32)
		d->view_mask |= 1u << i;
	if (d->flags & PTO_TASK_F_ARGS_IN_HEAP)
		args[d->nargs + i / 64] |= 1ull << (i % 64);
}

/*
 * One pass over the parameters once everything is reserved: the argument
 * words, the outputs laid out in the task's heap block, and the TensorMap
 * records.  Entries were reserved, so inserts succeed.
 */
static void fill_args(struct pto_runtime *rt, struct pto_task_desc *d,
		      struct new_task *t, const struct pto_param *p,
		      uint32_t n, const struct producers *pr,
		      struct pto_view_params *vp)
{
	const struct pto_task_ring *r = &rt->ring[PTO_TASK_RING(t->handle)];
	struct pto_tensormap *tm = &rt->orch.tm;
	__u64 *args = task_args(rt, d, t, n);
	struct pto_tm_adder add;
	struct pto_tm_key key;
	uint32_t i;

	pto_tm_add_begin(tm, &add, t->handle, t->id);
	for (i = 0; i < n; i++) {
		const struct pto_param *q = &p[i];
		uint64_t host, lead;

		switch (q->kind) {
		case PTO_PARAM_SCALAR:
			args[i] = q->value;
			break;
		case PTO_PARAM_OUTPUT:
			lead = out_lead(rt, q->size);
			host = (uintptr_t)(r->heap + t->heap_off + lead);
			*q->ref = (void *)(uintptr_t)host;
			/* what its last user left would pass for data */
			if (rt->be.check)
				memset((void *)(uintptr_t)host,
				       PTO_CHECK_POISON, q->size);
			args[i] = rt->be.host_addresses ? host :
				     r->heap_dev + t->heap_off + lead;
			t->heap_off += out_span(rt, q->size);
			pto_tm_key(tm, &key, host, 0, q->size);
			pto_tm_add(tm, &add, &key, true, t->handle);
			break;
		case PTO_PARAM_NODEP:
			args[i] = tensor_arg(rt, q);
			break;
		default:	/* INPUT, INOUT, OUTPUT_EXISTING */
			args[i] = tensor_arg(rt, q);
			pto_tm_add(tm, &add, &pr->keys[i],
				   q->kind != PTO_PARAM_INPUT, pr->owners[i]);
			break;
		}
	}
	pto_tm_add_end(tm, &add);
	if (!vp)
		return;
	/* then views: their descriptors carry the addresses set above */
	if (n > PTO_MAX_ARGS)
		memset(args + n, 0, PTO_ARGS_VIEW_WORDS(n) * sizeof(*args));
	for (i = 0; i < n; i++)
		if (vp->is_view[i])
			fill_view(rt, d, t, &vp->arg[i], i, args);
}

static void fill_desc(struct pto_task_desc *d, uint32_t kernel_id,
		      uint32_t type, uint32_t n)
{
	d->kernel_id = kernel_id;
	d->worker_type = (uint8_t)type;
	d->nargs = (uint8_t)n;
	d->fanin_count = 0;
	d->fanin_head = 0;
	d->flags = 0;
	d->packed_end = 0;
	d->view_mask = 0;
}

/* wait_all() when something does not fit yet: one resource at a time. */
static __attribute__((noinline))
int wait_each(struct pto_runtime *rt, const struct plan *plan, uint32_t deps,
	      struct pto_heap_alloc *ha)
{
	uint32_t r = plan->ring;
	struct pto_need needs[3] = {
		{ PTO_RING_DEP, r, deps },
		{ PTO_RING_TENSORMAP, r, plan->tm_entries },
		{ PTO_RING_HEAP, r, plan->out_bytes },
	};
	uint32_t i, k = plan->out_bytes ? 3 : 2;
	int ret;

	for (i = 0; i < k; i++) {
		ret = pto_flow_wait(rt, &needs[i]);
		if (ret)
			return ret;
	}
	if (plan->out_bytes)	/* fits: waited for */
		orch_heap_place(rt, r, plan->out_bytes, ha);
	return 0;
}

/*
 * Wait for a task slot, dependency entries, TensorMap entries and heap
 * space in the task's ring; *ha is where the task's outputs go.
 */
static int wait_all(struct pto_runtime *rt, const struct plan *plan,
		    uint32_t deps, struct pto_heap_alloc *ha)
{
	uint32_t r = plan->ring;

	/*
	 * The common case: everything fits by the cached view (the caller
	 * has just freed the TensorMap entries of retired tasks).
	 */
	if (orch_dep_fits(rt, r, deps) && orch_tm_fits(rt, r, plan->tm_entries) &&
	    (!plan->out_bytes || orch_heap_place(rt, r, plan->out_bytes, ha)))
		return 0;
	return wait_each(rt, plan, deps, ha);
}

static int submit_error(struct pto_runtime *rt, int err)
{
	if (!rt->orch.error && err != -EINVAL && err != -ENOENT &&
	    err != -E2BIG && err != -EFAULT && err != -ENODEV)
		rt->orch.error = err;
	return err;
}

/*
 * The scheduling side is asleep: wake it, once per sleep.  Until the woken
 * thread runs and clears the flag, every task published still sees it
 * set; where the CPUs are all busy (one CPU for the process, or other
 * processes) that lasts many tasks, and each paid a futex system call
 * that found nobody left to wake.  A wake that came just before the
 * sleeper waited is lost, as before (its first nap is short): it is
 * repeated every PUBLISH_BATCH tasks of the same sleep.
 */
static void wake_sleeper(struct pto_runtime *rt, uint64_t id)
{
	struct pto_orchestrator *o = &rt->orch;
	uint32_t gen = __atomic_load_n(&rt->sched.sleep_gen, __ATOMIC_RELAXED);

	if (gen == o->woken_gen && id - o->woken_id < PUBLISH_BATCH)
		return;
	o->woken_gen = gen;
	o->woken_id = id;
	orch_wake_scheduler(rt);
}

/*
 * Make the task visible: its handle in its descriptor (which a device
 * checks), then its entry in the submission order ring with release, and
 * every PUBLISH_BATCH tasks notify.task_head with release, which is what
 * the scheduler polls.  It does not poll descriptors, so the lines filled
 * above moved to no other CPU while we wrote them, and task_head's line
 * crosses to the scheduler once per batch rather than once per task (at
 * once when the scheduler sleeps, which it does only when it has nothing
 * to do).  No fence: a scheduler that went to sleep just as we looked
 * sleeps at most a millisecond on that race (see sleep_until_work()); one
 * found sleeping is woken at once.
 */
static void publish(struct pto_runtime *rt, struct pto_task_desc *d,
		    const struct new_task *t, const struct plan *plan)
{
	struct pto_window_header *w = rt->win;
	uint32_t r = plan->ring;
	struct pto_orch_ring *o = &rt->orch.ring[r];
	uint64_t seq = PTO_TASK_SEQ(t->handle);

	WRITE_ONCE(d->task_id, t->handle);
	/* counted before it can complete: never fewer submitted than done */
	STAT_ADD(rt->st.tasks_submitted, 1);
	/* a scope holds the tasks that made its buffers, and only those */
	store_release(&rt->order[t->id & rt->order_mask], (t->handle + 1) |
		      (plan->first_out ? 0 : PTO_ORDER_UNSCOPED));
	rt->orch.next_id = t->id + 1;
	o->next_seq = seq + 1;
	WRITE_ONCE(w->orch.task_top[r], seq + 1);
	/*
	 * The next task's descriptor and dependency entries were last read
	 * by the scheduler, on another CPU: ask for them now, for writing,
	 * so the next submission does not wait for the lines.
	 */
	__builtin_prefetch(pto_desc(rt, PTO_TASK_HANDLE(r, seq + 1)), 1);
	__builtin_prefetch(&rt->ring[r].dep[o->dep_idx], 1);
	if (load_acquire(&w->sched_flags.sleeping)) {
		orch_flush_published(rt);
		wake_sleeper(rt, t->id);
	} else if ((t->id + 1) % PUBLISH_BATCH == 0) {
		orch_flush_published(rt);
	}
	/* every 64 tasks, what the scheduler retired: entries come back */
	if ((t->id & 63) == 0)
		orch_refresh_tails(rt);
}

/*
 * A new OUTPUT's TensorMap insert reads the head of a bucket picked by a
 * hash of a heap address never seen before: a cache miss on every such
 * task (a fifth of bgemm's submission time).  The next task of the ring
 * with an output of the same size most likely puts it right after this
 * task's block (at byte offset next in the ring's heap), so that bucket
 * is asked for now, a whole submission ahead.  A wrong guess costs one
 * prefetch.
 */
static void prefetch_next_output(struct pto_runtime *rt, uint32_t r,
				 uint64_t next, uint64_t size)
{
	const struct pto_task_ring *ring = &rt->ring[r];
	uint64_t off = next + out_lead(rt, size);
	struct pto_tm_key key;

	if (off + size > ring->heap_size)
		return;		/* it wraps to the ring's start */
	pto_tm_key(&rt->orch.tm, &key, (uintptr_t)(ring->heap + off), 0, size);
	__builtin_prefetch(pto_tm_ring_heads(&rt->orch.tm, key.heads, r), 1);
}

/* What is submitted: a kernel's task, or a runtime-owned buffer. */
struct submission {
	uint32_t kernel_id;
	uint32_t type;
	uint16_t flags;		/* PTO_TASK_F_NO_DISPATCH for a buffer */
	const char *name;	/* for the trace */
	const struct pto_param *p;	/* views flattened */
	uint32_t n;
	struct pto_view_params *vp;	/* NULL: no views */
};

static int64_t submit(struct pto_runtime *rt, const struct submission *sub,
		      struct producers *pr)
{
	const char *fn = sub->flags & PTO_TASK_F_NO_DISPATCH ? "pto_alloc" :
			 "pto_submit_task";
	const struct pto_param *p = sub->p;
	uint32_t n = sub->n;
	struct pto_heap_alloc ha = { 0, 0, 0 };
	struct pto_task_desc *d;
	struct new_task t;
	struct plan plan;
	uint64_t t0 = 0;
	uint32_t i, r;
	int ret;

	if (rt->trace)
		t0 = pto_now_ns();
	r = orch_ring(rt);
	plan.ring = r;
	ret = check_params(rt, fn, p, n, sub->vp ? sub->vp->nviews : 0,
			   &plan);
	if (!ret && rt->orch.alias)
		ret = note_aliases(rt, fn, p, n, sub->vp);
	if (ret)
		return ret;
	if (rt->orch.error)
		return -ECANCELED;
	if (READ_ONCE(rt->win->sched_flags.error) || pto_run_cancelled(rt))
		return submit_error(rt, -ECANCELED);

	if (!orch_slot_fits(rt, r)) {
		struct pto_need slot = { PTO_RING_TASK, r, 1 };

		ret = pto_flow_wait(rt, &slot);
		if (ret)
			return submit_error(rt, ret);
	}

	t.id = rt->orch.next_id;
	pr->self = t.id;
	t.handle = PTO_TASK_HANDLE(r, rt->orch.ring[r].next_seq);
	find_producers(rt, p, n, sub->vp, r, pr);
	if (!pr->error && pr->n > rt->ring[r].dep_pool_size)
		pr->error = producers_fit(rt, p, n, sub->vp, r, pr);
	if (pr->error)
		return submit_error(rt, pr->error);
	ret = wait_all(rt, &plan, pr->n, &ha);
	if (ret)
		return submit_error(rt, ret);

	d = pto_desc(rt, t.handle);
	fill_desc(d, sub->kernel_id, sub->type, n);
	d->flags = sub->flags;
	if (plan.out_bytes) {
		struct pto_orch_ring *o = &rt->orch.ring[r];

		if (orch_heap_used(rt, r) == 0)
			WRITE_ONCE(o->heap_floor, ha.start);
		o->heap_blocks += ha.end - ha.start;
		if (ha.end - ha.start > o->heap_largest)
			o->heap_largest = ha.end - ha.start;
		WRITE_ONCE(rt->win->orch.heap_top[r], ha.end);
		d->packed_end = ha.end;
		d->flags |= PTO_TASK_F_HEAP;
	}
	t.heap_off = ha.offset;
	t.args_off = ha.offset + plan.out_bytes - plan.args_bytes;
	/* in checked mode, like an OUTPUT, right before their guard page */
	t.views_off = t.args_off - plan.views_bytes +
		      (sub->vp ? out_lead(rt, sub->vp->nviews *
					  sizeof(struct pto_view_desc)) : 0);
	/* guards set before the argument array is written and the task runs */
	if (rt->be.check)
		pto_check_task(rt, t.handle, r, ha.offset, p, n,
			       sub->vp ? sub->vp->nviews *
			       sizeof(struct pto_view_desc) : 0,
			       plan.args_size);
	fill_args(rt, d, &t, p, n, pr, sub->vp);
	for (i = 0; i < pr->n; i++)
		list_producer(rt, r, d, pr->list[i].task);
	rt->orch.ring[r].slot_id[PTO_TASK_SEQ(t.handle) &
				 rt->ring[r].window_mask] =
		t.id | (uint64_t)(rt->orch.nscopes - 1) << PTO_SLOT_DEPTH_SHIFT;
	STAT_ADD(rt->st.edges, pr->n);
	if (rt->trace)	/* before the scheduler can see the task */
		pto_trace_submit(rt->trace, t.handle, t.id,
				 rt->orch.nscopes - 1, p, n);
	publish(rt, d, &t, &plan);
	if (plan.first_out)	/* no division: where the block ends */
		prefetch_next_output(rt, r, ha.offset + plan.out_bytes,
				     plan.first_out);
	if (rt->trace)
		pto_trace_submitted(rt->trace, rt, t0, t.handle, t.id,
				    sub->name);
	return (int64_t)t.id;
}

/*
 * Flatten a submission's views into rt's scratch (made on first use);
 * *vp is then the flattened parameters.
 */
static int prepare_views(struct pto_runtime *rt, const char *call,
			 const struct pto_kernel *k,
			 const struct pto_param *params, uint32_t nparams,
			 struct pto_view_params **vp)
{
	struct pto_orchestrator *o = &rt->orch;

	if (k && k->builtin && !(rt->be.geo.features & PTO_FEATURE_VIEWS)) {
		pto_log("%s: kernel %s is a built-in op and %s does not take "
			"views (no PTO_FEATURE_VIEWS); pass byte ranges\n",
			call, k->name, rt->device);
		return -EOPNOTSUPP;
	}
	if (!o->views) {
		o->views = malloc(sizeof(*o->views));
		if (!o->views)
			return -ENOMEM;
	}
	*vp = o->views;
	return pto_view_params_flatten(o->views, call, params, nparams);
}

/* Producers of the task go in rt's scratch list, which grows as needed. */
static int64_t submit_scratch(struct pto_runtime *rt,
			      const struct submission *sub)
{
	struct producers pr;
	int64_t ret;

	/* field by field: owners[] is filled per parameter, never zeroed */
	pr.rt = rt;
	pr.list = (struct producer *)rt->orch.scratch_ids;
	pr.cap = rt->orch.scratch_cap;
	pr.n = 0;
	pr.error = 0;
	ret = submit(rt, sub, &pr);
	rt->orch.scratch_ids = (uint64_t *)pr.list;
	rt->orch.scratch_cap = pr.cap;
	if (ret >= 0 && sub->vp)
		pto_view_params_commit(sub->vp, sub->n);
	return ret;
}

int64_t pto_submit_task(struct pto_runtime *rt, uint32_t kernel_id,
			enum pto_worker_type type,
			const struct pto_param *params, uint32_t nparams)
{
	struct submission sub = {
		.kernel_id = kernel_id, .type = (uint32_t)type,
		.p = params, .n = nparams,
	};
	const struct pto_kernel *k;
	int64_t ret;

	ret = check_submit(rt, kernel_id, type, params, nparams);
	if (ret)
		return ret;
	k = &rt->kernels[kernel_id];
	sub.name = k->name;
	if (pto_params_have_views(params, nparams)) {
		ret = prepare_views(rt, "pto_submit_task", k, params, nparams,
				    &sub.vp);
		if (ret)
			return ret;
		sub.p = sub.vp->flat;
	}
	return submit_scratch(rt, &sub);
}

int pto_wait(struct pto_runtime *rt)
{
	int ret = pto_orch_check(rt, "pto_wait");

	if (!ret)
		ret = pto_flow_wait_tasks(rt);
	/* every task is complete: no later access is ordered after them */
	if (!ret && rt->orch.alias)
		pto_alias_reset(rt->orch.alias);
	return ret;
}

int pto_alloc(struct pto_runtime *rt, struct pto_view *view)
{
	struct pto_param out = PTO_OUT_VIEW(view);
	struct submission sub = {
		.flags = PTO_TASK_F_NO_DISPATCH, .name = "pto_alloc",
		.n = 1,
	};
	int64_t ret = pto_orch_check(rt, "pto_alloc");

	if (ret)
		return (int)ret;
	ret = prepare_views(rt, "pto_alloc", NULL, &out, 1, &sub.vp);
	if (ret)
		return (int)ret;
	sub.p = sub.vp->flat;
	ret = submit_scratch(rt, &sub);
	return ret < 0 ? (int)ret : 0;
}

/* ---- run boundaries ------------------------------------------------------ */

static int orch_ring_init(struct pto_runtime *rt, uint32_t r)
{
	struct pto_orch_ring *o = &rt->orch.ring[r];
	uint32_t window = rt->ring[r].task_window;

	o->dep_seen = calloc(window, sizeof(*o->dep_seen));
	o->slot_id = calloc(window, sizeof(*o->slot_id));
	return o->dep_seen && o->slot_id ? 0 : -ENOMEM;
}

int pto_orch_init(struct pto_runtime *rt)
{
	struct pto_orchestrator *o = &rt->orch;
	uint32_t pools[PTO_MAX_RINGS], windows[PTO_MAX_RINGS], r;
	int ret;

	for (r = 0; r < rt->nrings; r++) {
		pools[r] = rt->ring[r].tm_pool_size;
		windows[r] = rt->ring[r].task_window;
		ret = orch_ring_init(rt, r);
		if (ret)
			return ret;
	}
	ret = pto_tm_init(&o->tm, rt->nrings, pools, windows);
	if (ret) {
		uint64_t total = 0;

		for (r = 0; r < rt->nrings; r++)
			total += pools[r];
		/* the pools' pages are reserved, their task tables allocated */
		pto_log("cannot allocate the TensorMap pools (%llu entries in "
			"all, %u rings; tensormap_pool_size, "
			"PTO_TENSORMAP_POOL) or their task tables (task_window, "
			"PTO_TASK_WINDOW): %s\n", (unsigned long long)total,
			rt->nrings, strerror(-ret));
		return ret;
	}
	/* the outer scope of every run is never short of memory */
	if (grow_scopes(o))
		return -ENOMEM;
	if (rt->cfg.check) {
		o->alias = pto_alias_new();
		if (!o->alias)
			return -ENOMEM;
	}
	o->scratch_cap = 64;
	o->scratch_ids = malloc(o->scratch_cap * sizeof(struct producer));
	return o->scratch_ids ? 0 : -ENOMEM;
}

void pto_orch_fini(struct pto_runtime *rt)
{
	struct pto_orchestrator *o = &rt->orch;
	uint32_t r;

	pto_tm_destroy(&o->tm);
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		free(o->ring[r].dep_seen);
		free(o->ring[r].slot_id);
	}
	free(o->scratch_ids);
	pto_alias_free(o->alias);
	free(o->views);
	free(o->scopes);
	free(o->segs);
	memset(o, 0, sizeof(*o));
}

/* Open the run's outer scope. */
void pto_orch_run_begin(struct pto_runtime *rt)
{
	struct pto_orchestrator *o = &rt->orch;

	o->error = 0;
	o->nscopes = 0;
	o->nsegs = 0;
	if (o->alias)	/* the last run's tasks are all complete */
		pto_alias_reset(o->alias);
	WRITE_ONCE(o->in_run, true);
	WRITE_ONCE(rt->win->notify.orch_done, 0);
	scope_begin(rt);
}

/*
 * Close every scope still open (the outer one, and any the orchestration
 * left open) and tell the scheduler no more tasks come.  Returns how many
 * the orchestration left open: run() decides whether that is its error.
 */
uint32_t pto_orch_run_end(struct pto_runtime *rt)
{
	struct pto_orchestrator *o = &rt->orch;
	uint32_t left_open = o->nscopes - 1;
	struct pto_scope *outer;

	while (o->nscopes > 1)
		scope_end(rt);
	/* the outer scope: release what it owns */
	outer = &o->scopes[0];
	while (o->nsegs)
		release_segment(rt, &o->segs[--o->nsegs]);
	release_range(rt, outer->ring, outer->seg_start,
		      o->ring[outer->ring].next_seq);
	orch_flush_published(rt);
	o->nscopes = 0;
	WRITE_ONCE(o->in_run, false);
	store_release(&rt->win->notify.orch_done, 1);
	orch_wake_scheduler(rt);
	return left_open;
}

/* After the scheduler has retired everything: free the TensorMap too. */
void pto_orch_run_cleanup(struct pto_runtime *rt)
{
	orch_refresh_tails(rt);
}
