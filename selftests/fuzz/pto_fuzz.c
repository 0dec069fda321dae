// SPDX-License-Identifier: GPL-2.0
/*
 * pto_fuzz: random operation sequences against /dev/ptoN, run for a
 * bounded time.  Deterministic: the operations and their arguments come
 * from a seeded generator, so "pto_fuzz -s SEED -n N" replays a run's
 * first N operations (what the kernel does with them concurrently, and
 * the scribbler thread, vary).
 *
 *   pto_fuzz [-s SEED] [-t SECONDS] [-n OPS] [-d DEV] [-v]
 *
 * Operations: open (any mode), close, SETUP (valid and mutated), BIND_OP,
 * mmap/munmap/madvise/mprotect of regions, task descriptors and queue
 * entries written and KICKed (ioctl and io_uring), random ioctl numbers,
 * sizes and payloads, WAIT (ioctl, io_uring with random payloads and
 * cmd_op, poll), fork children that use inherited contexts and exit, get
 * SIGKILLed or execve, device add/del and open of those devices, and
 * rmmod attempts (reloading the module from $PTO_KO).  A thread keeps
 * rewriting the shared windows, registers and completion headers while
 * the device runs.
 *
 * Fails on: a kernel taint appearing (WARN, KASAN, lockdep and friends
 * taint the kernel), an errno outside what the uapi documents for the
 * call, a completion status outside the documented ones, or the process
 * dying.  Prints TAP and, on failure, the seed, the operation count and
 * the last operations: a reproducer.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pto/pto_uapi.h>

#define NCTX		6
#define NMAP		16
#define LOG_OPS		48
#define MMAP_SHIFT	36

struct ctx {
	int fd;
	int dev;		/* 0, or the test device 8 + n */
	int setup;
	struct pto_setup s;
	uint8_t *region[4];	/* whole regions, mapped read-write */
	uint64_t seq[PTO_MAX_RINGS];
	uint64_t head;
};

struct map {
	void *addr;
	size_t len;
};

static struct ctx ctxs[NCTX];
static struct map maps[NMAP];
static struct io_uring ring;
static int ring_ok;
static uint64_t rng, seed, iter;
static int verbose;
static const char *dev_path = "/dev/pto0";
static char log_ring[LOG_OPS][160];
static unsigned long tainted0;
static pid_t children[8];
/* held while region pointers change, and by the scribbler while it writes */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the generator and the log ------------------------------------------- */

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void note(const char *fmt, ...)
{
	char *l = log_ring[iter % LOG_OPS];
	va_list ap;
	int n;

	n = snprintf(l, sizeof(log_ring[0]), "%8llu ", (unsigned long long)iter);
	va_start(ap, fmt);
	vsnprintf(l + n, sizeof(log_ring[0]) - n, fmt, ap);
	va_end(ap);
	if (verbose)
		fprintf(stderr, "%s\n", l);
}

static unsigned long read_tainted(void)
{
	char buf[32] = "0";
	int fd = open("/proc/sys/kernel/tainted", O_RDONLY);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = '0';
		close(fd);
	}
	return strtoul(buf, NULL, 10);
}

static void fail(const char *fmt, ...)
{
	unsigned long i;
	va_list ap;

	/* parked children hold contexts, and so the module */
	for (i = 0; i < 8; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);

	printf("# pto_fuzz: FAILED at operation %llu: ", (unsigned long long)iter);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n# reproduce: pto_fuzz -s %llu -n %llu -v\n# last operations:\n",
	       (unsigned long long)seed, (unsigned long long)iter + 1);
	for (i = iter + 1 > LOG_OPS ? iter + 1 - LOG_OPS : 0; i <= iter; i++)
		printf("#   %s\n", log_ring[i % LOG_OPS]);
	printf("not ok 1 - fuzz seed %llu\n", (unsigned long long)seed);
	fflush(stdout);
	_exit(1);
}

