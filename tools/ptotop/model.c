// SPDX-License-Identifier: MIT
/*
 * ptotop's model: merge the sources' records into process and device rows,
 * derive rates against the previous sample, keep each device's history,
 * and filter and sort the rows for the views.  See model.h.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "ringsize.h"

const struct pt_sort_key pt_sort_keys[PT_NSORTS] = {
	[PT_SORT_PID] = { "pid", 'P', "PID" },
	[PT_SORT_TASKS] = { "tasks", 'T', "TASKS/S" },
	[PT_SORT_INFLIGHT] = { "inflight", 'I', "INFLT" },
	[PT_SORT_STALLS] = { "stalls", 'S', "STALLS" },
	[PT_SORT_FAILED] = { "failures", 'F', "FAIL" },
	[PT_SORT_DEVICE] = { "device", 'D', "DEVICE" },
	[PT_SORT_COMMAND] = { "command", 'C', "COMMAND" },
	[PT_SORT_USER] = { "user", 'U', "USER" },
};

/* ---- rows ---------------------------------------------------------------- */

static void sample_free(struct pt_sample *s)
{
	free(s->procs);
	free(s->devs);
	free(s->skipped);
	memset(s, 0, sizeof(*s));
}

/* A new, empty row: nothing known, rates unknown until derived. */
static struct pt_proc *proc_add(struct pt_sample *s)
{
	struct pt_proc *procs, *p;
	int t;

	procs = pt_grow(s->procs, s->nprocs, &s->procs_cap, sizeof(*procs),
			16);
	if (!procs)
		return NULL;
	s->procs = procs;
	p = &procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->tasks_per_s = NAN;
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		p->util[t] = NAN;
	return p;
}

/* The device called name, added empty if the sample has none yet. */
static struct pt_device *device_get(struct pt_sample *s, const char *name)
{
	struct pt_device *devs, *d;
	int i, t;

	for (i = 0; i < s->ndevs; i++)
		if (!strcmp(s->devs[i].name, name))
			return &s->devs[i];
	devs = pt_grow(s->devs, s->ndevs, &s->devs_cap, sizeof(*devs), 8);
	if (!devs)
		return NULL;
	s->devs = devs;
	d = &devs[s->ndevs++];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->sim = !strcmp(name, "sim");
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		d->util[t] = NAN;
	return d;
}

/* ---- merging the sources ------------------------------------------------- */

/* Every device in sysfs is listed, clients or not. */
static void devices_from_sysfs(struct pt_sample *s,
			       const struct pt_sources *src)
{
	int i;

	for (i = 0; i < src->ndevs; i++) {
		const struct pt_sysfs_device *sd = &src->devs[i];
		struct pt_device *d = device_get(s, sd->name);

		if (!d)
			return;
		d->have_sysfs = true;
		if (sd->have_cores)
			memcpy(d->cores, sd->cores, sizeof(d->cores));
		if (sd->have_busy)
			memcpy(d->busy_ns, sd->busy_ns, sizeof(d->busy_ns));
		d->contexts = sd->contexts;
		d->tasks_done = sd->tasks_done;
		d->tasks_failed = sd->tasks_failed;
		if (sd->have_mem) {
			d->mem_from_sysfs = true;
			d->mem_used = sd->mem_used;
			d->mem_total = sd->mem_total;
		}
	}
}

/* The same client seen through a dup()ed or inherited fd counts once. */
static bool client_seen(const struct pt_sample *s,
			const struct pt_fd_client *c)
{
	int i;

	if (!c->have_client_id)
		return false;
	for (i = 0; i < s->nprocs; i++) {
		const struct pt_proc *p = &s->procs[i];

		if ((p->src & PT_SRC_FDINFO) && p->have_client_id &&
		    p->client_id == c->client_id &&
		    !strcmp(p->device, c->device))
			return true;
	}
	return false;
}

