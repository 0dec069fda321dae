/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics: libpto reports what went wrong on stderr, prefixed "pto: ",
 * and returns an error code; it never exits.
 *
 * A process may hold several runtimes (two devices, say), whose messages
 * would read alike.  Each runtime therefore has a tag, "runtime N,
 * DEVICE" with N counting the runtimes the process made, and every thread
 * working for a runtime (its orchestrator during pto_run() and its other
 * calls, its scheduler and core threads) prints that runtime's tag after
 * the prefix while more than one runtime exists.
 */
#ifndef PTO_LIB_LOG_H
#define PTO_LIB_LOG_H

#include <stdio.h>

struct pto_log_tag {
	char text[96];
};

/**
 * pto_log() - print a diagnostic on stderr
 * @fmt: printf format, normally ending in a newline
 *
 * The line is prefixed with "pto: ", then the calling thread's runtime tag
 * in brackets while the process holds more than one runtime, and reaches
 * stderr in one write: neither another thread nor another process writing
 * to the same file or pipe comes between its parts.
 */
void pto_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A message of several calls (a line in parts, a report of several
 * lines): pto_log_begin() opens a report on the calling thread and
 * returns the stream to write its parts to; pto_log() adds to it, and
 * pto_log_end() writes it to stderr in one piece.  Reports nest: an inner
 * begin returns the open stream, and only the outermost end writes.
 */
FILE *pto_log_begin(void);
void pto_log_end(void);

/*
 * Make a runtime's tag and count the runtime; pto_log_tag_fini(), once,
 * when it is destroyed, uncounts it.
 */
void pto_log_tag_init(struct pto_log_tag *tag, const char *device);
void pto_log_tag_fini(struct pto_log_tag *tag);

/*
 * The calling thread speaks for the runtime of tag (NULL: none) from now
 * on; returns the tag it spoke for before, for pto_log_leave().
 */
const struct pto_log_tag *pto_log_enter(const struct pto_log_tag *tag);
void pto_log_leave(const struct pto_log_tag *prev);

#endif /* PTO_LIB_LOG_H */
