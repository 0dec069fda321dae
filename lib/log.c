// SPDX-License-Identifier: MIT
/*
 * Diagnostics on stderr; see log.h.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"

static uint32_t made;		/* runtimes the process has made */
static uint32_t live;		/* and holds now */
/* the tag the calling thread speaks with */
static __thread struct {
	const struct pto_log_tag *tag;
} current __attribute__((tls_model("initial-exec")));

void pto_log(const char *fmt, ...)
{
	const struct pto_log_tag *tag = current.tag;
	va_list ap;

	va_start(ap, fmt);
	/* prefix and text together, between other threads' messages */
	flockfile(stderr);
	fputs("pto: ", stderr);
	if (tag && __atomic_load_n(&live, __ATOMIC_RELAXED) > 1)
		fprintf(stderr, "[%s] ", tag->text);
	vfprintf(stderr, fmt, ap);
	funlockfile(stderr);
	va_end(ap);
}

void pto_log_tag_init(struct pto_log_tag *tag, const char *device)
{
	uint32_t n = __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);

	snprintf(tag->text, sizeof(tag->text), "runtime %u, %s", n, device);
	__atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
}

void pto_log_tag_fini(struct pto_log_tag *tag)
{
	(void)tag;
	__atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
}

const struct pto_log_tag *pto_log_enter(const struct pto_log_tag *tag)
{
	const struct pto_log_tag *prev = current.tag;

	current.tag = tag;
	return prev;
}

void pto_log_leave(const struct pto_log_tag *prev)
{
	current.tag = prev;
}
