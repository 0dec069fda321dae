// SPDX-License-Identifier: MIT
/*
 * The stats page writer (lib/statspage.c) and the seqlock reader monitors
 * use: file name, mode and header; PTO_STATS=0; begin/end; a reader in
 * another process never sees a torn update; destroy unlinks; a
 * runtime's page after a run shows its rings empty again; and during a
 * run, in every scheduling mode, the page is live.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pto/pto.h>

#include "../lib/tap.h"
#include "runtime.h"
#include "statspage.h"

static char dir[] = "/tmp/pto-statspage-test.XXXXXX";

static bool page_path(unsigned int seq, char *buf, size_t len)
{
	struct stat sb;

	snprintf(buf, len, "%s/%s%d.%u", dir, PTO_STATSPAGE_PREFIX,
		 (int)getpid(), seq);
	return stat(buf, &sb) == 0;
}

/* After test_tidy_dead(), whose page had seq 0. */
static void test_create(void)
{
	struct pto_statspage *a, *b;
	char path[512];
	struct stat sb;

	a = pto_statspage_create("sim");
	b = pto_statspage_create("/dev/pto0");
	if (!ok(a && b, "create two pages"))
		bail_out("cannot create pages in %s", dir);
	ok(a->magic == PTO_STATSPAGE_MAGIC &&
	   a->version == PTO_STATSPAGE_VERSION && a->size == sizeof(*a),
	   "header: magic, version, size");
	ok_eq(a->pid, getpid(), "pid is ours");
	ok(!strcmp(a->device, "sim") && !strcmp(b->device, "/dev/pto0"),
	   "device names recorded");
	ok(a->start_ns > 0 && a->seq == 0, "start time set, seq even");
	ok(page_path(1, path, sizeof(path)), "first page is %s", path);
	ok(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600 &&
	   sb.st_size >= (off_t)sizeof(*a), "mode 0600, full size");
	ok(page_path(2, path, sizeof(path)), "second page has the next seq");

	pto_statspage_begin(a);
	ok(a->seq & 1, "begin makes seq odd");
	a->tasks_submitted = 7;
	pto_statspage_end(a);
	ok(a->seq == 2, "end makes seq even");

	pto_statspage_destroy(a);
	ok(!page_path(1, path, sizeof(path)), "destroy unlinks the file");
	pto_statspage_destroy(b);
	ok(!page_path(2, path, sizeof(path)), "second file unlinked too");
	pto_statspage_destroy(NULL);
	pto_statspage_begin(NULL);
	pto_statspage_end(NULL);
	ok(1, "NULL page is accepted everywhere");
}

/* Make an empty file called name in the stats directory. */
static void plant(const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		bail_out("cannot create %s: %s", path, strerror(errno));
	close(fd);
}

static bool planted(const char *name)
{
	char path[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &sb) == 0;
}

