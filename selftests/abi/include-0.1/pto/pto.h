/* SPDX-License-Identifier: MIT */
/*
 * libpto 0.1's public header, kept verbatim so selftests/abi can build a
 * program the way a user of that release did and run it against today's
 * library.  Do not change it.
 */
/*
 * libpto: run orchestration functions on a2a3 accelerators.
 *
 * An orchestration function is plain C that submits tasks; each task names
 * a kernel, the worker type it runs on and its parameters.  The runtime
 * infers dependencies from the declared tensor regions, allocates OUTPUT
 * buffers from a heap ring, frees them when their scope has ended and their
 * consumers have finished, and runs the tasks on the device (the in-process
 * simulator by default, or /dev/ptoN).
 *
 * See Documentation/libpto.rst.
 */
#ifndef PTO_PTO_H
#define PTO_PTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pto_uapi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_VERSION_MAJOR 0
#define PTO_VERSION_MINOR 1

struct pto_runtime;

enum pto_worker_type {
	PTO_WORKER_CUBE,
	PTO_WORKER_VECTOR,
	PTO_WORKER_AICPU,
	PTO_WORKER_ACCEL,
	PTO_NUM_WORKER_TYPES
};

enum pto_param_kind {
	PTO_PARAM_INPUT,		/* read base+offset..+size */
	PTO_PARAM_OUTPUT,		/* runtime allocates size bytes, *ref = addr */
	PTO_PARAM_INOUT,		/* read and write base+offset..+size */
	PTO_PARAM_OUTPUT_EXISTING,	/* write base+offset..+size */
	PTO_PARAM_NODEP,		/* address passed, access not tracked */
	PTO_PARAM_SCALAR		/* value passed */
};

struct pto_param {
	enum pto_param_kind kind;
	void *base;
	void **ref;
	uint64_t offset;
	uint64_t size;
	uint64_t value;
};

#define PTO_PARAM_(k, b, r, o, s, v)					\
	((struct pto_param){ .kind = (k), .base = (void *)(b),		\
			     .ref = (void **)(r), .offset = (o),	\
			     .size = (s), .value = (v) })
#define PTO_IN(base, off, size) \
	PTO_PARAM_(PTO_PARAM_INPUT, base, NULL, off, size, 0)
#define PTO_OUT(ref, size) \
	PTO_PARAM_(PTO_PARAM_OUTPUT, NULL, ref, 0, size, 0)
#define PTO_INOUT(base, off, size) \
	PTO_PARAM_(PTO_PARAM_INOUT, base, NULL, off, size, 0)
#define PTO_OUT_EXISTING(base, off, size) \
	PTO_PARAM_(PTO_PARAM_OUTPUT_EXISTING, base, NULL, off, size, 0)
#define PTO_NODEP(base, off, size) \
	PTO_PARAM_(PTO_PARAM_NODEP, base, NULL, off, size, 0)
#define PTO_SCALAR(v) \
	PTO_PARAM_(PTO_PARAM_SCALAR, NULL, NULL, 0, 0, (uint64_t)(v))

/* A float scalar, passed as its bit pattern (what the built-in ops expect). */
static inline uint64_t pto_f32_bits(float f)
{
	union { float f; uint32_t u; } c = { .f = f };

	return c.u;
}

/* Parameters one task may take. */
#define PTO_MAX_PARAMS PTO_MAX_ARGS

typedef void (*pto_kernel_fn)(const uint64_t *args, uint32_t nargs);
typedef int (*pto_orch_fn)(struct pto_runtime *rt, void *arg);

struct pto_config {
	const char *device;		/* "sim" (default) or "/dev/ptoN" */
	uint32_t task_window;		/* task ring slots, power of two */
	uint64_t heap_size;		/* heap ring bytes */
	uint32_t dep_pool_size;		/* dependency list entries */
	uint32_t tensormap_pool_size;	/* TensorMap entries */
	uint32_t cores[PTO_NUM_WORKER_TYPES];	/* sim: cores of each type */
	uint32_t stall_timeout_ms;	/* blocked this long = deadlock */
	const char *trace_path;		/* Chrome/Perfetto JSON trace */
	/* extensions */
	uint64_t arena_size;		/* pto_malloc bytes (PTO_ARENA_SIZE) */
	uint32_t flags;			/* PTO_CFG_* */
};

/* Defaults, then PTO_* environment overrides. */
void pto_config_init(struct pto_config *cfg);

int pto_runtime_create(const struct pto_config *cfg, struct pto_runtime **rt);
void pto_runtime_destroy(struct pto_runtime *rt);

int pto_kernel_register(struct pto_runtime *rt, uint32_t kernel_id,
			enum pto_worker_type type, pto_kernel_fn fn,
			const char *name);
int pto_kernel_register_builtin(struct pto_runtime *rt, uint32_t kernel_id,
				enum pto_worker_type type, uint32_t op);

/* Device memory, host-visible, 64-byte aligned; NULL when exhausted. */
void *pto_malloc(struct pto_runtime *rt, size_t size);
void pto_free(struct pto_runtime *rt, void *ptr);

int pto_run(struct pto_runtime *rt, pto_orch_fn fn, void *arg);
void pto_scope_begin(struct pto_runtime *rt);
int pto_scope_end(struct pto_runtime *rt);
int64_t pto_submit_task(struct pto_runtime *rt, uint32_t kernel_id,
			enum pto_worker_type type,
			const struct pto_param *params, uint32_t nparams);

/*
 * Called from inside a C kernel (sim): fail the running task with a
 * negative errno.  The run then reports the error and drains.
 */
void pto_kernel_set_error(int err);

/* ---- helpers for tools ------------------------------------------------- */

/* "cube", "vector", "aicpu", "accel" */
const char *pto_worker_type_name(uint32_t type);
/* Parse "cube=4,vector=8,aicpu=1,accel=1" (any subset) into cores[]. */
int pto_parse_cores(const char *s, uint32_t cores[PTO_NUM_WORKER_TYPES]);
/* Parse a byte count with an optional K/M/G (binary) suffix. */
int pto_parse_size(const char *s, uint64_t *out);
/* Name of a built-in op ("gemm_f32"), or NULL. */
const char *pto_op_name(uint32_t op);

/* ---- flow-control statistics -------------------------------------------- */

enum pto_ring {
	PTO_RING_TASK,		/* task window slots */
	PTO_RING_HEAP,		/* heap ring bytes */
	PTO_RING_DEP,		/* dependency list entries */
	PTO_RING_TENSORMAP,	/* TensorMap entries */
	PTO_NUM_RINGS
};

struct pto_ring_stats {
	uint64_t size;		/* capacity */
	uint64_t in_use;	/* now */
	uint64_t high_water;	/* most ever in use */
	uint64_t stalls;	/* times the orchestrator had to wait */
	uint64_t stall_ns;	/* time it waited */
};

struct pto_stats {
	struct pto_ring_stats ring[PTO_NUM_RINGS];
	uint64_t tasks_submitted;
	uint64_t tasks_completed;
	uint64_t tasks_failed;
	uint64_t edges;			/* dependencies inferred */
	uint64_t busy_ns[PTO_NUM_WORKER_TYPES];	/* core time per type */
	uint32_t cores[PTO_NUM_WORKER_TYPES];
	uint64_t runs;
	uint64_t run_ns;		/* wall time inside pto_run */
};

const char *pto_ring_name(enum pto_ring ring);
int pto_get_stats(struct pto_runtime *rt, struct pto_stats *st);
/* Human-readable table with sizing advice. */
void pto_print_stats(struct pto_runtime *rt, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* PTO_PTO_H */
