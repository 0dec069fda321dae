// SPDX-License-Identifier: MIT
/*
 * The bytes of an N-D strided view, and whether two views share one.
 * See view.h for the canonical shape.
 *
 * Two views a and b share a byte exactly when, with their strides merged
 * into one list s_0 > s_1 > ... (a view has count 1 in a stride it
 * lacks), some integers k_d in [1 - m_d, n_d - 1] (n: a's counts, m: b's)
 * give sum k_d * s_d == b.off - a.off: k_d is a's index minus b's.  The
 * search picks k_d from the outermost dimension in.  What the dimensions
 * inside can still add lies in one interval, so only the k_d that leave
 * the rest inside it are tried: when each view spans, inside a dimension,
 * less than that dimension's stride ("nested": tiles, rows and columns of
 * a row-major matrix) that is at most two a level.  Where one view's
 * dimensions inside are one solid run, a candidate whose other part lies
 * in it proves a shared byte at once.  Other layouts may have many
 * candidates a level; a work bound ends their search with MAYBE.
 */
#include <errno.h>
#include <string.h>

#include "view.h"

/* Nodes the overlap search may visit before it answers MAYBE. */
#define SEARCH_BUDGET 256

/* The search's sums of two extents must fit in an int64_t. */
#define SEARCH_MAX_EXTENT (1ull << 62)

/* Two views of 5 dimensions each share at least the stride 1. */
#define PAIR_DIMS (2 * PTO_VSHAPE_DIMS - 1)

struct vdim {
	uint64_t n, s;
};

/* By stride, largest first; there are at most PTO_VSHAPE_DIMS. */
static void sort_dims(struct vdim *dim, uint32_t nd)
{
	uint32_t i, j;

	for (i = 1; i < nd; i++) {
		struct vdim t = dim[i];

		for (j = i; j > 0 && dim[j - 1].s < t.s; j--)
			dim[j] = dim[j - 1];
		dim[j] = t;
	}
}

/*
 * Two dimensions make one arithmetic run when the outer stride is r inner
 * strides, r <= the inner count: {k * s_inner, k < (n_outer - 1) * r +
 * n_inner}.  That takes equal strides (r = 1) and a dimension continuing
 * the other (r = n_inner).  Since a view's bytes are the sums of one index
 * from each dimension, folding any such pair, adjacent or not, keeps them.
 * The folded span is the sum of the two spans, so no count overflows.
 */
static bool fold_one(struct vdim *dim, uint32_t *nd)
{
	uint32_t i, j;

	for (j = *nd; j-- > 1;) {
		for (i = j; i-- > 0;) {
			uint64_t r = dim[i].s / dim[j].s;

			if (dim[i].s % dim[j].s || r > dim[j].n)
				continue;
			dim[j].n += (dim[i].n - 1) * r;
			memmove(&dim[i], &dim[i + 1],
				(--*nd - i) * sizeof(*dim));
			return true;
		}
	}
	return false;
}

/*
 * The commonest view, a tile of a row-major matrix: two dimensions, rows
 * further apart than they are long, elements contiguous within a row.
 * Already canonical but for the byte unit; false when it is not one.
 */
static bool make_tile(struct pto_vshape *vs, uint64_t offset,
		      const uint64_t *shape, const uint64_t *stride,
		      uint32_t elem_size)
{
	uint64_t off, row, ld, span, end;

	if (stride[1] != 1 || shape[0] < 2 || shape[1] < 1 ||
	    stride[0] <= shape[1] ||
	    __builtin_mul_overflow(offset, elem_size, &off) ||
	    __builtin_mul_overflow(shape[1], elem_size, &row) ||
	    __builtin_mul_overflow(stride[0], elem_size, &ld) ||
	    __builtin_mul_overflow(shape[0] - 1, ld, &span) ||
	    __builtin_add_overflow(off, span, &end) ||
	    __builtin_add_overflow(end, row, &end))
		return false;	/* the general path says why */
	memset(vs, 0, sizeof(*vs));
	vs->off = off;
	vs->ndim = 2;
	vs->n[0] = shape[0];
	vs->s[0] = ld;
	vs->n[1] = row;
	vs->s[1] = 1;
	return true;
}

