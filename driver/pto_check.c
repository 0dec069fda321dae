// SPDX-License-Identifier: GPL-2.0
/*
 * The arguments of the ioctls, the io_uring WAIT and mmap, checked without
 * side effects: every field of every struct userspace passes, the ioctl
 * numbers and sizes, the layout SETUP answers and the mmap offsets.  Kept
 * apart from the code that acts on them so the KUnit suites
 * (driver/tests/) can reach every boundary.
 */
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/nospec.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "pto_drv.h"
#include "pto_layout.h"

/*
 * The ioctls' structs as ABI 3 defined them: a caller may pass a larger
 * struct (its tail must be zero) but never a smaller one, so a size of 0
 * cannot make a NULL pointer mean "all zero".
 */
#define PTO_INFO_SIZE_VER0	104
#define PTO_SETUP_SIZE_VER0	376
#define PTO_BIND_OP_SIZE_VER0	16
#define PTO_KICK_SIZE_VER0	16
#define PTO_WAIT_SIZE_VER0	32

static const struct {
	unsigned int cmd;
	u16 min_size;
	u16 flags;
} pto_ioctl_descs[] = {
	{ PTO_IOCTL_GET_INFO, PTO_INFO_SIZE_VER0, 0 },
	{ PTO_IOCTL_SETUP, PTO_SETUP_SIZE_VER0, PTO_IOCTL_NEEDS_RW },
	{ PTO_IOCTL_BIND_OP, PTO_BIND_OP_SIZE_VER0, PTO_IOCTL_NEEDS_RW },
	{ PTO_IOCTL_KICK, PTO_KICK_SIZE_VER0, 0 },
	{ PTO_IOCTL_WAIT, PTO_WAIT_SIZE_VER0, 0 },
};

static_assert(sizeof(struct pto_info) >= PTO_INFO_SIZE_VER0);
static_assert(sizeof(struct pto_setup) >= PTO_SETUP_SIZE_VER0);
static_assert(sizeof(struct pto_bind_op) >= PTO_BIND_OP_SIZE_VER0);
static_assert(sizeof(struct pto_kick) >= PTO_KICK_SIZE_VER0);
static_assert(sizeof(struct pto_wait) >= PTO_WAIT_SIZE_VER0);

/**
 * pto_ioctl_count() - number of ioctl commands, indexes 0 ..  count - 1
 *
 * Return: the size of the ioctl table pto_ioctl_lookup() indexes.
 */
unsigned int pto_ioctl_count(void)
{
	return ARRAY_SIZE(pto_ioctl_descs);
}
EXPORT_SYMBOL_IF_KUNIT(pto_ioctl_count);

/**
 * pto_ioctl_lookup() - check an ioctl command number against the table
 * @cmd: the command, with the caller's struct size
 * @mode: the file's f_mode
 * @nr: set to the command's index, clamped under speculation
 *
 * Return: 0; -ENOTTY for a command of another driver, an unknown number
 * or a known number with another direction; -EINVAL for a struct smaller
 * than ABI 3's; -EBADF for SETUP or BIND_OP on a file not opened for
 * reading and writing, whose regions could not be mapped.
 */
int pto_ioctl_lookup(unsigned int cmd, fmode_t mode, unsigned int *nr)
{
	unsigned int n = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != PTO_IOCTL_BASE ||
	    n >= ARRAY_SIZE(pto_ioctl_descs))
		return -ENOTTY;
	n = array_index_nospec(n, ARRAY_SIZE(pto_ioctl_descs));
	/* any size (structs grow), but the same direction, type and number */
	if ((cmd & ~IOCSIZE_MASK) != (pto_ioctl_descs[n].cmd & ~IOCSIZE_MASK))
		return -ENOTTY;
	if (_IOC_SIZE(cmd) < pto_ioctl_descs[n].min_size)
		return -EINVAL;
	if ((pto_ioctl_descs[n].flags & PTO_IOCTL_NEEDS_RW) &&
	    (mode & (FMODE_READ | FMODE_WRITE)) != (FMODE_READ | FMODE_WRITE))
		return -EBADF;
	*nr = n;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_ioctl_lookup);

/**
 * pto_limits_read() - read the limits SETUP obeys, once
 * @lim: filled in; the heap limit is capped at PTO_HEAP_HARD_MAX
 *
 * The limits are module parameters root may change at any time; a SETUP
 * checks against one reading of them.
 */
