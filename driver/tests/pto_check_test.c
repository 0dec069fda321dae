// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: every ioctl struct's checks (pto_check.c), field by field and
 * byte by byte, the ioctl numbers and sizes, SETUP's layout at the
 * overflow boundaries, and the mmap offset arithmetic.
 */
#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/prandom.h>
#include <linux/stddef.h>

#include "pto_drv.h"

/* ---- ioctl numbers, sizes and modes ------------------------------------ */

static const unsigned int pto_cmds[] = {
	PTO_IOCTL_GET_INFO, PTO_IOCTL_SETUP, PTO_IOCTL_BIND_OP,
	PTO_IOCTL_KICK, PTO_IOCTL_WAIT,
};

static unsigned int pto_cmd_size(unsigned int cmd, unsigned int size)
{
	return (cmd & ~IOCSIZE_MASK) | (size << _IOC_SIZESHIFT);
}

static void pto_ioctl_known(struct kunit *test)
{
	const fmode_t rw = FMODE_READ | FMODE_WRITE;
	unsigned int i, nr;

	KUNIT_EXPECT_EQ(test, pto_ioctl_count(), ARRAY_SIZE(pto_cmds));
	for (i = 0; i < ARRAY_SIZE(pto_cmds); i++) {
		nr = ~0u;
		KUNIT_EXPECT_EQ(test, pto_ioctl_lookup(pto_cmds[i], rw, &nr), 0);
		KUNIT_EXPECT_EQ(test, nr, i);
	}
}

/* A struct smaller than ABI 3's, 0 included, is refused; larger is fine. */
static void pto_ioctl_sizes(struct kunit *test)
{
	const fmode_t rw = FMODE_READ | FMODE_WRITE;
	unsigned int i, size, min, nr;

	unsigned int cmd;

	for (i = 0; i < ARRAY_SIZE(pto_cmds); i++) {
		min = _IOC_SIZE(pto_cmds[i]);
		for (size = 0; size < min; size++) {
			cmd = pto_cmd_size(pto_cmds[i], size);
			KUNIT_EXPECT_EQ_MSG(test, pto_ioctl_lookup(cmd, rw, &nr),
					    -EINVAL, "cmd %u size %u", i, size);
		}
		cmd = pto_cmd_size(pto_cmds[i], min + 8);
		KUNIT_EXPECT_EQ(test, pto_ioctl_lookup(cmd, rw, &nr), 0);
		cmd = pto_cmd_size(pto_cmds[i], _IOC_SIZEMASK);
		KUNIT_EXPECT_EQ(test, pto_ioctl_lookup(cmd, rw, &nr), 0);
	}
}

static void pto_ioctl_foreign(struct kunit *test)
{
	const fmode_t rw = FMODE_READ | FMODE_WRITE;
	unsigned int i, n, nr, cmd;

	for (n = pto_ioctl_count(); n < 256; n++)
		KUNIT_EXPECT_EQ(test, pto_ioctl_lookup(_IOWR(PTO_IOCTL_BASE, n,
							     struct pto_setup),
						       rw, &nr), -ENOTTY);
	for (i = 0; i < ARRAY_SIZE(pto_cmds); i++) {
		cmd = pto_cmds[i];
		/* another type */
		KUNIT_EXPECT_EQ(test, pto_ioctl_lookup((cmd & ~(_IOC_TYPEMASK << _IOC_TYPESHIFT)) |
						       ('P' << _IOC_TYPESHIFT), rw, &nr),
				-ENOTTY);
		/* every other direction */
		for (n = 0; n < 4; n++) {
			unsigned int other = (cmd & ~(_IOC_DIRMASK << _IOC_DIRSHIFT)) |
					     (n << _IOC_DIRSHIFT);

			if (n == _IOC_DIR(cmd))
				continue;
			KUNIT_EXPECT_EQ(test, pto_ioctl_lookup(other, rw, &nr), -ENOTTY);
		}
	}
}

