// SPDX-License-Identifier: GPL-2.0
/* Compile probe: class attributes take a const class and attribute (6.4). */
#include <linux/device.h>

static ssize_t pto_probe_store(const struct class *c,
			       const struct class_attribute *a,
			       const char *buf, size_t count)
{
	return count;
}

static struct class_attribute pto_probe_attr =
	__ATTR(pto_probe, 0200, NULL, pto_probe_store);

struct class_attribute *pto_probe(void);
struct class_attribute *pto_probe(void)
{
	return &pto_probe_attr;
}
