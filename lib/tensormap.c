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
	/* twice the entries: chains stay short even with the pool full */
	uint64_t nbuckets = 2 * pto_next_pow2(pool_size < 64 ? 64 : pool_size);

	memset(tm, 0, sizeof(*tm));
	/*
	 * Touched now rather than as the high-water mark grows: a runtime's
	 * memory then stays the same however many tasks a run submits.
	 */
	tm->pool = malloc((size_t)pool_size * sizeof(*tm->pool));
	if (tm->pool)
		memset(tm->pool, 0, (size_t)pool_size * sizeof(*tm->pool));
	tm->blk_buckets = calloc(nbuckets, sizeof(*tm->blk_buckets));
	tm->lvl_buckets = calloc(nbuckets, sizeof(*tm->lvl_buckets));
	tm->task_head = calloc(task_window, sizeof(*tm->task_head));
	if (!tm->pool || !tm->blk_buckets || !tm->lvl_buckets ||
	    !tm->task_head) {
		pto_tm_destroy(tm);
		return -ENOMEM;
	}
	tm->pool_size = pool_size;
	tm->bucket_mask = (uint32_t)nbuckets - 1;
	tm->window_mask = task_window - 1;
	return 0;
}

void pto_tm_destroy(struct pto_tensormap *tm)
{
	free(tm->pool);
	free(tm->blk_buckets);
	free(tm->lvl_buckets);
	free(tm->task_head);
	memset(tm, 0, sizeof(*tm));
}

static struct pto_tm_link *entry_link(struct pto_tm_entry *e, int which)
{
	return which == LINK_BLK ? &e->blk : &e->lvl;
}

static uint32_t *bucket_head(struct pto_tensormap *tm, int which,
			     uint32_t bucket, int kind)
{
	struct pto_tm_bucket *b = which == LINK_BLK ? tm->blk_buckets :
						       tm->lvl_buckets;

	return &b[bucket].head[kind];
}

static void link_front(struct pto_tensormap *tm, uint32_t idx, int which,
		       uint32_t bucket)
{
	struct pto_tm_entry *e = &tm->pool[idx];
	uint32_t *head = bucket_head(tm, which, bucket, e->writer);
	struct pto_tm_link *l = entry_link(e, which);

	l->prev = 0;
	l->next = *head;
	if (*head)
		entry_link(&tm->pool[*head - 1], which)->prev = idx + 1;
	*head = idx + 1;
}

static void unlink_entry(struct pto_tensormap *tm, uint32_t idx, int which,
			 uint32_t bucket)
{
	struct pto_tm_entry *e = &tm->pool[idx];
	struct pto_tm_link *l = entry_link(e, which);

	if (l->prev)
		entry_link(&tm->pool[l->prev - 1], which)->next = l->next;
	else
		*bucket_head(tm, which, bucket, e->writer) = l->next;
	if (l->next)
		entry_link(&tm->pool[l->next - 1], which)->prev = l->prev;
}

struct walk {
	uint64_t base, begin, end;
	uint64_t oldest_live;
	uint64_t cover;		/* newest writer covering the whole range */
	unsigned int level;
	pto_tm_visit_fn visit;
	void *ctx;
};

/*
 * Walk one chain newest-first.  A chain may mix keys (hash collisions), so
 * entries are matched on base and level (and block for block chains).
 * Everything older than the newest covering writer is reached through that
 * writer's own dependencies, so the walk stops there.
 */
static void walk_chain(struct pto_tensormap *tm, struct walk *w, int which,
		       uint32_t idx1, int64_t blk)
{
	while (idx1) {
		struct pto_tm_entry *e = &tm->pool[idx1 - 1];

		if (e->task_id < w->oldest_live || e->task_id < w->cover)
			return;
		idx1 = entry_link(e, which)->next;
		if (e->base != w->base || e->level != w->level)
			continue;
		if (blk >= 0 && (e->begin >> e->level) != (uint64_t)blk)
			continue;
		if (e->end <= w->begin || e->begin >= w->end)
			continue;
		w->visit(w->ctx, e->task_id, e->owner_gap ?
			 e->task_id - (e->owner_gap - 1) : PTO_TM_NO_OWNER);
		if (e->writer && e->begin <= w->begin && e->end >= w->end) {
			if (e->task_id > w->cover)
				w->cover = e->task_id;
			return;
		}
	}
}