/* errno must be one the call documents */
static void expect(int ret, const char *what, const int *allowed)
{
	int e = errno, i;

	if (ret >= 0)
		return;
	for (i = 0; allowed[i]; i++)
		if (allowed[i] == e)
			return;
	fail("%s: unexpected errno %d (%s)", what, e, strerror(e));
}

static const int ioctl_errs[] = { EINVAL, ENOTTY, EFAULT, EBADF, EBUSY,
				  ENOMEM, ENODEV, ENXIO, EIO, E2BIG, EINTR,
				  EMFILE, 0 };
static const int mmap_errs[] = { EINVAL, EPERM, ENODEV, EACCES, ENOMEM,
				 EBADF, 0 };

/* ---- contexts -------------------------------------------------------------- */

static void unmap_ctx(struct ctx *c)
{
	size_t sizes[4] = { c->s.window.size, c->s.heap.size, c->s.regs.size,
			    c->s.cring.size };
	int r;

	pthread_mutex_lock(&map_lock);
	for (r = 0; r < 4; r++) {
		if (c->region[r])
			munmap(c->region[r], sizes[r]);
		c->region[r] = NULL;
	}
	pthread_mutex_unlock(&map_lock);
}

static void close_ctx(struct ctx *c)
{
	unmap_ctx(c);
	if (c->fd >= 0)
		close(c->fd);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static const char *ctx_dev(struct ctx *c)
{
	static char buf[32];

	if (!c->dev)
		return dev_path;
	snprintf(buf, sizeof(buf), "/dev/pto%d", c->dev);
	return buf;
}

static void op_open(struct ctx *c)
{
	static const int modes[] = { O_RDWR, O_RDWR, O_RDWR, O_RDONLY, O_WRONLY };
	static const int errs[] = { ENOENT, ENODEV, ENXIO, EMFILE, ENOMEM,
				    EACCES, 0 };
	int mode = modes[below(5)];

	close_ctx(c);
	c->dev = below(6) ? 0 : 8 + below(4);
	c->fd = open(ctx_dev(c), mode | O_CLOEXEC);
	note("open %s mode %d -> %d", ctx_dev(c), mode, c->fd);
	expect(c->fd, "open", errs);
}

static void map_regions(struct ctx *c)
{
	const struct pto_region *rg[4] = { &c->s.window, &c->s.heap,
					    &c->s.regs, &c->s.cring };
	int r;

	pthread_mutex_lock(&map_lock);
	for (r = 0; r < 4; r++) {
		void *p = mmap(NULL, rg[r]->size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, c->fd, rg[r]->offset);

		c->region[r] = p == MAP_FAILED ? NULL : p;
	}
	pthread_mutex_unlock(&map_lock);
}

static void op_setup(struct ctx *c)
{
	struct pto_setup s;
	uint32_t r, nr = 1 + below(PTO_MAX_RINGS);
	int ret;

	memset(&s, 0, sizeof(s));
	s.nrings = nr;
	for (r = 0; r < nr; r++) {
		s.ring[r].task_window = 1u << below(9);
		s.ring[r].dep_pool_size = 1 + below(512);
		s.ring[r].heap_size = 64 * (1 + below(1024));
		s.heap_size += (s.ring[r].heap_size + 4095) & ~4095ull;
	}
	s.heap_size += below(4) * 65536;
	s.order_ring_size = 1u << below(10);
	s.release_ring_size = 1u << below(10);
	s.cring_size = 1u << below(9);
	s.features = below(4);
	/* now and then one random byte anywhere */
	if (!below(4))
		((uint8_t *)&s)[below(sizeof(s))] = rnd();
	ret = ioctl(c->fd, PTO_IOCTL_SETUP, &s);
	note("SETUP fd %d rings %u heap %llu -> %d errno %d", c->fd, nr,
	     (unsigned long long)s.heap_size, ret, ret ? errno : 0);
	expect(ret, "SETUP", ioctl_errs);
	if (ret)
		return;
	if (c->setup)
		fail("SETUP succeeded twice on one context");
	pthread_mutex_lock(&map_lock);
	c->setup = 1;
	c->s = s;
	pthread_mutex_unlock(&map_lock);
	map_regions(c);
}

static void op_bind(struct ctx *c)
{
	struct pto_bind_op b = {
		.kernel_id = below(8) ? below(16) : rnd(),
		.worker_type = below(8) ? below(4) : rnd(),
		.op = below(8) ? below(PTO_OP_COUNT) : rnd(),
		.flags = below(16) ? 0 : rnd(),
	};
	int ret = ioctl(c->fd, PTO_IOCTL_BIND_OP, &b);

	note("BIND fd %d kid %u type %u op %u -> %d", c->fd, b.kernel_id,
	     b.worker_type, b.op, ret);
	expect(ret, "BIND_OP", ioctl_errs);
}

/* An argument: mostly a place in the heap, sometimes anything. */
static uint64_t heap_arg(struct ctx *c)
{
	uint64_t h = c->s.heap_size;

	switch (below(6)) {
	case 0:
		return rnd();
	case 1:
		return h - below(64);
	default:
		return below(h) & ~3ull;
	}
}

static void op_task(struct ctx *c)
{
	struct pto_core_regs *regs;
	struct pto_task_desc *d;
	uint32_t r, core, bell, i, n;
	uint64_t h;

	if (!c->region[0] || !c->region[2] || !c->s.num_cores)
		return;
	core = below(c->s.num_cores);
	regs = (void *)(c->region[2] + (size_t)core * c->s.regs_stride);
	n = 1 + below(PTO_CORE_QUEUE_SLOTS);
	for (i = 0; i < n; i++) {
		r = below(c->s.nrings + (below(8) ? 0 : 2));
		h = PTO_TASK_HANDLE(r, c->seq[r % PTO_MAX_RINGS]++);
		if (r < c->s.nrings) {
			d = (void *)(c->region[0] + c->s.ring[r].desc_offset);
			d = &d[PTO_TASK_SEQ(h) & (c->s.ring[r].task_window - 1)];
			d->kernel_id = below(8) ? below(16) : rnd();
			d->nargs = below(8) ? below(9) : rnd();
			d->args[0] = heap_arg(c);
			d->args[1] = heap_arg(c);
			d->args[2] = heap_arg(c);
			/* dimensions and sizes: small, mostly */
			d->args[3] = below(4) ? below(64) : heap_arg(c);
			d->args[4] = below(64);
			d->args[5] = below(64);
			d->args[6] = below(64);
			d->args[7] = below(64);
			/* SPIN_NS bound to a kernel: at most 2 ms */
			if (d->kernel_id % 4 == 3)
				d->args[0] = below(2000000);
			__atomic_store_n(&d->task_id, below(16) ? h : rnd(),
					 __ATOMIC_RELEASE);
		}
		bell = regs->doorbell;
		regs->queue[bell % PTO_CORE_QUEUE_SLOTS] = below(16) ? h + 1 : rnd();
		__atomic_store_n(&regs->doorbell, bell + (below(16) ? 1 : rnd() % 9),
				 __ATOMIC_RELEASE);
	}
	note("tasks fd %d core %u n %u", c->fd, core, n);
}

static void op_kick(struct ctx *c)
{
	struct pto_kick k = { .core = below(4) ? below(8) : PTO_KICK_ALL };
	int ret;

	if (!below(16))
		k.flags = rnd();
	ret = ioctl(c->fd, PTO_IOCTL_KICK, &k);
	note("KICK fd %d core %u -> %d", c->fd, k.core, ret);
	expect(ret, "KICK", ioctl_errs);
}

static void check_completion(const struct pto_completion *e)
{
	switch (e->status) {
	case 0: case -EINVAL: case -EFAULT: case -E2BIG: case -ECANCELED:
	case -ETIMEDOUT:
		return;
	}
	fail("completion of task %llx: status %d", (unsigned long long)e->task_id,
	     e->status);
}

static void op_wait(struct ctx *c)
{
	struct pto_wait w = {
		.timeout_ns = below(2000000),
		.cring_head = below(8) ? c->head : rnd(),
	};
	struct pto_cring_header *h;
	struct pto_completion *e;
	int ret;

	ret = ioctl(c->fd, PTO_IOCTL_WAIT, &w);
	note("WAIT fd %d -> %d tail %llu", c->fd, ret,
	     (unsigned long long)w.cring_tail);
	expect(ret, "WAIT", ioctl_errs);
	if (!c->region[3])
		return;
	/* reap what is published; the header is the host's to move */
	h = (void *)c->region[3];
	e = (void *)(c->region[3] + c->s.cring_entries_offset);
	while (c->s.cring_size) {
		struct pto_completion *x = &e[c->head & (c->s.cring_size - 1)];

		if (__atomic_load_n(&x->seq, __ATOMIC_ACQUIRE) !=
		    (uint32_t)(c->head + 1))
			break;
		check_completion(x);
		c->head++;
	}
	h->head = c->head;
}

static void op_uring(struct ctx *c)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint8_t payload[16];
	uint32_t i;

	if (!ring_ok)
		return;
	sqe = io_uring_get_sqe(&ring);
	if (!sqe)
		return;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = below(4) ? 0 : rnd();
	if (below(2)) {
		struct pto_uring_wait w = { .cring_head = c->head,
					    .timeout_ms = below(5) };

		if (below(4))
			memcpy(payload, &w, sizeof(w));
	}
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, c->fd, NULL, 0, 0);
	sqe->cmd_op = below(8) ? 1 + below(2) : rnd();
	memcpy(sqe->cmd, payload, sizeof(payload));
	io_uring_submit(&ring);
	note("uring fd %d cmd_op %u", c->fd, sqe->cmd_op);
	while (io_uring_peek_cqe(&ring, &cqe) == 0) {
		int res = cqe->res;

		io_uring_cqe_seen(&ring, cqe);
		if (res >= 0)
			continue;
		switch (-res) {
		case EINVAL: case EIO: case ENODEV: case ECANCELED: case EBUSY:
		case EBADF: case EOPNOTSUPP: case ENOMEM: case ENOTTY:
			continue;
		}
		fail("io_uring command: res %d", res);
	}
}