static void proc_from_client(struct pt_proc *p, const struct pt_fd_client *c)
{
	p->src = PT_SRC_FDINFO;
	p->pid = c->pid;
	snprintf(p->device, sizeof(p->device), "%s", c->device);
	snprintf(p->state, sizeof(p->state), "%s", c->state);
	p->have_client_id = c->have_client_id;
	p->client_id = c->client_id;
	memcpy(p->cores, c->cores, sizeof(p->cores));
	memcpy(p->busy_ns, c->busy_ns, sizeof(p->busy_ns));
	p->have_mem = c->have_mem;
	p->mem_heap = c->mem_heap;
	p->mem_window = c->mem_window;
	p->in_flight = c->in_flight;
	p->completed = c->done;
	p->failed = c->failed;
	if (c->have_client_id)
		snprintf(p->key, sizeof(p->key), "fd:%s:%llu", p->device,
			 (unsigned long long)c->client_id);
	else
		snprintf(p->key, sizeof(p->key), "fd:%s:%d:%d", p->device,
			 c->pid, c->fd);
	/* the driver knows the task window, not the other rings */
	if (c->task_window) {
		p->ring[PTO_RING_TASK].valid = true;
		p->ring[PTO_RING_TASK].size = c->task_window;
		p->ring[PTO_RING_TASK].in_use = c->in_flight;
	}
}

static void procs_from_clients(struct pt_state *st, struct pt_sample *s,
			       const struct pt_sources *src)
{
	struct pt_proc *p;
	int i;

	for (i = 0; i < src->nclients; i++) {
		if (client_seen(s, &src->clients[i]))
			continue;
		p = proc_add(s);
		if (!p)
			return;
		proc_from_client(p, &src->clients[i]);
		pt_read_identity(&st->roots, p->pid, p->user, p->command);
	}
}

/* "/dev/pto0" -> "pto0", "sim" -> "sim" */
static const char *device_short(const char *dev)
{
	const char *slash = strrchr(dev, '/');

	return slash ? slash + 1 : dev;
}

/* A page of a /dev/ptoN runtime joins that process's fdinfo row. */
static struct pt_proc *page_merge_target(struct pt_sample *s,
					 const struct pto_statspage *pg)
{
	const char *dev = device_short(pg->device);
	int i;

	if (!strcmp(pg->device, "sim"))
		return NULL;
	for (i = 0; i < s->nprocs; i++) {
		struct pt_proc *p = &s->procs[i];

		if (p->src == PT_SRC_FDINFO && p->pid == pg->pid &&
		    !strcmp(p->device, dev))
			return p;
	}
	return NULL;
}

static void ring_from_page(struct pt_ring *r,
			   const struct pto_statspage_ring *pr)
{
	r->valid = true;
	r->size = pr->size;
	r->in_use = pr->in_use;
	r->high_water = pr->high_water;
	r->stalls = pr->stalls;
	r->stall_ns = pr->stall_ns;
}

/* The totals, and each task ring's own figures (version 2 of the page). */
static void rings_from_page(struct pt_proc *p, const struct pto_statspage *pg)
{
	static_assert(ARRAY_SIZE(pg->ring) == PTO_NUM_RINGS &&
		      ARRAY_SIZE(pg->depth[0]) == PTO_NUM_RINGS,
		      "a stats page's rings are in enum pto_ring order");
	static_assert(ARRAY_SIZE(pg->depth) == PTO_MAX_RINGS,
		      "a stats page has room for every task ring");
	int r, k;

	p->stalls = 0;
	for (k = 0; k < PTO_NUM_RINGS; k++) {
		ring_from_page(&p->ring[k], &pg->ring[k]);
		p->stalls += pg->ring[k].stalls;
	}
	/* a page not yet published says 0; a corrupt one is cut short */
	p->nrings = pg->nrings < PTO_MAX_RINGS ? pg->nrings : PTO_MAX_RINGS;
	for (r = 0; r < p->nrings; r++)
		for (k = 0; k < PTO_NUM_RINGS; k++)
			ring_from_page(&p->depth[r][k], &pg->depth[r][k]);
}

static void proc_from_page(struct pt_proc *p, const struct pto_statspage *pg)
{
	static_assert(sizeof(pg->cores) == sizeof(p->cores) &&
		      sizeof(pg->busy_ns) == sizeof(p->busy_ns),
		      "a stats page has an entry per worker type");

	p->pid = pg->pid;
	p->have_submitted = true;
	p->submitted = pg->tasks_submitted;
	p->completed = pg->tasks_completed;
	p->failed = pg->tasks_failed;
	p->in_flight = pg->tasks_in_flight;
	p->runs = pg->runs;
	p->last_error = pg->last_error;
	/* the driver's engine time is authoritative for a device client */
	if (!(p->src & PT_SRC_FDINFO)) {
		memcpy(p->cores, pg->cores, sizeof(p->cores));
		memcpy(p->busy_ns, pg->busy_ns, sizeof(p->busy_ns));
	}
	rings_from_page(p, pg);
	if (pg->last_error)
		snprintf(p->state, sizeof(p->state), "failed");
	else if (strcmp(p->state, "failed"))	/* keep the driver's verdict */
		snprintf(p->state, sizeof(p->state), "%s",
			 pg->running ? "active" : "idle");
	p->src |= PT_SRC_PAGE;
}

