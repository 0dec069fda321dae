// SPDX-License-Identifier: MIT
/*
 * TensorMap: dependency discovery by byte-range overlap.  See tensormap.h
 * for the index structure and why it looks the way it does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rings.h"
#include "tensormap.h"

enum { LINK_BLK, LINK_LVL };

/* Multiplicative hashing: one multiply per key, good enough spread. */
static uint32_t blk_hash(const struct pto_tensormap *tm, uint64_t base,
			 unsigned int level, uint64_t blk)
{
	uint64_t h = (base ^ ((blk << 6 | level) * 0x9e3779b97f4a7c15ull)) *
		     0xc2b2ae3d27d4eb4full;

	return (uint32_t)(h >> 32) & tm->bucket_mask;
}

static uint32_t lvl_hash(const struct pto_tensormap *tm, uint64_t base,
			 unsigned int level)
{
	uint64_t h = (base + level + 1) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & tm->bucket_mask;
}

/* Smallest level whose aligned block holds all of [begin, end). */
static unsigned int range_level(uint64_t begin, uint64_t end)
{
	uint64_t diff = begin ^ (end - 1);
	unsigned int level = diff ? 64 - __builtin_clzll(diff) : 0;

	return level < PTO_TM_MIN_LEVEL ? PTO_TM_MIN_LEVEL : level;
}

int pto_tm_init(struct pto_tensormap *tm, uint32_t pool_size,
		uint32_t task_window)
{
	/* a bucket per entry: chains hold live entries only */
	uint64_t nbuckets = pto_next_pow2(pool_size < 64 ? 64 : pool_size);
	uint64_t ring;

	memset(tm, 0, sizeof(*tm));
	/*
	 * The ring has a power-of-two number of slots (no division per
	 * link); pool_size bounds how many of them hold live entries.
	 */
	ring = pto_next_pow2(pool_size);
	/*
	 * Touched now rather than as the high-water mark grows: a runtime's
	 * memory then stays the same however many tasks a run submits.
	 */
	tm->pool = malloc(ring * sizeof(*tm->pool));
	if (tm->pool)
		memset(tm->pool, 0, ring * sizeof(*tm->pool));
	tm->blk_buckets = calloc(nbuckets, sizeof(*tm->blk_buckets));
	tm->lvl_buckets = calloc(nbuckets, sizeof(*tm->lvl_buckets));
	tm->tasks = calloc(task_window, sizeof(*tm->tasks));
	if (!tm->pool || !tm->blk_buckets || !tm->lvl_buckets || !tm->tasks) {
		pto_tm_destroy(tm);
		return -ENOMEM;
	}
	tm->pool_size = pool_size;
	tm->ring_mask = ring - 1;
	tm->bucket_mask = (uint32_t)nbuckets - 1;
	tm->window_mask = task_window - 1;
	return 0;
}

void pto_tm_destroy(struct pto_tensormap *tm)
{
	free(tm->pool);
	free(tm->blk_buckets);
	free(tm->lvl_buckets);
	free(tm->tasks);
	memset(tm, 0, sizeof(*tm));
}

struct walk {
	uint64_t base, begin, end;
	uint64_t oldest_live;
	uint64_t cover;		/* newest writer covering the whole range */
	bool covered;		/* cover is set */
	unsigned int level;
	pto_tm_visit_fn visit;
	void *ctx;
};

/* The entry at ring position pos1 - 1, or NULL: none, or retired. */
static struct pto_tm_entry *entry_at(struct pto_tensormap *tm, uint64_t pos1)
{
	if (pos1 <= tm->tail)
		return NULL;
	return &tm->pool[(pos1 - 1) & tm->ring_mask];
}

/*
 * Walk one chain newest-first.  A chain may mix keys (hash collisions), so
 * entries are matched on base and level (and block for block chains).
 * Everything older than the newest covering writer is reached through that
 * writer's own dependencies, so the walk stops there.
 */
static void walk_chain(struct pto_tensormap *tm, struct walk *w, int which,
		       uint64_t head, int64_t blk)
{
	struct pto_tm_entry *e = entry_at(tm, head);

	for (; e; e = entry_at(tm, which == LINK_BLK ? e->blk_next :
						       e->lvl_next)) {
		if (e->task_id < w->oldest_live || e->task_id < w->cover)
			return;
		if (e->base != w->base || e->level != w->level ||
		    (blk >= 0 && (e->begin >> e->level) != (uint64_t)blk) ||
		    e->end <= w->begin || e->begin >= w->end)
			continue;
		w->visit(w->ctx, e->task_id, e->owner_gap ?
			 e->task_id - (e->owner_gap - 1) : PTO_TM_NO_OWNER);
		if (e->writer && e->begin <= w->begin && e->end >= w->end) {
			if (!w->covered || e->task_id > w->cover)
				w->cover = e->task_id;
			w->covered = true;
			return;
		}
	}
}

/*
 * Link the entries written since the last call into their level chains.
 * Only lookups that span many blocks walk a level chain, and many
 * programs make none: an insert leaves the level chain alone (its bucket
 * is one more cache miss per access), and the first wide lookup after
 * some inserts links them, in ring order, so the chains stay
 * newest-first.  Each entry is linked once.
 */