/* SETUP and BIND_OP need a file opened for reading and writing. */
static void pto_ioctl_modes(struct kunit *test)
{
	static const fmode_t modes[] = { 0, FMODE_READ, FMODE_WRITE,
					 FMODE_READ | FMODE_WRITE };
	unsigned int i, m, nr;
	int want;

	for (i = 0; i < ARRAY_SIZE(pto_cmds); i++) {
		for (m = 0; m < ARRAY_SIZE(modes); m++) {
			want = 0;
			if ((pto_cmds[i] == PTO_IOCTL_SETUP ||
			     pto_cmds[i] == PTO_IOCTL_BIND_OP) &&
			    modes[m] != (FMODE_READ | FMODE_WRITE))
				want = -EBADF;
			KUNIT_EXPECT_EQ_MSG(test, pto_ioctl_lookup(pto_cmds[i], modes[m], &nr),
					    want, "cmd %u mode %u", i, m);
		}
	}
}

/* ---- GET_INFO ------------------------------------------------------------ */

static void pto_info_every_byte(struct kunit *test)
{
	struct pto_info k;
	size_t i;

	memset(&k, 0, sizeof(k));
	KUNIT_EXPECT_EQ(test, pto_info_check(&k), 0);
	for (i = 0; i < sizeof(k); i++) {
		memset(&k, 0, sizeof(k));
		((u8 *)&k)[i] = 0x80;
		KUNIT_EXPECT_EQ_MSG(test, pto_info_check(&k), -EINVAL,
				    "byte %zu", i);
	}
}

/* ---- SETUP ----------------------------------------------------------------- */

static const struct pto_limits pto_test_lim = {
	.max_task_window = 65536,
	.max_dep_pool = 1 << 20,
	.max_heap_size = 256 << 20,
};

static void pto_test_setup_args(struct pto_setup *s)
{
	memset(s, 0, sizeof(*s));
	s->nrings = 1;
	s->ring[0].task_window = 64;
	s->ring[0].dep_pool_size = 256;
	s->ring[0].heap_size = 1 << 19;
	s->order_ring_size = 64;
	s->release_ring_size = 64;
	s->cring_size = 64;
	s->heap_size = 1 << 20;
}

