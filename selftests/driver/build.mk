# SPDX-License-Identifier: GPL-2.0
# The driver's kselftests and the wait benchmark.  They need /dev/pto0, so
# they run inside the VM (make vmtest), not in make check-unit.  The kernel's
# kselftest_harness.h and checkpatch.pl come from Debian's linux-source-6.1
# tarball, extracted into $(O)/ksft at build time.

KSRC_TAR ?= $(firstword $(wildcard /usr/src/linux-source-6.1.tar.xz))
KSRC_TOP := linux-source-6.1
KSFT_DIR := $(O)/ksft
KSFT_FILES := tools/testing/selftests/kselftest_harness.h \
	tools/testing/selftests/kselftest.h \
	scripts/checkpatch.pl scripts/spelling.txt \
	scripts/const_structs.checkpatch scripts/kernel-doc
KSFT_STAMP := $(KSFT_DIR)/.extracted
CHECKPATCH := $(KSFT_DIR)/scripts/checkpatch.pl

$(KSFT_STAMP):
	@mkdir -p $(KSFT_DIR)
	$(if $(Q),@echo "  TAR     $(KSRC_TAR) -> $(KSFT_DIR)")
	$(Q)test -n "$(KSRC_TAR)" || \
		{ echo "linux-source-6.1 is not installed (make deps-vm)"; exit 1; }
	$(Q)tar -xJf $(KSRC_TAR) -C $(KSFT_DIR) --strip-components=1 \
		$(KSFT_FILES:%=$(KSRC_TOP)/%)
	$(Q)touch $@

DRIVER_TEST_NAMES := pto_driver_test pto_hardening_test pto_stress \
	pto_wait_bench
DRIVER_TESTS := $(DRIVER_TEST_NAMES:%=$(O)/selftests/driver/%)

.PHONY: driver-tests checkpatch checkpatch-user kerneldoc driver-lint
driver-tests: $(DRIVER_TESTS) fuzz-progs

$(O)/selftests/driver/%.o: selftests/driver/%.c $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -I$(KSFT_DIR)/tools/testing/selftests \
		-Iselftests/driver -Iops -Wno-sign-compare -MMD -MP -c $< -o $@

$(DRIVER_TESTS): $(O)/selftests/driver/%: $(O)/selftests/driver/%.o
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< -luring -pthread

# checkpatch --strict over the driver and the uapi (uapi headers cannot
# use BIT(), which is not exported to userspace)
checkpatch: $(KSFT_STAMP)
	$(Q)$(CHECKPATCH) --strict --no-tree --terse --show-types \
		--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES \
		-f driver/*.[ch] driver/probe/*.c \
		driver/tests/*.c
	$(Q)$(CHECKPATCH) --strict --no-tree --terse --show-types \
		--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES,BIT_MACRO \
		-f include/uapi/pto/pto_uapi.h

# The same style over the userspace code, less what is kernel-only:
# kernel types and macros (u32, ARRAY_SIZE, BIT, __packed), usage text
# split over lines, PRIu64 read as CamelCase, execv argument vectors,
# sizeof(*arg) read as an argument used twice.  Hex float literals and
# OpenMP depend clauses trip the spacing rules: those files are listed
# with their false positives filtered.
CHECKPATCH_USER_IGNORE := SPDX_LICENSE_TAG FILE_PATH_CHANGES PREFER_KERNEL_TYPES \
	SPLIT_STRING ARRAY_SIZE PREFER_DEFINED_ATTRIBUTE_MACRO BIT_MACRO \
	EMBEDDED_FUNCTION_NAME ARCH_DEFINES CAMELCASE STATIC_CONST_CHAR_ARRAY \
	MACRO_ARG_REUSE MACRO_WITH_FLOW_CONTROL PARENTHESIS_ALIGNMENT
cp_empty :=
cp_comma := ,
cp_list = $(subst $(cp_empty) $(cp_empty),$(cp_comma),$(strip $(1)))
# pto_cxx.h is C++ (templates, C++ casts), which checkpatch misreads
CHECKPATCH_USER_FILES := lib/*.[ch] lib/backend/*.[ch] util/*.[ch] \
	$(filter-out include/pto/pto_cxx.h,$(wildcard include/pto/*.h)) \
	ops/*.[ch] tools/*/*.[ch] samples/*.[ch]
# "spaces preferred around that '-'" in 0x1p-10 and 2e-5, and ':' in
# depend(in: ...) clauses
CHECKPATCH_USER_FALSE := ((metg_kernel|pa)\.[ch]:[0-9]+: CHECK:SPACING: spaces preferred around that '-'|(worker|metg)_omp\.c:[0-9]+: (ERROR|CHECK):SPACING: spaces required around that ':')
checkpatch-user: $(KSFT_STAMP)
	$(Q)out=$$($(CHECKPATCH) --strict --no-tree --terse --show-types \
		--ignore $(call cp_list,$(CHECKPATCH_USER_IGNORE)) -f $(CHECKPATCH_USER_FILES) \
		2>&1 | grep -v '^total:' | grep -Ev "$(CHECKPATCH_USER_FALSE)"); \
	if [ -n "$$out" ]; then echo "$$out"; exit 1; fi

# the fuzzer runs in the VM with the driver tests
-include selftests/fuzz/build.mk

# kernel-doc of the driver, its tests and the uapi: no warning allowed
# (the extraction stamp predates kernel-doc in KSFT_FILES: extract it)
KERNELDOC := $(KSFT_DIR)/scripts/kernel-doc
$(KERNELDOC): $(KSFT_STAMP)
	$(Q)test -f $@ || tar -xJf $(KSRC_TAR) -C $(KSFT_DIR) \
		--strip-components=1 $(KSRC_TOP)/scripts/kernel-doc
# and of libpto's public headers, where every function libpto.map exports
# has a kernel-doc comment
kerneldoc: $(KERNELDOC)
	$(Q)out=$$(perl $(KERNELDOC) -none driver/*.[ch] driver/tests/*.c \
		include/uapi/pto/pto_uapi.h include/pto/*.h 2>&1); \
	for f in $$(sed -n 's/^[[:space:]]*\(pto_[a-z0-9_]*\);.*/\1/p' \
			lib/libpto.map | sort -u); do \
		grep -q "^ \* $$f() - " include/pto/*.h || \
		out="$$out$${out:+\n}$$f: exported by libpto.map, no kernel-doc"; \
	done; \
	if [ -n "$$out" ]; then printf '%b\n' "$$out"; exit 1; fi

# the stage make check runs: style and documentation of the driver
driver-lint:
	$(Q)f=0; $(MAKE) --no-print-directory -s checkpatch || f=1; \
	$(MAKE) --no-print-directory -s kerneldoc || f=1; \
	$(MAKE) --no-print-directory -s checkpatch-user || f=1; \
	if [ $$f = 0 ]; then echo "ok 1 - checkpatch --strict and kernel-doc: clean"; \
	else echo "not ok 1 - checkpatch --strict or kernel-doc"; fi; exit $$f
