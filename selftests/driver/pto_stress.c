// SPDX-License-Identifier: GPL-2.0
/*
 * Stress and limits of pto.ko, in the VM as root: many processes and
 * threads per device; open/SETUP/mmap/close racing on shared fds; device
 * add/del racing with open; 300 contexts spinning (kworkers stay
 * bounded); preemption-off time while a large GEMM runs next to a
 * SCHED_FIFO thread; module unload racing with new_device (last: it
 * reloads the module from $PTO_KO).  PTO_STRESS_SECONDS scales the
 * timed tests (default 5).
 */
#include <dirent.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "pto_test_util.h"

#define SEC	1000000000ull
#define MSEC	1000000ull
#define HEAP	(256u << 10)

/* The debug kernel under TCG is slow: every test here may take minutes. */
FIXTURE(stress) {
	int unused;
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

#define STRESS(name)	TEST_F_TIMEOUT(stress, name, 900)

/* PTO_STRESS_SKIP="name ..." skips those tests (say, on a known-bad driver). */
#define SKIP_IF_ASKED() do {						\
	const char *__s = getenv("PTO_STRESS_SKIP");			\
	if (__s && strstr(__s, _metadata->name))			\
		SKIP(return, "PTO_STRESS_SKIP");			\
} while (0)

static uint64_t stress_ns(void)
{
	const char *s = getenv("PTO_STRESS_SECONDS");

	return (s ? strtoull(s, NULL, 0) : 5) * SEC;
}

static void xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
}

/* ---- many processes, many threads ----------------------------------------------- */

struct worker {
	struct pto_t *p;
	uint32_t core;
	uint64_t done;
	int err;
	pthread_mutex_t *lock;
};

/* Threads share a context, each its own core: tasks, completions in order. */
static void *core_thread(void *arg)
{
	struct worker *w = arg;
	uint64_t end = pto_t_now_ns() + stress_ns();
	uint64_t args[3];
	uint32_t type = 0;
	int ret;

	while (type + 1 < PTO_UAPI_NUM_WORKER_TYPES &&
	       w->core >= w->p->first_core[type + 1])
		type++;
	while (pto_t_now_ns() < end && !w->err) {
		/* FILL of 64 bytes in the core's own slice of the heap */
		args[0] = 4096 * (w->core + 1);
		args[1] = w->done;
		args[2] = 64;
		pthread_mutex_lock(w->lock);
		ret = pto_t_run(w->p, w->core, 10 + type, args, 3);
		pthread_mutex_unlock(w->lock);
		if (ret) {
			w->err = ret;
			break;
		}
		if (*(uint32_t *)(w->p->heap + args[0]) != (uint32_t)w->done)
			w->err = -EILSEQ;
		w->done++;
	}
	return NULL;
}

/* One process: a context, a thread per core. */
static int one_process(void)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct worker w[64] = { 0 };
	pthread_t th[64];
	struct pto_t p;
	uint32_t c, t;
	int ret;

	ret = pto_t_open(&p, 64, HEAP, 64);
	if (ret)
		return 10;
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		if (p.info.cores[t] && pto_t_bind(&p, 10 + t, t, PTO_OP_FILL_U32))
			return 11;
	for (c = 0; c < p.s.num_cores && c < 64; c++) {
		w[c] = (struct worker){ .p = &p, .core = c, .lock = &lock };
		pthread_create(&th[c], NULL, core_thread, &w[c]);
	}
	ret = 0;
	for (c = 0; c < p.s.num_cores && c < 64; c++) {
		pthread_join(th[c], NULL);
		if (w[c].err || !w[c].done)
			ret = 12;
	}
	pto_t_close(&p);
	return ret;
}

STRESS(many_processes_and_threads)
{
	const int nproc = 8;
	int i, status, good = 0;
	pid_t pids[8];
	long before = pto_t_sysfs_long("/sys/class/pto/pto0/contexts");

	SKIP_IF_ASKED();

	for (i = 0; i < nproc; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0)
			_exit(one_process());
	}
	for (i = 0; i < nproc; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		good += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	EXPECT_EQ(nproc, good);
	EXPECT_EQ(before, pto_t_sysfs_wait_for("/sys/class/pto/pto0/contexts",
					       before, 5000));
}

/* ---- races on shared fds: open, SETUP, mmap, munmap, KICK, WAIT, close ------------ */

