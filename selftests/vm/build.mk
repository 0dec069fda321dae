# SPDX-License-Identifier: GPL-2.0
# make vmtest: boot Debian's kernel in qemu and run the driver's tests and
# the samples on /dev/pto0 inside it (selftests/vm/run.sh).
.PHONY: vmtest
vmtest: lib-all $(BINS) $(SAMPLE_SOS) driver-tests
	$(Q)O=$(O) MAKE="$(MAKE)" sh selftests/vm/run.sh
