#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make vmtest-debug: everything make vmtest runs, on the debug kernel
# (selftests/vm/debug-kernel.sh: KASAN, lockdep, KMEMLEAK, UBSAN, KFENCE,
# DEBUG_OBJECTS, hung-task and RCU-stall detectors, KUnit), booted with
# preempt=full, as the VM run "vm-debug".  Building the kernel the first
# time takes about 20 minutes on 2 cores; it is cached afterwards.
set -u
cd "$(dirname "$0")/../.."
O=${O:-build}
if ! k=$(O="$O" sh selftests/vm/debug-kernel.sh); then
	echo "vm-debug: the debug kernel did not build"
	echo "vm-debug: 0 passed, 1 failed, 0 skipped"
	[ -n "${PTO_RESULTS:-}" ] && echo "0 1 0" >>"$PTO_RESULTS"
	exit 1
fi
export PTO_VM_VMLINUZ="$k/arch/x86/boot/bzImage"
export PTO_VM_KHDR="$k"
export PTO_VM_NAME=debug
# the detectors slow everything down several times under TCG
export PTO_VM_TIMEOUT=${PTO_VM_TIMEOUT:-2400}
# and its boot: userspace after 21 to 26 s, 59 s on a busy machine
export PTO_VM_BOOT_TIMEOUT="${PTO_VM_BOOT_TIMEOUT:-300}"
# the sanitizers make the guest several times slower: smaller test loops
export PTO_TEST_SCALE=${PTO_TEST_SCALE:-5}
export PTO_VM_APPEND="preempt=full kunit.enable=1 ${PTO_VM_APPEND:-}"
exec sh selftests/vm/run.sh
