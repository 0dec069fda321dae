// SPDX-License-Identifier: MIT
/*
 * Public symbols with more than one version (see libpto.map).
 *
 * Built without LTO (lib/build.mk): GCC's LTO loses versioned symbols
 * bound with .symver, so the versions are bound here, in an object LTO
 * does not see.  Both versions are explicit, as ld gives a plain symbol
 * listed in two nodes neither.  libpto.a gets this file built with
 * PTO_NO_SYMVER instead: the plain name, no versions.
 */
#include "runtime.h"

#ifdef PTO_NO_SYMVER
/*
 * libpto.a: a static link has no version nodes.  Linked into a shared
 * object (a plugin, a Python extension), pto_scope_begin@LIBPTO_0 and
 * @@LIBPTO_0.2 would fail it with "version node not found"; an archive
 * member serves one version anyway, the current one.
 */
int pto_scope_begin(struct pto_runtime *rt)
{
	return pto_orch_scope_begin(rt);
}
#else
/*
 * pto_scope_begin returned void in 0.1 and returns int since 0.2, so a
 * wrong call can be refused.  On the ABIs libpto supports (x86-64,
 * arm64) the int is a register a 0.1 caller ignores: the same code serves
 * both versions, and programs built against 0.1 keep working.
 */
int pto_scope_begin_0_2(struct pto_runtime *rt)
{
	return pto_orch_scope_begin(rt);
}

__asm__(".symver pto_scope_begin_0_2, pto_scope_begin@@LIBPTO_0.2");

int pto_scope_begin_0_1(struct pto_runtime *rt)
{
	return pto_orch_scope_begin(rt);
}

__asm__(".symver pto_scope_begin_0_1, pto_scope_begin@LIBPTO_0");
#endif
