// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests for the defects hostile programs found in pto.ko (issue 14),
 * one or more per defect, each failing on the driver before its fix:
 * ioctls with a struct size of 0, SETUP on a read-only file, GET_INFO out
 * fields, WAIT not restartable, fdinfo keys and values, mappings inherited
 * by fork and replaced by MADV_DONTNEED, torn BIND_OP, io_uring WAITs
 * outliving their ring or an execve, unbounded WAIT timeouts and counts,
 * wake-ups walking every parked WAIT, unaccounted memory, per-user limits
 * and the freezer.  Runs inside the VM; tests that change module
 * parameters or devices need root and skip otherwise.
 */
#include <grp.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "pto_test_util.h"

#define SEC	1000000000ull
#define MSEC	1000000ull
#define HEAP	(1u << 20)
#define CONTEXTS "/sys/class/pto/pto0/contexts"

/* Tests that take long on the debug kernel under TCG. */
FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

#define NEED_ROOT() do {						\
	if (geteuid())							\
		SKIP(return, "needs root (module parameters, devices)");\
} while (0)

static unsigned int cmd_size(unsigned int cmd, unsigned int size)
{
	return (cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
	       (size << _IOC_SIZESHIFT);
}

/* Submit a PTO_URING_CMD_WAIT; user_data tags it. */
static void submit_wait(struct io_uring *ring, int fd, uint64_t head,
			uint32_t timeout_ms, uint64_t tag)
{
	struct pto_uring_wait w = { .cring_head = head,
				    .timeout_ms = timeout_ms };
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = PTO_URING_CMD_WAIT;
	memcpy(sqe->cmd, &w, sizeof(w));
	io_uring_sqe_set_data64(sqe, tag);
}

/* ---- item 7: ioctl sizes, modes and GET_INFO ------------------------------- */

/*
 * A struct size of 0 (or anything below ABI 3's) is refused: KICK with
 * NULL used to read as "all zero" and ran core 0's queued task.
 */
TEST(ioctl_short_sizes_refused)
{
	static const unsigned int cmds[] = {
		PTO_IOCTL_GET_INFO, PTO_IOCTL_SETUP, PTO_IOCTL_BIND_OP,
		PTO_IOCTL_KICK, PTO_IOCTL_WAIT,
	};
	struct pto_completion c = { 0 };
	uint8_t buf[512] = { 0 };
	struct pto_t p;
	unsigned int i;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP));
	pto_t_queue(&p, 0, 1, NULL, 0);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(-1, ioctl(p.fd, cmd_size(cmds[i], 0), NULL));
		EXPECT_EQ(EINVAL, errno) TH_LOG("cmd %u size 0", i);
		EXPECT_EQ(-1, ioctl(p.fd, cmd_size(cmds[i], _IOC_SIZE(cmds[i]) - 1),
				    buf));
		EXPECT_EQ(EINVAL, errno) TH_LOG("cmd %u size - 1", i);
	}
	/* nothing ran: the task waits for a real KICK */
	EXPECT_EQ(0, pto_t_wait(&p, 200 * MSEC));
	EXPECT_EQ(0, pto_t_regs(&p, 0)->consumed);
	ASSERT_EQ(0, pto_t_kick(&p, 0));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(0, c.status);
	pto_t_close(&p);
}

/* A context's regions are mapped read-write: SETUP needs O_RDWR. */
TEST(setup_needs_read_write)
{
	struct pto_bind_op b = { .kernel_id = 1 };
	struct pto_info info = { 0 };
	struct pto_setup s;
	int fd;

	fd = open(pto_t_dev(), O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, PTO_IOCTL_GET_INFO, &info));
	pto_t_setup_args(&s, 64, HEAP, 64);
	EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_SETUP, &s));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_BIND_OP, &b));
	EXPECT_EQ(EBADF, errno);
	close(fd);
	fd = open(pto_t_dev(), O_WRONLY);
	ASSERT_LE(0, fd);
	pto_t_setup_args(&s, 64, HEAP, 64);
	EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_SETUP, &s));
	EXPECT_EQ(EBADF, errno);
	close(fd);
	fd = open(pto_t_dev(), O_RDWR);
	ASSERT_LE(0, fd);
	pto_t_setup_args(&s, 64, HEAP, 64);
	EXPECT_EQ(0, ioctl(fd, PTO_IOCTL_SETUP, &s));
	close(fd);
}