/* bytes of struct pto_setup a caller may set (in fields of ring 0) */
static bool pto_setup_in_byte(size_t off)
{
	static const struct { size_t off, len; } in[] = {
		{ offsetof(struct pto_setup, nrings), 4 },
		{ offsetof(struct pto_setup, features), 8 },
		{ offsetof(struct pto_setup, order_ring_size), 4 },
		{ offsetof(struct pto_setup, release_ring_size), 4 },
		{ offsetof(struct pto_setup, cring_size), 4 },
		{ offsetof(struct pto_setup, heap_size), 8 },
		{ offsetof(struct pto_setup, ring[0].task_window), 4 },
		{ offsetof(struct pto_setup, ring[0].dep_pool_size), 4 },
		{ offsetof(struct pto_setup, ring[0].heap_size), 8 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(in); i++)
		if (off >= in[i].off && off < in[i].off + in[i].len)
			return true;
	return false;
}

/* Every byte that is not an in field of the rings set up must be zero. */
static void pto_setup_every_other_byte(struct kunit *test)
{
	struct pto_setup s;
	size_t i;

	pto_test_setup_args(&s);
	KUNIT_ASSERT_EQ(test, pto_setup_check(&s, &pto_test_lim), 0);
	for (i = 0; i < sizeof(s); i++) {
		if (pto_setup_in_byte(i))
			continue;
		pto_test_setup_args(&s);
		((u8 *)&s)[i] = 1;
		KUNIT_EXPECT_EQ_MSG(test, pto_setup_check(&s, &pto_test_lim),
				    -EINVAL, "byte %zu", i);
	}
}

#define SETUP_EXPECT(test, stmt, want) do {				\
	struct pto_setup __s;						\
	pto_test_setup_args(&__s);					\
	{ struct pto_setup *s = &__s; stmt; }				\
	KUNIT_EXPECT_EQ_MSG(test, pto_setup_check(&__s, &pto_test_lim),	\
			    want, "%s", #stmt);				\
} while (0)

static void pto_setup_rings(struct kunit *test)
{
	u32 v;

	SETUP_EXPECT(test, s->nrings = 0, -EINVAL);
	SETUP_EXPECT(test, s->nrings = PTO_MAX_RINGS + 1, -EINVAL);
	SETUP_EXPECT(test, s->nrings = ~0u, -EINVAL);
	/* task windows: powers of two up to the limit */
	SETUP_EXPECT(test, s->ring[0].task_window = 0, -EINVAL);
	for (v = 1; v <= pto_test_lim.max_task_window; v <<= 1) {
		SETUP_EXPECT(test, s->ring[0].task_window = v, 0);
		if (v > 2)
			SETUP_EXPECT(test, s->ring[0].task_window = v - 1,
				     -EINVAL);
	}
	SETUP_EXPECT(test, s->ring[0].task_window =
		     2 * pto_test_lim.max_task_window, -EINVAL);
	SETUP_EXPECT(test, s->ring[0].task_window = 1u << 31, -EINVAL);
	/* dependency pools: 1 to the limit */
	SETUP_EXPECT(test, s->ring[0].dep_pool_size = 0, -EINVAL);
	SETUP_EXPECT(test, s->ring[0].dep_pool_size = 1, 0);
	SETUP_EXPECT(test, s->ring[0].dep_pool_size =
		     pto_test_lim.max_dep_pool, 0);
	SETUP_EXPECT(test, s->ring[0].dep_pool_size =
		     pto_test_lim.max_dep_pool + 1, -EINVAL);
	SETUP_EXPECT(test, s->ring[0].dep_pool_size = ~0u, -EINVAL);
	/* heap rings: non-zero multiples of 64 */
	SETUP_EXPECT(test, s->ring[0].heap_size = 0, -EINVAL);
	SETUP_EXPECT(test, s->ring[0].heap_size = 63, -EINVAL);
	SETUP_EXPECT(test, s->ring[0].heap_size = 64, 0);
	SETUP_EXPECT(test, s->ring[0].heap_size = 65, -EINVAL);
	SETUP_EXPECT(test, s->ring[0].heap_size = ~63ull, 0);
	/* a second ring, checked as well */
	SETUP_EXPECT(test, s->nrings = 2; s->ring[1].task_window = 3;
		     s->ring[1].dep_pool_size = 1; s->ring[1].heap_size = 64,
		     -EINVAL);
	SETUP_EXPECT(test, s->nrings = 2; s->ring[1].task_window = 4;
		     s->ring[1].dep_pool_size = 1; s->ring[1].heap_size = 64,
		     0);
}

static void pto_setup_ring_sizes(struct kunit *test)
{
	u32 max = 4 * max(pto_test_lim.max_task_window, 4096u);

	SETUP_EXPECT(test, s->order_ring_size = 0, -EINVAL);
	SETUP_EXPECT(test, s->order_ring_size = 1, 0);
	SETUP_EXPECT(test, s->order_ring_size = max, 0);
	SETUP_EXPECT(test, s->order_ring_size = 2 * max, -EINVAL);
	SETUP_EXPECT(test, s->order_ring_size = 100, -EINVAL);
	SETUP_EXPECT(test, s->release_ring_size = 0, -EINVAL);
	SETUP_EXPECT(test, s->release_ring_size = max, 0);
	SETUP_EXPECT(test, s->release_ring_size = 2 * max, -EINVAL);
	SETUP_EXPECT(test, s->release_ring_size = 3, -EINVAL);
	SETUP_EXPECT(test, s->cring_size = 0, -EINVAL);
	SETUP_EXPECT(test, s->cring_size = 1, 0);
	SETUP_EXPECT(test, s->cring_size = PTO_MAX_CRING, 0);
	SETUP_EXPECT(test, s->cring_size = 2 * PTO_MAX_CRING, -EINVAL);
	SETUP_EXPECT(test, s->cring_size = PTO_MAX_CRING - 1, -EINVAL);
}

static void pto_setup_features(struct kunit *test)
{
	int bit;

	for (bit = 0; bit < 64; bit++)
		SETUP_EXPECT(test, s->features = 1ull << bit,
			     (PTO_DRV_FEATURES & (1ull << bit)) ? 0 : -EINVAL);
	SETUP_EXPECT(test, s->features = PTO_DRV_FEATURES, 0);
}

/* The heap limit holds, and PTO_HEAP_HARD_MAX whatever the limit says. */
static void pto_setup_heap_limit(struct kunit *test)
{
	struct pto_limits huge = pto_test_lim;
	struct pto_setup s;

	SETUP_EXPECT(test, s->heap_size = pto_test_lim.max_heap_size, 0);
	SETUP_EXPECT(test, s->heap_size = pto_test_lim.max_heap_size + 1,
		     -EINVAL);
	huge.max_heap_size = U64_MAX;
	pto_test_setup_args(&s);
	s.heap_size = PTO_HEAP_HARD_MAX;
	KUNIT_EXPECT_EQ(test, pto_setup_check(&s, &huge), 0);
	s.heap_size = PTO_HEAP_HARD_MAX + 1;
	KUNIT_EXPECT_EQ(test, pto_setup_check(&s, &huge), -EINVAL);
	s.heap_size = U64_MAX;
	KUNIT_EXPECT_EQ(test, pto_setup_check(&s, &huge), -EINVAL);
	s.heap_size = U64_MAX - 4095;
	KUNIT_EXPECT_EQ(test, pto_setup_check(&s, &huge), -EINVAL);
}

/* ---- the layout SETUP answers ---------------------------------------------- */

struct pto_span {
	u64 off, len;
};

static bool pto_spans_ok(const struct pto_span *sp, int n, u64 size)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (sp[i].off + sp[i].len < sp[i].off ||
		    sp[i].off + sp[i].len > size)
			return false;
		for (j = 0; j < i; j++)
			if (sp[i].len && sp[j].len &&
			    sp[i].off < sp[j].off + sp[j].len &&
			    sp[j].off < sp[i].off + sp[i].len)
				return false;
	}
	return true;
}