void pto_limits_read(struct pto_limits *lim)
{
	lim->max_task_window = READ_ONCE(pto_max_task_window);
	lim->max_dep_pool = READ_ONCE(pto_max_dep_pool);
	lim->max_heap_size = min_t(u64, READ_ONCE(pto_max_heap_size),
				   PTO_HEAP_HARD_MAX);
}

static bool pto_zero(const void *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

/**
 * pto_info_check() - check what GET_INFO's caller passed in
 * @k: the caller's struct, zero-extended
 *
 * Every field of struct pto_info is an out field except @flags, which must
 * be 0 as well: the whole struct must be zero.
 *
 * Return: 0 or -EINVAL.
 */
int pto_info_check(const struct pto_info *k)
{
	return pto_zero(k, sizeof(*k)) ? 0 : -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(pto_info_check);

/* Every field SETUP fills in, which callers pass as zero. */
static bool pto_setup_out_zero(const struct pto_setup *s)
{
	return pto_zero(&s->window, sizeof(s->window)) &&
	       pto_zero(&s->heap, sizeof(s->heap)) &&
	       pto_zero(&s->regs, sizeof(s->regs)) &&
	       pto_zero(&s->cring, sizeof(s->cring)) &&
	       !s->header_offset && !s->order_offset && !s->release_offset &&
	       !s->arena_offset && !s->cring_entries_offset &&
	       !s->regs_stride && !s->num_cores;
}

/**
 * pto_setup_check() - check the in fields of SETUP
 * @s: the request, zero-extended
 * @lim: the limits, as pto_limits_read() read them
 *
 * Everything pto_layout() needs validated: flags, pads and out fields
 * zero, known features, 1 to PTO_MAX_RINGS rings with power-of-two
 * windows and 64-byte multiples for the heap rings, ring sizes within the
 * limits, and a heap no larger than the limit (and PTO_HEAP_HARD_MAX,
 * whatever the limit says).
 *
 * Return: 0 or -EINVAL.
 */
int pto_setup_check(const struct pto_setup *s, const struct pto_limits *lim)
{
	/*
	 * The order ring holds every task in flight, of every ring; the
	 * release ring at most one scope end per task.  4096 keeps small
	 * windows from limiting scopes.
	 */
	u64 max_entries = (u64)max(lim->max_task_window, 4096U) *
			  PTO_MAX_RINGS;
	u32 r;

	if (s->flags || s->__pad0 || !pto_zero(s->__pad1, sizeof(s->__pad1)))
		return -EINVAL;
	if (!pto_setup_out_zero(s))
		return -EINVAL;
	if (s->features & ~PTO_DRV_FEATURES)
		return -EINVAL;
	if (!s->nrings || s->nrings > PTO_MAX_RINGS)
		return -EINVAL;
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		const struct pto_ring_geometry *g = &s->ring[r];

		if (r >= s->nrings) {
			if (!pto_zero(g, sizeof(*g)))
				return -EINVAL;
			continue;
		}
		if (g->desc_offset || g->dep_offset || g->heap_offset ||
		    g->__pad)
			return -EINVAL;
		if (!is_power_of_2(g->task_window) ||
		    g->task_window > lim->max_task_window)
			return -EINVAL;
		if (!g->dep_pool_size || g->dep_pool_size > lim->max_dep_pool)
			return -EINVAL;
		/* every ring has a heap ring: tasks place outputs there */
		if (!g->heap_size || !IS_ALIGNED(g->heap_size, 64))
			return -EINVAL;
	}
	if (!is_power_of_2(s->order_ring_size) ||
	    s->order_ring_size > max_entries)
		return -EINVAL;
	if (!is_power_of_2(s->release_ring_size) ||
	    s->release_ring_size > max_entries)
		return -EINVAL;
	if (!is_power_of_2(s->cring_size) || s->cring_size > PTO_MAX_CRING)
		return -EINVAL;
	/* pto_layout() checks that the heap rings fit */
	if (s->heap_size > min_t(u64, lim->max_heap_size, PTO_HEAP_HARD_MAX))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_setup_check);

/**
 * pto_setup_layout() - fill in SETUP's answer
 * @s: a request pto_setup_check() accepted
 * @num_cores: register blocks of the device
 *
 * pto_layout() places everything inside the regions; the regions' mmap
 * offsets are r << PTO_MMAP_SHIFT.  Every region must be non-empty and
 * no larger than the distance between two offsets.
 *
 * Return: 0, or -EINVAL when the sizes overflow or the heap rings do not
 * fit in the heap.
 */
int pto_setup_layout(struct pto_setup *s, u32 num_cores)
{
	const u64 span = 1ULL << PTO_MMAP_SHIFT;

	if (pto_layout(s, num_cores))
		return -EINVAL;
	if (!s->window.size || s->window.size > span ||
	    !s->heap.size || s->heap.size > span ||
	    !s->regs.size || s->regs.size > span ||
	    !s->cring.size || s->cring.size > span)
		return -EINVAL;
	s->window.offset = (u64)PTO_REGION_WINDOW << PTO_MMAP_SHIFT;
	s->heap.offset = (u64)PTO_REGION_HEAP << PTO_MMAP_SHIFT;
	s->regs.offset = (u64)PTO_REGION_REGS << PTO_MMAP_SHIFT;
	s->cring.offset = (u64)PTO_REGION_CRING << PTO_MMAP_SHIFT;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_setup_layout);

/**
 * pto_bind_check() - check a BIND_OP request
 * @b: the request
 * @cores: the device's cores per worker type
 * @binding: set to the word the context stores for the kernel id
 *
 * Return: 0; -EINVAL for non-zero flags or a kernel id, worker type or op
 * out of range; -ENXIO for a worker type the device has no core of.
 */
int pto_bind_check(const struct pto_bind_op *b, const u32 *cores, u16 *binding)
{
	u32 type;

	if (b->flags || b->kernel_id >= PTO_MAX_KERNELS ||
	    b->worker_type >= PTO_UAPI_NUM_WORKER_TYPES ||
	    b->op >= PTO_OP_COUNT)
		return -EINVAL;
	type = array_index_nospec(b->worker_type, PTO_UAPI_NUM_WORKER_TYPES);
	if (!cores[type])
		return -ENXIO;		/* no core could ever run it */
	BUILD_BUG_ON(PTO_OP_COUNT >= 0xff);
	*binding = PTO_BINDING(type, b->op);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_bind_check);

/**
 * pto_kick_check() - check a KICK request
 * @k: the request (ioctl or io_uring command)
 * @num_cores: cores of the context
 * @core: set to the core, clamped under speculation, or PTO_KICK_ALL
 *
 * Return: 0 or -EINVAL.
 */
int pto_kick_check(const struct pto_kick *k, u32 num_cores, u32 *core)
{
	u32 c = k->core;

	if (k->flags || k->__pad)
		return -EINVAL;
	if (c != PTO_KICK_ALL) {
		if (c >= num_cores)
			return -EINVAL;
		c = array_index_nospec(c, num_cores);
	}
	*core = c;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_kick_check);

/**
 * pto_wait_check() - check a WAIT ioctl request
 * @w: the request
 *
 * Return: 0 or -EINVAL (flags, pad or the out field non-zero).
 */
int pto_wait_check(const struct pto_wait *w)
{
	return (w->flags || w->__pad0 || w->cring_tail) ? -EINVAL : 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_wait_check);

/**
 * pto_wait_result() - what a WAIT reports: completions beyond @head
 * @tail: completions posted
 * @head: the host's consumed position, as the host passed it
 *
 * Return: @tail - @head when positive, at most INT_MAX (the result is an
 * int; a host whose head is far behind still sees "many"), else 0.
 */
int pto_wait_result(u64 tail, u64 head)
{
	if (tail <= head)
		return 0;
	return min_t(u64, tail - head, INT_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(pto_wait_result);

/**
 * pto_mmap_check() - which region an mmap() maps
 * @pgoff: the mapping's offset, in pages
 * @len: its length in bytes
 * @region_size: the context's region sizes
 * @region: set to the region, clamped under speculation
 *
 * A mapping starts exactly at a region's offset (r << PTO_MMAP_SHIFT) and
 * is no longer than the region.
 *
 * Return: 0 or -EINVAL.
 */
int pto_mmap_check(unsigned long pgoff, unsigned long len,
		   const size_t *region_size, u32 *region)
{
	const unsigned long shift = PTO_MMAP_SHIFT - PAGE_SHIFT;
	unsigned long r = pgoff >> shift;

	if ((pgoff & ((1UL << shift) - 1)) || r >= PTO_NUM_REGIONS)
		return -EINVAL;
	r = array_index_nospec(r, PTO_NUM_REGIONS);
	if (!len || len > region_size[r])
		return -EINVAL;
	*region = r;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pto_mmap_check);
