// SPDX-License-Identifier: MIT
/*
 * The dev backend: a context of /dev/ptoN (pto.ko).  The regions are the
 * driver's, mapped shared at the offsets SETUP returns; dispatch writes
 * the doorbell registers and KICKs only cores that sleep.  The scheduler
 * sleeps on two things at once: completions, and an eventfd the
 * orchestrator's notify() writes.  With the device's io_uring commands
 * (PTO_FEATURE_URING_CMD) that is a PTO_URING_CMD_WAIT and a poll on the
 * eventfd in one ring; without them, poll() on both descriptors.
 */
#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <liburing.h>

#include "backend.h"
#include "fd.h"
#include "log.h"
#include "pto_layout.h"

enum { UD_WAIT = 1, UD_POLL = 2 };

/* Features libpto uses when the device offers them. */
#define DEV_FEATURES_WANTED	(PTO_FEATURE_URING_CMD | PTO_FEATURE_POLL | \
				 PTO_FEATURE_VIEWS)

struct dev {
	int fd;
	int efd;
	bool ring_ok;
	bool wait_inflight;	/* a URING_CMD_WAIT is pending */
	bool poll_inflight;	/* a poll on efd is pending */
	bool gone;		/* the device was removed */
	bool failed;		/* the context failed: it runs nothing more */
	struct io_uring ring;
	const char *path;	/* the node, for messages */
	uint32_t max_task_window;	/* per ring, pto.ko's limits */
	uint32_t max_dep_pool;
};

/*
 * Is fd a node of some other driver than pto.ko (its sysfs class says
 * so)?  False when that cannot be told (no sysfs in a container).
 */
static bool other_drivers(int fd)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st))
		return false;
	if (!S_ISCHR(st.st_mode))
		return true;
	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/subsystem",
		 major(st.st_rdev), minor(st.st_rdev));
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	return strcmp(base ? base + 1 : target, "pto") != 0;
}

static int dev_get_info(struct dev *d, const char *path, struct pto_info *info)
{
	memset(info, 0, sizeof(*info));
	if (ioctl(d->fd, PTO_IOCTL_GET_INFO, info)) {
		int err = -errno;

		/* a plain file, or another driver's (it may say -EINVAL) */
		if (err == -ENOTTY || other_drivers(d->fd)) {
			pto_log("%s: not a PTO device (it does not answer "
				"PTO_IOCTL_GET_INFO); a device is a /dev/ptoN "
				"node of pto.ko, or \"sim\"\n", path);
			return -ENODEV;
		}
		pto_log("%s: GET_INFO failed: %s (is it a PTO device?)\n",
			path, strerror(-err));
		return err;
	}
	if (info->abi_version != PTO_ABI_VERSION) {
		pto_log("%s: the driver (pto.ko) speaks device ABI %u, this "
			"libpto %s speaks ABI %u; install a pto.ko and libpto "
			"of the same release (modinfo pto shows the driver's)\n",
			path, info->abi_version, pto_version(), PTO_ABI_VERSION);
		return -EPROTO;
	}
	return 0;
}

