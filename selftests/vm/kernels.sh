#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make vmtest-kernels: the VM stage (run.sh) once per Debian 12 kernel
# series, each under its own name (vm-6.1, vm-6.12): Debian 12 ships 6.1
# and, in bookworm-security/backports style updates, 6.12
# (linux-image-6.12-amd64 and linux-headers-6.12-amd64, installed by
# scripts/deps.sh vm).  The module is built against each series' headers
# with its compile probes; no version check exists in the driver.
#   kernels.sh [SERIES...]     default: 6.1 6.12
# Fails when any series fails or has no kernel with headers installed.
set -u
cd "$(dirname "$0")/../.."
status=0
for s in ${*:-6.1 6.12}; do
	PTO_VM_KVER="$s.*-amd64" PTO_VM_NAME=$s sh selftests/vm/run.sh || status=1
done
exit $status
