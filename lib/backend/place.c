// SPDX-License-Identifier: MIT
/*
 * Soft pinning of the simulator's core threads: see place.h for why.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../fd.h"
#include "place.h"
#include "sync.h"

/*
 * How long a window of a pinned thread's run delay is, at least: as long
 * as a task it runs pinned may be (place.h), so that a contended CPU
 * costs at most about two windows at half speed.
 */
#define PLACE_WINDOW_NS PTO_PLACE_LONG_NS
/* A window with less run delay than this is no contention. */
#define PLACE_DELAY_MIN_NS 500000ull
/* The first hold unpinned, and the longest it doubles to. */
#define PLACE_HOLD_NS 1000000000ull
#define PLACE_HOLD_MAX_NS 16000000000ull

void pto_place_plan(struct pto_place_set *set, uint32_t threads)
{
	uint32_t c;

	set->n = 0;
	if (sched_getaffinity(0, sizeof(set->allowed), &set->allowed))
		return;
	if (CPU_COUNT(&set->allowed) < 2 ||
	    (uint32_t)CPU_COUNT(&set->allowed) >= threads + 2)
		return;
	for (c = 0; c < CPU_SETSIZE && set->n < 256; c++)
		if (CPU_ISSET(c, &set->allowed))
			set->cpu[set->n++] = c;
}

/* The thread's time on a CPU and waiting for one, in ns; false: unread. */
static bool read_schedstat(int fd, uint64_t *run, uint64_t *delay)
{
	char buf[96], *end;
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0)
		return false;
	buf[len] = 0;
	*run = strtoull(buf, &end, 10);
	if (*end != ' ')
		return false;
	*delay = strtoull(end + 1, &end, 10);
	return *end == ' ';
}

static bool pin(struct pto_place *p, const struct pto_place_set *set,
		bool on)
{
	if (pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t),
				   on ? &p->one : &set->allowed))
		return false;
	p->pinned = on;
	return true;
}

/*
 * Is the thread's mask still the one placement gave it?  Not when the
 * user changed it (taskset -a -p, sched_setaffinity()): theirs then
 * stands, and placement stops for good.
 */
static bool still_ours(struct pto_place *p, const struct pto_place_set *set)
{
	cpu_set_t now;

	if (!pthread_getaffinity_np(pthread_self(), sizeof(now), &now) &&
	    CPU_EQUAL(&now, p->pinned ? &p->one : &set->allowed))
		return true;
	pto_place_stop(p);
	return false;
}

/* Placement ends: the thread may run anywhere again, unwatched. */
static void give_up(struct pto_place *p, const struct pto_place_set *set)
{
	if (p->pinned)
		pin(p, set, false);
	pto_place_stop(p);
}

/* A window starts now, pinned: where the counters stand. */
static void window_start(struct pto_place *p, const struct pto_place_set *set,
			 uint64_t now)
{
	if (!read_schedstat(p->fd, &p->run, &p->delay)) {
		give_up(p, set);
		return;
	}
	p->next = now + PLACE_WINDOW_NS;
}

void pto_place_start(struct pto_place *p, const struct pto_place_set *set,
		     uint32_t index)
{
	p->fd = -1;
	p->next = UINT64_MAX;
	p->pinned = false;
	p->hold_ns = PLACE_HOLD_NS;
	if (!set->n)
		return;
	CPU_ZERO(&p->one);
	CPU_SET(set->cpu[index % set->n], &p->one);
	/* unwatched, a pinned thread could not leave a busy CPU: not pinned */
	p->fd = pto_fd_above_stdio(open("/proc/thread-self/schedstat",
					O_RDONLY | O_CLOEXEC));
	if (p->fd < 0)
		return;
	if (!pin(p, set, true)) {
		pto_place_stop(p);
		return;
	}
	window_start(p, set, pto_now_ns());
}

void pto_place_stop(struct pto_place *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->next = UINT64_MAX;
}

void pto_place_look(struct pto_place *p, const struct pto_place_set *set,
		    uint64_t now)
{
	uint64_t run, delay, ran, waited;

	if (p->fd < 0 || !still_ours(p, set))
		return;
	if (!p->pinned) {	/* the hold is over: try the CPU again */
		if (pin(p, set, true))
			window_start(p, set, now);
		else
			p->next = now + p->hold_ns;
		return;
	}
	if (!read_schedstat(p->fd, &run, &delay)) {
		give_up(p, set);
		return;
	}
	ran = run - p->run;
	waited = delay - p->delay;
	if (waited < PLACE_DELAY_MIN_NS || waited * 4 <= ran + waited) {
		p->hold_ns = PLACE_HOLD_NS;	/* the CPU is its own */
		p->run = run;
		p->delay = delay;
		p->next = now + PLACE_WINDOW_NS;
		return;
	}
	/* contended: anywhere, for a while */
	pin(p, set, false);
	p->next = now + p->hold_ns;
	if (p->hold_ns < PLACE_HOLD_MAX_NS)
		p->hold_ns *= 2;
}

void pto_place_release(struct pto_place *p, const struct pto_place_set *set)
{
	if (p->fd < 0 || !p->pinned || !still_ours(p, set))
		return;
	/* the first look after the task takes the CPU again */
	if (pin(p, set, false))
		p->next = 0;
}
