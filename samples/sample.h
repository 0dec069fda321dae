/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the sample orchestrations: "name=value" arguments,
 * deterministic input data, the result checksum and the verdict lines that
 * tests parse, and sizing a chunk of work to the runtime's rings.
 *
 * Each sample is built into its own shared object with hidden visibility,
 * so these helpers never clash with libpto or with each other.
 */
#ifndef PTO_SAMPLE_H
#define PTO_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include <pto/pto.h>
/* the entry points' signatures, checked by the compiler */
#include <pto/pto_orchestration.h>

/* The three entry points ptorun looks up; the only exported symbols. */
#define SAMPLE_EXPORT __attribute__((visibility("default")))

int pto_orchestration_init(struct pto_runtime *rt, int argc, char **argv,
			   void **arg) SAMPLE_EXPORT;
int pto_orchestration_entry(struct pto_runtime *rt, void *arg) SAMPLE_EXPORT;
int pto_orchestration_fini(struct pto_runtime *rt, void *arg,
			   int run_status) SAMPLE_EXPORT;

/* An option given on the ptorun command line as name=value. */
struct sample_opt {
	const char *name;
	uint64_t *val;		/* numeric options */
	const char **str;	/* string options (val == NULL) */
	const char *help;
	bool *given;		/* optional: set when the option appears */
};

/*
 * Parse argv[1..argc-1] against opts (terminated by a NULL name).  Returns
 * 0, 1 after printing usage for "help", or -EINVAL after a message.
 */
int sample_parse_args(const char *prog, int argc, char **argv,
		      const struct sample_opt *opts);

/* splitmix64: the same stream on every machine for a given seed */
static inline uint64_t sample_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [-1, 1), exactly representable (24 random bits) */
static inline float sample_rand_f32(uint64_t *state)
{
	return (float)(sample_rand(state) >> 40) / 8388608.0f - 1.0f;
}

void sample_fill_f32(float *p, uint64_t n, uint64_t *state);

/* FNV-1a 64 over len bytes, continuing from h (start: SAMPLE_FNV_INIT). */
#define SAMPLE_FNV_INIT 0xcbf29ce484222325ull
uint64_t sample_fnv1a(uint64_t h, const void *buf, uint64_t len);

/* Largest |got - want| and the relative error that goes with it. */
struct sample_err {
	double max_abs;
	double max_rel;
	uint64_t bad;		/* elements outside the tolerance */
	uint64_t first_bad;	/* index of the first of them */
};

/*
 * Compare n floats: an element is bad when |got - want| > abs_tol +
 * rel_tol * |want|, or when the bit patterns differ and both tolerances
 * are zero (bit-exact check), or when got is not finite.
 */
void sample_compare_f32(const float *got, const float *want, uint64_t n,
			double abs_tol, double rel_tol, struct sample_err *e);

/*
 * Print the verdict block tests parse:
 *   <label>: max abs error A, max rel error R (<how>)
 *   <label>: checksum: <16 hex digits>
 *   <label>: PASS | FAIL
 * Returns 0 for PASS, -1 for FAIL.
 */
int sample_verdict(const char *label, const struct sample_err *e,
		   const char *how, uint64_t checksum);

/*
 * What a piece of work holds until its scope ends: task slots, heap ring
 * bytes, and tensor parameters (each may take a TensorMap entry and a
 * dependency-list entry).
 */
struct sample_cost {
	uint64_t tasks;
	uint64_t heap;
	uint64_t tensors;
};

/*
 * How many units of work (sequences, k steps) one scope at the given
 * depth (the run's outer scope is 0) may hold so that it uses at most half
 * of each resource of its task ring: units costing *unit, plus *fixed once
 * per scope.  Asks pto_get_stats() for the ring sizes; call it outside a
 * run.  At least 1 (the runtime then reports what does not fit), at most
 * max_units.
 */
uint64_t sample_units_per_scope(struct pto_runtime *rt, uint32_t depth,
				const struct sample_cost *unit,
				const struct sample_cost *fixed,
				uint64_t max_units);

/* Heap ring bytes one OUTPUT of size bytes takes (64-byte aligned). */
static inline uint64_t sample_heap_bytes(uint64_t size)
{
	return (size + 63) & ~63ull;
}

/*
 * How a sample stores its matrices (the layout= argument): tile by tile
 * with every task given byte ranges (tiled, the default), as ordinary
 * row-major matrices with every task given 2-D tile views (rowmajor), or
 * row-major with every tile passed as the byte range from its first to
 * its last byte (ranges: what a program without views would do, whose
 * ranges overlap the neighbouring tiles' and so serialize them).
 */
enum sample_layout {
	SAMPLE_TILED,
	SAMPLE_ROWMAJOR,
	SAMPLE_RANGES,
	SAMPLE_NUM_LAYOUTS
};

/*
 * Parse a layout= value into *out; allowed is a mask of 1 << layout.
 * Returns 0, or -EINVAL after a message.
 */
int sample_parse_layout(const char *prog, const char *name,
			unsigned int allowed, enum sample_layout *out);

/* "tiled", "rowmajor", "ranges" */
const char *sample_layout_name(enum sample_layout l);

/* pto_submit_task returning 0 or the negative errno. */
int sample_submit(struct pto_runtime *rt, uint32_t kernel,
		  enum pto_worker_type type, const struct pto_param *p,
		  uint32_t n);

/* pto_scope_end(), keeping ret if it is already an error. */
int sample_scope_end(struct pto_runtime *rt, int ret);

/* pto_malloc, with a message naming what could not be allocated. */
void *sample_malloc(struct pto_runtime *rt, const char *prog,
		    const char *what, uint64_t size);

/* Print "<prog>: <what>: <strerror>" for a negative errno; returns err. */
int sample_error(const char *prog, const char *what, int err);

#endif /* PTO_SAMPLE_H */
