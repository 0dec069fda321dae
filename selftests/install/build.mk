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