static void op_raw_ioctl(struct ctx *c)
{
	uint8_t buf[512];
	unsigned int cmd;
	uint32_t i;
	int ret;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = below(4) ? 0 : rnd();
	cmd = _IOC(below(4), below(8) ? PTO_IOCTL_BASE : rnd() & 0xff,
		   below(8) ? below(6) : rnd() & 0xff, below(4) ? below(400) :
		   rnd() & _IOC_SIZEMASK);
	ret = ioctl(c->fd, cmd, below(16) ? (void *)buf : NULL);
	note("ioctl fd %d cmd %#x -> %d errno %d", c->fd, cmd, ret,
	     ret ? errno : 0);
	if (ret < 0 && _IOC_TYPE(cmd) == PTO_IOCTL_BASE)
		expect(ret, "raw ioctl", ioctl_errs);
}

static void op_mmap(struct ctx *c)
{
	struct map *m = &maps[below(NMAP)];
	uint64_t off = (below(6) << MMAP_SHIFT) + (below(8) ? 0 : below(8) << 12);
	size_t len = 4096 * (1 + below(64));
	int prot = below(8) ? PROT_READ | PROT_WRITE :
		   PROT_READ | (below(2) ? PROT_EXEC : 0);
	void *p;

	if (m->addr)
		munmap(m->addr, m->len);
	m->addr = NULL;
	p = mmap(NULL, len, prot, below(8) ? MAP_SHARED : MAP_PRIVATE, c->fd,
		 off);
	note("mmap fd %d off %#llx len %zu -> %p", c->fd,
	     (unsigned long long)off, len, p);
	if (p == MAP_FAILED) {
		expect(-1, "mmap", mmap_errs);
		return;
	}
	m->addr = p;
	m->len = len;
	/* touch it, drop it, touch it again */
	if (prot & PROT_WRITE)
		((volatile uint8_t *)p)[below(len)] = rnd();
	if (!below(4))
		madvise(p, len, MADV_DONTNEED);
	(void)((volatile uint8_t *)p)[below(len)];
	if (!below(8) && mprotect(p, len, PROT_READ | PROT_EXEC) == 0)
		fail("an executable mapping of device memory");
}

