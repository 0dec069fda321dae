/* SPDX-License-Identifier: MIT */
/*
 * The bytes of an N-D strided view, and whether two views share one.
 *
 * Orchestrator-private.  The TensorMap indexes every access by its
 * bounding byte range; for a view that is not one solid range it also
 * keeps the view's shape, and two accesses whose ranges meet conflict only
 * when pto_vshape_overlap() says they share a byte.
 *
 * A shape is kept canonical, in bytes: dimensions of one element dropped,
 * the rest sorted by stride (largest first), any two that together make
 * one arithmetic run merged (equal strides, or one continuing the other),
 * and the element's own bytes as the innermost dimension (stride 1),
 * merged with the next when the view is contiguous there.  So a solid
 * range is one dimension of stride 1, and a view and its transpose, or a
 * tile given as 2-D and as 4-D, have the same shape.
 *
 * A view is nested when, inside each of its dimensions, it spans less
 * than that dimension's stride: tiles, rows and columns of a row-major
 * matrix, slices of an N-D tensor.
 */
#ifndef PTO_LIB_VIEW_H
#define PTO_LIB_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include <pto/pto.h>

/* The element's bytes are a dimension too. */
#define PTO_VSHAPE_DIMS (PTO_MAX_DIMS + 1)

/**
 * struct pto_vshape - the bytes of a view, canonical (see above)
 * @off: bytes from the tensor's base to the view's first byte
 * @ndim: dimensions, 1..PTO_VSHAPE_DIMS; 0 for an empty view
 * @__pad: zero
 * @n: count along each dimension, every one >= 2 but the innermost, which
 *	is 1 only for one-byte elements no other dimension continues (a u8
 *	column: n = {rows, 1}, s = {ld, 1}, not solid)
 * @s: stride in bytes, strictly decreasing; s[ndim - 1] is always 1 (the
 *	element's bytes)
 *
 * The view's bytes: off + sum over d of i_d * s[d], 0 <= i_d < n[d].
 */
struct pto_vshape {
	uint64_t off;
	uint32_t ndim;
	uint32_t __pad;
	uint64_t n[PTO_VSHAPE_DIMS];
	uint64_t s[PTO_VSHAPE_DIMS];
};

/*
 * The canonical shape of a view (offset, shape and strides in elements of
 * elem_size bytes); a 0 in the shape gives an empty one.  -EOVERFLOW when
 * its offset in bytes, or the byte just past its last, does not fit in
 * 64 bits (so off + extent always does), -EINVAL for ndim 0 or past
 * PTO_MAX_DIMS or elem_size 0; *vs is then empty.
 */
int pto_vshape_make(struct pto_vshape *vs, uint64_t offset, uint32_t ndim,
		    const uint64_t *shape, const uint64_t *stride,
		    uint32_t elem_size);

/* A solid byte range [off, off + len) (len > 0) as a shape. */
void pto_vshape_range(struct pto_vshape *vs, uint64_t off, uint64_t len);

/* Bytes from off to just past the last byte (0 for an empty view). */
uint64_t pto_vshape_extent(const struct pto_vshape *vs);

/* One solid range of bytes (or empty)? */
static inline bool pto_vshape_solid(const struct pto_vshape *vs)
{
	return vs->ndim <= 1;
}

enum pto_overlap {
	PTO_OVERLAP_NO,		/* no byte in common: proven */
	PTO_OVERLAP_YES,	/* a byte in common: proven */
	PTO_OVERLAP_MAYBE,	/* not decided within the work bound */
};

/*
 * Do two views of one tensor share a byte?  Exact (never MAYBE) when one
 * is solid and the other nested, and when both are nested with the same
 * strides (tiles, rows and columns of one matrix, transposed views of it,
 * at any element size); otherwise exact within a bounded search, MAYBE
 * past it, which the TensorMap takes as a conflict.  Views of 2^62 bytes
 * or more are MAYBE unless their ranges alone decide.
 */
enum pto_overlap pto_vshape_overlap(const struct pto_vshape *a,
				    const struct pto_vshape *b);

/*
 * Is every byte of b also one of a's?  May answer false when it is (the
 * caller then only loses a shortcut); exact when a is solid, and when
 * each of b's strides is one of a's, a is nested and each of its strides
 * divides the next larger (tiles of one matrix, at any element size).
 */
bool pto_vshape_covers(const struct pto_vshape *a, const struct pto_vshape *b);

#endif /* PTO_LIB_VIEW_H */
