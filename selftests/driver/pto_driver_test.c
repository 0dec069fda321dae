// SPDX-License-Identifier: GPL-2.0
/*
 * kselftests for pto.ko: the uapi (every ioctl and its invalid fields,
 * feature bits, the layout SETUP returns), mmap bounds and permissions,
 * isolation between contexts, task rings and handles, dispatch and
 * completion through ioctl / io_uring / poll, bad addresses, task timeout,
 * teardown with work in flight, SIGKILL with a pending io_uring WAIT,
 * device removal, module unload and fdinfo.  Runs as root inside the VM.
 */
#include <liburing.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "pto_test_util.h"
#include "pto_layout.h"

#define SEC	1000000000ull
#define HEAP	(1u << 20)

/* ---- helpers ----------------------------------------------------------- */

static int sysfs_read(const char *path, char *buf, size_t len)
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

static int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static long sysfs_long(const char *path)
{
	char buf[64];

	if (sysfs_read(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 0);
}

/* Wait for a sysfs number to reach want, up to timeout_ms. */
static long sysfs_wait_for(const char *path, long want, int timeout_ms)
{
	uint64_t end = pto_t_now_ns() + timeout_ms * 1000000ull;
	long v;

	while ((v = sysfs_long(path)) != want && pto_t_now_ns() < end)
		poll(NULL, 0, 10);
	return v;
}

/* Value of key in /proc/self/fdinfo/fd, copied to out. */
static int fdinfo_get(int fd, const char *key, char *out, size_t len)
{
	char path[64], buf[4096], *p;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (sysfs_read(path, buf, sizeof(buf)))
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

static float f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t core_of_type(struct pto_t *p, uint32_t type)
{
	return p->first_core[type];
}

/* Tests that change module parameters or devices run as root only. */
#define NEED_ROOT() do {						\
	if (geteuid())							\
		SKIP(return, "needs root (module parameters, devices)");\
} while (0)

/* ---- GET_INFO ------------------------------------------------------------ */

TEST(get_info)
{
	struct pto_info info = { 0 };
	char buf[64], want[64];
	int fd = open(pto_t_dev(), O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(PTO_ABI_VERSION, info.abi_version);
	/* what this driver supports: every feature, op and ring */
	EXPECT_EQ(PTO_FEATURE_URING_CMD | PTO_FEATURE_POLL | PTO_FEATURE_VIEWS,
		  info.features);
	EXPECT_EQ((1ull << PTO_OP_COUNT) - 1, info.ops);
	EXPECT_EQ(PTO_MAX_RINGS, info.max_rings);
	EXPECT_EQ(PTO_MAX_ARGS, info.max_args);
	EXPECT_LT(0, info.max_task_window);
	EXPECT_LT(0, info.max_heap_size);
	/* the memory a context may still set up: some, and not more than RAM */
	EXPECT_LT(0, info.mem_avail);
	EXPECT_GE((uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE),
		  info.mem_avail);
	EXPECT_EQ(sysfs_long("/sys/module/pto/parameters/task_timeout_ms"),
		  (long)info.task_timeout_ms);
	ASSERT_EQ(0, sysfs_read("/sys/class/pto/pto0/cores", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%u %u %u %u\n", info.cores[0],
		 info.cores[1], info.cores[2], info.cores[3]);
	EXPECT_STREQ(want, buf);
	close(fd);
}

TEST(get_info_invalid)
{
	struct pto_info info = { .flags = 1 };
	int fd = open(pto_t_dev(), O_RDWR);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	memset(&info, 0, sizeof(info));
	info.__pad[1] = 1;
	EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_GET_INFO, NULL));
	EXPECT_EQ(EFAULT, errno);
	/* unknown command number, and a known number in the wrong direction */
	EXPECT_EQ(-1, ioctl(fd, _IOWR(PTO_IOCTL_BASE, 0x3f, struct pto_info),
			    &info));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOR(PTO_IOCTL_BASE, 0x00, struct pto_info),
			    &info));
	EXPECT_EQ(ENOTTY, errno);
	/* the ABI 2 code 'P' is gone: it collides with registered users */
	EXPECT_EQ(-1, ioctl(fd, _IOWR('P', 0x00, struct pto_info), &info));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

/* A larger struct with a zero tail is accepted, a non-zero tail is not. */
TEST(get_info_extensible)
{
	struct {
		struct pto_info info;
		uint64_t extra;
	} big = { 0 };
	unsigned int cmd = _IOWR(PTO_IOCTL_BASE, 0x00, typeof(big));
	int fd = open(pto_t_dev(), O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, cmd, &big));
	EXPECT_EQ(PTO_ABI_VERSION, big.info.abi_version);
	memset(&big, 0, sizeof(big));
	big.extra = 1;
	EXPECT_EQ(-1, ioctl(fd, cmd, &big));
	EXPECT_EQ(E2BIG, errno);
	close(fd);
}

/* ---- SETUP --------------------------------------------------------------- */

static int try_setup(int fd, void (*mut)(struct pto_setup *s))
{
	struct pto_setup s;

	pto_t_setup_args(&s, 64, HEAP, 64);
	if (mut)
		mut(&s);
	return ioctl(fd, PTO_IOCTL_SETUP, &s) ? errno : 0;
}

#define SETUP_MUT(name, stmt) \
	static void mut_##name(struct pto_setup *s) { stmt; }
/* pads and flags */
SETUP_MUT(flags, s->flags = 1)
SETUP_MUT(pad0, s->__pad0 = 1)
SETUP_MUT(pad1, s->__pad1[3] = 1)
SETUP_MUT(ring_pad, s->ring[0].__pad = 1)
/* out fields passed non-zero */
SETUP_MUT(out_window, s->window.offset = 4096)
SETUP_MUT(out_heap, s->heap.size = HEAP)
SETUP_MUT(out_regs, s->regs.offset = 1)
SETUP_MUT(out_cring, s->cring.size = 8192)
SETUP_MUT(out_header, s->header_offset = 64)
SETUP_MUT(out_order, s->order_offset = 4096)
SETUP_MUT(out_release, s->release_offset = 4096)
SETUP_MUT(out_arena, s->arena_offset = 4096)
SETUP_MUT(out_centries, s->cring_entries_offset = 4096)
SETUP_MUT(out_stride, s->regs_stride = 128)
SETUP_MUT(out_cores, s->num_cores = 6)
SETUP_MUT(out_desc, s->ring[0].desc_offset = 4096)
SETUP_MUT(out_dep, s->ring[0].dep_offset = 4096)
SETUP_MUT(out_ring_heap, s->ring[0].heap_offset = 4096)
/* rings */
SETUP_MUT(nrings_zero, s->nrings = 0)
SETUP_MUT(nrings_5, s->nrings = PTO_MAX_RINGS + 1)
SETUP_MUT(nrings_huge, s->nrings = ~0u)
SETUP_MUT(past_nrings_tw, s->ring[1].task_window = 64)
SETUP_MUT(past_nrings_dep, s->ring[2].dep_pool_size = 1)
SETUP_MUT(past_nrings_heap, s->ring[3].heap_size = 4096)
SETUP_MUT(past_nrings_out, s->ring[1].desc_offset = 4096)
SETUP_MUT(past_nrings_pad, s->ring[3].__pad = 1)
SETUP_MUT(tw_zero, s->ring[0].task_window = 0)
SETUP_MUT(tw_npot, s->ring[0].task_window = 48)
SETUP_MUT(tw_big, s->ring[0].task_window = 1u << 31)
SETUP_MUT(dep_zero, s->ring[0].dep_pool_size = 0)
SETUP_MUT(dep_big, s->ring[0].dep_pool_size = ~0u)
SETUP_MUT(ring_heap_zero, s->ring[0].heap_size = 0)
SETUP_MUT(ring_heap_unaligned, s->ring[0].heap_size = 4096 + 32)
SETUP_MUT(ring2_tw_npot, s->nrings = 2; pto_t_setup_ring(s, 1, 3, 4096))
/* the other rings */
SETUP_MUT(order_zero, s->order_ring_size = 0)
SETUP_MUT(order_npot, s->order_ring_size = 100)
SETUP_MUT(order_big, s->order_ring_size = 1u << 31)
SETUP_MUT(rel_zero, s->release_ring_size = 0)
SETUP_MUT(rel_npot, s->release_ring_size = 3)
SETUP_MUT(rel_big, s->release_ring_size = 1u << 31)
SETUP_MUT(cring_zero, s->cring_size = 0)
SETUP_MUT(cring_npot, s->cring_size = 100)
SETUP_MUT(cring_big, s->cring_size = 1u << 30)
/* features the device does not have */
SETUP_MUT(feature_unknown, s->features = 1ull << 63)
SETUP_MUT(feature_next, s->features = PTO_FEATURES_KNOWN + 1)
/* the heap: too big, or too small for the heap rings */
SETUP_MUT(heap_zero, s->heap_size = 0)
SETUP_MUT(heap_big, s->heap_size = 1ull << 50)
SETUP_MUT(heap_lt_ring, s->heap_size = s->ring[0].heap_size - 4096)
SETUP_MUT(heap_lt_rings, s->nrings = 2;
	  pto_t_setup_ring(s, 1, 64, s->heap_size / 2 + 64))
