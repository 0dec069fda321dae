// SPDX-License-Identifier: MIT
/*
 * Backend selection: "sim" is the in-process simulator, anything else names
 * a /dev/ptoN node driven through pto.ko.
 */
#include <string.h>

#include "backend.h"

const struct pto_backend_ops *pto_backend_for(const char *device)
{
	if (!device || !*device || !strcmp(device, "sim"))
		return &pto_sim_backend_ops;
	return &pto_dev_backend_ops;
}

