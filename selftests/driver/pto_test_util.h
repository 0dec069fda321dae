/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for driving /dev/ptoN directly through the uapi, without libpto:
 * open + SETUP + mmap, queue a task on a core, reap completions.  Every
 * place in the regions comes from SETUP's answer.
 */
#ifndef PTO_TEST_UTIL_H
#define PTO_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <stdio.h>

#include <pto/pto_uapi.h>

struct pto_t {
	int fd;
	struct pto_info info;
	struct pto_setup s;
	uint8_t *window;
	struct pto_window_header *win;
	struct pto_task_desc *desc[PTO_MAX_RINGS];
	uint8_t *heap;
	uint8_t *regs;
	struct pto_cring_header *cring;
	struct pto_completion *ce;
	uint32_t first_core[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t next_seq[PTO_MAX_RINGS];
	uint64_t head;
};

static inline const char *pto_t_dev(void)
{
	const char *d = getenv("PTO_TEST_DEV");

	return d ? d : "/dev/pto0";
}

static inline uint64_t pto_t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Ring r of a SETUP request: tw descriptors, a 256-entry pool, its heap. */
static inline void pto_t_setup_ring(struct pto_setup *s, uint32_t r,
				    uint32_t tw, uint64_t ring_heap)
{
	s->ring[r].task_window = tw;
	s->ring[r].dep_pool_size = 256;
	s->ring[r].heap_size = ring_heap;
}

/* One ring of tw descriptors, half the heap its heap ring. */
static inline void pto_t_setup_args(struct pto_setup *s, uint32_t tw,
				    uint64_t heap, uint32_t cring)
{
	memset(s, 0, sizeof(*s));
	s->nrings = 1;
	pto_t_setup_ring(s, 0, tw, heap / 2);
	s->order_ring_size = tw;
	s->release_ring_size = 64;
	s->heap_size = heap;
	s->cring_size = cring;
}

static inline void *pto_t_map(int fd, uint64_t off, uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Open a context with the SETUP request s (features: all the device
 * has, when s asks for none) and map it; returns 0 or -errno.
 */
static inline int pto_t_open_setup(struct pto_t *p, const struct pto_setup *s)
{
	uint32_t t, c = 0;

	memset(p, 0, sizeof(*p));
	p->fd = open(pto_t_dev(), O_RDWR | O_CLOEXEC);
	if (p->fd < 0)
		return -errno;
	if (ioctl(p->fd, PTO_IOCTL_GET_INFO, &p->info))
		return -errno;
	p->s = *s;
	if (!p->s.features)
		p->s.features = p->info.features & PTO_FEATURES_KNOWN;
	if (ioctl(p->fd, PTO_IOCTL_SETUP, &p->s))
		return -errno;
	p->window = pto_t_map(p->fd, p->s.window.offset, p->s.window.size);
	p->heap = pto_t_map(p->fd, p->s.heap.offset, p->s.heap.size);
	p->regs = pto_t_map(p->fd, p->s.regs.offset, p->s.regs.size);
	p->cring = pto_t_map(p->fd, p->s.cring.offset, p->s.cring.size);
	if (!p->window || !p->heap || !p->regs || !p->cring)
		return -errno;
	p->win = (void *)(p->window + p->s.header_offset);
	for (t = 0; t < p->s.nrings && t < PTO_MAX_RINGS; t++)
		p->desc[t] = (void *)(p->window + p->s.ring[t].desc_offset);
	p->ce = (void *)((uint8_t *)p->cring + p->s.cring_entries_offset);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		p->first_core[t] = c;
		c += p->info.cores[t];
	}
	return 0;
}

/* Open a context with one ring; returns 0 or -errno. */
static inline int pto_t_open(struct pto_t *p, uint32_t tw, uint64_t heap,
			     uint32_t cring)
{
	struct pto_setup s;

	pto_t_setup_args(&s, tw, heap, cring);
	return pto_t_open_setup(p, &s);
}

static inline void pto_t_close(struct pto_t *p)
{
	if (p->window)
		munmap(p->window, p->s.window.size);
	if (p->heap)
		munmap(p->heap, p->s.heap.size);
	if (p->regs)
		munmap(p->regs, p->s.regs.size);
	if (p->cring)
		munmap(p->cring, p->s.cring.size);
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->window = NULL;
	p->heap = NULL;
	p->regs = NULL;
	p->cring = NULL;
}

/* A core's register block, regs_stride apart. */
static inline struct pto_core_regs *pto_t_regs(struct pto_t *p, uint32_t core)
{
	return (void *)(p->regs + (size_t)core * p->s.regs_stride);
}

/* The descriptor slot of handle h (its ring must be set up). */
static inline struct pto_task_desc *pto_t_desc(struct pto_t *p, uint64_t h)
{
	uint32_t r = PTO_TASK_RING(h);

	return &p->desc[r][PTO_TASK_SEQ(h) & (p->s.ring[r].task_window - 1)];
}

static inline int pto_t_bind(struct pto_t *p, uint32_t kid, uint32_t type,
			     uint32_t op)
{
	struct pto_bind_op b = { .kernel_id = kid, .worker_type = type,
				 .op = op };

	return ioctl(p->fd, PTO_IOCTL_BIND_OP, &b) ? -errno : 0;
}

/* Queue handle h on core behind its doorbell (no descriptor, no KICK). */
static inline void pto_t_push(struct pto_t *p, uint32_t core, uint64_t h)
{
	struct pto_core_regs *r = pto_t_regs(p, core);
	uint32_t bell = r->doorbell;

	r->queue[bell % PTO_CORE_QUEUE_SLOTS] = h + 1;
	__atomic_store_n(&r->doorbell, bell + 1, __ATOMIC_RELEASE);
}

/*
 * Write a descriptor of ring with flags (PTO_TASK_F_*) and view_mask and
 * queue it on core; returns its handle.
 */
static inline uint64_t pto_t_queue_flags(struct pto_t *p, uint32_t ring,
					 uint32_t core, uint32_t kid,
					 const uint64_t *args, uint32_t nargs,
					 uint16_t flags, uint32_t view_mask)
{
	uint64_t h = PTO_TASK_HANDLE(ring, p->next_seq[ring]++);
	struct pto_task_desc *d = pto_t_desc(p, h);

	d->kernel_id = kid;
	d->nargs = nargs;
	d->flags = flags;
	d->view_mask = view_mask;
	if (nargs)
		memcpy(d->args, args, nargs * sizeof(uint64_t));
	/* the handle last, as libpto stores it */
	__atomic_store_n(&d->task_id, h, __ATOMIC_RELEASE);
	pto_t_push(p, core, h);
	return h;
}

/* Write a descriptor of ring and queue it on core; returns its handle. */
static inline uint64_t pto_t_queue_ring(struct pto_t *p, uint32_t ring,
					uint32_t core, uint32_t kid,
					const uint64_t *args, uint32_t nargs)
{
	return pto_t_queue_flags(p, ring, core, kid, args, nargs, 0, 0);
}

/* A task of ring 0; returns its handle. */
static inline uint64_t pto_t_queue(struct pto_t *p, uint32_t core,
				   uint32_t kid, const uint64_t *args,
				   uint32_t nargs)
{
	return pto_t_queue_ring(p, 0, core, kid, args, nargs);
}

static inline int pto_t_kick(struct pto_t *p, uint32_t core)
{
	struct pto_kick k = { .core = core };

	return ioctl(p->fd, PTO_IOCTL_KICK, &k) ? -errno : 0;
}

/* Blocking WAIT ioctl; returns completions available or -errno. */
static inline int64_t pto_t_wait(struct pto_t *p, uint64_t timeout_ns)
{
	struct pto_wait w = { .timeout_ns = timeout_ns, .cring_head = p->head };

	if (ioctl(p->fd, PTO_IOCTL_WAIT, &w))
		return -errno;
	return (int64_t)(w.cring_tail - p->head);
}

/* Take the next completion if it is published; 1 if one was taken. */
static inline int pto_t_reap(struct pto_t *p, struct pto_completion *out)
{
	struct pto_completion *e = &p->ce[p->head & (p->cring->size - 1)];

	if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != (uint32_t)(p->head + 1))
		return 0;
	*out = *e;
	p->head++;
	__atomic_store_n(&p->cring->head, p->head, __ATOMIC_RELEASE);
	return 1;
}

