// SPDX-License-Identifier: MIT
/*
 * Unit tests of libpto's internals through its internal headers (linked
 * statically): ring arithmetic, the heap ring (wrap-around, never split,
 * alignment, full), the ready queue, the lock-free queue of the sharded
 * scheduler (alone and with threads pushing and popping at once), the
 * per-depth core bitmaps, and the TensorMap (overlap, chain truncation at
 * the first retired entry, retirement by the ring's tail, reuse,
 * exhaustion), each also against a brute-force model on random
 * operations; the per-task clock against CLOCK_MONOTONIC; and the count
 * of CPUs the process may use.
 *
 * The dependency-list pool is private to the orchestrator; its
 * back-pressure is tested through the API in test_window.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "config.h"
#include "coreload.h"
#include "mpmc.h"
#include "pace.h"
#include "rings.h"
#include "ringsize.h"
#include "stall.h"
#include "sync.h"
#include "tensormap.h"

/* ---- ring arithmetic ----------------------------------------------------- */

static void test_arith(void)
{
	uint64_t x, p;
	int bad = 0;

	for (x = 0; x < 5000; x++) {
		for (p = 1; p < x; p <<= 1)
			;
		bad += pto_next_pow2(x) != (x ? p : 1);
		bad += pto_is_pow2(x) != (x && p == x);
		bad += pto_align_up(x, 64) != (x + 63) / 64 * 64;
	}
	ok_eq(bad, 0, "arith: next_pow2, is_pow2, align_up for 0..4999");
}

/* ---- heap ring ----------------------------------------------------------- */

static void test_heap_fixed(void)
{
	struct pto_heap_alloc a;

	ok(pto_heap_ring_fit(1024, 0, 0, 0, 1024, &a) && a.start == 0 &&
	   a.end == 1024, "heap: an empty ring takes a whole-ring block");
	ok(pto_heap_ring_fit(1024, 900, 500, 0, 200, &a) && a.start == 1024 &&
	   a.end == 1224,
	   "heap: a block that would straddle the end starts at the next lap");
	ok(!pto_heap_ring_fit(1024, 900, 100, 0, 200, &a),
	   "heap: ... unless the start of the ring is still live");
	ok(!pto_heap_ring_fit(1024, 1500, 500, 0, 100, &a),
	   "heap: a full ring refuses");
	ok(pto_heap_ring_fit(1024, 1500, 600, 0, 100, &a) && a.start == 1500,
	   "heap: and accepts once the tail has moved");
	ok(pto_heap_ring_fit(1024, 1500, 1500, 0, 1000, &a) &&
	   a.start % 1024 + 1000 <= 1024,
	   "heap: an empty ring places a large block without splitting it");
	ok(pto_heap_ring_fit(1024, 1500, 100, 1500, 1000, &a),
	   "heap: floor at top means empty whatever the tail says");
	ok_eq(pto_heap_ring_used(1500, 500, 0), 1000, "heap: used");
	ok_eq(pto_heap_ring_used(1500, 500, 1200), 300,
	      "heap: used counts from the floor");
	ok(pto_heap_ring_fit(1024, 1500, 1500, 0, 700, &a) &&
	   a.start == 2048 && a.offset == 0 &&
	   pto_heap_ring_used(a.end, 1500, a.start) == 700,
	   "heap: a block an empty ring skips to the next lap for is all "
	   "that is used, counted from the floor");
	ok(pto_heap_ring_fit(1024, 1500, 1000, 0, 100, &a) &&
	   a.start == 1500 && a.offset == 476,
	   "heap: the block's offset in the ring comes with it");
	ok(pto_heap_ring_fit(1024, 1500, 1500, 0, 64, &a) &&
	   a.start == 2048 && a.offset == 0,
	   "heap: an empty ring starts again at offset 0, on the pages used "
	   "last, even for a small block");
	ok(pto_heap_ring_fit(1024, 2048, 2048, 0, 64, &a) &&
	   a.start == 2048 && a.offset == 0,
	   "heap: ... and stays there when it is at a boundary already");
}

/*
 * Random allocations (64-byte multiples) freed in order, against a model
 * of which bytes of the ring are live.
 */