static void unplant(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* A pid no process has: a child's, reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/*
 * The pages (and half-built pages) of processes that are gone, killed
 * before they could unlink them, are removed when the process makes its
 * first page; a live process's page and other files stay.  Runs first:
 * later pages of this process do not look again.
 */
static void test_tidy_dead(void)
{
	char dead[64], dead_tmp[64], live[64];
	pid_t pid = dead_pid();
	struct pto_statspage *p;

	snprintf(dead, sizeof(dead), "%s%d.0", PTO_STATSPAGE_PREFIX, pid);
	snprintf(dead_tmp, sizeof(dead_tmp), ".%snew.%d.0",
		 PTO_STATSPAGE_PREFIX, pid);
	snprintf(live, sizeof(live), "%s%d.5", PTO_STATSPAGE_PREFIX,
		 (int)getppid());
	plant(dead);
	plant(dead_tmp);
	plant(live);
	plant("pto-stats.notes");
	p = pto_statspage_create("sim");
	ok(p && !planted(dead) && !planted(dead_tmp),
	   "a dead process's page and half-built page are removed");
	ok(planted(live) && planted("pto-stats.notes"),
	   "a live process's page and other files stay");
	pto_statspage_destroy(p);
	unplant(live);
	unplant("pto-stats.notes");
}

static void test_disabled(void)
{
	struct pto_statspage *pg;

	setenv("PTO_STATS", "0", 1);
	pg = pto_statspage_create("sim");
	ok(pg == NULL, "PTO_STATS=0 disables publishing");
	unsetenv("PTO_STATS");
	pto_statspage_destroy(pg);
}

/* Every counter a writer stores derives from one k. */
static void fill(struct pto_statspage *pg, uint64_t k)
{
	int i;

	pg->tasks_submitted = k;
	pg->tasks_completed = 3 * k;
	pg->tasks_in_flight = k ^ 0x5555;
	for (i = 0; i < 4; i++) {
		pg->busy_ns[i] = k * (i + 2);
		pg->ring[i].in_use = k + i;
		pg->ring[i].stall_ns = ~k;
	}
	pg->__reserved[15] = k * 7;
}

static bool consistent(const struct pto_statspage *pg)
{
	uint64_t k = pg->tasks_submitted;
	int i;

	if (pg->tasks_completed != 3 * k || pg->tasks_in_flight != (k ^ 0x5555)
	    || pg->__reserved[15] != k * 7)
		return false;
	for (i = 0; i < 4; i++)
		if (pg->busy_ns[i] != k * (i + 2) ||
		    pg->ring[i].in_use != k + i || pg->ring[i].stall_ns != ~k)
			return false;
	return true;
}

/*
 * The writer runs in a child (the page mapping is shared across fork, as
 * with a monitor in another process); the parent reads until it has seen
 * enough distinct updates, checking each snapshot is whole.
 */
static void test_seqlock(void)
{
	struct pto_statspage *pg = pto_statspage_create("sim");
	struct pto_statspage snap;
	volatile int *stop;
	uint64_t last = 0, distinct = 0, torn = 0, backwards = 0;
	long reads;
	pid_t child;
	int status;

	stop = mmap(NULL, sizeof(*stop), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ok(pg && stop != MAP_FAILED, "page for the seqlock test"))
		return;
	*stop = 0;
	pto_statspage_begin(pg);
	fill(pg, 0);
	pto_statspage_end(pg);
	child = fork();
	if (child == 0) {
		uint64_t k;

		for (k = 2; !__atomic_load_n(stop, __ATOMIC_RELAXED) &&
		     k < 50000000; k++) {
			pto_statspage_begin(pg);
			fill(pg, k);
			pto_statspage_end(pg);
		}
		_exit(0);
	}
	for (reads = 0; reads < 2000000 && distinct < 2000; reads++) {
		if (pto_statspage_read(pg, &snap))
			continue;
		if (!consistent(&snap))
			torn++;
		if (snap.tasks_submitted < last)
			backwards++;
		if (snap.tasks_submitted != last)
			distinct++;
		last = snap.tasks_submitted;
	}
	__atomic_store_n(stop, 1, __ATOMIC_RELAXED);
	waitpid(child, &status, 0);
	diag("%ld reads, %llu distinct updates seen", reads,
	     (unsigned long long)distinct);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer exited");
	ok(distinct >= 2, "reader saw the writer progress");
	ok_eq(torn, 0, "no torn snapshot");
	ok_eq(backwards, 0, "counters never go backwards");
	ok(!(pg->seq & 1) && pg->seq == 2 * pg->tasks_submitted,
	   "seq counts two per update and ends even");
	munmap((void *)stop, sizeof(*stop));
	pto_statspage_destroy(pg);
}

static void k_nop(const uint64_t *args, uint32_t n)
{
}

/* 200 tasks with an OUTPUT each, in one scope per 8: rings fill and drain. */
static int orch_outputs(struct pto_runtime *rt, void *arg)
{
	void *out;
	int i;

	for (i = 0; i < 200; i++) {
		if (i % 8 == 0 && (i ? pto_scope_end(rt) : 0))
			return -1;
		if (i % 8 == 0 && pto_scope_begin(rt))
			return -1;
		if (pto_submit_task(rt, 1, PTO_WORKER_VECTOR,
				    (struct pto_param[]){
					PTO_OUT(&out, 4096) }, 1) < 0)
			return -1;
	}
	return pto_scope_end(rt);
}

static void test_after_run(void)
{
	struct pto_runtime *rt;
	uint64_t held = 0, high = 0;
	uint32_t k;

	if (!ok(pto_runtime_create(NULL, &rt) == 0 && rt->page,
		"a runtime publishes a page"))
		return;
	pto_kernel_register(rt, 1, PTO_WORKER_VECTOR, k_nop, "nop");
	ok(pto_run(rt, orch_outputs, NULL) == 0, "a run of 200 OUTPUT tasks");
	for (k = 0; k < PTO_NUM_RINGS; k++) {
		held += rt->page->ring[k].in_use;
		high += rt->page->ring[k].high_water;
	}
	ok(held == 0 && high > 0, "after the run the page shows nothing in "
	   "use (%llu), the high water marks stay (%llu)",
	   (unsigned long long)held, (unsigned long long)high);
	pto_runtime_destroy(rt);
}

#define LIVE_TASKS 64
#define HELD 32		/* PUBLISH_BATCH in lib/orchestrator.c */

/* Read the page as a monitor would: a whole snapshot of two fields. */
static void page_read(const struct pto_statspage *pg, uint32_t *running,
		      uint64_t *completed, uint64_t *slots)
{
	uint64_t seq;

	do {
		seq = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
		*running = READ_ONCE(pg->running);
		*completed = READ_ONCE(pg->tasks_completed);
		*slots = READ_ONCE(pg->ring[PTO_RING_TASK].in_use);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || seq != READ_ONCE(pg->seq));
}

/*
 * The page of this process's only runtime, mapped as a monitor maps it
 * (its own read-only mapping of the file, so that TSan does not take the
 * seqlock's plain stores for a race with this thread's reads).
 */
static const struct pto_statspage *monitor_map(void)
{
	char prefix[64], path[512];
	const struct dirent *de;
	void *pg = MAP_FAILED;
	DIR *d = opendir(dir);
	int fd;

	snprintf(prefix, sizeof(prefix), "%s%d.", PTO_STATSPAGE_PREFIX,
		 (int)getpid());
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)))
			break;
	if (d && de) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			pg = mmap(NULL, sizeof(struct pto_statspage),
				  PROT_READ, MAP_SHARED, fd, 0);
			close(fd);
		}
	}
	if (d)
		closedir(d);
	return pg == MAP_FAILED ? NULL : pg;
}