/* GET_INFO's struct is all out fields: each must be passed as zero. */
TEST(get_info_inputs_zero)
{
	struct pto_info info;
	size_t off;
	int fd = open(pto_t_dev(), O_RDWR);

	ASSERT_LE(0, fd);
	for (off = 0; off < sizeof(info); off += 4) {
		memset(&info, 0, sizeof(info));
		*(uint32_t *)((uint8_t *)&info + off) = 1;
		EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_GET_INFO, &info))
			TH_LOG("word at %zu accepted", off);
		EXPECT_EQ(EINVAL, errno);
	}
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, ioctl(fd, PTO_IOCTL_GET_INFO, &info));
	/* a caller passing back what it got is refused too */
	EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	/* the new limits are reported */
	EXPECT_EQ(pto_t_sysfs_long(PTO_T_PARAM("max_wait_ms")),
		  (long)info.max_wait_ms);
	EXPECT_EQ(pto_t_sysfs_long(PTO_T_PARAM("max_uring_waits")),
		  (long)info.max_uring_waits);
	close(fd);
}

/* ---- WAIT: restartable, relative timeout kept ------------------------------ */

static void on_alarm(int sig)
{
}

static int64_t wait_with_alarm(struct pto_t *p, int flags, uint64_t timeout,
			       uint64_t alarm_ns, struct pto_wait *w, int *err)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = flags };
	struct itimerval it = { .it_value = { alarm_ns / SEC,
					      (alarm_ns % SEC) / 1000 } };
	uint64_t t0;
	int ret;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(w, 0, sizeof(*w));
	w->timeout_ns = timeout;
	w->cring_head = p->head;
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = pto_t_now_ns();
	ret = ioctl(p->fd, PTO_IOCTL_WAIT, w);
	*err = ret ? errno : 0;
	signal(SIGALRM, SIG_DFL);
	return pto_t_now_ns() - t0;
}

/*
 * A signal handled with SA_RESTART does not end a WAIT, and the restarted
 * WAIT sleeps for the time left only; without SA_RESTART the caller sees
 * EINTR and the time left in timeout_ns.
 */
TEST(wait_restarts_with_time_left)
{
	struct pto_wait w;
	struct pto_t p;
	uint64_t el;
	int err;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	el = wait_with_alarm(&p, SA_RESTART, SEC, 500 * MSEC, &w, &err);
	EXPECT_EQ(0, err) TH_LOG("WAIT with SA_RESTART: errno %d", err);
	EXPECT_EQ(0, w.cring_tail);
	EXPECT_LE(950 * MSEC, el);
	/* restarted from the full timeout it would take 1.5 s */
	EXPECT_GT(1350 * MSEC, el) TH_LOG("took %llu ns",
					  (unsigned long long)el);

	el = wait_with_alarm(&p, 0, SEC, 300 * MSEC, &w, &err);
	EXPECT_EQ(EINTR, err);
	EXPECT_GT(900 * MSEC, el);
	EXPECT_GT(800 * MSEC, w.timeout_ns);
	EXPECT_LT(0, w.timeout_ns);
	pto_t_close(&p);
}

/* ---- fdinfo --------------------------------------------------------------------- */

