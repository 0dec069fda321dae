// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: a context's completion ring and state machine (pto_ctx.c) on a
 * device of the test's own, and the per-user accounting (pto_mem.c).
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "pto_drv.h"

#define CRING	8

struct pto_test_dev {
	u32 kicks;
	u32 last_core;
};

static struct pto_test_dev *pto_test_dev_of(struct pto_ctx *ctx)
{
	return (struct pto_test_dev *)ctx->cores;
}

static int pto_test_start(struct pto_ctx *ctx)
{
	return 0;
}

static void pto_test_kick(struct pto_ctx *ctx, u32 core)
{
	pto_test_dev_of(ctx)->kicks++;
	pto_test_dev_of(ctx)->last_core = core;
}

static void pto_test_stop(struct pto_ctx *ctx)
{
}

static const struct pto_dev_ops pto_test_ops = {
	.ctx_start = pto_test_start,
	.kick = pto_test_kick,
	.ctx_stop = pto_test_stop,
};

/*
 * A context of a device of its own with a completion ring of CRING entries,
 * set up (ready) or not.  The "cores" pointer carries the test's counters;
 * num_cores says how many cores KICK accepts.
 */
static struct pto_ctx *pto_test_ctx(struct kunit *test, bool ready)
{
	struct pto_device *pdev;
	struct pto_ctx *ctx;
	u8 *cring;

	pdev = kzalloc(sizeof(*pdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pdev);
	kref_init(&pdev->ref);
	mutex_init(&pdev->lock);
	INIT_LIST_HEAD(&pdev->ctxs);
	pdev->ops = &pto_test_ops;
	pdev->num_cores = 3;
	ctx = pto_ctx_create(pdev, NULL, false);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx);
	cring = kunit_kzalloc(test, PAGE_SIZE + CRING * sizeof(struct pto_completion),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cring);
	ctx->cring = (struct pto_cring_header *)cring;
	ctx->cring->size = CRING;
	ctx->centries = (struct pto_completion *)(cring + PAGE_SIZE);
	ctx->cring_size = CRING;
	ctx->num_cores = 3;
	ctx->cores = kzalloc(sizeof(*pto_test_dev_of(ctx)), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->cores);
	if (ready) {
		/* what SETUP publishes, as pto_do_setup() does */
		smp_store_release(&ctx->setup_done, true);
	}
	return ctx;
}

/* Completions land in order, seq last, and the ring wraps. */
static void pto_cring_post_order(struct kunit *test)
{
	struct pto_ctx *ctx = pto_test_ctx(test, true);
	struct pto_completion *e;
	u64 i;

	for (i = 0; i < CRING; i++)
		KUNIT_ASSERT_EQ(test, pto_ctx_post(ctx, i % 3, 100 + i, 0, 10 * i,
						   10 * i + 5, 0), 0);
	KUNIT_EXPECT_EQ(test, pto_ctx_tail(ctx), CRING);
	KUNIT_EXPECT_EQ(test, ctx->cring->tail, CRING);
	for (i = 0; i < CRING; i++) {
		e = &ctx->centries[i];
		KUNIT_EXPECT_EQ(test, e->task_id, 100 + i);
		KUNIT_EXPECT_EQ(test, e->core, i % 3);
		KUNIT_EXPECT_EQ(test, e->seq, i + 1);
		KUNIT_EXPECT_EQ(test, e->start_ns, 10 * i);
		KUNIT_EXPECT_EQ(test, e->end_ns, 10 * i + 5);
	}
	/* the host consumed half: the next half lands in the first slots */
	ctx->cring->head = CRING / 2;
	for (i = 0; i < CRING / 2; i++)
		KUNIT_ASSERT_EQ(test, pto_ctx_post(ctx, 0, 200 + i, -EFAULT, 0, 0,
						   0), 0);
	for (i = 0; i < CRING / 2; i++) {
		e = &ctx->centries[i];
		KUNIT_EXPECT_EQ(test, e->task_id, 200 + i);
		KUNIT_EXPECT_EQ(test, e->status, -EFAULT);
		KUNIT_EXPECT_EQ(test, e->seq, CRING + i + 1);
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->tasks_done), CRING);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->tasks_failed), CRING / 2);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->pdev->tasks_done), CRING);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ctx->pdev->tasks_failed), CRING / 2);
	KUNIT_EXPECT_EQ(test, ctx->failed, 0);
	pto_ctx_put(ctx);
}

