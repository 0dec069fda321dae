// SPDX-License-Identifier: MIT
/*
 * The dev backend: a context of /dev/ptoN (pto.ko).  The regions are the
 * driver's, mapped shared; dispatch writes the doorbell registers and
 * KICKs only cores that sleep; the scheduler sleeps in io_uring on two
 * things at once: a PTO_URING_CMD_WAIT for completions and a poll on an
 * eventfd the orchestrator's notify() writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <liburing.h>

#include "backend.h"

enum { UD_WAIT = 1, UD_POLL = 2 };

struct dev {
	int fd;
	int efd;
	bool ring_ok;
	bool wait_inflight;	/* a URING_CMD_WAIT is pending */
	bool poll_inflight;	/* a poll on efd is pending */
	bool gone;		/* the device was removed */
	uint64_t max_heap;	/* GET_INFO's max_heap_size */
	struct io_uring ring;
	void *map[4];
	size_t map_len[4];
};

static int dev_open(struct pto_backend *be, const struct pto_config *cfg)
{
	struct pto_info info;
	struct dev *d = calloc(1, sizeof(*d));
	uint32_t t, n = 0;

	if (!d)
		return -ENOMEM;
	d->efd = -1;
	be->priv = d;
	d->fd = open(cfg->device, O_RDWR | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (ioctl(d->fd, PTO_IOCTL_GET_INFO, &info))
		return -errno;
	if (info.abi_version != PTO_ABI_VERSION)
		return -EPROTO;
	d->max_heap = info.max_heap_size;
	be->c_kernels = false;
	be->batch_kick = true;	/* a KICK is a system call */
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		be->first_core[t] = n;
		be->cores[t] = info.cores[t];
		n += info.cores[t];
	}
	be->num_cores = n;
	return 0;
}

static void *dev_map(struct dev *d, int i, uint64_t off, uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd,
		       off);

	if (p == MAP_FAILED)
		return NULL;
	d->map[i] = p;
	d->map_len[i] = len;
	return p;
}

static int dev_setup(struct pto_backend *be, const struct pto_backend_setup *s)
{
	struct dev *d = be->priv;
	struct pto_setup st;
	uint8_t *w, *c;
	int ret;

	memset(&st, 0, sizeof(st));
	st.task_window = s->task_window;
	st.dep_pool_size = s->dep_pool_size;
	st.release_ring_size = s->release_ring_size;
	st.heap_ring_size = s->heap_ring_size;
	/*
	 * The sim reserves a huge pto_malloc arena lazily; the driver's heap
	 * is real memory, so the arena shrinks to what the device allows.
	 */
	st.heap_size = s->heap_size;
	if (st.heap_size > d->max_heap && d->max_heap >= s->heap_ring_size)
		st.heap_size = d->max_heap & ~4095ull;
	st.cring_size = s->cring_size;
	if (ioctl(d->fd, PTO_IOCTL_SETUP, &st))
		return -errno;
	w = dev_map(d, 0, st.window_offset, st.window_size);
	be->heap = dev_map(d, 1, st.heap_offset, st.heap_size);
	be->regs = dev_map(d, 2, st.regs_offset, st.regs_size);
	c = dev_map(d, 3, st.cring_offset, st.cring_size_bytes);
	if (!w || !be->heap || !be->regs || !c)
		return -errno;
	be->win = (struct pto_window_header *)w;
	if (be->win->geo.magic != PTO_WINDOW_MAGIC ||
	    be->win->geo.task_window != s->task_window)
		return -EPROTO;
	be->desc = (struct pto_task_desc *)(w + be->win->geo.desc_offset);
	be->dep = (struct pto_dep_entry *)(w + be->win->geo.dep_offset);
	be->release = (struct pto_release_entry *)
		(w + be->win->geo.release_offset);
	be->heap_size = st.heap_size;
	be->heap_dev_base = 0;
	be->host_addresses = false;
	be->cring = (struct pto_cring_header *)c;
	be->cring_entries = (struct pto_completion *)(c + 4096);

	d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->efd < 0)
		return -errno;
	ret = io_uring_queue_init(8, &d->ring, 0);
	if (ret)
		return ret;
	d->ring_ok = true;
	return 0;
}

static void dev_close(struct pto_backend *be)
{
	struct dev *d = be->priv;
	int i;

	if (!d)
		return;
	if (d->ring_ok)
		io_uring_queue_exit(&d->ring);
	for (i = 0; i < 4; i++)
		if (d->map[i])
			munmap(d->map[i], d->map_len[i]);
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
 * core_waiting, then reads doorbell), so only sleeping cores need a KICK.
 */
static void dev_kick(struct pto_backend *be, uint32_t core)
{
	struct dev *d = be->priv;
	struct pto_kick k = { .core = core };
	uint32_t c, first = core, last = core + 1;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (core == PTO_KICK_ALL) {
		first = 0;
		last = be->num_cores;
	}
	for (c = first; c < last; c++) {
		struct pto_core_regs *r = &be->regs[c];

		if (__atomic_load_n(&r->core_waiting, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&r->consumed, __ATOMIC_RELAXED) !=
		    r->doorbell)
			break;
	}
	if (c == last)
		return;
	/* -EIO (failed context): the failed completions tell the scheduler */
	ioctl(d->fd, PTO_IOCTL_KICK, &k);
}

static bool dev_cring_ready(struct pto_backend *be, uint64_t head)
{
	struct pto_completion *e =
		&be->cring_entries[head & (be->cring->size - 1)];

	return __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) ==
	       (uint32_t)(head + 1);
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

static int dev_reap(struct dev *d)
{
	struct io_uring_cqe *cqe;
	uint64_t v;
	int ret = 0;

	while (io_uring_peek_cqe(&d->ring, &cqe) == 0) {
		if (io_uring_cqe_get_data64(cqe) == UD_WAIT) {
			d->wait_inflight = false;
			if (cqe->res == -ENODEV)
				d->gone = true;
		} else {
			d->poll_inflight = false;
			if (read(d->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				ret = -errno;
		}
		io_uring_cqe_seen(&d->ring, cqe);
	}
	return d->gone ? -ENODEV : ret;
}

static int dev_wait(struct pto_backend *be, uint64_t cring_head,
		    uint32_t sched_wake_seen, uint32_t timeout_ms)
{
	struct dev *d = be->priv;
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (timeout_ms % 1000) * 1000000ll,
	};
	struct io_uring_cqe *cqe;

	if (d->gone)
		return -ENODEV;
	dev_arm(d, cring_head, timeout_ms);
	if (!dev_cring_ready(be, cring_head) &&
	    __atomic_load_n(&be->win->notify.sched_wake, __ATOMIC_ACQUIRE) ==
	    sched_wake_seen)
		io_uring_wait_cqe_timeout(&d->ring, &cqe, &ts);
	return dev_reap(d);
}

static void dev_notify(struct pto_backend *be)
{
	struct dev *d = be->priv;
	uint64_t one = 1;

	if (write(d->efd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: a wake-up is pending anyway */
	}
}

const struct pto_backend_ops pto_dev_backend_ops = {
	.name = "dev",
	.open = dev_open,
	.setup = dev_setup,
	.close = dev_close,
	.bind_kernel = dev_bind_kernel,
	.kick = dev_kick,
	.wait = dev_wait,
	.notify = dev_notify,
};
