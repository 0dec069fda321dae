// SPDX-License-Identifier: MIT
/*
 * Tensor views end to end: the dependencies libpto infers between N-D
 * views of one row-major matrix (tiles, rows, columns, transposes, byte
 * ranges), what kernels receive for them, OUTPUT views, pto_alloc()
 * buffers and their lifetimes, and the errors for malformed views.
 *
 * Dependencies are counted with pto_get_stats().edges while every task of
 * a case is alive: the first task waits on a gate the orchestration opens
 * only after submitting the rest, so no producer has retired when its
 * consumers are submitted and the count is exact.  Results are checked
 * against the same computation done on the host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define N 64		/* the matrix: N x N f32, row-major, ld LD */
#define LD 72		/* rows padded: views must not assume ld == N */
#define T 16		/* tiles of T x T */
#define GATE_MS 10000

enum {
	K_GATE, K_FILL, K_SUM, K_WRITE_OUT, K_CHECK_OUT, K_ACC, K_ZERO, K_TAKE,
	K_WHICH, K_NOP,
};

static struct tl_gate gate;
static float mat[N * LD];

/* gate: wait until the orchestration has submitted the case */
static void k_gate(const uint64_t *a, uint32_t n)
{
	if (tl_gate_wait(&gate, GATE_MS))
		pto_kernel_set_error(-ETIMEDOUT);
}

/* view (2-D f32), value: element (i, j) = value + i * 1000 + j */
static void k_fill(const uint64_t *a, uint32_t n)
{
	const struct pto_view_desc *d = pto_arg_view(a, 0);
	float v = (float)a[1];
	uint64_t i, j;

	if (d->ndim != 2 || d->dtype != PTO_DTYPE_F32 || d->elem_size != 4 ||
	    pto_arg_is_view(0) != 1 || pto_arg_is_view(1) != 0 ||
	    pto_arg_is_view(n) != -ERANGE) {
		pto_kernel_set_error(-EINVAL);
		return;
	}
	for (i = 0; i < d->shape[0]; i++)
		for (j = 0; j < d->shape[1]; j++)
			*(float *)pto_view_desc_at2(d, i, j) =
				v + (float)(i * 1000 + j);
}

/* view (any dims, f32), out (a plain f32): out = sum of the view */
static void k_sum(const uint64_t *a, uint32_t n)
{
	const struct pto_view_desc *d = pto_arg_view(a, 0);
	uint64_t idx[PTO_MAX_DIMS] = { 0 }, off;
	float s = 0.0f;
	uint32_t k;

	for (;;) {
		for (off = 0, k = 0; k < PTO_MAX_DIMS; k++)
			off += idx[k] * d->stride[k];
		s += ((const float *)(uintptr_t)d->addr)[off];
		for (k = PTO_MAX_DIMS; k-- > 0;) {
			if (++idx[k] < d->shape[k])
				break;
			idx[k] = 0;
		}
		if (k == UINT32_MAX)
			break;
	}
	*(float *)(uintptr_t)a[1] = s;
}

/* OUTPUT view (2-D u32): fill with i * 100 + j, report its layout */
static void k_write_out(const uint64_t *a, uint32_t n)
{
	const struct pto_view_desc *d = pto_arg_view(a, 0);
	uint64_t i, j;

	for (i = 0; i < d->shape[0]; i++)
		for (j = 0; j < d->shape[1]; j++)
			*(uint32_t *)pto_view_desc_at2(d, i, j) =
				(uint32_t)(i * 100 + j);
}

/* IN view (2-D u32) written by k_write_out: count wrong elements */
static void k_check_out(const uint64_t *a, uint32_t n)
{
	const struct pto_view_desc *d = pto_arg_view(a, 0);
	uint32_t *bad = (uint32_t *)(uintptr_t)a[1];
	uint64_t i, j;

	for (i = 0; i < d->shape[0]; i++)
		for (j = 0; j < d->shape[1]; j++)
			if (*(uint32_t *)pto_view_desc_at2(d, i, j) !=
			    (uint32_t)(i * 100 + j))
				(*bad)++;
}

