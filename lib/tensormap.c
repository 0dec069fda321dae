// SPDX-License-Identifier: MIT
/*
 * TensorMap: dependency discovery by byte-range overlap.  See tensormap.h
 * for the index structure and why it looks the way it does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rings.h"
#include "tensormap.h"

enum { LINK_BLK, LINK_LVL };

#define BLK_RUN_SHIFT	6
#define BLK_RUN		(1u << BLK_RUN_SHIFT)

/*
 * A block's bucket: runs of BLK_RUN blocks of one tensor and level take
 * BLK_RUN neighbouring buckets, where the run starts is a multiplicative
 * hash (one multiply per key).  The tiles a program walks through share
 * cache lines of bucket heads (four to a line) and pages, where a hash of
 * each block spread them over the whole table: bgemm's lookups missed the
 * cache on most bucket heads (cachegrind: last-level read misses of the
 * whole run 33.6k -> 9.9k for 100k tasks).  Hashing the run, not adding
 * the block number to one hash of the tensor, keeps power-of-two strides
 * of tiles (columns of a matrix) from landing in one bucket.
 */
static uint32_t blk_hash(const struct pto_tensormap *tm, uint64_t base,
			 unsigned int level, uint64_t blk)
{
	uint64_t grp = blk >> BLK_RUN_SHIFT;
	uint64_t h = (base ^ ((grp << 6 | level) * 0x9e3779b97f4a7c15ull)) *
		     0xc2b2ae3d27d4eb4full;

	return ((uint32_t)(h >> 32) + (uint32_t)(blk & (BLK_RUN - 1))) &
	       tm->bucket_mask;
}

static uint32_t lvl_hash(const struct pto_tensormap *tm, uint64_t base,
			 unsigned int level)
{
	uint64_t h = (base + level + 1) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & tm->bucket_mask;
}

/* Ring 0's heads of a block's bucket. */
static uint64_t *blk_heads(const struct pto_tensormap *tm, uint64_t base,
			   unsigned int level, uint64_t blk)
{
	return &tm->blk_heads[(uint64_t)blk_hash(tm, base, level, blk) * 2];
}

static uint64_t *lvl_heads(const struct pto_tensormap *tm, uint64_t base,
			   unsigned int level)
{
	return &tm->lvl_heads[(uint64_t)lvl_hash(tm, base, level) * 2];
}

/* Smallest level whose aligned block holds all of [begin, end). */
static unsigned int range_level(uint64_t begin, uint64_t end)
{
	uint64_t diff = begin ^ (end - 1);
	unsigned int level = diff ? 64 - __builtin_clzll(diff) : 0;

	return level < PTO_TM_MIN_LEVEL ? PTO_TM_MIN_LEVEL : level;
}

static uint64_t e_order(const struct pto_tm_entry *e)
{
	return e->order & PTO_TM_ORDER_MASK;
}

static unsigned int e_level(const struct pto_tm_entry *e)
{
	return (unsigned int)(e->order >> PTO_TM_LEVEL_SHIFT) & 63;
}

static bool e_writer(const struct pto_tm_entry *e)
{
	return e->order & PTO_TM_WRITER;
}

static bool e_shaped(const struct pto_tm_entry *e)
{
	return e->order & PTO_TM_SHAPED;
}

/*
 * Zeroed memory whose pages are made as they are first touched, taking no
 * commit charge before (MAP_NORESERVE): a pool sized for the worst case
 * (up to 2^30 entries, 64 GiB) costs address space only until used, as
 * the dependency pool and the heap rings do.  With populate, every page is
 * made now (see populated_buckets()).
 */
static void *map_zeroed(uint64_t size, bool populate)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		       (populate ? MAP_POPULATE : 0), -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap(void *p, uint64_t size)
{
	if (p)
		munmap(p, size);
}

static uint64_t pool_bytes(const struct pto_tm_ring *r)
{
	return (r->ring_mask + 1) * sizeof(*r->pool);
}