SETUP_MUT(ring_heap_huge, s->ring[0].heap_size = ~63ull)

TEST(setup_invalid)
{
	static const struct {
		const char *name;
		void (*mut)(struct pto_setup *s);
	} cases[] = {
#define C(n) { #n, mut_##n }
		C(flags), C(pad0), C(pad1), C(ring_pad),
		C(out_window), C(out_heap), C(out_regs), C(out_cring),
		C(out_header), C(out_order), C(out_release), C(out_arena),
		C(out_centries), C(out_stride), C(out_cores), C(out_desc),
		C(out_dep), C(out_ring_heap),
		C(nrings_zero), C(nrings_5), C(nrings_huge),
		C(past_nrings_tw), C(past_nrings_dep), C(past_nrings_heap),
		C(past_nrings_out), C(past_nrings_pad),
		C(tw_zero), C(tw_npot), C(tw_big), C(dep_zero), C(dep_big),
		C(ring_heap_zero), C(ring_heap_unaligned), C(ring2_tw_npot),
		C(order_zero), C(order_npot), C(order_big),
		C(rel_zero), C(rel_npot), C(rel_big),
		C(cring_zero), C(cring_npot), C(cring_big),
		C(feature_unknown), C(feature_next),
		C(heap_zero), C(heap_big), C(heap_lt_ring), C(heap_lt_rings),
		C(ring_heap_huge),
#undef C
	};
	size_t i;
	int fd;

	/* a context of its own per case: one wrongly accepted stays alone */
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		int err;

		fd = open(pto_t_dev(), O_RDWR);
		ASSERT_LE(0, fd);
		err = try_setup(fd, cases[i].mut);
		EXPECT_EQ(EINVAL, err)
			TH_LOG("setup field %s: errno %d", cases[i].name, err);
		close(fd);
	}
	/* after refusals a valid SETUP still works, once */
	fd = open(pto_t_dev(), O_RDWR);
	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		try_setup(fd, cases[i].mut);
	EXPECT_EQ(0, try_setup(fd, NULL));
	EXPECT_EQ(EBUSY, try_setup(fd, NULL));
	close(fd);
}

/*
 * Every feature bit: the device's are accepted alone and show in the
 * window's ident line, every other bit is refused.
 */
TEST(setup_features)
{
	struct pto_info info = { 0 };
	struct pto_setup s;
	uint64_t bit;
	int fd, i, accepted = 0;
	void *w;

	fd = open(pto_t_dev(), O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, PTO_IOCTL_GET_INFO, &info));
	close(fd);
	for (i = -1; i < 64; i++) {
		bit = i < 0 ? info.features : 1ull << i;
		pto_t_setup_args(&s, 64, HEAP, 64);
		s.features = bit;
		fd = open(pto_t_dev(), O_RDWR);
		ASSERT_LE(0, fd);
		if (bit & ~info.features) {
			EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_SETUP, &s))
				TH_LOG("feature bit %d accepted", i);
			EXPECT_EQ(EINVAL, errno);
			close(fd);
			continue;
		}
		ASSERT_EQ(0, ioctl(fd, PTO_IOCTL_SETUP, &s))
			TH_LOG("feature bit %d: errno %d", i, errno);
		accepted++;
		w = pto_t_map(fd, s.window.offset, s.window.size);
		ASSERT_NE(NULL, w);
		EXPECT_EQ(bit, ((struct pto_window_header *)
			  ((uint8_t *)w + s.header_offset))->ident.features);
		munmap(w, s.window.size);
		close(fd);
	}
	/* all of them at once, and each of the three the driver has */
	EXPECT_EQ(4, accepted);
}

/* Fields of a SETUP answer as pto_layout() computes them. */
static void expect_layout(struct __test_metadata *_metadata,
			  const struct pto_setup *got)
{
	struct pto_setup want = *got;
	uint32_t r;

	/* clear the out fields, then lay out the same request */
	memset(&want.window, 0, sizeof(want) - offsetof(struct pto_setup,
							 window));
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		want.ring[r].desc_offset = 0;
		want.ring[r].dep_offset = 0;
		want.ring[r].heap_offset = 0;
	}
	ASSERT_EQ(0, pto_layout(&want, got->num_cores));
	EXPECT_EQ(want.window.size, got->window.size);
	EXPECT_EQ(want.heap.size, got->heap.size);
	EXPECT_EQ(want.regs.size, got->regs.size);
	EXPECT_EQ(want.cring.size, got->cring.size);
	EXPECT_EQ(want.header_offset, got->header_offset);
	EXPECT_EQ(want.order_offset, got->order_offset);
	EXPECT_EQ(want.release_offset, got->release_offset);
	EXPECT_EQ(want.arena_offset, got->arena_offset);
	EXPECT_EQ(want.cring_entries_offset, got->cring_entries_offset);
	EXPECT_EQ(want.regs_stride, got->regs_stride);
	for (r = 0; r < got->nrings; r++) {
		EXPECT_EQ(want.ring[r].desc_offset, got->ring[r].desc_offset);
		EXPECT_EQ(want.ring[r].dep_offset, got->ring[r].dep_offset);
		EXPECT_EQ(want.ring[r].heap_offset, got->ring[r].heap_offset);
	}
	for (; r < PTO_MAX_RINGS; r++) {
		struct pto_ring_geometry zero = { 0 };

		EXPECT_EQ(0, memcmp(&zero, &got->ring[r], sizeof(zero)));
	}
}

/* [off, off + len) lies in [0, size) and overlaps none of the others. */
struct span {
	uint64_t off, len;
};

static int spans_ok(const struct span *sp, int n, uint64_t size)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (sp[i].off + sp[i].len < sp[i].off ||
		    sp[i].off + sp[i].len > size)
			return 0;
		for (j = 0; j < i; j++)
			if (sp[i].off < sp[j].off + sp[j].len &&
			    sp[j].off < sp[i].off + sp[i].len)
				return 0;
	}
	return 1;
}