/* drm-usage-stats keys, for gputop and nvtop; the pto- ones stay. */
TEST(fdinfo_drm_usage_stats)
{
	char v[64], w[64], want[64];
	static const char * const types[] = PTO_UAPI_WORKER_TYPE_NAMES;
	struct pto_t p;
	int t;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP));
	ASSERT_EQ(0, pto_t_run(&p, 0, 1, NULL, 0));
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "drm-driver", v, sizeof(v)));
	EXPECT_STREQ("pto", v);
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "drm-client-id", v, sizeof(v)));
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "pto-client-id", w, sizeof(w)));
	EXPECT_STREQ(w, v);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		snprintf(want, sizeof(want), "drm-engine-%s", types[t]);
		ASSERT_EQ(0, pto_t_fdinfo(p.fd, want, v, sizeof(v)));
		EXPECT_EQ(0, strcmp(v + strlen(v) - 3, " ns")) TH_LOG("%s", v);
		snprintf(want, sizeof(want), "drm-engine-capacity-%s", types[t]);
		ASSERT_EQ(0, pto_t_fdinfo(p.fd, want, v, sizeof(v)));
		EXPECT_EQ(p.info.cores[t], strtoul(v, NULL, 10));
	}
	snprintf(want, sizeof(want), "%llu KiB",
		 (unsigned long long)p.s.heap.size / 1024);
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "drm-total-heap", v, sizeof(v)));
	EXPECT_STREQ(want, v);
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "drm-resident-heap", v, sizeof(v)));
	EXPECT_STREQ(want, v);
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "drm-total-window", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu KiB",
		 (unsigned long long)p.s.window.size / 1024);
	EXPECT_STREQ(want, v);
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "pto-device", v, sizeof(v)));
	EXPECT_STREQ(pto_t_dev() + 5, v);
	pto_t_close(&p);
}

/* Scribbled registers and ring headers do not change what fdinfo says. */
TEST(fdinfo_not_from_user_memory)
{
	struct pto_t p;
	char v[64];
	uint32_t c;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	for (c = 0; c < p.s.num_cores; c++) {
		pto_t_regs(&p, c)->doorbell = 0x7fffffff;
		pto_t_regs(&p, c)->consumed = 3;
		pto_t_regs(&p, c)->busy_ns = 1ull << 60;
	}
	p.cring->tail = 1ull << 40;
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "pto-tasks-in-flight", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "pto-state", v, sizeof(v)));
	EXPECT_STREQ("idle", v);
	ASSERT_EQ(0, pto_t_fdinfo(p.fd, "drm-engine-cube", v, sizeof(v)));
	EXPECT_STREQ("0 ns", v);
	/* nor what WAIT reports */
	EXPECT_EQ(0, pto_t_wait(&p, 0));
	pto_t_close(&p);
}

/* ---- mmap: not inherited, refaults from the device ------------------------------ */

TEST(mmap_not_inherited_by_fork)
{
	struct pto_t p;
	int status;
	pid_t pid;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	p.heap[0] = 0x42;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		volatile uint8_t x = p.heap[0];

		_exit(x == 0x42 ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		TH_LOG("child status %#x: the mapping was inherited", status);
	/* the inherited fd maps the same memory */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t *h = pto_t_map(p.fd, p.s.heap.offset, 4096);

		_exit(h && h[0] == 0x42 ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pto_t_close(&p);
}

/* MADV_DONTNEED drops the pages; touching them again maps the device's. */
TEST(mmap_refaults_after_dontneed)
{
	uint64_t args[3] = { 300, 200, 1 };
	struct pto_t p;
	uint8_t *m2;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	m2 = pto_t_map(p.fd, p.s.heap.offset, 4096);
	ASSERT_NE(NULL, m2);
	p.heap[100] = 0x5a;
	ASSERT_EQ(0, madvise(p.heap, 4096, MADV_DONTNEED));
	EXPECT_EQ(0x5a, p.heap[100]) TH_LOG("a private zero page replaced the device memory");
	p.heap[200] = 0x77;
	EXPECT_EQ(0x77, m2[200]);
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_VECTOR, PTO_OP_COPY));
	EXPECT_EQ(0, pto_t_run(&p, p.first_core[PTO_UAPI_WORKER_VECTOR], 1,
			       args, 3));
	EXPECT_EQ(0x77, p.heap[300]);
	munmap(m2, 4096);
	pto_t_close(&p);
}

/* ---- BIND_OP vs running tasks ------------------------------------------------------ */

struct rebind {
	struct pto_t *p;
	volatile int stop;
	unsigned long flips;
};

static void *rebind_loop(void *arg)
{
	struct rebind *r = arg;

	while (!r->stop) {
		pto_t_bind(r->p, 5, PTO_UAPI_WORKER_VECTOR, PTO_OP_FILL_U32);
		pto_t_bind(r->p, 5, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP);
		r->flips++;
	}
	return NULL;
}

/*
 * Kernel id 5 flips between (vector, FILL) and (cube, NOP) while a cube
 * core runs it: every task must see one binding or the other, never the
 * FILL op with the cube type (it would write the heap).  A race: it can
 * only fail when the interleaving happens, which took the old driver
 * (op and type in two words) some thousands of tasks.
 */
