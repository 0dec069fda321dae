// SPDX-License-Identifier: MIT
/*
 * Paged attention inputs, sizing and the double-precision reference,
 * shared by both paged attention samples; see pa.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pa.h"

struct pa_shape {
	const char *name;
	uint64_t batch, heads, head_dim, context;
	bool var_len;
	bool by_default;	/* run when no case is named */
};

/* The reference design's golden cases, and one with ragged multi-block sequences. */
static const struct pa_shape pa_shapes[] = {
	{ "Case1", 1, 16, 16, 16, false, true },
	{ "CaseBatch256", 256, 1, 256, 16, false, true },
	{ "CaseVarLen", 8, 8, 64, 100, true, false },
};

#define PA_NSHAPES (sizeof(pa_shapes) / sizeof(pa_shapes[0]))

struct pa_args {
	const char *cases;
	uint64_t batch, heads, head_dim, context, var_len;
	bool named;	/* case= was given */
	bool custom;	/* a custom-case size was given */
};

static int pa_add_case(struct pa *pa, const char *name, uint64_t batch,
		       uint64_t heads, uint64_t head_dim, uint64_t context,
		       bool var_len)
{
	struct pa_case *c = &pa->cases[pa->ncases++];

	if (!batch || !heads || !head_dim || !context ||
	    batch > (1u << 16) || heads > 1024 || head_dim > 4096 ||
	    context > (1u << 20)) {
		fprintf(stderr,
			"%s: %s: batch=%" PRIu64 " heads=%" PRIu64
			" head_dim=%" PRIu64 " context=%" PRIu64
			" out of range (batch 1..65536, heads 1..1024, head_dim 1..4096, context 1..1048576)\n",
			pa->prog, name, batch, heads, head_dim, context);
		return -EINVAL;
	}
	c->name = name;
	c->batch = batch;
	c->heads = heads;
	c->head_dim = head_dim;
	c->context = context;
	c->block_size = pa->block_size;
	c->var_len = var_len;
	return 0;
}

/* case=Name[,Name...] or "all" (the default shapes) */
static int pa_select(struct pa *pa, char *list)
{
	char *tok, *save = NULL;
	const struct pa_shape *s;
	unsigned int i;
	int ret = 0;

	if (!list[strspn(list, ",")]) {
		fprintf(stderr, "%s: case= names no case\n", pa->prog);
		return -EINVAL;
	}
	for (tok = strtok_r(list, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < PA_NSHAPES; i++) {
			s = &pa_shapes[i];
			if (strcmp(tok, "all") ? strcmp(tok, s->name) :
			    !s->by_default)
				continue;
			if (pa->ncases == PA_NSHAPES * 4)
				return -E2BIG;
			ret = pa_add_case(pa, s->name, s->batch, s->heads,
					  s->head_dim, s->context, s->var_len);
			if (ret || strcmp(tok, "all"))
				break;
		}
		if (i == PA_NSHAPES && strcmp(tok, "all")) {
			fprintf(stderr, "%s: unknown case '%s' (have", pa->prog,
				tok);
			for (i = 0; i < PA_NSHAPES; i++)
				fprintf(stderr, " %s", pa_shapes[i].name);
			fprintf(stderr, ", all)\n");
			ret = -EINVAL;
		}
	}
	return ret;
}

/*
 * An explicit batch=/heads=/head_dim=/context=/varlen= makes one custom case
 * (the sizes not given are Case1's); it does not mix with case=.
 */
static int pa_cases(struct pa *pa, struct pa_args *a)
{
	char *list;
	int ret;

	if (a->named && a->custom) {
		fprintf(stderr,
			"%s: case= and the custom-case sizes (batch=, heads=, head_dim=, context=, varlen=) exclude each other\n",
			pa->prog);
		return -EINVAL;
	}
	pa->cases = calloc(PA_NSHAPES * 4, sizeof(*pa->cases));
	if (!pa->cases)
		return -ENOMEM;
	if (a->custom)
		return pa_add_case(pa, "custom", a->batch, a->heads,
				   a->head_dim, a->context, a->var_len);
	list = strdup(a->cases);
	if (!list)
		return -ENOMEM;
	ret = pa_select(pa, list);
	free(list);
	return ret;
}