/* What SETUP answers and writes, on its own terms and as pto_layout(). */
static void check_setup(struct __test_metadata *_metadata, struct pto_t *p)
{
	const struct pto_setup *s = &p->s;
	struct span win[3 + 2 * PTO_MAX_RINGS], heap[PTO_MAX_RINGS + 1];
	uint64_t regions[4];
	uint32_t r, n = 0;

	expect_layout(_metadata, s);
	/* the ident line */
	EXPECT_EQ(PTO_WINDOW_MAGIC, p->win->ident.magic);
	EXPECT_EQ(PTO_ABI_VERSION, p->win->ident.abi_version);
	EXPECT_EQ(s->features, p->win->ident.features);
	EXPECT_EQ(s->nrings, p->win->ident.nrings);
	/* distinct, page-aligned mmap offsets */
	regions[0] = s->window.offset;
	regions[1] = s->heap.offset;
	regions[2] = s->regs.offset;
	regions[3] = s->cring.offset;
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(0, regions[r] & 4095);
		if (r)
			EXPECT_NE(regions[r - 1], regions[r]);
	}
	/* the window's parts do not overlap and fit */
	win[n++] = (struct span){ s->header_offset,
				  sizeof(struct pto_window_header) };
	for (r = 0; r < s->nrings; r++) {
		EXPECT_EQ(0, s->ring[r].desc_offset % 64);
		win[n++] = (struct span){ s->ring[r].desc_offset,
			s->ring[r].task_window * sizeof(struct pto_task_desc) };
		win[n++] = (struct span){ s->ring[r].dep_offset,
			s->ring[r].dep_pool_size * sizeof(struct pto_dep_entry) };
		heap[r] = (struct span){ s->ring[r].heap_offset,
					 s->ring[r].heap_size };
	}
	win[n++] = (struct span){ s->order_offset,
				  s->order_ring_size * sizeof(uint64_t) };
	win[n++] = (struct span){ s->release_offset, s->release_ring_size *
				  sizeof(struct pto_release_entry) };
	EXPECT_TRUE(spans_ok(win, n, s->window.size));
	ASSERT_LE(s->arena_offset, s->heap_size);
	heap[s->nrings] = (struct span){ s->arena_offset,
					 s->heap_size - s->arena_offset };
	EXPECT_TRUE(spans_ok(heap, s->nrings + 1, s->heap_size));
	EXPECT_EQ((s->heap_size + 4095) & ~4095ull, s->heap.size);
	/* registers and the completion ring */
	EXPECT_EQ(p->info.cores[0] + p->info.cores[1] + p->info.cores[2] +
		  p->info.cores[3], s->num_cores);
	EXPECT_LE(sizeof(struct pto_core_regs), s->regs_stride);
	EXPECT_LE((uint64_t)s->num_cores * s->regs_stride, s->regs.size);
	EXPECT_LE(sizeof(struct pto_cring_header), s->cring_entries_offset);
	EXPECT_LE(s->cring_entries_offset +
		  s->cring_size * sizeof(struct pto_completion), s->cring.size);
	EXPECT_EQ(s->cring_size, p->cring->size);
	/* memory comes zeroed, idle cores wait for a KICK */
	EXPECT_EQ(0, p->heap[0] | p->heap[s->heap_size - 1]);
	for (r = 0; r < s->num_cores; r++) {
		EXPECT_EQ(0, pto_t_regs(p, r)->doorbell);
		EXPECT_EQ(1, pto_t_regs(p, r)->core_waiting);
	}
}

TEST(setup_layout)
{
	struct pto_t p;

	ASSERT_EQ(0, pto_t_open(&p, 128, HEAP, 256));
	EXPECT_EQ(1, p.s.nrings);
	EXPECT_EQ(128, p.s.ring[0].task_window);
	EXPECT_EQ(HEAP / 2, p.s.ring[0].heap_size);
	check_setup(_metadata, &p);
	pto_t_close(&p);
}

/* Rings of different sizes; the heap holds them all, the arena nothing. */
static void multi_ring_setup(struct pto_setup *s)
{
	static const uint32_t tw[PTO_MAX_RINGS] = { 64, 32, 16, 8 };
	uint32_t r;

	pto_t_setup_args(s, 64, HEAP, 64);
	s->nrings = PTO_MAX_RINGS;
	for (r = 0; r < PTO_MAX_RINGS; r++)
		pto_t_setup_ring(s, r, tw[r], HEAP / PTO_MAX_RINGS);
	s->ring[2].dep_pool_size = 7;
	s->order_ring_size = 128;
}

TEST(setup_layout_multi_ring)
{
	struct pto_setup s;
	struct pto_t p;
	char v[32];
	void *m;

	multi_ring_setup(&s);
	ASSERT_EQ(0, pto_t_open_setup(&p, &s));
	EXPECT_EQ(PTO_MAX_RINGS, p.win->ident.nrings);
	EXPECT_EQ(HEAP, p.s.arena_offset);
	check_setup(_metadata, &p);
	/* a whole region maps, a page more does not */
	m = mmap(NULL, p.s.window.size + 4096, PROT_READ, MAP_SHARED, p.fd,
		 p.s.window.offset);
	EXPECT_EQ(MAP_FAILED, m);
	/* fdinfo counts the task slots of every ring */
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-task-window", v, sizeof(v)));
	EXPECT_STREQ("120", v);
	pto_t_close(&p);
}

/* ---- BIND_OP, KICK, WAIT ---------------------------------------------------- */

TEST(bind_invalid)
{
	static const struct pto_bind_op bad[] = {
		{ .kernel_id = PTO_MAX_KERNELS },
		{ .worker_type = PTO_UAPI_NUM_WORKER_TYPES },
		{ .op = PTO_OP_COUNT },
		{ .flags = 1 },
	};
	struct pto_bind_op ok = { .kernel_id = 3, .op = PTO_OP_NOP };
	int fd = open(pto_t_dev(), O_RDWR);
	size_t i;

	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct pto_bind_op b = bad[i];

		EXPECT_EQ(-1, ioctl(fd, PTO_IOCTL_BIND_OP, &b));
		EXPECT_EQ(EINVAL, errno) TH_LOG("bind case %zu", i);
	}
	EXPECT_EQ(0, ioctl(fd, PTO_IOCTL_BIND_OP, &ok));
	close(fd);
}

TEST(kick_wait_invalid)
{
	struct pto_kick k = { 0 };
	struct pto_wait w = { 0 };
	struct pto_t p;

	/* before SETUP there is nothing to kick or wait for */
	p.fd = open(pto_t_dev(), O_RDWR);
	ASSERT_LE(0, p.fd);
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_KICK, &k));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	close(p.fd);

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	k.flags = 1;
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_KICK, &k));
	EXPECT_EQ(EINVAL, errno);
	k.flags = 0;
	k.__pad = 1;
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_KICK, &k));
	EXPECT_EQ(EINVAL, errno);
	k.__pad = 0;
	k.core = p.s.num_cores;
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_KICK, &k));
	EXPECT_EQ(EINVAL, errno);
	k.core = PTO_KICK_ALL;
	EXPECT_EQ(0, ioctl(p.fd, PTO_IOCTL_KICK, &k));

	w.flags = 1;
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	w.flags = 0;
	w.__pad0 = 1;
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	w.__pad0 = 0;
	w.cring_tail = 5;
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_WAIT, &w));
	EXPECT_EQ(EINVAL, errno);
	/* nothing completes: a short WAIT times out with nothing available */
	EXPECT_EQ(0, pto_t_wait(&p, 1000000));
	pto_t_close(&p);
}

/* ---- mmap ------------------------------------------------------------------- */

TEST(mmap_bounds_and_permissions)
{
	struct pto_t p;
	void *m;
	int fd;

	fd = open(pto_t_dev(), O_RDWR);
	ASSERT_LE(0, fd);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, m) TH_LOG("mmap before SETUP");
	close(fd);

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	/* one page past a region's end */
	m = mmap(NULL, p.s.window.size + 4096, PROT_READ, MAP_SHARED, p.fd,
		 p.s.window.offset);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, p.s.heap.size + 4096, PROT_READ, MAP_SHARED, p.fd,
		 p.s.heap.offset);
	EXPECT_EQ(MAP_FAILED, m);
	/* an offset inside a region, and one past the last region */
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, p.fd,
		 p.s.heap.offset + 4096);
	EXPECT_EQ(MAP_FAILED, m);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, p.fd,
		 p.s.cring.offset + (p.s.cring.offset - p.s.regs.offset));
	EXPECT_EQ(MAP_FAILED, m);
	/* private and executable mappings are refused */
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, p.fd,
		 p.s.heap.offset);
	EXPECT_EQ(MAP_FAILED, m);
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, p.fd,
		 p.s.heap.offset);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EPERM, errno);
	/* a smaller mapping is fine but cannot become executable */
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, p.fd, p.s.heap.offset);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(-1, mprotect(m, 4096, PROT_READ | PROT_EXEC));
	munmap(m, 4096);
	/* two mappings of one region share memory */
	m = pto_t_map(p.fd, p.s.heap.offset, 4096);
	ASSERT_NE(NULL, m);
	p.heap[100] = 0x5a;
	EXPECT_EQ(0x5a, ((uint8_t *)m)[100]);
	munmap(m, 4096);
	pto_t_close(&p);
}

