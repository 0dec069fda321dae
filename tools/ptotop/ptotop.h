/* SPDX-License-Identifier: MIT */
/*
 * ptotop: a live monitor for PTO devices (/dev/ptoN, through fdinfo and
 * sysfs) and sim runtimes (through their shared-memory stats pages).
 *
 * The program is built in layers; each file uses only the layers below it:
 *
 *   main.c         options and the batch loop
 *   view_tui.c     the interactive screen (ncurses)        view.h
 *   view_text.c    batch text and JSON
 *   model.c        samples: process and device rows, rates,  model.h
 *                  history, filters and sort order
 *   sources.c      raw records from stats pages, fdinfo      sources.h
 *                  and sysfs
 *   ptotop.h       what every layer shares (this file)
 *
 * Only public headers are used (include/ and include/uapi/), and libpto is
 * not linked: ptotop must keep working when a runtime misbehaves.
 */
#ifndef PTOTOP_H
#define PTOTOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <pto/pto.h>		/* enum pto_ring: the stats page's ring order */
#include <pto/pto_uapi.h>	/* the worker types and their names */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The refresh interval's range, seconds: -d and the + and - keys. */
#define PT_DELAY_MIN	0.01
#define PT_DELAY_MAX	86400.0

/*
 * The name of a worker type as the driver prints it in fdinfo
 * ("pto-engine-cube"); ptotop also uses it for its JSON keys and screen
 * labels.  Taken from the uapi so that the two sides cannot drift apart.
 */
static inline const char *pt_type_name(int type)
{
	static const char *const names[PTO_UAPI_NUM_WORKER_TYPES] =
		PTO_UAPI_WORKER_TYPE_NAMES;

	return names[type];
}

/*
 * A task ring's resource (enum pto_ring) as libpto names it in its
 * statistics and sizing advice ("heap ring"), and the variable that sizes
 * it per task ring (PTO_HEAP_SIZE=a,b,...).  libpto is not linked, so
 * these are copies of lib/stats.c's and lib/config.c's; test_ptotop
 * compares ptotop's advice with pto_print_stats() so that they stay equal.
 */
static inline const char *pt_resource_name(int res)
{
	static const char *const names[PTO_NUM_RINGS] = {
		[PTO_RING_TASK] = "task window",
		[PTO_RING_HEAP] = "heap ring",
		[PTO_RING_DEP] = "dependency pool",
		[PTO_RING_TENSORMAP] = "TensorMap pool",
	};

	return names[res];
}

static inline const char *pt_resource_env(int res)
{
	static const char *const names[PTO_NUM_RINGS] = {
		[PTO_RING_TASK] = "PTO_TASK_WINDOW",
		[PTO_RING_HEAP] = "PTO_HEAP_SIZE",
		[PTO_RING_DEP] = "PTO_DEP_POOL",
		[PTO_RING_TENSORMAP] = "PTO_TENSORMAP_POOL",
	};

	return names[res];
}

/* Nanoseconds on clock (CLOCK_MONOTONIC or CLOCK_REALTIME). */
static inline uint64_t pt_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Make room for one more element at the end of array (used elements of
 * size bytes, room for *cap), doubling it from first_cap as it fills.
 * Returns the array, moved if it had to grow, or NULL when out of memory;
 * the old array is then still valid and *cap unchanged.
 */
static inline void *pt_grow(void *array, int used, int *cap, size_t size,
			    int first_cap)
{
	int new_cap;
	void *grown;

	if (used < *cap)
		return array;
	new_cap = *cap ? 2 * *cap : first_cap;
	grown = realloc(array, (size_t)new_cap * size);
	if (grown)
		*cap = new_cap;
	return grown;
}

#endif /* PTOTOP_H */