#define NFD	8

struct chaos {
	int fds[NFD];
	volatile int stop;
	uint64_t ops;
};

static void *chaos_thread(void *arg)
{
	struct chaos *ch = arg;
	uint64_t x = (uint64_t)pthread_self() | 1;
	struct pto_setup s;
	struct pto_kick k;
	struct pto_wait w;
	void *m;
	int i, fd;

	while (!ch->stop) {
		xorshift(&x);
		i = x % NFD;
		fd = __atomic_load_n(&ch->fds[i], __ATOMIC_RELAXED);
		switch ((x >> 8) % 7) {
		case 0:	/* reopen */
			fd = open(pto_t_dev(), O_RDWR | O_CLOEXEC);
			if (fd >= 0) {
				fd = __atomic_exchange_n(&ch->fds[i], fd,
							 __ATOMIC_SEQ_CST);
				if (fd >= 0)
					close(fd);
			}
			break;
		case 1:
			pto_t_setup_args(&s, 64, HEAP, 64);
			ioctl(fd, PTO_IOCTL_SETUP, &s);
			break;
		case 2:
			m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				 fd, (off_t)((x >> 16) % 4) << 36);
			if (m != MAP_FAILED) {
				((volatile uint8_t *)m)[x % 4096] = x;
				munmap(m, 4096);
			}
			break;
		case 3:
			k = (struct pto_kick){ .core = (x >> 20) % 8 };
			ioctl(fd, PTO_IOCTL_KICK, &k);
			break;
		case 4:
			w = (struct pto_wait){ .timeout_ns = (x >> 24) % 1000000 };
			ioctl(fd, PTO_IOCTL_WAIT, &w);
			break;
		case 5:
			fd = __atomic_exchange_n(&ch->fds[i], -1, __ATOMIC_SEQ_CST);
			if (fd >= 0)
				close(fd);
			break;
		case 6: {
			struct pto_bind_op b = { .kernel_id = x % 8,
						 .worker_type = (x >> 4) % 4,
						 .op = (x >> 12) % PTO_OP_COUNT };
			ioctl(fd, PTO_IOCTL_BIND_OP, &b);
			break;
		}
		}
		__atomic_add_fetch(&ch->ops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

STRESS(open_setup_mmap_close_races)
{
	struct chaos ch = { .stop = 0 };
	long before = pto_t_sysfs_long("/sys/class/pto/pto0/contexts");
	pthread_t th[6];
	uint64_t end;
	int i;

	SKIP_IF_ASKED();

	for (i = 0; i < NFD; i++)
		ch.fds[i] = -1;
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, chaos_thread, &ch));
	end = pto_t_now_ns() + stress_ns();
	while (pto_t_now_ns() < end)
		poll(NULL, 0, 100);
	ch.stop = 1;
	for (i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NFD; i++)
		if (ch.fds[i] >= 0)
			close(ch.fds[i]);
	TH_LOG("%llu operations", (unsigned long long)ch.ops);
	EXPECT_LT(1000, ch.ops);
	EXPECT_EQ(before, pto_t_sysfs_wait_for("/sys/class/pto/pto0/contexts",
					       before, 5000));
}

/* ---- device add/del against open ------------------------------------------------------- */

struct adddel {
	volatile int stop;
	unsigned long added, opened, setups;
};

