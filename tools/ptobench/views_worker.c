// SPDX-License-Identifier: MIT
/*
 * ptobench-views: one run of a BGEMM task graph for ptobench --views
 * (views.c), with its matrices in one of three layouts:
 *
 *   tiled   tile-major storage, every tile an exact 1-D byte range
 *   ranges  row-major storage, every tile the 1-D byte range from its
 *           first to its last byte (overlapping its row neighbours')
 *   views   row-major storage, every tile a 2-D view
 *
 * Forms: acc (one task per k step, C(i,j) += A(i,k) B(k,j), C INOUT: the
 * classic tiled GEMM graph), p (the samples' gemm into a fresh P, then
 * C(i,j) += P) and nop (acc's accesses, kernels that do nothing: the
 * submission cost).  Work: the GEMM itself, or --sleep-us, a kernel that
 * sleeps as long, modelling a device core busy without host CPU (so more
 * simulated cores than host CPUs still run in parallel).
 *
 * Prints "result tasks=N ns=T edges=E checksum=H": wall time of pto_run,
 * the dependencies libpto inferred, FNV-1a of C in (row, column) order.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pto/pto.h>

enum layout { L_TILED, L_RANGES, L_VIEWS, NUM_LAYOUTS };
enum form { F_ACC, F_P, F_NOP, NUM_FORMS };
enum { K_ACC, K_ACC_VIEW, K_GEMM, K_GEMM_VIEW, K_ADD, K_ADD_VIEW, K_NOP };

static const char *const layout_names[NUM_LAYOUTS] = {
	"tiled", "ranges", "views"
};

static const char *const form_names[NUM_FORMS] = { "acc", "p", "nop" };

struct vw {
	enum layout layout;
	enum form form;
	uint64_t tile, mt, nt, kt, batch, slots;
	uint64_t tasks;
	float *a, *b, *c;
	struct pto_view va, vb, vc;	/* whole matrices, all slots */
};

static uint64_t sleep_ns;

#define F32P(x) ((float *)(uintptr_t)(x))

/* ---- kernels ------------------------------------------------------------ */

static bool kernel_sleep(void)
{
	struct timespec ts = { 0, (long)sleep_ns };

	if (!sleep_ns)
		return false;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return true;
}

/* C (+)= A B on T x T tiles, rows ldc, lda, ldb elements apart */
static void gemm_core(float *c, uint64_t ldc, const float *a, uint64_t lda,
		      const float *b, uint64_t ldb, uint64_t t, bool acc)
{
	uint64_t i, j, l;

	if (kernel_sleep())
		return;
	for (i = 0; i < t; i++) {
		if (!acc)
			memset(c + i * ldc, 0, t * sizeof(float));
		for (l = 0; l < t; l++)
			for (j = 0; j < t; j++)
				c[i * ldc + j] += a[i * lda + l] *
						  b[l * ldb + j];
	}
}

/* args: C, A, B, T, ldc, lda, ldb */
static void acc_kernel(const uint64_t *a, uint32_t n)
{
	gemm_core(F32P(a[0]), a[4], F32P(a[1]), a[5], F32P(a[2]), a[6],
		  a[3], true);
}

/* P = A B; args: P (dense), A, B, T, lda, ldb */
static void gemm_kernel(const uint64_t *a, uint32_t n)
{
	gemm_core(F32P(a[0]), a[3], F32P(a[1]), a[4], F32P(a[2]), a[5],
		  a[3], false);
}

/* C += P; args: C, P (dense), T, ldc */
static void add_kernel(const uint64_t *a, uint32_t n)
{
	float *c = F32P(a[0]);
	const float *p = F32P(a[1]);
	uint64_t t = a[2], i, j;

	for (i = 0; i < t; i++)
		for (j = 0; j < t; j++)
			c[i * a[3] + j] += p[i * t + j];
}

static float *vaddr(const uint64_t *a, uint32_t i, uint64_t *ld)
{
	const struct pto_view_desc *d = pto_arg_view(a, i);

	*ld = d->stride[0];
	return F32P(d->addr);
}

/* args: views of C, A, B */
static void acc_view(const uint64_t *a, uint32_t n)
{
	uint64_t ldc, lda, ldb;
	float *c = vaddr(a, 0, &ldc), *x = vaddr(a, 1, &lda);
	float *y = vaddr(a, 2, &ldb);

	gemm_core(c, ldc, x, lda, y, ldb, pto_arg_view(a, 0)->shape[0], true);
}