/* The device nodes that exist, "/dev/pto0 /dev/pto1", or "none". */
static void list_nodes(char *buf, size_t size)
{
	glob_t g;
	size_t i, len = 0;

	snprintf(buf, size, "none");
	if (glob("/dev/pto[0-9]*", 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					i ? " " : "", g.gl_pathv[i]);
	globfree(&g);
}

/* Say why the device node cannot be opened, and what to do about it. */
static void open_failed(const char *path, int err)
{
	char nodes[256];

	switch (err) {
	case -ENOENT:
		list_nodes(nodes, sizeof(nodes));
		if (path[0] != '/')
			pto_log("device \"%s\": neither \"sim\" (the simulator) "
				"nor a device node path such as /dev/pto0 "
				"(device nodes here: %s)\n", path, nodes);
		else
			pto_log("%s: no such device node (device nodes here: "
				"%s); load the driver (modprobe pto, see "
				"pto(4)) or use device \"sim\"\n", path, nodes);
		break;
	case -EACCES:
	case -EPERM:
		pto_log("%s: Permission denied (EACCES): add the user to "
			"group pto (see pto(4)), then log in again\n", path);
		break;
	case -EMFILE:
		pto_log("%s: cannot open: %s: this process has as many files "
			"open as it may (ulimit -n), or this user as many "
			"contexts on the device as pto.ko allows "
			"(max_user_contexts, see pto(4))\n", path,
			strerror(-err));
		break;
	default:
		pto_log("%s: cannot open: %s\n", path, strerror(-err));
	}
}

static int dev_open(struct pto_backend *be, const struct pto_config *cfg)
{
	struct pto_info info;
	struct dev *d = calloc(1, sizeof(*d));
	uint32_t t, n = 0;
	int ret;

	if (!d)
		return -ENOMEM;
	d->efd = -1;
	be->priv = d;
	d->fd = pto_fd_above_stdio(open(cfg->device, O_RDWR | O_CLOEXEC));
	if (d->fd < 0 && (errno == ENXIO || errno == ENODEV)) {
		pto_log("%s: no device behind this node (its driver has none "
			"for it, or it went away); a device is a /dev/ptoN "
			"node of pto.ko, or \"sim\"\n", cfg->device);
		return -ENODEV;
	}
	if (d->fd < 0 && errno == EISDIR) {
		pto_log("%s: a directory, not a PTO device; a device is a "
			"/dev/ptoN node of pto.ko, or \"sim\"\n", cfg->device);
		return -ENODEV;
	}
	if (d->fd < 0) {
		ret = -errno;
		open_failed(cfg->device, ret);
		return ret == -EPERM ? -EACCES : ret;
	}
	ret = dev_get_info(d, cfg->device, &info);
	if (ret)
		return ret;
	be->max_heap = info.max_heap_size;
	be->mem_avail = info.mem_avail;
	d->path = cfg->device;
	d->max_task_window = info.max_task_window;
	d->max_dep_pool = info.max_dep_pool;
	be->c_kernels = false;
	be->features = info.features;
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		be->first_core[t] = n;
		be->cores[t] = info.cores[t];
		n += info.cores[t];
	}
	be->num_cores = n;
	return 0;
}

static uint8_t *dev_map(struct dev *d, const struct pto_region *r)
{
	void *p = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       d->fd, (off_t)r->offset);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * What SETUP would refuse with a bare -EINVAL or -ENOMEM, said with the
 * setting or limit behind it: a ring larger than pto.ko allows, or heap
 * rings the memory the device leaves this user cannot hold.
 */
static int setup_fits(const struct dev *d, const struct pto_setup *s)
{
	uint64_t rings;
	uint32_t r;

	for (r = 0; r < s->nrings; r++) {
		if (s->ring[r].task_window > d->max_task_window) {
			pto_log("%s: ring %u's task window of %u slots is more "
				"than the device allows (%u: pto.ko's "
				"max_task_window, see pto(4)); set a smaller "
				"one (task_window, PTO_TASK_WINDOW)\n", d->path,
				r, s->ring[r].task_window, d->max_task_window);
			return -EINVAL;
		}
		if (s->ring[r].dep_pool_size > d->max_dep_pool) {
			pto_log("%s: ring %u's dependency pool of %u entries "
				"is more than the device allows (%u: pto.ko's "
				"max_dep_pool, see pto(4)); set a smaller one "
				"(dep_pool_size, PTO_DEP_POOL)\n", d->path, r,
				s->ring[r].dep_pool_size, d->max_dep_pool);
			return -EINVAL;
		}
	}
	rings = pto_layout_rings_heap(s);
	if (rings > s->heap_size) {
		pto_log("%s: no room for the heap rings (%llu KiB): the device "
			"gives this runtime a heap of %llu KiB at most (pto.ko's "
			"max_heap_size, and the memory other runtimes leave "
			"under max_memory and max_user_memory, see pto(4))\n",
			d->path, (unsigned long long)(rings >> 10),
			(unsigned long long)(s->heap_size >> 10));
		return -ENOMEM;
	}
	return 0;
}

