# SPDX-License-Identifier: MIT
# Sample orchestrations, built as shared objects that ptorun loads.  They
# are not linked against libpto: their pto_* references resolve to the
# libpto.so already loaded by ptorun.  Hidden visibility keeps the shared
# helpers private; only the pto_orchestration_* entry points are exported.

SAMPLE_NAMES := bgemm bgemm_builtin paged_attention paged_attention_builtin \
	tree_reduce
SAMPLE_SOS += $(SAMPLE_NAMES:%=$(O)/samples/%.so)

SAMPLE_CFLAGS := -fvisibility=hidden

$(O)/samples/%.o: samples/%.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(SAMPLE_CFLAGS) -MMD -MP -c $< -o $@

SAMPLE_COMMON := $(O)/samples/sample.o

$(O)/samples/bgemm.so: $(O)/samples/bgemm.o $(O)/samples/bgemm_common.o
$(O)/samples/bgemm_builtin.so: $(O)/samples/bgemm_builtin.o \
	$(O)/samples/bgemm_common.o
$(O)/samples/paged_attention.so: $(O)/samples/paged_attention.o \
	$(O)/samples/pa_common.o
$(O)/samples/paged_attention_builtin.so: \
	$(O)/samples/paged_attention_builtin.o $(O)/samples/pa_common.o
$(O)/samples/tree_reduce.so: $(O)/samples/tree_reduce.o

SAMPLE_SO_FILES := $(SAMPLE_NAMES:%=$(O)/samples/%.so)
$(SAMPLE_SO_FILES): $(O)/samples/%.so: $(SAMPLE_COMMON)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared $(ALL_LDFLAGS) -o $@ $^ -lm

# The TAP test: every sample through ptorun in several configurations.
SAMPLES_TEST := $(O)/samples/test-samples
TEST_PROGS += $(SAMPLES_TEST)

$(SAMPLES_TEST): samples/test-samples.sh $(SAMPLE_SOS) $(O)/tools/ptorun
	@mkdir -p $(dir $@)
	$(Q)cp $< $@ && chmod +x $@
