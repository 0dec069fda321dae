# SPDX-License-Identifier: MIT
# ptorun: load an orchestration shared object and run it (ptorun(1)).
# The binary is $(O)/tools/ptorun, so its object lives in
# $(O)/tools/ptorun-obj.  No -rdynamic: ORCH.so resolves pto_* from
# libpto.so, which ptorun is linked against.

PTORUN := $(O)/tools/ptorun
PTORUN_OBJ := $(O)/tools/ptorun-obj/ptorun.o

BINS += $(PTORUN)
INSTALL_BINS += $(PTORUN)
MAN_PAGES += tools/ptorun/ptorun.1

$(PTORUN_OBJ): tools/ptorun/ptorun.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(PTORUN): $(PTORUN_OBJ) $(LIBPTO_SO)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(PTORUN_OBJ) $(LINK_LIBPTO_SHARED)
