/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics: libpto reports what went wrong on stderr, prefixed "pto: ",
 * and returns an error code; it never exits.
 */
#ifndef PTO_LIB_LOG_H
#define PTO_LIB_LOG_H

/**
 * pto_log() - print a diagnostic on stderr
 * @fmt: printf format, normally ending in a newline
 *
 * The line is prefixed with "pto: ", and no other thread's stdio output
 * comes between the two.  A message made of several calls (a line in
 * parts, or a report of several lines) holds flockfile(stderr) around
 * them, which pto_log() takes again.
 */
void pto_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PTO_LIB_LOG_H */
