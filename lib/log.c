// SPDX-License-Identifier: MIT
/*
 * Diagnostics on stderr; see log.h.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

void pto_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* prefix and text together, between other threads' messages */
	flockfile(stderr);
	fputs("pto: ", stderr);
	vfprintf(stderr, fmt, ap);
	funlockfile(stderr);
	va_end(ap);
}
