// SPDX-License-Identifier: MIT
/*
 * Random programs for the differential tests.  See randprog.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "randprog.h"

/* tensor parameters of a random task, at most */
#define RAND_NP 5

const char *const rp_pattern_names[RP_NPATTERNS] = {
	[RP_TRIVIAL] = "trivial", [RP_STENCIL] = "stencil_1d",
	[RP_FFT] = "fft", [RP_TREE] = "tree",
	[RP_ALL_TO_ALL] = "all_to_all", [RP_SPREAD] = "spread",
};

static uint64_t align64(uint64_t x)
{
	return (x + 63) & ~63ull;
}

/* ---- the kernel ---------------------------------------------------------- */

#define DESC(kind, nb) (((uint64_t)(kind) << 32) | (nb))

static struct tl_gate gate;
atomic_int rp_gate_timeouts;
/* the replay runs the kernels without their delays */
static int replaying;

void rp_init(void)
{
	tl_gate_init(&gate);
}

/* Take delay ns: spin on the clock, or sleep. */
static void take_time(uint64_t delay)
{
	uint64_t ns = delay & ~RP_DELAY_SLEEP, until;
	struct timespec ts = { .tv_sec = ns / 1000000000ull,
			       .tv_nsec = ns % 1000000000ull };

	if (!ns || replaying)
		return;
	while (delay == RP_DELAY_FOREVER)
		pause();
	if (delay & RP_DELAY_SLEEP) {
		nanosleep(&ts, NULL);
		return;
	}
	until = tl_now_ns() + ns;
	while (tl_now_ns() < until)
		;
}

/*
 * tag, np, gated, delay, desc[np], addr[np]: hash the tag and every byte
 * read, then update INOUT bytes from their old value and overwrite OUTPUT
 * bytes.  Bytes, not words, so regions can meet and overlap at any byte.
 * A gated task first waits until the whole program has been submitted.
 */
static void k_rand(const uint64_t *a, uint32_t n)
{
	uint64_t h = tl_mix(a[0]), np = a[1], p, b;
	const uint64_t *desc = a + 4, *addr = a + 4 + np;

	if (a[2] && tl_gate_wait(&gate, 10000))
		atomic_fetch_add(&rp_gate_timeouts, 1);
	take_time(a[3]);
	for (p = 0; p < np; p++) {
		uint32_t kind = desc[p] >> 32, nb = (uint32_t)desc[p];
		const uint8_t *s = (const uint8_t *)(uintptr_t)addr[p];

		if (kind == PTO_PARAM_INPUT || kind == PTO_PARAM_INOUT ||
		    kind == PTO_PARAM_NODEP)
			for (b = 0; b < nb; b++)
				h = tl_mix(h ^ s[b]);
	}
	for (p = 0; p < np; p++) {
		uint32_t kind = desc[p] >> 32, nb = (uint32_t)desc[p];
		uint8_t *d = (uint8_t *)(uintptr_t)addr[p];

		if (kind == PTO_PARAM_INOUT)
			for (b = 0; b < nb; b++)
				d[b] = (uint8_t)tl_mix(d[b] + h + b);
		else if (kind == PTO_PARAM_OUTPUT ||
			 kind == PTO_PARAM_OUTPUT_EXISTING)
			for (b = 0; b < nb; b++)
				d[b] = (uint8_t)tl_mix(h ^ (b << 8 | p));
	}
}

