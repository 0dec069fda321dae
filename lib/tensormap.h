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
 * Entries are allocated from the pool as a ring, in task order, and chains
 * are singly linked newest-first.  Nothing is ever unlinked: the entries of
 * retired tasks are simply behind the ring's tail, and since positions fall
 * along every chain, a walk stops at the first position behind the tail
 * (all further ones are older still).  Retiring a task is one store, an
 * insert touches its own entry and one bucket head per chain, and a full
 * pool is back-pressure, never an allocation.
 */
#ifndef PTO_LIB_TENSORMAP_H
#define PTO_LIB_TENSORMAP_H

#include <stdbool.h>
#include <stdint.h>

#define PTO_TM_MIN_LEVEL 6
#define PTO_TM_LEVELS 64
/* A lookup covering more blocks than this walks the level chain instead. */
#define PTO_TM_MAX_BLOCKS 8

/*
 * Links and bucket heads are ring positions + 1 (0 ends a chain).  A
 * position not behind the tail still holds the entry written there, so a
 * link is followed only while it points at or past the tail.
 */
struct pto_tm_entry {
	uint64_t base;
	uint64_t begin;
	uint64_t end;
	uint64_t task_id;
	uint64_t blk_next;	/* block chain */
	uint64_t lvl_next;	/* level chain (linked lazily: lvl_sync()) */
	uint32_t owner_gap;	/* 0, or task_id - owner + 1: see below */
	uint8_t level;
	uint8_t writer;
	uint8_t pad[2];
};

/* Bucket heads, one chain per kind: [0] readers, [1] writers. */
struct pto_tm_bucket {
	uint64_t head[2];
};

/* Where the entries of the task last in a window slot end. */
struct pto_tm_task {
	uint64_t task_id;
	uint64_t end;		/* ring position after its last entry */
};

struct pto_tensormap {
	struct pto_tm_entry *pool;
	uint32_t pool_size;
	uint32_t live;		/* entries in use: head - tail */
	uint64_t head;		/* next ring position to write */
	uint64_t ring_mask;	/* pool slots - 1 (a power of two) */
	uint64_t tail;		/* entries below belong to retired tasks */
	uint64_t lvl_synced;	/* entries below are in their level chains */
	struct pto_tm_bucket *blk_buckets;
	struct pto_tm_bucket *lvl_buckets;
	uint32_t bucket_mask;
	uint32_t window_mask;
	uint64_t level_mask[2];			/* levels that had entries */
	uint64_t level_last[2][PTO_TM_LEVELS];	/* newest position per level */
	struct pto_tm_task *tasks;	/* per task slot */
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
 * its block there.  Made once per access (pto_tm_key()) and used by both
 * the lookup and the insert of that access.
 */
struct pto_tm_key {
	uint64_t base;
	uint64_t begin;
	uint64_t end;
	unsigned int level;
	struct pto_tm_bucket *bucket;	/* NULL: empty range, not indexed */
};

void pto_tm_key(struct pto_tensormap *tm, struct pto_tm_key *k,
		uint64_t base, uint64_t begin, uint64_t end);

/*
 * Called for every live entry a lookup finds overlapping the range, with
 * the owner that entry records.
 */
typedef void (*pto_tm_visit_fn)(void *ctx, uint64_t task_id, uint64_t owner);

int pto_tm_init(struct pto_tensormap *tm, uint32_t pool_size,
		uint32_t task_window);
void pto_tm_destroy(struct pto_tensormap *tm);

/*
 * Visit the live tasks whose accesses overlap the key's range of its base:
 * writers always, readers too when as_writer.  Entries of tasks below
 * oldest_live are retired and end each chain walk, as does the newest
 * writer covering the whole range, which is returned (PTO_TM_NO_COVER:
 * none was found; every task visited is then newer than it).
 */
#define PTO_TM_NO_COVER UINT64_MAX
uint64_t pto_tm_lookup_key(struct pto_tensormap *tm,
			   const struct pto_tm_key *k, bool as_writer,
			   uint64_t oldest_live, pto_tm_visit_fn visit,
			   void *ctx);

/*
 * Record an access by task_id to a buffer owned by owner (or
 * PTO_TM_NO_OWNER); -ENOSPC when the pool is exhausted.
 */
int pto_tm_insert(struct pto_tensormap *tm, uint64_t base, uint64_t begin,
		  uint64_t end, bool writer, uint64_t task_id, uint64_t owner);
int pto_tm_insert_key(struct pto_tensormap *tm, const struct pto_tm_key *k,
		      bool writer, uint64_t task_id, uint64_t owner);

/* Free the entries of a retired task (call in task order). */
void pto_tm_retire_task(struct pto_tensormap *tm, uint64_t task_id);

static inline uint32_t pto_tm_free_entries(const struct pto_tensormap *tm)
{
	return tm->pool_size - tm->live;
}

#endif /* PTO_LIB_TENSORMAP_H */
