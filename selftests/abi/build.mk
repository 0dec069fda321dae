# SPDX-License-Identifier: MIT
# ABI compatibility: a program built against libpto 0.1's header (kept in
# include-0.1/) runs against today's libpto.so.  It is compiled with that
# header only, not with include/, as a 0.1 user's program was.  And
# libpto.a linked into a shared object loads and runs.

ifeq ($(SAN),)
ABI_TEST_DIR := $(O)/selftests/abi
ABI_PROG := $(ABI_TEST_DIR)/test_abi_0_1
ABI_TEST := $(ABI_TEST_DIR)/test-abi
TEST_PROGS += $(ABI_TEST)

$(ABI_PROG): selftests/abi/test_abi_0_1.c $(LIBPTO_SO)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter \
		-Iselftests/abi/include-0.1/pto -Iselftests/abi/include-0.1 \
		-o $@ $< -L$(O) -lpto

# libpto.a inside a shared object (a plugin, a Python extension)
ABI_PLUGIN := $(ABI_TEST_DIR)/plugin.so
$(ABI_PLUGIN): selftests/abi/plugin.c $(LIBPTO_A)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -fPIC -shared \
		-Iinclude -Iinclude/uapi -o $@ $< $(LIBPTO_A) $(LDLIBS_PTO)

$(ABI_TEST): selftests/abi/test-abi.sh $(ABI_PROG) $(ABI_PLUGIN)
	$(Q)printf '#!/bin/sh\nexec %s %s\n' "$(CURDIR)/$<" \
		"$(abspath $(O))" >$@ && chmod +x $@
endif