/* Everything SETUP placed lies in its region, aligned, and overlaps nothing. */
static void pto_expect_layout_sound(struct kunit *test,
				    const struct pto_setup *s, u32 num_cores)
{
	struct pto_span win[2 + 2 * PTO_MAX_RINGS + 1], heap[PTO_MAX_RINGS + 1];
	u64 offs[PTO_NUM_REGIONS] = { s->window.offset, s->heap.offset,
				      s->regs.offset, s->cring.offset };
	u32 r, n = 0, i, j;

	win[n++] = (struct pto_span){ s->header_offset,
				      sizeof(struct pto_window_header) };
	for (r = 0; r < s->nrings; r++) {
		KUNIT_EXPECT_EQ(test, s->ring[r].desc_offset % 64, 0);
		KUNIT_EXPECT_EQ(test, s->ring[r].heap_offset % 4096, 0);
		win[n++] = (struct pto_span){ s->ring[r].desc_offset,
			(u64)s->ring[r].task_window * sizeof(struct pto_task_desc) };
		win[n++] = (struct pto_span){ s->ring[r].dep_offset,
			(u64)s->ring[r].dep_pool_size * sizeof(struct pto_dep_entry) };
		heap[r] = (struct pto_span){ s->ring[r].heap_offset,
					     s->ring[r].heap_size };
	}
	win[n++] = (struct pto_span){ s->order_offset,
				      (u64)s->order_ring_size * 8 };
	win[n++] = (struct pto_span){ s->release_offset,
		(u64)s->release_ring_size * sizeof(struct pto_release_entry) };
	KUNIT_EXPECT_TRUE(test, pto_spans_ok(win, n, s->window.size));
	KUNIT_ASSERT_LE(test, s->arena_offset, s->heap_size);
	heap[s->nrings] = (struct pto_span){ s->arena_offset,
					     s->heap_size - s->arena_offset };
	KUNIT_EXPECT_TRUE(test, pto_spans_ok(heap, s->nrings + 1, s->heap_size));
	KUNIT_EXPECT_GE(test, s->heap.size, s->heap_size);
	KUNIT_EXPECT_EQ(test, s->num_cores, num_cores);
	KUNIT_EXPECT_GE(test, s->regs.size, (u64)num_cores * s->regs_stride);
	KUNIT_EXPECT_GE(test, s->cring.size, s->cring_entries_offset +
			(u64)s->cring_size * sizeof(struct pto_completion));
	KUNIT_EXPECT_GE(test, s->cring_entries_offset,
			(u64)sizeof(struct pto_cring_header));
	for (i = 0; i < PTO_NUM_REGIONS; i++) {
		KUNIT_EXPECT_EQ(test, offs[i] % PAGE_SIZE, 0);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, offs[i], offs[j]);
	}
	KUNIT_EXPECT_EQ(test, s->window.size % PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, s->heap.size % PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, s->regs.size % PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, s->cring.size % PAGE_SIZE, 0);
}

