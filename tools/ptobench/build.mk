# SPDX-License-Identifier: MIT
# ptobench: the driver and its workers, all in $(O)/tools next to each other
# (the driver runs the workers from its own directory; installed, they sit
# together in LIBEXECDIR/pto, and BINDIR/ptobench is a symlink to the
# driver there, which /proc/self/exe resolves).  Objects live in $(O)/tools/ptobench-obj so they do
# not collide with the ptobench binary.
#
# The OpenMP workers are built from one source with gcc (libgomp) and clang
# (libomp), without sanitizer flags: the OpenMP runtimes are not
# instrumented and TSan would report their synchronisation as races.  Each
# is built only when its compiler can link an OpenMP program
# (scripts/deps.sh bench installs clang and libomp-dev).  The StarPU worker
# is built the same way when pkg-config knows StarPU (libstarpu-dev).
# ptobench-peak (METG's machine peak, no runtime) is always built.

PTOBENCH_BIN := $(O)/tools
PTOBENCH_OBJ := $(O)/tools/ptobench-obj
PTOBENCH := $(PTOBENCH_BIN)/ptobench
PTOBENCH_PTO := $(PTOBENCH_BIN)/ptobench-pto
PTOBENCH_GOMP := $(PTOBENCH_BIN)/ptobench-gomp
PTOBENCH_OMP := $(PTOBENCH_BIN)/ptobench-omp
PTOBENCH_STARPU := $(PTOBENCH_BIN)/ptobench-starpu
PTOBENCH_PEAK := $(PTOBENCH_BIN)/ptobench-peak
PTOBENCH_VIEWS := $(PTOBENCH_BIN)/ptobench-views
PTOBENCH_TEST := $(PTOBENCH_BIN)/test-ptobench
PTOBENCH_SCHED_COST := $(PTOBENCH_BIN)/ptobench-sched-cost

PTOBENCH_GOMP_CC ?= gcc
PTOBENCH_OMP_CC ?= clang
PTOBENCH_OMP_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-D_GNU_SOURCE -pthread

# The METG kernel: one object, compiled by $(CC) without sanitizer
# flags, linked into every worker and ptobench-peak, so that libpto,
# libgomp, libomp and StarPU run the same machine code and the efficiencies
# compare runtimes, not compilers.  -ffp-contract=off: no FMA contraction,
# the FLOP count is that of separate multiplies and adds.
PTOBENCH_KERNEL := $(PTOBENCH_OBJ)/metg_kernel.k.o
# What every worker's METG mode adds (see metg_worker.c).
PTOBENCH_METG_SRCS := tools/ptobench/metg_worker.c tools/ptobench/taskbench.c

PTOBENCH_OMP_SRCS := tools/ptobench/worker.c tools/ptobench/shapes.c \
	tools/ptobench/worker_omp.c tools/ptobench/metg_omp.c \
	$(PTOBENCH_METG_SRCS)
PTOBENCH_OMP_DEPS := $(PTOBENCH_OMP_SRCS) tools/ptobench/worker.h \
	tools/ptobench/shapes.h tools/ptobench/taskbench.h $(PTOBENCH_KERNEL)

# y when "$(1) $(2)" compiles and links an OpenMP program.
PTOBENCH_OMP_PROBE := '\043include <omp.h>\nint main(void)\n{\n\treturn \
	omp_get_max_threads() < 1;\n}\n'
ptobench_omp_ok = $(shell printf $(PTOBENCH_OMP_PROBE) \
	| $(1) $(2) -x c - -o /dev/null >/dev/null 2>&1 && echo y)
PTOBENCH_HAVE_GOMP := $(call ptobench_omp_ok,$(PTOBENCH_GOMP_CC),-fopenmp)
PTOBENCH_HAVE_OMP := $(call ptobench_omp_ok,$(PTOBENCH_OMP_CC),-fopenmp=libomp)

PTOBENCH_STARPU_PC := $(firstword $(shell pkg-config --exists starpu-1.4 \
	2>/dev/null && echo starpu-1.4) $(shell pkg-config --exists \
	starpu-1.3 2>/dev/null && echo starpu-1.3))

PTOBENCH_WORKERS := $(PTOBENCH_PTO) $(PTOBENCH_PEAK) $(PTOBENCH_VIEWS)
ifeq ($(PTOBENCH_HAVE_GOMP),y)
PTOBENCH_WORKERS += $(PTOBENCH_GOMP)
endif
ifeq ($(PTOBENCH_HAVE_OMP),y)
PTOBENCH_WORKERS += $(PTOBENCH_OMP)
endif
ifneq ($(PTOBENCH_STARPU_PC),)
PTOBENCH_WORKERS += $(PTOBENCH_STARPU)
endif

