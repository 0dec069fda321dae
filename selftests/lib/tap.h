/* SPDX-License-Identifier: MIT */
/*
 * A tiny TAP producer for the libpto tests.
 *
 *	ok(cond, "name %d", i);		"ok N - name" or "not ok N - name"
 *	skip("why");			"ok N # SKIP why"
 *	diag("x=%d", x);		"# x=x" (to stdout, so it stays in order)
 *	return tap_done();		prints the plan, returns the exit status
 *
 * A failed check also prints "#   at FILE:LINE".  The plan is printed at
 * the end ("1..N"), so tests need not count their checks in advance; an
 * up-front tap_plan(N) is checked against the count instead.
 *
 * Only the test's main thread may call these: kernels run on simulator
 * threads and must record what they see for the main thread to check.
 */
#ifndef PTO_SELFTESTS_TAP_H
#define PTO_SELFTESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count;
static int tap_failures;
static int tap_planned = -1;

static inline void tap_plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void tap_vdiag(const char *fmt, va_list ap)
{
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline __attribute__((format(printf, 1, 2)))
void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vdiag(fmt, ap);
	va_end(ap);
}

static inline __attribute__((format(printf, 4, 5)))
int tap_ok_(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass) {
		tap_failures++;
		printf("#   Failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return pass;
}

/* Evaluates to cond's truth, so a test can stop after a failed check. */
#define ok(cond, ...) tap_ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* ok() for two integers, printing both when they differ. */
#define ok_eq(got, want, ...) ({					\
	long long got_ = (long long)(got), want_ = (long long)(want);	\
	int pass_ = tap_ok_(got_ == want_, __FILE__, __LINE__,		\
			    __VA_ARGS__);				\
	if (!pass_)							\
		diag("  got %lld, want %lld (%s)", got_, want_, #got);	\
	pass_;								\
})

static inline __attribute__((format(printf, 1, 2)))
void skip(const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	printf("ok %d # SKIP ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Stop the whole test: a check failed that later ones depend on. */
static inline __attribute__((format(printf, 1, 2), noreturn))
void bail_out(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(2);
}

/* Print the plan if not done yet; the exit status for main(). */
static inline int tap_done(void)
{
	if (tap_planned < 0) {
		printf("1..%d\n", tap_count);
	} else if (tap_planned != tap_count) {
		printf("# planned %d tests but ran %d\n", tap_planned,
		       tap_count);
		tap_failures++;
	}
	if (tap_failures)
		printf("# %d of %d tests failed\n", tap_failures, tap_count);
	fflush(stdout);
	return tap_failures ? 1 : 0;
}

#endif /* PTO_SELFTESTS_TAP_H */