int rp_register(struct tl_rec *rec, const struct rp_cfg *cfg)
{
	int t, ret;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		if (!cfg->cores[t])
			continue;
		ret = tl_register(rec, t + 1, t, k_rand, "rand");
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- the generator's bookkeeping ----------------------------------------- */

struct gen {
	struct tl_rng *rng;
	struct rp_prog *pg;
	const struct rp_cfg *cfg;
	int ntypes, types[PTO_NUM_WORKER_TYPES];	/* with cores */
	uint64_t task_bytes[RP_MAX_TASKS];	/* heap ring bytes per task */
	int task_ring[RP_MAX_TASKS];	/* the task ring it goes to */
	int depth;
	int first_held[RP_MAX_DEPTH + 1];	/* per open scope, -1: none */
	int live[RP_MAX_OUTS], nlive;	/* outputs alive now */
	int live_depth[RP_MAX_OUTS];
};

static void gen_init(struct gen *g, struct rp_prog *pg, struct tl_rng *rng,
		     const struct rp_cfg *cfg)
{
	int t;

	memset(pg, 0, sizeof(*pg));
	memset(g, 0, sizeof(*g));
	g->rng = rng;
	g->pg = pg;
	g->cfg = cfg;
	g->first_held[0] = -1;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (cfg->cores[t])
			g->types[g->ntypes++] = t;
}

/* The task ring of a scope depth, as the runtime picks it. */
static int ring_of(const struct gen *g, int depth)
{
	int n = (int)g->cfg->nrings;

	return depth < n ? depth : n - 1;
}

static int random_type(struct gen *g)
{
	return g->types[tl_range(g->rng, 0, g->ntypes - 1)];
}

static uint32_t buf_bytes(const struct gen *g, int buf)
{
	return buf >= RP_OUT_BASE ? g->pg->out_nb[buf - RP_OUT_BASE] :
				    RP_SH_BYTES;
}

/* The oldest task an open scope holds in a ring (ntasks: none). */
static int oldest_held(const struct gen *g, int ring)
{
	int d, oldest = g->pg->ntasks;

	for (d = 0; d <= g->depth; d++)
		if (ring_of(g, d) == ring && g->first_held[d] >= 0 &&
		    g->first_held[d] < oldest)
			oldest = g->first_held[d];
	return oldest;
}

/* Tasks of a ring from the oldest one an open scope holds to a new one. */
static int held_span(const struct gen *g, int ring)
{
	int t, n = 1;

	for (t = oldest_held(g, ring); t < g->pg->ntasks; t++)
		n += g->task_ring[t] == ring;
	return n;
}

/*
 * The same for the ring's heap: the bytes of its OUTPUTs from the oldest
 * held task on, which the in-order heap ring cannot reuse until it retires.
 */
static uint64_t held_bytes(const struct gen *g, int ring)
{
	int t;
	uint64_t bytes = 0;

	for (t = oldest_held(g, ring); t < g->pg->ntasks; t++)
		if (g->task_ring[t] == ring)
			bytes += g->task_bytes[t];
	return bytes;
}

/*
 * Most a task takes from the heap ring (RAND_NP OUTPUTs of 128 bytes, each
 * aligned to 64 and padded to 64), and as much again for the padding a
 * block that would straddle the end of the ring leaves behind.
 */
#define TASK_HEAP_MAX (2 * RAND_NP * 192)

/* May one more task be submitted at the current depth? */
static int task_fits(const struct gen *g)
{
	int ring = ring_of(g, g->depth);

	return g->pg->ntasks < RP_MAX_TASKS &&
	       held_span(g, ring) <= (int)g->cfg->window[ring] - 1 &&
	       held_bytes(g, ring) + TASK_HEAP_MAX <= g->cfg->heap[ring];
}

static void gen_begin(struct gen *g)
{
	g->pg->ops[g->pg->nops++].op = RP_BEGIN;
	g->first_held[++g->depth] = -1;
}

static void gen_end(struct gen *g)
{
	int i;

	/* outputs of the closing scope die here */
	for (i = 0; i < g->nlive; i++)
		if (g->live_depth[i] == g->depth) {
			g->pg->out_dies[g->live[i] - RP_OUT_BASE] = g->pg->nops;
			g->live[i] = g->live[--g->nlive];
			g->live_depth[i] = g->live_depth[g->nlive];
			i--;
		}
	g->pg->ops[g->pg->nops++].op = RP_END;
	g->depth--;
}

/* Close every scope; the outer scope's outputs die when the run ends. */
static void gen_finish(struct gen *g)
{
	int i;

	while (g->depth > 0)
		gen_end(g);
	for (i = 0; i < g->pg->nouts; i++)
		if (g->pg->out_dies[i] < 0)
			g->pg->out_dies[i] = g->pg->nops;
}

/* A new OUTPUT parameter of nb bytes. */
static struct rp_param new_output(struct gen *g, uint32_t nb)
{
	struct rp_prog *pg = g->pg;
	struct rp_param q = { .kind = PTO_PARAM_OUTPUT,
			      .buf = RP_OUT_BASE + pg->nouts, .nb = nb };

	pg->out_nb[pg->nouts] = nb;
	pg->out_born[pg->nouts] = pg->nops;
	pg->out_dies[pg->nouts] = -1;
	pg->nouts++;
	return q;
}

/* Account for the task just built at ops[nops]. */
static void gen_commit(struct gen *g)
{
	struct rp_op *t = &g->pg->ops[g->pg->nops];
	int i, k = g->pg->ntasks;

	g->task_bytes[k] = 0;
	g->task_ring[k] = ring_of(g, g->depth);
	for (i = 0; i < t->np; i++)
		if (t->p[i].kind == PTO_PARAM_OUTPUT) {
			g->live[g->nlive] = t->p[i].buf;
			g->live_depth[g->nlive++] = g->depth;
			g->task_bytes[k] += align64(t->p[i].nb);
		}
	if (g->first_held[g->depth] < 0)
		g->first_held[g->depth] = k;
	g->pg->ntasks++;
	g->pg->nops++;
}

/* ---- random programs ----------------------------------------------------- */

static int overlaps(const struct rp_op *t, const struct rp_param *q)
{
	int i;

	for (i = 0; i < t->np; i++)
		if (t->p[i].buf == q->buf &&
		    q->off < t->p[i].off + t->p[i].nb &&
		    t->p[i].off < q->off + q->nb)
			return 1;
	return 0;
}

static int pick_buf(struct gen *g, int writable)
{
	int n = RP_NSHARED + (writable ? 0 : 1) + g->nlive;
	int k = (int)tl_range(g->rng, 0, n - 1);

	if (k < RP_NSHARED + (writable ? 0 : 1))
		return k;
	return g->live[k - RP_NSHARED - (writable ? 0 : 1)];
}

static int random_kind(struct gen *g, int must_write)
{
	uint32_t r = tl_range(g->rng, 0, 99);

	if (must_write)
		r = 40 + r % 48;	/* INOUT, OUTPUT_EXISTING or OUTPUT */
	if (r < 35)
		return PTO_PARAM_INPUT;
	if (r < 60)
		return PTO_PARAM_INOUT;
	if (r < 78)
		return PTO_PARAM_OUTPUT_EXISTING;
	if (r < 92)
		return PTO_PARAM_OUTPUT;
	return PTO_PARAM_NODEP;
}

/* A region of buf: half word-aligned (the common case), half at any byte. */
static void random_region(struct gen *g, struct rp_param *q)
{
	uint32_t nb = buf_bytes(g, q->buf), max;

	if (nb >= 8 && tl_range(g->rng, 0, 1)) {
		q->off = 8 * tl_range(g->rng, 0, nb / 8 - 1);
		max = (nb - q->off) / 8 < 12 ? (nb - q->off) / 8 : 12;
		q->nb = 8 * tl_range(g->rng, 1, max);
	} else {
		q->off = tl_range(g->rng, 0, nb - 1);
		max = nb - q->off < 96 ? nb - q->off : 96;
		q->nb = tl_range(g->rng, 1, max);
	}
}

static void gen_param(struct gen *g, struct rp_op *t, int must_write)
{
	struct rp_param q = { .kind = random_kind(g, must_write) };
	int tries;

	if (q.kind == PTO_PARAM_OUTPUT) {
		t->p[t->np++] = new_output(g, tl_range(g->rng, 1, 128));
		return;
	}
	for (tries = 0; tries < 6; tries++) {
		q.buf = q.kind == PTO_PARAM_NODEP ? RP_CONST_BUF :
			pick_buf(g, q.kind != PTO_PARAM_INPUT);
		random_region(g, &q);
		if (!overlaps(t, &q)) {
			t->p[t->np++] = q;
			return;
		}
	}
}

static int writes(const struct rp_param *q)
{
	return q->kind != PTO_PARAM_INPUT && q->kind != PTO_PARAM_NODEP;
}

static void gen_task(struct gen *g, int max_np)
{
	struct rp_op *t = &g->pg->ops[g->pg->nops];
	int i, np = tl_range(g->rng, 1, max_np), w = 0;

	memset(t, 0, sizeof(*t));
	t->op = RP_TASK;
	t->type = random_type(g);
	for (i = 0; i < np; i++)
		gen_param(g, t, 0);
	for (i = 0; i < t->np; i++)
		w |= writes(&t->p[i]);
	/* every task writes, so what it read lands somewhere */
	while (!w && t->np < max_np) {
		gen_param(g, t, 1);
		w = t->np && writes(&t->p[t->np - 1]);
	}
	if (!w) {
		t->np = 0;
		while (!t->np)
			gen_param(g, t, 1);
	}
	gen_commit(g);
}

void rp_generate(struct rp_prog *pg, struct tl_rng *rng,
		 const struct rp_cfg *cfg, const struct rp_shape *shape)
{
	struct gen g;
	int target = tl_range(rng, 1, shape->max_tasks);
	int max_np = shape->max_np < RAND_NP ? shape->max_np : RAND_NP;

	gen_init(&g, pg, rng, cfg);
	while (pg->ntasks < target) {
		uint32_t r = tl_range(rng, 0, 99);

		if (r < 12 && g.depth < shape->max_depth)
			gen_begin(&g);
		else if (r < 22 && g.depth > 0)
			gen_end(&g);
		else if (task_fits(&g))
			gen_task(&g, max_np);
		else if (g.depth > 0)
			gen_end(&g);
		else
			break;
	}
	gen_finish(&g);
}

/* ---- Task Bench patterns ------------------------------------------------- */

struct pat {
	enum rp_pattern kind;
	int width, lg;		/* lg: bits to number the points, >= 1 */
	uint32_t base, cb;	/* the grid's offset, bytes per cell */
};

/* Offset of point i of row r in shared buffer 0 (two rows, swapped). */
static uint32_t cell(const struct pat *p, int r, int i)
{
	return p->base + (uint32_t)(r * p->width + i) * p->cb;
}

static int add_dep(int *deps, int n, int j)
{
	int k;

	for (k = 0; k < n; k++)
		if (deps[k] == j)
			return n;
	deps[n] = j;
	return n + 1;
}

/* The points of step t - 1 that point i of step t reads. */
static int pattern_deps(const struct pat *p, int t, int i, int *deps)
{
	int w = p->width, k = (t - 1) % p->lg, n = 0, j;

	switch (p->kind) {
	case RP_TRIVIAL:
		return 0;
	case RP_STENCIL:
		for (j = i - 1; j <= i + 1; j++)
			if (j >= 0 && j < w)
				n = add_dep(deps, n, j);
		return n;
	case RP_FFT:
		n = add_dep(deps, n, i);
		return (i ^ (1 << k)) < w ? add_dep(deps, n, i ^ (1 << k)) : n;
	case RP_TREE:
		n = add_dep(deps, n, i);
		return add_dep(deps, n, i & ~((2 << k) - 1));
	case RP_ALL_TO_ALL:
		for (j = 0; j < w; j++)
			n = add_dep(deps, n, j);
		return n;
	default:	/* spread: three points a third of the width apart */
		for (j = 0; j < 3; j++)
			n = add_dep(deps, n, (i + j * ((w + 2) / 3)) % w);
		return n;
	}
}

/* Point i of step t: read its producers (and held), write its cell. */
static void gen_point(struct gen *g, const struct pat *p, int t, int i,
		      int held)
{
	struct rp_op *o = &g->pg->ops[g->pg->nops];
	int deps[16], n = t ? pattern_deps(p, t, i, deps) : 0, k;

	memset(o, 0, sizeof(*o));
	o->op = RP_TASK;
	o->type = random_type(g);
	for (k = 0; k < n; k++)
		o->p[o->np++] = (struct rp_param){ PTO_PARAM_INPUT, 0,
			cell(p, (t - 1) % 2, deps[k]), p->cb };
	o->p[o->np++] = (struct rp_param){ PTO_PARAM_OUTPUT_EXISTING, 0,
		cell(p, t % 2, i), p->cb };
	if (held >= 0)
		o->p[o->np++] = (struct rp_param){ PTO_PARAM_INPUT, held, 0,
			g->pg->out_nb[held - RP_OUT_BASE] };
	gen_commit(g);
}

/* A task at the current depth whose OUTPUT the steps read; its id. */
static int gen_holder(struct gen *g)
{
	struct rp_op *o = &g->pg->ops[g->pg->nops];

	memset(o, 0, sizeof(*o));
	o->op = RP_TASK;
	o->type = random_type(g);
	o->p[o->np++] = new_output(g, tl_range(g->rng, 1, 128));
	o->p[o->np++] = (struct rp_param){ PTO_PARAM_INPUT, 1, 0,
		RP_SH_BYTES };
	gen_commit(g);
	return o->p[0].buf;
}

static int gen_steps(struct gen *g, const struct pat *p, int steps,
		     int held)
{
	int t, i;

	for (t = 0; t < steps; t++) {
		gen_begin(g);
		for (i = 0; i < p->width; i++) {
			if (!task_fits(g))
				return -1;
			gen_point(g, p, t, i, held);
		}
		gen_end(g);
	}
	return 0;
}

void rp_generate_pattern(struct rp_prog *pg, struct tl_rng *rng,
			 const struct rp_cfg *cfg, enum rp_pattern kind,
			 int width, int steps)
{
	struct pat p = { .kind = kind, .lg = 1 };
	int outer = tl_range(rng, 0, RP_MAX_DEPTH - 2), d, held = -1;
	uint32_t win;
	struct gen g;

	gen_init(&g, pg, rng, cfg);
	/* a step's scope holds its points: all of them must fit its ring */
	win = cfg->window[ring_of(&g, outer + 1)];
	p.width = width < (int)win - 1 ? width : (int)win - 1;
	if (p.width > RP_MAX_NP - 2)	/* all_to_all: width INPUTs */
		p.width = RP_MAX_NP - 2;
	while ((1 << p.lg) < p.width)
		p.lg++;
	p.cb = 8 * tl_range(rng, 1, 2);
	p.base = tl_range(rng, 0, RP_SH_BYTES - 2 * p.width * p.cb);
	if (steps > RP_MAX_TASKS / p.width)
		steps = RP_MAX_TASKS / p.width;
	for (d = 0; d < outer; d++)
		gen_begin(&g);
	/* rarely where the holder would share a ring with every step */
	if (tl_range(rng, 0, 9) < (ring_of(&g, outer) ==
				   ring_of(&g, outer + 1) ? 1 : 5) &&
	    task_fits(&g))
		held = gen_holder(&g);
	gen_steps(&g, &p, steps, held);
	gen_finish(&g);
}

/* ---- running ------------------------------------------------------------- */

static void *buf_addr(struct rp_ctx *c, int buf)
{
	return buf >= RP_OUT_BASE ? c->pg->out_addr[buf - RP_OUT_BASE] :
				    (void *)c->shared[buf];
}

/* A new OUTPUT must be aligned and overlap no OUTPUT still alive. */
static void check_output(struct rp_ctx *c, int k, int op)
{
	struct rp_prog *pg = c->pg;
	uintptr_t a = (uintptr_t)pg->out_addr[k], b;
	int j;

	if (!a || a % 64)
		c->bad_out++;
	for (j = 0; j < k; j++) {
		if (pg->out_dies[j] <= op)
			continue;
		b = (uintptr_t)pg->out_addr[j];
		if (a < b + pg->out_nb[j] && b < a + pg->out_nb[k])
			c->bad_out++;
	}
}

static struct pto_param tensor(struct rp_ctx *c, const struct rp_param *q)
{
	if (q->kind == PTO_PARAM_OUTPUT)
		return PTO_OUT(&c->pg->out_addr[q->buf - RP_OUT_BASE], q->nb);
	return (struct pto_param){ .kind = q->kind,
				   .base = buf_addr(c, q->buf),
				   .offset = q->off, .size = q->nb };
}

static int64_t submit(struct rp_ctx *c, const struct rp_op *o, int i)
{
	struct pto_param p[4 + 2 * RP_MAX_NP];
	int k, n = 0;
	int64_t id;

	p[n++] = PTO_SCALAR(c->tag++);
	p[n++] = PTO_SCALAR(o->np);
	p[n++] = PTO_SCALAR(c->gated);
	p[n++] = PTO_SCALAR(o->delay);
	for (k = 0; k < o->np; k++)
		p[n++] = PTO_SCALAR(DESC(o->p[k].kind, o->p[k].nb));
	for (k = 0; k < o->np; k++)
		p[n++] = tensor(c, &o->p[k]);
	id = tl_submit(c->rec, o->type + 1, o->type, p, n);
	if (id < 0)
		return id;
	for (k = 0; k < o->np; k++)
		if (o->p[k].kind == PTO_PARAM_OUTPUT)
			check_output(c, o->p[k].buf - RP_OUT_BASE, i);
	return id;
}

static int run_ops(struct pto_runtime *rt, struct rp_ctx *c)
{
	const struct rp_prog *pg = c->pg;
	int i, ret;
	int64_t id;

	for (i = 0; i < pg->nops; i++) {
		const struct rp_op *o = &pg->ops[i];

		if (o->op == RP_BEGIN) {
			pto_scope_begin(rt);
		} else if (o->op == RP_END) {
			ret = pto_scope_end(rt);
			if (ret)
				return ret;
		} else {
			id = submit(c, o, i);
			if (id < 0)
				return (int)id;
		}
	}
	return 0;
}

int rp_orch(struct pto_runtime *rt, void *arg)
{
	int ret = run_ops(rt, arg);

	tl_gate_open(&gate);
	return ret;
}

int rp_gate_ok(const struct rp_prog *pg, const struct rp_cfg *cfg)
{
	uint64_t bytes[PTO_MAX_RINGS] = { 0 };
	int tasks[PTO_MAX_RINGS] = { 0 };
	int i, k, depth = 0, ring, n = (int)cfg->nrings;

	for (i = 0; i < pg->nops; i++) {
		const struct rp_op *o = &pg->ops[i];

		if (o->op != RP_TASK) {
			depth += o->op == RP_BEGIN ? 1 : -1;
			continue;
		}
		ring = depth < n ? depth : n - 1;
		tasks[ring]++;
		for (k = 0; k < o->np; k++)
			if (o->p[k].kind == PTO_PARAM_OUTPUT)
				bytes[ring] += 64 + align64(o->p[k].nb);
	}
	for (ring = 0; ring < n; ring++)
		if (tasks[ring] > (int)cfg->window[ring] - 1 ||
		    bytes[ring] > cfg->heap[ring] / 2)
			return 0;
	return 1;
}

void rp_fill_shared(struct rp_ctx *c, struct tl_rng *rng)
{
	int i, w;

	c->bad_out = 0;
	tl_gate_close(&gate);
	tl_rec_reset(c->rec);
	for (i = 0; i <= RP_NSHARED; i++) {
		for (w = 0; w < RP_SH_BYTES / 8; w++)
			c->shared[i][w] = tl_rand(rng);
		tl_host(c->rec, c->shared[i], RP_SH_BYTES);
	}
}

int rp_check(struct rp_ctx *c, char *msg, size_t len)
{
	int i, ret;
	int64_t at;

	replaying = 1;
	ret = tl_replay(c->rec);
	replaying = 0;
	if (ret) {
		snprintf(msg, len, "replay failed: %s", c->rec->err);
		return -1;
	}
	for (i = 0; i <= RP_NSHARED; i++) {
		at = tl_compare(c->rec, c->shared[i]);
		if (at >= 0) {
			snprintf(msg, len, "buffer %d differs from the sequential replay at byte %lld",
				 i, (long long)at);
			return -1;
		}
	}
	return 0;
}

static const char *kind_name(int kind)
{
	static const char *const names[] = {
		"IN", "OUT", "INOUT", "OUT_EXISTING", "NODEP", "SCALAR",
	};

	return names[kind];
}

static void dump_task(const struct rp_op *o, int task, int depth)
{
	char line[512];
	int k, len;

	len = snprintf(line, sizeof(line), "task %d type %d", task, o->type);
	if (o->delay)
		len += snprintf(line + len, sizeof(line) - len, " %s %llu ns",
				o->delay & RP_DELAY_SLEEP ? "sleep" : "spin",
				(unsigned long long)o->delay &
				~RP_DELAY_SLEEP);
	len += snprintf(line + len, sizeof(line) - len, ":");
	for (k = 0; k < o->np; k++) {
		const struct rp_param *q = &o->p[k];
		int out = q->buf >= RP_OUT_BASE;

		len += snprintf(line + len, sizeof(line) - len,
				" %s(%s%d,%u,%u)", kind_name(q->kind),
				out ? "o" : "b", out ? q->buf - RP_OUT_BASE :
						       q->buf, q->off, q->nb);
	}
	diag("  %*s%s", 2 * depth + 2, "", line);
}

void rp_dump(const struct rp_prog *pg)
{
	int i, depth = 0, task = 0;

	for (i = 0; i < pg->nops; i++) {
		const struct rp_op *o = &pg->ops[i];

		if (o->op == RP_TASK) {
			dump_task(o, task++, depth);
			continue;
		}
		depth += o->op == RP_BEGIN ? 1 : -1;
		diag("  %*s%s", 2 * depth, "",
		     o->op == RP_BEGIN ? "scope {" : "}");
	}
}