struct watch {
	const struct pto_statspage *pg;	/* the monitor's mapping */
	uint64_t seen[3];
};

/*
 * The orchestration itself watches the page: it must say running from the
 * start, and once the machine has run every task and gone quiet it must
 * show them completed, not what it had at the last periodic refresh.
 */
static int orch_watch(struct pto_runtime *rt, void *arg)
{
	struct watch *w = arg;
	uint64_t *seen = w->seen, done = 0, slots = 0;
	uint32_t running;
	int i, polls;

	page_read(w->pg, &running, &done, &slots);
	seen[0] = running;
	/* in a scope of their own, so that they can retire during the run */
	pto_scope_begin(rt);
	for (i = 0; i < LIVE_TASKS; i++)
		if (pto_submit_task(rt, 1, PTO_WORKER_VECTOR, NULL, 0) < 0)
			return -1;
	pto_scope_end(rt);
	/* bounded: a page that never catches up fails below, not hangs */
	for (polls = 0; polls < 10000 && done < LIVE_TASKS; polls++) {
		usleep(1000);
		page_read(w->pg, &running, &done, &slots);
	}
	seen[1] = done;
	/*
	 * HELD more, in the run's scope, which holds them: each makes a
	 * buffer.  The orchestrator
	 * tells the scheduler of a scope's end with its next batch of tasks
	 * (or at once if the scheduler sleeps): this many cross a batch
	 * boundary, so the 64 retire and the page must come down to these.
	 */
	for (i = 0; i < HELD; i++) {
		void *t;
		struct pto_param out[] = { PTO_OUT(&t, 64) };

		if (pto_submit_task(rt, 1, PTO_WORKER_VECTOR, out, 1) < 0)
			return -1;
	}
	for (polls = 0; polls < 10000 &&
	     (done < LIVE_TASKS + HELD || slots != HELD); polls++) {
		usleep(1000);
		page_read(w->pg, &running, &done, &slots);
	}
	seen[2] = slots;
	return 0;
}

