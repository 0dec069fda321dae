/* SPDX-License-Identifier: MIT */
/*
 * The pto_malloc() arena: a first-fit allocator over the part of the heap
 * region that is not the heap ring.
 */
#ifndef PTO_LIB_ARENA_H
#define PTO_LIB_ARENA_H

#include <stdint.h>

struct pto_arena;

/* An arena handing out offsets in [base, base + size). */
struct pto_arena *pto_arena_create(uint64_t base, uint64_t size);
void pto_arena_destroy(struct pto_arena *a);
/* The offset of size bytes, 64-byte aligned, or -ENOMEM. */
int64_t pto_arena_alloc(struct pto_arena *a, uint64_t size);
/*
 * 0; -EALREADY when off is in memory not allocated (freed already), -EFAULT
 * when inside an allocation but not at its start, -EINVAL outside.
 */
int pto_arena_free(struct pto_arena *a, uint64_t off);

#endif /* PTO_LIB_ARENA_H */
