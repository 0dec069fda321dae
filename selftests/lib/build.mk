# SPDX-License-Identifier: MIT
# libpto's userspace tests: one TAP program per area, linked statically so
# the unit tests reach the internals.  testlib.o holds the shared helpers,
# randprog.o the random programs (test_random, selftests/stress).

SELFTESTS_LIB_NAMES := test_internals test_basic test_overlap test_errors test_depth \
	test_idle test_trace test_check test_threads test_viewdeps \
	test_window test_random test_view test_runs test_wait test_place \
	test_device
SELFTESTS_LIB_PROGS := $(SELFTESTS_LIB_NAMES:%=$(O)/selftests/lib/%)
SELFTESTS_LIB_COMMON := $(O)/selftests/lib/testlib.o \
	$(O)/selftests/lib/randprog.o

TEST_PROGS += $(SELFTESTS_LIB_PROGS)

# Unit tests reach into libpto's internals; they say so here.
$(O)/selftests/lib/%.o: EXTRA_CFLAGS += -Ilib -Iutil

$(SELFTESTS_LIB_PROGS): $(O)/selftests/lib/%: $(O)/selftests/lib/%.o \
		$(SELFTESTS_LIB_COMMON) $(LIBPTO_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(SELFTESTS_LIB_COMMON) \
		$(LINK_LIBPTO_STATIC)

# lib/'s files depend on each other in one direction (layering.py)
LAYERING_TEST := $(O)/selftests/lib/test-layering
TEST_PROGS += $(LAYERING_TEST)

$(LAYERING_TEST): selftests/lib/layering.py $(LIBPTO_A)
	@mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\nexec python3 %s %s\n' "$(CURDIR)/$<" \
		"$(abspath $(O))/lib" >$@ && chmod +x $@
