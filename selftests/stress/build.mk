# SPDX-License-Identifier: MIT
# The stress harness (make stress): a driver that runs randomized programs
# on randomized runtimes, under a watchdog script (stress.sh).  Linked
# statically like the libpto tests, so it reaches the internals for its
# state dump (SIGUSR1).

STRESS_DRIVER := $(O)/selftests/stress/stress

BINS += $(STRESS_DRIVER)

$(O)/selftests/stress/%.o: EXTRA_CFLAGS += -Ilib -Iutil -Iselftests/lib

$(STRESS_DRIVER): $(O)/selftests/stress/stress.o $(SELFTESTS_LIB_COMMON) \
		$(LIBPTO_A)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< $(SELFTESTS_LIB_COMMON) \
		$(LINK_LIBPTO_STATIC)

# STRESS_SECONDS (60), STRESS_SEED, STRESS_SCHED: see stress.sh
.PHONY: stress
stress: $(STRESS_DRIVER)
	$(Q)O=$(O) selftests/stress/stress.sh
