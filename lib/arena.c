// SPDX-License-Identifier: MIT
/*
 * The pto_malloc arena: device memory past the heap ring, handed out
 * first-fit in 64-byte granules.  Blocks are kept in address order, so
 * freeing merges with both neighbours in O(1) once the block is found.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "arena.h"
#include "rings.h"

struct arena_block {
	uint64_t off;
	uint64_t size;
	bool free;
	struct arena_block *prev, *next;
};

struct pto_arena {
	struct arena_block *head;
	uint64_t base, size;
};

struct pto_arena *pto_arena_create(uint64_t base, uint64_t size)
{
	struct pto_arena *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->base = base;
	a->size = size;
	if (size) {
		a->head = calloc(1, sizeof(*a->head));
		if (!a->head) {
			free(a);
			return NULL;
		}
		*a->head = (struct arena_block){ .off = base, .size = size,
						 .free = true };
	}
	return a;
}

void pto_arena_destroy(struct pto_arena *a)
{
	struct arena_block *b, *n;

	if (!a)
		return;
	for (b = a->head; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

int64_t pto_arena_alloc(struct pto_arena *a, uint64_t size)
{
	struct arena_block *b, *rest;

	if (!size || size > a->size)
		return -ENOMEM;
	size = pto_align_up(size, PTO_HEAP_ALIGN);
	for (b = a->head; b; b = b->next)
		if (b->free && b->size >= size)
			break;
	if (!b)
		return -ENOMEM;
	if (b->size > size) {
		rest = calloc(1, sizeof(*rest));
		if (!rest)
			return -ENOMEM;
		*rest = (struct arena_block){ .off = b->off + size,
					      .size = b->size - size,
					      .free = true, .prev = b,
					      .next = b->next };
		if (b->next)
			b->next->prev = rest;
		b->next = rest;
		b->size = size;
	}
	b->free = false;
	return (int64_t)b->off;
}

static void merge_next(struct arena_block *b)
{
	struct arena_block *n = b->next;

	b->size += n->size;
	b->next = n->next;
	if (n->next)
		n->next->prev = b;
	free(n);
}

int pto_arena_free(struct pto_arena *a, uint64_t off)
{
	struct arena_block *b;

	for (b = a->head; b; b = b->next)
		if (off >= b->off && off < b->off + b->size)
			break;
	if (!b || b->free)	/* free: given back already (merged, maybe) */
		return b ? -EALREADY : -EINVAL;
	if (b->off != off)
		return -EFAULT;
	b->free = true;
	if (b->next && b->next->free)
		merge_next(b);
	if (b->prev && b->prev->free)
		merge_next(b->prev);
	return 0;
}