/* A full ring is not overwritten: the context fails with -EOVERFLOW. */
static void pto_cring_overflow(struct kunit *test)
{
	struct pto_ctx *ctx = pto_test_ctx(test, true);
	u64 i;

	for (i = 0; i < CRING; i++)
		KUNIT_ASSERT_EQ(test, pto_ctx_post(ctx, 0, i, 0, 0, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, pto_ctx_post(ctx, 0, 99, 0, 0, 0, 0), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, pto_ctx_tail(ctx), CRING);
	KUNIT_EXPECT_EQ(test, ctx->centries[0].task_id, 0);
	KUNIT_EXPECT_EQ(test, pto_ctx_failed(ctx), -EOVERFLOW);
	/* the failure woke the cores */
	KUNIT_EXPECT_EQ(test, pto_test_dev_of(ctx)->kicks, 1);
	KUNIT_EXPECT_EQ(test, pto_test_dev_of(ctx)->last_core, PTO_KICK_ALL);
	/* a host head beyond the tail is garbage, never room */
	ctx->cring->head = CRING + 5;
	KUNIT_EXPECT_EQ(test, pto_ctx_post(ctx, 0, 99, 0, 0, 0, 0), -EOVERFLOW);
	ctx->cring->head = U64_MAX;
	KUNIT_EXPECT_EQ(test, pto_ctx_post(ctx, 0, 99, 0, 0, 0, 0), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, pto_ctx_tail(ctx), CRING);
	pto_ctx_put(ctx);
}

/* The first failure sticks; one posted with a completion is seen with it. */
static void pto_ctx_fail_sticky(struct kunit *test)
{
	struct pto_ctx *ctx = pto_test_ctx(test, false);

	KUNIT_EXPECT_EQ(test, pto_ctx_failed(ctx), 0);
	KUNIT_ASSERT_EQ(test, pto_ctx_post(ctx, 1, 7, -ETIMEDOUT, 0, 0,
					   -ETIMEDOUT), 0);
	KUNIT_EXPECT_EQ(test, pto_ctx_failed(ctx), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, pto_ctx_tail(ctx), 1);
	pto_ctx_fail(ctx, -EPROTO);
	KUNIT_EXPECT_EQ(test, pto_ctx_failed(ctx), -ETIMEDOUT);
	KUNIT_ASSERT_EQ(test, pto_ctx_post(ctx, 1, 8, -ECANCELED, 0, 0, -EIO), 0);
	KUNIT_EXPECT_EQ(test, pto_ctx_failed(ctx), -ETIMEDOUT);
	/* not set up: nothing to kick */
	KUNIT_EXPECT_EQ(test, pto_test_dev_of(ctx)->kicks, 0);
	pto_ctx_put(ctx);
}

/*
 * KICK: not before SETUP, never a core it lacks; after a failure -EIO,
 * the core woken all the same.
 */
static void pto_ctx_kick_states(struct kunit *test)
{
	struct pto_ctx *ctx = pto_test_ctx(test, false);
	struct pto_kick k = { .core = 1 };
	u32 kicks;

	KUNIT_EXPECT_EQ(test, pto_ctx_kick(ctx, &k), -EINVAL);
	/* SETUP done, as pto_do_setup() publishes it */
	smp_store_release(&ctx->setup_done, true);
	KUNIT_EXPECT_EQ(test, pto_ctx_kick(ctx, &k), 0);
	KUNIT_EXPECT_EQ(test, pto_test_dev_of(ctx)->last_core, 1);
	k.core = 3;
	KUNIT_EXPECT_EQ(test, pto_ctx_kick(ctx, &k), -EINVAL);
	k.core = PTO_KICK_ALL;
	KUNIT_EXPECT_EQ(test, pto_ctx_kick(ctx, &k), 0);
	KUNIT_EXPECT_EQ(test, pto_test_dev_of(ctx)->last_core, PTO_KICK_ALL);
	KUNIT_EXPECT_EQ(test, pto_test_dev_of(ctx)->kicks, 2);
	pto_ctx_fail(ctx, -EIO);
	k.core = 0;
	kicks = pto_test_dev_of(ctx)->kicks;
	KUNIT_EXPECT_EQ(test, pto_ctx_kick(ctx, &k), -EIO);
	/* failed, the core is woken still, to cancel what is queued */
	KUNIT_EXPECT_EQ(test, pto_test_dev_of(ctx)->kicks, kicks + 1);
	KUNIT_EXPECT_EQ(test, pto_test_dev_of(ctx)->last_core, 0);
	/* gone: closing or a dead device */
	KUNIT_EXPECT_FALSE(test, pto_ctx_gone(ctx));
	WRITE_ONCE(ctx->pdev->dead, true);
	KUNIT_EXPECT_TRUE(test, pto_ctx_gone(ctx));
	WRITE_ONCE(ctx->pdev->dead, false);
	WRITE_ONCE(ctx->closing, true);
	KUNIT_EXPECT_TRUE(test, pto_ctx_gone(ctx));
	pto_ctx_put(ctx);
}

/* ---- per-user accounting ----------------------------------------------------- */

#define PTO_TEST_UID	KUIDT_INIT(4141)

static void pto_user_contexts(struct kunit *test)
{
	unsigned int saved = pto_max_user_contexts;
	struct pto_user *u[4], *x;
	int err = 0, i;

	pto_max_user_contexts = 3;
	for (i = 0; i < 3; i++) {
		u[i] = pto_user_get(PTO_TEST_UID, false, &err);
		KUNIT_EXPECT_NOT_ERR_OR_NULL(test, u[i]);
	}
	KUNIT_EXPECT_PTR_EQ(test, u[0], u[1]);
	x = pto_user_get(PTO_TEST_UID, false, &err);
	KUNIT_EXPECT_NULL(test, x);
	KUNIT_EXPECT_EQ(test, err, -EMFILE);
	/* another user is not held back; an exempt opener neither */
	x = pto_user_get(KUIDT_INIT(4142), false, &err);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, x);
	if (x)
		pto_user_put(x);
	u[3] = pto_user_get(PTO_TEST_UID, true, &err);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, u[3]);
	/* closing one makes room for one */
	pto_user_put(u[3]);
	pto_user_put(u[2]);
	u[2] = pto_user_get(PTO_TEST_UID, false, &err);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, u[2]);
	for (i = 0; i < 3; i++)
		if (u[i])
			pto_user_put(u[i]);
	pto_max_user_contexts = saved;
}

