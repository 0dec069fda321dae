// SPDX-License-Identifier: MIT
/*
 * Backend selection: "sim" is the in-process simulator, anything else names
 * a /dev/ptoN node driven through pto.ko.
 */
#include <errno.h>
#include <string.h>

#include "backend.h"

const struct pto_backend_ops *pto_backend_for(const char *device)
{
	if (!device || !*device || !strcmp(device, "sim"))
		return &pto_sim_backend_ops;
	return &pto_dev_backend_ops;
}

/*
 * Placeholder until lib/backend_dev.c lands: refuses device nodes.
 * (Weak, and removed together with this comment when the dev backend is in.)
 */
static int nodev_open(struct pto_backend *be, const struct pto_config *cfg)
{
	return -ENODEV;
}

__attribute__((weak)) const struct pto_backend_ops pto_dev_backend_ops = {
	.name = "dev",
	.open = nodev_open,
};