static void test_live(const char *mode)
{
	struct pto_runtime *rt;
	struct watch w = { 0 };
	uint64_t *seen = w.seen;

	setenv("PTO_SCHED", mode, 1);
	if (!ok(pto_runtime_create(NULL, &rt) == 0 && rt->page,
		"%s: a runtime publishes a page", mode))
		goto out;
	w.pg = monitor_map();
	if (!ok(w.pg != NULL, "%s: a monitor maps it", mode)) {
		pto_runtime_destroy(rt);
		goto out;
	}
	pto_kernel_register(rt, 1, PTO_WORKER_VECTOR, k_nop, "nop");
	ok(pto_run(rt, orch_watch, &w) == 0, "%s: a watched run", mode);
	ok(seen[0] == 1, "%s: the page says running from the run's start",
	   mode);
	ok(seen[1] == LIVE_TASKS,
	   "%s: the page shows all %d tasks done while the run idles (%llu)",
	   mode, LIVE_TASKS, (unsigned long long)seen[1]);
	ok(seen[2] == HELD,
	   "%s: once they retired, the page's task slots in use come down "
	   "to the %d tasks still held (%llu)", mode, HELD,
	   (unsigned long long)seen[2]);
	munmap((void *)w.pg, sizeof(*w.pg));
	pto_runtime_destroy(rt);
out:
	unsetenv("PTO_SCHED");
}

/*
 * Between runs the page is the orchestrator's alone: it wrote the run's
 * end, and no scheduling thread (the core threads keep scheduling hooks
 * from one run to the next) writes it again until the next run starts.
 * Watched for longer than the core threads' naps (50 ms), twice over.
 */
static void test_quiet_between_runs(const char *mode)
{
	const struct pto_statspage *pg;
	struct pto_runtime *rt;
	uint64_t seq, changed = 0;
	int i, polls;

	setenv("PTO_SCHED", mode, 1);
	if (!ok(pto_runtime_create(NULL, &rt) == 0 && rt->page,
		"%s: a runtime publishes a page", mode))
		goto out;
	pg = monitor_map();
	pto_kernel_register(rt, 1, PTO_WORKER_VECTOR, k_nop, "nop");
	for (i = 0; i < 3; i++)
		ok(pto_run(rt, orch_outputs, NULL) == 0,
		   "%s: run %d of 200 OUTPUT tasks", mode, i + 1);
	seq = pg ? __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE) : 1;
	for (polls = 0; pg && polls < 120 && !changed; polls++) {
		usleep(1000);
		changed = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE) != seq;
	}
	ok(pg && !(seq & 1) && !changed, "%s: after the last run returned, "
	   "nothing wrote the page for %d ms", mode, polls);
	if (pg)
		munmap((void *)pg, sizeof(*pg));
	pto_runtime_destroy(rt);
out:
	unsetenv("PTO_SCHED");
}

static void test_bad_dir(void)
{
	setenv("PTO_STATS_DIR", "/nonexistent/pto", 1);
	ok(pto_statspage_create("sim") == NULL,
	   "unwritable directory: NULL, no crash");
	setenv("PTO_STATS_DIR", dir, 1);
}

int main(void)
{
	if (!mkdtemp(dir))
		bail_out("mkdtemp: %s", strerror(errno));
	setenv("PTO_STATS_DIR", dir, 1);
	unsetenv("PTO_STATS");
	test_tidy_dead();
	test_create();
	test_disabled();
	test_seqlock();
	test_after_run();
	test_live("thread");
	test_live("workers");
	test_live("shards");
	test_quiet_between_runs("thread");
	test_quiet_between_runs("workers");
	test_quiet_between_runs("shards");
	test_bad_dir();
	ok(rmdir(dir) == 0, "no file left behind");
	return tap_done();
}
