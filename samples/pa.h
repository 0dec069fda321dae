/* SPDX-License-Identifier: MIT */
/*
 * Paged attention with online softmax, shared by the C-kernel sample
 * (paged_attention.c) and the built-in-ops sample
 * (paged_attention_builtin.c).
 *
 * One query token per sequence, num_heads query heads sharing one KV head
 * (so a sequence's query is a heads x head_dim matrix).  The KV cache is a
 * pool of blocks of block_size tokens x head_dim; block_table[b][i] names
 * the physical block holding tokens [i * block_size, (i + 1) * block_size)
 * of sequence b.  The orchestration resolves that indirection on the host
 * into key/value cache offsets.
 *
 * Structure (the reference design's paged attention): per chunk of up to
 * 16 sequences a scope; a hub task initialises the accumulators oi, li, mi
 * of the chunk; then per sequence and KV block QK -> SF -> PV -> UP, UP updating the
 * accumulators in place (INOUT); finally oi / li into out.
 */
#ifndef PTO_SAMPLE_PA_H
#define PTO_SAMPLE_PA_H

#include "sample.h"

#define PA_MAX_CHUNK	16	/* sequences per chunk (IN_CORE_BATCH) */

struct pa_case {
	const char *name;
	uint64_t batch, heads, head_dim, context, block_size;
	bool var_len;		/* context lengths vary in [1, context] */

	/* inputs */
	float *query;		/* [batch][heads][head_dim], device */
	float *key_cache;	/* [num_blocks * block_size][kv_ld] */
	float *value_cache;	/* same; rowmajor: key_cache + head_dim */
	uint64_t kv_ld;		/* elements between tokens: head_dim, or 2x */
	enum sample_layout layout;
	uint64_t num_blocks;
	uint64_t *context_lens;	/* [batch], host */
	uint64_t *block_table;	/* [batch][max_blocks], host */
	uint64_t max_blocks;	/* blocks of the longest sequence */
	float scale;		/* 1 / sqrt(head_dim) */

	/* result */
	float *out;		/* [batch][heads][head_dim], device */
	uint64_t tasks;		/* tasks of the last run */
	uint64_t chunk;		/* sequences per scope: chunk=, or fit */
};

struct pa {
	const char *prog;
	bool builtin;
	uint64_t seed, chunk, block_size;
	enum sample_layout layout;
	struct pa_case *cases;
	unsigned int ncases;
};

/* Blocks sequence b of c spans. */
static inline uint64_t pa_blocks(const struct pa_case *c, uint64_t b)
{
	return (c->context_lens[b] + c->block_size - 1) / c->block_size;
}

/* Tokens of block i of sequence b. */
static inline uint64_t pa_valid(const struct pa_case *c, uint64_t b,
				uint64_t i)
{
	uint64_t left = c->context_lens[b] - i * c->block_size;

	return left < c->block_size ? left : c->block_size;
}

/* The cache row of block i of sequence b's first token. */
static inline uint64_t pa_kv_row(const struct pa_case *c, uint64_t b,
				 uint64_t i)
{
	return c->block_table[b * c->max_blocks + i] * c->block_size;
}

/* Byte offset of block i of sequence b in the key and value caches. */
static inline uint64_t pa_kv_off(const struct pa_case *c, uint64_t b,
				 uint64_t i)
{
	return pa_kv_row(c, b, i) * c->kv_ld * sizeof(float);
}

/* The key (or value) row of token t of sequence b. */
static inline const float *pa_kv_token(const struct pa_case *c,
				       const float *cache, uint64_t b,
				       uint64_t t)
{
	return cache + pa_kv_off(c, b, t / c->block_size) / sizeof(float) +
	       (t % c->block_size) * c->kv_ld;
}

/* Elements of query and out. */
static inline uint64_t pa_out_elems(const struct pa_case *c)
{
	return c->batch * c->heads * c->head_dim;
}

/* Kernel ids; both variants bind the same ids (C functions or ops). */
enum pa_kernel {
	PA_K_HUB = 1,	/* C: oi = 0, li = 0, mi = -inf */
	PA_K_FILL,	/* built-in: PTO_OP_FILL_U32 (the hub: two tasks) */
	PA_K_QK,	/* S = Q K^T (PTO_OP_MATMUL_BT_F32) */
	PA_K_SF,	/* P, m, l = softmax-prepare(S) */
	PA_K_PV,	/* O_new (+)= P V (PTO_OP_GEMM_F32) */
	PA_K_UP,	/* online update of oi, li, mi */
	PA_K_NORM,	/* out = oi / li (PTO_OP_ROW_DIV_F32) */
};

/* The orchestration of every case of pa; the pto_orch_fn of both .so. */
int pa_orchestrate(struct pto_runtime *rt, void *arg);

/* Parse arguments, build the cases' inputs.  1: help printed. */
int pa_setup(struct pto_runtime *rt, struct pa *pa, int argc, char **argv);
void pa_teardown(struct pto_runtime *rt, struct pa *pa);

/*
 * pto_orchestration_fini of both variants: verify every case with verify
 * (when the run succeeded), then tear down.  0 when all cases passed.
 */
int pa_fini(struct pto_runtime *rt, struct pa *pa, int run_status,
	    int (*verify)(const struct pa *pa, const struct pa_case *c));

/*
 * Expected out of case c in double precision, plain softmax (not online):
 * an independent check of both variants.
 */
void pa_reference_double(const struct pa_case *c, float *ref);

/* Tolerance of a float implementation against pa_reference_double(). */
#define PA_ABS_TOL	2e-5
#define PA_REL_TOL	1e-4

/* "<prog> <case>" */
void pa_label(const struct pa *pa, const struct pa_case *c, char *buf,
	      size_t len);

/* Print the case's shape and how the last run split it. */
void pa_describe(const struct pa_case *c, const char *label);

#endif /* PTO_SAMPLE_PA_H */