static void pto_layout_random(struct kunit *test)
{
	struct rnd_state rs;
	struct pto_setup s;
	int iter, ok = 0;
	u32 r;

	prandom_seed_state(&rs, 14);
	for (iter = 0; iter < 2000; iter++) {
		memset(&s, 0, sizeof(s));
		s.nrings = 1 + prandom_u32_state(&rs) % PTO_MAX_RINGS;
		s.heap_size = 0;
		for (r = 0; r < s.nrings; r++) {
			s.ring[r].task_window = 1u << (prandom_u32_state(&rs) % 17);
			s.ring[r].dep_pool_size = 1 + prandom_u32_state(&rs) % 70000;
			s.ring[r].heap_size = 64ull * (1 + prandom_u32_state(&rs) % 5000);
			s.heap_size += round_up(s.ring[r].heap_size, 4096);
		}
		s.heap_size += prandom_u32_state(&rs) % 3 ?
			       prandom_u32_state(&rs) % 100000 : 0;
		s.order_ring_size = 1u << (prandom_u32_state(&rs) % 17);
		s.release_ring_size = 1u << (prandom_u32_state(&rs) % 17);
		s.cring_size = 1u << (prandom_u32_state(&rs) % 17);
		if (pto_setup_check(&s, &pto_test_lim))
			continue;
		if (pto_setup_layout(&s, 1 + iter % 256))
			continue;
		ok++;
		pto_expect_layout_sound(test, &s, 1 + iter % 256);
	}
	KUNIT_EXPECT_GT(test, ok, 1000);
}

/* Two rings' heaps and an empty arena just fit; one byte less does not. */
static void pto_layout_heap_exact(struct kunit *test)
{
	static const u64 sizes[] = { 12287, 12288, 12289 };
	struct pto_setup s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		pto_test_setup_args(&s);
		s.nrings = 2;
		s.ring[1] = s.ring[0];
		s.ring[0].heap_size = 4096 + 64;	/* next ring: 8192 */
		s.ring[1].heap_size = 64;		/* arena: 12288 */
		s.heap_size = sizes[i];
		KUNIT_ASSERT_EQ(test, pto_setup_check(&s, &pto_test_lim), 0);
		if (sizes[i] < 12288) {
			KUNIT_EXPECT_EQ(test, pto_setup_layout(&s, 6), -EINVAL);
			continue;
		}
		KUNIT_ASSERT_EQ(test, pto_setup_layout(&s, 6), 0);
		KUNIT_EXPECT_EQ(test, s.ring[0].heap_offset, 0);
		KUNIT_EXPECT_EQ(test, s.ring[1].heap_offset, 8192);
		KUNIT_EXPECT_EQ(test, s.arena_offset, 12288);
		KUNIT_EXPECT_EQ(test, s.heap.size, round_up(sizes[i], 4096));
		pto_expect_layout_sound(test, &s, 6);
	}
}

/* Back to a request: the out fields zero again. */
static void pto_clear_out(struct pto_setup *s)
{
	memset(&s->window, 0, sizeof(s->window));
	memset(&s->heap, 0, sizeof(s->heap));
	memset(&s->regs, 0, sizeof(s->regs));
	memset(&s->cring, 0, sizeof(s->cring));
	s->header_offset = 0;
	s->order_offset = 0;
	s->release_offset = 0;
	s->arena_offset = 0;
	s->cring_entries_offset = 0;
	s->regs_stride = 0;
	s->num_cores = 0;
}