/* Contexts are isolated: fresh memory, and addresses beyond the heap fail. */
TEST(isolation_between_processes)
{
	struct pto_t p;
	int pipefd[2], status;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	memset(p.heap, 0xa5, HEAP);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pto_t q;
		uint64_t args[3], i;
		int bad = 0;

		if (pto_t_open(&q, 64, HEAP, 64))
			_exit(2);
		for (i = 0; i < HEAP; i++)
			bad |= q.heap[i];
		memset(q.heap, 0x11, HEAP);
		/* a copy from just beyond its own heap must fail */
		pto_t_bind(&q, 1, PTO_UAPI_WORKER_VECTOR, PTO_OP_COPY);
		args[0] = 0;
		args[1] = HEAP;
		args[2] = 64;
		if (pto_t_run(&q, core_of_type(&q, PTO_UAPI_WORKER_VECTOR), 1,
			      args, 3) != -EFAULT)
			bad |= 0x100;
		if (write(pipefd[1], "x", 1) != 1)
			bad |= 0x200;
		_exit(bad ? 1 : 0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child saw foreign memory (status %#x)", status);
	EXPECT_EQ(0xa5, p.heap[0]);
	EXPECT_EQ(0xa5, p.heap[HEAP - 1]);
	close(pipefd[0]);
	pto_t_close(&p);
}

/* ---- execution ----------------------------------------------------------------- */

TEST(ops_ioctl)
{
	uint32_t n = 256, i, *u = NULL;
	uint32_t vcore;
	uint64_t args[6];
	float *a, *b, *d;
	struct pto_completion c = { 0 };
	struct pto_t p;
	uint64_t id;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	vcore = core_of_type(&p, PTO_UAPI_WORKER_VECTOR);
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_VECTOR,
				PTO_OP_FILL_U32));
	ASSERT_EQ(0, pto_t_bind(&p, 2, PTO_UAPI_WORKER_VECTOR,
				PTO_OP_ADD_F32));
	ASSERT_EQ(0, pto_t_bind(&p, 3, PTO_UAPI_WORKER_VECTOR,
				PTO_OP_MUL_F32));

	args[0] = 4096;
	args[1] = 0xdeadbeef;
	args[2] = n * 4;
	id = pto_t_queue(&p, vcore, 1, args, 3);
	ASSERT_EQ(0, pto_t_kick(&p, vcore));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(id, c.task_id);
	EXPECT_EQ(vcore, c.core);
	EXPECT_EQ(0, c.status);
	EXPECT_EQ((uint32_t)(id + 1), c.seq);
	EXPECT_LE(c.start_ns, c.end_ns);
	EXPECT_EQ(PTO_CORE_FIN, pto_t_regs(&p, vcore)->status);
	EXPECT_EQ(id, pto_t_regs(&p, vcore)->status_task);
	EXPECT_EQ(1, pto_t_regs(&p, vcore)->consumed);
	u = (uint32_t *)(p.heap + 4096);
	for (i = 0; i < n; i++)
		if (u[i] != 0xdeadbeef)
			break;
	EXPECT_EQ(n, i);
	EXPECT_EQ(0, u[n]);

	a = (float *)(p.heap + 8192);
	b = a + n;
	d = b + n;
	for (i = 0; i < n; i++) {
		a[i] = f32(0x3f800000 + i * 7919);
		b[i] = f32(0x40000000 - i * 104729);
	}
	args[0] = (uint8_t *)d - p.heap;
	args[1] = (uint8_t *)a - p.heap;
	args[2] = (uint8_t *)b - p.heap;
	args[3] = n;
	EXPECT_EQ(0, pto_t_run(&p, vcore, 2, args, 4));
	for (i = 0; i < n; i++)
		if (d[i] != a[i] + b[i])
			break;
	EXPECT_EQ(n, i);
	EXPECT_EQ(0, pto_t_run(&p, vcore, 3, args, 4));
	for (i = 0; i < n; i++)
		if (d[i] != a[i] * b[i])
			break;
	EXPECT_EQ(n, i);
	pto_t_close(&p);
}

/* GEMM on the cube core equals the reference loop, bit for bit. */
TEST(gemm_bit_exact)
{
	const uint32_t M = 16, N = 24, K = 20;
	float *A, *B, *C, *R;
	uint64_t args[6];
	struct pto_t p;
	uint32_t i, j, k, bad = 0;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&p, 7, PTO_UAPI_WORKER_CUBE,
				PTO_OP_GEMM_F32));
	A = (float *)p.heap;
	B = A + M * K;
	C = B + K * N;
	R = malloc(M * N * sizeof(float));
	ASSERT_NE(NULL, R);
	srand(42);
	for (i = 0; i < M * K; i++)
		A[i] = (float)rand() / RAND_MAX - 0.5f;
	for (i = 0; i < K * N; i++)
		B[i] = (float)rand() / RAND_MAX - 0.5f;
	for (i = 0; i < M * N; i++)
		R[i] = C[i] = (float)i / 7.0f;
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			float acc = R[i * N + j];

			for (k = 0; k < K; k++)
				acc += A[i * K + k] * B[k * N + j];
			R[i * N + j] = acc;
		}
	args[0] = (uint8_t *)C - p.heap;
	args[1] = 0;
	args[2] = (uint8_t *)B - p.heap;
	args[3] = M;
	args[4] = N;
	args[5] = K;
	EXPECT_EQ(0, pto_t_run(&p, core_of_type(&p, PTO_UAPI_WORKER_CUBE), 7,
			       args, 6));
	for (i = 0; i < M * N; i++)
		bad += memcmp(&C[i], &R[i], 4) != 0;
	EXPECT_EQ(0, bad);
	free(R);
	pto_t_close(&p);
}

/* ---- tensor views ------------------------------------------------------- */

/* A task with views on ring 0; returns the completion status. */
static int run_views(struct pto_t *p, uint32_t core, uint32_t kid,
		     const uint64_t *args, uint32_t nargs, uint16_t flags,
		     uint32_t view_mask)
{
	struct pto_completion c = { 0 };
	uint64_t h = pto_t_queue_flags(p, 0, core, kid, args, nargs, flags,
				       view_mask);
	int ret = pto_t_kick(p, core);

	if (ret)
		return ret;
	ret = pto_t_complete(p, &c, 10 * SEC);
	if (ret)
		return ret;
	return c.task_id == h ? c.status : -EILSEQ;
}

/* A 2-D f32 view at heap offset addr, written at heap offset at. */
static uint64_t put_view(struct pto_t *p, uint64_t at, uint64_t addr,
			 uint64_t rows, uint64_t cols, uint64_t rs, uint64_t cs)
{
	struct pto_view_desc v = {
		.addr = addr, .ndim = 2, .dtype = PTO_DTYPE_F32,
		.elem_size = 4, .shape = { rows, cols, 1, 1 },
		.stride = { rs, cs, 0, 0 },
	};

	memcpy(p->heap + at, &v, sizeof(v));
	return at;
}

static float frand(void)
{
	return (float)rand() / RAND_MAX - 0.5f;
}

/*
 * GEMM on tiles of row-major matrices (stride [ld, 1]), then with A and B
 * given as transposed views (stride [1, ld]), against the same op on
 * contiguous copies, bit for bit; C's elements around its tile are left
 * alone.  Large enough that the driver cuts both into many sections.
 */