static void pto_user_memory(struct kunit *test)
{
	unsigned long saved_user = pto_max_user_memory;
	unsigned long saved_all = pto_max_memory;
	struct pto_user *u, *v;
	int err = 0;

	u = pto_user_get(PTO_TEST_UID, false, &err);
	v = pto_user_get(KUIDT_INIT(4142), false, &err);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, u);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, v);
	pto_max_user_memory = 1 << 20;
	pto_max_memory = 3 << 20;
	KUNIT_EXPECT_EQ(test, pto_mem_charge(u, false, 1 << 20), 0);
	KUNIT_EXPECT_EQ(test, pto_mem_charge(u, false, 1), -ENOMEM);
	KUNIT_EXPECT_EQ(test, pto_mem_charge(u, false, U64_MAX), -ENOMEM);
	/* exempt from the user's limit, not from the driver's */
	KUNIT_EXPECT_EQ(test, pto_mem_charge(u, true, 1 << 20), 0);
	KUNIT_EXPECT_EQ(test, pto_mem_charge(v, false, 1 << 20), 0);
	KUNIT_EXPECT_EQ(test, pto_mem_charge(v, true, 1), -ENOMEM);
	pto_mem_uncharge(u, 1 << 20);
	KUNIT_EXPECT_EQ(test, pto_mem_charge(v, true, 1 << 20), 0);
	pto_mem_uncharge(u, 1 << 20);
	pto_mem_uncharge(v, 2 << 20);
	KUNIT_EXPECT_EQ(test, pto_mem_charge(u, false, 1 << 20), 0);
	pto_mem_uncharge(u, 1 << 20);
	pto_max_user_memory = saved_user;
	pto_max_memory = saved_all;
	pto_user_put(u);
	pto_user_put(v);
	/* the defaults are shares of RAM */
	KUNIT_EXPECT_EQ(test, pto_mem_limit(12345, 1), 12345);
	KUNIT_EXPECT_EQ(test, pto_mem_limit(0, 1),
			((u64)totalram_pages() << PAGE_SHIFT) >> 1);
}

static struct kunit_case pto_ctx_cases[] = {
	KUNIT_CASE(pto_cring_post_order),
	KUNIT_CASE(pto_cring_overflow),
	KUNIT_CASE(pto_ctx_fail_sticky),
	KUNIT_CASE(pto_ctx_kick_states),
	KUNIT_CASE(pto_user_contexts),
	KUNIT_CASE(pto_user_memory),
	{}
};

static struct kunit_suite pto_ctx_suite = {
	.name = "pto_ctx",
	.test_cases = pto_ctx_cases,
};

kunit_test_suites(&pto_ctx_suite);