/* ---- children, devices, the module ------------------------------------------------ */

/*
 * A child inherits the contexts' fds but not their mappings (the driver
 * does not let fork copy them): it kicks, waits, sets up and maps anew.
 */
static void child_run(uint64_t s, int how)
{
	struct ctx *c;
	int i, r;

	rng = s | 1;
	for (i = 0; i < NCTX; i++)
		for (r = 0; r < 4; r++)
			ctxs[i].region[r] = NULL;
	for (i = 0; i < 20; i++) {
		c = &ctxs[below(NCTX)];
		switch (below(5)) {
		case 0: op_task(c); op_kick(c); break;
		case 1: op_wait(c); break;
		case 2: op_uring(c); break;
		case 3: op_raw_ioctl(c); break;
		default: op_setup(c); break;
		}
	}
	if (how == 1)
		execl("/bin/true", "true", (char *)NULL);
	if (how == 2)
		for (;;)
			pause();
	_exit(0);
}

static void reap_children(int kill_them)
{
	int i, status;

	for (i = 0; i < 8; i++) {
		if (!children[i])
			continue;
		if (kill_them)
			kill(children[i], SIGKILL);
		if (waitpid(children[i], &status, kill_them ? 0 : WNOHANG) ==
		    children[i]) {
			if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
				fail("child died of signal %d", WTERMSIG(status));
			if (WIFEXITED(status) && WEXITSTATUS(status))
				fail("child exited %d", WEXITSTATUS(status));
			children[i] = 0;
		}
	}
}

