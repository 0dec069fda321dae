/* SPDX-License-Identifier: MIT */
/*
 * Writer side of the stats page a runtime publishes for ptotop.  The format
 * and the seqlock protocol are in <pto/pto_statspage.h>.
 *
 * The runtime creates one page per runtime, then from its scheduler thread
 * brackets every batch of counter updates with pto_statspage_begin() and
 * pto_statspage_end().  Only one thread may write a given page.
 *
 * Environment: PTO_STATS=0 disables publishing (create returns NULL);
 * PTO_STATS_DIR overrides the directory (default /dev/shm).
 */
#ifndef PTO_LIB_STATSPAGE_H
#define PTO_LIB_STATSPAGE_H

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <pto/pto_statspage.h>

#define PTO_STATSPAGE_DIR	"/dev/shm"

/* The directory pages live in: $PTO_STATS_DIR or /dev/shm. */
static inline const char *pto_statspage_dir(void)
{
	const char *dir = getenv("PTO_STATS_DIR");

	return dir && *dir ? dir : PTO_STATSPAGE_DIR;
}

/*
 * Create and map <dir>/pto-stats.<pid>.<seq> (0600), with magic, version,
 * size, pid, start_ns and device filled in.  NULL on any failure or when
 * disabled; the runtime then runs without publishing.
 */
struct pto_statspage *pto_statspage_create(const char *device);
/* Unmap the page and unlink its file.  NULL is allowed. */
void pto_statspage_destroy(struct pto_statspage *page);
/* Start an update: seq becomes odd.  NULL is allowed. */
void pto_statspage_begin(struct pto_statspage *page);
/* Finish an update: stamps update_ns, seq becomes even.  NULL is allowed. */
void pto_statspage_end(struct pto_statspage *page);

/*
 * Reader side (inline so that monitors need not link libpto): copy a
 * consistent snapshot of a page mapped from another process into *out.
 * Every field is a multiple of 8 bytes, so the copy is done in 64-bit
 * atomic loads: no torn words, and no formal data race for the compiler
 * to exploit.  They are acquire loads so that the second read of seq
 * cannot be satisfied before any of them (the kernel's smp_rmb() in
 * read_seqcount_retry); that costs nothing on x86 and, unlike a fence,
 * is understood by ThreadSanitizer.  Returns 0, or -EAGAIN when the
 * writer was busy on every retry (or died in the middle of an update).
 */
static inline int pto_statspage_read(const struct pto_statspage *page,
				     struct pto_statspage *out)
{
	const uint64_t *src = (const uint64_t *)page;
	uint64_t *dst = (uint64_t *)out;
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

#endif /* PTO_LIB_STATSPAGE_H */