/* Sizes that would wrap a u64 are refused, never wrapped. */
static void pto_layout_overflow(struct kunit *test)
{
	struct pto_setup s;
	u32 r;

	/* heap rings whose sum wraps */
	pto_test_setup_args(&s);
	s.nrings = PTO_MAX_RINGS;
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		s.ring[r] = s.ring[0];
		s.ring[r].heap_size = 1ull << 62;
	}
	s.heap_size = PTO_HEAP_HARD_MAX;
	KUNIT_EXPECT_EQ(test, pto_setup_layout(&s, 6), -EINVAL);
	/* one heap ring of 2^64 - 64: its page alignment wraps */
	pto_test_setup_args(&s);
	s.ring[0].heap_size = ~63ull;
	s.heap_size = PTO_HEAP_HARD_MAX;
	KUNIT_EXPECT_EQ(test, pto_setup_layout(&s, 6), -EINVAL);
	/* the largest windows, rings and heap still lay out in range */
	pto_test_setup_args(&s);
	s.nrings = PTO_MAX_RINGS;
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		s.ring[r].task_window = 1u << 31;
		s.ring[r].dep_pool_size = ~0u;
		s.ring[r].heap_size = PTO_HEAP_HARD_MAX / PTO_MAX_RINGS;
	}
	s.order_ring_size = 1u << 31;
	s.release_ring_size = 1u << 31;
	s.cring_size = PTO_MAX_CRING;
	s.heap_size = PTO_HEAP_HARD_MAX;
	/* a window of 2^41 bytes does not fit between two mmap offsets */
	KUNIT_EXPECT_EQ(test, pto_setup_layout(&s, 256), -EINVAL);
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		s.ring[r].task_window = 1u << 16;
		s.ring[r].dep_pool_size = 1u << 20;
		s.ring[r].desc_offset = 0;
		s.ring[r].dep_offset = 0;
		s.ring[r].heap_offset = 0;
	}
	s.order_ring_size = 1u << 18;
	s.release_ring_size = 1u << 18;
	pto_clear_out(&s);
	KUNIT_EXPECT_EQ(test, pto_setup_layout(&s, 256), 0);
	pto_expect_layout_sound(test, &s, 256);
	KUNIT_EXPECT_EQ(test, s.heap.size, PTO_HEAP_HARD_MAX);
}

/* ---- BIND_OP, KICK, WAIT ------------------------------------------------------ */

static void pto_bind_fields(struct kunit *test)
{
	static const u32 cores[PTO_UAPI_NUM_WORKER_TYPES] = { 2, 2, 0, 1 };
	struct pto_bind_op b = { 0 };
	u16 binding;
	u32 t, op;

	KUNIT_EXPECT_EQ(test, pto_bind_check(&b, cores, &binding), 0);
	b.flags = 1;
	KUNIT_EXPECT_EQ(test, pto_bind_check(&b, cores, &binding), -EINVAL);
	b.flags = 0;
	b.kernel_id = PTO_MAX_KERNELS - 1;
	KUNIT_EXPECT_EQ(test, pto_bind_check(&b, cores, &binding), 0);
	b.kernel_id = PTO_MAX_KERNELS;
	KUNIT_EXPECT_EQ(test, pto_bind_check(&b, cores, &binding), -EINVAL);
	b.kernel_id = ~0u;
	KUNIT_EXPECT_EQ(test, pto_bind_check(&b, cores, &binding), -EINVAL);
	b.kernel_id = 0;
	for (t = 0; t <= PTO_UAPI_NUM_WORKER_TYPES; t++) {
		for (op = 0; op <= PTO_OP_COUNT; op++) {
			b.worker_type = t;
			b.op = op;
			if (t >= PTO_UAPI_NUM_WORKER_TYPES || op >= PTO_OP_COUNT) {
				KUNIT_EXPECT_EQ(test, pto_bind_check(&b, cores, &binding),
						-EINVAL);
				continue;
			}
			if (!cores[t]) {
				KUNIT_EXPECT_EQ(test, pto_bind_check(&b, cores, &binding),
						-ENXIO);
				continue;
			}
			binding = 0;
			KUNIT_ASSERT_EQ(test, pto_bind_check(&b, cores, &binding), 0);
			/* one word that gives back both, never 0 */
			KUNIT_EXPECT_NE(test, binding, 0);
			KUNIT_EXPECT_EQ(test, PTO_BINDING_TYPE(binding), t);
			KUNIT_EXPECT_EQ(test, PTO_BINDING_OP(binding), op);
		}
	}
	b.worker_type = ~0u;
	KUNIT_EXPECT_EQ(test, pto_bind_check(&b, cores, &binding), -EINVAL);
}