static void procs_from_pages(struct pt_state *st, struct pt_sample *s,
			     const struct pt_sources *src)
{
	struct pt_proc *p;
	int i;

	for (i = 0; i < src->npages; i++) {
		const struct pt_stats_page *pg = &src->pages[i];

		p = page_merge_target(s, &pg->page);
		if (!p) {
			p = proc_add(s);
			if (!p)
				return;
			snprintf(p->key, sizeof(p->key), "page:%s", pg->file);
			snprintf(p->device, sizeof(p->device), "%s",
				 device_short(pg->page.device));
			p->pid = pg->page.pid;
			pt_read_identity(&st->roots, p->pid, p->user,
					 p->command);
		}
		proc_from_page(p, &pg->page);
	}
}

/*
 * A device without sysfs (sim) is the sum of its rows: every sim runtime
 * brings its own cores.  A device with sysfs counts for itself; its rows
 * only add the memory the driver reports per client, where the driver
 * does not say the device's (mem_used: other users' clients too).
 */
static void device_add_proc(struct pt_device *d, const struct pt_proc *p)
{
	const struct pt_ring *heap = &p->ring[PTO_RING_HEAP];
	int t;

	d->nprocs++;
	if (d->have_sysfs) {
		if (p->have_mem && !d->mem_from_sysfs)
			d->mem_used += p->mem_heap + p->mem_window;
		return;
	}
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		if (d->sim || !d->cores[t])
			d->cores[t] += p->cores[t];
		d->busy_ns[t] += p->busy_ns[t];
	}
	d->contexts++;
	d->tasks_done += p->completed;
	d->tasks_failed += p->failed;
	if (heap->valid) {
		d->mem_used += heap->in_use;
		d->mem_total += heap->size;
	} else if (p->have_mem) {
		d->mem_used += p->mem_heap + p->mem_window;
	}
}

static void devices_from_procs(struct pt_sample *s)
{
	int i;

	for (i = 0; i < s->nprocs; i++) {
		struct pt_device *d = device_get(s, s->procs[i].device);

		if (!d)
			return;
		device_add_proc(d, &s->procs[i]);
	}
}

/* The sources are freed after merging: the views need their own copy. */
static void skipped_from_sources(struct pt_sample *s,
				 const struct pt_sources *src)
{
	size_t bytes = src->nskipped * sizeof(*src->skipped);

	if (!src->nskipped)
		return;
	s->skipped = malloc(bytes);
	if (!s->skipped)
		return;
	memcpy(s->skipped, src->skipped, bytes);
	s->nskipped = src->nskipped;
	s->skipped_cap = src->nskipped;
}

/* Devices first, so that those in sysfs keep their directory order. */
static void merge_sources(struct pt_state *st, const struct pt_sources *src)
{
	struct pt_sample *s = &st->cur;

	devices_from_sysfs(s, src);
	procs_from_clients(st, s, src);
	procs_from_pages(st, s, src);
	devices_from_procs(s);
	skipped_from_sources(s, src);
}

/* ---- rates --------------------------------------------------------------- */

static const struct pt_proc *prev_proc(const struct pt_state *st,
				       const char *key)
{
	int i;

	for (i = 0; st->have_prev && i < st->prev.nprocs; i++)
		if (!strcmp(st->prev.procs[i].key, key))
			return &st->prev.procs[i];
	return NULL;
}

static const struct pt_device *prev_device(const struct pt_state *st,
					   const char *name)
{
	int i;

	for (i = 0; st->have_prev && i < st->prev.ndevs; i++)
		if (!strcmp(st->prev.devs[i].name, name))
			return &st->prev.devs[i];
	return NULL;
}

static double clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* Busy time over the time the cores had: dt seconds each. */
static double utilisation(uint64_t busy_ns, double dt, uint32_t cores)
{
	return clamp01(busy_ns / (dt * 1e9 * cores));
}

