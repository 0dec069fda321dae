// SPDX-License-Identifier: MIT
/*
 * ptobench worker for StarPU (Debian's libstarpu-dev, 1.3): the same DAGs
 * as tasks on registered data handles with sequential consistency, which
 * gives StarPU's implicit RAW, WAR and WAW dependencies.
 *
 * pto's runtime-allocated OUTPUT buffers become StarPU's idiom for them: a
 * handle registered with home node -1 (StarPU allocates it on first write)
 * and unregistered once its last reader has been submitted.  Tasks are
 * built with starpu_task_create()/starpu_task_submit(), the cheapest path
 * (no variadic starpu_task_insert()).  CPU workers only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <starpu.h>

#include "worker.h"

struct acc {
	starpu_data_handle_t h;
	enum starpu_data_access_mode mode;
};

#define R(x) ((struct acc){ (x), STARPU_R })
#define W(x) ((struct acc){ (x), STARPU_W })
#define RW(x) ((struct acc){ (x), STARPU_RW })

static void nop_cpu(void *buffers[], void *arg)
{
	worker_count_task();
}

static struct starpu_codelet nop_cl = {
	.cpu_funcs = { nop_cpu },
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "nop",
};

/* sparse: the task's index in cl_arg (no allocation per task) */
static void stamp_cpu(void *buffers[], void *arg)
{
	worker_task_started((uintptr_t)arg);
	worker_count_task();
}

static struct starpu_codelet stamp_cl = {
	.cpu_funcs = { stamp_cpu },
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "stamp",
};

static int submit_cl(struct starpu_codelet *cl, void *arg,
		     const struct acc *a, int n)
{
	struct starpu_task *t = starpu_task_create();

	t->cl = cl;
	t->cl_arg = arg;
	t->nbuffers = n;
	for (int i = 0; i < n; i++) {
		STARPU_TASK_SET_HANDLE(t, a[i].h, i);
		STARPU_TASK_SET_MODE(t, a[i].mode, i);
	}
	return starpu_task_submit(t);
}

static int submit(const struct acc *a, int n)
{
	return submit_cl(&nop_cl, NULL, a, n);
}

#define SUBMIT(...) do {						\
	const struct acc a_[] = { __VA_ARGS__ };			\
	int e_ = submit(a_, sizeof(a_) / sizeof(a_[0]));		\
	if (e_)								\
		return e_;						\
} while (0)

/* A runtime-allocated tile, as pto's OUTPUT. */
static starpu_data_handle_t fresh(const struct bench_geom *g)
{
	starpu_data_handle_t h;

	starpu_variable_data_register(&h, -1, 0, g->tile);
	return h;
}

/* Registered tiles of a run: one handle per g->tile of never-touched memory. */
static starpu_data_handle_t *tiles;
static size_t ntiles;
static char *mem;

static int chain(const struct bench_geom *g)
{
	for (uint64_t i = 0; i < g->chain; i++)
		SUBMIT(RW(tiles[0]));
	return 0;
}

/* A task, then a wait for it (pto: pto_wait()). */
static int wait_each(const struct bench_geom *g)
{
	for (uint64_t i = 0; i < g->chain; i++) {
		SUBMIT(RW(tiles[0]));
		if (starpu_task_wait_for_all())
			return -EIO;
	}
	return 0;
}

/* Runs: two independent tasks, then waiting for all (pto: a pto_run()). */
static int runs(const struct bench_geom *g)
{
	for (uint64_t i = 0; i < g->chain; i++) {
		SUBMIT(R(tiles[0]), W(tiles[2]));
		SUBMIT(R(tiles[1]), RW(tiles[3]));
		if (starpu_task_wait_for_all())
			return -EIO;
	}
	return 0;
}

/* A task on a tile of its own, then host work with no StarPU call. */
static int sparse(const struct bench_geom *g)
{
	for (uint64_t i = 0; i < g->chain; i++) {
		struct acc a = RW(tiles[i % SPARSE_TILES]);
		int err;

		worker_submit_ns[i] = worker_now_ns();
		err = submit_cl(&stamp_cl, (void *)(uintptr_t)i, &a, 1);
		if (err)
			return err;
		worker_host_work(g->gap_ns);
	}
	return 0;
}