static uint64_t shapes_bytes(const struct pto_tm_ring *r)
{
	return (r->ring_mask + 1) * sizeof(*r->shapes);
}

static uint64_t buckets_bytes(const struct pto_tensormap *tm)
{
	return ((uint64_t)tm->nrings << (tm->bucket_shift + 1)) *
	       sizeof(uint64_t);
}

static int ring_init(struct pto_tm_ring *r, uint32_t pool_size,
		     uint32_t task_window)
{
	/*
	 * The pool has a power-of-two number of slots (no division per
	 * link); pool_size bounds how many of them hold live entries.  Its
	 * pages are touched as the pool first fills and stay after, so a
	 * runtime's memory stops growing once each ring has come round.
	 */
	r->ring_mask = pto_next_pow2(pool_size) - 1;
	r->pool = map_zeroed(pool_bytes(r), false);
	r->tasks = calloc(task_window, sizeof(*r->tasks));
	if (!r->pool || !r->tasks)
		return -ENOMEM;
	r->pool_size = pool_size;
	r->window_mask = task_window - 1;
	return 0;
}

/*
 * The block chain heads (pto_tm_init()) have their pages made writable
 * at once when the table is of a usual size.  An insert reads a head and then writes it, at a
 * random place in the table: an untouched page would map the zero page on
 * the read and copy it on the write, and that copy flushes the TLB of
 * every other CPU running the process, by an interrupt.  With kernels
 * running on those CPUs (the sim), that cost the first run of a runtime
 * about 20 us per task for its first few hundred tasks (200 NOP tasks
 * beside two busy cores: 4-6 ms against 0.1-0.2 in a second run).  Every
 * page of such a table is touched within the first few thousand tasks
 * anyway.  A table for a pool far larger than the default's is left to
 * fill as the pool does: populated, 2^28 entries took 16 GiB and 49 s
 * before the first task.
 */
#define TM_POPULATE_MAX (16ull << 20)

int pto_tm_init(struct pto_tensormap *tm, uint32_t nrings,
		const uint32_t *pool_size, const uint32_t *task_window)
{
	uint64_t nbuckets = 64;
	uint32_t r;

	memset(tm, 0, sizeof(*tm));
	if (!nrings || nrings > PTO_MAX_RINGS)
		return -EINVAL;
	tm->nrings = nrings;
	for (r = 0; r < nrings; r++) {
		if (ring_init(&tm->ring[r], pool_size[r], task_window[r])) {
			pto_tm_destroy(tm);
			return -ENOMEM;
		}
		/* as many buckets as the largest pool has entries */
		if (pool_size[r] > nbuckets)
			nbuckets = pool_size[r];
	}
	nbuckets = pto_next_pow2(nbuckets);
	tm->bucket_mask = (uint32_t)nbuckets - 1;
	tm->bucket_shift = (unsigned int)__builtin_ctzll(nbuckets);
	tm->blk_heads = map_zeroed(buckets_bytes(tm),
				   buckets_bytes(tm) <= TM_POPULATE_MAX);
	/* level chains are linked only once a wide lookup comes: lazily */
	tm->lvl_heads = map_zeroed(buckets_bytes(tm), false);
	if (!tm->blk_heads || !tm->lvl_heads) {
		pto_tm_destroy(tm);
		return -ENOMEM;
	}
	return 0;
}

void pto_tm_destroy(struct pto_tensormap *tm)
{
	uint32_t r;

	for (r = 0; r < PTO_MAX_RINGS; r++) {
		unmap(tm->ring[r].pool, pool_bytes(&tm->ring[r]));
		free(tm->ring[r].tasks);
		unmap(tm->ring[r].shapes, shapes_bytes(&tm->ring[r]));
	}
	unmap(tm->blk_heads, buckets_bytes(tm));
	unmap(tm->lvl_heads, buckets_bytes(tm));
	memset(tm, 0, sizeof(*tm));
}

