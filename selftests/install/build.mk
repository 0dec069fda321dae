# SPDX-License-Identifier: MIT
# make install into a scratch DESTDIR and build the documented example
# against it with pkg-config; one version everywhere.  Skipped in sanitizer
# trees (the installed library is the plain build).  The Debian packages'
# test (make check-deb) and the device-access test in the VM
# (vm-access.sh) are described in Documentation/install.rst.

ifeq ($(SAN),)
INSTALL_TESTS := $(O)/selftests/test-install $(O)/selftests/test-version
TEST_PROGS += $(INSTALL_TESTS)

$(INSTALL_TESTS): $(O)/selftests/test-%: selftests/install/test-%.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s\n' "$(CURDIR)/$<" "$(CURDIR)" \
		"$(abspath $(O))" >$@ && chmod +x $@
endif

# make check-deb: the Debian packages built, installed (DKMS for two
# kernels), used in a VM and purged on this machine (root; 8 to 10 minutes
# on 2 cores, so more than run-tests.sh's default 600 s per program: one
# CI run on a busy machine was cut off in its VM step).
DEB_TEST := $(O)/selftests/test-deb
.PHONY: check-deb
check-deb: all driver-tests $(DEB_TEST)
	$(Q)PTO_TEST_TIMEOUT=$${PTO_TEST_TIMEOUT:-1800} \
		scripts/run-tests.sh -l deb $(DEB_TEST)

$(DEB_TEST): selftests/install/test-deb.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s\n' "$(CURDIR)/$<" "$(CURDIR)" \
		"$(abspath $(O))" >$@ && chmod +x $@
