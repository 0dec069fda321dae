// SPDX-License-Identifier: MIT
/*
 * pto_task_clock_ns(): CLOCK_MONOTONIC nanoseconds for the per-task path,
 * from the CPU's time-stamp counter.
 *
 * Every task's start and end are timestamped (busy time, traces), and
 * clock_gettime() is a noticeable part of a short task's cost on virtual
 * machines (Documentation/ptobench.rst has the figures).  Where the kernel itself keeps time
 * with the TSC (clocksource "tsc", which it picks only when the counter
 * is invariant and synchronised across CPUs), a thread reads the counter
 * and scales it from an anchor: a (counter, clock_gettime) pair it takes
 * again every ANCHOR_NS.  The scale is measured against CLOCK_MONOTONIC
 * over the life of the process, so the estimate stays within
 * microseconds of the real clock.  Anywhere else, and until the scale has
 * been measured over CALIBRATE_NS, this is clock_gettime().
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sync.h"

/* A thread re-anchors after this long (bounds the drift and the product). */
#define ANCHOR_NS	100000000ull
/* The scale is first trusted after this much time. */
#define CALIBRATE_NS	10000000ull
/* How far apart the clock readings around a counter reading may be. */
#define PAIR_NS		2000
#define CLOCKSOURCE \
	"/sys/devices/system/clocksource/clocksource0/current_clocksource"

enum { TSC_UNKNOWN, TSC_USABLE, TSC_UNUSABLE };

static struct {
	int state;		/* TSC_* */
	uint64_t tsc0, ns0;	/* the process's first pair */
	uint64_t mult;		/* ns per tick << 32; 0: not measured yet */
	uint64_t anchor_ticks;	/* ANCHOR_NS in ticks */
} tsc;

struct tsc_anchor {
	uint64_t tsc;
	uint64_t ns;
};

static __thread struct tsc_anchor anchor
	__attribute__((tls_model("initial-exec")));

#if defined(__x86_64__)
static inline uint64_t read_tsc(void)
{
	return __builtin_ia32_rdtsc();
}

/* Does the kernel keep CLOCK_MONOTONIC with the TSC? */
static bool kernel_uses_tsc(void)
{
	char buf[32] = "";
	FILE *f = fopen(CLOCKSOURCE, "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !strcmp(buf, "tsc\n");
}
#else
static inline uint64_t read_tsc(void)
{
	return 0;
}

static bool kernel_uses_tsc(void)
{
	return false;
}
#endif

/*
 * A (counter, clock) pair read close together: a pair split by a
 * preemption would skew the scale, so one whose clock readings around the
 * counter lie more than PAIR_NS apart is read again.
 */
static void read_pair(uint64_t *t, uint64_t *ns)
{
	int tries;

	for (tries = 0; tries < 8; tries++) {
		uint64_t before = pto_now_ns();

		*t = read_tsc();
		*ns = pto_now_ns();
		if (*ns - before <= PAIR_NS)
			break;
	}
}

static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

static void tsc_init(void)
{
	if (kernel_uses_tsc()) {
		read_pair(&tsc.tsc0, &tsc.ns0);
		tsc.state = TSC_USABLE;
	} else {
		tsc.state = TSC_UNUSABLE;
	}
}

/*
 * Take a fresh (counter, clock) pair for this thread, and with it refine
 * the process-wide scale: ticks and nanoseconds since the first pair.
 */
static uint64_t reanchor(void)
{
	uint64_t t, ns, dns, dt;

	read_pair(&t, &ns);
	dns = ns - tsc.ns0;
	dt = t - tsc.tsc0;

	anchor.tsc = t;
	anchor.ns = ns;
	if (dns >= CALIBRATE_NS && dt) {
		uint64_t mult = (uint64_t)(((__uint128_t)dns << 32) / dt);

		__atomic_store_n(&tsc.anchor_ticks,
				 (uint64_t)(((__uint128_t)ANCHOR_NS << 32) /
					    mult), __ATOMIC_RELAXED);
		__atomic_store_n(&tsc.mult, mult, __ATOMIC_RELAXED);
	}
	return ns;
}

uint64_t pto_task_clock_ns(void)
{
	uint64_t t, mult;

	pthread_once(&tsc_once, tsc_init);
	if (tsc.state != TSC_USABLE)
		return pto_now_ns();
	mult = __atomic_load_n(&tsc.mult, __ATOMIC_RELAXED);
	t = read_tsc();
	if (!mult || !anchor.ns || t - anchor.tsc >=
	    __atomic_load_n(&tsc.anchor_ticks, __ATOMIC_RELAXED))
		return reanchor();
	return anchor.ns + (uint64_t)(((__uint128_t)(t - anchor.tsc) *
				       mult) >> 32);
}
