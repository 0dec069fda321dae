# SPDX-License-Identifier: MIT
# make install into a scratch DESTDIR and build the documented example
# against it with pkg-config.  Skipped in sanitizer trees (the installed
# library is the plain build).

ifeq ($(SAN),)
INSTALL_TEST := $(O)/selftests/test-install
TEST_PROGS += $(INSTALL_TEST)

$(INSTALL_TEST): selftests/install/test-install.sh
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec %s %s %s\n' "$(CURDIR)/$<" "$(CURDIR)" \
		"$(abspath $(O))" >$@ && chmod +x $@
endif