/* args: views of P, A, B */
static void gemm_view(const uint64_t *a, uint32_t n)
{
	uint64_t ldp, lda, ldb;
	float *p = vaddr(a, 0, &ldp), *x = vaddr(a, 1, &lda);
	float *y = vaddr(a, 2, &ldb);

	gemm_core(p, ldp, x, lda, y, ldb, pto_arg_view(a, 0)->shape[0],
		  false);
}

/* args: views of C, P */
static void add_view(const uint64_t *a, uint32_t n)
{
	uint64_t ldc, ldp, t = pto_arg_view(a, 0)->shape[0], i, j;
	float *c = vaddr(a, 0, &ldc), *p = vaddr(a, 1, &ldp);

	for (i = 0; i < t; i++)
		for (j = 0; j < t; j++)
			c[i * ldc + j] += p[i * ldp + j];
}

static void nop_kernel(const uint64_t *a, uint32_t n)
{
}

/* ---- layouts ------------------------------------------------------------ */

/* Element (r, c) of slot s of a matrix of rt x ct tiles. */
static uint64_t elem(const struct vw *w, uint64_t rt, uint64_t ct,
		     uint64_t s, uint64_t r, uint64_t c)
{
	uint64_t t = w->tile;

	if (w->layout != L_TILED)
		return (s * rt * t + r) * ct * t + c;
	return ((s * rt + r / t) * ct + c / t) * t * t + (r % t) * t + c % t;
}

static uint64_t ld(const struct vw *w, uint64_t ct)
{
	return w->layout == L_TILED ? w->tile : ct * w->tile;
}

/* The tile (i, j) of slot s: its byte range, or its view. */
static struct pto_param tile_param(const struct vw *w, uint32_t kind,
				   float *m, const struct pto_view *whole,
				   uint64_t rt, uint64_t ct, uint64_t s,
				   uint64_t i, uint64_t j,
				   struct pto_view *v)
{
	uint64_t t = w->tile;
	uint64_t off = elem(w, rt, ct, s, i * t, j * t) * sizeof(float);
	uint64_t span = ((t - 1) * ld(w, ct) + t) * sizeof(float);

	if (w->layout == L_VIEWS) {
		*v = pto_view_tile_2d(*whole, (s * rt + i) * t, j * t, t, t);
		return (struct pto_param){ .kind = kind | PTO_PARAM_VIEW,
					   .view = v };
	}
	return (struct pto_param){ .kind = kind, .base = m, .offset = off,
				   .size = span };
}

/* ---- the task graph ----------------------------------------------------- */

static int submit(struct pto_runtime *rt, uint32_t k, enum pto_worker_type t,
		  const struct pto_param *p, uint32_t n)
{
	int64_t id = pto_submit_task(rt, k, t, p, n);

	return id < 0 ? (int)id : 0;
}

/* C(i,j) += A(i,k) B(k,j) in one task (forms acc and nop) */
static int step_acc(struct pto_runtime *rt, const struct vw *w, uint64_t s,
		    uint64_t i, uint64_t j, uint64_t k)
{
	struct pto_view v[3];
	bool views = w->layout == L_VIEWS;
	struct pto_param p[] = {
		tile_param(w, PTO_PARAM_INOUT, w->c, &w->vc, w->mt, w->nt, s,
			   i, j, &v[0]),
		tile_param(w, PTO_PARAM_INPUT, w->a, &w->va, w->mt, w->kt, s,
			   i, k, &v[1]),
		tile_param(w, PTO_PARAM_INPUT, w->b, &w->vb, w->kt, w->nt, s,
			   k, j, &v[2]),
		PTO_SCALAR(w->tile), PTO_SCALAR(ld(w, w->nt)),
		PTO_SCALAR(ld(w, w->kt)), PTO_SCALAR(ld(w, w->nt)),
	};

	if (w->form == F_NOP)
		return submit(rt, K_NOP, PTO_WORKER_CUBE, p, 3);
	return submit(rt, views ? K_ACC_VIEW : K_ACC, PTO_WORKER_CUBE, p,
		      views ? 3 : 7);
}