static void proc_rates(struct pt_proc *p, const struct pt_proc *o,
		       double dt)
{
	int t;

	if (!o || dt <= 0)
		return;
	if (p->completed >= o->completed)
		p->tasks_per_s = (p->completed - o->completed) / dt;
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		if (!p->cores[t] || p->busy_ns[t] < o->busy_ns[t])
			continue;
		p->util[t] = utilisation(p->busy_ns[t] - o->busy_ns[t], dt,
					 p->cores[t]);
	}
}

/* A device's busy time since the previous sample; false if unknown. */
static bool device_busy_delta(const struct pt_state *st,
			      const struct pt_device *d,
			      uint64_t delta[PTO_UAPI_NUM_WORKER_TYPES])
{
	const struct pt_device *od = prev_device(st, d->name);
	int i, t;

	if (d->have_sysfs) {
		if (!od || !od->have_sysfs)
			return false;
		for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
			if (d->busy_ns[t] >= od->busy_ns[t])
				delta[t] = d->busy_ns[t] - od->busy_ns[t];
		return true;
	}
	/* only rows in both samples: a runtime coming or going is no jump */
	for (i = 0; i < st->cur.nprocs; i++) {
		const struct pt_proc *p = &st->cur.procs[i], *o;

		if (strcmp(p->device, d->name))
			continue;
		o = prev_proc(st, p->key);
		for (t = 0; o && t < PTO_UAPI_NUM_WORKER_TYPES; t++)
			if (p->busy_ns[t] >= o->busy_ns[t])
				delta[t] += p->busy_ns[t] - o->busy_ns[t];
	}
	return true;
}

/* Utilisation = Δbusy / (Δwall × cores), per worker type. */
static void device_rates(const struct pt_state *st, struct pt_device *d,
			 double dt)
{
	uint64_t delta[PTO_UAPI_NUM_WORKER_TYPES] = { 0 };
	int t;

	if (!st->have_prev || dt <= 0 || !device_busy_delta(st, d, delta))
		return;
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		if (d->cores[t])
			d->util[t] = utilisation(delta[t], dt, d->cores[t]);
}

/* ---- history ------------------------------------------------------------- */

/* A device's history, started empty the first time it is seen. */
static struct pt_hist_entry *hist_get(struct pt_state *st, const char *name)
{
	struct pt_hist_entry *hist, *h;
	int i;

	for (i = 0; i < st->nhist; i++)
		if (!strcmp(st->hist[i].name, name))
			return &st->hist[i];
	hist = pt_grow(st->hist, st->nhist, &st->hist_cap, sizeof(*hist), 4);
	if (!hist)
		return NULL;
	st->hist = hist;
	h = &hist[st->nhist++];
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	return h;
}

static bool any_util_known(const struct pt_device *d)
{
	int t;

	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		if (!isnan(d->util[t]))
			return true;
	return false;
}

/* Append one utilisation per type, dropping the oldest when full. */
static void hist_append(struct pt_hist_entry *h, const double *util)
{
	int t;

	if (h->len == PT_HIST) {
		for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
			memmove(h->v[t], h->v[t] + 1,
				(PT_HIST - 1) * sizeof(h->v[t][0]));
		h->len--;
	}
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		h->v[t][h->len] = isnan(util[t]) ? 0 : util[t];
	h->len++;
}

/* The history lives in the state; the sample gets a copy to show. */
static void device_history(struct pt_state *st, struct pt_device *d)
{
	struct pt_hist_entry *h = hist_get(st, d->name);

	if (!h)
		return;
	if (any_util_known(d))
		hist_append(h, d->util);
	d->hist_len = h->len;
	memcpy(d->hist, h->v, sizeof(d->hist));
}

/* ---- the sample ---------------------------------------------------------- */

/* The current sample becomes the previous one; stamp the new one. */
static void start_sample(struct pt_state *st)
{
	if (st->iteration > 0) {
		sample_free(&st->prev);
		st->prev = st->cur;
		st->have_prev = true;
		memset(&st->cur, 0, sizeof(st->cur));
	}
	st->cur.mono_ns = pt_now_ns(CLOCK_MONOTONIC);
	st->cur.real_ns = pt_now_ns(CLOCK_REALTIME);
}

static void derive_rates(struct pt_state *st)
{
	struct pt_sample *s = &st->cur;
	double dt = 0;
	int i;

	if (st->have_prev)
		dt = (s->mono_ns - st->prev.mono_ns) / 1e9;
	s->interval_s = dt;
	for (i = 0; i < s->nprocs; i++)
		proc_rates(&s->procs[i], prev_proc(st, s->procs[i].key), dt);
	for (i = 0; i < s->ndevs; i++) {
		device_rates(st, &s->devs[i], dt);
		device_history(st, &s->devs[i]);
	}
}