static void pto_kick_fields(struct kunit *test)
{
	struct pto_kick k = { 0 };
	u32 core = 99;

	KUNIT_EXPECT_EQ(test, pto_kick_check(&k, 6, &core), 0);
	KUNIT_EXPECT_EQ(test, core, 0);
	k.core = 5;
	KUNIT_EXPECT_EQ(test, pto_kick_check(&k, 6, &core), 0);
	KUNIT_EXPECT_EQ(test, core, 5);
	k.core = 6;
	KUNIT_EXPECT_EQ(test, pto_kick_check(&k, 6, &core), -EINVAL);
	k.core = PTO_KICK_ALL - 1;
	KUNIT_EXPECT_EQ(test, pto_kick_check(&k, 6, &core), -EINVAL);
	k.core = PTO_KICK_ALL;
	KUNIT_EXPECT_EQ(test, pto_kick_check(&k, 6, &core), 0);
	KUNIT_EXPECT_EQ(test, core, PTO_KICK_ALL);
	k.core = 0;
	KUNIT_EXPECT_EQ(test, pto_kick_check(&k, 0, &core), -EINVAL);
	k.flags = 1;
	KUNIT_EXPECT_EQ(test, pto_kick_check(&k, 6, &core), -EINVAL);
	k.flags = 0;
	k.__pad = 1ull << 63;
	KUNIT_EXPECT_EQ(test, pto_kick_check(&k, 6, &core), -EINVAL);
}

static void pto_wait_fields(struct kunit *test)
{
	struct pto_wait w = { 0 };

	KUNIT_EXPECT_EQ(test, pto_wait_check(&w), 0);
	w.timeout_ns = U64_MAX;
	w.cring_head = U64_MAX;
	KUNIT_EXPECT_EQ(test, pto_wait_check(&w), 0);
	w.flags = 1;
	KUNIT_EXPECT_EQ(test, pto_wait_check(&w), -EINVAL);
	w.flags = 0;
	w.__pad0 = 1;
	KUNIT_EXPECT_EQ(test, pto_wait_check(&w), -EINVAL);
	w.__pad0 = 0;
	w.cring_tail = 1;
	KUNIT_EXPECT_EQ(test, pto_wait_check(&w), -EINVAL);
}

/* What a WAIT reports fits its int result, whatever head the host passes. */
static void pto_wait_results(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pto_wait_result(0, 0), 0);
	KUNIT_EXPECT_EQ(test, pto_wait_result(5, 5), 0);
	KUNIT_EXPECT_EQ(test, pto_wait_result(5, 9), 0);
	KUNIT_EXPECT_EQ(test, pto_wait_result(6, 5), 1);
	KUNIT_EXPECT_EQ(test, pto_wait_result(INT_MAX, 0), INT_MAX);
	KUNIT_EXPECT_EQ(test, pto_wait_result((u64)INT_MAX + 1, 0), INT_MAX);
	KUNIT_EXPECT_EQ(test, pto_wait_result(1ull << 32, 0), INT_MAX);
	KUNIT_EXPECT_EQ(test, pto_wait_result((1ull << 32) + 3, 0), INT_MAX);
	KUNIT_EXPECT_EQ(test, pto_wait_result(U64_MAX, 0), INT_MAX);
	KUNIT_EXPECT_EQ(test, pto_wait_result(0, U64_MAX), 0);
}

