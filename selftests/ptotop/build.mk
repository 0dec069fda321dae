# SPDX-License-Identifier: MIT
# ptotop and stats page tests.  test_ptotop is the shell test copied into
# the build tree, so it finds the ptotop and pto_loadgen of its own tree
# (plain, asan or tsan) next to itself.

PTOTOP_TEST_DIR := $(O)/selftests/ptotop
PTOTOP_LOADGEN := $(PTOTOP_TEST_DIR)/pto_loadgen
PTOTOP_TESTS := $(PTOTOP_TEST_DIR)/test_statspage $(PTOTOP_TEST_DIR)/test_ptotop

BINS += $(PTOTOP_LOADGEN)
TEST_PROGS += $(PTOTOP_TESTS)

# test_statspage drives the writer side, which is libpto-internal.
$(PTOTOP_TEST_DIR)/test_statspage.o: EXTRA_CFLAGS += -Ilib -Iutil

$(PTOTOP_LOADGEN) $(PTOTOP_TEST_DIR)/test_statspage: %: %.o $(LIBPTO_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(LINK_LIBPTO_STATIC)

$(PTOTOP_TEST_DIR)/test_ptotop: selftests/ptotop/test_ptotop.sh \
		$(PTOTOP) $(PTOTOP_LOADGEN)
	@mkdir -p $(dir $@)
	$(Q)install -m 0755 $< $@