static void test_heap_random(uint64_t seed)
{
	enum { SIZE = 4096, MAXLIVE = 256 };
	static uint8_t live_bytes[SIZE];
	struct { uint64_t start, end; } q[MAXLIVE];
	uint64_t top = 0, tail = 0, floor = 0, n, b;
	int head = 0, cnt = 0, i, split = 0, overlap = 0, misalign = 0;
	int refused_empty = 0, used_bad = 0, allocs = 0, wraps = 0;
	struct pto_heap_alloc a;
	struct tl_rng rng;

	tl_rng_seed(&rng, seed);
	memset(live_bytes, 0, sizeof(live_bytes));
	for (i = 0; i < 200000; i++) {
		if (cnt && (cnt == MAXLIVE || tl_range(&rng, 0, 2) == 0)) {
			/* free the oldest: the tail moves to the next block */
			int k = head;

			for (b = q[k].start; b < q[k].end; b++)
				live_bytes[b % SIZE] = 0;
			head = (head + 1) % MAXLIVE;
			cnt--;
			tail = cnt ? q[head].start : top;
			continue;
		}
		n = 64 * tl_range(&rng, 1, tl_range(&rng, 0, 7) ? 8 : 40);
		if (!pto_heap_ring_fit(SIZE, top, tail, floor, n, &a)) {
			refused_empty += cnt == 0;
			continue;
		}
		/*
		 * As the orchestrator does: a block placed in an empty ring
		 * starts the live data, even when it skipped to the next lap.
		 */
		if (!pto_heap_ring_used(top, tail, floor))
			floor = a.start;
		allocs++;
		split += a.start / SIZE != (a.end - 1) / SIZE;
		misalign += a.start % 64 != 0;
		wraps += a.start != top;
		for (b = a.start; b < a.end; b++) {
			overlap += live_bytes[b % SIZE];
			live_bytes[b % SIZE] = 1;
		}
		q[(head + cnt) % MAXLIVE].start = a.start;
		q[(head + cnt) % MAXLIVE].end = a.end;
		cnt++;
		top = a.end;
		used_bad += pto_heap_ring_used(top, tail, floor) > SIZE;
	}
	diag("heap model: %d allocations, %d skipped to the next lap", allocs,
	     wraps);
	ok_eq(split, 0, "heap model: no block is split across the end");
	ok_eq(overlap, 0, "heap model: no block overlaps a live one");
	ok_eq(misalign, 0, "heap model: 64-byte sizes give 64-byte offsets");
	ok_eq(refused_empty, 0, "heap model: an empty ring never refuses");
	ok_eq(used_bad, 0, "heap model: used never exceeds the size");
	ok(wraps > 100, "heap model: the test wrapped the ring (%d)", wraps);
}

/* ---- ready queue --------------------------------------------------------- */

static void test_ready_queue(void)
{
	uint64_t ids[8], next_in = 0, next_out = 0;
	struct pto_ready_queue q = { .ids = ids, .mask = 7 };
	struct tl_rng rng;
	int i, bad = 0;

	tl_rng_seed(&rng, 7);
	for (i = 0; i < 100000; i++) {
		if (pto_rq_len(&q) < 8 && (pto_rq_empty(&q) ||
					  tl_range(&rng, 0, 1)))
			pto_rq_push(&q, next_in++);
		else
			bad += pto_rq_pop(&q) != next_out++;
		bad += pto_rq_len(&q) != next_in - next_out;
	}
	ok_eq(bad, 0, "ready queue: FIFO order and length across wrap-around");
}

/* ---- the sharded scheduler's queue and core bitmaps ---------------------- */

/* pop_if's judge: even values only, and what it was shown */
struct mpmc_judge {
	uint64_t shown;
	bool all;		/* accept odd ones too */
};

static bool mpmc_even(void *ctx, uint64_t v)
{
	struct mpmc_judge *j = ctx;

	j->shown = v;
	return j->all || !(v & 1);
}

static void test_mpmc_alone(void)
{
	uint64_t next_in = 0, next_out = 0, v = 0;
	struct mpmc_judge judge = { 0 };
	struct pto_mpmc q;
	struct tl_rng rng;
	int i, bad = 0, refused = 0;

	if (pto_mpmc_init(&q, 8))
		bail_out("pto_mpmc_init");
	tl_rng_seed(&rng, 11);
	bad += pto_mpmc_pop(&q, &v);	/* empty */
	for (i = 0; i < 100000; i++) {
		uint32_t op = (uint32_t)tl_range(&rng, 0, 3);
		bool some = next_in != next_out, take = some;

		if (op < 2) {
			bool room = next_in - next_out < 8;

			bad += pto_mpmc_push(&q, next_in) != room;
			next_in += room;
			continue;
		}
		if (op == 2) {
			bad += pto_mpmc_pop(&q, &v) != some;
		} else {
			/* pop_if shows the head and takes it only if even */
			judge.shown = UINT64_MAX;
			take = some && !(next_out & 1);
			bad += pto_mpmc_pop_if(&q, &v, mpmc_even, &judge) !=
			       take;
			bad += judge.shown != (some ? next_out : UINT64_MAX);
			refused += some && !take;
		}
		bad += take && v != next_out;
		next_out += take;
	}
	pto_mpmc_fini(&q);
	ok_eq(bad, 0, "mpmc: FIFO, full at capacity, empty, across laps; "
	      "pop_if judges the head and takes it only if accepted (%d "
	      "refused, left in place)", refused);
}

#define MPMC_PER_PUSHER 200000
#define MPMC_THREADS 2	/* pushers, and as many poppers */

struct mpmc_arg {
	struct pto_mpmc *q;
	uint32_t id;
	uint8_t *seen;		/* poppers: values taken (shared, atomic) */
	uint64_t *left;		/* values still to pop, all poppers */
	uint64_t dup;
};

static void *mpmc_pusher(void *p)
{
	struct mpmc_arg *a = p;
	uint64_t i;

	for (i = 0; i < MPMC_PER_PUSHER; i++)
		while (!pto_mpmc_push(a->q, a->id * MPMC_PER_PUSHER + i))
			cpu_relax();
	return NULL;
}

