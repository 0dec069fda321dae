#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The scope-depth programs of test_depth on /dev/pto0, inside the VM
# harness (run with O set to the build tree): rings per scope depth are
# the device's protocol as much as the simulator's.  At a fifth of the
# loop lengths (TCG is slow), still far past where one ring deadlocked.
set -u
O=${O:-build}
PTO_DEVICE=/dev/pto0 PTO_TEST_SCALE=${PTO_TEST_SCALE:-20} \
	exec "$O/selftests/lib/test_depth"