/*
 * Writers that together cover the range looked up, each only a part of it
 * (a stencil reading the cells of several writers): the parts found so
 * far, merged.  Only this many separate parts are kept; a part that would
 * need one more is not counted, which only prunes less.
 */
#define WALK_PARTS 4

/*
 * Writers a walk with shapes has visited, so far (see overwritten()): the
 * 9 tiles under a 2-D halo, the 27 under a 3-D one.  A writer found when
 * this many are kept is not, which only prunes less.
 */
#define WALK_WRITERS 32

struct walk {
	uint64_t base, begin, end;
	uint64_t floor;		/* entries older than this are implied */
	uint64_t cover;		/* order of the newest covering writer */
	bool covered;		/* cover is set */
	unsigned int level;
	const struct pto_vshape *shape;	/* the key's, or NULL: solid */
	bool shapes;		/* the key or some entry may have a shape */
	uint32_t nparts;
	uint64_t parts_oldest;	/* order of the oldest writer in parts[] */
	struct { uint64_t begin, end; } parts[WALK_PARTS];
	uint32_t nwriters;
	struct {
		const struct pto_tm_ring *r;
		const struct pto_tm_entry *e;
		uint64_t order;
	} writers[WALK_WRITERS];
	pto_tm_visit_fn visit;
	void *ctx;
};

/* The entry at pool position pos1 - 1 of a ring, or NULL: none, or retired. */
static struct pto_tm_entry *entry_at(struct pto_tm_ring *r, uint64_t pos1)
{
	if (pos1 <= r->tail)
		return NULL;
	return &r->pool[(pos1 - 1) & r->ring_mask];
}

static struct pto_tm_entry *entry_next(struct pto_tm_ring *r,
				       const struct pto_tm_entry *e, int which)
{
	return entry_at(r, which == LINK_BLK ? e->blk_next : e->lvl_next);
}

/*
 * Look at one entry of a walk.  A chain may mix keys (hash collisions), so
 * entries are matched on base and level (and block for block chains).
 * Everything older than the newest covering writer is reached through that
 * writer's own dependencies: returns false when the walk can stop.
 */
/* An entry's shape: its own, or its solid range made into one. */
static const struct pto_vshape *e_shape(const struct pto_tm_ring *r,
					const struct pto_tm_entry *e,
					struct pto_vshape *tmp)
{
	if (e_shaped(e))
		return &r->shapes[e - r->pool];
	pto_vshape_range(tmp, e->begin, e->end - e->begin);
	return tmp;
}

/*
 * Ranges meet and one side has a shape: do they share a byte (MAYBE counts
 * as yes), and does the entry cover the key?  Out of line: rare.
 */
static __attribute__((noinline))
bool shapes_meet(const struct walk *w, const struct pto_tm_ring *r,
		 const struct pto_tm_entry *e, bool *covers, bool *proven)
{
	struct pto_vshape etmp, ktmp;
	const struct pto_vshape *es = e_shape(r, e, &etmp), *ks = w->shape;
	enum pto_overlap o;

	if (!ks) {
		pto_vshape_range(&ktmp, w->begin, w->end - w->begin);
		ks = &ktmp;
	}
	o = pto_vshape_overlap(es, ks);
	if (o == PTO_OVERLAP_NO)
		return false;
	*proven = o == PTO_OVERLAP_YES;
	*covers = e_writer(e) && pto_vshape_covers(es, ks);
	return true;
}

/* The newest covering writer so far ends the walk. */
static inline bool note_cover(struct walk *w, uint64_t order)
{
	if (!w->covered || order > w->cover)
		w->cover = order;
	w->covered = true;
	if (order > w->floor)
		w->floor = order;
	return false;
}

/*
 * A writer of part of the range (solid, both).  Once the parts cover all
 * of it, everything older than the oldest of their writers is implied:
 * whatever it touched in the range, one of those writers overwrote, and
 * each of them was ordered after it by its own lookup (or through a newer
 * writer, by the same argument).  Unlike a single covering writer, such a
 * writer does not make the walk's result (see drop_implied_cover()).
 */