/* Context lengths, and a random permutation of blocks as the table. */
static int pa_make_table(struct pa_case *c, uint64_t *state)
{
	uint64_t b, i, n = 0, *perm, j, t;

	c->context_lens = calloc(c->batch, sizeof(uint64_t));
	if (!c->context_lens)
		return -ENOMEM;
	c->max_blocks = 0;
	for (b = 0; b < c->batch; b++) {
		c->context_lens[b] = c->var_len ?
			1 + sample_rand(state) % c->context : c->context;
		if (pa_blocks(c, b) > c->max_blocks)
			c->max_blocks = pa_blocks(c, b);
		n += pa_blocks(c, b);
	}
	c->num_blocks = n;
	c->block_table = calloc(c->batch * c->max_blocks, sizeof(uint64_t));
	perm = calloc(n, sizeof(uint64_t));
	if (!c->block_table || !perm) {
		free(perm);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n; i > 1; i--) {	/* Fisher-Yates */
		j = sample_rand(state) % i;
		t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	for (b = 0, j = 0; b < c->batch; b++)
		for (i = 0; i < pa_blocks(c, b); i++)
			c->block_table[b * c->max_blocks + i] = perm[j++];
	free(perm);
	return 0;
}

/*
 * Fill the key (or value) cache of kvn elements, token rows kv_ld apart,
 * in token order: both layouts hold the same values.
 */
static void pa_fill_cache(const struct pa_case *c, float *cache,
			  uint64_t kvn, uint64_t *state)
{
	uint64_t t;

	for (t = 0; t < kvn / c->head_dim; t++)
		sample_fill_f32(cache + t * c->kv_ld, c->head_dim, state);
}

static int pa_make_inputs(struct pto_runtime *rt, const struct pa *pa,
			  struct pa_case *c, uint64_t *state)
{
	uint64_t qn = pa_out_elems(c), kvn;
	bool fused = pa->layout == SAMPLE_ROWMAJOR;
	int ret;

	ret = pa_make_table(c, state);
	if (ret)
		return ret;
	c->layout = pa->layout;
	c->kv_ld = fused ? 2 * c->head_dim : c->head_dim;
	kvn = c->num_blocks * c->block_size * c->head_dim;
	c->query = sample_malloc(rt, pa->prog, "query", qn * 4);
	c->key_cache = c->query ? sample_malloc(rt, pa->prog, "key cache",
		(fused ? 2 : 1) * kvn * 4) : NULL;
	if (fused && c->key_cache)	/* the right half of every row */
		c->value_cache = c->key_cache + c->head_dim;
	else if (c->key_cache)
		c->value_cache = sample_malloc(rt, pa->prog, "value cache",
					       kvn * 4);
	c->out = c->value_cache ?
		sample_malloc(rt, pa->prog, "out", qn * 4) : NULL;
	if (!c->out)
		return -ENOMEM;
	sample_fill_f32(c->query, qn, state);
	/* tokens past a sequence's end hold data too: they must be ignored */
	pa_fill_cache(c, c->key_cache, kvn, state);
	pa_fill_cache(c, c->value_cache, kvn, state);
	memset(c->out, 0xff, qn * 4);	/* NaN: unwritten output fails */
	c->scale = (float)(1.0 / sqrt((double)c->head_dim));
	return 0;
}

static uint64_t pa_case_chunk(struct pto_runtime *rt, const struct pa *pa,
			      const struct pa_case *c);

/*
 * A case's inputs depend on the seed and its name only, so its checksum is
 * the same whichever other cases run with it.
 */
static uint64_t pa_case_seed(uint64_t seed, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	while (*name)
		h = (h ^ (unsigned char)*name++) * 0x100000001b3ull;
	return seed * 0x9e3779b97f4a7c15ull ^ h;
}

/* The chunk sizes are fixed here, not while a run is in flight. */
int pa_setup(struct pto_runtime *rt, struct pa *pa, int argc, char **argv)
{
	const struct pa_shape *d = &pa_shapes[0];
	struct pa_args a = {
		.cases = "all", .batch = d->batch, .heads = d->heads,
		.head_dim = d->head_dim, .context = d->context,
	};
	const char *layout = "tiled";
	const struct sample_opt opts[] = {
		{ "case", NULL, &a.cases,
		  "Case1, CaseBatch256, CaseVarLen, comma lists, all",
		  &a.named },
		{ "block", &pa->block_size, NULL, "tokens per KV block" },
		{ "chunk", &pa->chunk, NULL,
		  "sequences per scope (0: up to 16, fitting the rings)" },
		{ "seed", &pa->seed, NULL, "input data seed" },
		{ "layout", NULL, &layout,
		  "tiled, or rowmajor (fused KV matrix, 2-D views)" },
		{ "batch", &a.batch, NULL, "custom case: sequences",
		  &a.custom },
		{ "heads", &a.heads, NULL, "custom case: query heads",
		  &a.custom },
		{ "head_dim", &a.head_dim, NULL, "custom case: head size",
		  &a.custom },
		{ "context", &a.context, NULL, "custom case: context length",
		  &a.custom },
		{ "varlen", &a.var_len, NULL,
		  "custom case: lengths vary in [1, context]", &a.custom },
		{ NULL }
	};
	uint64_t state;
	unsigned int i;
	int ret;

	pa->block_size = 16;
	pa->seed = 1;
	ret = sample_parse_args(pa->prog, argc, argv, opts);
	if (ret)
		return ret;
	if (!pa->block_size || pa->block_size > 4096) {
		fprintf(stderr, "%s: block must be in [1, 4096]\n", pa->prog);
		return -EINVAL;
	}
	ret = sample_parse_layout(pa->prog, layout, 1u << SAMPLE_TILED |
				  1u << SAMPLE_ROWMAJOR, &pa->layout);
	if (!ret)
		ret = pa_cases(pa, &a);
	for (i = 0; i < pa->ncases && !ret; i++) {
		state = pa_case_seed(pa->seed, pa->cases[i].name);
		ret = pa_make_inputs(rt, pa, &pa->cases[i], &state);
		pa->cases[i].chunk = pa_case_chunk(rt, pa, &pa->cases[i]);
	}
	return ret;
}

void pa_teardown(struct pto_runtime *rt, struct pa *pa)
{
	struct pa_case *c;
	unsigned int i;

	for (i = 0; pa->cases && i < pa->ncases; i++) {
		c = &pa->cases[i];
		if (c->query)
			pto_free(rt, c->query);
		if (c->key_cache)
			pto_free(rt, c->key_cache);
		if (c->value_cache && c->layout == SAMPLE_TILED)
			pto_free(rt, c->value_cache);
		if (c->out)
			pto_free(rt, c->out);
		free(c->context_lens);
		free(c->block_table);
	}
	free(pa->cases);
	pa->cases = NULL;
	pa->ncases = 0;
}

/* One query row against the whole sequence, in double. */
static void pa_ref_row(const struct pa_case *c, uint64_t b, uint64_t h,
		       double *s, double *acc, float *out)
{
	uint64_t d = c->head_dim, len = c->context_lens[b], t, k;
	const float *q = c->query + (b * c->heads + h) * d;
	const float *kv;
	double mx = -INFINITY, sum = 0.0, w;

	for (t = 0; t < len; t++) {
		kv = pa_kv_token(c, c->key_cache, b, t);
		s[t] = 0.0;
		for (k = 0; k < d; k++)
			s[t] += (double)q[k] * kv[k];
		s[t] *= c->scale;
		if (s[t] > mx)
			mx = s[t];
	}
	memset(acc, 0, d * sizeof(double));
	for (t = 0; t < len; t++) {
		w = exp(s[t] - mx);
		sum += w;
		kv = pa_kv_token(c, c->value_cache, b, t);
		for (k = 0; k < d; k++)
			acc[k] += w * kv[k];
	}
	for (k = 0; k < d; k++)
		out[k] = (float)(acc[k] / sum);
}

void pa_reference_double(const struct pa_case *c, float *ref)
{
	double *s = calloc(c->context, sizeof(double));
	double *acc = calloc(c->head_dim, sizeof(double));
	uint64_t b, h;

	if (!s || !acc) {
		/* leave ref NaN: the comparison then fails loudly */
		memset(ref, 0xff, pa_out_elems(c) * sizeof(float));
	} else {
		for (b = 0; b < c->batch; b++)
			for (h = 0; h < c->heads; h++)
				pa_ref_row(c, b, h, s, acc,
					   ref + (b * c->heads + h) *
					   c->head_dim);
	}
	free(s);
	free(acc);
}

void pa_label(const struct pa *pa, const struct pa_case *c, char *buf,
	      size_t len)
{
	snprintf(buf, len, "%s %s", pa->prog, c->name);
}

/* The accumulators of one chunk of sequences b0 .. b0 + nb - 1. */
struct pa_chunk {
	const struct pa_case *c;
	uint64_t b0, nb, rows;		/* rows = nb * heads */
	void *o, *l, *m;		/* oi, li, mi bases ... */
	uint64_t o_off, l_off, m_off;	/* ... and byte offsets */
	uint64_t pv_off;		/* built-in: next zeroed PV tile */
	struct pto_view ov, lv, mv;	/* rowmajor: oi, li, mi as views */
};

static uint64_t pa_tile_bytes(const struct pa_case *c)
{
	return c->heads * c->head_dim * sizeof(float);
}

static uint64_t pa_chunk_blocks(const struct pa_case *c, uint64_t b0,
				uint64_t nb)
{
	uint64_t b, n = 0;

	for (b = b0; b < b0 + nb; b++)
		n += pa_blocks(c, b);
	return n;
}

/*
 * Built-in hub: one heap allocation [mi | li | oi | PV tiles], mi filled
 * with -inf by the task that allocates it, the rest zeroed by a second
 * FILL, so every PV GEMM accumulates into a zeroed tile of its own.
 */
static int pa_hub_builtin(struct pto_runtime *rt, struct pa_chunk *k)
{
	const struct pa_case *c = k->c;
	uint64_t vec = sample_heap_bytes(k->rows * 4);
	uint64_t o_bytes = sample_heap_bytes(k->rows * c->head_dim * 4);
	uint64_t total, rest;
	void *acc = NULL;
	int ret;

	k->m_off = 0;
	k->l_off = vec;
	k->o_off = 2 * vec;
	k->pv_off = k->o_off + o_bytes;
	total = k->pv_off + pa_chunk_blocks(c, k->b0, k->nb) *
		sample_heap_bytes(pa_tile_bytes(c));
	rest = total - k->l_off;
	{
		struct pto_param mi[] = {
			PTO_OUT(&acc, total), PTO_SCALAR(0xff800000u),
			PTO_SCALAR(k->rows * 4),
		};

		ret = sample_submit(rt, PA_K_FILL, PTO_WORKER_VECTOR, mi, 3);
		if (ret)
			return ret;
	}
	k->o = acc;
	k->l = acc;
	k->m = acc;
	{
		struct pto_param zero[] = {
			PTO_OUT_EXISTING(acc, k->l_off, rest), PTO_SCALAR(0),
			PTO_SCALAR(rest),
		};

		return sample_submit(rt, PA_K_FILL, PTO_WORKER_VECTOR, zero,
				     3);
	}
}

/* C hub: one task allocating and initialising oi, li and mi. */
static int pa_hub_c(struct pto_runtime *rt, struct pa_chunk *k)
{
	struct pto_param p[] = {
		PTO_OUT(&k->o, k->rows * k->c->head_dim * 4),
		PTO_OUT(&k->l, k->rows * 4),
		PTO_OUT(&k->m, k->rows * 4),
		PTO_SCALAR(k->rows), PTO_SCALAR(k->c->head_dim),
	};

	k->o_off = 0;
	k->l_off = 0;
	k->m_off = 0;
	return sample_submit(rt, PA_K_HUB, PTO_WORKER_VECTOR, p, 5);
}

/* QK -> SF -> PV -> UP for block i of sequence b. */
static int pa_block(struct pto_runtime *rt, const struct pa *pa,
		    struct pa_chunk *k, uint64_t b, uint64_t i)
{
	const struct pa_case *c = k->c;
	uint64_t h = c->heads, d = c->head_dim, v = pa_valid(c, b, i);
	uint64_t kv = pa_kv_off(c, b, i), tb = pa_tile_bytes(c);
	uint64_t r0 = (b - k->b0) * h;
	void *s = NULL, *p = NULL, *mj = NULL, *lj = NULL, *on = NULL;
	uint64_t on_off = 0;
	int ret;

	{
		struct pto_param qk[] = {
			PTO_OUT(&s, h * v * 4),
			PTO_IN(c->query, b * tb, tb),
			PTO_IN(c->key_cache, kv, v * d * 4),
			PTO_SCALAR(h), PTO_SCALAR(v), PTO_SCALAR(d),
		};

		ret = sample_submit(rt, PA_K_QK, PTO_WORKER_CUBE, qk, 6);
		if (ret)
			return ret;
	}
	{
		struct pto_param sf[] = {
			PTO_OUT(&p, h * v * 4), PTO_OUT(&mj, h * 4),
			PTO_OUT(&lj, h * 4), PTO_IN(s, 0, h * v * 4),
			PTO_SCALAR(pto_f32_bits(c->scale)),
			PTO_SCALAR(h), PTO_SCALAR(v),
		};

		ret = sample_submit(rt, PA_K_SF, PTO_WORKER_VECTOR, sf, 7);
		if (ret)
			return ret;
	}
	{
		struct pto_param pv[] = {
			PTO_OUT(&on, tb), PTO_IN(p, 0, h * v * 4),
			PTO_IN(c->value_cache, kv, v * d * 4),
			PTO_SCALAR(h), PTO_SCALAR(d), PTO_SCALAR(v),
		};

		if (pa->builtin) {	/* into the hub's next zeroed tile */
			on = k->o;
			on_off = k->pv_off;
			k->pv_off += sample_heap_bytes(tb);
			pv[0] = PTO_INOUT(on, on_off, tb);
		}
		ret = sample_submit(rt, PA_K_PV, PTO_WORKER_CUBE, pv, 6);
		if (ret)
			return ret;
	}
	{
		struct pto_param up[] = {
			PTO_INOUT(k->o, k->o_off + r0 * d * 4, h * d * 4),
			PTO_INOUT(k->l, k->l_off + r0 * 4, h * 4),
			PTO_INOUT(k->m, k->m_off + r0 * 4, h * 4),
			PTO_IN(on, on_off, tb), PTO_IN(lj, 0, h * 4),
			PTO_IN(mj, 0, h * 4), PTO_SCALAR(h), PTO_SCALAR(d),
		};

		return sample_submit(rt, PA_K_UP, PTO_WORKER_VECTOR, up, 8);
	}
}

/* ---- layout=rowmajor: every tensor a view ---------------------------- */

/* An f32 vector of n elements, offset elements into base. */
static struct pto_view pa_vec_view(void *base, uint64_t offset, uint64_t n)
{
	struct pto_view v = pto_view_nd(base, PTO_DTYPE_F32, 1, &n);

	v.offset = offset;
	return v;
}

/* A fresh rows x cols (cols 0: a vector of rows) f32 view to allocate. */
static struct pto_view pa_new_view(uint64_t rows, uint64_t cols)
{
	struct pto_view v = {
		.dtype = PTO_DTYPE_F32, .ndim = cols ? 2 : 1,
		.shape = { rows, cols },
	};

	return v;
}

/* Rows r0 .. r0 + n - 1 of a (batch * heads) x head_dim matrix. */
static struct pto_view pa_rows_view(const struct pa_case *c, float *m,
				    uint64_t r0, uint64_t n)
{
	return pto_view_slice(pto_view_2d(m, PTO_DTYPE_F32,
					  c->batch * c->heads, c->head_dim,
					  c->head_dim), 0, r0, n);
}

/* The key (value: 1) tile of block i of sequence b in the KV matrix. */
static struct pto_view pa_kv_view(const struct pa_case *c, int value,
				  uint64_t b, uint64_t i)
{
	uint64_t d = c->head_dim;
	struct pto_view kv = pto_view_2d(c->key_cache, PTO_DTYPE_F32,
					 c->num_blocks * c->block_size, 2 * d,
					 2 * d);

	kv = pto_view_tile_2d(kv, pa_kv_row(c, b, i), value ? d : 0,
			      pa_valid(c, b, i), d);
	return kv;
}

/* C hub: oi, li, mi allocated as views by the task that fills them. */
static int pa_hub_c_views(struct pto_runtime *rt, struct pa_chunk *k)
{
	struct pto_param p[] = {
		PTO_OUT_VIEW(&k->ov), PTO_OUT_VIEW(&k->lv),
		PTO_OUT_VIEW(&k->mv), PTO_SCALAR(k->rows),
		PTO_SCALAR(k->c->head_dim),
	};

	k->ov = pa_new_view(k->rows, k->c->head_dim);
	k->lv = pa_new_view(k->rows, 0);
	k->mv = pa_new_view(k->rows, 0);
	return sample_submit(rt, PA_K_HUB, PTO_WORKER_VECTOR, p, 5);
}

/* Built-in hub: the same ranges, then views of its allocation. */
static int pa_hub_builtin_views(struct pto_runtime *rt, struct pa_chunk *k)
{
	int ret = pa_hub_builtin(rt, k);

	k->ov = pto_view_2d(k->o, PTO_DTYPE_F32, k->rows, k->c->head_dim,
			    k->c->head_dim);
	k->ov.offset = k->o_off / 4;
	k->lv = pa_vec_view(k->l, k->l_off / 4, k->rows);
	k->mv = pa_vec_view(k->m, k->m_off / 4, k->rows);
	return ret;
}

/* The UP task on views: the block's rows of oi, li and mi. */
static int pa_update_views(struct pto_runtime *rt, struct pa_chunk *k,
			   uint64_t b, const struct pto_view *on,
			   const struct pto_view *lj,
			   const struct pto_view *mj)
{
	uint64_t h = k->c->heads, r0 = (b - k->b0) * h;
	struct pto_view o = pto_view_slice(k->ov, 0, r0, h);
	struct pto_view l = pto_view_slice(k->lv, 0, r0, h);
	struct pto_view m = pto_view_slice(k->mv, 0, r0, h);
	struct pto_param up[] = {
		PTO_INOUT_VIEW(&o), PTO_INOUT_VIEW(&l), PTO_INOUT_VIEW(&m),
		PTO_IN_VIEW(on), PTO_IN_VIEW(lj), PTO_IN_VIEW(mj),
		PTO_SCALAR(h), PTO_SCALAR(k->c->head_dim),
	};

	return sample_submit(rt, PA_K_UP, PTO_WORKER_VECTOR, up, 8);
}

/* QK -> SF -> PV -> UP for block i of sequence b, on views. */
static int pa_block_views(struct pto_runtime *rt, const struct pa *pa,
			  struct pa_chunk *k, uint64_t b, uint64_t i)
{
	const struct pa_case *c = k->c;
	uint64_t h = c->heads, d = c->head_dim, v = pa_valid(c, b, i);
	struct pto_view q = pa_rows_view(c, c->query, b * h, h);
	struct pto_view kt = pa_kv_view(c, 0, b, i);
	struct pto_view vt = pa_kv_view(c, 1, b, i);
	struct pto_view s = pa_new_view(h, v), p = pa_new_view(h, v);
	struct pto_view mj = pa_new_view(h, 0), lj = pa_new_view(h, 0);
	struct pto_view on = pa_new_view(h, d);
	struct pto_param qk[] = {
		PTO_OUT_VIEW(&s), PTO_IN_VIEW(&q), PTO_IN_VIEW(&kt),
		PTO_SCALAR(h), PTO_SCALAR(v), PTO_SCALAR(d),
	};
	struct pto_param sf[] = {
		PTO_OUT_VIEW(&p), PTO_OUT_VIEW(&mj), PTO_OUT_VIEW(&lj),
		PTO_IN_VIEW(&s), PTO_SCALAR(pto_f32_bits(c->scale)),
		PTO_SCALAR(h), PTO_SCALAR(v),
	};
	struct pto_param pv[] = {
		PTO_OUT_VIEW(&on), PTO_IN_VIEW(&p), PTO_IN_VIEW(&vt),
		PTO_SCALAR(h), PTO_SCALAR(d), PTO_SCALAR(v),
	};
	int ret;

	if (pa->builtin) {	/* into the hub's next zeroed tile */
		on = pto_view_2d(k->o, PTO_DTYPE_F32, h, d, d);
		on.offset = k->pv_off / 4;
		k->pv_off += sample_heap_bytes(pa_tile_bytes(c));
		pv[0] = PTO_INOUT_VIEW(&on);
	}
	ret = sample_submit(rt, PA_K_QK, PTO_WORKER_CUBE, qk, 6);
	if (!ret)
		ret = sample_submit(rt, PA_K_SF, PTO_WORKER_VECTOR, sf, 7);
	if (!ret)
		ret = sample_submit(rt, PA_K_PV, PTO_WORKER_CUBE, pv, 6);
	if (!ret)
		ret = pa_update_views(rt, k, b, &on, &lj, &mj);
	return ret;
}

/* out = oi / li for the chunk's rows, on views. */
static int pa_norm_views(struct pto_runtime *rt, struct pa_chunk *k)
{
	const struct pa_case *c = k->c;
	struct pto_view out = pa_rows_view(c, c->out, k->b0 * c->heads,
					   k->rows);
	struct pto_param norm[] = {
		PTO_OUT_EXISTING_VIEW(&out), PTO_IN_VIEW(&k->ov),
		PTO_IN_VIEW(&k->lv), PTO_SCALAR(k->rows),
		PTO_SCALAR(c->head_dim),
	};

	return sample_submit(rt, PA_K_NORM, PTO_WORKER_VECTOR, norm, 5);
}

static int pa_chunk_run_views(struct pto_runtime *rt, const struct pa *pa,
			      struct pa_chunk *k)
{
	const struct pa_case *c = k->c;
	uint64_t b, i;
	int ret;

	pto_scope_begin(rt);
	ret = pa->builtin ? pa_hub_builtin_views(rt, k) :
	      pa_hub_c_views(rt, k);
	for (b = k->b0; b < k->b0 + k->nb && !ret; b++)
		for (i = 0; i < pa_blocks(c, b) && !ret; i++)
			ret = pa_block_views(rt, pa, k, b, i);
	if (!ret)
		ret = pa_norm_views(rt, k);
	return sample_scope_end(rt, ret);
}

/* ---- layout=tiled: byte ranges ------------------------------------------ */

static int pa_chunk_run(struct pto_runtime *rt, const struct pa *pa,
			struct pa_chunk *k)
{
	const struct pa_case *c = k->c;
	uint64_t d = c->head_dim, b, i;
	int ret;

	pto_scope_begin(rt);
	ret = pa->builtin ? pa_hub_builtin(rt, k) : pa_hub_c(rt, k);
	for (b = k->b0; b < k->b0 + k->nb && !ret; b++)
		for (i = 0; i < pa_blocks(c, b) && !ret; i++)
			ret = pa_block(rt, pa, k, b, i);
	if (!ret) {
		struct pto_param norm[] = {
			PTO_OUT_EXISTING(c->out, k->b0 * c->heads * d * 4,
					 k->rows * d * 4),
			PTO_IN(k->o, k->o_off, k->rows * d * 4),
			PTO_IN(k->l, k->l_off, k->rows * 4),
			PTO_SCALAR(k->rows), PTO_SCALAR(d),
		};

		ret = sample_submit(rt, PA_K_NORM, PTO_WORKER_VECTOR, norm, 5);
	}
	return sample_scope_end(rt, ret);
}

/* Chunk size for case c: what a sequence and a chunk need of the rings. */
static uint64_t pa_case_chunk(struct pto_runtime *rt, const struct pa *pa,
			      const struct pa_case *c)
{
	uint64_t h = c->heads, bs = c->block_size, mb = c->max_blocks;
	uint64_t tile = sample_heap_bytes(pa_tile_bytes(c));
	uint64_t vec = 2 * sample_heap_bytes(h * 4);
	struct sample_cost seq, fixed;

	if (pa->chunk)
		return pa->chunk;
	/*
	 * Per sequence: its rows of oi, li, mi, and per block S, then P,
	 * m, l, then (C kernels) O_new or (built-in) a PV tile; QK, SF, PV
	 * and UP take 3 + 4 + 3 + 6 tensors.  Per chunk: the hub (at most 3
	 * tasks and tensors) and the final division (3 tensors).
	 */
	seq.tasks = 4 * mb;
	seq.heap = tile + vec +
		   mb * (2 * sample_heap_bytes(h * bs * 4) + vec + tile);
	seq.tensors = 16 * mb;
	fixed.tasks = 3;
	fixed.heap = 4 * 64;
	fixed.tensors = 6;
	/* a chunk's scope sits right in the run's: depth 1 */
	return sample_units_per_scope(rt, 1, &seq, &fixed, PA_MAX_CHUNK);
}

int pa_orchestrate(struct pto_runtime *rt, void *arg)
{
	const struct pa *pa = arg;
	struct pa_case *c;
	struct pa_chunk k;
	unsigned int n;
	uint64_t b0;
	int ret = 0;

	for (n = 0; n < pa->ncases && !ret; n++) {
		c = &pa->cases[n];
		c->tasks = 0;
		for (b0 = 0; b0 < c->batch && !ret; b0 += c->chunk) {
			memset(&k, 0, sizeof(k));
			k.c = c;
			k.b0 = b0;
			k.nb = c->batch - b0 < c->chunk ? c->batch - b0 :
			       c->chunk;
			k.rows = k.nb * c->heads;
			ret = c->layout == SAMPLE_ROWMAJOR ?
			      pa_chunk_run_views(rt, pa, &k) :
			      pa_chunk_run(rt, pa, &k);
			c->tasks += (pa->builtin ? 3 : 2) +
				    4 * pa_chunk_blocks(c, b0, k.nb);
		}
	}
	return ret;
}

void pa_describe(const struct pa_case *c, const char *label)
{
	printf("%s: batch=%" PRIu64 " heads=%" PRIu64 " head_dim=%" PRIu64
	       " context=%" PRIu64 "%s block=%" PRIu64 ", %" PRIu64
	       " tasks, scopes of up to %" PRIu64 " sequences\n", label,
	       c->batch, c->heads, c->head_dim, c->context,
	       c->var_len ? " (ragged)" : "", c->block_size, c->tasks,
	       c->chunk < c->batch ? c->chunk : c->batch);
}

int pa_fini(struct pto_runtime *rt, struct pa *pa, int run_status,
	    int (*verify)(const struct pa *pa, const struct pa_case *c))
{
	unsigned int i;
	int ret = run_status ? -1 : 0;

	for (i = 0; i < pa->ncases && !run_status; i++)
		if (verify(pa, &pa->cases[i]))
			ret = -1;
	pa_teardown(rt, pa);
	free(pa);
	return ret;
}
