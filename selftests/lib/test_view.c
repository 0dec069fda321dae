// SPDX-License-Identifier: MIT
/*
 * The canonical byte shape of a strided view and the overlap and covers
 * tests on it (lib/view.c), against a brute-force oracle: each view's
 * bytes as a bitmap of a small tensor.
 *
 *  - random views (tiles of two row-major matrices laid over the same
 *    bytes, transposed and split into more dimensions, rows, columns, byte
 *    views of elements, solid ranges, and views with random shapes and
 *    strides: 0, 1, permuted, overlapping themselves), every pair of a
 *    round of them.  Checked: the canonical shape has the view's bytes,
 *    offset and extent, and the invariants view.h states (bad_canon());
 *    permuting the dimensions or giving the view as bytes does not change
 *    it, nor does splitting a dimension of a nested view.  Overlap is
 *    never wrong, and never MAYBE when one view is solid and the other
 *    nested, or both are nested with the same strides; covers is never
 *    true for a non-subset, and exact when a is solid or nested with
 *    dividing strides and b's strides are a's.  The MAYBE rate of the
 *    other pairs is reported;
 *  - the cases a user hits, named;
 *  - a rough cost per overlap call (diag only).
 *
 * Usage: test_view [seed]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "view.h"

#define MAXB 4096		/* largest tensor, bytes */
#define WORDS (MAXB / 64)
#define ROUNDS 100
#define NVIEWS 64		/* views per round: NVIEWS^2 pairs */

struct bits {
	uint64_t w[WORDS];
};

/* A view as a user gives it: elements of esz bytes. */
struct tview {
	uint64_t off;
	uint32_t ndim, esz;
	uint64_t shape[PTO_MAX_DIMS], stride[PTO_MAX_DIMS];
};

