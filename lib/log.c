// SPDX-License-Identifier: MIT
/*
 * Diagnostics on stderr; see log.h.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static uint32_t made;		/* runtimes the process has made */
static uint32_t live;		/* and holds now */
/*
 * The calling thread's logging: the tag it speaks with, and the report
 * it is writing, which reaches stderr in one piece when it ends.
 */
static __thread struct {
	const struct pto_log_tag *tag;
	FILE *report;		/* where its messages gather; NULL: none */
	char *text;		/* what they make, once report is closed */
	size_t len;
	uint32_t depth;		/* pto_log_begin() calls not yet ended */
} current __attribute__((tls_model("initial-exec")));

FILE *pto_log_begin(void)
{
	if (current.depth++)
		return current.report;
	/* against other threads' stdio on stderr, meanwhile and after */
	flockfile(stderr);
	current.report = open_memstream(&current.text, &current.len);
	if (!current.report)	/* no memory: in parts, as it comes */
		current.report = stderr;
	return current.report;
}

void pto_log_end(void)
{
	FILE *report = current.report;

	if (--current.depth)
		return;
	current.report = NULL;
	if (report != stderr) {
		/* one write(2) when stderr is unbuffered, as it normally is */
		if (!fclose(report))
			fwrite(current.text, 1, current.len, stderr);
		free(current.text);
		current.text = NULL;
	}
	funlockfile(stderr);
}

void pto_log(const char *fmt, ...)
{
	const struct pto_log_tag *tag = current.tag;
	FILE *out = pto_log_begin();
	va_list ap;

	fputs("pto: ", out);
	if (tag && __atomic_load_n(&live, __ATOMIC_RELAXED) > 1)
		fprintf(out, "[%s] ", tag->text);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	pto_log_end();
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
