# SPDX-License-Identifier: MIT
# libpto: lib/ (with its backends in lib/backend/), the built-in ops of ops/
# and the helpers of util/, as libpto.a and libpto.so.

# The shared library's real name carries the project's version; the soname
# changes only with an incompatible ABI.
LIBPTO_VERSION := $(PTO_VERSION)
LIBPTO_SONAME := libpto.so.0
LIBPTO_SO_REAL := libpto.so.$(LIBPTO_VERSION)
LIBPTO_SRCS := $(sort $(wildcard lib/*.c lib/backend/*.c)) ops/pto_ops.c \
	util/json.c
LIBPTO_OBJS := $(LIBPTO_SRCS:%.c=$(O)/%.o)

# What programs link with: the static archive (tests, so they reach the
# internals) or the shared library (tools; the rpath finds it in-tree).
LIBPTO_A := $(O)/libpto.a
LIBPTO_SO := $(O)/libpto.so
LINK_LIBPTO_SHARED = -L$(O) -lpto -Wl,-rpath,'$$ORIGIN/..' $(LDLIBS_PTO)
LINK_LIBPTO_STATIC = $(LIBPTO_A) $(LDLIBS_PTO)

# The per-task paths cross files (submit -> TensorMap -> visit callback,
# scheduler -> sim kick -> execute), so -O3 with link-time optimisation
# inlines across them (the gain is in Documentation/ptobench.rst).  Fat LTO objects keep libpto.a usable by a
# compiler that does not do LTO.  Sanitizer builds keep plain objects.
#
# -fexceptions: a C++ exception thrown by an orchestration or a kernel
# unwinds through libpto, which ends the run on its way or stops the
# process with a message (cleanup attributes, see run() and run_task()).
ifeq ($(SAN),)
LIBPTO_OPT := -O3 -flto=auto -ffat-lto-objects
endif
LIBPTO_OPT += -fexceptions
$(LIBPTO_OBJS): EXTRA_CFLAGS += -Ilib -Iops -Iutil $(LIBPTO_OPT)
# symbol versions of older interfaces: see lib/compat.c
$(O)/lib/compat.o: EXTRA_CFLAGS += -fno-lto

# What prints PTO_VERSION_STRING is rebuilt when VERSION changes.
$(O)/lib/version.o $(O)/tools/ptorun-obj/ptorun.o \
$(O)/tools/ptotop-objs/ptotop.o $(O)/tools/ptotop-objs/main.o \
$(O)/tools/ptobench-obj/ptobench.o: VERSION

.PHONY: lib-all
lib-all: $(LIBPTO_A) $(LIBPTO_SO) $(O)/libpto-uninstalled.pc

# For programs built against the build tree: pkg-config takes
# libpto-uninstalled.pc over libpto.pc when PKG_CONFIG_PATH names build/,
# so `PKG_CONFIG_PATH=build pkg-config --cflags --libs libpto` gives the
# source headers and this library (with an rpath to it).
$(O)/libpto-uninstalled.pc: lib/libpto.pc.in lib/build.mk VERSION
	$(if $(Q),@echo "  GEN     $@")
	$(Q)sed -e 's|@PREFIX@|$(abspath .)|' -e 's|@LIBDIR@|$(abspath $(O))|' \
		-e 's|@INCLUDEDIR@|$(abspath include)|' \
		-e 's|@VERSION@|$(PTO_VERSION)|' \
		-e 's|^Cflags:.*|& -I$${includedir}/uapi|' \
		-e 's|^Libs:.*|& -Wl,-rpath,$${libdir}|' $< >$@

# The archive's compat object binds no symbol versions (lib/compat.c):
# they would fail any shared object that links libpto.a in.
LIBPTO_A_OBJS := $(filter-out $(O)/lib/compat.o,$(LIBPTO_OBJS)) \
	$(O)/lib/compat-static.o
$(O)/lib/compat-static.o: EXTRA_CFLAGS += -Ilib -Iops -Iutil $(LIBPTO_OPT) \
	-fno-lto -DPTO_NO_SYMVER
$(O)/lib/compat-static.o: lib/compat.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIBPTO_A): $(LIBPTO_A_OBJS)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/$(LIBPTO_SO_REAL): $(LIBPTO_OBJS)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,$(LIBPTO_SONAME) -Wl,--version-script=lib/libpto.map \
		$(LIBPTO_OPT) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS_PTO)

$(O)/$(LIBPTO_SONAME): $(O)/$(LIBPTO_SO_REAL)
	$(Q)ln -sf $(LIBPTO_SO_REAL) $@

$(LIBPTO_SO): $(O)/$(LIBPTO_SONAME)
	$(Q)ln -sf $(LIBPTO_SONAME) $@
