# SPDX-License-Identifier: GPL-2.0
# make vmtest: boot Debian's kernel in qemu and run the driver's tests and
# the samples on /dev/pto0 inside it (selftests/vm/run.sh).
# make vmtest-debug: the same on a debug kernel built from linux-source-6.1
# (selftests/vm/vmtest-debug.sh), with KUnit, KASAN, lockdep and friends.
.PHONY: vmtest vmtest-debug
vmtest: lib-all $(BINS) $(SAMPLE_SOS) driver-tests
	$(Q)O=$(O) MAKE="$(MAKE)" sh selftests/vm/run.sh

vmtest-debug: lib-all $(BINS) $(SAMPLE_SOS) driver-tests
	$(Q)O=$(O) MAKE="$(MAKE)" sh selftests/vm/vmtest-debug.sh