static __attribute__((noinline))
bool note_part(struct walk *w, const struct pto_tm_entry *e, uint64_t order)
{
	uint64_t b = e->begin > w->begin ? e->begin : w->begin;
	uint64_t x = e->end < w->end ? e->end : w->end;
	bool first = !w->nparts;
	uint32_t i, n = 0;

	/* merge every part b..x meets or touches into b..x */
	for (i = 0; i < w->nparts; i++) {
		if (w->parts[i].end < b || w->parts[i].begin > x) {
			w->parts[n++] = w->parts[i];
			continue;
		}
		if (w->parts[i].begin < b)
			b = w->parts[i].begin;
		if (w->parts[i].end > x)
			x = w->parts[i].end;
	}
	if (n == WALK_PARTS) {
		w->nparts = n;	/* no room: count it as not found */
		return true;
	}
	w->parts[n].begin = b;
	w->parts[n].end = x;
	w->nparts = n + 1;
	if (first || order < w->parts_oldest)
		w->parts_oldest = order;
	if (b > w->begin || x < w->end)
		return true;
	if (w->parts_oldest > w->floor)
		w->floor = w->parts_oldest;
	return true;
}

/* Is b..x (inside the range looked up) inside one of the parts found? */
static bool in_parts(const struct walk *w, uint64_t b, uint64_t x)
{
	uint32_t i;

	for (i = 0; i < w->nparts; i++)
		if (w->parts[i].begin <= b && w->parts[i].end >= x)
			return true;
	return false;
}

/*
 * An entry older than every writer of the parts found, whose bytes in the
 * range those writers overwrote, is implied by them as the entries behind
 * a whole cover are (see note_part()): skipped.  When the parts cover all
 * the range has in the entry's block, so is every later entry of the
 * block's chain (older still, and inside the block): false ends the chain.
 * A stencil that rewrites double-buffered cells finds the newest writer of
 * each cell instead of every writer still alive.
 */
static __attribute__((noinline))
bool implied_by_parts(const struct walk *w, const struct pto_tm_entry *e,
		      int64_t blk, bool *stop)
{
	uint64_t b = e->begin > w->begin ? e->begin : w->begin;
	uint64_t x = e->end < w->end ? e->end : w->end;

	*stop = false;
	if (blk >= 0) {
		uint64_t lo = (uint64_t)blk << w->level;
		uint64_t hi = lo + (1ull << w->level);

		*stop = in_parts(w, lo > w->begin ? lo : w->begin,
				 hi < w->end ? hi : w->end);
		if (*stop)
			return true;
	}
	return in_parts(w, b, x);
}

/*
 * Is entry e (of ring r, submission order order) wholly inside a newer
 * writer this walk has visited?  That writer's own lookup found e, or a
 * writer newer than e over all of e, and was ordered after it: the edge to
 * the writer implies the order after e.  Parts (note_part()) do this for
 * byte ranges only; a strided view (a stencil's halo over a row-major
 * grid) would otherwise depend on every writer still alive of the tiles
 * it reads, iteration after iteration, and fill the dependency pool.
 */
static bool overwritten(const struct walk *w, const struct pto_tm_ring *r,
			const struct pto_tm_entry *e, uint64_t order)
{
	struct pto_vshape etmp, wtmp;
	const struct pto_vshape *es = NULL;
	uint32_t i;

	for (i = 0; i < w->nwriters; i++) {
		const struct pto_tm_entry *we = w->writers[i].e;

		/* a writer's bytes lie within its range, so do e's */
		if (w->writers[i].order <= order || we->begin > e->begin ||
		    we->end < e->end)
			continue;
		if (!e_shaped(e) && !e_shaped(we))
			return true;
		if (!es)
			es = e_shape(r, e, &etmp);
		if (pto_vshape_covers(e_shape(w->writers[i].r, we, &wtmp), es))
			return true;
	}
	return false;
}