/* OUTPUT_EXISTING view (1-D u64): every element = 0 */
static void k_zero(const uint64_t *a, uint32_t n)
{
	const struct pto_view_desc *d = pto_arg_view(a, 0);
	uint64_t *p = (uint64_t *)(uintptr_t)d->addr, i;

	for (i = 0; i < d->shape[0]; i++)
		p[i * d->stride[0]] = 0;
}

/* view (u64, one element), dst: *dst = the element */
static void k_take(const uint64_t *a, uint32_t n)
{
	const struct pto_view_desc *d = pto_arg_view(a, 0);

	*(uint64_t *)(uintptr_t)a[1] = *(const uint64_t *)(uintptr_t)d->addr;
}

/* INOUT view (1-D u64), value: every element += value */
static void k_acc(const uint64_t *a, uint32_t n)
{
	const struct pto_view_desc *d = pto_arg_view(a, 0);
	uint64_t *p = (uint64_t *)(uintptr_t)d->addr, i;

	for (i = 0; i < d->shape[0]; i++)
		p[i * d->stride[0]] += a[1];
}

/*
 * which (int32[WHICH_MAX + 1]), then tile views and scalars (parameter i
 * a scalar of value i): which[i] = what pto_arg_is_view(i) says of every
 * parameter and of one past the last; the task fails if a view's
 * descriptor, or the data pto_arg_data() finds, is not tile (1, 1)'s.  A
 * scalar said to be a view is not read.
 */
#define WHICH_MAX 64
static void k_which(const uint64_t *a, uint32_t n)
{
	int32_t *which = pto_arg_data(a, 0);
	uint32_t i;

	for (i = 0; i <= n && i <= WHICH_MAX; i++) {
		which[i] = pto_arg_is_view(i);
		if (i < n && which[i] == 1 && a[i] != i &&
		    (pto_arg_view(a, i)->ndim != 2 ||
		     pto_arg_view(a, i)->shape[1] != T ||
		     pto_arg_data(a, i) != &mat[T * LD + T]))
			pto_kernel_set_error(-EINVAL);
	}
}

static struct pto_view matrix(void)
{
	return pto_view_2d(mat, PTO_DTYPE_F32, N, N, LD);
}

static struct pto_view tile(uint32_t ti, uint32_t tj)
{
	return pto_view_tile_2d(matrix(), ti * T, tj * T, T, T);
}

static uint64_t edges(struct pto_runtime *rt)
{
	struct pto_stats st;

	pto_get_stats(rt, &st);
	return st.edges;
}

/* ---- dependencies between views of one matrix ------------------------- */

struct dep_case {
	const char *name;
	uint64_t want_edges;	/* of the probe task, on the tile writers */
	struct pto_view probe;
	uint32_t probe_kind;	/* PTO_PARAM_INPUT or INOUT */
	float sum;		/* what the probe reads, from the host */
	float got;
};

/*
 * The gate task, then a writer of every tile (no edge among them: they
 * share no byte), then the probe, which must depend on exactly the tiles
 * it shares a byte with.
 */
static int orch_tiles(struct pto_runtime *rt, void *arg)
{
	struct dep_case *c = arg;
	struct pto_view t;
	uint32_t ti, tj;
	int64_t ret;

	ret = pto_submit_task(rt, K_GATE, PTO_WORKER_VECTOR, NULL, 0);
	if (ret < 0)
		return (int)ret;
	for (ti = 0; ti < N / T; ti++) {
		for (tj = 0; tj < N / T; tj++) {
			t = tile(ti, tj);
			ret = pto_submit_task(rt, K_FILL, PTO_WORKER_VECTOR,
					      (struct pto_param[]){
						PTO_OUT_EXISTING_VIEW(&t),
						PTO_SCALAR(ti * 4 + tj) }, 2);
			if (ret < 0)
				return (int)ret;
		}
	}
	ret = pto_submit_task(rt, K_SUM, PTO_WORKER_VECTOR,
			      (struct pto_param[]){
				PTO_VIEW_PARAM_(c->probe_kind, &c->probe),
				PTO_NODEP(&c->got, 0, sizeof(c->got)) }, 2);
	tl_gate_open(&gate);
	return ret < 0 ? (int)ret : 0;
}

