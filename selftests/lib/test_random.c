// SPDX-License-Identifier: MIT
/*
 * Randomized differential test: thousands of small random programs (up to
 * 256 tasks in random nested scopes, with random INPUT / INOUT /
 * OUTPUT_EXISTING / OUTPUT / NODEP regions, partly overlapping, on a few
 * shared buffers and on OUTPUT buffers while they live) run on runtimes
 * with random task windows (4..1024) and core counts.  Every task hashes
 * what it reads into what it writes, so its effect depends on the order of
 * execution; the shared buffers must equal, byte for byte, the sequential
 * replay of the same task list in submission order (testlib.h).
 *
 * The runtimes have 1 to 4 task rings, one per scope depth (depths past the
 * last share it), each retired in order on its own.  The generator keeps
 * each program deadlock-free by construction, ring by ring: tasks held by
 * open scopes pin their ring's task window and heap, so in no ring does it
 * let the tasks from the oldest one still held to the newest exceed
 * window - 1, nor their OUTPUTs the heap ring, closing scopes (or ending
 * the program) instead.  Within that, outer scopes hold OUTPUTs that long
 * runs of deeper scopes read, far more tasks in all than a window holds:
 * no such run may deadlock.  Heap rings go down to 4 KiB, so buffers are
 * reused while tasks that touched them may still be pending.
 *
 *	PTO_TEST_SEED=n		reproduce a run (the seed is printed)
 *	PTO_TEST_DAGS=n		how many programs (default 2000)
 *	PTO_TEST_DAG=i		run only program i (with its runtime's config)
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define MAX_TASKS 256
#define MAX_OPS (3 * MAX_TASKS + 16)
#define MAX_NP 5
#define MAX_OUTS (MAX_TASKS * MAX_NP)
#define MAX_DEPTH 6
#define NSHARED 3
#define CONST_BUF NSHARED	/* read-only: the only NODEP target */
#define SH_BYTES 384
#define OUT_BASE 100		/* buffer ids >= OUT_BASE are OUTPUTs */
#define PER_RUNTIME 10		/* programs per runtime */

enum { OP_BEGIN, OP_END, OP_TASK };

struct rparam {
	int kind;
	int buf;
	uint32_t off, nb;	/* in bytes */
};

struct rop {
	int op;
	int type;
	int np;
	struct rparam p[MAX_NP];
};

struct rprog {
	struct rop ops[MAX_OPS];
	int nops, ntasks, nouts;
	uint32_t out_nb[MAX_OUTS];
	int out_dies[MAX_OUTS];	/* op index of the END that frees it */
	int out_born[MAX_OUTS];
	void *out_addr[MAX_OUTS];
};

static uint64_t pto_align_up_(uint64_t x)
{
	return (x + 63) & ~63ull;
}

struct rcfg {
	uint32_t window;
	uint64_t heap;
	uint32_t nrings;
	uint32_t cores[PTO_NUM_WORKER_TYPES];
};

/* ---- the kernel ---------------------------------------------------------- */

#define DESC(kind, nb) (((uint64_t)(kind) << 32) | (nb))

static struct tl_gate gate;
static atomic_int gate_timeouts;

/*
 * tag, np, gated, desc[np], addr[np]: hash the tag and every byte read,
 * then update INOUT bytes from their old value and overwrite OUTPUT bytes.
 * Bytes, not words, so regions can meet and overlap at any byte.  A gated
 * task first waits until the whole program has been submitted.
 */
