// SPDX-License-Identifier: MIT
/*
 * Random programs for the differential tests.  See randprog.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "randprog.h"
#include "runtime.h"

/* tensor parameters of a random task, at most */
#define RAND_NP 5

const char *const rp_pattern_names[RP_NPATTERNS] = {
	[RP_TRIVIAL] = "trivial", [RP_STENCIL] = "stencil_1d",
	[RP_FFT] = "fft", [RP_TREE] = "tree",
	[RP_ALL_TO_ALL] = "all_to_all", [RP_SPREAD] = "spread",
};

static uint64_t align64(uint64_t x)
{
	return (x + 63) & ~63ull;
}

/* ---- the kernel ---------------------------------------------------------- */

#define DESC(kind, nb) (((uint64_t)(kind) << 32) | (nb))
/* or'ed into a DESC(): the tensor is a view, its argument a descriptor */
#define DESC_VIEW (1ull << 48)
#define DESC_KIND(d) ((uint32_t)((d) >> 32) & 0xffff)

static struct tl_gate gate;
atomic_int rp_gate_timeouts;
atomic_int rp_core_overlaps;
/* per core: a task runs as it (pto_core_id()); two at once is a bug */
#define RP_CORES 256
static atomic_int core_busy[RP_CORES];
/* the replay runs the kernels without their delays */
static int replaying;

void rp_init(void)
{
	tl_gate_init(&gate);
}

/* Take delay ns: spin on the clock, or sleep. */
static void take_time(uint64_t delay)
{
	uint64_t ns = delay & ~RP_DELAY_SLEEP, until;
	struct timespec ts = { .tv_sec = ns / 1000000000ull,
			       .tv_nsec = ns % 1000000000ull };

	if (!ns || replaying)
		return;
	while (delay == RP_DELAY_FOREVER)
		pause();
	if (delay & RP_DELAY_SLEEP) {
		nanosleep(&ts, NULL);
		return;
	}
	until = tl_now_ns() + ns;
	while (tl_now_ns() < until)
		;
}

/* body for each element of descriptor d, in index order: e its address. */
#define FOR_EACH_ELEM(d, e, idx, body)					\
	do {								\
		uint64_t i0_, i1_, i2_, i3_;				\
		uint64_t idx = 0;					\
		for (i0_ = 0; i0_ < (d)->shape[0]; i0_++)		\
		for (i1_ = 0; i1_ < (d)->shape[1]; i1_++)		\
		for (i2_ = 0; i2_ < (d)->shape[2]; i2_++)		\
		for (i3_ = 0; i3_ < (d)->shape[3]; i3_++, idx++) {	\
			uint8_t *e = (uint8_t *)(uintptr_t)((d)->addr +	\
				(i0_ * (d)->stride[0] +			\
				 i1_ * (d)->stride[1] +			\
				 i2_ * (d)->stride[2] +			\
				 i3_ * (d)->stride[3]) * (d)->elem_size);	\
			body;						\
		}							\
	} while (0)

static uint64_t load_elem(const uint8_t *e, uint32_t es)
{
	uint64_t v = 0;

	memcpy(&v, e, es < 8 ? es : 8);
	return v;
}

static void store_elem(uint8_t *e, uint32_t es, uint64_t v)
{
	memcpy(e, &v, es < 8 ? es : 8);
}

/*
 * Hash a view parameter's descriptor, all of it (shape 1 and stride 0 past
 * ndim included), then, if it is read, its elements in index order.
 */
static uint64_t read_view(uint64_t h, const struct pto_view_desc *d,
			  int reads)
{
	uint32_t k, es = d->elem_size;

	h = tl_mix(h ^ d->ndim ^ (uint64_t)d->dtype << 8 ^
		   (uint64_t)d->elem_size << 24);
	for (k = 0; k < PTO_MAX_DIMS; k++)
		h = tl_mix(h ^ d->shape[k] ^ d->stride[k] << 32);
	if (reads)
		FOR_EACH_ELEM(d, e, idx, h = tl_mix(h ^ load_elem(e, es)));
	return h;
}

static void write_view(uint64_t h, const struct pto_view_desc *d,
		       uint32_t kind, uint64_t p)
{
	uint32_t es = d->elem_size;

	if (kind == PTO_PARAM_INOUT)
		FOR_EACH_ELEM(d, e, idx, store_elem(e, es,
			tl_mix(load_elem(e, es) + h + idx)));
	else if (kind == PTO_PARAM_OUTPUT || kind == PTO_PARAM_OUTPUT_EXISTING)
		FOR_EACH_ELEM(d, e, idx, store_elem(e, es,
			tl_mix(h ^ (idx << 8 | p))));
}

static int reads(uint32_t kind)
{
	return kind == PTO_PARAM_INPUT || kind == PTO_PARAM_INOUT ||
	       kind == PTO_PARAM_NODEP;
}

/*
 * tag, np, gated, delay, desc[np], addr[np]: hash the tag and every byte
 * read, then update INOUT bytes from their old value and overwrite OUTPUT
 * bytes.  Bytes, not words, so regions can meet and overlap at any byte.
 * A view (DESC_VIEW) is read and written element by element, in index
 * order, through its descriptor.  A gated task first waits until the
 * whole program has been submitted.
 */
static void k_rand(const uint64_t *a, uint32_t n)
{
	uint64_t h = tl_mix(a[0]), np = a[1], p, b;
	const uint64_t *desc = a + 4, *addr = a + 4 + np;
	int core = replaying ? -1 : pto_core_id();

	/* per-core scratch relies on a core running one task at a time */
	if (core >= 0 && core < RP_CORES &&
	    atomic_exchange(&core_busy[core], 1))
		atomic_fetch_add(&rp_core_overlaps, 1);
	if (a[2] && tl_gate_wait(&gate, 10000))
		atomic_fetch_add(&rp_gate_timeouts, 1);
	take_time(a[3]);
	for (p = 0; p < np; p++) {
		uint32_t kind = DESC_KIND(desc[p]), nb = (uint32_t)desc[p];
		const uint8_t *s = (const uint8_t *)(uintptr_t)addr[p];

		if (desc[p] & DESC_VIEW)
			h = read_view(h, (const struct pto_view_desc *)s,
				      reads(kind));
		else if (reads(kind))
			for (b = 0; b < nb; b++)
				h = tl_mix(h ^ s[b]);
	}
	for (p = 0; p < np; p++) {
		uint32_t kind = DESC_KIND(desc[p]), nb = (uint32_t)desc[p];
		uint8_t *d = (uint8_t *)(uintptr_t)addr[p];

		if (desc[p] & DESC_VIEW)
			write_view(h, (const struct pto_view_desc *)d, kind, p);
		else if (kind == PTO_PARAM_INOUT)
			for (b = 0; b < nb; b++)
				d[b] = (uint8_t)tl_mix(d[b] + h + b);
		else if (kind == PTO_PARAM_OUTPUT ||
			 kind == PTO_PARAM_OUTPUT_EXISTING)
			for (b = 0; b < nb; b++)
				d[b] = (uint8_t)tl_mix(h ^ (b << 8 | p));
	}
	if (core >= 0 && core < RP_CORES)
		atomic_store(&core_busy[core], 0);
}

void rp_deep_queues(struct pto_runtime *rt)
{
	rt->sched.pace.fixed_depth = PTO_CORE_QUEUE_SLOTS;
}