/* The matrix as orch_tiles() leaves it, computed on the host. */
static float expected(uint64_t r, uint64_t c)
{
	uint64_t ti = r / T, tj = c / T;

	return (float)(ti * 4 + tj) + (float)((r % T) * 1000 + c % T);
}

static float host_sum(const struct pto_view *v)
{
	uint64_t i, j, k, at;
	float s = 0.0f;

	/* the probes are 2-D, or 3-D with a leading 1 */
	for (k = 0; k < v->shape[0]; k++) {
		for (i = 0; i < (v->ndim > 1 ? v->shape[1] : 1); i++) {
			for (j = 0; j < (v->ndim > 2 ? v->shape[2] : 1); j++) {
				at = v->offset + k * v->stride[0] +
				     (v->ndim > 1 ? i * v->stride[1] : 0) +
				     (v->ndim > 2 ? j * v->stride[2] : 0);
				s += expected(at / LD, at % LD);
			}
		}
	}
	return s;
}

static void run_dep_case(struct pto_runtime *rt, struct dep_case *c)
{
	uint64_t e0 = edges(rt), got;
	int ret;

	tl_gate_close(&gate);
	c->sum = host_sum(&c->probe);
	ret = pto_run(rt, orch_tiles, c);
	got = edges(rt) - e0;
	/* the writers depend on the gate task only through nothing: 0 */
	ok(ret == 0 && got == c->want_edges,
	   "%s: %llu dependencies (want %llu), run %d", c->name,
	   (unsigned long long)got, (unsigned long long)c->want_edges, ret);
	ok(c->got == c->sum, "%s: the probe read what the tiles wrote "
	   "(%g, want %g)", c->name, c->got, c->sum);
}

static void test_tile_deps(struct pto_runtime *rt)
{
	struct pto_view m = matrix();
	struct dep_case cases[] = {
		{ "one tile", 1, tile(1, 2), PTO_PARAM_INPUT },
		{ "row 17", 4, pto_view_slice(m, 0, 17, 1), PTO_PARAM_INPUT },
		{ "column 33", 4, pto_view_slice(m, 1, 33, 1),
		  PTO_PARAM_INPUT },
		{ "transposed tile", 1, pto_view_transpose(tile(3, 0), 0, 1),
		  PTO_PARAM_INPUT },
		{ "2x2 tiles across four", 4,
		  pto_view_tile_2d(m, T - 1, T - 1, 2, 2), PTO_PARAM_INPUT },
		{ "every other column of band 2", 4,
		  (struct pto_view){ .base = mat, .offset = 2 * T * LD,
				     .dtype = PTO_DTYPE_F32, .ndim = 2,
				     .shape = { T, N / 2 },
				     .stride = { LD, 2 } },
		  PTO_PARAM_INPUT },
		{ "tile as 3-D, written", 1,
		  (struct pto_view){ .base = mat,
				     .offset = 2 * T * LD + 3 * T,
				     .dtype = PTO_DTYPE_F32, .ndim = 3,
				     .shape = { 1, T, T },
				     .stride = { N * LD, LD, 1 } },
		  PTO_PARAM_INOUT },
	};
	uint32_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_dep_case(rt, &cases[i]);
}

/*
 * The same tiles as byte ranges: each is one range from its first to its
 * last byte, which overlaps its neighbours' — the false dependencies
 * views remove.  The count is what the bounding ranges give.
 */
