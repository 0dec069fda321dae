// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the bookkeeping of parked io_uring WAITs (pto_uring.c) without
 * io_uring: which WAITs a wake-up, the timer and a teardown take, in what
 * order, with what result, how many they look at, against a plain list
 * kept alongside.
 */
#include <kunit/test.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/prandom.h>
#include <linux/slab.h>

#include "pto_drv.h"

static struct pto_uwait *pto_test_uwait(struct kunit *test, u64 head,
					unsigned long deadline)
{
	struct pto_uwait *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	w->head = head;
	w->deadline = deadline;
	return w;
}

/* The set's operations, each under its lock; the checks run unlocked. */
static void t_insert(struct pto_uwaits *uw, struct pto_uwait *w)
{
	spin_lock(&uw->lock);
	pto_uwaits_insert(uw, w);
	spin_unlock(&uw->lock);
}

static void t_erase(struct pto_uwaits *uw, struct pto_uwait *w)
{
	spin_lock(&uw->lock);
	pto_uwaits_erase(uw, w);
	spin_unlock(&uw->lock);
}

static u32 t_ready(struct pto_uwaits *uw, u64 tail, struct list_head *out)
{
	u32 n;

	spin_lock(&uw->lock);
	n = pto_uwaits_take_ready(uw, tail, out);
	spin_unlock(&uw->lock);
	return n;
}

static u32 t_expired(struct pto_uwaits *uw, unsigned long now,
		     struct list_head *out)
{
	u32 n;

	spin_lock(&uw->lock);
	n = pto_uwaits_take_expired(uw, now, out);
	spin_unlock(&uw->lock);
	return n;
}

static u32 t_all(struct pto_uwaits *uw, int res, struct list_head *out)
{
	u32 n;

	spin_lock(&uw->lock);
	n = pto_uwaits_take_all(uw, res, out);
	spin_unlock(&uw->lock);
	return n;
}

static bool t_next(struct pto_uwaits *uw, unsigned long *next)
{
	bool ret;

	spin_lock(&uw->lock);
	ret = pto_uwaits_next_deadline(uw, next);
	spin_unlock(&uw->lock);
	return ret;
}

static u32 pto_list_count(struct list_head *l)
{
	struct list_head *p;
	u32 n = 0;

	list_for_each(p, l)
		n++;
	return n;
}

/* A wake-up takes the satisfied WAITs in head order and looks at one more. */
static void pto_uwait_ready_order(struct kunit *test)
{
	static const u64 heads[] = { 9, 3, 7, 3, 100, 0, 8 };
	struct pto_uwaits uw;
	struct pto_uwait *w[ARRAY_SIZE(heads)], *x;
	LIST_HEAD(out);
	u64 prev_head = 0, prev_seq = 0;
	u32 i;

	pto_uwaits_init(&uw);
	for (i = 0; i < ARRAY_SIZE(heads); i++) {
		w[i] = pto_test_uwait(test, heads[i], jiffies + HZ);
		t_insert(&uw, w[i]);
	}
	KUNIT_EXPECT_EQ(test, uw.count, ARRAY_SIZE(heads));
	/* tail 3: only head 0 is behind it */
	KUNIT_EXPECT_EQ(test, t_ready(&uw, 3, &out), 1);
	KUNIT_EXPECT_EQ(test, uw.visits, 2);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&out, struct pto_uwait, done),
			    w[5]);
	KUNIT_EXPECT_EQ(test, w[5]->res, 3);
	KUNIT_EXPECT_FALSE(test, w[5]->parked);
	/* tail 9: heads 3, 3 (in parking order), 7, 8 */
	uw.visits = 0;
	INIT_LIST_HEAD(&out);
	KUNIT_EXPECT_EQ(test, t_ready(&uw, 9, &out), 4);
	KUNIT_EXPECT_EQ(test, uw.visits, 5);
	list_for_each_entry(x, &out, done) {
		KUNIT_EXPECT_TRUE(test, x->head > prev_head ||
				  (x->head == prev_head && x->seq > prev_seq) ||
				  x == w[1]);
		KUNIT_EXPECT_EQ(test, x->res, 9 - x->head);
		prev_head = x->head;
		prev_seq = x->seq;
	}
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&out, struct pto_uwait, done),
			    w[1]);
	KUNIT_EXPECT_EQ(test, uw.count, 2);
	/* nothing satisfied: one look */
	uw.visits = 0;
	INIT_LIST_HEAD(&out);
	KUNIT_EXPECT_EQ(test, t_ready(&uw, 9, &out), 0);
	KUNIT_EXPECT_EQ(test, uw.visits, 1);
	KUNIT_EXPECT_EQ(test, t_all(&uw, -ECANCELED, &out), 2);
	KUNIT_EXPECT_EQ(test, uw.count, 0);
	KUNIT_EXPECT_EQ(test, w[0]->res, -ECANCELED);
	KUNIT_EXPECT_EQ(test, w[4]->res, -ECANCELED);
}