/*
 * SETUP refused memory that GET_INFO said this user had: another runtime
 * (a thread's, a process's) took some in between, as when several start
 * at once.  Read what is left again and give the arena only that; the
 * heap rings stay as asked (setup_fits() says so when even they no longer
 * fit).  False when nothing changed: the refusal stands.
 */
static bool dev_refit(struct pto_backend *be, struct dev *d,
		      struct pto_setup *s)
{
	struct pto_setup l = *s;
	struct pto_info info;
	uint64_t other, heap;

	if (!be->mem_avail || dev_get_info(d, d->path, &info) ||
	    !info.mem_avail || info.mem_avail >= be->mem_avail)
		return false;
	be->mem_avail = info.mem_avail;
	l.heap_size = pto_layout_rings_heap(&l);
	if (pto_layout(&l, be->num_cores))
		return false;
	other = l.window.size + l.regs.size + l.cring.size;
	heap = info.mem_avail > other ? info.mem_avail - other : 0;
	heap &= ~(PTO_LAYOUT_PAGE - 1);
	if (heap >= s->heap_size)
		return false;
	s->heap_size = heap;
	return true;
}

static int dev_setup(struct pto_backend *be, const struct pto_setup *req)
{
	struct dev *d = be->priv;
	struct pto_setup *s = &be->geo;
	uint8_t **region = be->region;
	int ret;

	*s = *req;
	s->features = be->features & DEV_FEATURES_WANTED;
	/*
	 * The sim reserves a huge pto_malloc arena lazily; the driver's heap
	 * is real memory, so the arena shrinks to what the device allows.
	 */
	if (s->heap_size > be->max_heap)
		s->heap_size = be->max_heap & ~(PTO_LAYOUT_PAGE - 1);
	for (;;) {
		ret = setup_fits(d, s);
		if (ret)
			return ret;
		if (!ioctl(d->fd, PTO_IOCTL_SETUP, s))
			break;
		ret = -errno;
		if (ret == -ENOMEM && dev_refit(be, d, s))
			continue;	/* a failed SETUP leaves nothing behind */
		if (ret == -ENOMEM)
			pto_log("%s: the device refused the runtime's memory "
				"(a heap of %llu MiB and its rings): more than "
				"pto.ko's max_memory or max_user_memory leave "
				"(see pto(4); the kernel log says which)\n",
				d->path,
				(unsigned long long)(s->heap_size >> 20));
		return ret;
	}
	region[PTO_BE_WINDOW] = dev_map(d, &s->window);
	region[PTO_BE_HEAP] = dev_map(d, &s->heap);
	region[PTO_BE_REGS] = dev_map(d, &s->regs);
	region[PTO_BE_CRING] = dev_map(d, &s->cring);
	if (!region[PTO_BE_WINDOW] || !region[PTO_BE_HEAP] ||
	    !region[PTO_BE_REGS] || !region[PTO_BE_CRING])
		return -errno;
	be->heap_dev_base = 0;
	be->host_addresses = false;

	d->efd = pto_fd_above_stdio(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (d->efd < 0)
		return -errno;
	if (!(s->features & PTO_FEATURE_URING_CMD))
		return 0;
	ret = io_uring_queue_init(8, &d->ring, 0);
	if (ret)
		return ret;
	d->ring_ok = true;
	return 0;
}

static void dev_unmap(uint8_t *p, const struct pto_region *r)
{
	if (p)
		munmap(p, r->size);
}

static void dev_close(struct pto_backend *be)
{
	struct dev *d = be->priv;

	if (!d)
		return;
	if (d->ring_ok)
		io_uring_queue_exit(&d->ring);
	dev_unmap(be->region[PTO_BE_WINDOW], &be->geo.window);
	dev_unmap(be->region[PTO_BE_HEAP], &be->geo.heap);
	dev_unmap(be->region[PTO_BE_REGS], &be->geo.regs);
	dev_unmap(be->region[PTO_BE_CRING], &be->geo.cring);
	if (d->efd >= 0)
		close(d->efd);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
	be->priv = NULL;
}

static int dev_bind_kernel(struct pto_backend *be, uint32_t kernel_id,
			   uint32_t worker_type, uint32_t op, pto_kernel_fn fn)
{
	struct dev *d = be->priv;
	struct pto_bind_op b = {
		.kernel_id = kernel_id,
		.worker_type = worker_type,
		.op = op,
	};

	if (fn)
		return -EOPNOTSUPP;	/* C kernels exist only on the sim */
	return ioctl(d->fd, PTO_IOCTL_BIND_OP, &b) ? -errno : 0;
}

/*
 * A running core looks at its doorbell again before it sleeps (it sets
 * core_waiting, then reads doorbell), so only sleeping cores with work
 * queued need a KICK, and one KICK of every core when more than one does:
 * a KICK is a system call.
 */
static bool dev_core_needs_kick(struct pto_backend *be, uint32_t c)
{
	struct pto_core_regs *r = pto_regs(be, c);

	return __atomic_load_n(&r->core_waiting, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&r->consumed, __ATOMIC_RELAXED) != r->doorbell;
}

static void dev_kick(struct pto_backend *be, const uint32_t *cores,
		     uint32_t n)
{
	struct dev *d = be->priv;
	struct pto_kick k = { .core = PTO_KICK_ALL };
	uint32_t i, c, need = 0;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!cores)
		n = be->num_cores;
	for (i = 0; i < n && need < 2; i++) {
		c = cores ? cores[i] : i;
		if (dev_core_needs_kick(be, c)) {
			k.core = c;
			need++;
		}
	}
	if (!need)
		return;
	if (need > 1)
		k.core = PTO_KICK_ALL;
	/*
	 * -EIO: the context failed (a task timed out).  The core was woken
	 * all the same and completes what is queued, cancelled.
	 */
	if (ioctl(d->fd, PTO_IOCTL_KICK, &k) && errno == EIO)
		d->failed = true;
}