/* Per batch slot: A (MT*KT), B (KT*NT), C (MT*NT), S (MT*NT); then W. */
#define BG_SLOT_TILES (BGEMM_MT * BGEMM_KT + BGEMM_KT * BGEMM_NT + \
		       2 * BGEMM_MT * BGEMM_NT)

static int bgemm_tile(const struct bench_geom *g, starpu_data_handle_t *slot,
		      starpu_data_handle_t w, int m, int n)
{
	starpu_data_handle_t *a0 = slot, *b0 = a0 + BGEMM_MT * BGEMM_KT;
	starpu_data_handle_t *c0 = b0 + BGEMM_KT * BGEMM_NT;
	starpu_data_handle_t c = c0[m * BGEMM_NT + n];
	starpu_data_handle_t s = c0[BGEMM_MT * BGEMM_NT + m * BGEMM_NT + n];

	for (int k = 0; k < BGEMM_KT; k++) {
		starpu_data_handle_t a = a0[m * BGEMM_KT + k];
		starpu_data_handle_t b = b0[k * BGEMM_NT + n], p;

		switch (g->shape) {
		case SHAPE_BGEMM:
			p = fresh(g);
			SUBMIT(R(a), R(b), W(p));
			SUBMIT(R(p), RW(c));
			starpu_data_unregister_submit(p);
			break;
		case SHAPE_BGEMM_WEIGHT:
			p = fresh(g);
			SUBMIT(R(a), R(b), R(w), W(p));
			SUBMIT(R(p), R(w), RW(c));
			starpu_data_unregister_submit(p);
			break;
		default:	/* SHAPE_BGEMM_SCRATCH */
			SUBMIT(R(a), R(b), W(s));
			SUBMIT(R(s), RW(c));
			break;
		}
	}
	return 0;
}

static int bgemm(const struct bench_geom *g)
{
	starpu_data_handle_t w = tiles[BGEMM_SLOTS * BG_SLOT_TILES];

	for (uint32_t b = 0; b < g->batch; b++) {
		starpu_data_handle_t *slot =
			tiles + (b % BGEMM_SLOTS) * BG_SLOT_TILES;

		for (int m = 0; m < BGEMM_MT; m++) {
			for (int n = 0; n < BGEMM_NT; n++) {
				int err = bgemm_tile(g, slot, w, m, n);

				if (err)
					return err;
			}
		}
	}
	return 0;
}

static int stencil(const struct bench_geom *g)
{
	const size_t w = g->width;

	for (uint32_t s = 0; s < g->steps; s++) {
		starpu_data_handle_t *src = tiles + (s & 1) * w;
		starpu_data_handle_t *dst = tiles + !(s & 1) * w;

		for (size_t i = 0; i < w; i++)
			SUBMIT(R(src[(i + w - 1) % w]), R(src[i]),
			       R(src[(i + 1) % w]), W(dst[i]));
	}
	return 0;
}

/* Per chunk: q, out, then K and V blocks. */
#define PA_TILES_PER_CHUNK (2 + 2 * PA_BLOCKS)

static int pa_block(const struct bench_geom *g, starpu_data_handle_t *ch,
		    int bn, starpu_data_handle_t acc[3])
{
	starpu_data_handle_t q = ch[0], out = ch[1];
	starpu_data_handle_t kc = ch[2 + bn], vc = ch[2 + PA_BLOCKS + bn];
	starpu_data_handle_t sij = fresh(g), pij = fresh(g), mij = fresh(g);
	starpu_data_handle_t lij = fresh(g), oin = fresh(g);
	starpu_data_handle_t tmp[] = { sij, pij, mij, lij, oin };

	SUBMIT(R(q), R(kc), W(sij));
	SUBMIT(R(sij), W(pij), W(mij), W(lij));
	SUBMIT(R(pij), R(vc), W(oin));
	if (bn == PA_BLOCKS - 1)
		SUBMIT(R(mij), R(lij), R(oin), RW(acc[0]), RW(acc[1]),
		       RW(acc[2]), W(out));
	else
		SUBMIT(R(mij), R(lij), R(oin), RW(acc[0]), RW(acc[1]),
		       RW(acc[2]));
	for (int i = 0; i < 5; i++)
		starpu_data_unregister_submit(tmp[i]);
	return 0;
}

