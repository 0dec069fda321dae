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

# make check-deb: the Debian packages built, installed (DKMS), used and
# purged on this machine (root; about 4 minutes on 2 cores).
DEB_TEST := $(O)/selftests/test-deb
.PHONY: check-deb
check-deb: all driver-tests $(DEB_TEST)
	$(Q)scripts/run-tests.sh -l deb $(DEB_TEST)

$(DEB_TEST): selftests/install/test-deb.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s\n' "$(CURDIR)/$<" "$(CURDIR)" \
		"$(abspath $(O))" >$@ && chmod +x $@