void pt_take_sample(struct pt_state *st)
{
	struct pt_sources src = { 0 };

	start_sample(st);
	pt_sources_read(&st->roots, &src);
	merge_sources(st, &src);
	pt_sources_free(&src);
	derive_rates(st);
	st->iteration++;
	pt_sort_procs(st);
}

void pt_state_init(struct pt_state *st)
{
	memset(st, 0, sizeof(*st));
	st->delay_s = 1.0;
	st->sort = PT_SORT_TASKS;
	pt_roots_from_env(&st->roots);
}

void pt_state_free(struct pt_state *st)
{
	sample_free(&st->prev);
	sample_free(&st->cur);
	free(st->hist);
	st->hist = NULL;
	st->nhist = 0;
	st->hist_cap = 0;
}

/* ---- what the views show ------------------------------------------------- */

bool pt_proc_visible(const struct pt_state *st, const struct pt_proc *p)
{
	int i;

	if (st->device_filter[0] && strcmp(st->device_filter, p->device))
		return false;
	if (!st->npids)
		return true;
	for (i = 0; i < st->npids; i++)
		if (st->pids[i] == p->pid)
			return true;
	return false;
}

bool pt_device_visible(const struct pt_state *st, const struct pt_device *d)
{
	return !st->device_filter[0] || !strcmp(st->device_filter, d->name);
}

int pt_visible_procs(const struct pt_state *st)
{
	int i, n = 0;

	for (i = 0; i < st->cur.nprocs; i++)
		n += pt_proc_visible(st, &st->cur.procs[i]);
	return n;
}

static void set_device_filter(struct pt_state *st, const char *name)
{
	snprintf(st->device_filter, sizeof(st->device_filter), "%s", name);
}

void pt_next_device_filter(struct pt_state *st)
{
	const struct pt_sample *s = &st->cur;
	int i;

	if (!st->device_filter[0]) {
		if (s->ndevs)
			set_device_filter(st, s->devs[0].name);
		return;
	}
	for (i = 0; i < s->ndevs; i++) {
		if (strcmp(s->devs[i].name, st->device_filter))
			continue;
		if (i + 1 < s->ndevs)
			set_device_filter(st, s->devs[i + 1].name);
		else
			set_device_filter(st, "");
		return;
	}
	set_device_filter(st, "");
}

double pt_resource_occupancy(const struct pt_ring *g)
{
	if (!g->valid || !g->size)
		return NAN;
	return (double)g->in_use / g->size;
}

/*
 * The fullest task ring's occupancy of a resource, where each ring's is
 * known (a stats page): one full ring stops the orchestrator however empty
 * the others are, and a sum over four rings showed a deadlock on a full
 * ring 0 as 25%.  Else the resource summed over the rings.
 */
double pt_ring_occupancy(const struct pt_proc *p, enum pto_ring ring)
{
	double most = NAN, v;
	int r;

	for (r = 0; r < p->nrings; r++) {
		v = pt_resource_occupancy(&p->depth[r][ring]);
		if (!isnan(v) && (isnan(most) || v > most))
			most = v;
	}
	return isnan(most) ? pt_resource_occupancy(&p->ring[ring]) : most;
}

bool pt_skipped_visible(const struct pt_state *st,
			const struct pt_skipped_page *sp)
{
	int i;

	for (i = 0; i < st->npids; i++)
		if (st->pids[i] == sp->pid)
			return true;
	return !st->npids;
}

/* ---- sizing advice per task ring ------------------------------------------- */

bool pt_task_ring_used(const struct pt_proc *p, int ring)
{
	const struct pt_ring *task = &p->depth[ring][PTO_RING_TASK];

	return task->high_water || task->in_use;
}