static int orch_ranges(struct pto_runtime *rt, void *arg)
{
	uint64_t *bytes = arg;
	struct pto_view t;
	uint32_t ti, tj;
	int64_t ret;

	ret = pto_submit_task(rt, K_GATE, PTO_WORKER_VECTOR, NULL, 0);
	for (ti = 0; ti < N / T && ret >= 0; ti++) {
		for (tj = 0; tj < N / T && ret >= 0; tj++) {
			t = tile(ti, tj);
			ret = pto_submit_task(rt, K_FILL, PTO_WORKER_VECTOR,
					      (struct pto_param[]){
						PTO_OUT_EXISTING_VIEW(&t),
						PTO_SCALAR(0),
						PTO_OUT_EXISTING(mat,
							t.offset * 4, *bytes)
					      }, 3);
		}
	}
	tl_gate_open(&gate);
	return ret < 0 ? (int)ret : 0;
}

static void test_false_deps(struct pto_runtime *rt)
{
	uint64_t bytes = ((T - 1) * LD + T) * 4, e0 = edges(rt), got;
	int ret;

	tl_gate_close(&gate);
	ret = pto_run(rt, orch_ranges, &bytes);
	got = edges(rt) - e0;
	/* within a band every tile's range meets the next one's */
	ok(ret == 0 && got >= (N / T) * (N / T - 1),
	   "tiles as byte ranges: %llu false dependencies", (unsigned long long)got);
}

/* ---- OUTPUT views ------------------------------------------------------- */

struct out_case {
	struct pto_view v;
	uint32_t bad;
	uint64_t stride0, stride1;
	void *base;
};

static int orch_out_view(struct pto_runtime *rt, void *arg)
{
	struct out_case *c = arg;
	struct pto_view col;
	int64_t ret;

	c->v = (struct pto_view){ .dtype = PTO_DTYPE_U32, .ndim = 2,
				  .shape = { 5, 7 } };
	ret = pto_submit_task(rt, K_WRITE_OUT, PTO_WORKER_VECTOR,
			      (struct pto_param[]){ PTO_OUT_VIEW(&c->v) }, 1);
	if (ret < 0)
		return (int)ret;
	c->base = c->v.base;
	c->stride0 = c->v.stride[0];
	c->stride1 = c->v.stride[1];
	ret = pto_submit_task(rt, K_CHECK_OUT, PTO_WORKER_VECTOR,
			      (struct pto_param[]){
				PTO_IN_VIEW(&c->v),
				PTO_NODEP(&c->bad, 0, sizeof(c->bad)) }, 2);
	if (ret < 0)
		return (int)ret;
	/* its columns 3.. as a view: the elements keep their indices' values */
	col = pto_view_slice(c->v, 1, 0, 4);
	ret = pto_submit_task(rt, K_CHECK_OUT, PTO_WORKER_VECTOR,
			      (struct pto_param[]){
				PTO_IN_VIEW(&col),
				PTO_NODEP(&c->bad, 0, sizeof(c->bad)) }, 2);
	return ret < 0 ? (int)ret : 0;
}

static void test_out_view(struct pto_runtime *rt)
{
	struct out_case c = { .bad = 0 };
	uint64_t e0 = edges(rt);
	int ret = pto_run(rt, orch_out_view, &c);

	ok(ret == 0 && c.base && c.stride0 == 7 && c.stride1 == 1 &&
	   c.v.offset == 0 && c.v.shape[0] == 5 && c.v.shape[1] == 7,
	   "OUTPUT view: allocated, laid out row-major (strides %llu, %llu), "
	   "run %d", (unsigned long long)c.stride0,
	   (unsigned long long)c.stride1, ret);
	ok(c.bad == 0, "its readers saw what its producer wrote (%u wrong)",
	   c.bad);
	/* each reader depends on the producer (which also owns the buffer) */
	ok(edges(rt) - e0 == 2, "readers of an OUTPUT view: %llu dependencies "
	   "(want 2)", (unsigned long long)(edges(rt) - e0));
}

/* ---- which parameters are views ---------------------------------------- */

struct which_case {
	uint32_t n;		/* parameters, at most WHICH_MAX */
	uint64_t views;		/* bit i: parameter i (from 1) is a view */
	int32_t which[WHICH_MAX + 1];
};