/* 10000 parked far ahead, 10 due: a wake-up looks at 11 of them. */
static void pto_uwait_wake_cost(struct kunit *test)
{
	struct pto_uwaits uw;
	struct pto_uwait *w;
	LIST_HEAD(out);
	u32 i;

	pto_uwaits_init(&uw);
	for (i = 0; i < 10010; i++) {
		w = pto_test_uwait(test, i < 10 ? i : (1ull << 50) + i, jiffies + HZ);
		t_insert(&uw, w);
	}
	uw.visits = 0;
	KUNIT_EXPECT_EQ(test, t_ready(&uw, 100, &out), 10);
	KUNIT_EXPECT_EQ(test, uw.visits, 11);
	KUNIT_EXPECT_EQ(test, uw.count, 10000);
	/* a WAIT with a head far behind the tail still reports an int */
	w = pto_test_uwait(test, 0, jiffies + HZ);
	t_insert(&uw, w);
	INIT_LIST_HEAD(&out);
	KUNIT_EXPECT_EQ(test, t_ready(&uw, 1ull << 40, &out), 1);
	KUNIT_EXPECT_EQ(test, w->res, INT_MAX);
	INIT_LIST_HEAD(&out);
	t_all(&uw, 0, &out);
}

/* The timer takes the expired, by deadline, across the jiffies wrap. */
static void pto_uwait_deadlines(struct kunit *test)
{
	const unsigned long base = ULONG_MAX - 10;
	struct pto_uwaits uw;
	struct pto_uwait *w[21], *x;
	unsigned long next = 0;
	LIST_HEAD(out);
	u32 i;

	pto_uwaits_init(&uw);
	KUNIT_EXPECT_FALSE(test, t_next(&uw, &next));
	/* parked in a shuffled order: 8 * i mod 21 */
	for (i = 0; i < 21; i++) {
		w[i] = pto_test_uwait(test, i, base + (8 * i) % 21);
		t_insert(&uw, w[i]);
	}
	KUNIT_EXPECT_TRUE(test, t_next(&uw, &next));
	KUNIT_EXPECT_EQ(test, next, base);
	/* now = base + 15, past the wrap: deadlines base .. base + 15 */
	KUNIT_EXPECT_EQ(test, t_expired(&uw, base + 15, &out), 16);
	next = base;
	list_for_each_entry(x, &out, done) {
		KUNIT_EXPECT_FALSE(test, time_before(x->deadline, next));
		KUNIT_EXPECT_EQ(test, x->res, 0);
		next = x->deadline;
	}
	KUNIT_EXPECT_TRUE(test, t_next(&uw, &next));
	KUNIT_EXPECT_EQ(test, next, base + 16);
	KUNIT_EXPECT_EQ(test, uw.count, 5);
	INIT_LIST_HEAD(&out);
	KUNIT_EXPECT_EQ(test, t_expired(&uw, base + 15, &out), 0);
	KUNIT_EXPECT_EQ(test, t_all(&uw, -ENODEV, &out), 5);
}

/* Random parks, erases, wake-ups and expiries against a plain list. */
static void pto_uwait_random(struct kunit *test)
{
	const u32 n = 600;
	struct pto_uwait *w;
	struct pto_uwait **all;
	struct pto_uwaits uw;
	struct rnd_state rs;
	u64 tail = 0, min_head;
	unsigned long now = 1000;
	u32 i, op, parked = 0, want, iter;
	LIST_HEAD(out);

	all = kunit_kcalloc(test, n, sizeof(*all), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, all);
	for (i = 0; i < n; i++)
		all[i] = pto_test_uwait(test, 0, 0);
	prandom_seed_state(&rs, 4114);
	pto_uwaits_init(&uw);
	for (iter = 0; iter < 20000; iter++) {
		op = prandom_u32_state(&rs) % 8;
		w = all[prandom_u32_state(&rs) % n];
		if (op < 4 && !w->parked) {
			w->head = tail + prandom_u32_state(&rs) % 50;
			w->deadline = now + 1 + prandom_u32_state(&rs) % 100;
			t_insert(&uw, w);
			parked++;
		} else if (op == 4 && w->parked) {
			t_erase(&uw, w);
			parked--;
		} else if (op == 5) {
			tail += prandom_u32_state(&rs) % 10;
			want = 0;
			for (i = 0; i < n; i++)
				want += all[i]->parked && all[i]->head < tail;
			INIT_LIST_HEAD(&out);
			KUNIT_ASSERT_EQ(test, t_ready(&uw, tail, &out),
					want);
			KUNIT_ASSERT_EQ(test, pto_list_count(&out), want);
			parked -= want;
		} else if (op == 6) {
			now += prandom_u32_state(&rs) % 20;
			want = 0;
			for (i = 0; i < n; i++)
				want += all[i]->parked &&
					!time_before(now, all[i]->deadline);
			INIT_LIST_HEAD(&out);
			KUNIT_ASSERT_EQ(test, t_expired(&uw, now, &out),
					want);
			parked -= want;
		}
		KUNIT_ASSERT_EQ(test, uw.count, parked);
	}
	/* what is left: every parked WAIT, each once */
	min_head = U64_MAX;
	for (i = 0; i < n; i++)
		if (all[i]->parked && all[i]->head < min_head)
			min_head = all[i]->head;
	INIT_LIST_HEAD(&out);
	KUNIT_EXPECT_EQ(test, t_all(&uw, 0, &out), parked);
	KUNIT_EXPECT_EQ(test, pto_list_count(&out), parked);
	if (parked)
		KUNIT_EXPECT_EQ(test, list_first_entry(&out, struct pto_uwait,
						       done)->head, min_head);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_FALSE(test, all[i]->parked);
}

static struct kunit_case pto_uwait_cases[] = {
	KUNIT_CASE(pto_uwait_ready_order),
	KUNIT_CASE(pto_uwait_wake_cost),
	KUNIT_CASE(pto_uwait_deadlines),
	KUNIT_CASE(pto_uwait_random),
	{}
};

static struct kunit_suite pto_uwait_suite = {
	.name = "pto_uwait",
	.test_cases = pto_uwait_cases,
};

kunit_test_suites(&pto_uwait_suite);
