/* SPDX-License-Identifier: MIT */
/*
 * The stats page a running libpto runtime publishes for monitors (ptotop).
 *
 * Every runtime creates /dev/shm/pto-stats.<pid>.<runtime-seq> (mode 0600,
 * so only the same user reads it) holding one struct pto_statspage, updates
 * it while it runs and unlinks it in pto_runtime_destroy().  A page whose
 * pid no longer exists (kill -0 fails with ESRCH) is stale: a crashed
 * process left it; monitors ignore it and may unlink it.
 *
 * Consistency: the writer increments seq to an odd value, updates the
 * fields, then increments seq to an even value (a seqlock).  Readers copy
 * the page and retry while seq is odd or changed across the copy.
 */
#ifndef PTO_STATSPAGE_H
#define PTO_STATSPAGE_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
#include <pto/pto_cxx.h>
#endif

#define PTO_STATSPAGE_MAGIC	0x5054535041474531ull	/* "PTSPAGE1" */
#define PTO_STATSPAGE_VERSION	2
#define PTO_STATSPAGE_PREFIX	"pto-stats."	/* name under /dev/shm */

struct pto_statspage_ring {
	uint64_t size;		/* capacity (slots, bytes or entries) */
	uint64_t in_use;
	uint64_t high_water;
	uint64_t stalls;	/* times the orchestrator blocked on it */
	uint64_t stall_ns;	/* time spent blocked */
};

struct pto_statspage {
	uint64_t magic;		/* PTO_STATSPAGE_MAGIC */
	uint32_t version;	/* PTO_STATSPAGE_VERSION */
	uint32_t size;		/* sizeof(struct pto_statspage) */
	uint64_t seq;		/* seqlock, see above */
	int32_t pid;
	uint32_t running;	/* 1 while inside pto_run */
	uint64_t start_ns;	/* CLOCK_REALTIME of runtime creation */
	uint64_t update_ns;	/* CLOCK_MONOTONIC of the last update */
	char device[64];	/* "sim" or "/dev/pto0" */
	uint32_t cores[4];	/* per worker type: cube, vector, aicpu, accel */
	uint64_t busy_ns[4];	/* per worker type: summed core busy time */
	uint64_t tasks_submitted;
	uint64_t tasks_completed;
	uint64_t tasks_failed;
	uint64_t tasks_in_flight;	/* submitted, not yet retired */
	uint64_t runs;		/* pto_run calls */
	/*
	 * task window, heap ring, dep pool, TensorMap (enum pto_ring order):
	 * the sums over the task rings (high_water: of their high waters)
	 */
	struct pto_statspage_ring ring[4];
	int32_t last_error;	/* first error of the current/last run */
	uint32_t nrings;	/* task rings, one per scope depth */
	/* per task ring, the same four: version 2 */
	struct pto_statspage_ring depth[4][4];
	uint64_t __reserved[16];
};

#define PTO_STATSPAGE_DIR	"/dev/shm"

/* The directory pages live in: $PTO_STATS_DIR or /dev/shm. */
static inline const char *pto_statspage_dir(void)
{
	const char *dir = getenv("PTO_STATS_DIR");

	return dir && *dir ? dir : PTO_STATSPAGE_DIR;
}

/*
 * Reader side, inline so that monitors need not link libpto.  Copy a
 * consistent snapshot of a page mapped from another process into *out.
 * Every field is a multiple of 8 bytes, so the copy is done in 64-bit
 * atomic loads: no torn words, and no formal data race for the compiler
 * to exploit.  They are acquire loads so that the second read of seq
 * cannot be satisfied before any of them (the kernel's smp_rmb() in
 * read_seqcount_retry); that costs nothing on x86 and, unlike a fence,
 * is understood by ThreadSanitizer.  Returns 0, or -EAGAIN when the
 * writer was busy on every retry (or died in the middle of an update).
 */
#ifndef __cplusplus
#define PTO_WORDS_PTR_(T, p) ((T)(p))
#endif
static inline int pto_statspage_read(const struct pto_statspage *page,
				     struct pto_statspage *out)
{
	const uint64_t *src = PTO_WORDS_PTR_(const uint64_t *, page);
	uint64_t *dst = PTO_WORDS_PTR_(uint64_t *, out);
	size_t i, n = sizeof(*page) / sizeof(uint64_t);
	int tries;

	for (tries = 0; tries < 1000; tries++) {
		uint64_t s1, s2;

		/* acquire: the copy below cannot start before this load */
		s1 = __atomic_load_n(&page->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			/* the writer may be descheduled mid-update */
			sched_yield();
			continue;
		}
		for (i = 0; i < n; i++)
			dst[i] = __atomic_load_n(&src[i], __ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&page->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return 0;
	}
	return -EAGAIN;
}

#endif /* PTO_STATSPAGE_H */