/* What wait() and state() return: the device's or the context's end. */
static int dev_status(const struct dev *d)
{
	if (d->gone)
		return -ENODEV;
	return d->failed ? -EIO : 0;
}

static bool dev_cring_ready(struct pto_backend *be, uint64_t head)
{
	struct pto_completion *e =
		&be->cring_entries[head & (be->cring->size - 1)];

	return __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) ==
	       (uint32_t)(head + 1);
}

static bool dev_idle(struct pto_backend *be, uint64_t cring_head,
		     uint32_t sched_wake_seen)
{
	return !dev_cring_ready(be, cring_head) &&
	       __atomic_load_n(&be->win->notify.sched_wake,
			       __ATOMIC_ACQUIRE) == sched_wake_seen;
}

static void dev_arm(struct dev *d, uint64_t cring_head, uint32_t timeout_ms)
{
	struct io_uring_sqe *sqe;

	if (!d->wait_inflight) {
		struct pto_uring_wait w = {
			.cring_head = cring_head,
			.timeout_ms = timeout_ms ? timeout_ms : 1,
		};

		sqe = io_uring_get_sqe(&d->ring);
		if (sqe) {
			io_uring_prep_rw(IORING_OP_URING_CMD, sqe, d->fd, NULL,
					 0, 0);
			sqe->cmd_op = PTO_URING_CMD_WAIT;
			memcpy(sqe->cmd, &w, sizeof(w));
			io_uring_sqe_set_data64(sqe, UD_WAIT);
			d->wait_inflight = true;
		}
	}
	if (!d->poll_inflight) {
		sqe = io_uring_get_sqe(&d->ring);
		if (sqe) {
			io_uring_prep_poll_add(sqe, d->efd, POLLIN);
			io_uring_sqe_set_data64(sqe, UD_POLL);
			d->poll_inflight = true;
		}
	}
	io_uring_submit(&d->ring);
}

static void dev_drain_eventfd(struct dev *d)
{
	uint64_t v;
	ssize_t n;

	/* -1 with EAGAIN: nothing was written since the last drain */
	n = read(d->efd, &v, sizeof(v));
	(void)n;
}