static void note_writer(struct walk *w, const struct pto_tm_ring *r,
			const struct pto_tm_entry *e, uint64_t order)
{
	if (!e_writer(e) || w->nwriters == WALK_WRITERS)
		return;
	w->writers[w->nwriters].r = r;
	w->writers[w->nwriters].e = e;
	w->writers[w->nwriters].order = order;
	w->nwriters++;
}

/* walk_entry() once the ranges meet, where shapes may be involved. */
static __attribute__((noinline))
bool walk_shaped(struct walk *w, const struct pto_tm_ring *r,
		 const struct pto_tm_entry *e, uint64_t order)
{
	bool covers, proven = true;

	if (w->shape || e_shaped(e)) {
		if (!shapes_meet(w, r, e, &covers, &proven) ||
		    overwritten(w, r, e, order))
			return true;
	} else {
		covers = e_writer(e) && e->begin <= w->begin &&
			 e->end >= w->end;
		if (!covers && e_writer(e)) {
			w->visit(w->ctx, e->task, order, e->owner, proven);
			note_writer(w, r, e, order);
			return note_part(w, e, order);
		}
	}
	w->visit(w->ctx, e->task, order, e->owner, proven);
	note_writer(w, r, e, order);
	return covers ? note_cover(w, order) : true;
}

static inline __attribute__((always_inline))
bool walk_entry(struct walk *w, const struct pto_tm_ring *r,
		const struct pto_tm_entry *e, int64_t blk)
{
	uint64_t order = e_order(e);

	if (order < w->floor)
		return false;
	if (e->base != w->base || e_level(e) != w->level ||
	    (blk >= 0 && (e->begin >> w->level) != (uint64_t)blk) ||
	    e->end <= w->begin || e->begin >= w->end)
		return true;
	if (w->nparts && order < w->parts_oldest) {
		bool stop;

		if (implied_by_parts(w, e, blk, &stop))
			return !stop;
	}
	/* programs without views never take this branch */
	if (__builtin_expect(w->shapes, 0))
		return walk_shaped(w, r, e, order);
	w->visit(w->ctx, e->task, order, e->owner, true);
	if (!e_writer(e))
		return true;
	if (e->begin <= w->begin && e->end >= w->end)
		return note_cover(w, order);
	return note_part(w, e, order);
}

/* The common case: one ring's chain, newest first.  Inlined: hot. */
static inline __attribute__((always_inline))
void walk_chain(struct pto_tensormap *tm, struct walk *w, int which,
		uint32_t ring, uint64_t head, int64_t blk)
{
	struct pto_tm_ring *r = &tm->ring[ring];
	struct pto_tm_entry *e;

	for (e = entry_at(r, head); e; e = entry_next(r, e, which))
		if (!walk_entry(w, r, e, blk))
			return;
}

/*
 * Several rings' chains of one bucket: merged newest first by submission
 * order, so a covering writer of any ring ends the walk exactly where a
 * single chain of all the tasks would.
 */
static void walk_merged(struct pto_tensormap *tm, struct walk *w, int which,
			uint64_t *heads, int kind, int64_t blk)
{
	struct pto_tm_entry *cur[PTO_MAX_RINGS];
	uint32_t r, n = tm->nrings;

	for (r = 0; r < n; r++)
		cur[r] = entry_at(&tm->ring[r],
				  pto_tm_ring_heads(tm, heads, r)[kind]);
	for (;;) {
		uint32_t best = n;

		for (r = 0; r < n; r++)
			if (cur[r] && (best == n ||
				       e_order(cur[r]) > e_order(cur[best])))
				best = r;
		if (best == n ||
		    !walk_entry(w, &tm->ring[best], cur[best], blk))
			return;
		cur[best] = entry_next(&tm->ring[best], cur[best], which);
	}
}

