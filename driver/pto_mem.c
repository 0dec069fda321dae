// SPDX-License-Identifier: GPL-2.0
/*
 * Context memory: the regions are pages charged to the opener's memory
 * cgroup (__GFP_ACCOUNT), allocated without invoking the OOM killer and
 * mapped with vmap() so they can be mapped to userspace; and the limits
 * that keep one user, and the driver as a whole, from pinning the
 * machine's memory: contexts per user, bytes per user, bytes in all.
 * Users with CAP_SYS_RESOURCE are exempt from the per-user limits, not
 * from the driver's.
 */
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <kunit/visibility.h>

#include "pto_drv.h"

/*
 * Zeroed, charged to the memory cgroup, and failing rather than calling
 * the OOM killer or warning: a SETUP too large for the machine is an
 * error the caller sees, not a reason to kill unrelated processes.
 */
#define PTO_REGION_GFP	(GFP_KERNEL_ACCOUNT | __GFP_ZERO | \
			 __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/**
 * struct pto_user - what one user's contexts hold
 * @node: in pto_users, under pto_users_lock
 * @uid: the user
 * @refs: contexts referring to it (open or being released)
 * @contexts: contexts counted against max_user_contexts
 * @bytes: region bytes charged
 */
struct pto_user {
	struct hlist_node node;
	kuid_t uid;
	u32 refs;
	u32 contexts;
	u64 bytes;
};

static DEFINE_SPINLOCK(pto_users_lock);	/* pto_users, the counts, pto_bytes */
static DEFINE_HASHTABLE(pto_users, 6);
static u64 pto_bytes;

/**
 * pto_region_alloc() - allocate a zeroed region userspace can map
 * @size: bytes, a non-zero multiple of PAGE_SIZE
 *
 * Pages are charged to the caller's memory cgroup; the allocation fails
 * instead of invoking the OOM killer, and gives up early when the caller
 * is killed.  The region is a vmap() area with VM_USERMAP, so
 * remap_vmalloc_range() can map it, and vfree() frees it with its pages.
 *
 * Context: process context, may sleep.
 * Return: the kernel address, or NULL.
 */
void *pto_region_alloc(size_t size)
{
	unsigned long n = size >> PAGE_SHIFT, i;
	struct page **pages;
	void *p;

	if (!n || (size & ~PAGE_MASK) || n > UINT_MAX)
		return NULL;
	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL_ACCOUNT |
			       __GFP_NOWARN);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(PTO_REGION_GFP);
		if (!pages[i] || fatal_signal_pending(current))
			goto err;
		if (!(i & 255))
			cond_resched();
	}
	/* vfree() puts the pages and frees the array */
	p = vmap(pages, n, VM_MAP | VM_MAP_PUT_PAGES | VM_USERMAP, PAGE_KERNEL);
	if (p)
		return p;
err:
	/* pages[i] was set when the loop stopped for a fatal signal */
	if (i < n && pages[i])
		__free_page(pages[i]);
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

/**
 * pto_region_free() - free a region of pto_region_alloc()
 * @p: the region, or NULL
 *
 * Context: process context.
 */
void pto_region_free(void *p)
{
	vfree(p);
}

/**
 * pto_mem_limit() - a memory limit in bytes
 * @param: the module parameter, 0 for the default
 * @ram_shift: the default is RAM >> @ram_shift
 *
 * Return: @param, or that share of the machine's RAM.
 */
u64 pto_mem_limit(unsigned long param, unsigned int ram_shift)
{
	if (param)
		return param;
	return ((u64)totalram_pages() << PAGE_SHIFT) >> ram_shift;
}
EXPORT_SYMBOL_IF_KUNIT(pto_mem_limit);

static struct pto_user *pto_user_find(kuid_t uid)
{
	struct pto_user *u;