TEST(views_gemm_tile_and_transposed)
{
	/* the matrices: LD x LD each, row-major; the copies after them */
	const uint64_t LD = 96, M = 40, N = 48, K = 56, R0 = 7, C0 = 13;
	const uint64_t MAT = LD * LD * 4;
	uint64_t xa = 0, xb = MAT, xc = 2 * MAT, ca = 3 * MAT;
	uint64_t cb = ca + M * K * 4, cc = cb + K * N * 4;
	uint64_t desc = cc + M * N * 4, args[6];
	float *X, *Cc, *Ac, *Bc, *C;
	uint32_t core, bad, outside, i, j, pass;
	struct pto_t p;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_NE(0, p.s.features & PTO_FEATURE_VIEWS);
	ASSERT_EQ(0, pto_t_bind(&p, 7, PTO_UAPI_WORKER_CUBE,
				PTO_OP_GEMM_F32));
	core = core_of_type(&p, PTO_UAPI_WORKER_CUBE);
	X = (float *)p.heap;
	C = (float *)(p.heap + xc);
	Ac = (float *)(p.heap + ca);
	Bc = (float *)(p.heap + cb);
	Cc = (float *)(p.heap + cc);
	srand(11);
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < 3 * LD * LD; i++)
			X[i] = frand();
		/* contiguous copies of the operands the views name */
		for (i = 0; i < M; i++)
			for (j = 0; j < K; j++)
				Ac[i * K + j] = pass ?
					X[(C0 + j) * LD + R0 + i] :
					X[(R0 + i) * LD + C0 + j];
		for (i = 0; i < K; i++)
			for (j = 0; j < N; j++)
				Bc[i * N + j] = pass ?
					X[MAT / 4 + (C0 + j) * LD + R0 + i] :
					X[MAT / 4 + (R0 + i) * LD + C0 + j];
		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++)
				Cc[i * N + j] = C[(R0 + i) * LD + C0 + j];
		/* the op on the copies */
		args[0] = cc;
		args[1] = ca;
		args[2] = cb;
		args[3] = M;
		args[4] = N;
		args[5] = K;
		ASSERT_EQ(0, pto_t_run(&p, core, 7, args, 6));
		/* the op on the views: tiles, or tiles of transposes */
		args[0] = put_view(&p, desc, xc + (R0 * LD + C0) * 4, M, N,
				   LD, 1);
		if (pass) {
			args[1] = put_view(&p, desc + 128,
					   xa + (C0 * LD + R0) * 4, M, K, 1,
					   LD);
			args[2] = put_view(&p, desc + 256,
					   xb + (C0 * LD + R0) * 4, K, N, 1,
					   LD);
		} else {
			args[1] = put_view(&p, desc + 128,
					   xa + (R0 * LD + C0) * 4, M, K, LD,
					   1);
			args[2] = put_view(&p, desc + 256,
					   xb + (R0 * LD + C0) * 4, K, N, LD,
					   1);
		}
		EXPECT_EQ(0, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS,
				       7));
		bad = 0;
		outside = 0;
		for (i = 0; i < LD; i++)
			for (j = 0; j < LD; j++) {
				bool in = i >= R0 && i < R0 + M && j >= C0 &&
					  j < C0 + N;
				float *e = &C[i * LD + j];

				if (in)
					bad += memcmp(e, &Cc[(i - R0) * N +
							    j - C0], 4) != 0;
				else
					outside += memcmp(e, &X[2 * LD * LD +
							      i * LD + j],
							  4) != 0;
			}
		EXPECT_EQ(0, bad) TH_LOG("pass %u: C's tile differs", pass);
		EXPECT_EQ(0, outside) TH_LOG("pass %u: written outside", pass);
	}
	pto_t_close(&p);
}

/*
 * What a core refuses of a task with views: the feature not enabled, a
 * view past the arguments, pads, PTO_TASK_F_NO_DISPATCH, bad
 * descriptors; the context stays usable.
 */
TEST(views_refused)
{
	uint64_t args[6] = { 0, 4096, 8192, 4, 4, 4 }, v;
	struct pto_setup s;
	uint32_t core;
	struct pto_t p;
	uint64_t h;
	struct pto_completion c = { 0 };

	/* a context that did not enable PTO_FEATURE_VIEWS */
	pto_t_setup_args(&s, 64, HEAP, 64);
	s.features = PTO_FEATURE_POLL;
	ASSERT_EQ(0, pto_t_open_setup(&p, &s));
	ASSERT_EQ(0, pto_t_bind(&p, 7, PTO_UAPI_WORKER_CUBE,
				PTO_OP_GEMM_F32));
	core = core_of_type(&p, PTO_UAPI_WORKER_CUBE);
	v = put_view(&p, 16384, 4096, 4, 4, 4, 1);
	args[1] = v;
	EXPECT_EQ(-EINVAL, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS,
				     2));
	EXPECT_EQ(0, run_views(&p, core, 7, (uint64_t[]){ 0, 4096, 8192, 4,
			       4, 4 }, 6, 0, 0));
	pto_t_close(&p);

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&p, 7, PTO_UAPI_WORKER_CUBE,
				PTO_OP_GEMM_F32));
	core = core_of_type(&p, PTO_UAPI_WORKER_CUBE);
	v = put_view(&p, 16384, 4096, 4, 4, 4, 1);
	args[1] = v;
	EXPECT_EQ(0, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS, 2));
	/* without PTO_TASK_F_VIEWS the mask means nothing: a plain GEMM */
	args[1] = 4096;
	EXPECT_EQ(0, run_views(&p, core, 7, args, 6, 0, 2));
	args[1] = v;
	/* a view past the task's arguments, or on a scalar */
	EXPECT_EQ(-EINVAL, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS,
				     2 | 1u << 6));
	EXPECT_EQ(-EINVAL, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS,
				     2 | 1u << 3));
	/* unknown flags, PTO_TASK_F_NO_DISPATCH */
	EXPECT_EQ(-EINVAL, run_views(&p, core, 7, args, 6,
				     PTO_TASK_F_VIEWS | 1u << 15, 2));
	EXPECT_EQ(-EINVAL, run_views(&p, core, 7, args, 6,
				     PTO_TASK_F_NO_DISPATCH, 0));
	/* non-zero pads */
	h = pto_t_queue_flags(&p, 0, core, 7, args, 6, PTO_TASK_F_VIEWS, 2);
	pto_t_desc(&p, h)->__pad1 = 1;
	ASSERT_EQ(0, pto_t_kick(&p, core));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(-EINVAL, c.status);
	pto_t_desc(&p, h)->__pad1 = 0;
	h = pto_t_queue_flags(&p, 0, core, 7, args, 6, PTO_TASK_F_VIEWS, 2);
	pto_t_desc(&p, h)->__pad0[2] = 1;
	ASSERT_EQ(0, pto_t_kick(&p, core));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(-EINVAL, c.status);
	pto_t_desc(&p, h)->__pad0[2] = 0;
	/* descriptors: of the wrong shape, type, outside the heap */
	put_view(&p, 16384, 4096, 4, 3, 4, 1);
	EXPECT_EQ(-EINVAL, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS,
				     2));
	put_view(&p, 16384, 4096, 4, 4, 4, 1);
	((struct pto_view_desc *)(p.heap + 16384))->dtype = PTO_DTYPE_I32;
	EXPECT_EQ(-EINVAL, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS,
				     2));
	put_view(&p, 16384, HEAP - 32, 4, 4, 4, 1);
	EXPECT_EQ(-EFAULT, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS,
				     2));
	args[1] = HEAP - 16;
	EXPECT_EQ(-EFAULT, run_views(&p, core, 7, args, 6, PTO_TASK_F_VIEWS,
				     2));
	/* and the context still runs tasks */
	args[1] = 4096;
	EXPECT_EQ(0, run_views(&p, core, 7, args, 6, 0, 0));
	pto_t_close(&p);
}

