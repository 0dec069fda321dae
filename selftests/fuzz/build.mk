# SPDX-License-Identifier: GPL-2.0
# The fuzzer of pto.ko (selftests/fuzz/pto_fuzz.c).  It needs /dev/pto0,
# so it runs inside the VM (make vmtest runs it for PTO_FUZZ_SECONDS,
# 60 by default; longer on demand, see Documentation/testing.rst).
# selftests/fuzz/sys/linux/dev_pto.txt describes the uapi for syzkaller.

FUZZ_PROGS := $(O)/selftests/fuzz/pto_fuzz

.PHONY: fuzz-progs
fuzz-progs: $(FUZZ_PROGS)

$(O)/selftests/fuzz/%: selftests/fuzz/%.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $< -luring -pthread