static int dev_reap(struct dev *d)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&d->ring, &cqe) == 0) {
		if (io_uring_cqe_get_data64(cqe) == UD_WAIT) {
			d->wait_inflight = false;
			if (cqe->res == -ENODEV)
				d->gone = true;
			else if (cqe->res == -EIO)
				d->failed = true;
		} else {
			d->poll_inflight = false;
			dev_drain_eventfd(d);
		}
		io_uring_cqe_seen(&d->ring, cqe);
	}
	return dev_status(d);
}

static int dev_wait_uring(struct pto_backend *be, uint64_t cring_head,
			  uint32_t sched_wake_seen, uint32_t timeout_ms)
{
	struct dev *d = be->priv;
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * 1000000ll,
	};
	struct io_uring_cqe *cqe;

	dev_arm(d, cring_head, timeout_ms);
	if (dev_idle(be, cring_head, sched_wake_seen))
		io_uring_wait_cqe_timeout(&d->ring, &cqe, &ts);
	return dev_reap(d);
}

/* Without io_uring commands: poll() the device and the eventfd. */
static int dev_wait_poll(struct pto_backend *be, uint64_t cring_head,
			 uint32_t sched_wake_seen, uint32_t timeout_ms)
{
	struct dev *d = be->priv;
	struct pollfd pfd[2] = {
		{ .fd = d->fd, .events = POLLIN },
		{ .fd = d->efd, .events = POLLIN },
	};

	if (!dev_idle(be, cring_head, sched_wake_seen))
		return 0;
	if (poll(pfd, 2, (int)(timeout_ms > INT32_MAX ? INT32_MAX :
			      timeout_ms)) < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd[1].revents & POLLIN)
		dev_drain_eventfd(d);
	/* completions first: a failure is reported once they are reaped */
	if (!(pfd[0].revents & POLLIN)) {
		if (pfd[0].revents & POLLHUP)
			d->gone = true;
		else if (pfd[0].revents & POLLERR)
			d->failed = true;
	}
	return dev_status(d);
}

static int dev_wait(struct pto_backend *be, uint64_t cring_head,
		    uint32_t sched_wake_seen, uint32_t timeout_ms)
{
	struct dev *d = be->priv;

	if (d->gone || d->failed)
		return dev_status(d);
	if (d->ring_ok)
		return dev_wait_uring(be, cring_head, sched_wake_seen,
				      timeout_ms);
	return dev_wait_poll(be, cring_head, sched_wake_seen, timeout_ms);
}

static void dev_notify(struct pto_backend *be)
{
	struct dev *d = be->priv;
	uint64_t one = 1;
	ssize_t n;

	/* -1: the counter is saturated, a wake-up is pending anyway */
	n = write(d->efd, &one, sizeof(one));
	(void)n;
}

/*
 * Before a run: can the context still run tasks?  A failed context
 * (POLLERR; a task timed out in an earlier run) never will, and one on a
 * removed device (POLLHUP) neither.
 */
static int dev_state(struct pto_backend *be)
{
	struct dev *d = be->priv;
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };

	if (!d->gone && !d->failed && poll(&pfd, 1, 0) > 0) {
		if (pfd.revents & POLLHUP)
			d->gone = true;
		else if (pfd.revents & POLLERR)
			d->failed = true;
	}
	return dev_status(d);
}

/* The module parameters behind the statuses pto.ko fails tasks with. */
static const char *dev_status_hint(int status)
{
	switch (status) {
	case -E2BIG:
		return "a matrix op's M*N*K above pto.ko's max_task_macs, or "
		       "an op whose smallest section costs more than "
		       "max_section_cost, see pto(4)";
	case -ETIMEDOUT:
		return "the task ran longer than pto.ko's task_timeout_ms, "
		       "see pto(4)";
	default:
		return NULL;
	}
}

const struct pto_backend_ops pto_dev_backend_ops = {
	.name = "dev",
	.open = dev_open,
	.setup = dev_setup,
	.close = dev_close,
	/* nothing in close waits for a thread: the child closes as well */
	.forget = dev_close,
	.bind_kernel = dev_bind_kernel,
	.kick = dev_kick,
	.wait = dev_wait,
	.notify = dev_notify,
	.status_hint = dev_status_hint,
	.state = dev_state,
};