/* Walk a bucket's chains of one kind, every ring's. */
static void walk_bucket(struct pto_tensormap *tm, struct walk *w, int which,
			uint64_t *heads, int kind, int64_t blk)
{
	uint32_t active = tm->active, ring;

	if (active & (active - 1)) {
		walk_merged(tm, w, which, heads, kind, blk);
	} else if (active) {
		ring = (uint32_t)__builtin_ctz(active);
		walk_chain(tm, w, which, ring,
			   pto_tm_ring_heads(tm, heads, ring)[kind], blk);
	}
}

/*
 * Link a ring's entries written since the last call into their level
 * chains.  Only lookups that span many blocks walk a level chain, and many
 * programs make none: an insert leaves the level chain alone (its bucket
 * is one more cache miss per access), and the first wide lookup after
 * some inserts links them, in pool order, so the chains stay newest-first.
 * Each entry is linked once.
 */
static void lvl_sync_ring(struct pto_tensormap *tm, uint32_t ring)
{
	struct pto_tm_ring *r = &tm->ring[ring];
	uint64_t pos = r->lvl_synced > r->tail ? r->lvl_synced : r->tail;

	for (; pos < r->head; pos++) {
		struct pto_tm_entry *e = &r->pool[pos & r->ring_mask];
		uint64_t *heads = lvl_heads(tm, e->base, e_level(e));
		uint64_t *head = &pto_tm_ring_heads(tm, heads,
						    ring)[e_writer(e)];

		e->lvl_next = *head;
		*head = pos + 1;
	}
	r->lvl_synced = r->head;
}

static void lvl_sync(struct pto_tensormap *tm)
{
	uint32_t r;

	for (r = 0; r < tm->nrings; r++)
		if (tm->ring[r].lvl_synced != tm->ring[r].head)
			lvl_sync_ring(tm, r);
}

/* Does any ring still have a live entry of this kind at this level? */
static bool level_live(const struct pto_tensormap *tm, int kind,
		       unsigned int level)
{
	uint32_t r;

	for (r = 0; r < tm->nrings; r++)
		if (tm->ring[r].level_last[kind][level] > tm->ring[r].tail)
			return true;
	return false;
}

static void lookup_kind(struct pto_tensormap *tm, struct walk *w, int kind)
{
	uint64_t levels = tm->level_mask[kind];

	while (levels) {
		unsigned int level = __builtin_ctzll(levels);
		uint64_t b0 = w->begin >> level, b1 = (w->end - 1) >> level;
		uint64_t blk;

		levels &= levels - 1;
		if (!level_live(tm, kind, level)) {
			/* every entry of this level is behind its tail */
			tm->level_mask[kind] &= ~(1ull << level);
			continue;
		}
		w->level = level;
		if (b1 - b0 >= PTO_TM_MAX_BLOCKS) {
			lvl_sync(tm);
			walk_bucket(tm, w, LINK_LVL,
				    lvl_heads(tm, w->base, level), kind, -1);
			continue;
		}
		for (blk = b0; blk <= b1; blk++)
			walk_bucket(tm, w, LINK_BLK,
				    blk_heads(tm, w->base, level, blk), kind,
				    (int64_t)blk);
	}
}

void pto_tm_key(struct pto_tensormap *tm, struct pto_tm_key *k,
		uint64_t base, uint64_t begin, uint64_t end)
{
	k->base = base;
	k->begin = begin;
	k->end = end;
	k->shape = NULL;
	if (begin >= end) {
		k->level = 0;
		k->heads = NULL;
		return;
	}
	k->level = range_level(begin, end);
	k->heads = blk_heads(tm, base, k->level, begin >> k->level);
}

