/* SPDX-License-Identifier: MIT */
/*
 * UTF-8 validation for text that comes from outside (a process's command
 * line, a kernel's name) and goes into JSON or onto a terminal, where an
 * invalid byte makes the document invalid or the screen garbled.
 */
#ifndef PTO_UTIL_UTF8_H
#define PTO_UTIL_UTF8_H

#include <stddef.h>

/*
 * The length of the well-formed UTF-8 sequence at s (1 for ASCII), or 0
 * for a byte that starts none: a stray continuation byte, an overlong
 * form, a surrogate, a code point past U+10FFFF, or a sequence cut short
 * (a NUL where a continuation byte belongs: s is NUL-terminated).
 */
static inline size_t pto_utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	/* the second byte's range excludes overlongs and surrogates */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

#endif /* PTO_UTIL_UTF8_H */
