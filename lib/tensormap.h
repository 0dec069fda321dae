/* SPDX-License-Identifier: MIT */
/*
 * TensorMap: which live tasks last wrote, or have read, which byte ranges.
 *
 * Orchestrator-private.  An entry records one access [begin, end) of a
 * tensor base by one task.  Writers and readers live in separate chains, so
 * a reader looks up writers only: a weight read by a million tasks costs
 * each reader one insert and a walk of (usually no) writers.  A writer looks
 * up both, which gives read-after-write, write-after-write and
 * write-after-read dependencies.
 *
 * Index: an entry's level L is the smallest power of two (at least 64 bytes)
 * such that [begin, end) lies inside one aligned 2^L block.  Entries hang in
 * a block chain keyed (base, L, begin >> L) and in a level chain keyed
 * (base, L).  A lookup visits, for each level in use, the few block chains
 * its range covers, or the level chain when it would cover many blocks;
 * entries join their level chain only once such a lookup comes.
 * Tiles, stencil cells and whole tensors each find their neighbours in O(1)
 * chains of live entries instead of one chain per tensor.
 *
 * Rings: tasks retire in order within their task ring, independently of
 * the other rings, so every task ring has a pool of its own.  A task's
 * entries are allocated from its ring's pool, as a ring, in task order,
 * and every bucket has a chain head per task ring; chains are singly
 * linked newest-first within one pool.  Nothing is ever unlinked: the
 * entries of retired tasks are simply behind their pool's tail, and since
 * positions fall along every chain, a walk of a chain stops at the first
 * position behind the tail (all further ones are older still).  Retiring
 * a task is one store, an insert touches its own entry and one bucket head
 * per chain, and a full pool is back-pressure, never an allocation.  A
 * lookup merges the chains of a bucket newest-first by submission order,
 * so it visits tasks of all rings in the order they were submitted.
 *
 * Views: an access to an N-D view that is not one solid range is indexed
 * by its bounding range like any other, and also keeps its shape (a
 * struct pto_vshape in a table beside the pool, same position, made when
 * a ring first sees one).  Where two ranges meet and either has a shape,
 * pto_vshape_overlap() decides whether they share a byte; a shaped writer
 * ends a lookup only when it provably covers the range looked up.  1-D
 * accesses pay one well-predicted test on the entries they meet.
 */
#ifndef PTO_LIB_TENSORMAP_H
#define PTO_LIB_TENSORMAP_H

#include <stdbool.h>
#include <stdint.h>

#include <pto/pto_uapi.h>

#include "sync.h"
#include "view.h"

#define PTO_TM_MIN_LEVEL 6
#define PTO_TM_LEVELS 64
/* A lookup covering more blocks than this walks the level chain instead. */
#define PTO_TM_MAX_BLOCKS 8

/*
 * An entry.  Links and bucket heads are pool positions + 1 (0 ends a
 * chain).  A position not behind its pool's tail still holds the entry
 * written there, so a link is followed only while it points at or past
 * the tail.
 */
struct pto_tm_entry {
	uint64_t base;
	uint64_t begin;
	uint64_t end;
	uint64_t task;		/* the accessing task's handle */
	uint64_t order;		/* submission order, level and writer bit */
	uint64_t owner;		/* handle of the buffer's owner: see below */
	uint64_t blk_next;	/* block chain */
	uint64_t lvl_next;	/* level chain (linked lazily: lvl_sync()) */
};

/* The bits of pto_tm_entry.order above the submission order itself. */
#define PTO_TM_ORDER_MASK	((1ull << 56) - 1)
#define PTO_TM_LEVEL_SHIFT	56
#define PTO_TM_SHAPED		(1ull << 62)	/* its shape is in ->shapes */
#define PTO_TM_WRITER		(1ull << 63)

/* Where the entries of the task last in a window slot end. */
struct pto_tm_task {
	uint64_t task;		/* its handle */
	uint64_t end;		/* pool position after its last entry */
};