static void *opener_thread(void *arg)
{
	struct adddel *a = arg;
	struct pto_info info;
	struct pto_setup s;
	int fd;

	while (!a->stop) {
		fd = open("/dev/pto7", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		__atomic_add_fetch(&a->opened, 1, __ATOMIC_RELAXED);
		memset(&info, 0, sizeof(info));
		ioctl(fd, PTO_IOCTL_GET_INFO, &info);
		pto_t_setup_args(&s, 64, HEAP, 64);
		if (!ioctl(fd, PTO_IOCTL_SETUP, &s))
			__atomic_add_fetch(&a->setups, 1, __ATOMIC_RELAXED);
		close(fd);
	}
	return NULL;
}

static void *adder_thread(void *arg)
{
	struct adddel *a = arg;

	while (!a->stop) {
		if (!pto_t_sysfs_write("/sys/class/pto/new_device", "7 1 1 1 1"))
			__atomic_add_fetch(&a->added, 1, __ATOMIC_RELAXED);
		pto_t_sysfs_write("/sys/class/pto/del_device", "7");
	}
	return NULL;
}

/*
 * new_device and del_device of one id race with opens of its node: an
 * id must never be reused before its teardown ends (the old driver put
 * a second cdev on a dev_t still mapped and crashed in chrdev_open).
 */
STRESS(device_add_del_open_races)
{
	struct adddel a = { .stop = 0 };
	pthread_t th[5];
	uint64_t end;
	int i;

	SKIP_IF_ASKED();

	if (geteuid())
		SKIP(return, "needs root");
	pto_t_sysfs_write("/sys/class/pto/del_device", "7");
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, adder_thread, &a));
	for (; i < 5; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, opener_thread, &a));
	end = pto_t_now_ns() + stress_ns();
	while (pto_t_now_ns() < end)
		poll(NULL, 0, 100);
	a.stop = 1;
	for (i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	pto_t_sysfs_write("/sys/class/pto/del_device", "7");
	TH_LOG("%lu adds, %lu opens, %lu setups", a.added, a.opened, a.setups);
	EXPECT_LT(3, a.added);
	EXPECT_EQ(-1, access("/sys/class/pto/pto7", F_OK));
}

/* ---- kworkers ------------------------------------------------------------------------------ */