static uint64_t next_pow2(uint64_t x)
{
	uint64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/*
 * PTO_<resource>=... listing every task ring's size, with ring's replaced
 * by size: what to set to change that one ring alone.
 */
static void advice_env(const struct pt_proc *p, int ring, enum pto_ring res,
		       struct pt_advice *adv)
{
	size_t used;
	int r;

	used = snprintf(adv->env, sizeof(adv->env), "%s=",
			pt_resource_env(res));
	for (r = 0; r < p->nrings && used < sizeof(adv->env); r++)
		used += snprintf(adv->env + used, sizeof(adv->env) - used,
				 "%s%llu", r ? "," : "",
				 (unsigned long long)(r == ring ? adv->size :
				 p->depth[r][res].size));
}

/* The thresholds are pto_print_stats()'s (lib/stats.c). */
bool pt_ring_advice(const struct pt_proc *p, int ring, enum pto_ring res,
		    struct pt_advice *adv)
{
	const struct pt_ring *g = &p->depth[ring][res];
	uint64_t grown = pto_ring_size_fit(res, g->size * 2);
	uint64_t shrunk = pto_ring_size_fit(res, next_pow2(g->high_water * 2));

	memset(adv, 0, sizeof(*adv));
	if (g->stalls && g->stall_ns > 1000000 && grown > g->size) {
		adv->kind = PT_ADVICE_GROW;
		adv->size = grown;
	} else if (g->high_water && g->high_water * 8 < g->size &&
		   g->size > 1024 && shrunk < g->size) {
		adv->kind = PT_ADVICE_SHRINK;
		adv->size = shrunk;
	} else {
		return false;
	}
	advice_env(p, ring, res, adv);
	return true;
}

bool pt_all_advice(const struct pt_proc *p, char *buf, size_t len)
{
	uint64_t want[PTO_NUM_RINGS][PTO_MAX_RINGS];
	bool changed[PTO_NUM_RINGS] = { false };
	struct pt_advice adv;
	size_t used = 0;
	int r, k, n = 0;

	for (k = 0; k < PTO_NUM_RINGS; k++)
		for (r = 0; r < p->nrings; r++)
			want[k][r] = p->depth[r][k].size;
	for (r = 0; r < p->nrings; r++)
		for (k = 0; k < PTO_NUM_RINGS; k++)
			if (pt_ring_advice(p, r, k, &adv)) {
				want[k][r] = adv.size;
				changed[k] = true;
				n++;
			}
	buf[0] = '\0';
	for (k = 0; k < PTO_NUM_RINGS && n >= 2; k++) {
		if (!changed[k])
			continue;
		used += snprintf(buf + used, used < len ? len - used : 0,
				 "%s%s=", used ? " " : "", pt_resource_env(k));
		for (r = 0; r < p->nrings; r++)
			used += snprintf(buf + used,
					 used < len ? len - used : 0, "%s%llu",
					 r ? "," : "",
					 (unsigned long long)want[k][r]);
	}
	return n >= 2 && used < len;
}

/* ---- sorting ------------------------------------------------------------- */

/* Numbers, with unknown (NAN) below everything. */
static int cmp_num(double a, double b)
{
	if (isnan(a))
		a = -1;
	if (isnan(b))
		b = -1;
	return a < b ? -1 : a > b;
}

static int cmp_int(int a, int b)
{
	return (a > b) - (a < b);
}

/* Natural order: numbers descending (busiest first), text ascending. */
static int cmp_by_key(const struct pt_proc *a, const struct pt_proc *b,
		      enum pt_sort key)
{
	switch (key) {
	case PT_SORT_PID:
		return cmp_int(a->pid, b->pid);
	case PT_SORT_TASKS:
		return -cmp_num(a->tasks_per_s, b->tasks_per_s);
	case PT_SORT_INFLIGHT:
		return -cmp_num(a->in_flight, b->in_flight);
	case PT_SORT_STALLS:
		return -cmp_num(a->stalls, b->stalls);
	case PT_SORT_FAILED:
		return -cmp_num(a->failed, b->failed);
	case PT_SORT_DEVICE:
		return strcmp(a->device, b->device);
	case PT_SORT_COMMAND:
		return strcmp(a->command, b->command);
	case PT_SORT_USER:
		return strcmp(a->user, b->user);
	default:
		return 0;
	}
}

static int proc_cmp(const void *pa, const void *pb, void *arg)
{
	const struct pt_state *st = arg;
	const struct pt_proc *a = pa, *b = pb;
	int r = cmp_by_key(a, b, st->sort);

	if (!r)
		r = cmp_int(a->pid, b->pid);
	if (!r)
		r = strcmp(a->key, b->key);
	return st->reverse ? -r : r;
}

void pt_sort_procs(struct pt_state *st)
{
	if (st->cur.nprocs > 1)
		qsort_r(st->cur.procs, st->cur.nprocs, sizeof(*st->cur.procs),
			proc_cmp, st);
}
