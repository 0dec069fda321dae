/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the libpto tests: runtime set-up, a deterministic
 * hash and random stream, gates kernels can wait on, stderr capture, and a
 * recorder that replays every submitted task sequentially on plain memory.
 *
 * The recorder is the reference the integration tests compare against:
 * the orchestration submits through tl_submit(), which logs each task;
 * tl_replay() then calls the same kernel functions in submission order on
 * shadow copies of the buffers, which is by definition the sequential
 * semantics libpto promises.  The shadow maps every address the runtime
 * used (pto_malloc buffers, OUTPUT allocations, pto_alloc() buffers) to
 * its own memory, so it shares nothing with the runtime but the kernels.
 * A view parameter is replayed as the address of a struct pto_view_desc
 * the recorder builds itself, pointing into the shadow: the same dtype,
 * shape and strides as the view submitted (for an OUTPUT view, the
 * row-major layout the documentation promises), with shape 1 and stride
 * 0 past its dimensions, as libpto fills them.
 */
#ifndef PTO_SELFTESTS_TESTLIB_H
#define PTO_SELFTESTS_TESTLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pto/pto.h>

#include "tap.h"

/* ---- hashing and random numbers --------------------------------------- */

/* A strong 64-bit mixer (the splitmix64 finaliser). */
static inline uint64_t tl_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct tl_rng {
	uint64_t s;
};

static inline void tl_rng_seed(struct tl_rng *r, uint64_t seed)
{
	r->s = tl_mix(seed) | 1;
}

static inline uint64_t tl_rand(struct tl_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

/* Uniform in [lo, hi] (small ranges; the modulo bias does not matter). */
static inline uint64_t tl_range(struct tl_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + tl_rand(r) % (hi - lo + 1);
}

/* Seed from $name (decimal or 0x hex) or from the clock. */
uint64_t tl_env_seed(const char *name);
/* Unsigned value of $name, or def when unset or malformed. */
uint64_t tl_env_u64(const char *name, uint64_t def);

/* ---- runtime set-up --------------------------------------------------- */

/*
 * pto_config_init() defaults, then values fixed for reproducible tests:
 * the given window and heap (0 keeps the default), two cube and two vector
 * cores, one AICPU and one accelerator, a 20 s stall timeout (a test that
 * deadlocks fails instead of hanging).
 */
void tl_config(struct pto_config *cfg, uint32_t window, uint64_t heap);
/* pto_runtime_create() that bails out of the test on failure. */
struct pto_runtime *tl_runtime(const struct pto_config *cfg);

uint64_t tl_now_ns(void);
/* CPUs the process may run on (its affinity mask: taskset counts). */
uint32_t tl_cpus(void);

/*
 * How many of the process's threads have a name starting with prefix
 * (libpto's: pto-core0, pto-sched, ...); *tid, if given, gets the id of
 * the last one found.
 */
int tl_threads_named(const char *prefix, long *tid);

/* The scheduling policies a test runs under, with their names. */
struct tl_policy {
	enum pto_sched_policy sched;
	const char *name;
};

#define TL_NPOLICIES 3
extern const struct tl_policy tl_policies[TL_NPOLICIES];

/* ---- gates: a kernel waits until the orchestration opens it ----------- */

struct tl_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open;
};

void tl_gate_init(struct tl_gate *g);
void tl_gate_destroy(struct tl_gate *g);
void tl_gate_open(struct tl_gate *g);
/* Close it again (nobody may be waiting). */
void tl_gate_close(struct tl_gate *g);
/*
 * Wait until g is open; 0, or -ETIMEDOUT after timeout_ms.  The timeout
 * only bounds a failing test (a wrongly inferred dependency would
 * otherwise hang it); it never orders anything.
 */
int tl_gate_wait(struct tl_gate *g, unsigned int timeout_ms);

/* ---- stderr capture --------------------------------------------------- */

struct tl_capture {
	int saved_fd;
	FILE *tmp;
};

void tl_capture_begin(struct tl_capture *c);
/* Restore stderr; the text written meanwhile (malloc'd, NUL-terminated). */
char *tl_capture_end(struct tl_capture *c);