/* A row-major matrix in the tensor, in elements of esz bytes. */
struct mat {
	uint32_t esz;
	uint64_t base, ld, rows, cols;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* ---- the oracle ------------------------------------------------------ */

static void set_bit(struct bits *b, uint64_t i)
{
	if (i >= MAXB)
		bail_out("byte %" PRIu64 " outside the tensor", i);
	b->w[i / 64] |= 1ull << (i % 64);
}

/* Every index of an odometer over n[0..nd), outermost first. */
static bool next_index(uint64_t *i, const uint64_t *n, uint32_t nd)
{
	while (nd-- > 0) {
		if (++i[nd] < n[nd])
			return true;
		i[nd] = 0;
	}
	return false;
}

static void view_bits(struct bits *b, const struct tview *v)
{
	uint64_t i[PTO_MAX_DIMS] = { 0 }, e;
	uint32_t d;

	memset(b, 0, sizeof(*b));
	for (d = 0; d < v->ndim; d++)
		if (!v->shape[d])
			return;
	do {
		uint64_t el = v->off;

		for (d = 0; d < v->ndim; d++)
			el += i[d] * v->stride[d];
		for (e = 0; e < v->esz; e++)
			set_bit(b, el * v->esz + e);
	} while (next_index(i, v->shape, v->ndim));
}

static void shape_bits(struct bits *b, const struct pto_vshape *vs)
{
	uint64_t i[PTO_VSHAPE_DIMS] = { 0 };
	uint32_t d;

	memset(b, 0, sizeof(*b));
	if (!vs->ndim)
		return;
	do {
		uint64_t by = vs->off;

		for (d = 0; d < vs->ndim; d++)
			by += i[d] * vs->s[d];
		set_bit(b, by);
	} while (next_index(i, vs->n, vs->ndim));
}

static bool bits_meet(const struct bits *a, const struct bits *b)
{
	int i;

	for (i = 0; i < WORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

static bool bits_subset(const struct bits *a, const struct bits *b)
{
	int i;

	for (i = 0; i < WORDS; i++)
		if (b->w[i] & ~a->w[i])
			return false;
	return true;
}

/* ---- the classes that must be exact ---------------------------------- */

/* Inside each dimension, the view spans less than its stride. */
static bool nested(const struct pto_vshape *vs)
{
	uint64_t span = 0;
	uint32_t d;

	for (d = vs->ndim; d-- > 0;) {
		if (d + 1 < vs->ndim && span >= vs->s[d])
			return false;
		span += (vs->n[d] - 1) * vs->s[d];
	}
	return true;
}

/* Nested, and each stride divides the next larger one. */
static bool radix(const struct pto_vshape *vs)
{
	uint32_t d;

	for (d = 0; d + 1 < vs->ndim; d++)
		if (vs->s[d] % vs->s[d + 1])
			return false;
	return nested(vs);
}

static bool same_strides(const struct pto_vshape *a,
			 const struct pto_vshape *b)
{
	return a->ndim == b->ndim &&
	       !memcmp(a->s, b->s, a->ndim * sizeof(a->s[0]));
}

/* Every stride of b is one of a's. */
static bool strides_within(const struct pto_vshape *a,
			   const struct pto_vshape *b)
{
	uint32_t i, j;

	for (i = 0; i < b->ndim; i++) {
		for (j = 0; j < a->ndim && a->s[j] != b->s[i]; j++)
			;
		if (j == a->ndim)
			return false;
	}
	return true;
}

static bool overlap_exact(const struct pto_vshape *a,
			  const struct pto_vshape *b)
{
	if (pto_vshape_solid(a) && nested(b))
		return true;
	if (pto_vshape_solid(b) && nested(a))
		return true;
	return same_strides(a, b) && nested(a) && nested(b);
}

/* The pairs outside the exact classes, in 4 kinds (see the diag). */
static int general_class(const struct pto_vshape *a,
			 const struct pto_vshape *b)
{
	if (pto_vshape_solid(a) || pto_vshape_solid(b))
		return 0;
	if (same_strides(a, b))
		return 1;
	return nested(a) && nested(b) ? 2 : 3;
}

static bool covers_exact(const struct pto_vshape *a,
			 const struct pto_vshape *b)
{
	if (pto_vshape_solid(a) || !b->ndim)
		return true;
	return radix(a) && strides_within(a, b);
}

/*
 * What pto_vshape_make() guarantees of a canonical shape: strides
 * strictly decreasing, the innermost 1; counts >= 2 but the innermost's,
 * which is 1 only for one-byte elements; no two adjacent dimensions that
 * fold into one run; unused fields zero.  NULL when all hold.
 */
static const char *bad_canon(const struct pto_vshape *vs, uint32_t esz)
{
	uint32_t d;

	if (vs->__pad || vs->ndim > PTO_VSHAPE_DIMS)
		return "pad or ndim";
	for (d = vs->ndim; d < PTO_VSHAPE_DIMS; d++)
		if (vs->n[d] || vs->s[d])
			return "unused dimension not zero";
	if (!vs->ndim)
		return NULL;
	if (vs->s[vs->ndim - 1] != 1)
		return "innermost stride not 1";
	if (!vs->n[vs->ndim - 1] || (vs->n[vs->ndim - 1] < 2 && esz > 1))
		return "innermost count";
	for (d = 0; d + 1 < vs->ndim; d++) {
		if (vs->s[d] <= vs->s[d + 1])
			return "strides not strictly decreasing";
		if (vs->n[d] < 2)
			return "count < 2";
		if (vs->s[d] % vs->s[d + 1] == 0 &&
		    vs->s[d] / vs->s[d + 1] <= vs->n[d + 1])
			return "two dimensions that fold";
	}
	return NULL;
}

/* ---- printing -------------------------------------------------------- */

static void diag_tview(const char *name, const struct tview *v)
{
	char buf[256];
	int len = 0;
	uint32_t d;

	for (d = 0; d < v->ndim; d++)
		len += snprintf(buf + len, sizeof(buf) - len,
				" %" PRIu64 "x%" PRIu64, v->shape[d],
				v->stride[d]);
	diag("%s: off %" PRIu64 " esz %u shape x stride:%s", name, v->off,
	     v->esz, buf);
}

static void diag_vshape(const char *name, const struct pto_vshape *vs)
{
	char buf[256];
	int len = 0;
	uint32_t d;

	for (d = 0; d < vs->ndim; d++)
		len += snprintf(buf + len, sizeof(buf) - len,
				" %" PRIu64 "x%" PRIu64, vs->n[d], vs->s[d]);
	diag("%s: off %" PRIu64 " ndim %u n x s:%s", name, vs->off,
	     vs->ndim, buf);
}

/* ---- random views ---------------------------------------------------- */

static void rand_mat(struct mat *m, uint64_t tsz)
{
	uint64_t elems;

	m->esz = 1u << below(4);
	elems = tsz / m->esz;
	m->ld = 2 + below(min_u64(40, elems / 4) - 1);
	m->cols = 1 + below(m->ld);
	m->base = below(m->ld);
	m->rows = (elems - m->base - m->cols) / m->ld + 1;
}

/* Mostly small counts, to keep many pairs apart within one range. */
static uint64_t rand_count(uint64_t max)
{
	if (!below(64))
		return 0;
	if (below(2))
		return 1 + below(min_u64(max, 6));
	return 1 + below(max);
}

/* Split dimension d (count a * b) into a x b, both kept in place. */
static void split_dim(struct tview *v, uint32_t d)
{
	uint64_t n = v->shape[d], a, e;

	if (v->ndim >= PTO_MAX_DIMS || n < 4)
		return;
	for (a = 2 + below(n / 2); a > 1 && n % a; a--)
		;
	if (a < 2)
		return;
	for (e = v->ndim; e > d + 1; e--) {
		v->shape[e] = v->shape[e - 1];
		v->stride[e] = v->stride[e - 1];
	}
	v->ndim++;
	v->shape[d] = a;
	v->shape[d + 1] = n / a;
	v->stride[d + 1] = v->stride[d];
	v->stride[d] = v->stride[d] * (n / a);
}

static void permute(struct tview *v)
{
	uint32_t d, e;

	for (d = v->ndim; d > 1; d--) {
		uint64_t t;

		e = below(d);
		t = v->shape[d - 1];
		v->shape[d - 1] = v->shape[e];
		v->shape[e] = t;
		t = v->stride[d - 1];
		v->stride[d - 1] = v->stride[e];
		v->stride[e] = t;
	}
}

/* A tile of m, maybe transposed or split into 3 or 4 dimensions. */
static void rand_tile(struct tview *v, const struct mat *m)
{
	uint64_t r0 = below(m->rows), c0 = below(m->cols);

	v->esz = m->esz;
	v->ndim = 2;
	v->shape[0] = rand_count(m->rows - r0);
	v->shape[1] = rand_count(m->cols - c0);
	v->stride[0] = m->ld;
	v->stride[1] = 1;
	v->off = m->base + r0 * m->ld + c0;
	if (below(3) == 0)
		split_dim(v, 0);
	if (below(3) == 0)
		split_dim(v, v->ndim - 1);
	if (below(3) == 0)
		permute(v);
}

/* A row, a column or an element of m, or a part of a row. */
static void rand_line(struct tview *v, const struct mat *m)
{
	uint64_t r0 = below(m->rows), c0 = below(m->cols);

	v->esz = m->esz;
	v->ndim = 1;
	v->off = m->base + r0 * m->ld + c0;
	switch (below(3)) {
	case 0:
		v->off -= c0;
		v->shape[0] = m->cols;
		v->stride[0] = 1;
		break;
	case 1:
		v->off -= r0 * m->ld;
		v->shape[0] = m->rows;
		v->stride[0] = m->ld;
		break;
	default:
		v->shape[0] = rand_count(m->cols - c0);
		v->stride[0] = 1;
	}
}

/* A tile of m as bytes: all of them, or bytes j..j+k of each element. */
static void rand_bytes(struct tview *v, const struct mat *m)
{
	uint64_t r0 = below(m->rows), c0 = below(m->cols);
	uint64_t j = below(m->esz);

	v->esz = 1;
	v->ndim = 2;
	v->shape[0] = rand_count(m->rows - r0);
	v->shape[1] = rand_count(m->cols - c0);
	v->stride[0] = m->ld * m->esz;
	v->off = (m->base + r0 * m->ld + c0) * m->esz;
	if (below(2) || m->esz == 1) {
		v->shape[1] *= m->esz;
		v->stride[1] = 1;
	} else {
		v->ndim = 3;
		v->stride[1] = m->esz;
		v->shape[2] = 1 + below(m->esz - j);
		v->stride[2] = 1;
		v->off += j;
	}
}

static uint64_t view_span(const struct tview *v)
{
	uint64_t span = v->esz;
	uint32_t d;

	for (d = 0; d < v->ndim; d++)
		if (v->shape[d])
			span += (v->shape[d] - 1) * v->stride[d] * v->esz;
	return span;
}

/* Random shape and strides (0, overlapping, permuted), placed to fit. */
static void rand_general(struct tview *v, uint64_t tsz)
{
	uint32_t d;
	uint64_t span;

	v->esz = 1u << below(4);
	v->ndim = 1 + below(PTO_MAX_DIMS);
	for (d = 0; d < v->ndim; d++) {
		v->shape[d] = below(8) ? 1 + below(6) : below(2);
		v->stride[d] = below(5) ? below(24) : 0;
	}
	if (below(2)) {
		/* row-major over a random shape, then maybe permuted */
		uint64_t s = 1 + below(3);

		for (d = v->ndim; d-- > 0;) {
			v->stride[d] = s;
			s *= v->shape[d] + below(3);
		}
		permute(v);
	}
	for (d = 0; (span = view_span(v)) > tsz; d++)
		v->shape[d % v->ndim] = 1;
	v->off = below((tsz - span) / v->esz + 1);
}

/* Long dimensions of small strides that do not divide: not nested. */
static void rand_wild(struct tview *v, uint64_t tsz)
{
	uint32_t d;
	uint64_t span;

	v->esz = below(3) ? 1 : 2;
	v->ndim = 2 + below(2);
	for (d = 0; d < v->ndim; d++) {
		v->shape[d] = 2 + below(30);
		v->stride[d] = 2 + below(12);
	}
	for (d = 0; (span = view_span(v)) > tsz; d++)
		v->shape[d % v->ndim] /= 2;
	v->off = below((tsz - span) / v->esz + 1);
}

static void rand_view(struct tview *v, const struct mat *m, uint64_t tsz)
{
	memset(v, 0, sizeof(*v));
	switch (below(9)) {
	case 0:
	case 1:
		rand_tile(v, &m[0]);
		break;
	case 2:
		rand_tile(v, &m[1]);
		break;
	case 3:
		rand_line(v, &m[below(2)]);
		break;
	case 4:
		v->esz = 1u << below(4);
		v->ndim = 1;
		v->shape[0] = 1 + below(tsz / v->esz);
		v->stride[0] = 1;
		v->off = below(tsz / v->esz - v->shape[0] + 1);
		break;
	case 5:
		rand_bytes(v, &m[below(2)]);
		break;
	case 6:
		rand_wild(v, tsz);
		break;
	default:
		rand_general(v, tsz);
	}
}

static int make_view(struct pto_vshape *vs, const struct tview *v)
{
	return pto_vshape_make(vs, v->off, v->ndim, v->shape, v->stride,
			       v->esz);
}

/* ---- random: the canonical shape ------------------------------------- */

struct canon_stats {
	long views, bad_make, bad_bits, bad_inv, bad_perm, bad_split;
	long bad_bytes, bad_idem, bad_extent, bad_self;
	long split_nested, split_other, split_other_differ;
};

static bool same_vshape(const struct pto_vshape *a,
			const struct pto_vshape *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void fail_once(long *count, const char *what, const struct tview *v,
		      const struct pto_vshape *vs)
{
	if (!(*count)++) {
		diag("first failure: %s", what);
		diag_tview("view", v);
		diag_vshape("canonical", vs);
	}
}

/* The same bytes given another way must give the same shape. */
static void check_same_shape(struct canon_stats *st, const struct tview *v,
			     const struct pto_vshape *vs)
{
	struct pto_vshape o;
	struct tview t = *v;
	uint32_t d;

	permute(&t);
	if (make_view(&o, &t) || !same_vshape(&o, vs))
		fail_once(&st->bad_perm, "permuted dimensions", v, vs);
	t = *v;
	split_dim(&t, below(t.ndim));
	/* unique for nested views only: others may fold another way */
	if (make_view(&o, &t) || !same_vshape(&o, vs)) {
		if (nested(vs))
			fail_once(&st->bad_split, "split dimension", v, vs);
		else
			st->split_other_differ++;
	}
	st->split_nested += nested(vs);
	st->split_other += !nested(vs);
	if (v->ndim < PTO_MAX_DIMS) {
		/* as bytes: one more dimension for the element */
		t = *v;
		for (d = 0; d < t.ndim; d++)
			t.stride[d] *= t.esz;
		t.shape[t.ndim] = t.esz;
		t.stride[t.ndim++] = 1;
		t.off *= t.esz;
		t.esz = 1;
		if (make_view(&o, &t) || !same_vshape(&o, vs))
			fail_once(&st->bad_bytes, "as bytes", v, vs);
	}
	if (vs->ndim && vs->ndim <= PTO_MAX_DIMS &&
	    (pto_vshape_make(&o, vs->off, vs->ndim, vs->n, vs->s, 1) ||
	     !same_vshape(&o, vs)))
		fail_once(&st->bad_idem, "canonical shape made again", v, vs);
}

static void check_extent(struct canon_stats *st, const struct tview *v,
			 const struct pto_vshape *vs, const struct bits *b)
{
	int64_t lo = -1, hi = -1, i;

	for (i = 0; i < MAXB; i++)
		if (b->w[i / 64] >> (i % 64) & 1) {
			if (lo < 0)
				lo = i;
			hi = i;
		}
	if (lo < 0 ? pto_vshape_extent(vs) != 0 :
	    vs->off != (uint64_t)lo ||
	    pto_vshape_extent(vs) != (uint64_t)(hi - lo + 1))
		fail_once(&st->bad_extent, "offset or extent", v, vs);
}

static void check_canon(struct canon_stats *st, const struct tview *v,
			struct pto_vshape *vs, struct bits *b)
{
	struct bits cb;
	const char *why;

	st->views++;
	view_bits(b, v);
	if (make_view(vs, v)) {
		fail_once(&st->bad_make, "pto_vshape_make failed", v, vs);
		return;
	}
	shape_bits(&cb, vs);
	if (memcmp(&cb, b, sizeof(cb)))
		fail_once(&st->bad_bits, "bytes differ from the view's", v,
			  vs);
	why = bad_canon(vs, v->esz);
	if (why)
		fail_once(&st->bad_inv, why, v, vs);
	check_same_shape(st, v, vs);
	check_extent(st, v, vs, b);
	if (vs->ndim && (pto_vshape_overlap(vs, vs) != PTO_OVERLAP_YES ||
			 !pto_vshape_covers(vs, vs)))
		fail_once(&st->bad_self, "overlap or covers with itself", v,
			  vs);
}

/* ---- random: overlap and covers on every pair ------------------------ */

struct pair_stats {
	long pairs, meet, range_meet_apart, apart_no;
	long ov_wrong, ov_maybe_exact, exact, maybe;
	long exact_solid, exact_same;
	long general, general_maybe, first_maybe;
	long cat[4], cat_maybe[4];
	long cv_wrong, cv_inexact, cv_exact, cv_exact_true, cv_true;
};

static bool ranges_meet(const struct pto_vshape *a,
			const struct pto_vshape *b)
{
	uint64_t ea = pto_vshape_extent(a), eb = pto_vshape_extent(b);

	if (!ea || !eb)
		return false;
	return a->off < b->off + eb && b->off < a->off + ea;
}

static void fail_pair(long *count, const char *what, const struct tview *va,
		      const struct pto_vshape *a, const struct tview *vb,
		      const struct pto_vshape *b, int got)
{
	if (!(*count)++) {
		diag("first %s (got %d)", what, got);
		diag_tview("a", va);
		diag_vshape("a", a);
		diag_tview("b", vb);
		diag_vshape("b", b);
	}
}

static void check_pair(struct pair_stats *st, const struct tview *va,
		       const struct pto_vshape *a, const struct bits *ba,
		       const struct tview *vb, const struct pto_vshape *b,
		       const struct bits *bb)
{
	bool meet = bits_meet(ba, bb), sub = bits_subset(ba, bb);
	bool ex = overlap_exact(a, b), cex = covers_exact(a, b);
	enum pto_overlap ov = pto_vshape_overlap(a, b);
	bool cv = pto_vshape_covers(a, b);

	st->pairs++;
	st->meet += meet;
	if (!meet && ranges_meet(a, b)) {
		st->range_meet_apart++;
		st->apart_no += ov == PTO_OVERLAP_NO;
	}
	if ((ov == PTO_OVERLAP_NO && meet) || (ov == PTO_OVERLAP_YES && !meet))
		fail_pair(&st->ov_wrong, "failure: overlap wrong", va, a, vb, b, ov);
	st->maybe += ov == PTO_OVERLAP_MAYBE;
	if (ex) {
		st->exact++;
		st->exact_solid += pto_vshape_solid(a) || pto_vshape_solid(b);
		st->exact_same += same_strides(a, b) && a->ndim > 1;
		if (ov == PTO_OVERLAP_MAYBE)
			fail_pair(&st->ov_maybe_exact, "failure: MAYBE, must be exact",
				  va, a, vb, b, ov);
	} else {
		int c = general_class(a, b);

		st->general++;
		st->general_maybe += ov == PTO_OVERLAP_MAYBE;
		st->cat[c]++;
		st->cat_maybe[c] += ov == PTO_OVERLAP_MAYBE;
		if (ov == PTO_OVERLAP_MAYBE)
			fail_pair(&st->first_maybe, "MAYBE; share a byte?",
				  va, a, vb, b, meet);
	}
	st->cv_true += cv;
	if (cv && !sub)
		fail_pair(&st->cv_wrong, "failure: covers but not a subset", va, a, vb,
			  b, cv);
	if (cex) {
		st->cv_exact++;
		st->cv_exact_true += sub;
		if (cv != sub)
			fail_pair(&st->cv_inexact, "failure: covers inexact", va, a, vb,
				  b, cv);
	}
}

static void test_random(uint64_t seed)
{
	static struct tview v[NVIEWS];
	static struct pto_vshape vs[NVIEWS];
	static struct bits b[NVIEWS];
	struct canon_stats cs = { 0 };
	struct pair_stats ps = { 0 };
	struct mat m[2];
	int round, i, j;

	rng = seed ? seed : 1;
	for (round = 0; round < ROUNDS; round++) {
		uint64_t tsz = 512 + below(MAXB - 512 + 1);

		rand_mat(&m[0], tsz);
		rand_mat(&m[1], tsz);
		for (i = 0; i < NVIEWS; i++) {
			rand_view(&v[i], m, tsz);
			check_canon(&cs, &v[i], &vs[i], &b[i]);
		}
		for (i = 0; i < NVIEWS; i++)
			for (j = 0; j < NVIEWS; j++)
				check_pair(&ps, &v[i], &vs[i], &b[i], &v[j],
					   &vs[j], &b[j]);
	}

	ok(!cs.bad_make, "random: %ld views made (%ld failed)", cs.views,
	   cs.bad_make);
	ok(!cs.bad_bits, "random: canonical shape has the view's bytes (%ld "
	   "differ)", cs.bad_bits);
	ok(!cs.bad_inv, "random: canonical invariants hold (%ld not)",
	   cs.bad_inv);
	ok(!cs.bad_perm, "random: permuted dimensions, same shape (%ld not)",
	   cs.bad_perm);
	ok(!cs.bad_split, "random: a dimension split, same shape (%ld of %ld "
	   "nested views not)", cs.bad_split, cs.split_nested);
	diag("a dimension split: %ld of %ld views not nested fold to "
	     "another shape", cs.split_other_differ, cs.split_other);
	ok(!cs.bad_bytes, "random: the view as bytes, same shape (%ld not)",
	   cs.bad_bytes);
	ok(!cs.bad_idem, "random: canonical shape made again is itself (%ld "
	   "not)", cs.bad_idem);
	ok(!cs.bad_extent, "random: offset and extent are the bytes' (%ld "
	   "not)", cs.bad_extent);
	ok(!cs.bad_self, "random: each view overlaps and covers itself (%ld "
	   "not)", cs.bad_self);

	ok(!ps.ov_wrong, "random: overlap never wrong (%ld of %ld pairs)",
	   ps.ov_wrong, ps.pairs);
	ok(!ps.ov_maybe_exact, "random: overlap never MAYBE where exact (%ld "
	   "of %ld)", ps.ov_maybe_exact, ps.exact);
	ok(!ps.cv_wrong, "random: covers only subsets (%ld of %ld true)",
	   ps.cv_wrong, ps.cv_true);
	ok(!ps.cv_inexact, "random: covers exact where it must be (%ld of "
	   "%ld)", ps.cv_inexact, ps.cv_exact);
	/* the classes are really exercised */
	ok(ps.exact_solid > ps.pairs / 20 && ps.exact_same > ps.pairs / 20,
	   "random: exact pairs: %ld with a solid view, %ld same strides",
	   ps.exact_solid, ps.exact_same);
	ok(ps.range_meet_apart > ps.pairs / 20 &&
	   ps.cv_exact_true > ps.pairs / 100,
	   "random: %ld pairs apart within meeting ranges, %ld exactly "
	   "covered", ps.range_meet_apart, ps.cv_exact_true);
	diag("pairs %ld: %ld share a byte; %ld apart but ranges meet, %ld "
	     "of them NO", ps.pairs, ps.meet, ps.range_meet_apart,
	     ps.apart_no);
	diag("MAYBE: %ld of all pairs, %ld of %ld general pairs (%.2f%%)",
	     ps.maybe, ps.general_maybe, ps.general,
	     ps.general ? 100.0 * ps.general_maybe / ps.general : 0.0);
	diag("MAYBE by kind: one solid, the other not nested %ld of %ld; "
	     "same strides, not both nested %ld of %ld; both nested, "
	     "different strides %ld of %ld; others %ld of %ld",
	     ps.cat_maybe[0], ps.cat[0], ps.cat_maybe[1], ps.cat[1],
	     ps.cat_maybe[2], ps.cat[2], ps.cat_maybe[3], ps.cat[3]);
	diag("covers: %ld true, %ld pairs in its exact class", ps.cv_true,
	     ps.cv_exact);
}

/* ---- named cases ----------------------------------------------------- */

static struct pto_vshape mk(uint64_t off, uint32_t ndim,
			    const uint64_t *shape, const uint64_t *stride,
			    uint32_t esz)
{
	struct pto_vshape vs;
	int ret = pto_vshape_make(&vs, off, ndim, shape, stride, esz);

	if (ret)
		bail_out("pto_vshape_make: %d", ret);
	return vs;
}

#define LD 64	/* the named cases' matrix: 64 x 64 f32, row-major */

/* The h x w tile at (r, c) of the matrix. */
static struct pto_vshape tile(uint64_t r, uint64_t c, uint64_t h,
			      uint64_t w)
{
	uint64_t shape[2] = { h, w }, stride[2] = { LD, 1 };

	return mk(r * LD + c, 2, shape, stride, 4);
}

static struct pto_vshape row(uint64_t r)
{
	uint64_t shape[1] = { LD }, stride[1] = { 1 };

	return mk(r * LD, 1, shape, stride, 4);
}

static struct pto_vshape col(uint64_t c)
{
	uint64_t shape[1] = { LD }, stride[1] = { LD };

	return mk(c, 1, shape, stride, 4);
}

static struct pto_vshape bytes(uint64_t off, uint64_t n, uint64_t s)
{
	uint64_t shape[1] = { n }, stride[1] = { s };

	return mk(off, 1, shape, stride, 1);
}

static bool cov(struct pto_vshape a, struct pto_vshape b)
{
	return pto_vshape_covers(&a, &b);
}

static const char *const ov_name[] = { "NO", "YES", "MAYBE" };

static void ov_is(struct pto_vshape a, struct pto_vshape b,
		  enum pto_overlap want, const char *what)
{
	enum pto_overlap ab = pto_vshape_overlap(&a, &b);
	enum pto_overlap ba = pto_vshape_overlap(&b, &a);

	if (!ok(ab == want && ba == want, "%s: %s", what, ov_name[want]))
		diag("  got %s, reversed %s", ov_name[ab], ov_name[ba]);
}

static void test_tiles(void)
{
	struct pto_vshape t00 = tile(0, 0, 16, 16), t01 = tile(0, 16, 16, 16);

	ok(ranges_meet(&t00, &t01), "neighbour tiles: ranges meet");
	ov_is(t00, t01, PTO_OVERLAP_NO, "tile vs its right neighbour");
	ov_is(t00, tile(16, 0, 16, 16), PTO_OVERLAP_NO, "tile vs below");
	ov_is(t00, tile(16, 16, 16, 16), PTO_OVERLAP_NO, "tile vs diagonal");
	ov_is(tile(16, 0, 16, 16), t01, PTO_OVERLAP_NO,
	      "tile vs above-right");
	ov_is(t00, tile(0, 0, 16, 16), PTO_OVERLAP_YES, "same tile");
	ov_is(t00, tile(8, 8, 16, 16), PTO_OVERLAP_YES, "overlapping tile");
	ov_is(t00, tile(15, 15, 16, 16), PTO_OVERLAP_YES,
	      "tiles sharing one corner element");
	ov_is(t00, tile(0, 15, 4, 4), PTO_OVERLAP_YES,
	      "tiles sharing one column");
	ov_is(t00, tile(16, 15, 4, 4), PTO_OVERLAP_NO,
	      "tile just below the corner");
	ov_is(tile(0, 0, 16, 8), tile(4, 8, 4, 40), PTO_OVERLAP_NO,
	      "different-shape tiles side by side");
	ok(cov(t00, tile(4, 4, 8, 8)) &&
	   !cov(tile(4, 4, 8, 8), t00) &&
	   !cov(t00, tile(4, 4, 8, 16)),
	   "tile covers a tile inside it, not one sticking out");
}

static void test_rows_cols(void)
{
	ov_is(row(5), col(7), PTO_OVERLAP_YES, "row vs column");
	ov_is(row(5), row(6), PTO_OVERLAP_NO, "row vs next row");
	ov_is(row(5), row(5), PTO_OVERLAP_YES, "row vs same row");
	ov_is(col(7), col(8), PTO_OVERLAP_NO, "column vs next column");
	ov_is(col(7), tile(0, 8, 64, 8), PTO_OVERLAP_NO,
	      "column vs a tile of the columns right of it");
	ov_is(col(7), tile(30, 0, 2, 8), PTO_OVERLAP_YES,
	      "column vs a tile across it");
	ov_is(tile(2, 0, 3, LD), row(4), PTO_OVERLAP_YES,
	      "rows 2..4 vs row 4");
	ov_is(tile(2, 0, 3, LD), row(5), PTO_OVERLAP_NO,
	      "rows 2..4 vs row 5");
	ov_is(tile(5, 0, 1, 32), tile(5, 32, 1, 32), PTO_OVERLAP_NO,
	      "two halves of a row");
	ok(tile(2, 0, 3, LD).ndim == 1, "whole rows are solid");
	ok(cov(col(7), tile(3, 7, 9, 1)) &&
	   !cov(col(7), tile(3, 7, 9, 2)),
	   "a column covers a part of it only");
}

static void test_transpose(void)
{
	uint64_t shape[2] = { 7, 5 }, stride[2] = { 1, LD };
	struct pto_vshape t = tile(2, 3, 5, 7), tt;

	tt = mk(2 * LD + 3, 2, shape, stride, 4);
	ok(same_vshape(&t, &tt), "transposed tile: same canonical shape");
	ok(cov(t, tt) && cov(tt, t),
	   "transposed tile: covers both ways");
	ov_is(t, tt, PTO_OVERLAP_YES, "tile vs its transpose");
	ov_is(tile(2, 10, 5, 7), tt, PTO_OVERLAP_NO,
	      "tile vs the transpose of its neighbour");
}

static void test_dtypes(void)
{
	struct pto_vshape t = tile(0, 0, 16, 16);
	struct pto_vshape b = bytes((3 * LD + 4) * 4 + 2, 1, 1);
	struct pto_vshape cb = bytes(4 * 4 + 3, 16, LD * 4);
	uint64_t shape[2] = { 16, 64 }, stride[2] = { LD * 4, 1 };
	uint64_t shape16[2] = { 16, 32 }, stride16[2] = { LD * 2, 1 };
	struct pto_vshape u8, u16;

	ov_is(t, b, PTO_OVERLAP_YES, "f32 tile vs a byte of its element");
	ok(cov(t, b) && !cov(b, t),
	   "f32 tile covers a byte of it, not the other way");
	ov_is(t, bytes((3 * LD + 16) * 4 + 2, 1, 1), PTO_OVERLAP_NO,
	      "f32 tile vs a byte just right of it");
	ov_is(t, cb, PTO_OVERLAP_YES,
	      "f32 tile vs byte 3 of each element of its column 4");
	ok(cov(t, cb), "... and covers them");
	ov_is(tile(0, 16, 16, 16), cb, PTO_OVERLAP_NO,
	      "the next tile vs those bytes");
	ov_is(tile(0, 5, 16, 1), cb, PTO_OVERLAP_NO,
	      "column 5 vs those bytes of column 4");
	u8 = mk(0, 2, shape, stride, 1);
	u16 = mk(0, 2, shape16, stride16, 2);
	ok(same_vshape(&t, &u8) && same_vshape(&t, &u16),
	   "f32 tile, its u8 and u16 views: same canonical shape");
}

/* [2,3,4,5] f32, contiguous; slice i of dimension d (count len). */
static struct pto_vshape slice4(uint32_t d, uint64_t i, uint64_t len)
{
	uint64_t shape[4] = { 2, 3, 4, 5 }, stride[4] = { 60, 20, 5, 1 };

	shape[d] = len;
	return mk(i * stride[d], 4, shape, stride, 4);
}

static void test_4d(void)
{
	static const uint64_t dims[4] = { 2, 3, 4, 5 };
	struct pto_vshape all = slice4(0, 0, 2), s;
	bool nos = true, yess = true, holds = true;
	uint32_t d, e;

	ok(all.ndim == 1 && all.n[0] == 480 && all.s[0] == 1,
	   "4-D tensor: one solid range of 480 bytes");
	for (d = 0; d < 4; d++) {
		s = slice4(d, dims[d] - 1, 1);
		holds &= cov(all, s) &&
		       !cov(s, all);
		for (e = 0; e < 4; e++) {
			struct pto_vshape t = slice4(e, 0, 1);
			enum pto_overlap r = pto_vshape_overlap(&s, &t);

			if (e == d)
				nos &= r == PTO_OVERLAP_NO;
			else
				yess &= r == PTO_OVERLAP_YES;
		}
	}
	ok(nos, "4-D: different slices of one dimension: NO");
	ok(yess, "4-D: slices of different dimensions: YES");
	ok(holds, "4-D: the tensor covers each slice, not the reverse");
	s = slice4(1, 2, 1);
	ok(s.ndim == 2 && s.n[0] == 2 && s.s[0] == 240 && s.n[1] == 80 &&
	   s.s[1] == 1, "4-D: slice of dimension 1 is 2 runs of 80 bytes");
	s = slice4(3, 4, 1);
	ok(s.ndim == 2 && s.n[0] == 24 && s.s[0] == 20 && s.n[1] == 4 &&
	   s.s[1] == 1, "4-D: slice of dimension 3 is 24 elements 20 apart");
	ov_is(slice4(3, 0, 2), slice4(3, 2, 3), PTO_OVERLAP_NO,
	      "4-D: [0,2) vs [2,5) of the last dimension");
	ov_is(slice4(3, 0, 3), slice4(3, 2, 3), PTO_OVERLAP_YES,
	      "4-D: [0,3) vs [2,5) of the last dimension");
	ok(cov(slice4(2, 1, 3), slice4(2, 2, 1)) &&
	   !cov(slice4(2, 2, 1), slice4(2, 1, 3)),
	   "4-D: a slice range covers a slice in it");
}

static void test_range(void)
{
	struct pto_vshape r, r2;

	/* row 10, columns 8..39 */
	pto_vshape_range(&r, (10 * LD + 8) * 4, 32 * 4);
	ov_is(r, tile(8, 0, 8, 8), PTO_OVERLAP_NO,
	      "part of a row vs a tile left of it");
	ov_is(r, tile(8, 4, 8, 8), PTO_OVERLAP_YES,
	      "part of a row vs a tile across its start");
	ov_is(r, tile(8, 40, 8, 8), PTO_OVERLAP_NO,
	      "part of a row vs a tile right of it");
	ov_is(r, tile(9, 20, 3, 2), PTO_OVERLAP_YES,
	      "part of a row vs a tile across its middle");
	ok(cov(tile(10, 8, 1, 32), r) &&
	   cov(r, tile(10, 8, 1, 32)) &&
	   cov(r, tile(10, 9, 1, 4)) &&
	   !cov(r, tile(10, 9, 2, 4)),
	   "part of a row and tiles: covers");
	/* row 10 column 40 to row 11 column 7 */
	pto_vshape_range(&r2, (10 * LD + 40) * 4, 32 * 4);
	ov_is(r2, tile(8, 10, 8, 20), PTO_OVERLAP_NO,
	      "range across a row end vs a tile in the gap");
	ov_is(r2, tile(8, 0, 8, 8), PTO_OVERLAP_YES,
	      "range across a row end vs a tile at the next row's start");
	ov_is(r2, tile(8, 8, 8, 32), PTO_OVERLAP_NO,
	      "range across a row end vs the columns between");
	ov_is(r2, tile(8, 40, 8, 4), PTO_OVERLAP_YES,
	      "range across a row end vs a tile at its start");
	ok(pto_vshape_extent(&r2) == 128 && pto_vshape_solid(&r2),
	   "range: extent and solid");
}

static void test_errors(void)
{
	uint64_t shape[4] = { 4, 1, 1, 1 }, stride[4] = { 1, 1, 1, 1 };
	uint64_t big[2] = { 1ull << 33, 1ull << 62 };
	uint64_t bigs[2] = { 1ull << 31, 1 };
	struct pto_vshape vs;

	ok_eq(pto_vshape_make(&vs, UINT64_MAX / 4 + 1, 1, shape, stride, 4),
	      -EOVERFLOW, "offset in bytes overflows");
	ok_eq(pto_vshape_make(&vs, UINT64_MAX - 3, 1, shape, stride, 1),
	      -EOVERFLOW, "the end overflows");
	ok(!pto_vshape_make(&vs, UINT64_MAX - 4, 1, shape, stride, 1) &&
	   pto_vshape_extent(&vs) == 4 && vs.off == UINT64_MAX - 4,
	   "ending at the last byte below 2^64 - 1 fits");
	ok_eq(pto_vshape_make(&vs, 0, 1, (uint64_t[]){ 2 },
			      (uint64_t[]){ 1ull << 62 }, 8),
	      -EOVERFLOW, "stride in bytes overflows");
	ok_eq(pto_vshape_make(&vs, 0, 2, big, bigs, 1), -EOVERFLOW,
	      "a dimension's span overflows");
	ok_eq(pto_vshape_make(&vs, 0, 2, (uint64_t[]){ 2, 2 },
			      (uint64_t[]){ 1ull << 63, 1ull << 63 }, 1),
	      -EOVERFLOW, "the sum of spans overflows");
	ok(!pto_vshape_make(&vs, 0, 2, (uint64_t[]){ 1, 1ull << 60 },
			    (uint64_t[]){ UINT64_MAX, 0 }, 8) &&
	   vs.ndim == 1 && vs.n[0] == 8,
	   "count 1 with a huge stride, stride 0 with a huge count: fine");
	ok_eq(pto_vshape_make(&vs, 0, 0, shape, stride, 4), -EINVAL,
	      "ndim 0");
	ok_eq(pto_vshape_make(&vs, 0, PTO_MAX_DIMS + 1, shape, stride, 4),
	      -EINVAL, "ndim past PTO_MAX_DIMS");
	ok_eq(pto_vshape_make(&vs, 0, 1, shape, stride, 0), -EINVAL,
	      "elem_size 0");
	ok(!vs.ndim, "an error leaves an empty shape");
}

static void test_special(void)
{
	uint64_t shape[2] = { 3, 0 }, stride[2] = { LD, 1 };
	struct pto_vshape e = mk(5, 2, shape, stride, 4), t = tile(0, 0, 8, 8);
	uint64_t hi = 1ull << 61;
	struct pto_vshape h1, h2;

	ok(!e.ndim && !pto_vshape_extent(&e), "empty view: ndim 0, extent 0");
	ov_is(e, t, PTO_OVERLAP_NO, "empty view vs a tile around it");
	ok(cov(t, e) && !cov(e, t),
	   "the empty view is covered, covers nothing");
	/* tiles near the top of 64 bits */
	h1 = tile(0, 0, 4, 4);
	h2 = tile(0, 4, 4, 4);
	h1.off += hi;
	h2.off += hi;
	ov_is(h1, h2, PTO_OVERLAP_NO, "neighbour tiles at offset 2^61");
	h2.off -= 4;
	ov_is(h1, h2, PTO_OVERLAP_YES, "overlapping tiles at offset 2^61");
	ok(bytes(7, 5, 8).ndim == 2 && bytes(7, 5, 8).n[1] == 1,
	   "u8 column: innermost count 1, so it is not solid");
	ov_is(bytes(7, 5, 8), bytes(8, 5, 8), PTO_OVERLAP_NO,
	      "two interleaved u8 columns");
}

/* Where the search is bounded: never wrong, and it returns. */
static void test_bounded(void)
{
	uint64_t shape[2] = { 19, 30 }, stride[2] = { 8, 10 };
	struct pto_vshape a = bytes(5, 476, 8), b = mk(965, 2, shape, stride, 2);
	struct pto_vshape h1 = tile(0, 0, 4, 4), h2 = tile(0, 4, 4, 4);
	struct bits ba, bb;
	enum pto_overlap r = pto_vshape_overlap(&a, &b);

	shape_bits(&ba, &a);
	shape_bits(&bb, &b);
	ok(!bits_meet(&ba, &bb) && r != PTO_OVERLAP_YES,
	   "u8 column 8 apart vs a 2-D u16 view of other strides: %s",
	   ov_name[r]);
	/* rows 2^61 bytes apart: the search's sums would not fit */
	h1.s[0] = 1ull << 61;
	h2.s[0] = 1ull << 61;
	r = pto_vshape_overlap(&h1, &h2);
	ok(r != PTO_OVERLAP_YES, "tiles of rows 2^61 bytes apart: %s",
	   ov_name[r]);
	h2 = tile(0, 0, 1, 4);
	h2.off = 1ull << 63;
	ov_is(h1, h2, PTO_OVERLAP_NO, "... but past their range, at once");
}

/* ---- cost ------------------------------------------------------------ */

/* The answers summed, so that the calls are made. */
static long timing_sink;

static double ns_per_call(struct pto_vshape a, struct pto_vshape b)
{
	struct timespec t0, t1;
	long i, n = 200000;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		/* keep the compiler from hoisting the call */
		__asm__ volatile("" : "+m"(a));
		timing_sink += pto_vshape_overlap(&a, &b);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
	       n;
}

static void test_cost(void)
{
	diag("ns per overlap call: disjoint tiles in one row band %.1f, "
	     "in different bands %.1f, overlapping tiles %.1f, row vs "
	     "column %.1f, range vs tile %.1f",
	     ns_per_call(tile(0, 0, 16, 16), tile(0, 16, 16, 16)),
	     ns_per_call(tile(0, 0, 16, 16), tile(16, 16, 16, 16)),
	     ns_per_call(tile(0, 0, 16, 16), tile(8, 8, 16, 16)),
	     ns_per_call(row(5), col(7)),
	     ns_per_call(bytes(10 * LD * 4 + 160, 128, 1),
			 tile(8, 10, 8, 20)));
}

/* The helpers refuse a dimension the view does not have. */
static void test_helper_dims(void)
{
	static float m[16];
	struct pto_view v = pto_view_2d(m, PTO_DTYPE_F32, 2, 8, 8), t;

	t = pto_view_transpose(v, 0, 1);
	ok(t.ndim == 2 && t.shape[0] == 8 && t.shape[1] == 2 &&
	   t.stride[0] == 1 && t.stride[1] == 8,
	   "helpers: transpose of a 2-D view swaps shape and stride");
	ok_eq(pto_view_transpose(v, 0, 2).ndim, 0,
	      "helpers: transpose with a dimension past ndim: no dimensions");
	ok_eq(pto_view_slice(v, 2, 0, 1).ndim, 0,
	      "helpers: slice of a dimension past ndim: no dimensions");
	ok_eq(pto_view_slice(v, 1, 2, 4).ndim, 2,
	      "helpers: slice of a dimension it has keeps the view");
	ok_eq(pto_view_slice(v, 1, 4, 4).ndim, 2,
	      "helpers: slice up to the dimension's end keeps the view");
	ok_eq(pto_view_slice(v, 0, 1, 2).ndim, 0,
	      "helpers: slice past the dimension's end: no dimensions");
	ok_eq(pto_view_slice(v, 1, 9, 0).ndim, 0,
	      "helpers: slice starting past the end: no dimensions");
	ok_eq(pto_view_slice(v, 1, UINT64_MAX, 2).ndim, 0,
	      "helpers: slice whose end wraps around: no dimensions");
	ok_eq(pto_view_tile_2d(v, 1, 6, 1, 4).ndim, 0,
	      "helpers: a tile reaching past the matrix: no dimensions");
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20240611;
	struct timespec t0, t1;

	diag("seed %" PRIu64 " (test_view SEED to repeat another)", seed);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	test_random(seed);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag("random part: %.2f s", (t1.tv_sec - t0.tv_sec) +
	     (t1.tv_nsec - t0.tv_nsec) / 1e9);
	test_tiles();
	test_rows_cols();
	test_transpose();
	test_dtypes();
	test_4d();
	test_range();
	test_errors();
	test_special();
	test_bounded();
	test_cost();
	test_helper_dims();
	return tap_done();
}