/* One task: which[], then a tile view or a scalar per bit of views. */
static int orch_which(struct pto_runtime *rt, void *arg)
{
	struct which_case *c = arg;
	struct pto_param p[WHICH_MAX];
	struct pto_view t = tile(1, 1);
	uint32_t i;
	int64_t ret;

	p[0] = (struct pto_param)PTO_NODEP(c->which, 0, sizeof(c->which));
	for (i = 1; i < c->n; i++)
		p[i] = c->views >> i & 1 ? (struct pto_param)PTO_IN_VIEW(&t) :
		       (struct pto_param)PTO_SCALAR(i);
	ret = pto_submit_task(rt, K_WHICH, PTO_WORKER_VECTOR, p, c->n);
	return ret < 0 ? (int)ret : 0;
}

/* One case: its answers for every parameter and one past the last. */
static void which_case(struct pto_runtime *rt, uint32_t n, uint64_t views)
{
	struct which_case c = { .n = n, .views = views };
	uint32_t i, wrong = 0;
	int ret;

	memset(c.which, 0x55, sizeof(c.which));
	ret = pto_run(rt, orch_which, &c);
	for (i = 0; i < n; i++)
		wrong += c.which[i] != (int32_t)(views >> i & 1);
	ok(ret == 0 && !wrong && c.which[n] == -ERANGE,
	   "%u parameters, views %#llx: pto_arg_is_view() right for all (%u "
	   "wrong, one past the last %d), run %d", n,
	   (unsigned long long)views, wrong, c.which[n], ret);
}

/*
 * pto_arg_is_view() of every parameter of a task, past the 32 the
 * descriptor's mask holds too.  Then, in a 4 KiB heap ring, tasks of one
 * size with views in four different places: the ring holds three of
 * their heap blocks, so each block lands where one of another pattern
 * was, and a view bit left over from it would show.
 */
static void test_which_views(struct pto_runtime *rt)
{
	struct pto_config cfg;
	uint32_t k;

	which_case(rt, 3, 1ull << 2);
	which_case(rt, 40, 1ull << 5 | 1ull << 31 | 1ull << 32 | 1ull << 39);
	which_case(rt, WHICH_MAX, 1ull << 1 | 1ull << 63);
	which_case(rt, WHICH_MAX, 0);

	tl_config(&cfg, 16, 4096);
	rt = tl_runtime(&cfg);
	pto_kernel_register(rt, K_WHICH, PTO_WORKER_VECTOR, k_which, "which");
	for (k = 0; k < 12; k++)
		which_case(rt, 40, 1ull << (1 + k % 4) | 1ull << (30 + k % 4) |
			   1ull << (33 + k % 4) | 1ull << (36 + k % 4));
	pto_runtime_destroy(rt);
}

/* ---- pto_alloc ---------------------------------------------------------- */

struct alloc_case {
	uint64_t *out;		/* pto_malloc'd: per iteration's result */
	uint32_t iters;
	bool outer_held;	/* also use a buffer of the outer scope */
	struct pto_view outer;
};

static int64_t submit1(struct pto_runtime *rt, uint32_t kid,
		       struct pto_param p0, struct pto_param p1, uint32_t n)
{
	struct pto_param p[2] = { p0, p1 };

	return pto_submit_task(rt, kid, PTO_WORKER_VECTOR, p, n);
}