/* ---- mmap offsets ------------------------------------------------------------ */

static void pto_mmap_offsets(struct kunit *test)
{
	const unsigned long shift = PTO_MMAP_SHIFT - PAGE_SHIFT;
	size_t sizes[PTO_NUM_REGIONS] = { 3 * PAGE_SIZE, 16 * PAGE_SIZE,
					  PAGE_SIZE, 2 * PAGE_SIZE };
	unsigned long r;
	u32 got;

	for (r = 0; r < PTO_NUM_REGIONS; r++) {
		got = 99;
		KUNIT_EXPECT_EQ(test, pto_mmap_check(r << shift, sizes[r], sizes,
						     &got), 0);
		KUNIT_EXPECT_EQ(test, got, r);
		KUNIT_EXPECT_EQ(test, pto_mmap_check(r << shift, PAGE_SIZE, sizes,
						     &got), 0);
		KUNIT_EXPECT_EQ(test, pto_mmap_check(r << shift, sizes[r] + PAGE_SIZE,
						     sizes, &got), -EINVAL);
		KUNIT_EXPECT_EQ(test, pto_mmap_check(r << shift, 0, sizes, &got),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, pto_mmap_check((r << shift) + 1, PAGE_SIZE,
						     sizes, &got), -EINVAL);
		KUNIT_EXPECT_EQ(test, pto_mmap_check((r << shift) - 1, PAGE_SIZE,
						     sizes, &got), -EINVAL);
		KUNIT_EXPECT_EQ(test, pto_mmap_check(((r + 1) << shift) - 1,
						     PAGE_SIZE, sizes, &got),
				-EINVAL);
	}
	KUNIT_EXPECT_EQ(test, pto_mmap_check((unsigned long)PTO_NUM_REGIONS << shift,
					     PAGE_SIZE, sizes, &got), -EINVAL);
	KUNIT_EXPECT_EQ(test, pto_mmap_check(ULONG_MAX, PAGE_SIZE, sizes, &got),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pto_mmap_check(ULONG_MAX << shift, PAGE_SIZE,
					     sizes, &got), -EINVAL);
	KUNIT_EXPECT_EQ(test, pto_mmap_check(0, ULONG_MAX, sizes, &got), -EINVAL);
	/* a region not allocated (size 0) maps nothing */
	sizes[2] = 0;
	KUNIT_EXPECT_EQ(test, pto_mmap_check(2ul << shift, PAGE_SIZE, sizes,
					     &got), -EINVAL);
}

static struct kunit_case pto_ioctl_cases[] = {
	KUNIT_CASE(pto_ioctl_known),
	KUNIT_CASE(pto_ioctl_sizes),
	KUNIT_CASE(pto_ioctl_foreign),
	KUNIT_CASE(pto_ioctl_modes),
	KUNIT_CASE(pto_info_every_byte),
	KUNIT_CASE(pto_bind_fields),
	KUNIT_CASE(pto_kick_fields),
	KUNIT_CASE(pto_wait_fields),
	KUNIT_CASE(pto_wait_results),
	{}
};

static struct kunit_suite pto_ioctl_suite = {
	.name = "pto_ioctl",
	.test_cases = pto_ioctl_cases,
};

static struct kunit_case pto_setup_cases[] = {
	KUNIT_CASE(pto_setup_every_other_byte),
	KUNIT_CASE(pto_setup_rings),
	KUNIT_CASE(pto_setup_ring_sizes),
	KUNIT_CASE(pto_setup_features),
	KUNIT_CASE(pto_setup_heap_limit),
	KUNIT_CASE(pto_layout_random),
	KUNIT_CASE(pto_layout_heap_exact),
	KUNIT_CASE(pto_layout_overflow),
	KUNIT_CASE(pto_mmap_offsets),
	{}
};

static struct kunit_suite pto_setup_suite = {
	.name = "pto_setup",
	.test_cases = pto_setup_cases,
};

kunit_test_suites(&pto_ioctl_suite, &pto_setup_suite);
