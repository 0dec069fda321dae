// SPDX-License-Identifier: MIT
/*
 * Checked mode: one memory reached through two bases (see alias.h).
 *
 * Per base, two hulls: of every byte accessed through it and of every byte
 * written.  To find the bases whose hulls meet an access without looking
 * at them all, each base is listed in the 64 KiB chunks of address space
 * its hull covers; a base whose hull covers more than WIDE_CHUNKS chunks
 * goes in a list looked at on every access instead, and an access that
 * wide looks at every base.  Both tables are open-addressed and stamped
 * with a generation, so that a reset (every pto_wait() of a program that
 * waits after each task) costs nothing per entry.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alias.h"
#include "log.h"

#define CHUNK_SHIFT 16
#define WIDE_CHUNKS 1024u

enum { ANY, WROTE };

struct hull {
	uint64_t lo, hi;	/* empty while lo >= hi */
	uint64_t id;		/* the task that last grew it */
	uint32_t param;		/* and its parameter */
};

struct base_rec {
	uint64_t base;
	struct hull h[2];	/* [ANY], [WROTE] */
	bool wide;		/* in the wide list, not in chunks */
};

struct slot {
	uint64_t key;
	uint32_t gen;		/* valid while it is the table's */
	uint32_t val;
};

/* A base listed in a chunk: the next of the chunk's list, + 1 (0 ends). */
struct node {
	uint32_t rec;
	uint32_t next;
};

struct table {
	struct slot *s;
	uint32_t mask;
	uint32_t used;
};

struct pto_alias {
	uint32_t gen;
	bool off;		/* out of memory since the last reset */
	struct base_rec *rec;
	uint32_t nrec, rec_cap;
	struct node *node;
	uint32_t nnode, node_cap;
	uint32_t *wide;
	uint32_t nwide, wide_cap;
	struct table bases;	/* base -> index in rec */
	struct table chunks;	/* chunk -> first node, + 1 */
};

static uint32_t slot_hash(uint64_t key)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
}

static struct slot *slot_find(const struct table *t, uint32_t gen,
			      uint64_t key)
{
	uint32_t i;

	for (i = slot_hash(key) & t->mask;; i = (i + 1) & t->mask)
		if (t->s[i].gen != gen || t->s[i].key == key)
			return &t->s[i];
}

static int table_init(struct table *t, uint32_t size)
{
	t->s = calloc(size, sizeof(*t->s));
	t->mask = size - 1;
	t->used = 0;
	return t->s ? 0 : -ENOMEM;
}

/* Room for one more key: at most half full, so that probes stay short. */
static int table_room(struct table *t, uint32_t gen)
{
	struct table bigger;
	uint32_t i;

	if ((t->used + 1) * 2 <= t->mask + 1)
		return 0;
	if (table_init(&bigger, (t->mask + 1) * 2))
		return -ENOMEM;
	for (i = 0; i <= t->mask; i++)
		if (t->s[i].gen == gen)
			*slot_find(&bigger, gen, t->s[i].key) = t->s[i];
	bigger.used = t->used;
	free(t->s);
	*t = bigger;
	return 0;
}

/* Make room for one more of n elements of size sz in *arr (cap *cap). */
static int grow(void *arr, uint32_t n, uint32_t *cap, size_t sz)
{
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*(void **)arr, (size_t)*cap * 2 * sz);
	if (!p)
		return -ENOMEM;
	*(void **)arr = p;
	*cap *= 2;
	return 0;
}

struct pto_alias *pto_alias_new(void)
{
	struct pto_alias *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->gen = 1;
	a->rec_cap = 64;
	a->node_cap = 64;
	a->wide_cap = 64;
	a->rec = malloc(a->rec_cap * sizeof(*a->rec));
	a->node = malloc(a->node_cap * sizeof(*a->node));
	a->wide = malloc(a->wide_cap * sizeof(*a->wide));
	if (!a->rec || !a->node || !a->wide || table_init(&a->bases, 128) ||
	    table_init(&a->chunks, 128)) {
		pto_alias_free(a);
		return NULL;
	}
	return a;
}

void pto_alias_free(struct pto_alias *a)
{
	if (!a)
		return;
	free(a->rec);
	free(a->node);
	free(a->wide);
	free(a->bases.s);
	free(a->chunks.s);
	free(a);
}