int rp_register(struct tl_rec *rec, const struct rp_cfg *cfg)
{
	int t, ret;

	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		if (!cfg->cores[t])
			continue;
		ret = tl_register(rec, t + 1, t, k_rand, "rand");
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- the generator's bookkeeping ----------------------------------------- */

/* The bytes of any buffer, as bits: shared ones, OUTPUTs, pto_alloc()s. */
#define BUF_MAX 512
#define BW (BUF_MAX / 64)

/*
 * A buffer seen as a matrix of dtype elements (es bytes), rows ld apart:
 * what most views of it cut tiles, rows and columns out of.
 */
struct layout {
	uint8_t es, dtype;
	uint16_t ld;
};

struct gen {
	struct tl_rng *rng;
	struct rp_prog *pg;
	const struct rp_cfg *cfg;
	int ntypes, types[PTO_NUM_WORKER_TYPES];	/* with cores */
	uint64_t task_bytes[RP_MAX_TASKS];	/* heap ring bytes per task */
	int task_ring[RP_MAX_TASKS];	/* the task ring it goes to */
	int depth;
	int first_held[RP_MAX_DEPTH + 1];	/* per open scope, -1: none */
	int live[RP_MAX_OUTS], nlive;	/* outputs alive now */
	int live_depth[RP_MAX_OUTS];
	int views;			/* views and pto_alloc() too */
	struct layout lay[RP_NSHARED + 1 + RP_MAX_OUTS];	/* home layouts */
	int alloc_of[RP_MAX_OUTS];	/* a pto_alloc()'s slot + 1, or 0 */
	uint64_t init[RP_MAX_TASKS][BW];	/* its bytes written so far */
	int nallocs;
};

static void gen_init(struct gen *g, struct rp_prog *pg, struct tl_rng *rng,
		     const struct rp_cfg *cfg)
{
	int t;

	memset(pg, 0, sizeof(*pg));
	memset(g, 0, sizeof(*g));
	g->rng = rng;
	g->pg = pg;
	g->cfg = cfg;
	g->first_held[0] = -1;
	pg->edges = -1;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
		if (cfg->cores[t])
			g->types[g->ntypes++] = t;
}

/* The task ring of a scope depth, as the runtime picks it. */
static int ring_of(const struct gen *g, int depth)
{
	int n = (int)g->cfg->nrings;

	return depth < n ? depth : n - 1;
}

static int random_type(struct gen *g)
{
	return g->types[tl_range(g->rng, 0, g->ntypes - 1)];
}

static uint32_t buf_bytes(const struct gen *g, int buf)
{
	return buf >= RP_OUT_BASE ? g->pg->out_nb[buf - RP_OUT_BASE] :
				    RP_SH_BYTES;
}

/* ---- bytes as bits ------------------------------------------------------- */

static void bits_range(uint64_t *b, uint32_t off, uint32_t nb)
{
	uint32_t i;

	if (off + nb > BUF_MAX)
		bail_out("randprog: range %u+%u past %u bytes", off, nb,
			 BUF_MAX);
	for (i = off; i < off + nb; i++)
		b[i / 64] |= 1ull << (i % 64);
}

/* A view's elements, in index order: fn(elem index in the buffer). */
#define FOR_EACH_VIEW_ELEM(v, x, body)					\
	do {								\
		uint32_t j0_, j1_, j2_, j3_;				\
		for (j0_ = 0; j0_ < (v)->shape[0]; j0_++)		\
		for (j1_ = 0; j1_ < (v)->shape[1]; j1_++)		\
		for (j2_ = 0; j2_ < (v)->shape[2]; j2_++)		\
		for (j3_ = 0; j3_ < (v)->shape[3]; j3_++) {		\
			uint32_t x = (v)->off + j0_ * (v)->stride[0] +	\
				j1_ * (v)->stride[1] +			\
				j2_ * (v)->stride[2] +			\
				j3_ * (v)->stride[3];			\
			body;						\
		}							\
	} while (0)

static void bits_view(uint64_t *b, const struct rp_view *v)
{
	uint32_t es = pto_dtype_size(v->dtype);

	FOR_EACH_VIEW_ELEM(v, x, bits_range(b, x * es, es));
}

/* The bytes of its buffer a parameter accesses (an OUTPUT: all). */
static void param_bits(const struct rp_param *q, uint64_t *b)
{
	memset(b, 0, BW * sizeof(*b));
	if (q->view && q->kind != PTO_PARAM_OUTPUT)
		bits_view(b, &q->v);
	else
		bits_range(b, q->kind == PTO_PARAM_OUTPUT ? 0 : q->off, q->nb);
}

static int bits_meet(const uint64_t *a, const uint64_t *b)
{
	int i;

	for (i = 0; i < BW; i++)
		if (a[i] & b[i])
			return 1;
	return 0;
}

static int bits_within(const uint64_t *a, const uint64_t *b)
{
	int i;

	for (i = 0; i < BW; i++)
		if (a[i] & ~b[i])
			return 0;
	return 1;
}

static int reads_kind(int kind)
{
	return kind == PTO_PARAM_INPUT || kind == PTO_PARAM_INOUT ||
	       kind == PTO_PARAM_NODEP;
}

static int writes_kind(int kind)
{
	return kind != PTO_PARAM_INPUT && kind != PTO_PARAM_NODEP;
}

/* The bits of a pto_alloc() buffer written so far, or NULL. */
static uint64_t *alloc_init(struct gen *g, int buf)
{
	int slot = buf >= RP_OUT_BASE ? g->alloc_of[buf - RP_OUT_BASE] : 0;

	return slot ? g->init[slot - 1] : NULL;
}

/* Reads of a pto_alloc() buffer only where tasks wrote it before. */
static int readable(struct gen *g, const struct rp_param *q)
{
	uint64_t *init = alloc_init(g, q->buf), b[BW];

	if (!init || !reads_kind(q->kind))
		return 1;
	param_bits(q, b);
	return bits_within(b, init);
}

static void mark_init(struct gen *g, const struct rp_param *q)
{
	uint64_t *init = alloc_init(g, q->buf), b[BW];
	int i;

	/* the pto_alloc() itself, an OUTPUT, writes nothing */
	if (!init || !writes_kind(q->kind) || q->kind == PTO_PARAM_OUTPUT)
		return;
	param_bits(q, b);
	for (i = 0; i < BW; i++)
		init[i] |= b[i];
}

/* The oldest task an open scope holds in a ring (ntasks: none). */
static int oldest_held(const struct gen *g, int ring)
{
	int d, oldest = g->pg->ntasks;

	for (d = 0; d <= g->depth; d++)
		if (ring_of(g, d) == ring && g->first_held[d] >= 0 &&
		    g->first_held[d] < oldest)
			oldest = g->first_held[d];
	return oldest;
}

/* Tasks of a ring from the oldest one an open scope holds to a new one. */
static int held_span(const struct gen *g, int ring)
{
	int t, n = 1;

	for (t = oldest_held(g, ring); t < g->pg->ntasks; t++)
		n += g->task_ring[t] == ring;
	return n;
}

/*
 * The same for the ring's heap: the bytes of its OUTPUTs from the oldest
 * held task on, which the in-order heap ring cannot reuse until it retires.
 */
static uint64_t held_bytes(const struct gen *g, int ring)
{
	int t;
	uint64_t bytes = 0;

	for (t = oldest_held(g, ring); t < g->pg->ntasks; t++)
		if (g->task_ring[t] == ring)
			bytes += g->task_bytes[t];
	return bytes;
}

/*
 * Most a task takes from the heap ring (RAND_NP OUTPUTs of 128 bytes, each
 * aligned to 64 and padded to 64), and as much again for the padding a
 * block that would straddle the end of the ring leaves behind.
 */
#define TASK_HEAP_MAX (2 * RAND_NP * 192)
/* With views, also a block of RAND_NP view descriptors (80 bytes each). */
#define TASK_HEAP_MAX_VIEWS (2 * (RAND_NP * 192 + 448))

/* May one more task taking heap bytes be submitted at the current depth? */
static int fits(const struct gen *g, uint64_t heap)
{
	int ring = ring_of(g, g->depth);

	return g->pg->ntasks < RP_MAX_TASKS &&
	       held_span(g, ring) <= (int)g->cfg->window[ring] - 1 &&
	       held_bytes(g, ring) + heap <= g->cfg->heap[ring];
}

static int task_fits(const struct gen *g)
{
	return fits(g, g->views ? TASK_HEAP_MAX_VIEWS : TASK_HEAP_MAX);
}

static void gen_begin(struct gen *g)
{
	g->pg->ops[g->pg->nops++].op = RP_BEGIN;
	g->first_held[++g->depth] = -1;
}

static void gen_end(struct gen *g)
{
	int i;

	/* outputs of the closing scope die here */
	for (i = 0; i < g->nlive; i++)
		if (g->live_depth[i] == g->depth) {
			g->pg->out_dies[g->live[i] - RP_OUT_BASE] = g->pg->nops;
			g->live[i] = g->live[--g->nlive];
			g->live_depth[i] = g->live_depth[g->nlive];
			i--;
		}
	g->pg->ops[g->pg->nops++].op = RP_END;
	g->depth--;
}

/* Close every scope; the outer scope's outputs die when the run ends. */
static void gen_finish(struct gen *g)
{
	int i;

	while (g->depth > 0)
		gen_end(g);
	for (i = 0; i < g->pg->nouts; i++)
		if (g->pg->out_dies[i] < 0)
			g->pg->out_dies[i] = g->pg->nops;
}

/* A new OUTPUT parameter of nb bytes. */
static struct rp_param new_output(struct gen *g, uint32_t nb)
{
	struct rp_prog *pg = g->pg;
	struct rp_param q = { .kind = PTO_PARAM_OUTPUT,
			      .buf = RP_OUT_BASE + pg->nouts, .nb = nb };

	pg->out_nb[pg->nouts] = nb;
	pg->out_born[pg->nouts] = pg->nops;
	pg->out_dies[pg->nouts] = -1;
	pg->nouts++;
	return q;
}

/* Account for the task just built at ops[nops]. */
static void gen_commit(struct gen *g)
{
	struct rp_op *t = &g->pg->ops[g->pg->nops];
	int i, k = g->pg->ntasks, nviews = 0;

	g->task_bytes[k] = 0;
	g->task_ring[k] = ring_of(g, g->depth);
	for (i = 0; i < t->np; i++) {
		nviews += t->p[i].view;
		mark_init(g, &t->p[i]);
		if (t->p[i].kind == PTO_PARAM_OUTPUT) {
			g->live[g->nlive] = t->p[i].buf;
			g->live_depth[g->nlive++] = g->depth;
			g->task_bytes[k] += align64(t->p[i].nb);
		}
	}
	/* the view descriptors, 80 bytes each, in the same heap block */
	if (nviews)
		g->task_bytes[k] += align64(nviews * 80);
	if (g->first_held[g->depth] < 0)
		g->first_held[g->depth] = k;
	g->pg->ntasks++;
	g->pg->nops++;
}

/* ---- random programs ----------------------------------------------------- */

/* Does q share a byte with a parameter of t? */
static int overlaps(const struct rp_op *t, const struct rp_param *q)
{
	uint64_t a[BW], b[BW];
	int i;

	param_bits(q, a);
	for (i = 0; i < t->np; i++) {
		if (t->p[i].buf != q->buf)
			continue;
		param_bits(&t->p[i], b);
		if (bits_meet(a, b))
			return 1;
	}
	return 0;
}

static int pick_buf(struct gen *g, int writable)
{
	int n = RP_NSHARED + (writable ? 0 : 1) + g->nlive;
	int k = (int)tl_range(g->rng, 0, n - 1);

	if (k < RP_NSHARED + (writable ? 0 : 1))
		return k;
	return g->live[k - RP_NSHARED - (writable ? 0 : 1)];
}

static int random_kind(struct gen *g, int must_write)
{
	uint32_t r = tl_range(g->rng, 0, 99);

	if (must_write)
		r = 40 + r % 48;	/* INOUT, OUTPUT_EXISTING or OUTPUT */
	if (r < 35)
		return PTO_PARAM_INPUT;
	if (r < 60)
		return PTO_PARAM_INOUT;
	if (r < 78)
		return PTO_PARAM_OUTPUT_EXISTING;
	if (r < 92)
		return PTO_PARAM_OUTPUT;
	return PTO_PARAM_NODEP;
}

/* A region of buf: half word-aligned (the common case), half at any byte. */
static void random_region(struct gen *g, struct rp_param *q)
{
	uint32_t nb = buf_bytes(g, q->buf), max;

	if (nb >= 8 && tl_range(g->rng, 0, 1)) {
		q->off = 8 * tl_range(g->rng, 0, nb / 8 - 1);
		max = (nb - q->off) / 8 < 12 ? (nb - q->off) / 8 : 12;
		q->nb = 8 * tl_range(g->rng, 1, max);
	} else {
		q->off = tl_range(g->rng, 0, nb - 1);
		max = nb - q->off < 96 ? nb - q->off : 96;
		q->nb = tl_range(g->rng, 1, max);
	}
}

/* ---- views ------------------------------------------------------------- */

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* A dtype of at most max bytes (max >= 1). */
static uint8_t random_dtype(struct gen *g, uint32_t max)
{
	static const uint8_t types[4][4] = {
		{ PTO_DTYPE_U8, PTO_DTYPE_I8, PTO_DTYPE_U8, PTO_DTYPE_I8 },
		{ PTO_DTYPE_U16, PTO_DTYPE_I16, PTO_DTYPE_F16, PTO_DTYPE_BF16 },
		{ PTO_DTYPE_U32, PTO_DTYPE_I32, PTO_DTYPE_F32, PTO_DTYPE_U32 },
		{ PTO_DTYPE_U64, PTO_DTYPE_I64, PTO_DTYPE_F64, PTO_DTYPE_U64 },
	};
	uint32_t lg = tl_range(g->rng, 0, 3);

	while ((1u << lg) > max)
		lg--;
	return types[lg][tl_range(g->rng, 0, 3)];
}

static struct layout random_layout(struct gen *g, uint32_t nb)
{
	struct layout l;
	uint32_t e;

	l.dtype = random_dtype(g, nb);
	l.es = pto_dtype_size(l.dtype);
	e = nb / l.es;
	l.ld = tl_range(g->rng, 1, min32(e, 24));
	return l;
}

static struct layout *home(struct gen *g, int buf)
{
	struct layout *l = &g->lay[buf < RP_OUT_BASE ? buf :
				   RP_NSHARED + 1 + buf - RP_OUT_BASE];

	if (!l->es)
		*l = random_layout(g, buf_bytes(g, buf));
	return l;
}

static void view_2d(struct rp_view *v, uint32_t off, uint32_t rows,
		    uint32_t cols, uint32_t ld, uint32_t col_stride)
{
	v->ndim = 2;
	v->off = off;
	v->shape[0] = rows;
	v->shape[1] = cols;
	v->stride[0] = ld;
	v->stride[1] = col_stride;
}

/* Drop dimension d of v (rows or columns of one). */
static void drop_dim(struct rp_view *v, uint32_t d)
{
	for (; d + 1 < v->ndim; d++) {
		v->shape[d] = v->shape[d + 1];
		v->stride[d] = v->stride[d + 1];
	}
	v->ndim--;
}

/* A dimension of shape n and stride st before dimension d. */
static void insert_dim(struct rp_view *v, uint32_t d, uint32_t n,
		       uint32_t st)
{
	uint32_t k;

	for (k = v->ndim; k > d; k--) {
		v->shape[k] = v->shape[k - 1];
		v->stride[k] = v->stride[k - 1];
	}
	v->shape[d] = n;
	v->stride[d] = st;
	v->ndim++;
}

/* Split dimension d in two, outer and inner, if there is room: 3-D, 4-D. */
static void split_dim(struct gen *g, struct rp_view *v, uint32_t d)
{
	uint32_t n = v->shape[d], b;

	if (v->ndim >= PTO_MAX_DIMS || n < 2)
		return;
	b = tl_range(g->rng, 2, n);
	while (n % b)
		b--;
	if (b == 1 || b == n) {
		/* prime: an outer dimension of 1 of any stride instead */
		insert_dim(v, d, 1, tl_range(g->rng, 0, 999));
		return;
	}
	v->shape[d] = b;
	insert_dim(v, d, n / b, v->stride[d] * b);
}

static void transpose(struct gen *g, struct rp_view *v)
{
	uint32_t d0 = tl_range(g->rng, 0, v->ndim - 1), d1, t;

	d1 = (d0 + tl_range(g->rng, 1, v->ndim - 1)) % v->ndim;
	t = v->shape[d0];
	v->shape[d0] = v->shape[d1];
	v->shape[d1] = t;
	t = v->stride[d0];
	v->stride[d0] = v->stride[d1];
	v->stride[d1] = t;
}

/* Dimensions past ndim as libpto fills them: shape 1, stride 0. */
static void pad_view(struct rp_view *v, uint32_t nb)
{
	uint32_t d, last = v->off, es = pto_dtype_size(v->dtype), empty = 0;

	for (d = 0; d < PTO_MAX_DIMS; d++) {
		if (d >= v->ndim) {
			v->shape[d] = 1;
			v->stride[d] = 0;
		}
		empty |= !v->shape[d];
		if (v->shape[d])
			last += (v->shape[d] - 1) * v->stride[d];
	}
	if ((empty ? v->off : last + 1) * es > nb)
		bail_out("randprog: a view past its buffer's %u bytes", nb);
}

/*
 * The tile r0, c0 of nr x nc of matrix layout l at element off0, in one
 * of the forms that share their strides with every other tile (exact
 * overlaps): 2-D, transposed, split into 3-D or 4-D, a row or a column as
 * 1-D.
 */
static void tile_view(struct gen *g, struct rp_view *v, struct layout l,
		      uint32_t off0, uint32_t r0, uint32_t nr, uint32_t c0,
		      uint32_t nc)
{
	uint32_t f = tl_range(g->rng, 0, 9);

	memset(v, 0, sizeof(*v));
	v->dtype = l.dtype;
	view_2d(v, off0 + r0 * l.ld + c0, nr, nc, l.ld, 1);
	if (f < 2 && (nr == 1 || nc == 1))
		drop_dim(v, nr == 1 ? 0 : 1);
	else if (f < 4)
		split_dim(g, v, tl_range(g->rng, 0, 1));
	else if (f < 5)
		split_dim(g, v, 0), split_dim(g, v, v->ndim - 1);
	if (v->ndim >= 2 && tl_range(g->rng, 0, 9) < 3)
		transpose(g, v);
}

/*
 * A random view of q->buf for q->kind: mostly of the buffer's home
 * layout, sometimes of another dtype or row length, or from another
 * element on; a tile, rows, a column, a strided slice, a blocked 4-D view,
 * a run of elements, split or transposed, for reading maybe broadcast,
 * rarely empty.
 */
static void make_view(struct gen *g, struct rp_param *q)
{
	uint32_t nb = buf_bytes(g, q->buf), e, off0 = 0, R, C, ld;
	uint32_t r0, nr, c0, nc, f, sr, sc, tr, tc;
	struct layout l = tl_range(g->rng, 0, 9) < 7 ? *home(g, q->buf) :
			  random_layout(g, nb);
	struct rp_view *v = &q->v;

	q->view = 1;
	q->off = q->nb = 0;
	e = nb / l.es;
	if (tl_range(g->rng, 0, 9) == 0)
		off0 = tl_range(g->rng, 0, min32(e - 1, 7));
	e -= off0;
	ld = l.ld = min32(l.ld, e);
	R = e / ld;
	C = tl_range(g->rng, 0, 3) ? ld : tl_range(g->rng, 1, ld);
	r0 = tl_range(g->rng, 0, R - 1);
	nr = tl_range(g->rng, 1, R - r0);
	c0 = tl_range(g->rng, 0, C - 1);
	nc = tl_range(g->rng, 1, C - c0);
	f = tl_range(g->rng, 0, 99);
	if (f < 10) {			/* the whole matrix */
		r0 = c0 = 0;
		nr = R;
		nc = C;
	} else if (f < 20) {		/* whole rows */
		c0 = 0;
		nc = C;
	} else if (f < 28) {		/* a column */
		nc = 1;
	}
	tile_view(g, v, l, off0, r0, nr, c0, nc);
	if (f >= 40 && f < 52) {	/* every sr-th row, sc-th column */
		sr = tl_range(g->rng, 1, 3);
		sc = sr > 1 ? tl_range(g->rng, 1, 2) : 2;
		memset(v, 0, sizeof(*v));
		v->dtype = l.dtype;
		view_2d(v, off0 + r0 * ld + c0, (nr + sr - 1) / sr,
			(nc + sc - 1) / sc, ld * sr, sc);
	} else if (f >= 52 && f < 62) {	/* blocked: tr x tc tiles of tiles */
		tr = tl_range(g->rng, 1, nr);
		tc = tl_range(g->rng, 1, nc);
		while (nr % tr)
			tr--;
		while (nc % tc)
			tc--;
		memset(v, 0, sizeof(*v));
		v->dtype = l.dtype;
		v->ndim = 4;
		v->off = off0 + r0 * ld + c0;
		v->shape[0] = nr / tr;
		v->shape[1] = nc / tc;
		v->shape[2] = tr;
		v->shape[3] = tc;
		v->stride[0] = tr * ld;
		v->stride[1] = tc;
		v->stride[2] = ld;
		v->stride[3] = 1;
		if (tl_range(g->rng, 0, 1))
			transpose(g, v);
	} else if (f >= 62 && f < 70) {	/* a run of elements */
		memset(v, 0, sizeof(*v));
		v->dtype = l.dtype;
		v->ndim = 1;
		r0 = tl_range(g->rng, 0, e - 1);
		v->off = off0 + r0;
		v->shape[0] = tl_range(g->rng, 1, e - r0);
		v->stride[0] = 1;
	}
	/* a broadcast: a dimension that repeats the same elements */
	if (!writes_kind(q->kind) && v->ndim < PTO_MAX_DIMS &&
	    tl_range(g->rng, 0, 99) < 15)
		insert_dim(v, tl_range(g->rng, 0, v->ndim),
			   tl_range(g->rng, 1, 3), 0);
	if (tl_range(g->rng, 0, 99) < 4)
		v->shape[tl_range(g->rng, 0, v->ndim - 1)] = 0;
	pad_view(v, nb);
}

/* A new OUTPUT view of up to 4 dimensions and 128 bytes. */
static struct rp_param new_output_view(struct gen *g)
{
	struct rp_param q;
	struct rp_view v = { .dtype = random_dtype(g, 128) };
	uint32_t es = pto_dtype_size(v.dtype), n = 1, d, big, st = 1;

	v.ndim = tl_range(g->rng, 1, PTO_MAX_DIMS);
	for (d = 0; d < v.ndim; d++) {
		v.shape[d] = tl_range(g->rng, 1, 6);
		n *= v.shape[d];
	}
	while (n * es > 128) {
		for (big = 0, d = 1; d < v.ndim; d++)
			if (v.shape[d] > v.shape[big])
				big = d;
		n = n / v.shape[big] * (v.shape[big] - 1);
		v.shape[big]--;
	}
	for (d = v.ndim; d-- > 0;) {
		v.stride[d] = st;
		st *= v.shape[d];
	}
	pad_view(&v, n * es);
	q = new_output(g, n * es);
	q.view = 1;
	q.v = v;
	/* later views see it as rows of its innermost dimension */
	g->lay[RP_NSHARED + 1 + q.buf - RP_OUT_BASE] = (struct layout){
		.es = es, .dtype = v.dtype, .ld = v.shape[v.ndim - 1] };
	return q;
}

static void gen_param(struct gen *g, struct rp_op *t, int must_write)
{
	struct rp_param q = { .kind = random_kind(g, must_write) };
	int tries;

	if (q.kind == PTO_PARAM_OUTPUT) {
		if (g->views && tl_range(g->rng, 0, 1))
			t->p[t->np++] = new_output_view(g);
		else
			t->p[t->np++] = new_output(g, tl_range(g->rng, 1, 128));
		return;
	}
	for (tries = 0; tries < 6; tries++) {
		q.buf = q.kind == PTO_PARAM_NODEP ? RP_CONST_BUF :
			pick_buf(g, q.kind != PTO_PARAM_INPUT);
		if (g->views && tl_range(g->rng, 0, 99) < 65) {
			make_view(g, &q);
		} else {
			q.view = 0;
			random_region(g, &q);
		}
		if (readable(g, &q) && !overlaps(t, &q)) {
			t->p[t->np++] = q;
			return;
		}
	}
}

static int writes(const struct rp_param *q)
{
	return q->kind != PTO_PARAM_INPUT && q->kind != PTO_PARAM_NODEP;
}

static void gen_task(struct gen *g, int max_np)
{
	struct rp_op *t = &g->pg->ops[g->pg->nops];
	int i, np = tl_range(g->rng, 1, max_np), w = 0;

	memset(t, 0, sizeof(*t));
	t->op = RP_TASK;
	t->type = random_type(g);
	for (i = 0; i < np; i++)
		gen_param(g, t, 0);
	for (i = 0; i < t->np; i++)
		w |= writes(&t->p[i]);
	/* every task writes, so what it read lands somewhere */
	while (!w && t->np < max_np) {
		gen_param(g, t, 1);
		w = t->np && writes(&t->p[t->np - 1]);
	}
	if (!w) {
		t->np = 0;
		while (!t->np)
			gen_param(g, t, 1);
	}
	gen_commit(g);
}

/* Random cut points of n into parts: cut[0] = 0 < ... < cut[k] = n; k. */
static uint32_t cuts(struct gen *g, uint32_t n, uint32_t max_parts,
		     uint32_t *cut)
{
	uint32_t k = tl_range(g->rng, 1, min32(n, max_parts)), i, j, x;

	cut[0] = 0;
	for (i = 1; i < k; i++) {
		do {
			x = tl_range(g->rng, 1, n - 1);
			for (j = 1; j < i && cut[j] != x; j++)
				;
		} while (j < i);
		cut[i] = x;
	}
	cut[k] = n;
	/* sort the cuts in between */
	for (i = 2; i < k; i++)
		for (j = i; j > 1 && cut[j - 1] > cut[j]; j--)
			x = cut[j], cut[j] = cut[j - 1], cut[j - 1] = x;
	return k;
}

/* A task at the current depth: an empty one to fill in, or NULL. */
static struct rp_op *new_task(struct gen *g)
{
	struct rp_op *t = &g->pg->ops[g->pg->nops];

	if (!task_fits(g))
		return NULL;
	memset(t, 0, sizeof(*t));
	t->op = RP_TASK;
	t->type = random_type(g);
	return t;
}

/* Maybe a read of some buffer for task t, if one fits it. */
static void maybe_read(struct gen *g, struct rp_op *t, uint64_t percent)
{
	struct rp_param q = { .kind = PTO_PARAM_INPUT };

	if (tl_range(g->rng, 0, 99) >= percent)
		return;
	q.buf = pick_buf(g, 0);
	make_view(g, &q);
	if (readable(g, &q) && !overlaps(t, &q))
		t->p[t->np++] = q;
}

/*
 * Fill pto_alloc() buffer buf, rows x cols, as disjoint tiles, one task
 * each (which may all run at once), as far as they fit.
 */
static void gen_fill(struct gen *g, int buf, uint32_t rows, uint32_t cols)
{
	struct layout l = *home(g, buf);
	uint32_t rc[17], cc[17], nr, nc, i, j;
	struct rp_op *t;

	nr = cuts(g, rows, 4, rc);
	nc = cuts(g, cols, 4, cc);
	for (i = 0; i < nr; i++)
		for (j = 0; j < nc; j++) {
			t = new_task(g);
			if (!t)
				return;
			t->p[0] = (struct rp_param){
				.kind = PTO_PARAM_OUTPUT_EXISTING,
				.buf = buf, .view = 1 };
			tile_view(g, &t->p[0].v, l, 0, rc[i], rc[i + 1] - rc[i],
				  cc[j], cc[j + 1] - cc[j]);
			pad_view(&t->p[0].v, buf_bytes(g, buf));
			t->np = 1;
			maybe_read(g, t, 70);
			gen_commit(g);
		}
}

/*
 * A pto_alloc() of a rows x cols matrix at the current depth, if it fits
 * (its buffer and descriptor in the heap ring, a slot in the window),
 * then maybe tasks filling it; 0 if it did not fit.
 */
static int gen_alloc(struct gen *g)
{
	struct rp_prog *pg = g->pg;
	struct rp_op *o = &pg->ops[pg->nops];
	uint8_t dtype = random_dtype(g, 8);
	uint32_t es = pto_dtype_size(dtype), cols, rows, nb;
	struct rp_view *v;
	int buf;

	cols = tl_range(g->rng, 1, 16);
	rows = tl_range(g->rng, 1, min32(16, 256 / (es * cols)));
	nb = rows * cols * es;
	if (!fits(g, 2 * (align64(nb) + align64(80))))
		return 0;
	memset(o, 0, sizeof(*o));
	o->op = RP_ALLOC;
	o->np = 1;
	o->p[0] = new_output(g, nb);
	o->p[0].view = 1;
	buf = o->p[0].buf;
	v = &o->p[0].v;
	v->dtype = dtype;
	if (rows == 1 && tl_range(g->rng, 0, 1)) {
		v->ndim = 1;
		v->shape[0] = cols;
		v->stride[0] = 1;
	} else {
		view_2d(v, 0, rows, cols, cols, 1);
	}
	pad_view(v, nb);
	g->lay[RP_NSHARED + 1 + buf - RP_OUT_BASE] = (struct layout){
		.es = es, .dtype = dtype, .ld = cols };
	g->alloc_of[buf - RP_OUT_BASE] = ++g->nallocs;
	gen_commit(g);
	if (tl_range(g->rng, 0, 2))
		gen_fill(g, buf, rows, cols);
	return 1;
}

void rp_generate(struct rp_prog *pg, struct tl_rng *rng,
		 const struct rp_cfg *cfg, const struct rp_shape *shape)
{
	struct gen g;
	int target = tl_range(rng, 1, shape->max_tasks);
	int max_np = shape->max_np < RAND_NP ? shape->max_np : RAND_NP;

	gen_init(&g, pg, rng, cfg);
	g.views = shape->views;
	while (pg->ntasks < target) {
		uint32_t r = tl_range(rng, 0, 99);

		if (r < 12 && g.depth < shape->max_depth)
			gen_begin(&g);
		else if (r < 22 && g.depth > 0)
			gen_end(&g);
		else if (g.views && r >= 22 && r < 27 && gen_alloc(&g))
			;	/* a pto_alloc(), maybe filled */
		else if (task_fits(&g))
			gen_task(&g, max_np);
		else if (g.depth > 0)
			gen_end(&g);
		else
			break;
	}
	gen_finish(&g);
}

/*
 * Dependencies the program needs: pairs of tasks (allocs included) where
 * the later one accesses a buffer the earlier one made, or the two share
 * a byte that one of them writes.  libpto takes no more than these (it
 * drops some that others imply); in rp_generate_tiles()'s programs it
 * takes exactly these.
 */
static int64_t needed_edges(const struct rp_prog *pg)
{
	static const struct rp_op *task[RP_MAX_TASKS];
	uint64_t a[BW], b[BW];
	int64_t edges = 0;
	int i, j, n = 0, x, y, dep;

	for (i = 0; i < pg->nops; i++)
		if (pg->ops[i].op == RP_TASK || pg->ops[i].op == RP_ALLOC)
			task[n++] = &pg->ops[i];
	for (j = 0; j < n; j++)
		for (i = 0; i < j; i++) {
			dep = 0;
			for (x = 0; x < task[i]->np && !dep; x++)
				for (y = 0; y < task[j]->np && !dep; y++) {
					const struct rp_param *p = &task[i]->p[x];
					const struct rp_param *q = &task[j]->p[y];

					if (p->buf != q->buf ||
					    q->kind == PTO_PARAM_NODEP ||
					    p->kind == PTO_PARAM_NODEP)
						continue;
					if (p->kind == PTO_PARAM_OUTPUT) {
						dep = 1;
						continue;
					}
					if (!writes_kind(p->kind) &&
					    !writes_kind(q->kind))
						continue;
					param_bits(p, a);
					param_bits(q, b);
					dep = bits_meet(a, b);
				}
			edges += dep;
		}
	return edges;
}

/* Phase 1 of rp_generate_tiles(): a task writing one tile of buffer 0. */
static int tile_writer(struct gen *g, struct layout l, uint32_t r0,
		       uint32_t nr, uint32_t c0, uint32_t nc, int as_range)
{
	struct rp_op *t = new_task(g);
	struct rp_param *q;

	if (!t)
		return 0;
	q = &t->p[t->np++];
	q->kind = tl_range(g->rng, 0, 1) ? PTO_PARAM_OUTPUT_EXISTING :
					   PTO_PARAM_INOUT;
	q->buf = 0;
	if (as_range) {		/* whole rows, padding too: one solid range */
		q->off = r0 * l.ld * l.es;
		q->nb = nr * l.ld * l.es;
	} else {
		q->view = 1;
		tile_view(g, &q->v, l, 0, r0, nr, c0, nc);
		pad_view(&q->v, RP_SH_BYTES);
	}
	/* reads of what nobody writes here take no dependency */
	if (tl_range(g->rng, 0, 1)) {
		q = &t->p[t->np++];
		q->kind = PTO_PARAM_INPUT;
		q->buf = 1;
		make_view(g, q);
	}
	if (tl_range(g->rng, 0, 3) == 0) {
		q = &t->p[t->np++];
		q->kind = PTO_PARAM_NODEP;
		q->buf = RP_CONST_BUF;
		make_view(g, q);
	}
	gen_commit(g);
	return 1;
}

/* Phase 2: a task reading views of buffer 0, writing part k of buffer 2. */
static int tile_reader(struct gen *g, struct layout l, uint32_t R,
		       uint32_t C, uint32_t k, uint32_t chunk)
{
	struct rp_op *t = new_task(g);
	struct rp_param *q;
	uint32_t r0, nr, c0, nc, i, n = tl_range(g->rng, 1, 2);

	if (!t)
		return 0;
	for (i = 0; i < n; i++) {
		struct rp_param in = { .kind = PTO_PARAM_INPUT, .buf = 0 };

		r0 = tl_range(g->rng, 0, R - 1);
		nr = tl_range(g->rng, 1, R - r0);
		c0 = tl_range(g->rng, 0, C - 1);
		nc = tl_range(g->rng, 1, C - c0);
		switch (tl_range(g->rng, 0, 4)) {
		case 0:		/* whole rows as a byte range */
			in.off = r0 * l.ld * l.es;
			in.nb = nr * l.ld * l.es;
			break;
		case 1:		/* whole rows */
			c0 = 0;
			nc = C;
			break;
		case 2:		/* a column */
			nc = 1;
			break;
		}
		if (!in.nb) {
			in.view = 1;
			tile_view(g, &in.v, l, 0, r0, nr, c0, nc);
			pad_view(&in.v, RP_SH_BYTES);
		}
		if (!overlaps(t, &in))
			t->p[t->np++] = in;
	}
	q = &t->p[t->np++];
	q->kind = PTO_PARAM_OUTPUT_EXISTING;
	q->buf = 2;
	if (tl_range(g->rng, 0, 1)) {
		q->off = k * chunk;
		q->nb = chunk;
	} else {		/* the same bytes as a 1-D view of u64 */
		q->view = 1;
		q->v = (struct rp_view){ .dtype = PTO_DTYPE_U64, .ndim = 1,
			.off = k * chunk / 8, .shape = { chunk / 8 },
			.stride = { 1 } };
		pad_view(&q->v, RP_SH_BYTES);
	}
	gen_commit(g);
	return 1;
}

void rp_generate_tiles(struct rp_prog *pg, struct tl_rng *rng,
		       const struct rp_cfg *cfg)
{
	struct gen g;
	struct layout l;
	uint32_t rc[17], cc[17], nbands, nparts, R, C, i, j, n, chunk, e;
	int d, outer = tl_range(rng, 0, 2);

	gen_init(&g, pg, rng, cfg);
	g.views = 1;
	/* all in one scope: every task stays in the TensorMap to the end */
	for (d = 0; d < outer; d++)
		gen_begin(&g);
	l.dtype = random_dtype(&g, 8);
	l.es = pto_dtype_size(l.dtype);
	e = RP_SH_BYTES / l.es;
	l.ld = tl_range(rng, 2, min32(e / 2, 24));
	g.lay[0] = l;
	R = e / l.ld;
	C = tl_range(rng, 0, 2) ? l.ld : tl_range(rng, 1, l.ld);
	nbands = cuts(&g, R, 6, rc);
	for (i = 0; i < nbands; i++) {
		if (!tl_range(rng, 0, 4)) {
			if (!tile_writer(&g, l, rc[i], rc[i + 1] - rc[i], 0, C,
					 1))
				goto done;
			continue;
		}
		nparts = cuts(&g, C, 4, cc);
		for (j = 0; j < nparts; j++)
			if (!tile_writer(&g, l, rc[i], rc[i + 1] - rc[i], cc[j],
					 cc[j + 1] - cc[j], 0))
				goto done;
	}
	n = tl_range(rng, 1, 6);
	chunk = RP_SH_BYTES / n / 8 * 8;
	for (i = 0; i < n; i++)
		if (!tile_reader(&g, l, R, C, i, chunk))
			break;
done:
	gen_finish(&g);
	pg->edges = needed_edges(pg);
	pg->edges_exact = 1;
}

/* ---- Task Bench patterns ------------------------------------------------- */

struct pat {
	enum rp_pattern kind;
	int width, lg;		/* lg: bits to number the points, >= 1 */
	uint32_t base, cb;	/* the grid's offset, bytes per cell */
};

/* Offset of point i of row r in shared buffer 0 (two rows, swapped). */
static uint32_t cell(const struct pat *p, int r, int i)
{
	return p->base + (uint32_t)(r * p->width + i) * p->cb;
}

static int add_dep(int *deps, int n, int j)
{
	int k;

	for (k = 0; k < n; k++)
		if (deps[k] == j)
			return n;
	deps[n] = j;
	return n + 1;
}

/* The points of step t - 1 that point i of step t reads. */
static int pattern_deps(const struct pat *p, int t, int i, int *deps)
{
	int w = p->width, k = (t - 1) % p->lg, n = 0, j;

	switch (p->kind) {
	case RP_TRIVIAL:
		return 0;
	case RP_STENCIL:
		for (j = i - 1; j <= i + 1; j++)
			if (j >= 0 && j < w)
				n = add_dep(deps, n, j);
		return n;
	case RP_FFT:
		n = add_dep(deps, n, i);
		return (i ^ (1 << k)) < w ? add_dep(deps, n, i ^ (1 << k)) : n;
	case RP_TREE:
		n = add_dep(deps, n, i);
		return add_dep(deps, n, i & ~((2 << k) - 1));
	case RP_ALL_TO_ALL:
		for (j = 0; j < w; j++)
			n = add_dep(deps, n, j);
		return n;
	default:	/* spread: three points a third of the width apart */
		for (j = 0; j < 3; j++)
			n = add_dep(deps, n, (i + j * ((w + 2) / 3)) % w);
		return n;
	}
}

/* Point i of step t: read its producers (and held), write its cell. */
static void gen_point(struct gen *g, const struct pat *p, int t, int i,
		      int held)
{
	struct rp_op *o = &g->pg->ops[g->pg->nops];
	int deps[16], n = t ? pattern_deps(p, t, i, deps) : 0, k;

	memset(o, 0, sizeof(*o));
	o->op = RP_TASK;
	o->type = random_type(g);
	for (k = 0; k < n; k++)
		o->p[o->np++] = (struct rp_param){ PTO_PARAM_INPUT, 0,
			cell(p, (t - 1) % 2, deps[k]), p->cb };
	o->p[o->np++] = (struct rp_param){ PTO_PARAM_OUTPUT_EXISTING, 0,
		cell(p, t % 2, i), p->cb };
	if (held >= 0)
		o->p[o->np++] = (struct rp_param){ PTO_PARAM_INPUT, held, 0,
			g->pg->out_nb[held - RP_OUT_BASE] };
	gen_commit(g);
}

/* A task at the current depth whose OUTPUT the steps read; its id. */
static int gen_holder(struct gen *g)
{
	struct rp_op *o = &g->pg->ops[g->pg->nops];

	memset(o, 0, sizeof(*o));
	o->op = RP_TASK;
	o->type = random_type(g);
	o->p[o->np++] = new_output(g, tl_range(g->rng, 1, 128));
	o->p[o->np++] = (struct rp_param){ PTO_PARAM_INPUT, 1, 0,
		RP_SH_BYTES };
	gen_commit(g);
	return o->p[0].buf;
}

static int gen_steps(struct gen *g, const struct pat *p, int steps,
		     int held)
{
	int t, i;

	for (t = 0; t < steps; t++) {
		gen_begin(g);
		for (i = 0; i < p->width; i++) {
			if (!task_fits(g))
				return -1;
			gen_point(g, p, t, i, held);
		}
		gen_end(g);
	}
	return 0;
}

void rp_generate_pattern(struct rp_prog *pg, struct tl_rng *rng,
			 const struct rp_cfg *cfg, enum rp_pattern kind,
			 int width, int steps)
{
	struct pat p = { .kind = kind, .lg = 1 };
	int outer = tl_range(rng, 0, RP_MAX_DEPTH - 2), d, held = -1;
	uint32_t win;
	struct gen g;

	gen_init(&g, pg, rng, cfg);
	/* a step's scope holds its points: all of them must fit its ring */
	win = cfg->window[ring_of(&g, outer + 1)];
	p.width = width < (int)win - 1 ? width : (int)win - 1;
	if (p.width > RP_MAX_NP - 2)	/* all_to_all: width INPUTs */
		p.width = RP_MAX_NP - 2;
	while ((1 << p.lg) < p.width)
		p.lg++;
	p.cb = 8 * tl_range(rng, 1, 2);
	p.base = tl_range(rng, 0, RP_SH_BYTES - 2 * p.width * p.cb);
	if (steps > RP_MAX_TASKS / p.width)
		steps = RP_MAX_TASKS / p.width;
	for (d = 0; d < outer; d++)
		gen_begin(&g);
	/* rarely where the holder would share a ring with every step */
	if (tl_range(rng, 0, 9) < (ring_of(&g, outer) ==
				   ring_of(&g, outer + 1) ? 1 : 5) &&
	    task_fits(&g))
		held = gen_holder(&g);
	gen_steps(&g, &p, steps, held);
	gen_finish(&g);
}

/* ---- running ------------------------------------------------------------- */

static void *buf_addr(struct rp_ctx *c, int buf)
{
	return buf >= RP_OUT_BASE ? c->pg->out_addr[buf - RP_OUT_BASE] :
				    (void *)c->shared[buf];
}

/* A new OUTPUT must be aligned and overlap no OUTPUT still alive. */
static void check_output(struct rp_ctx *c, int k, int op)
{
	struct rp_prog *pg = c->pg;
	uintptr_t a = (uintptr_t)pg->out_addr[k], b;
	int j;

	if (!a || a % 64)
		c->bad_out++;
	for (j = 0; j < k; j++) {
		if (pg->out_dies[j] <= op)
			continue;
		b = (uintptr_t)pg->out_addr[j];
		if (a < b + pg->out_nb[j] && b < a + pg->out_nb[k])
			c->bad_out++;
	}
}

/* The struct pto_view of q; an OUTPUT's base is filled in by the submit. */
static void to_view(struct rp_ctx *c, const struct rp_param *q,
		    struct pto_view *v)
{
	uint32_t d;

	memset(v, 0, sizeof(*v));
	if (q->kind != PTO_PARAM_OUTPUT)
		v->base = buf_addr(c, q->buf);
	v->offset = q->v.off;
	v->dtype = q->v.dtype;
	v->ndim = q->v.ndim;
	for (d = 0; d < PTO_MAX_DIMS; d++) {
		v->shape[d] = q->v.shape[d];
		v->stride[d] = q->v.stride[d];
	}
}

static struct pto_param tensor(struct rp_ctx *c, const struct rp_param *q,
			       struct pto_view *v)
{
	if (q->view) {
		to_view(c, q, v);
		return (struct pto_param){ .kind = q->kind | PTO_PARAM_VIEW,
					   .view = v };
	}
	if (q->kind == PTO_PARAM_OUTPUT)
		return PTO_OUT(&c->pg->out_addr[q->buf - RP_OUT_BASE], q->nb);
	return (struct pto_param){ .kind = q->kind,
				   .base = buf_addr(c, q->buf),
				   .offset = q->off, .size = q->nb };
}

static int64_t submit(struct rp_ctx *c, const struct rp_op *o, int i)
{
	struct pto_param p[4 + 2 * RP_MAX_NP];
	struct pto_view v[RP_MAX_NP];
	int k, n = 0;
	int64_t id;

	p[n++] = PTO_SCALAR(c->tag++);
	p[n++] = PTO_SCALAR(o->np);
	p[n++] = PTO_SCALAR(c->gated);
	p[n++] = PTO_SCALAR(o->delay);
	for (k = 0; k < o->np; k++)
		p[n++] = PTO_SCALAR(DESC(o->p[k].kind, o->p[k].nb) |
				    (o->p[k].view ? DESC_VIEW : 0));
	for (k = 0; k < o->np; k++)
		p[n++] = tensor(c, &o->p[k], &v[k]);
	id = tl_submit(c->rec, o->type + 1, o->type, p, n);
	if (id < 0)
		return id;
	for (k = 0; k < o->np; k++) {
		if (o->p[k].kind != PTO_PARAM_OUTPUT)
			continue;
		if (o->p[k].view)
			c->pg->out_addr[o->p[k].buf - RP_OUT_BASE] = v[k].base;
		check_output(c, o->p[k].buf - RP_OUT_BASE, i);
	}
	return id;
}

static int alloc(struct rp_ctx *c, const struct rp_op *o, int i)
{
	struct pto_view v;
	int ret;

	to_view(c, &o->p[0], &v);
	ret = tl_alloc(c->rec, &v);
	if (ret)
		return ret;
	c->pg->out_addr[o->p[0].buf - RP_OUT_BASE] = v.base;
	check_output(c, o->p[0].buf - RP_OUT_BASE, i);
	return 0;
}

static int run_ops(struct pto_runtime *rt, struct rp_ctx *c)
{
	const struct rp_prog *pg = c->pg;
	int i, ret;
	int64_t id;

	for (i = 0; i < pg->nops; i++) {
		const struct rp_op *o = &pg->ops[i];

		if (o->op == RP_BEGIN) {
			pto_scope_begin(rt);
		} else if (o->op == RP_END) {
			ret = pto_scope_end(rt);
			if (ret)
				return ret;
		} else if (o->op == RP_ALLOC) {
			ret = alloc(c, o, i);
			if (ret)
				return ret;
		} else {
			id = submit(c, o, i);
			if (id < 0)
				return (int)id;
		}
	}
	return 0;
}

int rp_orch(struct pto_runtime *rt, void *arg)
{
	int ret = run_ops(rt, arg);

	tl_gate_open(&gate);
	return ret;
}

int rp_gate_ok(const struct rp_prog *pg, const struct rp_cfg *cfg)
{
	uint64_t bytes[PTO_MAX_RINGS] = { 0 };
	int tasks[PTO_MAX_RINGS] = { 0 };
	int i, k, depth = 0, ring, n = (int)cfg->nrings, nviews;

	for (i = 0; i < pg->nops; i++) {
		const struct rp_op *o = &pg->ops[i];

		if (o->op != RP_TASK && o->op != RP_ALLOC) {
			depth += o->op == RP_BEGIN ? 1 : -1;
			continue;
		}
		ring = depth < n ? depth : n - 1;
		tasks[ring]++;
		for (k = 0, nviews = 0; k < o->np; k++) {
			nviews += o->p[k].view;
			if (o->p[k].kind == PTO_PARAM_OUTPUT)
				bytes[ring] += 64 + align64(o->p[k].nb);
		}
		if (nviews)
			bytes[ring] += 64 + align64(nviews * 80);
	}
	for (ring = 0; ring < n; ring++)
		if (tasks[ring] > (int)cfg->window[ring] - 1 ||
		    bytes[ring] > cfg->heap[ring] / 2)
			return 0;
	return 1;
}

void rp_fill_shared(struct rp_ctx *c, struct tl_rng *rng)
{
	int i, w;

	c->bad_out = 0;
	tl_gate_close(&gate);
	tl_rec_reset(c->rec);
	for (i = 0; i <= RP_NSHARED; i++) {
		for (w = 0; w < RP_SH_BYTES / 8; w++)
			c->shared[i][w] = tl_rand(rng);
		tl_host(c->rec, c->shared[i], RP_SH_BYTES);
	}
}

int rp_check(struct rp_ctx *c, char *msg, size_t len)
{
	int i, ret;
	int64_t at;

	replaying = 1;
	ret = tl_replay(c->rec);
	replaying = 0;
	if (ret) {
		snprintf(msg, len, "replay failed: %s", c->rec->err);
		return -1;
	}
	for (i = 0; i <= RP_NSHARED; i++) {
		at = tl_compare(c->rec, c->shared[i]);
		if (at >= 0) {
			snprintf(msg, len, "buffer %d differs from the sequential replay at byte %lld",
				 i, (long long)at);
			return -1;
		}
	}
	return 0;
}

static const char *kind_name(int kind)
{
	static const char *const names[] = {
		"IN", "OUT", "INOUT", "OUT_EXISTING", "NODEP", "SCALAR",
	};

	return names[kind];
}

/* printf onto line[*len...], keeping it within size bytes. */
static __attribute__((format(printf, 4, 5))) void
append(char *line, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n;
}

static void dump_param(char *line, size_t size, size_t *len,
		       const struct rp_param *q)
{
	int out = q->buf >= RP_OUT_BASE, d;
	const struct rp_view *v = &q->v;

	append(line, size, len, " %s(%s%d", kind_name(q->kind),
	       out ? "o" : "b", out ? q->buf - RP_OUT_BASE : q->buf);
	if (!q->view) {
		append(line, size, len, ",%u,%u)", q->off, q->nb);
		return;
	}
	append(line, size, len, " %s@%u[", pto_dtype_name(v->dtype), v->off);
	for (d = 0; d < v->ndim; d++)
		append(line, size, len, "%s%u", d ? "," : "", v->shape[d]);
	append(line, size, len, ":");
	for (d = 0; d < v->ndim; d++)
		append(line, size, len, "%s%u", d ? "," : "", v->stride[d]);
	append(line, size, len, "])");
}

static void dump_task(const struct rp_op *o, int task, int depth)
{
	char line[1024];
	size_t len = 0;
	int k;

	append(line, sizeof(line), &len, "%s %d", o->op == RP_ALLOC ?
	       "alloc" : "task", task);
	if (o->op == RP_TASK)
		append(line, sizeof(line), &len, " type %d", o->type);
	if (o->delay)
		append(line, sizeof(line), &len, " %s %llu ns",
		       o->delay & RP_DELAY_SLEEP ? "sleep" : "spin",
		       (unsigned long long)o->delay & ~RP_DELAY_SLEEP);
	append(line, sizeof(line), &len, ":");
	for (k = 0; k < o->np; k++)
		dump_param(line, sizeof(line), &len, &o->p[k]);
	diag("  %*s%s", 2 * depth + 2, "", line);
}

void rp_dump(const struct rp_prog *pg)
{
	int i, depth = 0, task = 0;

	for (i = 0; i < pg->nops; i++) {
		const struct rp_op *o = &pg->ops[i];

		if (o->op == RP_TASK || o->op == RP_ALLOC) {
			dump_task(o, task++, depth);
			continue;
		}
		depth += o->op == RP_BEGIN ? 1 : -1;
		diag("  %*s%s", 2 * depth, "",
		     o->op == RP_BEGIN ? "scope {" : "}");
	}
}