/* Wait (ioctl) and reap one completion; 0 or -errno. */
static inline int pto_t_complete(struct pto_t *p, struct pto_completion *out,
				 uint64_t timeout_ns)
{
	uint64_t end = pto_t_now_ns() + timeout_ns;
	int64_t n;

	while (!pto_t_reap(p, out)) {
		if (pto_t_now_ns() > end)
			return -ETIMEDOUT;
		n = pto_t_wait(p, 100000000ull);
		if (n < 0)
			return (int)n;
	}
	return 0;
}

/* Run one task of ring 0 on core; returns the completion status. */
static inline int pto_t_run(struct pto_t *p, uint32_t core, uint32_t kid,
			    const uint64_t *args, uint32_t nargs)
{
	struct pto_completion c = { 0 };
	uint64_t h = pto_t_queue(p, core, kid, args, nargs);
	int ret = pto_t_kick(p, core);

	if (ret)
		return ret;
	ret = pto_t_complete(p, &c, 10000000000ull);
	if (ret)
		return ret;
	if (c.task_id != h)
		return -EILSEQ;
	return c.status;
}

/* ---- sysfs, module parameters and fdinfo ---------------------------------- */

static inline int pto_t_sysfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static inline int pto_t_sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static inline long pto_t_sysfs_long(const char *path)
{
	char buf[64];

	if (pto_t_sysfs_read(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 0);
}

#define PTO_T_PARAM(name)	"/sys/module/pto/parameters/" name

/* Set a module parameter, keeping its old value in old (64 bytes). */
static inline int pto_t_param_set(const char *name, const char *val,
				  char *old)
{
	char path[128];
	int ret;

	snprintf(path, sizeof(path), PTO_T_PARAM("%s"), name);
	ret = pto_t_sysfs_read(path, old, 64);
	if (ret)
		return ret;
	return pto_t_sysfs_write(path, val);
}

static inline void pto_t_param_restore(const char *name, const char *old)
{
	char path[128];

	snprintf(path, sizeof(path), PTO_T_PARAM("%s"), name);
	pto_t_sysfs_write(path, old);
}

/* Wait for a sysfs number to reach want, up to timeout_ms; its value. */
static inline long pto_t_sysfs_wait_for(const char *path, long want,
					int timeout_ms)
{
	uint64_t end = pto_t_now_ns() + timeout_ms * 1000000ull;
	struct timespec ts = { 0, 10000000 };
	long v;

	while ((v = pto_t_sysfs_long(path)) != want && pto_t_now_ns() < end)
		nanosleep(&ts, NULL);
	return v;
}

/* Value of key in /proc/self/fdinfo/fd, copied to out. */
static inline int pto_t_fdinfo(int fd, const char *key, char *out,
			       size_t len)
{
	char path[64], buf[8192], *p;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (pto_t_sysfs_read(path, buf, sizeof(buf)))
		return -1;
	for (p = buf; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			p += kl + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
			return 0;
		}
	}
	return -1;
}

#endif /* PTO_TEST_UTIL_H */