static void op_fork(void)
{
	int slot = below(8), how = below(3);
	uint64_t s = rnd();
	pid_t pid;

	if (children[slot]) {
		kill(children[slot], SIGKILL);
		reap_children(0);
		if (children[slot])
			return;
	}
	pid = fork();
	if (pid == 0)
		child_run(s, how);
	note("fork %s -> %d", how == 1 ? "execve" : how == 2 ? "park" : "exit",
	     pid);
	if (pid > 0)
		children[slot] = pid;
}

static void op_device(void)
{
	char id[32];
	int n = 8 + below(4), fd;
	int ret;

	fd = open(below(2) ? "/sys/class/pto/new_device" :
		  "/sys/class/pto/del_device", O_WRONLY);
	if (fd < 0)
		return;
	snprintf(id, sizeof(id), below(2) ? "%d" : "%d 1 1 1 1", n);
	ret = write(fd, id, strlen(id));
	note("device %s -> %d", id, ret);
	close(fd);
}

static void op_rmmod(void)
{
	const char *ko = getenv("PTO_KO");
	int ret, fd;

	if (!ko)
		return;
	ret = syscall(SYS_delete_module, "pto", O_NONBLOCK);
	note("rmmod -> %d errno %d", ret, ret ? errno : 0);
	if (ret)
		return;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0))
		fail("reloading %s: %s", ko, strerror(errno));
	close(fd);
}

/* ---- the scribbler ------------------------------------------------------------------- */

static volatile int stop;