static void *mpmc_popper(void *p)
{
	struct mpmc_arg *a = p;
	uint64_t v;

	struct mpmc_judge judge = { .all = true };

	while (__atomic_load_n(a->left, __ATOMIC_RELAXED)) {
		/* the second popper claims through pop_if */
		if (!(a->id ? pto_mpmc_pop_if(a->q, &v, mpmc_even, &judge) :
			      pto_mpmc_pop(a->q, &v))) {
			cpu_relax();
			continue;
		}
		a->dup += v >= MPMC_THREADS * MPMC_PER_PUSHER ||
			  __atomic_exchange_n(&a->seen[v], 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(a->left, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Every value pushed by several threads is popped once, by one thread. */
static void test_mpmc_threads(void)
{
	struct mpmc_arg a[2 * MPMC_THREADS];
	pthread_t th[2 * MPMC_THREADS];
	uint64_t left = MPMC_THREADS * MPMC_PER_PUSHER, dup = 0, missing = 0;
	uint8_t *seen = calloc(left, 1);
	struct pto_mpmc q;
	uint32_t i;

	if (!seen || pto_mpmc_init(&q, 64))
		bail_out("out of memory");
	for (i = 0; i < 2 * MPMC_THREADS; i++) {
		a[i] = (struct mpmc_arg){ .q = &q, .id = i % MPMC_THREADS,
					  .seen = seen, .left = &left };
		if (pthread_create(&th[i], NULL, i < MPMC_THREADS ?
				   mpmc_pusher : mpmc_popper, &a[i]))
			bail_out("pthread_create");
	}
	for (i = 0; i < 2 * MPMC_THREADS; i++) {
		pthread_join(th[i], NULL);
		dup += a[i].dup;
	}
	for (i = 0; i < MPMC_THREADS * MPMC_PER_PUSHER; i++)
		missing += !seen[i];
	ok_eq(dup + missing, 0, "mpmc: %u pushers and %u poppers (pop and "
	      "pop_if) on a 64-cell queue: each of %u values popped once",
	      MPMC_THREADS,
	      MPMC_THREADS, MPMC_THREADS * MPMC_PER_PUSHER);
	pto_mpmc_fini(&q);
	free(seen);
}

/*
 * The core bitmaps against a model: after random dispatches and
 * completions, a pick is a core with the fewest queued tasks and room,
 * the first such at or after the start (wrapping), or none when all full.
 */
static void test_coreload(uint64_t seed)
{
	static const uint32_t sizes[] = { 1, 3, 64, 65, 72, 200, 256 };
	uint32_t depth[256], z, k, i, n, start, want, got, best, max;
	struct pto_coreload l;
	struct tl_rng rng;
	int bad = 0;

	tl_rng_seed(&rng, seed);
	for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		n = sizes[z];
		pto_coreload_init(&l, n);
		memset(depth, 0, sizeof(depth));
		for (k = 0; k < 20000; k++) {
			i = (uint32_t)tl_range(&rng, 0, n - 1);
			if (tl_range(&rng, 0, 1) && depth[i] <
			    PTO_CORE_QUEUE_SLOTS) {
				pto_coreload_move(&l, i, depth[i], depth[i] + 1);
				depth[i]++;
			} else if (depth[i]) {
				pto_coreload_move(&l, i, depth[i], depth[i] - 1);
				depth[i]--;
			}
			start = (uint32_t)tl_range(&rng, 0, n - 1);
			max = (uint32_t)tl_range(&rng, 1, PTO_CORE_QUEUE_SLOTS);
			best = PTO_CORE_QUEUE_SLOTS;
			for (i = 0; i < n; i++)
				best = depth[i] < best ? depth[i] : best;
			want = PTO_CORELOAD_NONE;
			for (i = 0; i < n && best < max; i++)
				if (depth[(start + i) % n] == best) {
					want = (start + i) % n;
					break;
				}
			got = pto_coreload_pick(&l, n, start, max);
			bad += got != want;
		}
	}
	ok_eq(bad, 0, "coreload: picks the least loaded core below a depth, "
	      "rotating, for 1 to 256 cores");
}

/* Note n tasks of kernel k, each ns long. */
static void pace_runs(struct pto_pace *p, uint32_t k, uint32_t n, uint64_t ns)
{
	while (n--)
		pto_pace_note(p, k, ns);
}

/*
 * A kernel's tasks queue deep only after a streak of very brief ones; a
 * long one ends the streak, a middling one neither counts nor ends it,
 * and kernels are told apart.
 */
static void test_pace(void)
{
	const uint32_t deep = PTO_CORE_QUEUE_SLOTS, shallow = PTO_PACE_SHALLOW;
	const uint32_t streak = PTO_PACE_TINY_STREAK;
	struct pto_pace *p = calloc(1, sizeof(*p));
	uint32_t k = 700, other = 701;

	if (!p)
		bail_out("calloc");
	ok(deep > shallow, "pace: the device's queue is deeper than a shallow "
	   "one (%u > %u)", deep, shallow);
	ok_eq(pto_pace_depth(p, k), shallow, "pace: a kernel not seen yet "
	      "queues shallow");
	pace_runs(p, k, streak - 1, 50);
	ok_eq(pto_pace_depth(p, k), shallow, "pace: %u brief tasks are not "
	      "yet a streak", streak - 1);
	pto_pace_note(p, k, PTO_PACE_TINY_NS);	/* not tiny, not long */
	pace_runs(p, k, 1, 50);
	ok_eq(pto_pace_depth(p, k), deep, "pace: %u brief tasks, a middling "
	      "one between them, queue deep", streak);
	ok_eq(pto_pace_depth(p, other), shallow, "pace: another kernel's "
	      "streak is its own");
	ok(pto_pace_short(p, k) && !pto_pace_short(p, other),
	   "pace: the last task of one kernel ran briefly, of the other none");
	pto_pace_note(p, k, PTO_PACE_LONG_NS);
	ok(pto_pace_depth(p, k) == PTO_PACE_LONG_DEPTH && !pto_pace_short(p, k),
	   "pace: one long task ends the streak; the kernel queues %u deep "
	   "while its last task was long", PTO_PACE_LONG_DEPTH);
	ok(PTO_PACE_LONG_DEPTH >= 2 && PTO_PACE_LONG_DEPTH < shallow,
	   "pace: a long task has the next queued behind it, fewer than a "
	   "shallow queue");
	pace_runs(p, k, 1, PTO_PACE_TINY_NS);
	ok_eq(pto_pace_depth(p, k), shallow, "pace: after a middling task, "
	      "shallow again");
	pace_runs(p, k, streak - 1, 50);
	ok_eq(pto_pace_depth(p, k), shallow, "pace: the streak starts afresh "
	      "after a long task");
	pace_runs(p, k, 1, 50);
	ok_eq(pto_pace_depth(p, k), deep, "pace: ... and is whole again after "
	      "%u brief ones", streak);
	/* a whole streak, then a run neither brief nor long, then brief */
	pace_runs(p, k, 3, 50);
	pto_pace_note(p, k, PTO_PACE_SHORT_NS);
	ok(!pto_pace_short(p, k) && pto_pace_depth(p, k) == deep,
	   "pace: a %u ns task after the streak: not short, still deep",
	   PTO_PACE_SHORT_NS);
	pace_runs(p, k, 1, 50);
	ok(pto_pace_short(p, k) && pto_pace_depth(p, k) == deep,
	   "pace: the next brief task makes the kernel short again");
	free(p);
}

/* ---- TensorMap ----------------------------------------------------------- */

#define MAXTASK 4096

/* Task t of the single-ring tests: ring 0, sequence number t. */
#define H0(t) PTO_TASK_HANDLE(0, (t))

static uint8_t seen[MAXTASK];

/* Tests identify tasks by their submission order. */
static void visit(void *ctx, uint64_t task, uint64_t order, uint64_t owner,
		  bool proven)
{
	if (order < MAXTASK)
		seen[order] = 1;
	else
		(*(int *)ctx)++;
}

/* A lookup by range, as the orchestrator makes one: key, then walk. */
static uint64_t tm_lookup(struct pto_tensormap *tm, uint64_t base,
			  uint64_t begin, uint64_t end, bool as_writer,
			  pto_tm_visit_fn fn, void *ctx)
{
	struct pto_tm_key k;

	pto_tm_key(tm, &k, base, begin, end);
	return pto_tm_lookup_key(tm, &k, as_writer, fn, ctx);
}

/* Tasks found for [b, e) of base, as a bit string for easy comparison. */
static uint64_t lookup_set(struct pto_tensormap *tm, uint64_t base,
			   uint64_t b, uint64_t e, bool w)
{
	uint64_t set = 0;
	int bogus = 0, i;

	memset(seen, 0, 64);
	tm_lookup(tm, base, b, e, w, visit, &bogus);
	for (i = 0; i < 64; i++)
		if (seen[i])
			set |= 1ull << i;
	return bogus ? ~0ull : set;
}

/* An access by task t of ring 0 to memory without a heap-ring owner. */
static int tm_insert(struct pto_tensormap *tm, uint64_t base, uint64_t b,
		     uint64_t e, bool writer, uint64_t t)
{
	return pto_tm_insert(tm, base, b, e, writer, H0(t), t,
			     PTO_TM_NO_OWNER);
}

static int tm_init1(struct pto_tensormap *tm, uint32_t pool, uint32_t win)
{
	return pto_tm_init(tm, 1, &pool, &win);
}

/* The process's resident memory, in bytes; 0: unknown. */
static uint64_t resident_bytes(void)
{
	unsigned long long size, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * A TensorMap sized far beyond its use costs address space, not memory:
 * 2^26 entries (8 GiB of pool, bucket tables and all) take little until
 * used, and the largest pool allowed, 2^30, can be made and works.
 */
static void test_tm_lazy(void)
{
	uint32_t sizes[] = { 1u << 26, PTO_TENSORMAP_POOL_MAX }, i;
	struct pto_tensormap tm;
	uint64_t before, grew;

	for (i = 0; i < 2; i++) {
		before = resident_bytes();
		if (!ok(tm_init1(&tm, sizes[i], 64) == 0,
			"TensorMap of %u entries: made", sizes[i]))
			continue;
		grew = resident_bytes() - before;
		ok(before && grew < (32u << 20),
		   "TensorMap of %u entries: %llu KiB resident once made",
		   sizes[i], (unsigned long long)(grew >> 10));
		ok(!tm_insert(&tm, 0x1000, 0, 64, true, 0) &&
		   pto_tm_free_entries(&tm, 0) == sizes[i] - 1,
		   "TensorMap of %u entries: takes an entry", sizes[i]);
		pto_tm_destroy(&tm);
	}
}

/*
 * The tiles of one tensor take neighbouring buckets: 64 1 KiB tiles in a
 * row never share a chain, and their ring's heads (16 bytes a bucket) lie
 * in 16 cache lines, 17 when the run does not start on a line, 18 when
 * it also wraps around the table.  A hash per tile put each in a line of
 * its own.
 */
static void test_tm_runs(void)
{
	const uint64_t base = 0x7f5a12340000ull, tile = 1024;
	uint64_t lines[64], bucket[64];
	uint32_t pool = 1u << 15, win = 64, run, i, j, nlines, shared;
	struct pto_tensormap tm;
	struct pto_tm_key k;

	if (!ok(tm_init1(&tm, pool, win) == 0, "tensormap runs: init"))
		return;
	for (run = 0; run < 8; run++) {
		nlines = 0;
		shared = 0;
		for (i = 0; i < 64; i++) {
			uint64_t b = (run * 64 + i) * tile;

			pto_tm_key(&tm, &k, base, b, b + tile);
			bucket[i] = (uint64_t)(k.heads - tm.blk_heads);
			for (j = 0; j < i; j++)
				shared += bucket[j] == bucket[i];
			lines[i] = (uintptr_t)k.heads / 64;
			for (j = 0; j < i && lines[j] != lines[i]; j++)
				;
			nlines += j == i;
		}
		ok(!shared && nlines <= 18,
		   "tensormap runs: 64 tiles from tile %u: %u shared buckets, "
		   "heads in %u cache lines", run * 64, shared, nlines);
	}
	pto_tm_destroy(&tm);
}

static void test_tm_fixed(void)
{
	struct pto_tensormap tm;
	uint64_t A = 0x10000, B = 0x20000;
	int i, ret = 0;

	if (!ok(tm_init1(&tm, 16, 8) == 0, "tensormap: init"))
		return;
	tm_insert(&tm, A, 0, 64, true, 1);		/* task 1 writes */
	tm_insert(&tm, A, 64, 128, true, 2);	/* task 2 writes */
	tm_insert(&tm, A, 100, 104, false, 3);	/* task 3 reads */
	tm_insert(&tm, B, 0, 4096, true, 4);	/* task 4, large */
	ok_eq(lookup_set(&tm, A, 63, 65, false), 1 << 1 | 1 << 2,
	      "tensormap: a read across a boundary finds both writers");
	ok_eq(lookup_set(&tm, A, 64, 65, false), 1 << 2,
	      "tensormap: adjacent ranges do not overlap");
	ok_eq(lookup_set(&tm, A, 128, 256, true), 0,
	      "tensormap: nothing past the last byte");
	ok_eq(lookup_set(&tm, A, 96, 100, true), 1 << 2,
	      "tensormap: a write next to a reader finds only the writer");
	ok_eq(lookup_set(&tm, A, 103, 200, true), 1 << 2 | 1 << 3,
	      "tensormap: a writer finds readers too");
	ok_eq(lookup_set(&tm, A, 103, 200, false), 1 << 2,
	      "tensormap: a reader does not find readers");
	ok_eq(lookup_set(&tm, B, 4095, 4096, false), 1 << 4,
	      "tensormap: bases are separate, large ranges found by any byte");
	ok_eq(lookup_set(&tm, A + 64, 0, 1, true), 0,
	      "tensormap: another base at the same address does not alias");
	ok_eq(tm.ring[0].live, 4, "tensormap: four live entries");

	/* task 5 covers task 1's range: older entries are reached through it */
	tm_insert(&tm, A, 0, 64, true, 5);
	ok(lookup_set(&tm, A, 0, 64, false) & 1 << 5,
	   "tensormap: the newest covering writer is found");

	pto_tm_retire_task(&tm, H0(1));
	pto_tm_retire_task(&tm, H0(2));
	ok_eq(tm.ring[0].live, 3,
	      "tensormap: retiring tasks 1 and 2 frees their entries");
	ok_eq(lookup_set(&tm, A, 0, 128, true), 1 << 3 | 1 << 5,
	      "tensormap: retired entries are not found");

	/* exhaustion: 16 entries in all */
	for (i = 0; i < 13 && !ret; i++)
		ret = tm_insert(&tm, B, 64 * i, 64 * i + 8, false, 6);
	ok_eq(ret, 0, "tensormap: the pool fills to its size");
	ok_eq(pto_tm_free_entries(&tm, 0), 0,
	      "tensormap: no free entries left");
	ok_eq(tm_insert(&tm, B, 0, 8, false, 7), -ENOSPC,
	      "tensormap: an exhausted pool is -ENOSPC");
	pto_tm_retire_task(&tm, H0(3));
	pto_tm_retire_task(&tm, H0(4));
	ok_eq(pto_tm_free_entries(&tm, 0), 2,
	      "tensormap: retiring refills it");
	ok(tm_insert(&tm, B, 0, 8, true, 7) == 0 &&
	   tm_insert(&tm, B, 8, 16, true, 7) == 0 &&
	   tm_insert(&tm, B, 16, 24, true, 7) == -ENOSPC,
	   "tensormap: freed entries are reused, no more");
	ok_eq(lookup_set(&tm, B, 8, 70, true), 1 << 6 | 1 << 7,
	      "tensormap: reused entries are found, retired ones not");
	pto_tm_destroy(&tm);
}

/*
 * Reuse: an entry freed by a retired task and taken by a newer entry of
 * the same chain while an entry that was linked to it is still live.  A
 * stale link would make the walk go round in a circle or find the retired
 * task; SIGALRM ends the test if it loops.
 */
static void test_tm_reuse(void)
{
	struct pto_tensormap tm;
	uint64_t A = 0x10000, B = 0x20000;

	if (tm_init1(&tm, 4, 8))
		bail_out("pto_tm_init");
	alarm(20);
	tm_insert(&tm, A, 0, 64, false, 1);	/* entry e0 */
	tm_insert(&tm, A, 0, 64, false, 2);	/* e1, chained to e0 */
	tm_insert(&tm, B, 0, 64, false, 3);	/* fills the pool of 4 */
	tm_insert(&tm, B, 64, 128, false, 3);
	pto_tm_retire_task(&tm, H0(1));
	ok_eq(tm_insert(&tm, A, 0, 64, false, 4), 0,	/* e0 again */
	      "tensormap reuse: the freed slot takes a new entry");
	ok_eq(lookup_set(&tm, A, 0, 64, true), 1 << 2 | 1 << 4,
	      "tensormap reuse: the walk ends, finding the live entries only");
	alarm(0);
	pto_tm_destroy(&tm);
}

/*
 * A double-buffered stencil of two cells: task (t, i) reads both cells of
 * buffer (t - 1) % 2 and writes its cell of buffer t % 2.  Nothing
 * retires, as when the orchestrator runs far ahead: each read must find
 * the two newest writers of its cells and no older one (they overwrote
 * everything the older ones wrote), each write the previous writer of its
 * cell and that cell's readers since.
 */
static void test_tm_stencil(void)
{
	struct pto_tensormap tm;
	uint64_t A = 0x10000, t, i, reads = 0, writes = 0;

	if (tm_init1(&tm, 1024, 512))
		bail_out("pto_tm_init");
	for (t = 0; t < 32; t++) {	/* task ids fit lookup_set()'s mask */
		uint64_t in = (t + 1) % 2 * 128, out = t % 2 * 128;

		for (i = 0; i < 2; i++) {
			uint64_t task = 2 * t + i, want;

			want = t ? 3ull << (2 * t - 2) : 0;
			reads += lookup_set(&tm, A, in, in + 128, false) != want;
			want = t > 1 ? 1ull << (task - 4) : 0;
			if (t)
				want |= 3ull << (2 * t - 2);
			writes += lookup_set(&tm, A, out + 64 * i,
					     out + 64 * i + 64, true) != want;
			tm_insert(&tm, A, in, in + 128, false, task);
			tm_insert(&tm, A, out + 64 * i, out + 64 * i + 64,
				  true, task);
		}
	}
	ok_eq(reads, 0, "tensormap stencil: a read of two cells finds their "
	      "newest writers only");
	ok_eq(writes, 0, "tensormap stencil: a write finds the cell's last "
	      "writer and its readers since");
	pto_tm_destroy(&tm);
}

static uint64_t seen_owner;

static void visit_owner(void *ctx, uint64_t task, uint64_t order,
			uint64_t owner, bool proven)
{
	(*(uint64_t *)ctx)++;
	seen_owner = owner;
}

/*
 * A heap buffer's owner is reported through entries that stop the walk
 * before the owner's own entry: task 12 rewrote task 10's OUTPUT and
 * covers it, so a reader finds 12 only, but learns that 10 owns the memory.
 */
static void test_tm_owner(void)
{
	struct pto_tensormap tm;
	uint64_t H = 0x40000, found = 0;

	if (tm_init1(&tm, 16, 16))
		bail_out("pto_tm_init");
	pto_tm_insert(&tm, H, 0, 256, true, H0(10), 10, H0(10));  /* OUTPUT */
	pto_tm_insert(&tm, H, 0, 256, true, H0(12), 12, H0(10));  /* INOUT */
	seen_owner = 0;
	tm_lookup(&tm, H, 64, 128, false, visit_owner, &found);
	ok(found == 1 && seen_owner == H0(10),
	   "tensormap owner: the covering writer reports the buffer's owner "
	   "(%llu entries, owner %llu)", (unsigned long long)found,
	   (unsigned long long)seen_owner);
	tm_insert(&tm, H + 4096, 0, 8, true, 13);
	seen_owner = 0;
	tm_lookup(&tm, H + 4096, 0, 8, false, visit_owner, &found);
	ok_eq(seen_owner, PTO_TM_NO_OWNER,
	      "tensormap owner: memory without an owner reports none");
	pto_tm_destroy(&tm);
}

struct mentry {
	uint64_t base, begin, end, task;
	uint32_t ring;
	bool writer;
};

/* A random model run's state: tasks, their rings and what has retired. */
struct tm_model {
	struct pto_tensormap tm;
	struct mentry m[4096];
	int n;
	uint32_t nrings, win;
	uint32_t ring_of[MAXTASK];	/* ring of task t */
	uint64_t seq_of[MAXTASK];	/* its sequence number there */
	uint64_t next_seq[PTO_MAX_RINGS];
	uint64_t oldest[PTO_MAX_RINGS];	/* per ring: first unretired task */
	uint64_t first[PTO_MAX_RINGS][MAXTASK];	/* per ring: task of seq */
	bool retired[MAXTASK];
	/* reach[t]: the tasks t is ordered after, through its edges */
	uint64_t reach[MAXTASK][MAXTASK / 64];
	int missed, extra, bogus, nospc_bad, lookups, implied;
};

static bool reaches(const struct tm_model *md, uint64_t t, uint64_t x)
{
	return md->reach[t][x / 64] >> (x % 64) & 1;
}

/* Task t depends on every task its lookup found, and what they do. */
static void model_edges(struct tm_model *md, uint64_t t)
{
	uint32_t j, k;

	for (j = 0; j < MAXTASK; j++) {
		if (!seen[j] || j == t)
			continue;
		md->reach[t][j / 64] |= 1ull << (j % 64);
		for (k = 0; k < MAXTASK / 64; k++)
			md->reach[t][k] |= md->reach[j][k];
	}
}

static bool model_live(const struct tm_model *md, const struct mentry *e)
{
	return !md->retired[e->task];
}

/* Retire ring r's oldest task, as the scheduler would. */
static void model_retire(struct tm_model *md, uint32_t r)
{
	uint64_t t = md->first[r][md->oldest[r]++];

	md->retired[t] = true;
	pto_tm_retire_task(&md->tm, PTO_TASK_HANDLE(r, md->seq_of[t]));
}

/*
 * Look e up as its task would, and compare with the model: every live
 * overlapping access it conflicts with must be ordered before it, found
 * or implied (reached through the edges of the tasks found, as a covering
 * writer or writers that together cover the range imply what they
 * overwrote), and nothing that does not overlap, or has retired, found.
 */
static void model_lookup(struct tm_model *md, const struct mentry *e)
{
	int j;

	memset(seen, 0, sizeof(seen));
	tm_lookup(&md->tm, e->base, e->begin, e->end, e->writer, visit,
		  &md->bogus);
	md->lookups++;
	model_edges(md, e->task);
	for (j = 0; j < md->n; j++) {
		const struct mentry *x = &md->m[j];
		bool hit = model_live(md, x) && x->base == e->base &&
			   x->begin < e->end && e->begin < x->end &&
			   (x->writer || e->writer) && x->task != e->task;

		if (!hit || seen[x->task])
			continue;
		if (reaches(md, e->task, x->task))
			md->implied++;
		else
			md->missed++;
	}
	for (j = 0; j < MAXTASK; j++) {
		int i2, any = 0;

		if (!seen[j])
			continue;
		for (i2 = 0; i2 < md->n && !any; i2++) {
			const struct mentry *x = &md->m[i2];

			any = x->task == (uint64_t)j && model_live(md, x) &&
			      x->base == e->base && x->begin < e->end &&
			      e->begin < x->end && (x->writer || e->writer);
		}
		md->extra += !any;
	}
}

static void model_entry(struct tm_model *md, struct tl_rng *rng,
			struct mentry *e)
{
	static const uint64_t bases[3] = { 0x1000, 0x7000, 0x20000 };
	enum { SPAN = 2048 };
	uint64_t len = tl_range(rng, 0, 3) ? tl_range(rng, 1, 96) :
		       tl_range(rng, 1, SPAN);

	e->base = bases[tl_range(rng, 0, 2)];
	e->writer = tl_range(rng, 0, 1);
	if (e->base == bases[1]) {
		/* cells, as a stencil: write one, read a run of them */
		uint64_t cell = tl_range(rng, 0, 15);

		e->begin = cell * 64;
		e->end = e->begin + 64 * (e->writer ? 1 : tl_range(rng, 1, 3));
		return;
	}
	e->begin = tl_range(rng, 0, SPAN - 1);
	e->end = e->begin + len;
}

/*
 * Random accesses by tasks in submission order, spread over nrings task
 * rings, each ring retired in its own order (at random moments, and
 * whenever it holds win tasks or its pool runs short), against a
 * brute-force list.
 */
static void test_tm_random(uint64_t seed, uint32_t nrings)
{
	enum { WIN = 16, POOL = 48, NTASKS = 3000 };
	static struct tm_model md;
	uint32_t pools[PTO_MAX_RINGS], wins[PTO_MAX_RINGS], r;
	struct tl_rng rng;
	uint64_t task;
	int i, k;

	memset(&md, 0, sizeof(md));
	md.nrings = nrings;
	for (r = 0; r < nrings; r++) {
		pools[r] = POOL;
		wins[r] = WIN;
	}
	if (pto_tm_init(&md.tm, nrings, pools, wins))
		bail_out("pto_tm_init");
	tl_rng_seed(&rng, seed);
	for (task = 0; task < NTASKS; task++) {
		int nacc = tl_range(&rng, 1, 3);

		r = tl_range(&rng, 0, nrings - 1);
		md.ring_of[task] = r;
		md.seq_of[task] = md.next_seq[r];
		md.first[r][md.next_seq[r]++] = task;
		/* retire: at most WIN alive per ring, room for the entries */
		while (md.seq_of[task] - md.oldest[r] >= WIN ||
		       pto_tm_free_entries(&md.tm, r) < (uint32_t)nacc)
			model_retire(&md, r);
		for (k = 0; k < (int)nrings; k++)
			if (md.oldest[k] + 1 < md.next_seq[k] &&
			    (uint32_t)k != r && !tl_range(&rng, 0, 3))
				model_retire(&md, k);

		for (k = 0; k < nacc; k++) {
			struct mentry e = { .task = task, .ring = r };

			model_entry(&md, &rng, &e);
			model_lookup(&md, &e);	/* first, as the orchestrator */
			if (pto_tm_insert(&md.tm, e.base, e.begin, e.end,
					  e.writer,
					  PTO_TASK_HANDLE(r, md.seq_of[task]),
					  task, PTO_TM_NO_OWNER)) {
				md.nospc_bad++;
				continue;
			}
			if (md.n < (int)(sizeof(md.m) / sizeof(md.m[0])))
				md.m[md.n++] = e;
		}
		/* drop retired entries from the model */
		for (i = 0, k = 0; i < md.n; i++)
			if (model_live(&md, &md.m[i]))
				md.m[k++] = md.m[i];
		md.n = k;
	}
	diag("tensormap model, %u rings: %d lookups, %d conflicts implied",
	     nrings, md.lookups, md.implied);
	ok_eq(md.missed, 0, "tensormap model, %u rings: every conflicting "
	      "access is found or implied", nrings);
	ok_eq(md.extra + md.bogus, 0, "tensormap model, %u rings: nothing that "
	      "does not overlap or has retired is found", nrings);
	ok_eq(md.nospc_bad, 0, "tensormap model, %u rings: inserts succeed "
	      "while free entries remain", nrings);
	for (r = 0; r < nrings; r++)
		while (md.oldest[r] < md.next_seq[r])
			model_retire(&md, r);
	for (r = 0, k = 0; r < nrings; r++)
		k += md.tm.ring[r].live;
	ok_eq(k, 0, "tensormap model, %u rings: retiring every task empties "
	      "it", nrings);
	pto_tm_destroy(&md.tm);
}

/* ---- the per-task clock ------------------------------------------------- */

/*
 * pto_task_clock_ns() scales the TSC where it can (lib/clock.c).  Over
 * 150 ms, past its calibration and its first re-anchoring, every reading
 * must lie between the CLOCK_MONOTONIC readings taken just before and
 * after it, give or take CLOCK_SLACK_NS, and a thread's readings must not
 * step back by more than that.
 */
#define CLOCK_SLACK_NS 200000ull

static void test_task_clock(void)
{
	uint64_t start = pto_now_ns(), prev = 0, n = 0;
	uint64_t outside = 0, back = 0;

	for (;;) {
		uint64_t before = pto_now_ns();
		uint64_t t = pto_task_clock_ns();
		uint64_t after = pto_now_ns();

		outside += t + CLOCK_SLACK_NS < before ||
			   t > after + CLOCK_SLACK_NS;
		back += t + CLOCK_SLACK_NS < prev;
		prev = t;
		n++;
		if (after - start > 150000000ull)
			break;
	}
	diag("task clock: %llu readings", (unsigned long long)n);
	ok_eq(outside, 0, "task clock: within %llu us of CLOCK_MONOTONIC",
	      CLOCK_SLACK_NS / 1000);
	ok_eq(back, 0, "task clock: a thread's readings do not step back");
}

/* A stall report speaks words: states and core types, not numbers. */
static void test_stall_words(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	struct tl_capture cap;
	char *text;

	tl_config(&cfg, 16, 0);
	cfg.cores[PTO_WORKER_CUBE] = 1;
	cfg.cores[PTO_WORKER_VECTOR] = 2;
	rt = tl_runtime(&cfg);
	tl_capture_begin(&cap);
	pto_stall_report(rt, 0);
	text = tl_capture_end(&cap);
	ok(strstr(text, "ring 0: submitted 0, all retired") &&
	   strstr(text, "core 0 (cube): 0 dispatched, 0 taken, last task none "
		  "yet, ") &&
	   strstr(text, "core 2 (vector): 0 dispatched") &&
	   !strstr(text, "65535") && !strstr(text, "task state"),
	   "stall report: ring states and core types in words");
	diag("%s", text);
	free(text);
	pto_runtime_destroy(rt);
}

/*
 * The CPUs libpto counts (default core counts, who schedules, whether a
 * core thread has a CPU to spin on) are those the process may run on: a
 * program under taskset or in a cpuset has fewer than the host has online.
 */
static void test_host_cpus(void)
{
	cpu_set_t saved, one;
	int first;

	if (sched_getaffinity(0, sizeof(saved), &saved))
		bail_out("sched_getaffinity: %s", strerror(errno));
	ok_eq(pto_host_cpus(), (uint32_t)CPU_COUNT(&saved),
	      "pto_host_cpus() is the affinity mask's count (%d)",
	      CPU_COUNT(&saved));
	for (first = 0; !CPU_ISSET(first, &saved); first++)
		;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		bail_out("sched_setaffinity: %s", strerror(errno));
	ok_eq(pto_host_cpus(), 1u, "kept to CPU %d: pto_host_cpus() is 1 "
	      "(%ld online)", first, sysconf(_SC_NPROCESSORS_ONLN));
	if (sched_setaffinity(0, sizeof(saved), &saved))
		bail_out("sched_setaffinity: %s", strerror(errno));
}

int main(void)
{
	uint64_t seed = tl_env_seed("PTO_TEST_SEED");

	diag("seed %llu (set PTO_TEST_SEED to reproduce)",
	     (unsigned long long)seed);
	test_arith();
	test_heap_fixed();
	test_heap_random(seed);
	test_ready_queue();
	test_mpmc_alone();
	test_mpmc_threads();
	test_coreload(seed);
	test_pace();
	test_tm_fixed();
	test_tm_runs();
	test_tm_lazy();
	test_tm_stencil();
	test_tm_reuse();
	test_tm_owner();
	test_tm_random(seed, 1);
	test_tm_random(seed + 1, PTO_MAX_RINGS);
	test_task_clock();
	test_stall_words();
	test_host_cpus();
	return tap_done();
}