static void k_rand(const uint64_t *a, uint32_t n)
{
	uint64_t h = tl_mix(a[0]), np = a[1], p, b;
	const uint64_t *desc = a + 3, *addr = a + 3 + np;

	if (a[2] && tl_gate_wait(&gate, 10000))
		atomic_fetch_add(&gate_timeouts, 1);
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

/* ---- the generator ------------------------------------------------------- */

struct gen {
	struct tl_rng *rng;
	struct rprog *pg;
	uint32_t window;
	uint64_t heap;
	uint32_t nrings;
	uint64_t task_bytes[MAX_TASKS];	/* heap ring bytes per task */
	int task_ring[MAX_TASKS];	/* the task ring it goes to */
	int depth;
	int first_held[MAX_DEPTH + 1];	/* per open scope, -1: none */
	int live[MAX_OUTS], nlive;	/* outputs alive now */
	int live_depth[MAX_OUTS];
};

/* The task ring of a scope depth, as the runtime picks it. */
static int ring_of(const struct gen *g, int depth)
{
	return depth < (int)g->nrings ? depth : (int)g->nrings - 1;
}

static uint32_t buf_bytes(const struct gen *g, int buf)
{
	return buf >= OUT_BASE ? g->pg->out_nb[buf - OUT_BASE] : SH_BYTES;
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
 * Most a task takes from the heap ring (MAX_NP OUTPUTs of 128 bytes, each
 * aligned to 64 and padded to 64), and as much again for the padding a
 * block that would straddle the end of the ring leaves behind.
 */
#define TASK_HEAP_MAX (2 * MAX_NP * 192)

static void gen_begin(struct gen *g)
{
	g->pg->ops[g->pg->nops++].op = OP_BEGIN;
	g->first_held[++g->depth] = -1;
}

static void gen_end(struct gen *g)
{
	int i;

	/* outputs of the closing scope die here */
	for (i = 0; i < g->nlive; i++)
		if (g->live_depth[i] == g->depth) {
			g->pg->out_dies[g->live[i] - OUT_BASE] = g->pg->nops;
			g->live[i] = g->live[--g->nlive];
			g->live_depth[i] = g->live_depth[g->nlive];
			i--;
		}
	g->pg->ops[g->pg->nops++].op = OP_END;
	g->depth--;
}

static int overlaps(const struct rop *t, const struct rparam *q)
{
	int i;

	for (i = 0; i < t->np; i++)
		if (t->p[i].buf == q->buf && q->off < t->p[i].off + t->p[i].nb &&
		    t->p[i].off < q->off + q->nb)
			return 1;
	return 0;
}

static int pick_buf(struct gen *g, int writable)
{
	int n = NSHARED + (writable ? 0 : 1) + g->nlive;
	int k = (int)tl_range(g->rng, 0, n - 1);

	if (k < NSHARED + (writable ? 0 : 1))
		return k;
	return g->live[k - NSHARED - (writable ? 0 : 1)];
}

static void gen_param(struct gen *g, struct rop *t, int must_write)
{
	struct rparam q;
	uint32_t r = tl_range(g->rng, 0, 99), nb, max;
	int tries;

	if (must_write)
		r = 40 + r % 48;	/* INOUT, OUTPUT_EXISTING or OUTPUT */
	if (r < 35)
		q.kind = PTO_PARAM_INPUT;
	else if (r < 60)
		q.kind = PTO_PARAM_INOUT;
	else if (r < 78)
		q.kind = PTO_PARAM_OUTPUT_EXISTING;
	else if (r < 92)
		q.kind = PTO_PARAM_OUTPUT;
	else
		q.kind = PTO_PARAM_NODEP;

	if (q.kind == PTO_PARAM_OUTPUT) {
		q.buf = OUT_BASE + g->pg->nouts;
		q.off = 0;
		q.nb = tl_range(g->rng, 1, 128);
		g->pg->out_nb[g->pg->nouts] = q.nb;
		g->pg->out_born[g->pg->nouts] = g->pg->nops;
		g->pg->out_dies[g->pg->nouts] = -1;
		g->pg->nouts++;
		t->p[t->np++] = q;
		return;
	}
	for (tries = 0; tries < 6; tries++) {
		q.buf = q.kind == PTO_PARAM_NODEP ? CONST_BUF :
			pick_buf(g, q.kind != PTO_PARAM_INPUT);
		nb = buf_bytes(g, q.buf);
		/* half word-aligned (the common case), half at any byte */
		if (nb >= 8 && tl_range(g->rng, 0, 1)) {
			q.off = 8 * tl_range(g->rng, 0, nb / 8 - 1);
			max = (nb - q.off) / 8 < 12 ? (nb - q.off) / 8 : 12;
			q.nb = 8 * tl_range(g->rng, 1, max);
		} else {
			q.off = tl_range(g->rng, 0, nb - 1);
			max = nb - q.off < 96 ? nb - q.off : 96;
			q.nb = tl_range(g->rng, 1, max);
		}
		if (!overlaps(t, &q)) {
			t->p[t->np++] = q;
			return;
		}
	}
}

static void gen_task(struct gen *g)
{
	struct rop *t = &g->pg->ops[g->pg->nops];
	int i, np = tl_range(g->rng, 1, MAX_NP), writes = 0;

	t->op = OP_TASK;
	t->type = tl_range(g->rng, 0, PTO_NUM_WORKER_TYPES - 1);
	t->np = 0;
	for (i = 0; i < np; i++)
		gen_param(g, t, 0);
	for (i = 0; i < t->np; i++)
		writes |= t->p[i].kind != PTO_PARAM_INPUT &&
			  t->p[i].kind != PTO_PARAM_NODEP;
	/* every task writes, so what it read lands somewhere */
	while (!writes && t->np < MAX_NP) {
		gen_param(g, t, 1);
		writes = t->np && t->p[t->np - 1].kind != PTO_PARAM_INPUT;
	}
	if (!writes) {
		t->np = 0;
		gen_param(g, t, 1);
		while (!t->np)
			gen_param(g, t, 1);
	}
	g->task_bytes[g->pg->ntasks] = 0;
	g->task_ring[g->pg->ntasks] = ring_of(g, g->depth);
	for (i = 0; i < t->np; i++)
		if (t->p[i].kind == PTO_PARAM_OUTPUT) {
			g->live[g->nlive] = t->p[i].buf;
			g->live_depth[g->nlive++] = g->depth;
			g->task_bytes[g->pg->ntasks] +=
				(t->p[i].nb + 63) / 64 * 64;
		}
	if (g->first_held[g->depth] < 0)
		g->first_held[g->depth] = g->pg->ntasks;
	g->pg->ntasks++;
	g->pg->nops++;
}

static void generate(struct rprog *pg, struct tl_rng *rng,
		     const struct rcfg *cfg)
{
	struct gen g = { .rng = rng, .pg = pg, .window = cfg->window,
			 .heap = cfg->heap, .nrings = cfg->nrings };
	int target = tl_range(rng, 1, MAX_TASKS), i, ring;

	memset(pg, 0, sizeof(*pg));
	g.first_held[0] = -1;
	while (pg->ntasks < target) {
		uint32_t r = tl_range(rng, 0, 99);

		ring = ring_of(&g, g.depth);
		if (r < 12 && g.depth < MAX_DEPTH) {
			gen_begin(&g);
		} else if (r < 22 && g.depth > 0) {
			gen_end(&g);
		} else if (held_span(&g, ring) <= (int)g.window - 1 &&
			   held_bytes(&g, ring) + TASK_HEAP_MAX <= g.heap) {
			gen_task(&g);
		} else if (g.depth > 0) {
			gen_end(&g);
		} else {
			break;
		}
	}
	while (g.depth > 0)
		gen_end(&g);
	/* the outer scope's outputs die when the run ends */
	for (i = 0; i < pg->nouts; i++)
		if (pg->out_dies[i] < 0)
			pg->out_dies[i] = pg->nops;
}

/* ---- running ------------------------------------------------------------- */

struct rctx {
	struct tl_rec *rec;
	struct rprog *pg;
	uint64_t *shared[NSHARED + 1];
	uint64_t tag;
	int bad_out;		/* misaligned or overlapping live OUTPUTs */
	int gated;		/* tasks wait until the last submit */
};

static void *buf_addr(struct rctx *c, int buf)
{
	return buf >= OUT_BASE ? c->pg->out_addr[buf - OUT_BASE] :
				 (void *)c->shared[buf];
}

/* A new OUTPUT must be aligned and overlap no OUTPUT still alive. */
static void check_output(struct rctx *c, int k, int op)
{
	struct rprog *pg = c->pg;
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

static int orch_random(struct pto_runtime *rt, void *arg)
{
	struct rctx *c = arg;
	struct rprog *pg = c->pg;
	struct pto_param p[3 + 2 * MAX_NP];
	int i, k, n, ret;
	int64_t id;

	for (i = 0; i < pg->nops; i++) {
		const struct rop *o = &pg->ops[i];

		if (o->op == OP_BEGIN) {
			pto_scope_begin(rt);
			continue;
		}
		if (o->op == OP_END) {
			ret = pto_scope_end(rt);
			if (ret) {
				tl_gate_open(&gate);
				return ret;
			}
			continue;
		}
		n = 0;
		p[n++] = PTO_SCALAR(c->tag++);
		p[n++] = PTO_SCALAR(o->np);
		p[n++] = PTO_SCALAR(c->gated);
		for (k = 0; k < o->np; k++)
			p[n++] = PTO_SCALAR(DESC(o->p[k].kind, o->p[k].nb));
		for (k = 0; k < o->np; k++) {
			const struct rparam *q = &o->p[k];

			if (q->kind == PTO_PARAM_OUTPUT)
				p[n++] = PTO_OUT(&pg->out_addr[q->buf - OUT_BASE],
						 q->nb);
			else
				p[n++] = (struct pto_param){
					.kind = q->kind,
					.base = buf_addr(c, q->buf),
					.offset = q->off, .size = q->nb };
		}
		id = tl_submit(c->rec, o->type + 1, o->type, p, n);
		if (id < 0) {
			tl_gate_open(&gate);
			return (int)id;
		}
		for (k = 0; k < o->np; k++)
			if (o->p[k].kind == PTO_PARAM_OUTPUT)
				check_output(c, o->p[k].buf - OUT_BASE, i);
	}
	tl_gate_open(&gate);
	return 0;
}

static const char *kind_name(int kind)
{
	static const char *const names[] = {
		"IN", "OUT", "INOUT", "OUT_EXISTING", "NODEP", "SCALAR",
	};

	return names[kind];
}

static void dump_prog(const struct rprog *pg)
{
	char line[256];
	int i, k, len, depth = 0, task = 0;

	for (i = 0; i < pg->nops; i++) {
		const struct rop *o = &pg->ops[i];

		if (o->op != OP_TASK) {
			depth += o->op == OP_BEGIN ? 1 : -1;
			diag("  %*s%s", 2 * depth, "",
			     o->op == OP_BEGIN ? "scope {" : "}");
			continue;
		}
		len = snprintf(line, sizeof(line), "task %d type %d:", task++,
			       o->type);
		for (k = 0; k < o->np; k++) {
			const struct rparam *q = &o->p[k];

			len += snprintf(line + len, sizeof(line) - len,
					" %s(%s%d,%u,%u)", kind_name(q->kind),
					q->buf >= OUT_BASE ? "o" : "b",
					q->buf >= OUT_BASE ? q->buf - OUT_BASE :
							     q->buf,
					q->off, q->nb);
		}
		diag("  %*s%s", 2 * depth + 2, "", line);
	}
}

/*
 * Holding every task until the last submit makes the runtime resolve the
 * whole DAG with all producers pending, the case a fast runtime that
 * finishes tasks as they come rarely meets.  Safe only when nothing has to
 * complete for the program to be submitted: in every ring, all its tasks
 * fit in the task window and its OUTPUTs in half the heap ring.
 */
static int gate_ok(const struct rprog *pg, const struct rcfg *cfg)
{
	uint64_t bytes[PTO_MAX_RINGS] = { 0 };
	int tasks[PTO_MAX_RINGS] = { 0 };
	int i, k, depth = 0, ring;

	for (i = 0; i < pg->nops; i++) {
		const struct rop *o = &pg->ops[i];

		if (o->op != OP_TASK) {
			depth += o->op == OP_BEGIN ? 1 : -1;
			continue;
		}
		ring = depth < (int)cfg->nrings ? depth : (int)cfg->nrings - 1;
		tasks[ring]++;
		for (k = 0; k < o->np; k++)
			if (o->p[k].kind == PTO_PARAM_OUTPUT)
				bytes[ring] += 64 + pto_align_up_(o->p[k].nb);
	}
	for (ring = 0; ring < (int)cfg->nrings; ring++)
		if (tasks[ring] > (int)cfg->window - 1 ||
		    bytes[ring] > cfg->heap / 2)
			return 0;
	return 1;
}

struct totals {
	int dags, tasks, run_failed, mismatched, bad_out, dumped, gated;
};

static void run_dag(struct pto_runtime *rt, struct tl_rec *rec,
		    struct rctx *c, uint64_t seed, int idx,
		    const struct rcfg *cfg, struct totals *tot)
{
	static struct rprog pg;
	struct tl_rng rng;
	int i, w, ret, bad = 0;

	tl_rng_seed(&rng, seed ^ tl_mix(0x5eed0000ull + idx));
	generate(&pg, &rng, cfg);
	c->pg = &pg;
	c->bad_out = 0;
	c->gated = gate_ok(&pg, cfg) && tl_range(&rng, 0, 1);
	tl_gate_close(&gate);
	tl_rec_reset(rec);
	for (i = 0; i <= NSHARED; i++) {
		for (w = 0; w < SH_BYTES / 8; w++)
			c->shared[i][w] = tl_rand(&rng);
		tl_host(rec, c->shared[i], SH_BYTES);
	}

	ret = pto_run(rt, orch_random, c);
	tot->gated += c->gated;
	tot->dags++;
	tot->tasks += pg.ntasks;
	tot->bad_out += c->bad_out;
	if (ret) {
		tot->run_failed++;
		bad = 1;
		diag("dag %d: pto_run returned %d (%s)", idx, ret,
		     strerror(-ret));
	} else if (tl_replay(rec)) {
		tot->mismatched++;
		bad = 1;
		diag("dag %d: replay failed: %s", idx, rec->err);
	} else {
		for (i = 0; i <= NSHARED; i++) {
			int64_t at = tl_compare(rec, c->shared[i]);

			if (at >= 0) {
				diag("dag %d: buffer %d differs from the sequential replay at byte %lld",
				     idx, i, (long long)at);
				bad = 1;
			}
		}
		tot->mismatched += bad;
	}
	if (bad || c->bad_out) {
		diag("dag %d: seed %llu, %u rings, window %u, heap %llu, cores %u/%u/%u/%u, %d tasks",
		     idx, (unsigned long long)seed, cfg->nrings, cfg->window,
		     (unsigned long long)cfg->heap, cfg->cores[0],
		     cfg->cores[1], cfg->cores[2], cfg->cores[3], pg.ntasks);
		if (tot->dumped++ < 3)
			dump_prog(&pg);
	}
}

static void random_cfg(struct rcfg *rc, uint64_t seed, int group)
{
	struct tl_rng rng;

	tl_rng_seed(&rng, seed ^ tl_mix(0xc0f90000ull + group));
	rc->window = 1u << tl_range(&rng, 2, 10);
	/* down to 4 KiB, so that the ring wraps onto freed buffers often */
	rc->heap = 1ull << tl_range(&rng, 12, 20);
	rc->nrings = tl_range(&rng, 1, PTO_MAX_RINGS);
	rc->cores[PTO_WORKER_CUBE] = tl_range(&rng, 1, 3);
	rc->cores[PTO_WORKER_VECTOR] = tl_range(&rng, 1, 3);
	rc->cores[PTO_WORKER_AICPU] = tl_range(&rng, 1, 2);
	rc->cores[PTO_WORKER_ACCEL] = tl_range(&rng, 1, 2);
}

static void run_group(uint64_t seed, int group, int first, int last,
		      struct totals *tot)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_rec rec;
	struct rctx c = { .rec = &rec };
	struct rcfg rc;
	int t, i;

	random_cfg(&rc, seed, group);
	tl_config(&cfg, rc.window, rc.heap);
	cfg.nrings = rc.nrings;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		cfg.cores[t] = rc.cores[t];
	rt = tl_runtime(&cfg);
	tl_rec_init(&rec, rt);
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (tl_register(&rec, t + 1, t, k_rand, "rand"))
			bail_out("cannot register the kernel");
	for (i = 0; i <= NSHARED; i++) {
		c.shared[i] = pto_malloc(rt, SH_BYTES);
		if (!c.shared[i])
			bail_out("pto_malloc");
	}
	for (i = first; i <= last; i++)
		run_dag(rt, &rec, &c, seed, i, &rc, tot);
	tl_rec_free(&rec);
	pto_runtime_destroy(rt);
}

int main(void)
{
	uint64_t seed = tl_env_seed("PTO_TEST_SEED");
	int ndags = (int)tl_env_u64("PTO_TEST_DAGS", 2000);
	int only = (int)tl_env_u64("PTO_TEST_DAG", (uint64_t)-1);
	struct totals tot = { 0 };
	uint64_t t0 = tl_now_ns();
	int g;

	tl_gate_init(&gate);
	diag("seed %llu (PTO_TEST_SEED=%llu reproduces this run)",
	     (unsigned long long)seed, (unsigned long long)seed);
	if (only >= 0) {
		run_group(seed, only / PER_RUNTIME, only, only, &tot);
	} else {
		for (g = 0; g * PER_RUNTIME < ndags; g++) {
			int last = (g + 1) * PER_RUNTIME - 1;

			run_group(seed, g, g * PER_RUNTIME,
				  last < ndags ? last : ndags - 1, &tot);
		}
	}
	diag("%d programs (%d held until their last submit), %d tasks in %.2f s",
	     tot.dags, tot.gated, tot.tasks, (tl_now_ns() - t0) / 1e9);
	ok_eq(tot.run_failed, 0, "random: every pto_run returned 0");
	ok_eq(tot.mismatched, 0,
	      "random: every result equals the sequential replay");
	ok_eq(atomic_load(&gate_timeouts), 0,
	      "random: no gated task waited in vain");
	ok_eq(tot.bad_out, 0,
	      "random: OUTPUTs aligned to 64 and disjoint while alive");
	return tap_done();
}
