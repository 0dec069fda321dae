#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test_device on /dev/pto0, inside the VM harness (run as root with O
# set to the build tree): a runtime whose device context failed (a task
# past task_timeout_ms) refuses its later runs with -EIO at once.
set -u
O=${O:-build}
PTO_DEVICE=/dev/pto0 exec "$O/selftests/lib/test_device"
