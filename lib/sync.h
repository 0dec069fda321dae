/* SPDX-License-Identifier: MIT */
/*
 * Small synchronisation helpers: C11 atomics on plain (uapi) fields, futex
 * sleep/wake, a spinlock and a pause for spin loops.
 */
#ifndef PTO_LIB_SYNC_H
#define PTO_LIB_SYNC_H

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A switch case that continues into the next on purpose. */
#define fallthrough	__attribute__((__fallthrough__))

#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/*
 * State one thread writes all the time starts on a line pair of its own
 * (the adjacent-line prefetcher moves lines in pairs), so the orchestrator
 * and the scheduler never slow each other down through false sharing.
 */
#define PTO_OWN_LINES __attribute__((aligned(128)))

#define load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* a full barrier: every caller says which loads and stores it orders */
#define smp_mb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
/*
 * A counter with one writer and readers on other threads (statistics read
 * by the stats page and pto_get_stats while a run goes on).
 */
#define STAT_ADD(x, v)	WRITE_ONCE(x, (x) + (v))

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/*
 * One step of an idle poll.  Never sched_yield() here: with another process
 * competing for the CPUs, a yielding poller hands it a whole time slice
 * each time (Documentation/ptobench.rst, "Under load"); pollers sleep on
 * a futex instead once their spin budget is spent.
 */
static inline void idle_poll(unsigned int iteration)
{
	(void)iteration;
	cpu_relax();
}

static inline uint64_t pto_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * CLOCK_MONOTONIC nanoseconds, cheaper than pto_now_ns() where the TSC
 * allows, and within microseconds of it (clock.c).  For timestamps taken
 * per task; a thread's readings may step back by that much when it
 * re-anchors, so callers clamp differences.
 */
uint64_t pto_task_clock_ns(void);

/*
 * Sleep while *word == expected, at most timeout_ms (UINT32_MAX: forever).
 * Process-private: every waiter and waker of a PTO futex is in one process.
 */
static inline void futex_wait(uint32_t *word, uint32_t expected,
			      uint32_t timeout_ms)
{
	struct timespec ts, *tp = NULL;

	if (timeout_ms != UINT32_MAX) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tp = &ts;
	}
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, tp, NULL, 0);
}

static inline void futex_wake(uint32_t *word, int n)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

#endif /* PTO_LIB_SYNC_H */