	hash_for_each_possible(pto_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * pto_user_get() - count a new context against its user
 * @uid: the opener's effective uid
 * @exempt: the opener may exceed max_user_contexts
 * @err: set to -EMFILE when the user has max_user_contexts contexts, or
 *	-ENOMEM
 *
 * Context: process context, may sleep.
 * Return: the user's accounting with a context counted, or NULL.
 */
struct pto_user *pto_user_get(kuid_t uid, bool exempt, int *err)
{
	struct pto_user *u, *fresh;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh) {
		*err = -ENOMEM;
		return NULL;
	}
	spin_lock(&pto_users_lock);
	u = pto_user_find(uid);
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		hash_add(pto_users, &u->node, __kuid_val(uid));
	}
	if (!exempt && u->contexts >= READ_ONCE(pto_max_user_contexts)) {
		if (!u->refs) {
			hash_del(&u->node);
			fresh = u;	/* freed below */
		}
		u = NULL;
		*err = -EMFILE;
	} else {
		u->refs++;
		u->contexts++;
	}
	spin_unlock(&pto_users_lock);
	kfree(fresh);
	return u;
}
EXPORT_SYMBOL_IF_KUNIT(pto_user_get);

/**
 * pto_user_put() - a context of this user is gone
 * @u: from pto_user_get(); its bytes were uncharged
 */
void pto_user_put(struct pto_user *u)
{
	bool last;

	spin_lock(&pto_users_lock);
	u->contexts--;
	last = !--u->refs;
	if (last)
		hash_del(&u->node);
	spin_unlock(&pto_users_lock);
	if (last)
		kfree(u);
}
EXPORT_SYMBOL_IF_KUNIT(pto_user_put);

/**
 * pto_mem_charge() - charge region bytes to a user and to the driver
 * @u: the context's user
 * @exempt: the user's limit does not apply
 * @bytes: the context's region bytes
 *
 * Return: 0, or -ENOMEM when the user's max_user_memory or the driver's
 * max_memory would be exceeded.
 */
int pto_mem_charge(struct pto_user *u, bool exempt, u64 bytes)
{
	u64 all = pto_mem_limit(READ_ONCE(pto_max_memory), 1);
	u64 mine = pto_mem_limit(READ_ONCE(pto_max_user_memory), 2);
	int ret = 0;

	spin_lock(&pto_users_lock);
	if (bytes > all || pto_bytes > all - bytes)
		ret = -ENOMEM;
	else if (!exempt && (bytes > mine || u->bytes > mine - bytes))
		ret = -ENOMEM;
	if (!ret) {
		pto_bytes += bytes;
		u->bytes += bytes;
	}
	spin_unlock(&pto_users_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(pto_mem_charge);

/**
 * pto_mem_avail() - bytes a context of this user could still charge
 * @u: the context's user
 * @exempt: the user's limit does not apply
 *
 * What GET_INFO reports, so that a library can size its regions to fit
 * instead of failing SETUP: a snapshot, other contexts may take it.
 *
 * Return: the smaller of what the driver's and the user's limit leave.
 */
u64 pto_mem_avail(struct pto_user *u, bool exempt)
{
	u64 all = pto_mem_limit(READ_ONCE(pto_max_memory), 1);
	u64 mine = pto_mem_limit(READ_ONCE(pto_max_user_memory), 2);
	u64 avail;

	spin_lock(&pto_users_lock);
	avail = all > pto_bytes ? all - pto_bytes : 0;
	if (!exempt)
		avail = min(avail, mine > u->bytes ? mine - u->bytes : 0);
	spin_unlock(&pto_users_lock);
	return avail;
}
EXPORT_SYMBOL_IF_KUNIT(pto_mem_avail);

/**
 * pto_mem_uncharge() - undo pto_mem_charge()
 * @u: the context's user
 * @bytes: what was charged
 */
void pto_mem_uncharge(struct pto_user *u, u64 bytes)
{
	spin_lock(&pto_users_lock);
	pto_bytes -= bytes;
	u->bytes -= bytes;
	spin_unlock(&pto_users_lock);
}
EXPORT_SYMBOL_IF_KUNIT(pto_mem_uncharge);