BINS += $(PTOBENCH) $(PTOBENCH_WORKERS) $(PTOBENCH_SCHED_COST)
INSTALL_LIBEXEC += $(PTOBENCH) $(PTOBENCH_WORKERS)
INSTALL_BIN_LINKS += ptobench
TEST_PROGS += $(PTOBENCH_TEST)
MAN_PAGES += tools/ptobench/ptobench.1

$(PTOBENCH_OBJ)/%.o: tools/ptobench/%.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Iutil -MMD -MP -c $< -o $@

# the project's one JSON string escaper, built for the driver (as ptotop
# builds its own copy: libpto's objects are compiled for libpto)
$(PTOBENCH_OBJ)/util/%.o: util/%.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(PTOBENCH_KERNEL): tools/ptobench/metg_kernel.c tools/ptobench/taskbench.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $< (METG kernel)")
	$(Q)$(CC) $(PTOBENCH_OMP_CFLAGS) -fPIC -ffp-contract=off -c $< -o $@

$(PTOBENCH): $(PTOBENCH_OBJ)/ptobench.o $(PTOBENCH_OBJ)/shapes.o \
	     $(PTOBENCH_OBJ)/metg.o $(PTOBENCH_OBJ)/metg_plot.o \
	     $(PTOBENCH_OBJ)/views.o $(PTOBENCH_OBJ)/options.o \
	     $(PTOBENCH_OBJ)/taskbench.o $(PTOBENCH_OBJ)/util/json.o
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ -lm

$(PTOBENCH_PTO): $(PTOBENCH_OBJ)/worker_pto.o $(PTOBENCH_OBJ)/worker.o \
		 $(PTOBENCH_OBJ)/shapes.o $(PTOBENCH_OBJ)/metg_pto.o \
		 $(PTOBENCH_OBJ)/metg_worker.o $(PTOBENCH_OBJ)/taskbench.o \
		 $(PTOBENCH_KERNEL) $(LIBPTO_SO)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_LIBPTO_SHARED)

# ptobench --views' worker: BGEMM with 1-D ranges or 2-D views (libpto)
$(PTOBENCH_VIEWS): $(PTOBENCH_OBJ)/views_worker.o $(LIBPTO_SO)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_LIBPTO_SHARED)

$(PTOBENCH_PEAK): tools/ptobench/metg_peak.c tools/ptobench/taskbench.h \
		  $(PTOBENCH_KERNEL)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(PTOBENCH_OMP_CFLAGS) -o $@ $(filter %.c %.o,$^)

$(PTOBENCH_GOMP): $(PTOBENCH_OMP_DEPS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@ (gcc, libgomp)")
	$(Q)$(PTOBENCH_GOMP_CC) $(PTOBENCH_OMP_CFLAGS) -fopenmp -o $@ \
		$(PTOBENCH_OMP_SRCS) $(PTOBENCH_KERNEL)

$(PTOBENCH_OMP): $(PTOBENCH_OMP_DEPS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@ (clang, libomp)")
	$(Q)$(PTOBENCH_OMP_CC) $(PTOBENCH_OMP_CFLAGS) -fopenmp=libomp -o $@ \
		$(PTOBENCH_OMP_SRCS) $(PTOBENCH_KERNEL)

$(PTOBENCH_STARPU): tools/ptobench/worker_starpu.c tools/ptobench/worker.c \
		    tools/ptobench/shapes.c tools/ptobench/metg_starpu.c \
		    $(PTOBENCH_METG_SRCS) tools/ptobench/worker.h \
		    tools/ptobench/shapes.h tools/ptobench/taskbench.h \
		    $(PTOBENCH_KERNEL)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@ ($(PTOBENCH_STARPU_PC))")
	$(Q)$(PTOBENCH_GOMP_CC) $(PTOBENCH_OMP_CFLAGS) \
		$$(pkg-config --cflags $(PTOBENCH_STARPU_PC)) -o $@ \
		$(filter %.c %.o,$^) \
		$$(pkg-config --libs $(PTOBENCH_STARPU_PC))

$(PTOBENCH_TEST): tools/ptobench/test-ptobench.sh
	@mkdir -p $(dir $@)
	$(Q)cp $< $@ && chmod +x $@

$(PTOBENCH_SCHED_COST): tools/ptobench/sched-cost.sh
	@mkdir -p $(dir $@)
	$(Q)cp $< $@ && chmod +x $@

# Scheduler instructions per task as the simulated device grows
.PHONY: sched-cost
sched-cost: $(PTOBENCH_SCHED_COST) $(PTOBENCH_PTO)
	$(Q)scripts/deps.sh build bench
	$(Q)$(PTOBENCH_SCHED_COST) -d $(PTOBENCH_BIN)

.PHONY: ptobench
ptobench: $(PTOBENCH) $(PTOBENCH_WORKERS) $(PTOBENCH_TEST) \
	$(PTOBENCH_SCHED_COST)