/* One iteration's scope: a fresh buffer, zeroed, += i, += 1, copied out. */
static int alloc_iteration(struct pto_runtime *rt, struct alloc_case *c,
			   uint32_t i)
{
	struct pto_view v = { .dtype = PTO_DTYPE_U64, .ndim = 1,
			      .shape = { 512 } };
	struct pto_view elem;
	int64_t ret = pto_scope_begin(rt);

	if (!ret)
		ret = pto_alloc(rt, &v);
	if (ret)
		return (int)ret;
	elem = pto_view_slice(v, 0, 7, 1);
	ret = submit1(rt, K_ZERO, PTO_OUT_EXISTING_VIEW(&v), PTO_SCALAR(0), 1);
	if (ret >= 0)
		ret = submit1(rt, K_ACC, PTO_INOUT_VIEW(&v), PTO_SCALAR(i), 2);
	if (ret >= 0)
		ret = submit1(rt, K_ACC, PTO_INOUT_VIEW(&v), PTO_SCALAR(1), 2);
	if (ret >= 0 && c->outer_held)
		ret = submit1(rt, K_ACC, PTO_INOUT_VIEW(&c->outer),
			      PTO_SCALAR(1), 2);
	if (ret >= 0)
		ret = submit1(rt, K_TAKE, PTO_IN_VIEW(&elem),
			      PTO_OUT_EXISTING(c->out, i * 8, 8), 2);
	if (ret < 0)
		return (int)ret;
	return pto_scope_end(rt);
}

/*
 * The rings are tiny, so the buffers must be freed as their scopes end;
 * with outer_held a buffer of the outer scope is accumulated into every
 * iteration too, which holds it for the whole run.
 */
static int orch_alloc_loop(struct pto_runtime *rt, void *arg)
{
	struct alloc_case *c = arg;
	uint32_t i;
	int64_t ret;

	if (c->outer_held) {
		c->outer = (struct pto_view){ .dtype = PTO_DTYPE_U64,
					      .ndim = 1, .shape = { 4 } };
		ret = pto_alloc(rt, &c->outer);
		if (!ret)
			ret = submit1(rt, K_ZERO,
				      PTO_OUT_EXISTING_VIEW(&c->outer),
				      PTO_SCALAR(0), 1);
		if (ret < 0)
			return (int)ret;
	}
	for (i = 0; i < c->iters; i++) {
		ret = alloc_iteration(rt, c, i);
		if (ret)
			return (int)ret;
	}
	if (c->outer_held) {
		/* the outer buffer's total, read back into out[iters] */
		struct pto_view e = pto_view_slice(c->outer, 0, 3, 1);

		ret = submit1(rt, K_TAKE, PTO_IN_VIEW(&e),
			      PTO_OUT_EXISTING(c->out, c->iters * 8, 8), 2);
	}
	return ret < 0 ? (int)ret : 0;
}

static struct pto_runtime *alloc_runtime(uint64_t heap)
{
	struct pto_config cfg;
	struct pto_runtime *rt;

	tl_config(&cfg, 16, heap);
	rt = tl_runtime(&cfg);
	pto_kernel_register(rt, K_ZERO, PTO_WORKER_VECTOR, k_zero, "zero");
	pto_kernel_register(rt, K_ACC, PTO_WORKER_VECTOR, k_acc, "acc");
	pto_kernel_register(rt, K_TAKE, PTO_WORKER_VECTOR, k_take, "take");
	return rt;
}

static void test_alloc_loop(const char *name, uint32_t iters, bool outer)
{
	/* room for a handful of 4 KiB buffers per ring, no more */
	struct pto_runtime *rt = alloc_runtime(32 * 1024);
	struct alloc_case c = { .iters = iters, .outer_held = outer };
	uint32_t i, wrong = 0;
	int ret;

	c.out = pto_malloc(rt, (iters + 1) * 8);
	ret = pto_run(rt, orch_alloc_loop, &c);
	for (i = 0; i < iters; i++)
		wrong += c.out[i] != (uint64_t)i + 1;
	ok(ret == 0 && !wrong, "%s: %u scopes, a pto_alloc() buffer each, "
	   "32 KiB heap rings: run %d, %u wrong results", name, iters, ret,
	   wrong);
	if (outer)
		ok(c.out[iters] == iters, "%s: the outer scope's buffer "
		   "lived through them all (%llu, want %u)", name,
		   (unsigned long long)c.out[iters], iters);
	pto_runtime_destroy(rt);
}

/* ---- errors ------------------------------------------------------------- */

struct err_case {
	const char *name;
	struct pto_view v;
	uint32_t kind;
	int want;
	const char *says;
};