/* Rewrites windows, registers and ring headers while the cores run. */
static void *scribbler(void *arg)
{
	uint64_t x = seed * 7 + 1, off, size;
	struct ctx *c;
	int r, i;

	while (!stop) {
		pthread_mutex_lock(&map_lock);
		for (i = 0; i < 16; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			c = &ctxs[x % NCTX];
			r = (x >> 8) % 4;
			if (!c->region[r] || r == 1)
				continue;
			/*
			 * The completion entries are the kernel's to write:
			 * their statuses are checked.  Their header is not.
			 */
			size = r == 0 ? c->s.window.size : r == 2 ?
			       c->s.regs.size : c->s.cring_entries_offset;
			/* mostly the header lines, the registers, ring heads */
			off = (x >> 16) % (r == 0 && (x & 1) ? 4096 : size);
			off &= ~7ull;
			if (off + 8 <= size)
				__atomic_store_n((uint64_t *)(c->region[r] + off),
						 x & 3 ? x >> 3 : 0,
						 __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&map_lock);
		sched_yield();
	}
	return NULL;
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&map_lock);
}

static void atfork_release(void)
{
	pthread_mutex_unlock(&map_lock);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-s SEED] [-t SECONDS] [-n OPS] [-d DEV] [-v]\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	uint64_t seconds = 30, max_ops = 0, end;
	struct ctx *c;
	pthread_t th;
	int opt, i;

	seed = 1;
	while ((opt = getopt(argc, argv, "s:t:n:d:v")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 't': seconds = strtoull(optarg, NULL, 0); break;
		case 'n': max_ops = strtoull(optarg, NULL, 0); break;
		case 'd': dev_path = optarg; break;
		case 'v': verbose = 1; break;
		default: usage(argv[0]);
		}
	}
	rng = seed * 0x9E3779B97F4A7C15ull | 1;
	for (i = 0; i < NCTX; i++)
		ctxs[i].fd = -1;
	signal(SIGPIPE, SIG_IGN);
	ring_ok = !io_uring_queue_init(64, &ring, 0);
	tainted0 = read_tainted();
	printf("# pto_fuzz: seed %llu, %llu s, kernel taint %lu at start\n",
	       (unsigned long long)seed, (unsigned long long)seconds, tainted0);
	pthread_atfork(atfork_prepare, atfork_release, atfork_release);
	pthread_create(&th, NULL, scribbler, NULL);
	end = (uint64_t)time(NULL) + seconds;
	for (iter = 0; max_ops ? iter < max_ops : (uint64_t)time(NULL) < end;
	     iter++) {
		c = &ctxs[below(NCTX)];
		switch (below(40)) {
		case 0 ... 2: op_open(c); break;
		case 3: close_ctx(c); note("close"); break;
		case 4 ... 7: op_setup(c); break;
		case 8 ... 9: op_bind(c); break;
		case 10 ... 17: op_task(c); op_kick(c); break;
		case 18 ... 21: op_wait(c); break;
		case 22 ... 25: op_uring(c); break;
		case 26 ... 28: op_raw_ioctl(c); break;
		case 29 ... 31: op_mmap(c); break;
		case 32 ... 33: op_fork(); break;
		case 34: op_device(); break;
		case 35: if (!below(20)) op_rmmod(); break;
		case 36: {
			struct pollfd pfd = { .fd = c->fd, .events = POLLIN };

			note("poll fd %d -> %d", c->fd, poll(&pfd, 1, below(2)));
			break;
		}
		default: reap_children(0); break;
		}
		if (!(iter % 64) && read_tainted() != tainted0)
			fail("the kernel is tainted now (%lu, was %lu): see dmesg",
			     read_tainted(), tainted0);
	}
	stop = 1;
	pthread_join(th, NULL);
	reap_children(1);
	for (i = 0; i < NCTX; i++)
		close_ctx(&ctxs[i]);
	for (i = 0; i < NMAP; i++)
		if (maps[i].addr)
			munmap(maps[i].addr, maps[i].len);
	if (ring_ok)
		io_uring_queue_exit(&ring);
	if (read_tainted() != tainted0)
		fail("the kernel is tainted now (%lu, was %lu)", read_tainted(),
		     tainted0);
	printf("# pto_fuzz: %llu operations\n", (unsigned long long)iter);
	printf("ok 1 - fuzz seed %llu: %llu operations, no taint, no unexpected error\n",
	       (unsigned long long)seed, (unsigned long long)iter);
	printf("1..1\n");
	return 0;
}