/* One task ring's pool. */
struct pto_tm_ring {
	struct pto_tm_entry *pool;
	uint32_t pool_size;
	uint32_t live;		/* entries in use: head - tail */
	uint64_t head;		/* next pool position to write */
	uint64_t ring_mask;	/* pool slots - 1 (a power of two) */
	uint64_t tail;		/* entries below belong to retired tasks */
	uint64_t lvl_synced;	/* entries below are in their level chains */
	uint32_t window_mask;	/* the task ring's slots - 1 */
	uint64_t level_last[2][PTO_TM_LEVELS];	/* newest position per level */
	struct pto_tm_task *tasks;	/* per task slot */
	struct pto_vshape *shapes;	/* per pool slot, or NULL: none yet */
};

struct pto_tensormap {
	struct pto_tm_ring ring[PTO_MAX_RINGS];
	uint32_t nrings;
	uint32_t active;	/* bit r: ring r has live entries */
	/*
	 * Bucket heads, [ring][bucket][kind] (kind [0] readers, [1]
	 * writers): a ring's heads are dense, four buckets to a cache line,
	 * and the blocks of one tensor's run take neighbouring buckets
	 * (blk_hash()), so a program's working set of heads stays small.
	 */
	uint64_t *blk_heads;
	uint64_t *lvl_heads;
	uint32_t bucket_mask;
	unsigned int bucket_shift;	/* log2 of the buckets */
	uint64_t level_mask[2];	/* levels that may have live entries */
	bool shaped;		/* some ring has had a shaped entry */
};

/*
 * Owners.  A heap-ring buffer (an OUTPUT) is freed when the task that
 * allocated it retires, so every task that accesses it must hold that task,
 * not only the newest writer it depends on.  Each entry therefore carries
 * the owner of the buffer its base lies in (PTO_TM_NO_OWNER for memory the
 * runtime does not free): the allocating task for its own OUTPUT, and for
 * later accesses the owner their lookup found.
 */
#define PTO_TM_NO_OWNER UINT64_MAX

/*
 * One access's range and where it is indexed: its level and the bucket of
 * its block there (NULL heads: an empty range, not indexed).  Made once
 * per access (pto_tm_key()) and used by both the lookup and the insert of
 * that access.
 */
struct pto_tm_key {
	uint64_t base;
	uint64_t begin;
	uint64_t end;
	unsigned int level;
	uint64_t *heads;	/* ring 0's pair in its bucket, or NULL */
	const struct pto_vshape *shape;	/* NULL: all of [begin, end) */
};

void pto_tm_key(struct pto_tensormap *tm, struct pto_tm_key *k,
		uint64_t base, uint64_t begin, uint64_t end);

/* A ring's pair of heads of the bucket whose ring 0 pair is at heads. */
static inline uint64_t *pto_tm_ring_heads(const struct pto_tensormap *tm,
					  uint64_t *heads, uint32_t ring)
{
	return heads + ((uint64_t)ring << (tm->bucket_shift + 1));
}

/*
 * The key of an access to a view that is not solid (vs stays the
 * caller's until the insert has copied it).  -ENOMEM when the shape table
 * of ring cannot be made.
 */
int pto_tm_key_shaped(struct pto_tensormap *tm, struct pto_tm_key *k,
		      uint32_t ring, uint64_t base,
		      const struct pto_vshape *vs);

/*
 * Called for every live entry a lookup finds overlapping the range: the
 * task's handle and submission order, the owner that entry records, and
 * whether the overlap is proven (false: two views the overlap search
 * could not decide, taken as overlapping to be safe).
 */
typedef void (*pto_tm_visit_fn)(void *ctx, uint64_t task, uint64_t order,
				uint64_t owner, bool proven);

/*
 * A TensorMap for nrings task rings; ring r's pool holds pool_size[r]
 * entries and its task ring task_window[r] slots (a power of two).
 */
int pto_tm_init(struct pto_tensormap *tm, uint32_t nrings,
		const uint32_t *pool_size, const uint32_t *task_window);
void pto_tm_destroy(struct pto_tensormap *tm);

/*
 * Visit the live tasks whose accesses overlap the key's range of its base,
 * newest first: writers always, readers too when as_writer.  The newest
 * writer covering the whole range ends the lookup (everything older is
 * ordered behind it already); its submission order is returned, or
 * PTO_TM_NO_COVER when none was found.  Newer writers that each cover a
 * part of the range prune in the same way what they overwrote together,
 * but are not returned.
 */
