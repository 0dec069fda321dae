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
 * The line is prefixed with "pto: ".
 */
void pto_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PTO_LIB_LOG_H */