TEST(bad_addresses_and_descriptors)
{
	uint32_t vcore;
	uint64_t args[6], id;
	struct pto_completion c = { 0 };
	struct pto_t p;
	uint32_t *dst;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	vcore = core_of_type(&p, PTO_UAPI_WORKER_VECTOR);
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_VECTOR, PTO_OP_COPY));
	ASSERT_EQ(0, pto_t_bind(&p, 2, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP));
	dst = (uint32_t *)p.heap;
	dst[0] = 0x12345678;
	/* source runs past the heap end: -EFAULT, destination untouched */
	args[0] = 0;
	args[1] = HEAP - 8;
	args[2] = 64;
	EXPECT_EQ(-EFAULT, pto_t_run(&p, vcore, 1, args, 3));
	EXPECT_EQ(0x12345678, dst[0]);
	args[1] = ~0ull - 8;
	EXPECT_EQ(-EFAULT, pto_t_run(&p, vcore, 1, args, 3));
	args[1] = 64;
	args[2] = ~0ull;
	EXPECT_EQ(-EFAULT, pto_t_run(&p, vcore, 1, args, 3));
	/* unbound kernel, kernel of another worker type, too many args */
	EXPECT_EQ(-EINVAL, pto_t_run(&p, vcore, 9, args, 0));
	EXPECT_EQ(-EINVAL, pto_t_run(&p, vcore, 2, args, 0));
	EXPECT_EQ(-EINVAL, pto_t_run(&p, vcore, 1, args, PTO_MAX_ARGS) ?
		  -EINVAL : 0);
	/* descriptor whose task_id does not match the queued handle */
	id = pto_t_queue(&p, vcore, 1, args, 3);
	pto_t_desc(&p, id)->task_id = id + 64;
	ASSERT_EQ(0, pto_t_kick(&p, vcore));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(-EINVAL, c.status);
	/* nargs beyond PTO_MAX_ARGS */
	id = pto_t_queue(&p, vcore, 1, args, 3);
	pto_t_desc(&p, id)->nargs = PTO_MAX_ARGS + 1;
	ASSERT_EQ(0, pto_t_kick(&p, vcore));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(-EINVAL, c.status);
	/* a matrix task too big to run with preemption off */
	ASSERT_EQ(0, pto_t_bind(&p, 3, PTO_UAPI_WORKER_CUBE,
				PTO_OP_GEMM_F32));
	args[0] = 0;
	args[1] = 0;
	args[2] = 0;
	args[3] = 1024;
	args[4] = 1024;
	args[5] = 1024;
	EXPECT_EQ(-E2BIG, pto_t_run(&p, core_of_type(&p, 0), 3, args, 6));
	/* failed tasks do not fail the context */
	EXPECT_EQ(0, pto_t_run(&p, core_of_type(&p, 0), 2, args, 0));
	pto_t_close(&p);
}

/*
 * A handle naming a ring the context did not set up fails its task with
 * -EINVAL and that handle, and nothing else: even when a descriptor with
 * that task_id sits in ring 0's slot of the same sequence number, which a
 * lookup that ignored the ring would find.  The context stays usable.
 */
TEST(bad_ring_handle)
{
	static const uint32_t bad_rings[] = {
		2, 3, PTO_MAX_RINGS, 0x7f, 0xff,
	};
	struct pto_completion c = { 0 };
	struct pto_setup s;
	struct pto_t p;
	uint32_t vcore, i;
	uint64_t h, fill[3];

	pto_t_setup_args(&s, 64, HEAP, 64);
	s.nrings = 2;
	pto_t_setup_ring(&s, 1, 64, HEAP / 4);
	ASSERT_EQ(0, pto_t_open_setup(&p, &s));
	vcore = core_of_type(&p, PTO_UAPI_WORKER_VECTOR);
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_VECTOR,
				PTO_OP_FILL_U32));
	fill[0] = 0;
	fill[1] = 0xbad;
	fill[2] = 64;
	for (i = 0; i < ARRAY_SIZE(bad_rings); i++) {
		h = PTO_TASK_HANDLE(bad_rings[i], 5);
		/* a decoy: ring 0's slot 5 claims the bad handle */
		p.desc[0][5].kernel_id = 1;
		p.desc[0][5].nargs = 3;
		memcpy(p.desc[0][5].args, fill, sizeof(fill));
		p.desc[0][5].task_id = h;
		pto_t_push(&p, vcore, h);
		ASSERT_EQ(0, pto_t_kick(&p, vcore));
		ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
		EXPECT_EQ(h, c.task_id);
		EXPECT_EQ(-EINVAL, c.status)
			TH_LOG("ring %u: status %d", bad_rings[i], c.status);
		EXPECT_EQ(0, *(uint32_t *)p.heap) TH_LOG("the decoy ran");
	}
	/* queue entry 0 (no handle at all) fails the same way */
	pto_t_push(&p, vcore, ~0ull);
	ASSERT_EQ(0, pto_t_kick(&p, vcore));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(-EINVAL, c.status);
	/* not a failure of the context: both rings still run tasks */
	fill[1] = 0x600d;
	EXPECT_EQ(0, pto_t_run(&p, vcore, 1, fill, 3));
	EXPECT_EQ(0x600d, *(uint32_t *)p.heap);
	h = pto_t_queue_ring(&p, 1, vcore, 1, fill, 3);
	ASSERT_EQ(0, pto_t_kick(&p, vcore));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(h, c.task_id);
	EXPECT_EQ(0, c.status);
	pto_t_close(&p);
}

/*
 * Four rings with windows of 64, 32, 16 and 8 descriptors: every round
 * queues one task per ring with the same slot index in every ring, so
 * each core must take the descriptor of the handle's own ring.  Each task
 * fills a word with a value naming its ring and round; ring 3 starts just
 * below the end of the sequence space and wraps around it.
 */
TEST(multi_ring_tasks)
{
	const uint32_t rounds = 40, words = 64;
	struct pto_completion c = { 0 };
	uint64_t args[3], h[PTO_MAX_RINGS];
	uint32_t r, k, round, seen, bad = 0, *out;
	struct pto_setup s;
	struct pto_t p;

	multi_ring_setup(&s);
	ASSERT_EQ(0, pto_t_open_setup(&p, &s));
	ASSERT_LE(2, p.info.cores[PTO_UAPI_WORKER_VECTOR]);
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_VECTOR,
				PTO_OP_FILL_U32));
	p.next_seq[1] = 7;
	p.next_seq[3] = PTO_TASK_SEQ_MASK - 5;
	out = (uint32_t *)(p.heap + p.s.ring[0].heap_offset);
	for (round = 0; round < rounds; round++) {
		for (r = 0; r < PTO_MAX_RINGS; r++) {
			args[0] = (uint8_t *)&out[r * words + round % words] -
				  p.heap;
			args[1] = (r + 1) << 16 | round;
			args[2] = 4;
			/* two tasks per vector core */
			h[r] = pto_t_queue_ring(&p, r,
				core_of_type(&p, PTO_UAPI_WORKER_VECTOR) + r % 2,
				1, args, 3);
			ASSERT_EQ(r, PTO_TASK_RING(h[r]));
		}
		ASSERT_EQ(0, pto_t_kick(&p, PTO_KICK_ALL));
		for (seen = 0, k = 0; k < PTO_MAX_RINGS; k++) {
			ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
			EXPECT_EQ(0, c.status)
				TH_LOG("round %u handle %#llx: status %d",
				       round, (unsigned long long)c.task_id,
				       c.status);
			r = PTO_TASK_RING(c.task_id);
			ASSERT_GT(PTO_MAX_RINGS, r);
			EXPECT_EQ(h[r], c.task_id);
			seen |= 1u << r;
		}
		EXPECT_EQ((1u << PTO_MAX_RINGS) - 1, seen);
		for (r = 0; r < PTO_MAX_RINGS; r++)
			bad += out[r * words + round % words] !=
			       ((r + 1) << 16 | round);
	}
	EXPECT_EQ(0, bad);
	/* ring 3 wrapped its sequence numbers and kept its ring */
	EXPECT_GT(PTO_TASK_SEQ_MASK - 5, PTO_TASK_SEQ(h[3]));
	EXPECT_EQ(3, PTO_TASK_RING(h[3]));
	pto_t_close(&p);
}