int pto_vshape_make(struct pto_vshape *vs, uint64_t offset, uint32_t ndim,
		    const uint64_t *shape, const uint64_t *stride,
		    uint32_t elem_size)
{
	struct vdim dim[PTO_VSHAPE_DIMS];
	uint64_t off, end;
	uint32_t d, nd = 0;

	if (ndim == 2 && elem_size &&
	    make_tile(vs, offset, shape, stride, elem_size))
		return 0;
	memset(vs, 0, sizeof(*vs));
	if (!ndim || ndim > PTO_MAX_DIMS || !elem_size)
		return -EINVAL;
	if (__builtin_mul_overflow(offset, elem_size, &off))
		return -EOVERFLOW;
	for (d = 0; d < ndim; d++)
		if (!shape[d]) {
			vs->off = off;
			return 0;
		}
	/* end, just past the last byte, fits too: extents are counts */
	if (__builtin_add_overflow(off, elem_size, &end))
		return -EOVERFLOW;
	for (d = 0; d < ndim; d++) {
		uint64_t s, span;

		/* one index, or all indices on the same elements */
		if (shape[d] < 2 || !stride[d])
			continue;
		if (__builtin_mul_overflow(stride[d], elem_size, &s) ||
		    __builtin_mul_overflow(shape[d] - 1, s, &span) ||
		    __builtin_add_overflow(end, span, &end))
			return -EOVERFLOW;
		dim[nd++] = (struct vdim){ shape[d], s };
	}
	dim[nd++] = (struct vdim){ elem_size, 1 };
	sort_dims(dim, nd);
	while (fold_one(dim, &nd))
		;
	vs->off = off;
	vs->ndim = nd;
	for (d = 0; d < nd; d++) {
		vs->n[d] = dim[d].n;
		vs->s[d] = dim[d].s;
	}
	return 0;
}

void pto_vshape_range(struct pto_vshape *vs, uint64_t off, uint64_t len)
{
	memset(vs, 0, sizeof(*vs));
	vs->off = off;
	if (!len)
		return;
	vs->ndim = 1;
	vs->n[0] = len;
	vs->s[0] = 1;
}

uint64_t pto_vshape_extent(const struct pto_vshape *vs)
{
	uint64_t e = 1;
	uint32_t d;

	if (!vs->ndim)
		return 0;
	for (d = 0; d < vs->ndim; d++)
		e += (vs->n[d] - 1) * vs->s[d];
	return e;
}

/*
 * Two views on one stride list (see the top), for the search.  ea[d] and
 * eb[d] are what a's and b's dimensions d and inside span (ea[nd] = 0).
 * From dimension sa (sb) in, a's (b's) bytes are one solid run: its counts
 * there are 1 but the innermost's, whose stride is 1.  g[d] is the gcd
 * of the strides from d in that either view moves along: all the parts
 * can add are its multiples.
 */
struct vpair {
	uint32_t nd, sa, sb;
	int budget;
	int64_t s[PAIR_DIMS];
	int64_t na[PAIR_DIMS], nb[PAIR_DIMS];
	int64_t ea[PAIR_DIMS + 1], eb[PAIR_DIMS + 1];
	int64_t g[PAIR_DIMS + 1];
};

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Both shapes are canonical, so both lists end with stride 1. */
static void pair_align(struct vpair *p, const struct pto_vshape *a,
		       const struct pto_vshape *b)
{
	uint32_t i = 0, j = 0, d = 0;

	while (i < a->ndim && j < b->ndim) {
		uint64_t s = a->s[i] > b->s[j] ? a->s[i] : b->s[j];

		p->s[d] = (int64_t)s;
		p->na[d] = a->s[i] == s ? (int64_t)a->n[i++] : 1;
		p->nb[d] = b->s[j] == s ? (int64_t)b->n[j++] : 1;
		d++;
	}
	p->nd = d;
	p->ea[d] = 0;
	p->eb[d] = 0;
	p->g[d] = 0;
	while (d-- > 0) {
		p->ea[d] = p->ea[d + 1] + (p->na[d] - 1) * p->s[d];
		p->eb[d] = p->eb[d + 1] + (p->nb[d] - 1) * p->s[d];
		p->g[d] = p->g[d + 1];
		if (p->g[d] != 1 && (p->na[d] > 1 || p->nb[d] > 1))
			p->g[d] = gcd64(p->s[d], p->g[d]);
	}
	for (p->sa = p->nd - 1; p->sa > 0 && p->na[p->sa - 1] == 1; p->sa--)
		;
	for (p->sb = p->nd - 1; p->sb > 0 && p->nb[p->sb - 1] == 1; p->sb--)
		;
	p->budget = SEARCH_BUDGET;
}