/* P = A(i,k) B(k,j), C(i,j) += P (form p, the samples' graph) */
static int step_p(struct pto_runtime *rt, const struct vw *w, uint64_t s,
		  uint64_t i, uint64_t j, uint64_t k)
{
	uint64_t t = w->tile, tb = t * t * sizeof(float);
	struct pto_view v[3], pv = {
		.dtype = PTO_DTYPE_F32, .ndim = 2, .shape = { t, t },
	};
	bool views = w->layout == L_VIEWS;
	void *tmp = NULL;
	struct pto_param g[] = {
		views ? PTO_OUT_VIEW(&pv) : PTO_OUT(&tmp, tb),
		tile_param(w, PTO_PARAM_INPUT, w->a, &w->va, w->mt, w->kt, s,
			   i, k, &v[1]),
		tile_param(w, PTO_PARAM_INPUT, w->b, &w->vb, w->kt, w->nt, s,
			   k, j, &v[2]),
		PTO_SCALAR(t), PTO_SCALAR(ld(w, w->kt)),
		PTO_SCALAR(ld(w, w->nt)),
	};
	int ret;

	ret = submit(rt, views ? K_GEMM_VIEW : K_GEMM, PTO_WORKER_CUBE, g,
		     views ? 3 : 6);
	if (ret)
		return ret;
	{
		struct pto_param a[] = {
			tile_param(w, PTO_PARAM_INOUT, w->c, &w->vc, w->mt,
				   w->nt, s, i, j, &v[0]),
			views ? PTO_IN_VIEW(&pv) : PTO_IN(tmp, 0, tb),
			PTO_SCALAR(t), PTO_SCALAR(ld(w, w->nt)),
		};

		return submit(rt, views ? K_ADD_VIEW : K_ADD,
			      PTO_WORKER_VECTOR, a, views ? 2 : 4);
	}
}

/* A batch in a scope, its k steps in tile order (as samples/bgemm.c). */
static int batch(struct pto_runtime *rt, const struct vw *w, uint64_t s)
{
	uint64_t i, j, k;
	int ret = 0, end;

	pto_scope_begin(rt);
	for (i = 0; i < w->mt && !ret; i++)
		for (j = 0; j < w->nt && !ret; j++)
			for (k = 0; k < w->kt && !ret; k++)
				ret = w->form == F_P ?
				      step_p(rt, w, s, i, j, k) :
				      step_acc(rt, w, s, i, j, k);
	end = pto_scope_end(rt);
	return ret ? ret : end;
}

static int orch(struct pto_runtime *rt, void *arg)
{
	const struct vw *w = arg;
	uint64_t b;
	int ret = 0;

	for (b = 0; b < w->batch && !ret; b++)
		ret = batch(rt, w, b % w->slots);
	return ret;
}

/* ---- setup -------------------------------------------------------------- */

static int reg(struct pto_runtime *rt)
{
	static const struct {
		uint32_t id;
		enum pto_worker_type type;
		pto_kernel_fn fn;
	} k[] = {
		{ K_ACC, PTO_WORKER_CUBE, acc_kernel },
		{ K_ACC_VIEW, PTO_WORKER_CUBE, acc_view },
		{ K_GEMM, PTO_WORKER_CUBE, gemm_kernel },
		{ K_GEMM_VIEW, PTO_WORKER_CUBE, gemm_view },
		{ K_ADD, PTO_WORKER_VECTOR, add_kernel },
		{ K_ADD_VIEW, PTO_WORKER_VECTOR, add_view },
		{ K_NOP, PTO_WORKER_CUBE, nop_kernel },
	};
	unsigned int i;
	int ret = 0;

	for (i = 0; i < sizeof(k) / sizeof(k[0]) && !ret; i++)
		ret = pto_kernel_register(rt, k[i].id, k[i].type, k[i].fn,
					  NULL);
	return ret;
}

/*
 * Matrix m of rt x ct tiles per slot, element (r, c) of the stacked
 * matrix a small integer of (r, c): every layout holds the same values,
 * and every sum is exact, so every layout's C is the same bit for bit.
 */
static void fill(const struct vw *w, float *m, uint64_t rt, uint64_t ct,
		 uint64_t mul, uint64_t mod)
{
	uint64_t t = w->tile, s, r, c;

	for (s = 0; s < w->slots; s++)
		for (r = 0; r < rt * t; r++)
			for (c = 0; c < ct * t; c++)
				m[elem(w, rt, ct, s, r, c)] =
					(float)(((s * rt * t + r) * ct * t + c) *
						mul % mod) - (float)(mod / 2);
}