void pto_alias_reset(struct pto_alias *a)
{
	if (!++a->gen) {	/* stamps about to repeat: clear them */
		memset(a->bases.s, 0, (a->bases.mask + 1) * sizeof(struct slot));
		memset(a->chunks.s, 0,
		       (a->chunks.mask + 1) * sizeof(struct slot));
		a->gen = 1;
	}
	a->nrec = 0;
	a->nnode = 0;
	a->nwide = 0;
	a->bases.used = 0;
	a->chunks.used = 0;
	a->off = false;
}

static bool meets(const struct hull *h, uint64_t lo, uint64_t hi)
{
	return h->lo < hi && lo < h->hi;
}

/* The hull of r that [lo, hi) meets where one side writes, or NULL. */
static const struct hull *clash(const struct base_rec *r, uint64_t base,
				uint64_t lo, uint64_t hi, bool writer)
{
	if (r->base == base)
		return NULL;
	if (meets(&r->h[WROTE], lo, hi))
		return &r->h[WROTE];
	return writer && meets(&r->h[ANY], lo, hi) ? &r->h[ANY] : NULL;
}

static uint64_t chunks_of(uint64_t lo, uint64_t hi)
{
	return ((hi - 1) >> CHUNK_SHIFT) - (lo >> CHUNK_SHIFT) + 1;
}

/* The base whose hulls [lo, hi) clashes with, or NULL. */
static const struct base_rec *find_clash(const struct pto_alias *a,
					 uint64_t base, uint64_t lo,
					 uint64_t hi, bool writer)
{
	uint64_t c;
	uint32_t i;

	for (i = 0; i < a->nwide; i++)
		if (clash(&a->rec[a->wide[i]], base, lo, hi, writer))
			return &a->rec[a->wide[i]];
	if (chunks_of(lo, hi) > WIDE_CHUNKS) {
		for (i = 0; i < a->nrec; i++)
			if (clash(&a->rec[i], base, lo, hi, writer))
				return &a->rec[i];
		return NULL;
	}
	for (c = lo >> CHUNK_SHIFT; c <= (hi - 1) >> CHUNK_SHIFT; c++) {
		const struct slot *s = slot_find(&a->chunks, a->gen, c);

		for (i = s->gen == a->gen ? s->val : 0; i;
		     i = a->node[i - 1].next)
			if (clash(&a->rec[a->node[i - 1].rec], base, lo, hi,
				  writer))
				return &a->rec[a->node[i - 1].rec];
	}
	return NULL;
}

static int list_in_chunk(struct pto_alias *a, uint32_t rec, uint64_t c)
{
	struct slot *s;

	if (table_room(&a->chunks, a->gen) ||
	    grow(&a->node, a->nnode, &a->node_cap, sizeof(*a->node)))
		return -ENOMEM;
	s = slot_find(&a->chunks, a->gen, c);
	if (s->gen != a->gen) {
		*s = (struct slot){ .key = c, .gen = a->gen, .val = 0 };
		a->chunks.used++;
	}
	a->node[a->nnode++] = (struct node){ .rec = rec, .next = s->val };
	s->val = a->nnode;
	return 0;
}

/* List rec in chunks [from, to] (none when from > to). */
static int list_in_chunks(struct pto_alias *a, uint32_t rec, uint64_t from,
			  uint64_t to)
{
	for (; from <= to; from++)
		if (list_in_chunk(a, rec, from))
			return -ENOMEM;
	return 0;
}

static struct base_rec *base_rec(struct pto_alias *a, uint64_t base,
				 uint32_t *idx)
{
	struct slot *s;

	if (table_room(&a->bases, a->gen) ||
	    grow(&a->rec, a->nrec, &a->rec_cap, sizeof(*a->rec)))
		return NULL;
	s = slot_find(&a->bases, a->gen, base);
	if (s->gen != a->gen) {
		*s = (struct slot){ .key = base, .gen = a->gen,
				    .val = a->nrec };
		a->bases.used++;
		a->rec[a->nrec++] = (struct base_rec){
			.base = base,
			.h = { { UINT64_MAX, 0, 0, 0 }, { UINT64_MAX, 0, 0, 0 } },
		};
	}
	*idx = s->val;
	return &a->rec[s->val];
}

static void grow_hull(struct hull *h, uint64_t lo, uint64_t hi, uint64_t id,
		      uint32_t i)
{
	if (lo < h->lo)
		h->lo = lo;
	if (hi > h->hi)
		h->hi = hi;
	h->id = id;
	h->param = i;
}