TEST_F_TIMEOUT(slow, bind_never_torn, 600)
{
	uint64_t args[3] = { 8192, 0xdeadbeef, 64 }, end;
	struct rebind r = { 0 };
	struct pto_completion c = { 0 };
	unsigned long tasks = 0, bad = 0;
	pthread_t th;
	struct pto_t p;
	int i;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	r.p = &p;
	ASSERT_EQ(0, pthread_create(&th, NULL, rebind_loop, &r));
	end = pto_t_now_ns() + 3 * SEC;
	while (pto_t_now_ns() < end) {
		for (i = 0; i < PTO_CORE_QUEUE_SLOTS; i++)
			pto_t_queue(&p, 0, 5, args, 3);
		ASSERT_EQ(0, pto_t_kick(&p, 0));
		for (i = 0; i < PTO_CORE_QUEUE_SLOTS; i++) {
			ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
			ASSERT_TRUE(c.status == 0 || c.status == -EINVAL);
			tasks++;
		}
		if (*(uint32_t *)(p.heap + 8192))
			bad++;
	}
	r.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%lu tasks, %lu rebinds", tasks, r.flips);
	EXPECT_EQ(0, bad);
	pto_t_close(&p);
}

/* ---- io_uring WAITs --------------------------------------------------------------------- */

/*
 * A parked WAIT does not keep its context alive once its ring is closed:
 * the ring, the fd and the mappings gone, the context goes within seconds,
 * not at the WAIT's 60 s timeout.
 */
TEST(uring_wait_dies_with_its_ring)
{
	struct io_uring ring;
	struct pto_t p;
	long before;

	before = pto_t_sysfs_long(CONTEXTS);
	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	submit_wait(&ring, p.fd, p.head, 60000, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	EXPECT_EQ(before + 1, pto_t_sysfs_long(CONTEXTS));
	io_uring_queue_exit(&ring);
	pto_t_close(&p);
	EXPECT_EQ(before, pto_t_sysfs_wait_for(CONTEXTS, before, 3000))
		TH_LOG("the context outlived its ring");
}

/* An execve() does not wait for a parked WAIT's timeout. */
TEST(uring_wait_does_not_hold_execve)
{
	int pipefd[2], status, pidfd;
	struct pollfd pfd;
	uint64_t t0;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct io_uring ring;
		struct pto_t p;

		if (pto_t_open(&p, 64, HEAP, 64) ||
		    io_uring_queue_init(4, &ring, 0))
			_exit(2);
		submit_wait(&ring, p.fd, p.head, 60000, 1);
		if (io_uring_submit(&ring) != 1)
			_exit(3);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(4);
		execl("/bin/true", "true", (char *)NULL);
		_exit(5);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	t0 = pto_t_now_ns();
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	ASSERT_LE(0, pidfd);
	pfd = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	EXPECT_EQ(1, poll(&pfd, 1, 10000))
		TH_LOG("execve waited for the WAIT's timeout");
	if (pfd.revents == 0)
		kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("status %#x", status);
	EXPECT_GT(5 * SEC, pto_t_now_ns() - t0);
	close(pidfd);
	close(pipefd[0]);
}

/* A WAIT never stays parked longer than max_wait_ms. */
TEST(uring_wait_timeout_bounded)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct pto_info info = { 0 };
	char old[64];
	struct pto_t p;
	uint64_t t0, el;

	NEED_ROOT();
	ASSERT_EQ(0, pto_t_param_set("max_wait_ms", "300", old));
	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, ioctl(p.fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(300, info.max_wait_ms);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	t0 = pto_t_now_ns();
	submit_wait(&ring, p.fd, p.head, UINT32_MAX, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	el = pto_t_now_ns() - t0;
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	pto_t_param_restore("max_wait_ms", old);
	EXPECT_LE(250 * MSEC, el);
	EXPECT_GT(5 * SEC, el);
	io_uring_queue_exit(&ring);
	pto_t_close(&p);
}

/* At most max_uring_waits park on a context; one more gets -EBUSY. */
TEST(uring_wait_count_bounded)
{
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	char old[64];
	struct pto_t p;
	int i, ready = 0, busy = 0, have;

	NEED_ROOT();
	/* a driver without the limit fails below, not here */
	have = !pto_t_param_set("max_uring_waits", "4", old);
	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP));
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	for (i = 0; i < 5; i++)
		submit_wait(&ring, p.fd, p.head, 10000, i);
	ASSERT_EQ(5, io_uring_submit(&ring));
	/* the fifth completes at once */
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EBUSY, cqe->res);
	EXPECT_EQ(4, io_uring_cqe_get_data64(cqe));
	io_uring_cqe_seen(&ring, cqe);
	if (have)
		pto_t_param_restore("max_uring_waits", old);
	/* a completion satisfies the four */
	pto_t_queue(&p, 0, 1, NULL, 0);
	ASSERT_EQ(0, pto_t_kick(&p, 0));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		ready += cqe->res == 1;
		busy += cqe->res == -EBUSY;
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_EQ(4, ready);
	EXPECT_EQ(0, busy);
	io_uring_queue_exit(&ring);
	pto_t_close(&p);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median_round_trip(struct __test_metadata *_metadata,
				  struct pto_t *p, int n)
{
	uint64_t *t = calloc(n, sizeof(*t)), m, t0;
	int i;