/* ---- a check in a child process -------------------------------------- */

/*
 * Run fn(arg) in a child of fork(), which _exit()s with what fn returns:
 * a crash or an abort then fails a check instead of ending the test.  A
 * watchdog (SIGALRM after timeout_s seconds) turns a hang into a failure
 * too.  The child's stderr, read to its end (a message may come in more
 * than one write), goes into text (len bytes with the NUL; NULL: dropped).
 * Returns the child's wait status.
 */
int tl_in_child(int (*fn)(void *arg), void *arg, unsigned int timeout_s,
		char *text, size_t len);
/* How a child ended, "exit status 3" or "killed by signal 6", for a diag. */
const char *tl_status_text(int status, char *buf, size_t len);

/*
 * Numbers in text, with K/M/G (or KiB/MiB/GiB, kB) suffixes applied; up to
 * max of them into out.  Returns how many were found.
 */
int tl_numbers(const char *text, uint64_t *out, int max);

/* How many times want occurs in text (overlapping occurrences too). */
int tl_count(const char *text, const char *want);

/* ---- the sequential reference ----------------------------------------- */

#define TL_MAX_KERNELS 64
/* tl_task.kid of a pto_alloc() (tl_alloc()) */
#define TL_ALLOC_KID UINT32_MAX

struct tl_task {
	uint32_t kid;
	uint32_t n;
	size_t view0;		/* its views: tl_rec.views[view0...], in order */
	struct pto_param p[PTO_MAX_PARAMS];	/* a view's ->view dangles */
	uint64_t out[PTO_MAX_PARAMS];	/* OUTPUT: address the runtime gave */
};

struct tl_region {
	uintptr_t addr;
	uint64_t size;
	uint8_t *shadow;
};

struct tl_rec {
	struct pto_runtime *rt;
	pto_kernel_fn fn[TL_MAX_KERNELS];
	struct tl_task *task;
	size_t ntask, task_cap;
	struct tl_region *host;
	size_t nhost, host_cap;
	struct tl_region *outs;		/* replay: OUTPUT allocations */
	size_t nouts, outs_cap;
	struct pto_view *views;		/* view parameters, as submitted */
	size_t nviews, views_cap;
	int bad;			/* a filled-in view was wrong: see err */
	char err[256];			/* why tl_replay failed */
};

void tl_rec_init(struct tl_rec *r, struct pto_runtime *rt);
void tl_rec_free(struct tl_rec *r);
/* Forget tasks and buffers (not kernels): the next test starts afresh. */
void tl_rec_reset(struct tl_rec *r);
/* Register a kernel with libpto and with the reference. */
int tl_register(struct tl_rec *r, uint32_t kid, enum pto_worker_type type,
		pto_kernel_fn fn, const char *name);
/* A host buffer the tasks use; its current contents seed the shadow. */
void tl_host(struct tl_rec *r, void *ptr, uint64_t size);
/* pto_submit_task(), logging the task when it is accepted. */
int64_t tl_submit(struct tl_rec *r, uint32_t kid, enum pto_worker_type type,
		  const struct pto_param *p, uint32_t n);
/*
 * pto_alloc(), logged when it succeeds: the replay makes a buffer of the
 * view's bytes at the same point.  An OUTPUT view's or pto_alloc()'s
 * filled-in view that is not the row-major layout of its shape at offset
 * 0 fails the replay.
 */
int tl_alloc(struct tl_rec *r, struct pto_view *view);
/* Run the logged tasks in order on the shadows; 0, or -1 with r->err. */
int tl_replay(struct tl_rec *r);
/*
 * Compare a host buffer with its shadow: -1 when equal, else the byte
 * offset of the first difference.
 */
int64_t tl_compare(struct tl_rec *r, const void *ptr);

/* tl_compare() as a TAP check, printing the first differing word. */
static inline int tl_check(struct tl_rec *r, const void *ptr,
			   const char *name)
{
	int64_t at = tl_compare(r, ptr);

	if (!ok(at < 0, "%s equals the sequential reference", name))
		diag("  first difference at byte %lld", (long long)at);
	return at < 0;
}

#endif /* PTO_SELFTESTS_TESTLIB_H */
