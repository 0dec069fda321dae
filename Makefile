# SPDX-License-Identifier: MIT
#
# PTO top-level Makefile: libpto, the simulator, tools, samples and tests
# (userspace), plus entry points for the kernel module (built by Kbuild) and
# the VM test harness.
#
#   make run        build, then run the BGEMM sample on the simulator
#   make check      the whole test suite (installs what it needs as root)
#   make install    PREFIX=/usr/local DESTDIR=
#   make modules    pto.ko against KDIR (default: the running kernel)
#
# Objects go to $(O) (default build/); SAN=asan|tsan builds a sanitized
# tree, e.g. make O=build/asan SAN=asan.

O ?= build
SAN ?=
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=
KDIR ?= /lib/modules/$(shell uname -r)/build

CC ?= cc
AR ?= ar
V ?= 0
ifeq ($(V),0)
Q := @
else
Q :=
endif

# -ffp-contract=off: built-in ops must be bit-identical with the driver's.
CFLAGS ?= -O2 -g
BASE_CFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers -pthread -fPIC -ffp-contract=off \
	-D_GNU_SOURCE -Iinclude -Iinclude/uapi
LDLIBS_PTO := -pthread -ldl -lm -luring

ifeq ($(SAN),asan)
BASE_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
SAN_LDFLAGS := -fsanitize=address,undefined
else ifeq ($(SAN),tsan)
BASE_CFLAGS += -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan
SAN_LDFLAGS := -fsanitize=thread
endif

ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
ALL_LDFLAGS = $(SAN_LDFLAGS) $(LDFLAGS)

# Filled in by the fragments below.
BINS :=			# programs to build
TEST_PROGS :=		# TAP test programs run by make check
SAMPLE_SOS :=		# orchestration shared objects
INSTALL_BINS :=		# programs make install copies to BINDIR
MAN_PAGES :=		# man pages make install copies (section from suffix)

.PHONY: all
all: lib-all

include lib/build.mk
-include tools/build.mk
-include samples/build.mk
-include selftests/build.mk

all: $(BINS) $(SAMPLE_SOS) $(TEST_PROGS)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# the debug kernel's cache ($(O)/kcache) has its own .d files: not ours
-include $(shell find $(O) -path $(O)/kcache -prune -o -name '*.d' -type f -print 2>/dev/null)

# ---- set-up --------------------------------------------------------------
.PHONY: deps deps-check deps-bench deps-vm
deps:
	$(Q)scripts/deps.sh build
deps-check:
	$(Q)scripts/deps.sh build check
deps-bench:
	$(Q)scripts/deps.sh build bench
deps-vm:
	$(Q)scripts/deps.sh build vm

# ---- the main job ------------------------------------------------------------
.PHONY: run
run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(O)/tools/ptorun --stats $(O)/samples/bgemm.so

# ---- tests -----------------------------------------------------------------------
.PHONY: check check-unit check-asan check-tsan
check: deps-check
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/check.sh

check-unit: all
	$(Q)scripts/run-tests.sh $(TEST_PROGS)

check-asan:
	$(Q)$(MAKE) --no-print-directory O=$(O)/asan SAN=asan check-unit

check-tsan:
	$(Q)$(MAKE) --no-print-directory O=$(O)/tsan SAN=tsan check-unit

# ---- kernel module -------------------------------------------------------------
.PHONY: modules modules_clean
# Kbuild gets a clean MAKEFLAGS: our O= (object directory) means an output
# tree to the kernel's make.
KBUILD_MAKE = env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS $(MAKE)
modules:
	$(KBUILD_MAKE) -C $(KDIR) M=$(CURDIR) modules
modules_clean:
	$(KBUILD_MAKE) -C $(KDIR) M=$(CURDIR) clean

# ---- install -------------------------------------------------------------------
.PHONY: install uninstall
install: all
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/pto \
		$(DESTDIR)$(BINDIR)
	install -m 0644 $(O)/libpto.a $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(O)/$(LIBPTO_SO_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(LIBPTO_SO_REAL) $(DESTDIR)$(LIBDIR)/$(LIBPTO_SONAME)
	ln -sf $(LIBPTO_SONAME) $(DESTDIR)$(LIBDIR)/libpto.so
	install -m 0644 include/pto/*.h include/uapi/pto/pto_uapi.h \
		$(DESTDIR)$(INCLUDEDIR)/pto/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
		-e 's|@VERSION@|$(LIBPTO_VERSION)|g' lib/libpto.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/libpto.pc
	$(if $(INSTALL_BINS),install -m 0755 $(INSTALL_BINS) $(DESTDIR)$(BINDIR)/)
	$(Q)for m in $(MAN_PAGES); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libpto.* $(DESTDIR)$(LIBDIR)/pkgconfig/libpto.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/pto
	$(Q)for b in $(notdir $(INSTALL_BINS)); do rm -f $(DESTDIR)$(BINDIR)/$$b; done

.PHONY: clean
clean:
	rm -rf $(O)