static void lookup_kind(struct pto_tensormap *tm, struct walk *w, int kind)
{
	uint64_t levels = tm->level_mask[kind];

	while (levels) {
		unsigned int level = __builtin_ctzll(levels);
		uint64_t b0 = w->begin >> level, b1 = (w->end - 1) >> level;
		uint64_t blk;

		levels &= levels - 1;
		w->level = level;
		if (b1 - b0 >= PTO_TM_MAX_BLOCKS) {
			uint32_t b = lvl_hash(tm, w->base, level);

			walk_chain(tm, w, LINK_LVL, tm->lvl_buckets[b].head[kind],
				   -1);
			continue;
		}
		for (blk = b0; blk <= b1; blk++) {
			uint32_t b = blk_hash(tm, w->base, level, blk);

			walk_chain(tm, w, LINK_BLK,
				   tm->blk_buckets[b].head[kind], (int64_t)blk);
		}
	}
}

void pto_tm_lookup(struct pto_tensormap *tm, uint64_t base, uint64_t begin,
		   uint64_t end, bool as_writer, uint64_t oldest_live,
		   pto_tm_visit_fn visit, void *ctx)
{
	struct walk w = {
		.base = base, .begin = begin, .end = end,
		.oldest_live = oldest_live, .visit = visit, .ctx = ctx,
	};

	if (begin >= end)
		return;
	/* writers first: a covering writer prunes the reader walk */
	lookup_kind(tm, &w, 1);
	if (as_writer)
		lookup_kind(tm, &w, 0);
}

static int alloc_entry(struct pto_tensormap *tm, uint32_t *idx)
{
	if (tm->free_head) {
		*idx = tm->free_head - 1;
		tm->free_head = tm->pool[*idx].task_next;
	} else if (tm->bump < tm->pool_size) {
		*idx = tm->bump++;
	} else {
		return -ENOSPC;
	}
	tm->live++;
	return 0;
}

int pto_tm_insert(struct pto_tensormap *tm, uint64_t base, uint64_t begin,
		  uint64_t end, bool writer, uint64_t task_id, uint64_t owner)
{
	uint32_t *task_head = &tm->task_head[task_id & tm->window_mask];
	unsigned int level;
	struct pto_tm_entry *e;
	uint32_t idx;

	if (begin >= end)
		return 0;
	if (alloc_entry(tm, &idx))
		return -ENOSPC;
	level = range_level(begin, end);
	e = &tm->pool[idx];
	e->base = base;
	e->begin = begin;
	e->end = end;
	e->task_id = task_id;
	e->level = (uint8_t)level;
	e->writer = writer;
	/* an owner is live, so within a window of task_id */
	e->owner_gap = owner <= task_id ? (uint32_t)(task_id - owner) + 1 : 0;
	e->blk_bucket = blk_hash(tm, base, level, begin >> level);
	link_front(tm, idx, LINK_BLK, e->blk_bucket);
	link_front(tm, idx, LINK_LVL, lvl_hash(tm, base, level));
	e->task_next = *task_head;
	*task_head = idx + 1;
	tm->level_count[writer][level]++;
	tm->level_mask[writer] |= 1ull << level;
	return 0;
}

void pto_tm_retire_task(struct pto_tensormap *tm, uint64_t task_id)
{
	uint32_t *task_head = &tm->task_head[task_id & tm->window_mask];
	uint32_t idx1 = *task_head;

	while (idx1) {
		uint32_t idx = idx1 - 1;
		struct pto_tm_entry *e = &tm->pool[idx];

		idx1 = e->task_next;
		unlink_entry(tm, idx, LINK_BLK, e->blk_bucket);
		unlink_entry(tm, idx, LINK_LVL,
			     lvl_hash(tm, e->base, e->level));
		if (--tm->level_count[e->writer][e->level] == 0)
			tm->level_mask[e->writer] &= ~(1ull << e->level);
		e->task_next = tm->free_head;
		tm->free_head = idx + 1;
		tm->live--;
	}
	*task_head = 0;
}