/* Many NOPs on every core, PTO_CORE_QUEUE_SLOTS deep: all complete once. */
static void run_many(struct __test_metadata *_metadata, struct pto_t *p,
		     int mode)
{
	const uint64_t total = 4000;
	uint64_t queued = 0, done = 0, oldest = 0;
	uint8_t *seen;
	uint32_t core, t, *outstanding;
	struct io_uring ring;
	struct pto_completion c = { 0 };

	seen = calloc(total, 1);
	outstanding = calloc(p->s.num_cores, sizeof(*outstanding));
	ASSERT_TRUE(seen && outstanding);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		if (p->info.cores[t])
			ASSERT_EQ(0, pto_t_bind(p, t, t, PTO_OP_NOP));
	if (mode == 1)
		ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	while (done < total) {
		for (core = 0; core < p->s.num_cores && queued < total; core++) {
			uint32_t type = 0;

			while (type + 1 < PTO_UAPI_NUM_WORKER_TYPES &&
			       core >= p->first_core[type + 1])
				type++;
			if (outstanding[core] == PTO_CORE_QUEUE_SLOTS)
				continue;
			/* in-flight ids must fit the ring and the window */
			if (queued - done >= p->cring->size ||
			    queued - oldest >= p->s.ring[0].task_window)
				break;
			pto_t_queue(p, core, type, NULL, 0);
			outstanding[core]++;
			queued++;
		}
		ASSERT_EQ(0, pto_t_kick(p, PTO_KICK_ALL));
		if (!pto_t_reap(p, &c)) {
			if (mode == 0) {
				ASSERT_LE(0, pto_t_wait(p, 5 * SEC));
			} else if (mode == 1) {
				struct io_uring_sqe *sqe;
				struct io_uring_cqe *cqe;
				struct pto_uring_wait w = {
					.cring_head = p->head,
					.timeout_ms = 5000,
				};

				sqe = io_uring_get_sqe(&ring);
				io_uring_prep_rw(IORING_OP_URING_CMD, sqe,
						 p->fd, NULL, 0, 0);
				sqe->cmd_op = PTO_URING_CMD_WAIT;
				memcpy(sqe->cmd, &w, sizeof(w));
				ASSERT_EQ(1, io_uring_submit(&ring));
				ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
				ASSERT_LT(0, cqe->res);
				io_uring_cqe_seen(&ring, cqe);
			} else {
				struct pollfd pfd = { p->fd, POLLIN, 0 };

				ASSERT_EQ(1, poll(&pfd, 1, 5000));
				ASSERT_TRUE(pfd.revents & POLLIN);
			}
			continue;
		}
		do {
			ASSERT_EQ(0, c.status)
				TH_LOG("task %llu core %u: desc id %llu kid %u nargs %u",
				       (unsigned long long)c.task_id, c.core,
				       (unsigned long long)pto_t_desc(p, c.task_id)->task_id,
				       pto_t_desc(p, c.task_id)->kernel_id,
				       pto_t_desc(p, c.task_id)->nargs);
			ASSERT_GT(total, c.task_id);
			ASSERT_EQ(0, seen[c.task_id]);
			seen[c.task_id] = 1;
			outstanding[c.core]--;
			done++;
		} while (pto_t_reap(p, &c));
		while (oldest < total && seen[oldest])
			oldest++;
	}
	EXPECT_EQ(total, done);
	if (mode == 1)
		io_uring_queue_exit(&ring);
	free(seen);
	free(outstanding);
}

TEST(dispatch_ioctl)
{
	struct pto_t p;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 16));
	run_many(_metadata, &p, 0);
	pto_t_close(&p);
}

TEST(dispatch_io_uring)
{
	struct pto_t p;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 16));
	run_many(_metadata, &p, 1);
	pto_t_close(&p);
}

TEST(dispatch_poll)
{
	struct pto_t p;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 16));
	run_many(_metadata, &p, 2);
	pto_t_close(&p);
}

/* KICK as an io_uring command, and WAIT's validation and timeout. */
TEST(io_uring_kick_and_timeout)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct pto_kick k = { .core = 0 };
	struct pto_uring_wait w = { .timeout_ms = 50 };
	struct pto_completion c = { 0 };
	struct pto_t p;
	uint64_t t0;
	uint64_t id;

	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 16));
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP));

	/* nothing in flight: WAIT completes with 0 after its timeout */
	t0 = pto_t_now_ns();
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, p.fd, NULL, 0, 0);
	sqe->cmd_op = PTO_URING_CMD_WAIT;
	memcpy(sqe->cmd, &w, sizeof(w));
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(0, cqe->res);
	EXPECT_LE(40000000ull, pto_t_now_ns() - t0);
	io_uring_cqe_seen(&ring, cqe);

	/* invalid flags and an unknown command */
	w.flags = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, p.fd, NULL, 0, 0);
	sqe->cmd_op = PTO_URING_CMD_WAIT;
	memcpy(sqe->cmd, &w, sizeof(w));
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, p.fd, NULL, 0, 0);
	sqe->cmd_op = 0x77;
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&ring, cqe);

	/* KICK through io_uring runs the queued task */
	id = pto_t_queue(&p, 0, 1, NULL, 0);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, p.fd, NULL, 0, 0);
	sqe->cmd_op = PTO_URING_CMD_KICK;
	memcpy(sqe->cmd, &k, sizeof(k));
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(0, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	ASSERT_EQ(0, pto_t_complete(&p, &c, 10 * SEC));
	EXPECT_EQ(id, c.task_id);
	io_uring_queue_exit(&ring);
	pto_t_close(&p);
}

/*
 * Contexts sharing a device are served side by side: while one context
 * keeps every cube core queue full of 1 ms tasks, another's single tasks
 * on the same cores still complete promptly.  A device that serialized
 * its contexts (a lock held while executing, one worker per device)
 * would hold them behind the hog's stream.
 */
TEST(fairness_between_contexts)
{
	uint64_t spin[1] = { 1000000 }, worst = 0, t0, el;
	struct pto_completion c = { 0 };
	struct pto_t hog, p;
	uint32_t i, core, queued = 0;

	ASSERT_EQ(0, pto_t_open(&hog, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&hog, 1, PTO_UAPI_WORKER_CUBE,
				PTO_OP_SPIN_NS));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP));
	for (i = 0; i < 20; i++) {
		/* refill the hog: every cube core PTO_CORE_QUEUE_SLOTS deep */
		while (pto_t_reap(&hog, &c))
			queued--;
		for (core = 0; core < hog.info.cores[0]; core++)
			while (pto_t_regs(&hog, core)->doorbell -
			       pto_t_regs(&hog, core)->consumed <
			       PTO_CORE_QUEUE_SLOTS &&
			       queued < 32) {
				pto_t_queue(&hog, core, 1, spin, 1);
				queued++;
			}
		ASSERT_EQ(0, pto_t_kick(&hog, PTO_KICK_ALL));
		t0 = pto_t_now_ns();
		ASSERT_EQ(0, pto_t_run(&p, i % p.info.cores[0], 1, NULL, 0));
		el = pto_t_now_ns() - t0;
		if (el > worst)
			worst = el;
	}
	/* the hog queues at most 4 tasks of 1 ms ahead per core */
	EXPECT_GT(2 * SEC, worst) TH_LOG("worst round trip %llu ns",
					 (unsigned long long)worst);
	pto_t_close(&p);
	pto_t_close(&hog);
}

/* ---- timeouts, teardown, removal -------------------------------------------- */

#define TIMEOUT_PARAM "/sys/module/pto/parameters/task_timeout_ms"

TEST(task_timeout)
{
	uint64_t args[1] = { 30 * SEC }, t0, el, h;
	char old[32], state[32];
	struct pto_completion c = { 0 };
	struct pto_kick k = { .core = 0 };
	struct pto_t p;

	NEED_ROOT();

	ASSERT_EQ(0, sysfs_read(TIMEOUT_PARAM, old, sizeof(old)));
	ASSERT_EQ(0, sysfs_write(TIMEOUT_PARAM, "200"));
	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 16));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_SPIN_NS));
	t0 = pto_t_now_ns();
	pto_t_queue(&p, 0, 1, args, 1);
	ASSERT_EQ(0, pto_t_kick(&p, 0));
	ASSERT_EQ(0, pto_t_complete(&p, &c, 20 * SEC));
	el = pto_t_now_ns() - t0;
	sysfs_write(TIMEOUT_PARAM, old);
	EXPECT_EQ(-ETIMEDOUT, c.status);
	EXPECT_LE(150000000ull, el);
	EXPECT_GT(10 * SEC, el);
	/* the context is failed: KICK says -EIO, fdinfo says failed */
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_KICK, &k));
	EXPECT_EQ(EIO, errno);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-state", state, sizeof(state)));
	EXPECT_STREQ("failed", state);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-tasks-failed", state,
				sizeof(state)));
	EXPECT_STREQ("1", state);
	/*
	 * Queued now, on a core asleep since the failure: the refused KICK
	 * still wakes it, and the task completes cancelled, not running
	 * (libpto's next run waited for it for ever).
	 */
	t0 = pto_t_now_ns();
	while (!pto_t_regs(&p, 0)->core_waiting &&
	       pto_t_now_ns() - t0 < 10 * SEC)
		usleep(1000);
	ASSERT_TRUE(pto_t_regs(&p, 0)->core_waiting);
	h = pto_t_queue(&p, 0, 1, args, 1);
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_KICK, &k));
	EXPECT_EQ(EIO, errno);
	/* a failed context's WAIT returns at once: look until a deadline */
	t0 = pto_t_now_ns();
	while (!pto_t_reap(&p, &c) && pto_t_now_ns() - t0 < 10 * SEC)
		usleep(1000);
	EXPECT_EQ(h, c.task_id);
	EXPECT_EQ(-ECANCELED, c.status);
	pto_t_close(&p);
}