static void lvl_sync(struct pto_tensormap *tm)
{
	uint64_t pos = tm->lvl_synced > tm->tail ? tm->lvl_synced : tm->tail;

	for (; pos < tm->head; pos++) {
		struct pto_tm_entry *e = &tm->pool[pos & tm->ring_mask];
		uint64_t *head = &tm->lvl_buckets[lvl_hash(tm, e->base,
							   e->level)]
					.head[e->writer];

		e->lvl_next = *head;
		*head = pos + 1;
	}
	tm->lvl_synced = tm->head;
}

static void lookup_kind(struct pto_tensormap *tm, struct walk *w, int kind)
{
	uint64_t levels = tm->level_mask[kind];

	while (levels) {
		unsigned int level = __builtin_ctzll(levels);
		uint64_t b0 = w->begin >> level, b1 = (w->end - 1) >> level;
		uint64_t blk;

		levels &= levels - 1;
		if (tm->level_last[kind][level] <= tm->tail) {
			/* every entry of this level is behind the tail */
			tm->level_mask[kind] &= ~(1ull << level);
			continue;
		}
		w->level = level;
		if (b1 - b0 >= PTO_TM_MAX_BLOCKS) {
			if (tm->lvl_synced != tm->head)
				lvl_sync(tm);
			walk_chain(tm, w, LINK_LVL,
				   tm->lvl_buckets[lvl_hash(tm, w->base, level)]
					   .head[kind], -1);
			continue;
		}
		for (blk = b0; blk <= b1; blk++)
			walk_chain(tm, w, LINK_BLK,
				   tm->blk_buckets[blk_hash(tm, w->base, level,
							    blk)].head[kind],
				   (int64_t)blk);
	}
}

void pto_tm_key(struct pto_tensormap *tm, struct pto_tm_key *k,
		uint64_t base, uint64_t begin, uint64_t end)
{
	k->base = base;
	k->begin = begin;
	k->end = end;
	if (begin >= end) {
		k->level = 0;
		k->bucket = NULL;
		return;
	}
	k->level = range_level(begin, end);
	k->bucket = &tm->blk_buckets[blk_hash(tm, base, k->level,
					      begin >> k->level)];
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
			   uint64_t oldest_live, pto_tm_visit_fn visit,
			   void *ctx)
{
	struct walk w = {
		.base = k->base, .begin = k->begin, .end = k->end,
		.oldest_live = oldest_live, .visit = visit, .ctx = ctx,
	};

	if (!k->bucket)
		return PTO_TM_NO_COVER;
	if (one_level(tm, k, as_writer)) {
		int64_t blk = (int64_t)(k->begin >> k->level);

		w.level = k->level;
		walk_chain(tm, &w, LINK_BLK, k->bucket->head[1], blk);
		if (as_writer)
			walk_chain(tm, &w, LINK_BLK, k->bucket->head[0], blk);
	} else {
		/* writers first: a covering writer prunes the reader walk */
		lookup_kind(tm, &w, 1);
		if (as_writer)
			lookup_kind(tm, &w, 0);
	}
	return w.covered ? w.cover : PTO_TM_NO_COVER;
}

int pto_tm_insert_key(struct pto_tensormap *tm, const struct pto_tm_key *k,
		      bool writer, uint64_t task_id, uint64_t owner)
{
	struct pto_tm_task *t = &tm->tasks[task_id & tm->window_mask];
	struct pto_tm_entry *e;

	if (!k->bucket)
		return 0;
	if (tm->live >= tm->pool_size)
		return -ENOSPC;
	e = &tm->pool[tm->head & tm->ring_mask];
	e->base = k->base;
	e->begin = k->begin;
	e->end = k->end;
	e->task_id = task_id;
	e->level = (uint8_t)k->level;
	e->writer = writer;
	/* an owner is live, so within a window of task_id */
	e->owner_gap = owner <= task_id ? (uint32_t)(task_id - owner) + 1 : 0;
	e->blk_next = k->bucket->head[writer];
	tm->head++;
	k->bucket->head[writer] = tm->head;
	tm->level_last[writer][k->level] = tm->head;
	tm->level_mask[writer] |= 1ull << k->level;
	tm->live++;
	t->task_id = task_id;
	t->end = tm->head;
	return 0;
}

int pto_tm_insert(struct pto_tensormap *tm, uint64_t base, uint64_t begin,
		  uint64_t end, bool writer, uint64_t task_id, uint64_t owner)
{
	struct pto_tm_key k;

	pto_tm_key(tm, &k, base, begin, end);
	return pto_tm_insert_key(tm, &k, writer, task_id, owner);
}

void pto_tm_retire_task(struct pto_tensormap *tm, uint64_t task_id)
{
	const struct pto_tm_task *t = &tm->tasks[task_id & tm->window_mask];

	if (t->task_id != task_id || t->end <= tm->tail)
		return;		/* no entries, or none past the tail */
	tm->tail = t->end;
	tm->live = (uint32_t)(tm->head - tm->tail);
}