static int count_kworkers(void)
{
	char path[300], comm[64];
	struct dirent *de;
	DIR *d = opendir("/proc");
	int n = 0;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (!pto_t_sysfs_read(path, comm, sizeof(comm)) &&
		    !strncmp(comm, "kworker", 7))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * 300 contexts keep every core spinning: cores do not sleep inside work
 * items, so the bound high-priority workqueue needs no more workers (the
 * old driver went from 91 kworkers to 523 in a second).
 */
STRESS(kworkers_bounded)
{
	const int nctx = 300;
	uint64_t spin[1] = { 300 * MSEC };
	struct rlimit rl = { 4096, 4096 };
	struct pto_t *p = calloc(nctx, sizeof(*p));
	int i, before, during, opened = 0;
	uint32_t c, t;

	SKIP_IF_ASKED();

	ASSERT_NE(NULL, p);
	setrlimit(RLIMIT_NOFILE, &rl);
	before = count_kworkers();
	for (i = 0; i < nctx; i++) {
		if (pto_t_open(&p[i], 16, 64 << 10, 64)) {
			pto_t_close(&p[i]);
			break;
		}
		opened++;
		for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
			if (p[i].info.cores[t])
				pto_t_bind(&p[i], t, t, PTO_OP_SPIN_NS);
		for (c = 0; c < p[i].s.num_cores; c++) {
			t = 0;
			while (t + 1 < PTO_UAPI_NUM_WORKER_TYPES &&
			       c >= p[i].first_core[t + 1])
				t++;
			pto_t_queue(&p[i], c, t, spin, 1);
		}
		ASSERT_EQ(0, pto_t_kick(&p[i], PTO_KICK_ALL));
	}
	during = count_kworkers();
	TH_LOG("%d contexts: kworkers %d before, %d while spinning",
	       opened, before, during);
	EXPECT_EQ(nctx, opened);
	EXPECT_GT(before + 48, during);
	for (i = 0; i < opened; i++) {
		struct pto_completion cp;
		uint32_t n;

		for (n = 0; n < p[i].s.num_cores; n++)
			EXPECT_EQ(0, pto_t_complete(&p[i], &cp, 30 * SEC));
		pto_t_close(&p[i]);
	}
	free(p);
}

/* ---- preemption off ------------------------------------------------------------------------ */

struct fifo {
	volatile int stop;
	volatile int running;
	uint64_t worst;
	uint64_t loops;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * A SCHED_FIFO thread on CPU 0 that wants to run every millisecond; it
 * is created with its policy, so it is real-time from its first
 * instruction.  worst: its longest sleep of 1 ms.
 */
static void *fifo_thread(void *arg)
{
	struct timespec ts = { 0, 1000000 };
	struct fifo *f = arg;
	uint64_t t0, late;

	f->running = 1;
	while (!f->stop) {
		t0 = pto_t_now_ns();
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		late = pto_t_now_ns() - t0;
		if (late > f->worst)
			f->worst = late;
		f->loops++;
	}
	return NULL;
}

static int start_fifo(pthread_t *th, struct fifo *f)
{
	struct sched_param sp = { .sched_priority = 50 };
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	ret = pthread_create(th, &attr, fifo_thread, f);
	pthread_attr_destroy(&attr);
	/* it preempts us on CPU 0 as soon as it exists */
	while (!ret && !f->running)
		sched_yield();
	return ret;
}

/*
 * A GEMM of 2^26 multiply-adds (seconds under TCG) runs on CPU 0 next to
 * a SCHED_FIFO thread: the thread is never held off for more than a
 * section, and the deadline stops the op in the middle.  The old driver
 * ran the whole op with preemption off.
 */
STRESS(preempt_off_bounded)
{
	const uint32_t n = 406;	/* 406^3 ~ 2^26 */
	uint64_t args[6], ns;
	struct fifo f = { 0 };
	struct pto_completion c = { 0 };
	char old[64];
	struct pto_t p;
	pthread_t th;
	uint64_t t0, el;
	int have_ns;

	SKIP_IF_ASKED();
	if (geteuid())
		SKIP(return, "needs root");
	pin(0);
	ASSERT_EQ(0, pto_t_param_set("task_timeout_ms", "1500", old));
	/* a driver without the statistic is judged by the FIFO thread alone */
	have_ns = !pto_t_sysfs_write("/sys/class/pto/pto0/max_section_ns", "0");
	ASSERT_EQ(0, pto_t_open(&p, 64, 4 << 20, 64));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_GEMM_F32));
	args[0] = 0;
	args[1] = n * n * 4;
	args[2] = 2 * n * n * 4;
	args[3] = args[4] = args[5] = n;
	ASSERT_EQ(0, start_fifo(&th, &f));
	t0 = pto_t_now_ns();
	pto_t_queue(&p, 0, 1, args, 6);
	ASSERT_EQ(0, pto_t_kick(&p, 0));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 60 * SEC));
	el = pto_t_now_ns() - t0;
	f.stop = 1;
	pthread_join(th, NULL);
	pto_t_param_restore("task_timeout_ms", old);
	ns = have_ns ? pto_t_sysfs_long("/sys/class/pto/pto0/max_section_ns") : 0;
	TH_LOG("GEMM %u^3: status %d after %llu ms; a 1 ms sleep of the FIFO thread took %llu us at worst (%llu sleeps); longest section %llu us",
	       n, c.status, (unsigned long long)(el / MSEC),
	       (unsigned long long)(f.worst / 1000),
	       (unsigned long long)f.loops, (unsigned long long)(ns / 1000));
	EXPECT_LT(100, f.loops);
	EXPECT_TRUE(c.status == 0 || c.status == -ETIMEDOUT);
	/* the deadline is checked between sections, not after the op */
	EXPECT_GT(5 * SEC, el);
	/*
	 * Bounds with room for TCG, which stalls a vCPU for tens of ms now
	 * and then; the old driver held the CPU for the whole op.  Natively a
	 * section takes about PTO_SECTION_TARGET_NS (250 us).
	 */
	EXPECT_GT(500 * MSEC, f.worst);
	EXPECT_GT(500 * MSEC, ns);
	if (c.status == -ETIMEDOUT) {
		EXPECT_GT(el / 2, f.worst);
		EXPECT_GT(el / 2, ns);
	}
	pto_t_close(&p);
}

