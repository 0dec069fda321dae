/* SPDX-License-Identifier: MIT */
/*
 * Numbers in PTO_* variables and in the tools' options, read one way
 * everywhere: decimal (a leading 0 is not octal) or 0x hex, with no sign
 * nor blanks, and for a size a binary K, M, G or T suffix that an i and a
 * B may follow, in either case (64K, 64KiB, 256MB, 1Tb).  libpto and
 * ptorun each had a parser of their own, and PTO_HEAP_SIZE=1Tb was
 * taken where ptorun -H 1Tb was refused.
 */
#ifndef PTO_UTIL_NUMBER_H
#define PTO_UTIL_NUMBER_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The shift a size suffix at *s stands for (K: 10 ... T: 40), 0: none. */
static inline unsigned int pto_size_suffix(const char **s)
{
	const char *p = **s ? strchr("KMGT", toupper((unsigned char)**s)) :
			NULL;

	if (!p)
		return 0;
	(*s)++;
	if (toupper((unsigned char)**s) == 'I')
		(*s)++;
	if (toupper((unsigned char)**s) == 'B')
		(*s)++;
	return 10 * (unsigned int)(p - "KMGT" + 1);
}

/* s into *out, as a size (suffix allowed) or a count; 0 or -EINVAL. */
static inline int pto_parse_number(const char *s, bool size, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	const char *rest, *digits = s;
	int base = 10;
	char *end;

	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		digits = s + 2;
	}
	/* strtoull() would take blanks and a sign */
	if (!isxdigit((unsigned char)*digits) ||
	    (base == 10 && !isdigit((unsigned char)*digits)))
		return -EINVAL;
	errno = 0;
	/* given the 0x too, it takes no second one (0x0x10) */
	v = strtoull(s, &end, base);
	if (errno)
		return -EINVAL;
	rest = end;
	if (size)
		shift = pto_size_suffix(&rest);
	if (*rest || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

#endif /* PTO_UTIL_NUMBER_H */
