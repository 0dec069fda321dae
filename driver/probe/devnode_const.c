// SPDX-License-Identifier: GPL-2.0
/* Compile probe: a class's devnode() takes a const struct device (6.2). */
#include <linux/device.h>

static char *pto_probe_devnode(const struct device *dev, umode_t *mode)
{
	return NULL;
}

void pto_probe(struct class *c);
void pto_probe(struct class *c)
{
	c->devnode = pto_probe_devnode;
}