TEST(close_with_tasks_in_flight)
{
	uint64_t args[1] = { 20 * SEC }, t0;
	uint32_t core, i;
	long before;
	struct pto_t p;

	before = sysfs_long("/sys/class/pto/pto0/contexts");
	ASSERT_EQ(0, pto_t_open(&p, 64, HEAP, 64));
	EXPECT_EQ(before + 1, sysfs_long("/sys/class/pto/pto0/contexts"));
	for (i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++)
		if (p.info.cores[i])
			ASSERT_EQ(0, pto_t_bind(&p, i, i, PTO_OP_SPIN_NS));
	for (core = 0; core < p.s.num_cores; core++) {
		uint32_t type = 0;

		while (type + 1 < PTO_UAPI_NUM_WORKER_TYPES &&
		       core >= p.first_core[type + 1])
			type++;
		for (i = 0; i < PTO_CORE_QUEUE_SLOTS; i++)
			pto_t_queue(&p, core, type, args, 1);
	}
	ASSERT_EQ(0, pto_t_kick(&p, PTO_KICK_ALL));
	t0 = pto_t_now_ns();
	pto_t_close(&p);
	/* the spinning tasks are cancelled, not waited for */
	EXPECT_GT(5 * SEC, pto_t_now_ns() - t0);
	EXPECT_EQ(before, sysfs_wait_for("/sys/class/pto/pto0/contexts",
					 before, 5000));
}

TEST(sigkill_with_pending_uring_wait)
{
	int pipefd[2], status;
	long before;
	uint64_t t0;
	pid_t pid;
	char c;

	before = sysfs_long("/sys/class/pto/pto0/contexts");
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pto_uring_wait w = { .timeout_ms = 60000 };
		struct io_uring_sqe *sqe;
		struct io_uring ring;
		struct pto_t p;

		if (pto_t_open(&p, 64, HEAP, 16) ||
		    io_uring_queue_init(4, &ring, 0))
			_exit(2);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, p.fd, NULL, 0, 0);
		sqe->cmd_op = PTO_URING_CMD_WAIT;
		memcpy(sqe->cmd, &w, sizeof(w));
		if (io_uring_submit(&ring) != 1)
			_exit(3);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_EQ(before + 1, sysfs_long("/sys/class/pto/pto0/contexts"));
	t0 = pto_t_now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	/* the 60 s WAIT must not hold up the exit or leak the context */
	EXPECT_GT(10 * SEC, pto_t_now_ns() - t0);
	EXPECT_EQ(before, sysfs_wait_for("/sys/class/pto/pto0/contexts",
					 before, 10000));
	close(pipefd[0]);
}

TEST(device_add_remove_with_open_context)
{
	struct pto_info info = { 0 };
	struct pto_uring_wait w = { .timeout_ms = 30000 };
	struct pto_kick k = { .core = 0 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct pto_t p;
	char buf[64];
	uint64_t t0;
	int ret;

	NEED_ROOT();

	sysfs_write("/sys/class/pto/del_device", "7");	/* leftovers */
	ASSERT_EQ(0, sysfs_write("/sys/class/pto/new_device", "7 1 2 0 1"));
	EXPECT_EQ(-EEXIST, sysfs_write("/sys/class/pto/new_device", "7"));
	EXPECT_EQ(-EINVAL, sysfs_write("/sys/class/pto/new_device",
				       "8 0 0 0 0"));
	ASSERT_EQ(0, sysfs_read("/sys/class/pto/pto7/cores", buf, sizeof(buf)));
	EXPECT_STREQ("1 2 0 1\n", buf);
	setenv("PTO_TEST_DEV", "/dev/pto7", 1);
	ret = pto_t_open(&p, 64, HEAP, 16);
	unsetenv("PTO_TEST_DEV");
	ASSERT_EQ(0, ret);
	EXPECT_EQ(2, p.info.cores[1]);
	EXPECT_EQ(4, p.s.num_cores);
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_VECTOR, PTO_OP_NOP));
	EXPECT_EQ(0, pto_t_run(&p, 1, 1, NULL, 0));

	/* a parked io_uring WAIT completes with -ENODEV on removal */
	w.cring_head = p.head;
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, p.fd, NULL, 0, 0);
	sqe->cmd_op = PTO_URING_CMD_WAIT;
	memcpy(sqe->cmd, &w, sizeof(w));
	ASSERT_EQ(1, io_uring_submit(&ring));
	EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&ring, &cqe));

	t0 = pto_t_now_ns();
	ASSERT_EQ(0, sysfs_write("/sys/class/pto/del_device", "7"));
	EXPECT_EQ(-ENOENT, sysfs_write("/sys/class/pto/del_device", "7"));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(-ENODEV, cqe->res);
	EXPECT_GT(5 * SEC, pto_t_now_ns() - t0);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_GET_INFO, &info));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_KICK, &k));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, ioctl(p.fd, PTO_IOCTL_WAIT, &(struct pto_wait){ 0 }));
	EXPECT_EQ(ENODEV, errno);
	/* the mappings stay valid memory until unmapped */
	p.heap[0] = 1;
	EXPECT_EQ(1, p.heap[0]);
	EXPECT_EQ(-1, access("/dev/pto7", F_OK));
	pto_t_close(&p);
}

TEST(module_unload_refused_while_open)
{
	int fd = open(pto_t_dev(), O_RDWR);

	NEED_ROOT();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, syscall(__NR_delete_module, "pto", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY)
		TH_LOG("delete_module: errno %d", errno);
	EXPECT_EQ(0, access("/sys/module/pto", F_OK));
	close(fd);
}

TEST(fdinfo_contents)
{
	char v[64], path[64], id1[64], id2[64];
	struct pto_t p, q;
	uint32_t i;
	char want[64];

	ASSERT_EQ(0, pto_t_open(&p, 128, HEAP, 64));
	ASSERT_EQ(0, pto_t_open(&q, 64, HEAP, 64));
	ASSERT_EQ(0, pto_t_bind(&p, 1, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, pto_t_run(&p, 0, 1, NULL, 0));
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-driver", v, sizeof(v)));
	EXPECT_STREQ("pto", v);
	snprintf(path, sizeof(path), "%s", pto_t_dev() + 5);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-device", v, sizeof(v)));
	EXPECT_STREQ(path, v);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-client-id", id1, sizeof(id1)));
	ASSERT_EQ(0, fdinfo_get(q.fd, "pto-client-id", id2, sizeof(id2)));
	EXPECT_STRNE(id1, id2);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-tasks-done", v, sizeof(v)));
	EXPECT_STREQ("5", v);
	ASSERT_EQ(0, fdinfo_get(q.fd, "pto-tasks-done", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-tasks-failed", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-tasks-in-flight", v, sizeof(v)));
	EXPECT_STREQ("0", v);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-state", v, sizeof(v)));
	EXPECT_STREQ("idle", v);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-task-window", v, sizeof(v)));
	EXPECT_STREQ("128", v);
	snprintf(want, sizeof(want), "%u KiB", HEAP / 1024);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-memory-heap", v, sizeof(v)));
	EXPECT_STREQ(want, v);
	snprintf(want, sizeof(want), "%llu KiB",
		 (unsigned long long)p.s.window.size / 1024);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-memory-window", v, sizeof(v)));
	EXPECT_STREQ(want, v);
	snprintf(want, sizeof(want), "%u", p.info.cores[2]);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-engine-capacity-aicpu", v,
				sizeof(v)));
	EXPECT_STREQ(want, v);
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-engine-cube", v, sizeof(v)));
	EXPECT_EQ(0, strcmp(v + strlen(v) - 3, " ns"));
	ASSERT_EQ(0, fdinfo_get(p.fd, "pto-engine-accel", v, sizeof(v)));
	EXPECT_STREQ("0 ns", v);
	pto_t_close(&q);
	pto_t_close(&p);
}

TEST_HARNESS_MAIN
