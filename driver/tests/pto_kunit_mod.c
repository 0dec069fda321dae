// SPDX-License-Identifier: GPL-2.0
/*
 * pto_kunit.ko: the KUnit suites of pto.ko.  Each *_test.c registers its
 * suites; they run when this module is loaded, pto.ko being loaded first.
 */
#include <linux/module.h>

MODULE_DESCRIPTION("KUnit suites of pto.ko");
MODULE_AUTHOR("PTO project");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
