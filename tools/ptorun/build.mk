# SPDX-License-Identifier: MIT
# ptorun: load an orchestration shared object and run it (ptorun(1)).
# The binary is $(O)/tools/ptorun, so its object lives in
# $(O)/tools/ptorun-obj.  No -rdynamic: ORCH.so resolves pto_* from
# libpto.so, which ptorun is linked against.  -Iutil: the ring sizes
# libpto accepts (util/ringsize.h), so that its options check the same.

PTORUN := $(O)/tools/ptorun
PTORUN_OBJ := $(O)/tools/ptorun-obj/ptorun.o
# its command-line test, next to it (the samples' test runs them with it)
PTORUN_TEST := $(O)/tools/test-ptorun

BINS += $(PTORUN)
TEST_PROGS += $(PTORUN_TEST)
INSTALL_BINS += $(PTORUN)
MAN_PAGES += tools/ptorun/ptorun.1

$(PTORUN_OBJ): tools/ptorun/ptorun.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Iutil -MMD -MP -c $< -o $@

$(PTORUN): $(PTORUN_OBJ) $(LIBPTO_SO)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(PTORUN_OBJ) $(LINK_LIBPTO_SHARED)

$(PTORUN_TEST): tools/ptorun/test-ptorun.sh $(PTORUN)
	@mkdir -p $(dir $@)
	$(Q)install -m 0755 $< $@