#define PTO_TM_NO_COVER UINT64_MAX
uint64_t pto_tm_lookup_key(struct pto_tensormap *tm,
			   const struct pto_tm_key *k, bool as_writer,
			   pto_tm_visit_fn visit, void *ctx);

/*
 * The inserts of one task: pto_tm_add_begin(), pto_tm_add() for each
 * access it makes (to a buffer owned by owner, or PTO_TM_NO_OWNER), then
 * pto_tm_add_end(), which says where its entries end, for its retirement.
 * Inline: they run for every tracked parameter.  All of a task's entries
 * go in its ring's pool, so where that ring writes next is kept here
 * rather than in the ring until the end.  The caller has made sure the
 * pool has room for them all (pto_tm_free_entries()).
 */
struct pto_tm_adder {
	struct pto_tm_ring *r;	/* the task's ring */
	uint64_t task;		/* its handle */
	uint64_t order;		/* its submission order */
	uint64_t head;		/* the pool position written next */
	uint64_t heads_off;	/* its ring's heads, from ring 0's */
};

static inline void pto_tm_add_begin(struct pto_tensormap *tm,
				    struct pto_tm_adder *a, uint64_t task,
				    uint64_t order)
{
	uint32_t ring = PTO_TASK_RING(task);

	a->r = &tm->ring[ring];
	a->task = task;
	a->order = order & PTO_TM_ORDER_MASK;
	a->head = a->r->head;
	a->heads_off = (uint64_t)ring << (tm->bucket_shift + 1);
}

static inline void pto_tm_add(struct pto_tensormap *tm,
			      struct pto_tm_adder *a,
			      const struct pto_tm_key *k, bool writer,
			      uint64_t owner)
{
	struct pto_tm_ring *r = a->r;
	uint64_t *head, slot;
	struct pto_tm_entry *e;

	if (!k->heads)
		return;
	head = &k->heads[a->heads_off + writer];
	slot = a->head & r->ring_mask;
	e = &r->pool[slot];
	e->base = k->base;
	e->begin = k->begin;
	e->end = k->end;
	e->task = a->task;
	e->order = a->order | (uint64_t)k->level << PTO_TM_LEVEL_SHIFT |
		   (writer ? PTO_TM_WRITER : 0);
	if (k->shape) {
		/* the table was made with the key (pto_tm_key_shaped()) */
		r->shapes[slot] = *k->shape;
		e->order |= PTO_TM_SHAPED;
	}
	e->owner = owner;
	e->blk_next = *head;
	*head = ++a->head;
	r->level_last[writer][k->level] = a->head;
	tm->level_mask[writer] |= 1ull << k->level;
}

static inline void pto_tm_add_end(struct pto_tensormap *tm,
				  struct pto_tm_adder *a)
{
	struct pto_tm_ring *r = a->r;
	struct pto_tm_task *t =
		&r->tasks[PTO_TASK_SEQ(a->task) & r->window_mask];

	/* pto_get_stats() reads live during a run */
	STAT_ADD(r->live, (uint32_t)(a->head - r->head));
	r->head = a->head;
	t->task = a->task;
	t->end = a->head;
	if (r->live)
		tm->active |= 1u << PTO_TASK_RING(a->task);
}

/*
 * One access by a task as its only one: pto_tm_key(), then the adds.
 * -ENOSPC when the task's ring's pool is full.
 */
int pto_tm_insert(struct pto_tensormap *tm, uint64_t base, uint64_t begin,
		  uint64_t end, bool writer, uint64_t task, uint64_t order,
		  uint64_t owner);

/* Free the entries of a retired task (in task order within its ring). */
void pto_tm_retire_task(struct pto_tensormap *tm, uint64_t task);

static inline uint32_t pto_tm_free_entries(const struct pto_tensormap *tm,
					   uint32_t ring)
{
	return tm->ring[ring].pool_size - tm->ring[ring].live;
}

#endif /* PTO_LIB_TENSORMAP_H */