static int64_t floor_div(int64_t v, int64_t s)
{
	return v / s - (v % s < 0);
}

static int64_t ceil_div(int64_t v, int64_t s)
{
	return v / s + (v % s > 0);
}

static int64_t max64(int64_t x, int64_t y)
{
	return x > y ? x : y;
}

static int64_t min64(int64_t x, int64_t y)
{
	return x < y ? x : y;
}

/*
 * From dimension d in, a's part spans [0, ea[d]] and b's, moved by x,
 * [x, x + eb[d]]; they meet.  Is one a solid run holding the other?
 */
static bool solid_holds(const struct vpair *p, uint32_t d, int64_t x)
{
	if (d >= p->sa && d >= p->sb)
		return true;
	if (d >= p->sa && x >= 0 && x + p->eb[d] <= p->ea[d])
		return true;
	return d >= p->sb && x <= 0 && p->ea[d] - x <= p->eb[d];
}

/*
 * Does a candidate k in [lo, hi] of dimension d leave, at d + 1, a solid
 * run holding the other part (solid_holds() for x - k * s)?  Worked out
 * for all k at once, so a long row of candidates costs nothing.
 */
static bool child_solid_holds(const struct vpair *p, uint32_t d, int64_t x,
			      int64_t lo, int64_t hi)
{
	int64_t s = p->s[d], ea = p->ea[d + 1], eb = p->eb[d + 1];

	if (d + 1 >= p->sa && d + 1 >= p->sb)
		return true;
	if (d + 1 >= p->sa &&
	    max64(lo, ceil_div(x + eb - ea, s)) <= min64(hi, floor_div(x, s)))
		return true;
	return d + 1 >= p->sb &&
	       max64(lo, ceil_div(x, s)) <= min64(hi, floor_div(x - ea + eb, s));
}

/*
 * The k of dimension d that leave x - k * s within what the dimensions
 * inside can add, [-eb[d + 1], ea[d + 1]], and within the counts: one
 * division; a second only when the views are not nested there.
 */
static void candidates(const struct vpair *p, uint32_t d, int64_t x,
		       int64_t *lo, int64_t *hi)
{
	int64_t s = p->s[d], top = x + p->eb[d + 1];
	int64_t w = p->ea[d + 1] + p->eb[d + 1];
	int64_t q = floor_div(top, s), rem = top - q * s, k;

	/* k >= ceil((top - w) / s) = q + ceil((rem - w) / s) */
	if (rem > w)
		k = q + 1;
	else if (w - rem < s)
		k = q;
	else
		k = q - (w - rem) / s;
	*lo = max64(k, 1 - p->nb[d]);
	*hi = min64(q, p->na[d] - 1);
}

/*
 * Some k_d.. (see the top) with sum k_e * s_e == x?  The caller made sure
 * x is in [-eb[d], ea[d]]: the two parts' ranges meet.  Past the budget,
 * MAYBE, unless a shared byte was found.
 */
static enum pto_overlap search(struct vpair *p, uint32_t d, int64_t x)
{
	enum pto_overlap res = PTO_OVERLAP_NO, r;
	int64_t lo, hi, k;

