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
 * reused while tasks that touched them may still be pending.  The
 * generator, the kernel and the check are in randprog.c, which the stress
 * driver (selftests/stress) shares.
 *
 * Half the programs are of that kind; the rest also pass N-D tensor views
 * (struct pto_view) of the same buffers, mixed with byte ranges, and
 * pto_alloc() buffers (randprog.h), and one in eight is a program of
 * tiles whose dependencies are known exactly: disjoint tiles of a matrix
 * written at once must take no dependency among them, and each later
 * reader exactly one per tile it reads (pto_stats.edges), which catches a
 * false dependency as the replay catches a missing one.  Which kind
 * program i is depends on the seed and i only, so a plain program is the
 * same as before views existed.
 *
 *	PTO_TEST_SEED=n		reproduce a run (the seed is printed)
 *	PTO_TEST_DAGS=n		how many programs (default 2000)
 *	PTO_TEST_DAG=i		run only program i (with its runtime's config)
 *	PTO_TEST_PRIOR=1	with PTO_TEST_DAG: and the programs before it
 *				on its runtime (a failure may need them)
 *	PTO_TEST_KIND=k		only programs of kind k: plain, views, tiles
 *
 * Runtimes schedule with a thread, on the workers and with shards in
 * turn, unless PTO_SCHED names one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "randprog.h"

#define PER_RUNTIME 10		/* programs per runtime */

static const struct rp_shape shape = {
	.max_tasks = RP_MAX_TASKS, .max_depth = RP_MAX_DEPTH, .max_np = 5,
};
static const struct rp_shape view_shape = {
	.max_tasks = RP_MAX_TASKS, .max_depth = RP_MAX_DEPTH, .max_np = 5,
	.views = 1,
};

enum { PLAIN, VIEWS, TILES, NKINDS };
static const char *const kind_names[NKINDS] = { "plain", "views", "tiles" };
/* PTO_TEST_KIND, or NKINDS: every kind */
static int only_kind = NKINDS;

struct totals {
	int dags, tasks, run_failed, mismatched, bad_out, dumped, gated;
	int exact;		/* tiles programs whose edges were counted */
	int per_kind[NKINDS], kind_tasks[NKINDS];
	int wrong_edges;
	uint64_t edges;		/* of the tiles programs */
};

/* Half plain, 3/8 with views, 1/8 tiles: by the seed and index only. */
static int dag_kind(uint64_t seed, int idx)
{
	uint64_t h = tl_mix(seed ^ tl_mix(0x7a1e0000ull + idx)) % 8;

	if (only_kind < NKINDS)
		return only_kind;
	return h < 4 ? PLAIN : h < 7 ? VIEWS : TILES;
}

static uint64_t edges_now(struct pto_runtime *rt)
{
	struct pto_stats st;

	if (pto_get_stats(rt, &st))
		bail_out("pto_get_stats");
	return st.edges;
}

static void report(int idx, uint64_t seed, const struct rp_cfg *cfg,
		   const struct rp_prog *pg, struct totals *tot)
{
	static const char *const sched[] = { "thread", "workers", "shards" };
	const char *env_sched = getenv("PTO_SCHED");

	diag("dag %d (%s): seed %llu, %u rings, window %u, heap %llu, "
	     "cores %u/%u/%u/%u, sched %s, %d tasks",
	     idx, kind_names[dag_kind(seed, idx)], (unsigned long long)seed,
	     cfg->nrings, cfg->window[0],
	     (unsigned long long)cfg->heap[0], cfg->cores[0], cfg->cores[1],
	     cfg->cores[2], cfg->cores[3],
	     env_sched ? env_sched : sched[idx / PER_RUNTIME % 3], pg->ntasks);
	if (tot->dumped++ < 3)
		rp_dump(pg);
}

static void run_dag(struct pto_runtime *rt, struct rp_ctx *c, uint64_t seed,
		    int idx, const struct rp_cfg *cfg, struct totals *tot)
{
	static struct rp_prog pg;
	struct tl_rng rng;
	char msg[256];
	int ret, bad = 0, kind = dag_kind(seed, idx), exact;
	uint64_t edges;

	tl_rng_seed(&rng, seed ^ tl_mix(0x5eed0000ull + idx));
	if (kind == TILES)
		rp_generate_tiles(&pg, &rng, cfg);
	else
		rp_generate(&pg, &rng, cfg, kind == VIEWS ? &view_shape :
							    &shape);
	c->pg = &pg;
	/*
	 * A tiles program's dependencies are exact only while every task
	 * stays alive; one that made no buffer retires as soon as it and its
	 * consumers are done, so gate them whenever the windows allow.
	 */
	c->gated = rp_gate_ok(&pg, cfg) &&
		   (tl_range(&rng, 0, 1) || kind == TILES);
	rp_fill_shared(c, &rng);

	edges = edges_now(rt);
	ret = pto_run(rt, rp_orch, c);
	edges = edges_now(rt) - edges;
	tot->gated += c->gated;
	tot->dags++;
	tot->tasks += pg.ntasks;
	tot->per_kind[kind]++;
	tot->kind_tasks[kind] += pg.ntasks;
	tot->bad_out += c->bad_out;
	if (kind == TILES)
		tot->edges += edges;
	exact = pg.edges_exact && c->gated;
	tot->exact += exact && !ret;
	if (!ret && pg.edges >= 0 &&
	    (exact ? edges != (uint64_t)pg.edges :
		     edges > (uint64_t)pg.edges)) {
		tot->wrong_edges++;
		bad = 1;
		diag("dag %d: %llu dependencies, %s %lld", idx,
		     (unsigned long long)edges,
		     exact ? "not the" : "more than the",
		     (long long)pg.edges);
	}
	if (ret) {
		tot->run_failed++;
		bad = 1;
		diag("dag %d: pto_run returned %d (%s)", idx, ret,
		     strerror(-ret));
	} else if (rp_check(c, msg, sizeof(msg))) {
		tot->mismatched++;
		bad = 1;
		diag("dag %d: %s", idx, msg);
	}
	if (bad || c->bad_out)
		report(idx, seed, cfg, &pg, tot);
}

static void random_cfg(struct rp_cfg *rc, uint64_t seed, int group)
{
	struct tl_rng rng;
	uint32_t r;

	tl_rng_seed(&rng, seed ^ tl_mix(0xc0f90000ull + group));
	rc->window[0] = 1u << tl_range(&rng, 2, 10);
	/* down to 4 KiB, so that the ring wraps onto freed buffers often */
	rc->heap[0] = 1ull << tl_range(&rng, 12, 20);
	rc->nrings = tl_range(&rng, 1, PTO_MAX_RINGS);
	for (r = 1; r < PTO_MAX_RINGS; r++) {
		rc->window[r] = rc->window[0];
		rc->heap[r] = rc->heap[0];
	}
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
	struct rp_ctx c = { .rec = &rec };
	struct rp_cfg rc;
	int t, i;

	random_cfg(&rc, seed, group);
	tl_config(&cfg, rc.window[0], rc.heap[0]);
	cfg.nrings = rc.nrings;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		cfg.cores[t] = rc.cores[t];
	/* every way of scheduling in turn, unless PTO_SCHED says one */
	if (!getenv("PTO_SCHED"))
		cfg.sched = PTO_SCHED_THREAD + group % 3;
	rt = tl_runtime(&cfg);
	tl_rec_init(&rec, rt);
	if (rp_register(&rec, &rc))
		bail_out("cannot register the kernel");
	/* both queue depths, for each way of scheduling */
	if (group % 6 >= 3)
		rp_deep_queues(rt);
	for (i = 0; i <= RP_NSHARED; i++) {
		c.shared[i] = pto_malloc(rt, RP_SH_BYTES);
		if (!c.shared[i])
			bail_out("pto_malloc");
	}
	for (i = first; i <= last; i++)
		run_dag(rt, &c, seed, i, &rc, tot);
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
	const char *k = getenv("PTO_TEST_KIND");
	int g;

	for (g = 0; k && *k && g < NKINDS && strcmp(k, kind_names[g]); g++)
		;
	if (k && *k && g == NKINDS)
		bail_out("PTO_TEST_KIND must be plain, views or tiles");
	if (k && *k)
		only_kind = g;
	rp_init();
	diag("seed %llu (PTO_TEST_SEED=%llu reproduces this run)",
	     (unsigned long long)seed, (unsigned long long)seed);
	if (only >= 0) {
		run_group(seed, only / PER_RUNTIME,
			  tl_env_u64("PTO_TEST_PRIOR", 0) ?
			  only / PER_RUNTIME * PER_RUNTIME : only, only, &tot);
	} else {
		for (g = 0; g * PER_RUNTIME < ndags; g++) {
			int last = (g + 1) * PER_RUNTIME - 1;

			run_group(seed, g, g * PER_RUNTIME,
				  last < ndags ? last : ndags - 1, &tot);
		}
	}
	diag("%d programs (%d held until their last submit), %d tasks in %.2f s",
	     tot.dags, tot.gated, tot.tasks, (tl_now_ns() - t0) / 1e9);
	for (g = 0; g < NKINDS; g++)
		diag("  %s: %d programs, %d tasks", kind_names[g],
		     tot.per_kind[g], tot.kind_tasks[g]);
	diag("  tiles: %llu dependencies, each one needed",
	     (unsigned long long)tot.edges);
	ok_eq(tot.run_failed, 0, "random: every pto_run returned 0");
	ok_eq(tot.mismatched, 0,
	      "random: every result equals the sequential replay");
	ok_eq(atomic_load(&rp_gate_timeouts), 0,
	      "random: no gated task waited in vain");
	ok_eq(atomic_load(&rp_core_overlaps), 0,
	      "random: no core ran two tasks at once (pto_core_id())");
	ok_eq(tot.bad_out, 0,
	      "random: OUTPUTs aligned to 64 and disjoint while alive");
	ok_eq(tot.wrong_edges, 0,
	      "random: tiles programs take exactly the dependencies needed");
	ok(tot.exact > 0, "random: %d tiles programs had their edges counted",
	   tot.exact);
	return tap_done();
}