	for (i = 0; i < n; i++) {
		t0 = pto_t_now_ns();
		EXPECT_EQ(0, pto_t_run(p, 0, 1, NULL, 0));
		t[i] = pto_t_now_ns() - t0;
	}
	qsort(t, n, sizeof(*t), cmp_u64);
	m = t[n / 2];
	free(t);
	return m;
}

/*
 * A completion looks only at the WAITs it satisfies: 20000 parked WAITs
 * that nothing satisfies leave a NOP round trip as fast as none (the old
 * list walk made it 36 times slower).
 */
TEST_F_TIMEOUT(slow, uring_wake_cost_independent_of_parked, 600)
{
	struct io_uring_params par = { .flags = IORING_SETUP_CQSIZE,
				       .cq_entries = 32768 };
	char old_n[64], old_ms[64];
	struct io_uring ring;
	uint64_t quiet, loaded;
	struct pto_t p;
	int i, parked = 0, batch, have_n, have_ms;

	NEED_ROOT();
	/* a driver without these limits has no cap to raise */
	have_n = !pto_t_param_set("max_uring_waits", "20000", old_n);
	have_ms = !pto_t_param_set("max_wait_ms", "120000", old_ms);
	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP));
	quiet = median_round_trip(_metadata, &p, 200);
	ASSERT_EQ(0, io_uring_queue_init_params(4096, &ring, &par));
	while (parked < 20000) {
		batch = 20000 - parked > 4096 ? 4096 : 20000 - parked;
		for (i = 0; i < batch; i++)
			submit_wait(&ring, p.fd, 1ull << 40, 60000, parked + i);
		ASSERT_EQ(batch, io_uring_submit(&ring));
		parked += batch;
	}
	loaded = median_round_trip(_metadata, &p, 200);
	TH_LOG("NOP round trip: %llu ns alone, %llu ns with 20000 parked",
	       (unsigned long long)quiet, (unsigned long long)loaded);
	EXPECT_GT(4 * quiet, loaded);
	if (have_n)
		pto_t_param_restore("max_uring_waits", old_n);
	if (have_ms)
		pto_t_param_restore("max_wait_ms", old_ms);
	/* closing the context completes them all */
	pto_t_close(&p);
	io_uring_queue_exit(&ring);
}

/* ---- memory: accounted, and limited per user -------------------------------------- */

#define CG "/sys/fs/cgroup"
#define CG_TEST CG "/pto_i14"

