/* SPDX-License-Identifier: MIT */
/*
 * Configuration: the PTO_* environment variables, read in one place and
 * named in one table, so diagnostics and sizing advice name exactly the
 * variable that pto_config_init() reads.
 */
#ifndef PTO_LIB_CONFIG_H
#define PTO_LIB_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include <pto/pto.h>

enum pto_env {
	PTO_ENV_DEVICE,
	PTO_ENV_TASK_WINDOW,
	PTO_ENV_HEAP_SIZE,
	PTO_ENV_DEP_POOL,
	PTO_ENV_TENSORMAP_POOL,
	PTO_ENV_SIM_CORES,
	PTO_ENV_STALL_TIMEOUT_MS,
	PTO_ENV_TRACE,
	PTO_ENV_ARENA_SIZE,
	PTO_ENV_STATS,
	PTO_ENV_RINGS,
	PTO_ENV_SCHED,
	PTO_ENV_CPUS,
	PTO_ENV_CHECK,
	PTO_NUM_ENV
};

/* The variable's name, e.g. "PTO_TASK_WINDOW". */
const char *pto_env_name(enum pto_env e);

/* The variable that sizes a ring, e.g. "PTO_HEAP_SIZE". */
const char *pto_ring_env(enum pto_ring ring);

/*
 * sizeof(struct pto_config) in libpto 0.1, whose last field (then "flags",
 * always 0) is now "size": a size of 0 means this layout.
 */
#define PTO_CONFIG_SIZE_0_1	80
/* sizeof(struct pto_stats) in libpto 0.1 */
#define PTO_STATS_SIZE_0_1	256

/*
 * Copy a caller's configuration, of whatever size it was built with, into
 * one of ours.  0, -EINVAL (not a configuration), or -E2BIG when it sets
 * fields this library does not know.
 */
int pto_config_import(const struct pto_config *cfg, struct pto_config *out);

/*
 * Print "PTO_TASK_WINDOW=4096,8192,4096,4096": the variable set so that
 * ring gets value and the other rings keep sizes[].
 */
void pto_ring_env_fprint(FILE *out, enum pto_ring kind, uint32_t nrings,
			 const uint64_t *sizes, uint32_t ring, uint64_t value);

/* A task ring's sizes, with every 0 field resolved from cfg's own. */
/* Are the heap ring sizes libpto's defaults, asked by nobody? */
bool pto_config_heap_default(const struct pto_config *cfg);
struct pto_ring_config pto_ring_cfg(const struct pto_config *cfg,
				    uint32_t ring);

/*
 * Parse a CPU list ("0-3,8"): up to max CPU numbers into cpus.  The count,
 * or -EINVAL.
 */
int pto_parse_cpus(const char *s, uint32_t *cpus, uint32_t max);

/*
 * The CPUs this process may run on (its affinity mask: taskset, a
 * cpuset), at least 1; the online CPUs when the mask cannot be read.
 */
uint32_t pto_host_cpus(void);

/* 0, or -EINVAL with a message naming the bad field. */
int pto_config_validate(const struct pto_config *cfg);

#endif /* PTO_LIB_CONFIG_H */
