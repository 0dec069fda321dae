// SPDX-License-Identifier: GPL-2.0
/*
 * The built-in ops as the reference of the op tests: this module's own
 * copy of ops/pto_ops.c, compiled as pto.ko compiles its copy.
 */
#include "../../ops/pto_ops.c"