/* Every op at a large size: no section is long. */
STRESS(section_time_per_op)
{
	static const struct {
		uint32_t op, type;
		uint64_t args[8];
	} ops[] = {
		{ PTO_OP_COPY, 1, { 0, 8 << 20, 8 << 20 } },
		{ PTO_OP_FILL_U32, 1, { 0, 7, 16 << 20 } },
		{ PTO_OP_ADD_F32, 1, { 0, 4 << 20, 8 << 20, 1 << 20 } },
		{ PTO_OP_MUL_F32, 1, { 0, 4 << 20, 8 << 20, 1 << 20 } },
		{ PTO_OP_ADD_U32, 1, { 0, 4 << 20, 8 << 20, 4 << 20 } },
		{ PTO_OP_MATMUL_BT_F32, 0, { 0, 1 << 20, 2 << 20, 128, 128, 128 } },
		{ PTO_OP_SOFTMAX_PREP_F32, 1,
		  { 0, 8 << 20, 9 << 20, 4 << 20, 0x3f800000, 512, 512 } },
		{ PTO_OP_ONLINE_UPDATE_F32, 1,
		  { 0, 8 << 20, 9 << 20, 4 << 20, 10 << 20, 11 << 20, 512, 512 } },
		{ PTO_OP_ROW_DIV_F32, 1, { 0, 4 << 20, 8 << 20, 1024, 1024 } },
	};
	struct pto_completion c = { 0 };
	struct pto_t p;
	unsigned int i;
	char old[64];
	uint64_t ns;

	SKIP_IF_ASKED();

	if (geteuid())
		SKIP(return, "needs root");
	/* slow kernels (KASAN, TCG) must not time the ops out */
	ASSERT_EQ(0, pto_t_param_set("task_timeout_ms", "0", old));
	ASSERT_EQ(0, pto_t_open(&p, 64, 16 << 20, 64));
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		ASSERT_EQ(0, pto_t_sysfs_write("/sys/class/pto/pto0/max_section_ns",
					       "0"));
		ASSERT_EQ(0, pto_t_bind(&p, 1 + i, ops[i].type, ops[i].op));
		pto_t_queue(&p, p.first_core[ops[i].type], 1 + i, ops[i].args, 8);
		ASSERT_EQ(0, pto_t_kick(&p, p.first_core[ops[i].type]));
		ASSERT_EQ(0, pto_t_complete(&p, &c, 60 * SEC));
		ns = pto_t_sysfs_long("/sys/class/pto/pto0/max_section_ns");
		TH_LOG("op %u: status %d, longest section %llu us", ops[i].op,
		       c.status, (unsigned long long)(ns / 1000));
		EXPECT_EQ(0, c.status);
		EXPECT_GT(500 * MSEC, ns);
	}
	pto_t_param_restore("task_timeout_ms", old);
	pto_t_close(&p);
}

/* ---- module unload against new_device --------------------------------------------- */

struct writer {
	volatile int stop;
	unsigned long writes;
};

static void *new_device_thread(void *arg)
{
	struct writer *w = arg;
	uint64_t x = (uint64_t)pthread_self() | 1;
	char id[16];

	while (!w->stop) {
		xorshift(&x);
		snprintf(id, sizeof(id), "%llu", 20 + (unsigned long long)(x % 8));
		if (!pto_t_sysfs_write("/sys/class/pto/new_device", id))
			__atomic_add_fetch(&w->writes, 1, __ATOMIC_RELAXED);
		if (x & 256)
			pto_t_sysfs_write("/sys/class/pto/del_device", id);
	}
	return NULL;
}

static int load_module(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	return ret ? -errno : 0;
}

/*
 * rmmod while new_device is being written: no device may appear after
 * the module removed them all (the old exit path left new_device
 * writable while removing).  Unloads and reloads the module.
 */
STRESS(module_exit_vs_new_device)
{
	const char *ko = getenv("PTO_KO");
	struct writer w = { .stop = 0 };
	pthread_t th[3];
	int round, i, unloaded = 0;
	uint64_t end;

	SKIP_IF_ASKED();

	if (geteuid() || !ko)
		SKIP(return, "needs root and PTO_KO");
	for (round = 0; round < 8; round++) {
		w.stop = 0;
		for (i = 0; i < 3; i++)
			ASSERT_EQ(0, pthread_create(&th[i], NULL,
						    new_device_thread, &w));
		poll(NULL, 0, 50);
		end = pto_t_now_ns() + 10 * SEC;
		while (syscall(SYS_delete_module, "pto", O_NONBLOCK) &&
		       pto_t_now_ns() < end)
			poll(NULL, 0, 5);
		unloaded += access("/sys/module/pto", F_OK) != 0;
		w.stop = 1;
		for (i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		EXPECT_EQ(-1, access("/sys/class/pto", F_OK));
		EXPECT_EQ(-1, access("/sys/devices/virtual/pto", F_OK));
		EXPECT_EQ(-1, access("/dev/pto20", F_OK));
		ASSERT_EQ(0, load_module(ko));
	}
	TH_LOG("%d unloads, %lu devices added", unloaded, w.writes);
	EXPECT_EQ(8, unloaded);
	for (i = 20; i < 28; i++) {
		char id[16];

		snprintf(id, sizeof(id), "%d", i);
		pto_t_sysfs_write("/sys/class/pto/del_device", id);
	}
	EXPECT_EQ(0, access("/dev/pto0", F_OK));
}

TEST_HARNESS_MAIN
