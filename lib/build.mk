# SPDX-License-Identifier: MIT
# libpto: lib/ and the simulator backend in sim/, as libpto.a and libpto.so.

LIBPTO_VERSION := 0.1.0
LIBPTO_SONAME := libpto.so.0
LIBPTO_SO_REAL := libpto.so.$(LIBPTO_VERSION)
LIBPTO_SRCS := $(sort $(wildcard lib/*.c) $(wildcard sim/*.c))
LIBPTO_OBJS := $(LIBPTO_SRCS:%.c=$(O)/%.o)

# What programs link with: the static archive (tests, so they reach the
# internals) or the shared library (tools; the rpath finds it in-tree).
LIBPTO_A := $(O)/libpto.a
LIBPTO_SO := $(O)/libpto.so
LINK_LIBPTO_SHARED = -L$(O) -lpto -Wl,-rpath,'$$ORIGIN/..' $(LDLIBS_PTO)
LINK_LIBPTO_STATIC = $(LIBPTO_A) $(LDLIBS_PTO)

.PHONY: lib-all
lib-all: $(LIBPTO_A) $(LIBPTO_SO)

$(LIBPTO_A): $(LIBPTO_OBJS)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/$(LIBPTO_SO_REAL): $(LIBPTO_OBJS)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,$(LIBPTO_SONAME) -Wl,--version-script=lib/libpto.map \
		$(ALL_LDFLAGS) -o $@ $^ $(LDLIBS_PTO)

$(O)/$(LIBPTO_SONAME): $(O)/$(LIBPTO_SO_REAL)
	$(Q)ln -sf $(LIBPTO_SO_REAL) $@

$(LIBPTO_SO): $(O)/$(LIBPTO_SONAME)
	$(Q)ln -sf $(LIBPTO_SONAME) $@