static int orch_err(struct pto_runtime *rt, void *arg)
{
	struct err_case *c = arg;
	float dummy;
	int64_t ret;

	ret = pto_submit_task(rt, K_SUM, PTO_WORKER_VECTOR,
			      (struct pto_param[]){
				PTO_VIEW_PARAM_(c->kind, &c->v),
				PTO_NODEP(&dummy, 0, 4) }, 2);
	return ret < 0 ? (int)ret : 0;
}

static int orch_alloc_err(struct pto_runtime *rt, void *arg)
{
	return pto_alloc(rt, arg);
}

static void test_errors(struct pto_runtime *rt)
{
	struct err_case cases[] = {
		{ "dtype 0", { mat, 0, 0, 2, { 2, 2 }, { LD, 1 } },
		  PTO_PARAM_INPUT, -EINVAL, "dtype 0" },
		{ "0 dimensions", { mat, 0, PTO_DTYPE_F32, 0 },
		  PTO_PARAM_INPUT, -EINVAL, "0 dimensions" },
		{ "5 dimensions", { mat, 0, PTO_DTYPE_F32, 5 },
		  PTO_PARAM_INPUT, -EINVAL, "5 dimensions" },
		{ "past the address space",
		  { mat, 0, PTO_DTYPE_F32, 2, { 3, 2 },
		    { UINT64_MAX / 8, 1 } },
		  PTO_PARAM_INOUT, -EINVAL, "address space" },
		{ "view flag on a scalar", { mat, 0, PTO_DTYPE_F32, 1, { 1 },
					     { 1 } },
		  PTO_PARAM_SCALAR, -EINVAL, "SCALAR" },
		{ "NULL base", { NULL, 0, PTO_DTYPE_F32, 1, { 4 }, { 1 } },
		  PTO_PARAM_INPUT, -EINVAL, "NULL base" },
	};
	struct pto_view big = { .dtype = PTO_DTYPE_F64, .ndim = 2,
				.shape = { 1 << 20, 1 << 10 } };
	struct pto_view empty = { .dtype = PTO_DTYPE_F64, .ndim = 2,
				  .shape = { 0, 3 } };
	struct tl_capture cap;
	char *text;
	uint32_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tl_capture_begin(&cap);
		ret = pto_run(rt, orch_err, &cases[i]);
		text = tl_capture_end(&cap);
		ok(ret == cases[i].want && strstr(text, "parameter 0") &&
		   strstr(text, cases[i].says),
		   "%s: %d, says \"%s\"", cases[i].name, ret,
		   strtok(text, "\n") ? text : "");
		free(text);
	}
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_alloc_err, &big);
	free(tl_capture_end(&cap));
	ok(ret == -E2BIG, "pto_alloc() larger than the heap ring: %d", ret);
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_alloc_err, &empty);
	text = tl_capture_end(&cap);
	ok(ret == -EINVAL && strstr(text, "pto_alloc: view to allocate is "
				    "empty") && !strstr(text, "parameter"),
	   "pto_alloc() of an empty shape: %d, says what is wrong with the "
	   "view it was given", ret);
	free(text);
	tl_capture_begin(&cap);
	ret = pto_alloc(rt, &big);
	free(tl_capture_end(&cap));
	ok(ret == -EINVAL, "pto_alloc() outside a run: %d", ret);
}

/* ---- a stencil's halo over a row-major grid ----------------------------- */

#define HALO_TILES 4		/* per side */
#define HALO_T 16		/* elements per tile side */
#define HALO_N (HALO_TILES * HALO_T + 2)
#define HALO_ITERS 100

static void k_nop(const uint64_t *a, uint32_t n)
{
}

static float halo_grid[2][HALO_N * HALO_N];

/*
 * Jacobi sweeps, ping-pong between two grids: each task writes a tile of
 * one (a view) and reads the tile's halo in the other (a view one element
 * wider all round, over 9 tiles).  A buffer made first holds every task
 * of the run alive.
 */
