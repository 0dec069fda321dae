# SPDX-License-Identifier: GPL-2.0
# make vmtest: boot Debian's kernel in qemu and run the driver's tests and
# the samples on /dev/pto0 inside it (selftests/vm/run.sh).
# make vmtest-debug: the same on a debug kernel built from linux-source-6.1
# (selftests/vm/vmtest-debug.sh), with KUnit, KASAN, lockdep and friends.
.PHONY: vmtest vmtest-debug
# The scripts run their makes with MAKEFLAGS cleared and their own -j: no
# recursive make in GNU make's sense.  Named through VM_MAKE, a recipe
# does not mention $(MAKE), which would make "make -n vmtest" run it.
VM_MAKE := $(MAKE)
vmtest: lib-all $(BINS) $(SAMPLE_SOS) driver-tests
	$(Q)O=$(O) MAKE="$(VM_MAKE)" sh selftests/vm/run.sh

vmtest-debug: lib-all $(BINS) $(SAMPLE_SOS) driver-tests
	$(Q)O=$(O) MAKE="$(VM_MAKE)" sh selftests/vm/vmtest-debug.sh

# make vmtest-kernels: the same on every Debian 12 kernel series (6.1,
# 6.12); make vmtest-arm64: on Debian's arm64 kernel under
# qemu-system-aarch64, with the module and userspace cross-built.
.PHONY: vmtest-kernels vmtest-arm64
vmtest-kernels: lib-all $(BINS) $(SAMPLE_SOS) driver-tests
	$(Q)O=$(O) MAKE="$(VM_MAKE)" sh selftests/vm/kernels.sh
vmtest-arm64: lib-all $(BINS) $(SAMPLE_SOS) driver-tests
	$(Q)O=$(O) MAKE="$(VM_MAKE)" sh selftests/vm/arm64.sh
