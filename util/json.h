/* SPDX-License-Identifier: MIT */
/*
 * JSON output helpers shared by libpto (the trace) and the tools (ptotop's
 * --json): one string escaper, so a name with a quote, a backslash or a
 * control character never makes either output invalid.
 */
#ifndef PTO_UTIL_JSON_H
#define PTO_UTIL_JSON_H

#include <stdio.h>

/**
 * pto_json_str() - write a string as a quoted JSON string
 * @out: stream to write to
 * @s: NUL-terminated UTF-8 (or ASCII) text; NULL writes ""
 *
 * Quotes and backslashes are escaped, and control characters (below 0x20,
 * and DEL) are written as \u00XX escapes.  Well-formed UTF-8 sequences
 * pass through unchanged; each byte that starts none is written as
 * \ufffd (the replacement character), so the output is always valid.
 */
void pto_json_str(FILE *out, const char *s);

#endif /* PTO_UTIL_JSON_H */