static int orch_halo(struct pto_runtime *rt, void *arg)
{
	int it, ti, tj;
	void *held;

	if (PTO_SUBMIT(rt, K_NOP, PTO_WORKER_VECTOR, PTO_OUT(&held, 64)) < 0)
		return -1;
	for (it = 0; it < HALO_ITERS; it++) {
		struct pto_view a = pto_view_2d(halo_grid[it % 2],
						PTO_DTYPE_F32, HALO_N, HALO_N,
						HALO_N);
		struct pto_view b = pto_view_2d(halo_grid[!(it % 2)],
						PTO_DTYPE_F32, HALO_N, HALO_N,
						HALO_N);

		for (ti = 0; ti < HALO_TILES; ti++) {
			for (tj = 0; tj < HALO_TILES; tj++) {
				struct pto_view h = pto_view_tile_2d(a,
					ti * HALO_T, tj * HALO_T, HALO_T + 2,
					HALO_T + 2);
				struct pto_view o = pto_view_tile_2d(b,
					1 + ti * HALO_T, 1 + tj * HALO_T,
					HALO_T, HALO_T);

				if (PTO_SUBMIT(rt, K_NOP, PTO_WORKER_VECTOR,
					       PTO_OUT_EXISTING_VIEW(&o),
					       PTO_IN_VIEW(&h)) < 0)
					return -1;
			}
		}
	}
	return 0;
}

/*
 * Its dependencies per task stay flat: the halo depends on the newest
 * writer of each tile under it, not on every writer still alive (156 a
 * task after 100 sweeps, and a dependency pool of the default size
 * exhausted after some 600 tasks, when a view was pruned only by one
 * writer covering all of it).
 */
static void test_halo(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;
	uint64_t e0, tasks = 1 + HALO_ITERS * HALO_TILES * HALO_TILES;
	int ret;

	tl_config(&cfg, 4096, 0);
	cfg.dep_pool_size = 1 << 20;	/* room for the old count too */
	rt = tl_runtime(&cfg);
	pto_kernel_register(rt, K_NOP, PTO_WORKER_VECTOR, k_nop, "nop");
	e0 = edges(rt);
	ret = pto_run(rt, orch_halo, NULL);
	ok(ret == 0 && (edges(rt) - e0) < 8 * tasks,
	   "halo views: %llu dependencies for %llu tasks, under 8 a task",
	   (unsigned long long)(edges(rt) - e0), (unsigned long long)tasks);
	pto_runtime_destroy(rt);
}

int main(void)
{
	struct pto_config cfg;
	struct pto_runtime *rt;

	tl_gate_init(&gate);
	tl_config(&cfg, 0, 0);
	rt = tl_runtime(&cfg);
	pto_kernel_register(rt, K_GATE, PTO_WORKER_VECTOR, k_gate, "gate");
	pto_kernel_register(rt, K_FILL, PTO_WORKER_VECTOR, k_fill, "fill");
	pto_kernel_register(rt, K_SUM, PTO_WORKER_VECTOR, k_sum, "sum");
	pto_kernel_register(rt, K_WRITE_OUT, PTO_WORKER_VECTOR, k_write_out,
			    "write_out");
	pto_kernel_register(rt, K_CHECK_OUT, PTO_WORKER_VECTOR, k_check_out,
			    "check_out");
	pto_kernel_register(rt, K_WHICH, PTO_WORKER_VECTOR, k_which, "which");

	ok(pto_arg_is_view(0) == -EINVAL, "pto_arg_is_view() outside a "
	   "kernel: -EINVAL");
	/* inside one, K_FILL fails its task unless it is 1, 0, -ERANGE past n */
	test_tile_deps(rt);
	test_false_deps(rt);
	test_out_view(rt);
	test_errors(rt);
	test_which_views(rt);
	pto_runtime_destroy(rt);

	test_halo();
	test_alloc_loop("inner buffers", 3000, false);
	test_alloc_loop("inner buffers and an outer one", 3000, true);
	tl_gate_destroy(&gate);
	return tap_done();
}