static int alloc(struct pto_runtime *rt, struct vw *w)
{
	uint64_t t = w->tile, s = w->slots;
	uint64_t na = s * w->mt * w->kt * t * t, nb = s * w->kt * w->nt * t * t;
	uint64_t nc = s * w->mt * w->nt * t * t;

	w->a = pto_malloc(rt, na * sizeof(float));
	w->b = pto_malloc(rt, nb * sizeof(float));
	w->c = pto_malloc(rt, nc * sizeof(float));
	if (!w->a || !w->b || !w->c)
		return -ENOMEM;
	fill(w, w->a, w->mt, w->kt, 7, 5);
	fill(w, w->b, w->kt, w->nt, 3, 7);
	memset(w->c, 0, nc * sizeof(float));
	w->va = pto_view_2d(w->a, PTO_DTYPE_F32, s * w->mt * t, w->kt * t,
			    w->kt * t);
	w->vb = pto_view_2d(w->b, PTO_DTYPE_F32, s * w->kt * t, w->nt * t,
			    w->nt * t);
	w->vc = pto_view_2d(w->c, PTO_DTYPE_F32, s * w->mt * t, w->nt * t,
			    w->nt * t);
	return 0;
}

/* FNV-1a of C in (slot, row, column) order: the same in every layout. */
static uint64_t checksum(const struct vw *w)
{
	uint64_t h = 0xcbf29ce484222325ull, t = w->tile, s, r, c, x;
	const unsigned char *p;

	for (s = 0; s < w->slots; s++) {
		for (r = 0; r < w->mt * t; r++) {
			for (c = 0; c < w->nt * t; c++) {
				p = (const unsigned char *)
				    &w->c[elem(w, w->mt, w->nt, s, r, c)];
				for (x = 0; x < sizeof(float); x++)
					h = (h ^ p[x]) * 0x100000001b3ull;
			}
		}
	}
	return h;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ptobench-views --layout tiled|ranges|views --form acc|p|nop\n"
"         [--tile T] [--m MT] [--n NT] [--k KT] [--batch B] [--slots S]\n"
"         [--cores cube=N,vector=N] [--sleep-us US]\n"
"One BGEMM run for ptobench --views; prints a result line.\n");
}

static int lookup(const char *arg, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, names[i]))
			return i;
	return -1;
}

static int parse(int argc, char **argv, struct vw *w, struct pto_config *cfg)
{
	static const struct option lo[] = {
		{ "layout", required_argument, NULL, 'l' },
		{ "form", required_argument, NULL, 'f' },
		{ "tile", required_argument, NULL, 't' },
		{ "m", required_argument, NULL, 'm' },
		{ "n", required_argument, NULL, 'n' },
		{ "k", required_argument, NULL, 'k' },
		{ "batch", required_argument, NULL, 'b' },
		{ "slots", required_argument, NULL, 's' },
		{ "cores", required_argument, NULL, 'c' },
		{ "sleep-us", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, x = 0;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'l':
			x = lookup(optarg, layout_names, NUM_LAYOUTS);
			w->layout = x;
			break;
		case 'f':
			x = lookup(optarg, form_names, NUM_FORMS);
			w->form = x;
			break;
		case 't':
			w->tile = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			w->mt = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			w->nt = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			w->kt = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			w->batch = strtoull(optarg, NULL, 0);
			break;
		case 's':
			w->slots = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			x = pto_parse_cores(optarg, cfg->cores);
			break;
		case 'S':
			sleep_ns = strtoull(optarg, NULL, 0) * 1000;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			x = -1;
		}
		if (x < 0)
			break;
	}
	if (x < 0 || optind < argc || !w->tile || w->tile > 256 || !w->mt ||
	    !w->nt || !w->kt || !w->batch || !w->slots || w->slots > 4096 ||
	    sleep_ns >= 1000000000ull) {
		usage(stderr);
		return -1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct vw w = {
		.tile = 64, .mt = 4, .nt = 4, .kt = 4, .batch = 1, .slots = 1,
	};
	struct pto_runtime *rt = NULL;
	struct pto_stats st;
	struct pto_config cfg;
	uint64_t t0, ns;
	int ret;

	pto_config_init(&cfg);
	if (parse(argc, argv, &w, &cfg))
		return 2;
	w.tasks = w.batch * w.mt * w.nt * w.kt * (w.form == F_P ? 2 : 1);
	ret = pto_runtime_create(&cfg, &rt);
	if (!ret)
		ret = reg(rt);
	if (!ret)
		ret = alloc(rt, &w);
	if (!ret) {
		t0 = now_ns();
		ret = pto_run(rt, orch, &w);
		ns = now_ns() - t0;
	}
	if (!ret)
		ret = pto_get_stats(rt, &st);
	if (ret) {
		fprintf(stderr, "ptobench-views: %s\n", strerror(-ret));
		pto_runtime_destroy(rt);
		return 1;
	}
	printf("result tasks=%" PRIu64 " ns=%" PRIu64 " edges=%" PRIu64
	       " checksum=%016" PRIx64 "\n", w.tasks, ns, st.edges,
	       checksum(&w));
	pto_runtime_destroy(rt);
	return 0;
}