static int paged_attn(const struct bench_geom *g)
{
	for (uint32_t q = 0; q < g->q_loop; q++) {
		for (int c = 0; c < PA_CHUNKS; c++) {
			starpu_data_handle_t *ch =
				tiles + c * PA_TILES_PER_CHUNK;
			starpu_data_handle_t acc[3] = { fresh(g), fresh(g),
							fresh(g) };
			int err;

			SUBMIT(W(acc[0]), W(acc[1]), W(acc[2]));
			for (int bn = 0; bn < PA_BLOCKS; bn++) {
				err = pa_block(g, ch, bn, acc);
				if (err)
					return err;
			}
			for (int i = 0; i < 3; i++)
				starpu_data_unregister_submit(acc[i]);
		}
	}
	return 0;
}

static size_t tiles_needed(const struct bench_geom *g)
{
	switch (g->shape) {
	case SHAPE_CHAIN:
	case SHAPE_WAIT:
		return 1;
	case SHAPE_SPARSE:
		return SPARSE_TILES;
	case SHAPE_RUNS:
		return 4;
	case SHAPE_BGEMM:
	case SHAPE_BGEMM_WEIGHT:
	case SHAPE_BGEMM_SCRATCH:
		return (size_t)BGEMM_SLOTS * BG_SLOT_TILES + 1;
	case SHAPE_STENCIL:
		return 2 * (size_t)g->width;
	case SHAPE_PAGED_ATTN:
		return (size_t)PA_CHUNKS * PA_TILES_PER_CHUNK;
	default:
		return 0;
	}
}

static int submit_all(const struct bench_geom *g)
{
	switch (g->shape) {
	case SHAPE_CHAIN:
		return chain(g);
	case SHAPE_WAIT:
		return wait_each(g);
	case SHAPE_SPARSE:
		return sparse(g);
	case SHAPE_RUNS:
		return runs(g);
	case SHAPE_BGEMM:
	case SHAPE_BGEMM_WEIGHT:
	case SHAPE_BGEMM_SCRATCH:
		return bgemm(g);
	case SHAPE_STENCIL:
		return stencil(g);
	case SHAPE_PAGED_ATTN:
		return paged_attn(g);
	default:
		return -EINVAL;
	}
}

static void tiles_free(const struct bench_geom *g)
{
	for (size_t i = 0; i < ntiles; i++)
		starpu_data_unregister(tiles[i]);
	free(tiles);
	munmap(mem, ntiles * g->tile);
	tiles = NULL;
	mem = NULL;
}

static int tiles_alloc(const struct bench_geom *g)
{
	void *p;

	ntiles = tiles_needed(g);
	p = mmap(NULL, ntiles * g->tile, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	tiles = calloc(ntiles, sizeof(*tiles));
	if (p == MAP_FAILED || !tiles) {
		if (p != MAP_FAILED)
			munmap(p, ntiles * g->tile);
		free(tiles);
		return -ENOMEM;
	}
	mem = p;
	for (size_t i = 0; i < ntiles; i++)
		starpu_variable_data_register(&tiles[i], STARPU_MAIN_RAM,
					      (uintptr_t)(mem + i * g->tile),
					      g->tile);
	return 0;
}

static int sp_init(uint32_t cores, enum bench_shape shape,
		   char *info, size_t len)
{
	struct starpu_conf conf;
	int err;

	/* No banner; no performance-model files in $HOME. */
	setenv("STARPU_SILENT", "1", 0);
	starpu_conf_init(&conf);
	if (cores)
		conf.ncpus = cores;
	conf.ncuda = 0;
	conf.nopencl = 0;
	err = starpu_init(&conf);
	if (err) {
		fprintf(stderr, "ptobench-starpu: starpu_init: %s\n",
			strerror(-err));
		return err;
	}
	snprintf(info, len, " workers=%u sched=%s",
		 starpu_cpu_worker_get_count(),
		 getenv("STARPU_SCHED") ? getenv("STARPU_SCHED") : "default");
	return 0;
}

static int sp_run(const struct bench_geom *g, uint64_t *ns)
{
	uint64_t t0;
	int err = tiles_alloc(g);

	if (err)
		return err;
	t0 = worker_now_ns();
	err = submit_all(g);
	starpu_task_wait_for_all();
	*ns = worker_now_ns() - t0;
	tiles_free(g);
	return err;
}

static void sp_fini(char *info, size_t len)
{
	starpu_shutdown();
}

const struct worker_ops worker_ops = {
	.impl = "starpu",
	.init = sp_init,
	.run = sp_run,
	.fini = sp_fini,
};
