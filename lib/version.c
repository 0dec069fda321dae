// SPDX-License-Identifier: MIT
/*
 * pto_version(): the project's version (the top-level VERSION file), the
 * same string as the tools' --version, the module's MODULE_VERSION, the
 * packages' upstream version and the pkg-config Version.
 */
#include <pto/pto.h>

#ifndef PTO_VERSION_STRING
#error "PTO_VERSION_STRING comes from the VERSION file (lib/build.mk)"
#endif

const char *pto_version(void)
{
	return PTO_VERSION_STRING;
}