int pto_tm_key_shaped(struct pto_tensormap *tm, struct pto_tm_key *k,
		      uint32_t ring, uint64_t base,
		      const struct pto_vshape *vs)
{
	struct pto_tm_ring *r = &tm->ring[ring];

	if (!r->shapes) {
		/* pages are touched as shaped entries come: lazy like the pool */
		r->shapes = map_zeroed(shapes_bytes(r), false);
		if (!r->shapes)
			return -ENOMEM;
		tm->shaped = true;
	}
	pto_tm_key(tm, k, base, vs->off, vs->off + pto_vshape_extent(vs));
	k->shape = vs;
	return 0;
}

/*
 * The common case: every live entry of the kinds walked is at the
 * range's own level, where the range is one block (that is what its level
 * means), so the walk is that block's chains and nothing else.
 */
static bool one_level(const struct pto_tensormap *tm,
		      const struct pto_tm_key *k, bool as_writer)
{
	uint64_t levels = tm->level_mask[1] | (as_writer ? tm->level_mask[0] : 0);

	return levels == 1ull << k->level;
}

uint64_t pto_tm_lookup_key(struct pto_tensormap *tm,
			   const struct pto_tm_key *k, bool as_writer,
			   pto_tm_visit_fn visit, void *ctx)
{
	struct walk w;

	/* field by field: parts[] is read only below nparts, and not zeroed */
	w.base = k->base;
	w.begin = k->begin;
	w.end = k->end;
	w.floor = 0;
	w.cover = 0;
	w.covered = false;
	w.level = 0;
	w.shape = k->shape;
	w.shapes = k->shape || tm->shaped;
	w.nparts = 0;
	w.nwriters = 0;
	w.visit = visit;
	w.ctx = ctx;

	if (!k->heads || !tm->active)
		return PTO_TM_NO_COVER;
	if (one_level(tm, k, as_writer)) {
		int64_t blk = (int64_t)(k->begin >> k->level);
		uint32_t active = tm->active, ring;

		w.level = k->level;
		if (active & (active - 1)) {
			walk_merged(tm, &w, LINK_BLK, k->heads, 1, blk);
			if (as_writer)
				walk_merged(tm, &w, LINK_BLK, k->heads, 0,
					    blk);
		} else {
			/* the usual lookup: one ring's two chains, inline */
			uint64_t *heads;

			ring = (uint32_t)__builtin_ctz(active);
			heads = pto_tm_ring_heads(tm, k->heads, ring);
			walk_chain(tm, &w, LINK_BLK, ring, heads[1], blk);
			if (as_writer)
				walk_chain(tm, &w, LINK_BLK, ring, heads[0],
					   blk);
		}
	} else {
		/* writers first: a covering writer prunes the reader walk */
		lookup_kind(tm, &w, 1);
		if (as_writer)
			lookup_kind(tm, &w, 0);
	}
	return w.covered ? w.cover : PTO_TM_NO_COVER;
}

int pto_tm_insert(struct pto_tensormap *tm, uint64_t base, uint64_t begin,
		  uint64_t end, bool writer, uint64_t task, uint64_t order,
		  uint64_t owner)
{
	struct pto_tm_adder a;
	struct pto_tm_key k;

	pto_tm_key(tm, &k, base, begin, end);
	if (k.heads && !pto_tm_free_entries(tm, PTO_TASK_RING(task)))
		return -ENOSPC;
	pto_tm_add_begin(tm, &a, task, order);
	pto_tm_add(tm, &a, &k, writer, owner);
	pto_tm_add_end(tm, &a);
	return 0;
}

void pto_tm_retire_task(struct pto_tensormap *tm, uint64_t task)
{
	uint32_t ring = PTO_TASK_RING(task);
	struct pto_tm_ring *r = &tm->ring[ring];
	const struct pto_tm_task *t =
		&r->tasks[PTO_TASK_SEQ(task) & r->window_mask];

	if (t->task != task || t->end <= r->tail)
		return;		/* no entries, or none past the tail */
	r->tail = t->end;
	WRITE_ONCE(r->live, (uint32_t)(r->head - r->tail));
	if (!r->live)
		tm->active &= ~(1u << ring);
}