/*
 * Record the access in its base's hulls, and list the base in the chunks
 * its hull of any access newly covers (it only grows, at either end).
 */
static int record(struct pto_alias *a, uint64_t base, uint64_t lo,
		  uint64_t hi, bool writer, uint64_t id, uint32_t i)
{
	struct base_rec *r;
	uint64_t olo, ohi, nlo, nhi;
	bool was_empty;
	uint32_t idx;

	r = base_rec(a, base, &idx);
	if (!r)
		return -ENOMEM;
	was_empty = r->h[ANY].lo >= r->h[ANY].hi;
	olo = r->h[ANY].lo >> CHUNK_SHIFT;
	ohi = (r->h[ANY].hi - 1) >> CHUNK_SHIFT;
	grow_hull(&r->h[ANY], lo, hi, id, i);
	if (writer)
		grow_hull(&r->h[WROTE], lo, hi, id, i);
	if (r->wide)
		return 0;
	nlo = r->h[ANY].lo >> CHUNK_SHIFT;
	nhi = (r->h[ANY].hi - 1) >> CHUNK_SHIFT;
	if (nhi - nlo + 1 > WIDE_CHUNKS) {
		if (grow(&a->wide, a->nwide, &a->wide_cap, sizeof(*a->wide)))
			return -ENOMEM;
		r->wide = true;	/* its chunks' nodes stay, checked twice */
		a->wide[a->nwide++] = idx;
		return 0;
	}
	if (was_empty)
		return list_in_chunks(a, idx, nlo, nhi);
	if (nlo < olo && list_in_chunks(a, idx, nlo, olo - 1))
		return -ENOMEM;
	return nhi > ohi ? list_in_chunks(a, idx, ohi + 1, nhi) : 0;
}

/* SAME_TASK for id: the other access is the task's own */
#define SAME_TASK UINT64_MAX

static void say_clash(const char *fn, const struct pto_alias_access *x,
		      uint64_t id, uint32_t param, bool wrote, uint64_t base)
{
	char who[48];

	if (id == SAME_TASK)
		snprintf(who, sizeof(who), "its own parameter %u", param);
	else
		snprintf(who, sizeof(who), "task %" PRIu64 "'s parameter %u",
			 id, param);
	pto_log("%s: checked mode: parameter %u (%s %" PRIu64 " bytes at %p, "
		"base %p) reaches memory that %s %s through another base, "
		"%p: tasks are ordered by their accesses to the same base "
		"only (different bases never alias), so the two could run in "
		"either order; pass one base for one buffer and the distance "
		"into it as the offset\n", fn, x->param,
		x->writer ? "writing" : "reading", x->hi - x->lo,
		(void *)(uintptr_t)x->lo, (void *)(uintptr_t)x->base, who,
		wrote ? "writes" : "reads", (void *)(uintptr_t)base);
}

/* Two accesses of one task through different bases that clash. */
static bool clash_within(const struct pto_alias_access *x,
			 const struct pto_alias_access *y)
{
	return x->base != y->base && (x->writer || y->writer) &&
	       x->lo < y->hi && y->lo < x->hi;
}

static int check_task(const struct pto_alias *a, const char *fn,
		      const struct pto_alias_access *acc, uint32_t n)
{
	const struct base_rec *r;
	const struct hull *h;
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		const struct pto_alias_access *x = &acc[i];

		r = find_clash(a, x->base, x->lo, x->hi, x->writer);
		if (r) {
			h = clash(r, x->base, x->lo, x->hi, x->writer);
			say_clash(fn, x, h->id, h->param, h == &r->h[WROTE],
				  r->base);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (clash_within(x, &acc[j])) {
				say_clash(fn, x, SAME_TASK, acc[j].param,
					  acc[j].writer, acc[j].base);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int pto_alias_task(struct pto_alias *a, const char *fn, uint64_t id,
		   const struct pto_alias_access *acc, uint32_t n)
{
	uint32_t i;
	int ret;

	if (a->off)
		return 0;
	ret = check_task(a, fn, acc, n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		if (record(a, acc[i].base, acc[i].lo, acc[i].hi,
			   acc[i].writer, id, acc[i].param)) {
			pto_log("%s: checked mode: out of memory for the check "
				"of bases that alias; it stops until the next "
				"pto_wait() or run\n", fn);
			a->off = true;
			break;
		}
	}
	return 0;
}
