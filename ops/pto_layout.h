/* SPDX-License-Identifier: (GPL-2.0 OR MIT) */
/*
 * Where a context's structures lie in its regions: one computation for
 * pto.ko and the simulator, so both lay out the same window and heap, and
 * libpto learns every offset from SETUP's answer rather than assuming one.
 *
 * Freestanding, like pto_ops.c: fixed-width types only.
 */
#ifndef PTO_LAYOUT_H
#define PTO_LAYOUT_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <linux/types.h>
#endif

#include <pto/pto_uapi.h>

/* Regions are mapped in pages; the header and the cring header take one. */
#define PTO_LAYOUT_PAGE		4096ull
/* Descriptor arrays and heap rings start on a line of their own. */
#define PTO_LAYOUT_LINE		64ull

/*
 * Reserve n bytes at *pos, aligned; *at gets their start.  Returns 0, or
 * -1 when the sum overflows.
 */
static inline int pto_layout_take(__u64 *pos, __u64 n, __u64 align, __u64 *at)
{
	__u64 p = (*pos + align - 1) & ~(align - 1);

	if (p < *pos || __builtin_add_overflow(p, n, pos))
		return -1;
	*at = p;
	return 0;
}

static inline __u64 pto_layout_page_align(__u64 n)
{
	return (n + PTO_LAYOUT_PAGE - 1) & ~(PTO_LAYOUT_PAGE - 1);
}

/**
 * pto_layout_rings_heap() - heap bytes the heap rings of a request take
 * @s: a SETUP request
 *
 * Each ring's heap starts on a page of its own (pto_layout()), so this is
 * where the pto_malloc() arena starts.
 */
static inline __u64 pto_layout_rings_heap(const struct pto_setup *s)
{
	__u64 sum = 0;
	__u32 r;

	for (r = 0; r < s->nrings && r < PTO_MAX_RINGS; r++)
		sum += pto_layout_page_align(s->ring[r].heap_size);
	return sum;
}

/**
 * pto_layout() - fill in SETUP's out fields from its in fields
 * @s: a SETUP request whose in fields were validated: nrings in
 *	1..PTO_MAX_RINGS, power-of-two ring sizes, 64-byte multiples for the
 *	heap rings
 * @num_cores: register blocks the device has
 *
 * Sets every offset inside the regions and every region size; the mmap
 * offsets (@s->window.offset and the like) are the device's to choose.
 * Returns 0, or -1 when the sizes overflow or the heap rings do not fit
 * in @s->heap_size.
 */
static inline int pto_layout(struct pto_setup *s, __u32 num_cores)
{
	__u64 win = 0, heap = 0, cring = 0, at;
	__u32 r;

	/* the header has a page of its own */
	if (pto_layout_take(&win, PTO_LAYOUT_PAGE, PTO_LAYOUT_PAGE,
			    &s->header_offset))
		return -1;
	for (r = 0; r < s->nrings; r++) {
		struct pto_ring_geometry *g = &s->ring[r];

		if (pto_layout_take(&win, (__u64)g->task_window *
				    sizeof(struct pto_task_desc),
				    PTO_LAYOUT_LINE, &g->desc_offset) ||
		    pto_layout_take(&win, (__u64)g->dep_pool_size *
				    sizeof(struct pto_dep_entry),
				    PTO_LAYOUT_LINE, &g->dep_offset) ||
		    pto_layout_take(&heap, g->heap_size, PTO_LAYOUT_PAGE,
				    &g->heap_offset))
			return -1;
	}
	if (pto_layout_take(&win, (__u64)s->order_ring_size * sizeof(__u64),
			    PTO_LAYOUT_LINE, &s->order_offset) ||
	    pto_layout_take(&win, (__u64)s->release_ring_size *
			    sizeof(struct pto_release_entry),
			    PTO_LAYOUT_LINE, &s->release_offset) ||
	    pto_layout_take(&heap, 0, PTO_LAYOUT_PAGE, &s->arena_offset))
		return -1;
	if (s->arena_offset > s->heap_size)
		return -1;
	s->window.size = pto_layout_page_align(win);
	s->heap.size = pto_layout_page_align(s->heap_size);
	s->regs_stride = sizeof(struct pto_core_regs);
	s->num_cores = num_cores;
	s->regs.size = pto_layout_page_align((__u64)num_cores *
					     s->regs_stride);
	if (pto_layout_take(&cring, PTO_LAYOUT_PAGE, PTO_LAYOUT_PAGE, &at) ||
	    pto_layout_take(&cring, (__u64)s->cring_size *
			    sizeof(struct pto_completion), PTO_LAYOUT_PAGE,
			    &s->cring_entries_offset))
		return -1;
	s->cring.size = pto_layout_page_align(cring);
	return 0;
}

#endif /* PTO_LAYOUT_H */