static int cgroup2_ready(void)
{
	char buf[256];

	if (pto_t_sysfs_read(CG "/cgroup.controllers", buf, sizeof(buf)) &&
	    mount("none", CG, "cgroup2", 0, NULL))
		return 0;
	if (pto_t_sysfs_read(CG "/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		return 0;
	pto_t_sysfs_write(CG "/cgroup.subtree_control", "+memory");
	mkdir(CG_TEST, 0755);
	return !pto_t_sysfs_write(CG_TEST "/memory.max", "33554432");
}

/* The bytes a SETUP charged: all four regions. */
static uint64_t charged(const struct pto_t *p)
{
	return p->s.window.size + p->s.heap.size + p->s.regs.size +
	       p->s.cring.size;
}

/*
 * How far a change of memory.current may fall short of a charge: each
 * CPU keeps a stock of up to MEMCG_CHARGE_BATCH (64) pages counted in
 * memory.current but not used, and a page's worth of bytes for slab
 * objects.  A charge takes from the stock first, and a stock given back
 * lowers memory.current: when another cgroup charges on that CPU, or
 * when the drain of every CPU's stock that the refused SETUP below set
 * off (the cgroup hit memory.max) runs, later, from a workqueue.  In the
 * VM (2 CPUs) that is 520 KiB of the 8 MiB checked.
 */
static long memcg_stock_slack(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	return (cpus > 0 ? cpus : 1) * (64 + 1) * sysconf(_SC_PAGESIZE);
}

/*
 * Context memory is charged to the opener's memory cgroup: a SETUP
 * beyond the cgroup's memory.max fails with ENOMEM instead of pinning
 * memory the cgroup does not have, and one within it shows in
 * memory.current.
 */
TEST_F_TIMEOUT(slow, setup_memory_charged_to_memcg, 600)
{
	int status;
	pid_t pid;

	NEED_ROOT();
	if (!cgroup2_ready())
		SKIP(return, "no cgroup2 memory controller");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char me[32];
		struct pto_t p, q;
		long before, after;
		int ret;

		snprintf(me, sizeof(me), "%d", getpid());
		if (pto_t_sysfs_write(CG_TEST "/cgroup.procs", me))
			_exit(10);
		ret = pto_t_open(&p, 64, 64 << 20, 64);
		if (ret != -ENOMEM)
			_exit(11);
		before = pto_t_sysfs_long(CG_TEST "/memory.current");
		if (pto_t_open(&q, 64, 8 << 20, 64))
			_exit(12);
		after = pto_t_sysfs_long(CG_TEST "/memory.current");
		if (after - before < (long)charged(&q) - memcg_stock_slack()) {
			TH_LOG("memory.current grew %ld of %llu bytes",
			       after - before,
			       (unsigned long long)charged(&q));
			_exit(13);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x (11: 64 MiB SETUP not refused, 13: not charged)",
		       status);
	rmdir(CG_TEST);
}

/* What a fresh context's GET_INFO says the caller may still set up. */
static uint64_t mem_avail_now(void)
{
	struct pto_info info = { 0 };
	int fd = open(pto_t_dev(), O_RDWR);
	uint64_t avail = 0;

	if (fd >= 0 && !ioctl(fd, PTO_IOCTL_GET_INFO, &info))
		avail = info.mem_avail;
	if (fd >= 0)
		close(fd);
	return avail;
}

/*
 * Users without CAP_SYS_RESOURCE are held to max_user_contexts and
 * max_user_memory; users outside the node's group cannot open it.
 */
TEST_F_TIMEOUT(slow, per_user_limits, 600)
{
	char oldc[64], oldm[64];
	struct stat st;
	int status, fd;
	pid_t pid;

	NEED_ROOT();
	ASSERT_EQ(0, stat(pto_t_dev(), &st));
	ASSERT_EQ(0, chown(pto_t_dev(), 0, 1000));
	ASSERT_EQ(0, pto_t_param_set("max_user_contexts", "4", oldc));
	ASSERT_EQ(0, pto_t_param_set("max_user_memory", "4194304", oldm));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		gid_t g = 1000;
		struct pto_t p;
		int fds[5], i, bad = 0;

		if (setgroups(1, &g) || setgid(1000) || setuid(1000))
			_exit(20);
		for (i = 0; i < 5; i++)
			fds[i] = open(pto_t_dev(), O_RDWR);
		for (i = 0; i < 4; i++)
			bad |= fds[i] < 0;
		if (fds[4] >= 0 || errno != EMFILE)
			bad |= 2;
		for (i = 0; i < 4; i++)
			close(fds[i]);
		/* 8 MiB is beyond the user's 4 MiB, 1 MiB is not */
		if (pto_t_open(&p, 64, 8 << 20, 64) != -ENOMEM)
			bad |= 4;
		pto_t_close(&p);
		if (pto_t_open(&p, 64, 1 << 20, 64))
			bad |= 8;
		/* GET_INFO tells what is left: 4 MiB less the first one's */
		if (mem_avail_now() != (4 << 20) - charged(&p))
			bad |= 32;
		{
			struct pto_t q;

			/* the first one's 1 MiB and more counts */
			if (pto_t_open(&q, 64, 3 << 20, 64) != -ENOMEM)
				bad |= 16;
			pto_t_close(&q);
		}
		pto_t_close(&p);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
	/* a user not in the group */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(20);
		fd = open(pto_t_dev(), O_RDWR);
		_exit(fd < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
	/* root is exempt from the per-user limits */
	{
		int fds[6], i, opened = 0;

		for (i = 0; i < 6; i++) {
			fds[i] = open(pto_t_dev(), O_RDWR);
			opened += fds[i] >= 0;
		}
		EXPECT_EQ(6, opened);
		for (i = 0; i < 6; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	pto_t_param_restore("max_user_contexts", oldc);
	pto_t_param_restore("max_user_memory", oldm);
	chown(pto_t_dev(), st.st_uid, st.st_gid);
}

/* ---- the freezer --------------------------------------------------------------------- */

struct waiter {
	struct pto_t *p;
	int err;
	uint64_t ns;
	pid_t tid;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	struct pto_wait k = { .timeout_ns = 4 * SEC };
	uint64_t t0 = pto_t_now_ns();

	w->tid = syscall(SYS_gettid);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	w->err = ioctl(w->p->fd, PTO_IOCTL_WAIT, &k) ? errno : 0;
	w->ns = pto_t_now_ns() - t0;
	return NULL;
}

/* The thread is asleep (state S) in the kernel. */
static int thread_sleeping(pid_t tid)
{
	char path[64], buf[256], *s;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (pto_t_sysfs_read(path, buf, sizeof(buf)))
		return 0;
	s = strrchr(buf, ')');
	return s && s[2] == 'S';
}

/*
 * Suspend's freezer stops every task: a thread in WAIT freezes and
 * resumes its WAIT (no EINTR), a spinning task and a parked io_uring WAIT
 * complete normally afterwards.
 */
TEST_F_TIMEOUT(slow, freezer_keeps_waits, 600)
{
	uint64_t spin[1] = { 1500 * MSEC }, end;
	struct waiter w = { 0 };
	struct io_uring_cqe *cqe;
	struct pto_completion c = { 0 };
	struct io_uring ring;
	struct pto_t p, q;
	char state[128];
	pthread_t th;
	int ret;

	NEED_ROOT();
	if (pto_t_sysfs_read("/sys/power/state", state, sizeof(state)) ||
	    !strstr(state, "freeze") ||
	    pto_t_sysfs_write("/sys/power/pm_test", "freezer"))
		SKIP(return, "no freeze state or pm_test");
	pto_t_sysfs_write("/sys/module/suspend/parameters/pm_test_delay", "1");
	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_open(&q, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&q, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_SPIN_NS));
	pto_t_queue(&q, 0, 1, spin, 1);
	ASSERT_EQ(0, pto_t_kick(&q, 0));
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	submit_wait(&ring, p.fd, p.head, 3000, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	w.p = &p;
	ASSERT_EQ(0, pthread_create(&th, NULL, wait_thread, &w));
	end = pto_t_now_ns() + 5 * SEC;
	while ((!__atomic_load_n(&w.tid, __ATOMIC_SEQ_CST) ||
		!thread_sleeping(w.tid)) && pto_t_now_ns() < end)
		sched_yield();
	ret = pto_t_sysfs_write("/sys/power/state", "freeze");
	pto_t_sysfs_write("/sys/power/pm_test", "none");
	EXPECT_EQ(0, ret) TH_LOG("freeze: %s", strerror(-ret));
	pthread_join(th, NULL);
	EXPECT_EQ(0, w.err) TH_LOG("the WAIT was interrupted by the freezer");
	EXPECT_LE(3900 * MSEC, w.ns);
	ASSERT_EQ(0, pto_t_complete(&q, &c, 20 * SEC));
	EXPECT_EQ(0, c.status);
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	pto_t_close(&q);
	pto_t_close(&p);
}

TEST_HARNESS_MAIN