	if (--p->budget < 0)
		return PTO_OVERLAP_MAYBE;
	/* at the innermost dimension both are solid: d + 1 < nd below */
	if (solid_holds(p, d, x))
		return PTO_OVERLAP_YES;
	if (p->g[d] > 1 && x % p->g[d])
		return PTO_OVERLAP_NO;
	candidates(p, d, x, &lo, &hi);
	if (lo > hi)
		return PTO_OVERLAP_NO;
	if (child_solid_holds(p, d, x, lo, hi))
		return PTO_OVERLAP_YES;
	for (k = lo; k <= hi; k++) {
		r = search(p, d + 1, x - k * p->s[d]);
		if (r == PTO_OVERLAP_YES)
			return r;
		if (r == PTO_OVERLAP_MAYBE) {
			res = r;
			if (p->budget < 0)
				break;
		}
	}
	return res;
}

enum pto_overlap pto_vshape_overlap(const struct pto_vshape *a,
				    const struct pto_vshape *b)
{
	uint64_t ea, eb;
	struct vpair p;
	int64_t x;

	if (!a->ndim || !b->ndim)
		return PTO_OVERLAP_NO;
	ea = pto_vshape_extent(a);
	eb = pto_vshape_extent(b);
	if (a->off >= b->off ? a->off - b->off >= eb : b->off - a->off >= ea)
		return PTO_OVERLAP_NO;
	/* the ranges meet: a first byte in common, or two solid ranges */
	if (a->off == b->off || (pto_vshape_solid(a) && pto_vshape_solid(b)))
		return PTO_OVERLAP_YES;
	if (ea > SEARCH_MAX_EXTENT || eb > SEARCH_MAX_EXTENT)
		return PTO_OVERLAP_MAYBE;
	x = a->off < b->off ? (int64_t)(b->off - a->off) :
			      -(int64_t)(a->off - b->off);
	pair_align(&p, a, b);
	return search(&p, 0, x);
}

/*
 * The index c of a's byte x bytes past its first, for all dimensions but
 * the innermost, whose offset in its run is returned.  Found greedily
 * from the outermost dimension: the only index when a is nested; for
 * another a, one of them or none (the innermost offset is then past its
 * count).
 */
static uint64_t index_of(const struct pto_vshape *a, uint64_t x,
			 uint64_t *c)
{
	uint32_t d;

	for (d = 0; d + 1 < a->ndim; d++) {
		c[d] = x / a->s[d];
		if (c[d] > a->n[d] - 1)
			c[d] = a->n[d] - 1;
		x -= c[d] * a->s[d];
	}
	return x;
}

/*
 * A sufficient test: b's first byte is a's index c, and each of b's
 * dimensions either has the stride of one of a's but the innermost, and c
 * there plus b's count stays within a's count, or lies, with the others
 * such, inside a's innermost run from c's offset in it.  Then every byte
 * of b is one of a's indices.  Necessary too when a is solid, and when
 * each of b's strides is one of a's, a is nested and each of its strides
 * divides the next larger: a's bytes are then the numbers whose digits in
 * that mixed radix are below a's counts.
 */
bool pto_vshape_covers(const struct pto_vshape *a, const struct pto_vshape *b)
{
	uint64_t c[PTO_VSHAPE_DIMS], x, ea, eb;
	uint32_t last, d, i;

	if (!b->ndim)
		return true;
	if (!a->ndim || b->off < a->off)
		return false;
	ea = pto_vshape_extent(a);
	eb = pto_vshape_extent(b);
	if (eb > ea || b->off - a->off > ea - eb)
		return false;
	if (pto_vshape_solid(a))
		return true;
	last = a->ndim - 1;
	x = index_of(a, b->off - a->off, c);
	/* both stride lists descend */
	for (i = 0, d = 0; i < b->ndim; i++) {
		while (d < last && a->s[d] > b->s[i])
			d++;
		if (d < last && a->s[d] == b->s[i]) {
			if (c[d] + b->n[i] > a->n[d])
				return false;
		} else {
			x += (b->n[i] - 1) * b->s[i];
		}
	}
	return x < a->n[last];
}
