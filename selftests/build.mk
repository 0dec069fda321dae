# SPDX-License-Identifier: MIT
# Userspace tests of libpto (selftests/lib), the driver's kselftests
# (selftests/driver) and the VM harness that runs them (selftests/vm).
-include selftests/lib/build.mk
-include selftests/stress/build.mk
-include selftests/driver/build.mk
# before vm: vmtest's prerequisites expand $(BINS) when read
-include selftests/ptotop/build.mk
-include selftests/vm/build.mk
-include selftests/install/build.mk
-include selftests/abi/build.mk
-include selftests/cxx/build.mk
