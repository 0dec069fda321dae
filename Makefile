# SPDX-License-Identifier: MIT
#
# PTO top-level Makefile: libpto, the simulator, tools, samples and tests
# (userspace), plus entry points for the kernel module (built by Kbuild) and
# the VM test harness.
#
#   make run        build, then run the BGEMM sample on the simulator
#   make check      the whole test suite (installs what it needs as root)
#   make stress     hunt hangs: random runtimes and programs under a
#                   watchdog for STRESS_SECONDS (60)
#   make sched-cost scheduler instructions per task on 8-72 sim cores
#   make install    PREFIX=/usr/local DESTDIR= (uninstall undoes it)
#   make modules    pto.ko against KDIR (default: the running kernel);
#                   modules_install, modules_clean, install-dkms
#   make deb        the Debian packages, into $(O)/deb
#
# Objects go to $(O) (default build/); SAN=asan|tsan builds a sanitized
# tree, e.g. make O=build/asan SAN=asan.

# One version for the library, the tools, pto.ko and the packages: the
# VERSION file (releases are tagged vVERSION; see Documentation/install.rst).
PTO_VERSION := $(shell cat VERSION)

O ?= build
# One spelling of each object directory: relative when inside the source
# tree, absolute outside.  The .d files name their targets as O was
# spelled, and a make with O=$PWD/build (test-install) would otherwise
# write targets a plain make does not match: a header changed after that
# rebuilt nothing.
override O := $(patsubst $(CURDIR)/%,%,$(abspath $(O)))
SAN ?=
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/pto
UDEVRULESDIR ?= /etc/udev/rules.d
DKMSDIR ?= /usr/src/pto-$(PTO_VERSION)
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
	-D_GNU_SOURCE -Iinclude -Iinclude/uapi \
	-DPTO_VERSION_STRING='"$(PTO_VERSION)"'
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
INSTALL_LIBEXEC :=	# helper programs make install copies to LIBEXECDIR/pto
INSTALL_BIN_LINKS :=	# of those, the ones BINDIR gets a symlink to
# man pages make install copies (section from the suffix)
MAN_PAGES := Documentation/man/libpto.3 Documentation/man/pto.4

.PHONY: all
all: lib-all

include lib/build.mk
-include tools/build.mk
-include samples/build.mk
-include selftests/build.mk

all: $(BINS) $(SAMPLE_SOS) $(TEST_PROGS) $(O)/doc/README.md

# The README as installed: beside the .rst files it links to, not in
# Documentation/ as in the source tree (install and debian/*.docs take it).
$(O)/doc/README.md: README.md
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  GEN     $@")
	$(Q)sed -e 's|\[Documentation/|[|g' -e 's|](Documentation/|](|g' $< >$@

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# not the debug kernel's cache ($(O)/kcache) nor the package build's tree
# ($(O)/deb): their .d files are not ours
-include $(shell find $(O) \( -path $(O)/kcache -o -path $(O)/deb \) -prune -o -name '*.d' -type f -print 2>/dev/null)

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
.PHONY: modules modules_install modules_clean install-dkms uninstall-dkms
# Kbuild gets a clean MAKEFLAGS: our O= (object directory) means an output
# tree to the kernel's make.
KBUILD_MAKE = env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS $(MAKE)
# What Kbuild writes into the source tree, and nothing else: Kbuild's own
# clean would delete every *.o under M=, the userspace objects in $(O) too.
KMOD_OUTPUT := Module.symvers modules.order .Module.symvers.cmd \
	.modules.order.cmd .module-common.o ..module-common.o.cmd \
	driver/modules.order driver/.modules.order.cmd \
	driver/pto.ko driver/pto.mod driver/pto.mod.c driver/pto.mod.o \
	driver/pto.o $(patsubst %.c,%.o,$(wildcard driver/pto_*.c)) \
	ops/pto_ops.o driver/.*.cmd ops/.pto_ops.o.cmd
# The module's sources: what DKMS and the pto-dkms package carry.
KMOD_SOURCES := VERSION Kbuild dkms.conf driver/Kbuild driver/*.[ch] \
	driver/probe/*.c ops/pto_ops.c ops/pto_ops.h ops/pto_layout.h \
	include/uapi/pto/pto_uapi.h
INSTALL_MOD_DIR ?= updates

modules:
	$(KBUILD_MAKE) -C $(KDIR) M=$(CURDIR) modules
# Into /lib/modules/KVER/$(INSTALL_MOD_DIR) under INSTALL_MOD_PATH, then depmod.
modules_install:
	$(KBUILD_MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) \
		$(if $(INSTALL_MOD_PATH),INSTALL_MOD_PATH=$(INSTALL_MOD_PATH)) \
		modules_install
modules_clean:
	rm -f $(KMOD_OUTPUT)

# The module's sources into /usr/src/pto-VERSION for DKMS:
#   make install-dkms && dkms install pto/$(PTO_VERSION)
install-dkms:
	$(Q)for f in $(KMOD_SOURCES); do \
		install -D -m 0644 $$f $(DESTDIR)$(DKMSDIR)/$$f || exit 1; done
uninstall-dkms:
	rm -rf $(DESTDIR)$(DKMSDIR)

# ---- install -------------------------------------------------------------------
.PHONY: install uninstall install-udev uninstall-udev
PKGLIBEXECDIR = $(LIBEXECDIR)/pto
PKGDATADIR = $(DATADIR)/pto
# Documentation and example configuration (DOCDIR), sample sources with a
# Makefile that builds them against the installed libpto (PKGDATADIR).
INSTALL_DOCS := $(O)/doc/README.md CHANGELOG COPYING \
	$(wildcard Documentation/*.rst)
# the figures the .rst files show (.. image:: images/...)
INSTALL_DOC_IMAGES := $(wildcard Documentation/images/*)
# packaging/FILE:examples/PATH
INSTALL_EXAMPLES := 60-pto.rules:60-pto.rules modprobe.conf:modprobe.d/pto.conf \
	modules-load.conf:modules-load.d/pto.conf
INSTALL_SAMPLES := $(filter-out samples/build.mk samples/test-samples.sh, \
	$(wildcard samples/*.[ch]))
INSTALL_HEADERS := $(wildcard include/pto/*.h) include/uapi/pto/pto_uapi.h
# RUNPATH: the tools find libpto.so in the build tree through $ORIGIN/..;
# installed, the dynamic linker finds it (see README: ldconfig).
STRIP_RUNPATH = chrpath -d

# Every directory install puts files in.  Those that do not exist yet (and
# their missing parents, up to DESTDIR) are listed in INSTALLED_DIRS, so
# that uninstall removes what install made and never what was there.
INSTALL_DIRS := $(LIBDIR)/pkgconfig $(INCLUDEDIR)/pto $(BINDIR) \
	$(DOCDIR)/images $(DOCDIR)/examples/modprobe.d \
	$(DOCDIR)/examples/modules-load.d $(PKGDATADIR)/samples \
	$(PKGLIBEXECDIR) $(sort $(foreach m,$(MAN_PAGES), \
		$(MANDIR)/man$(subst .,,$(suffix $(m)))))
INSTALLED_DIRS = $(DESTDIR)$(PKGDATADIR)/installed-dirs

install: all
	$(Q)for d in $(INSTALL_DIRS); do p="$(DESTDIR)$$d"; \
		while [ "$$p" != "$(DESTDIR)" ] && [ "$$p" != / ] && \
		      [ ! -d "$$p" ]; do \
			echo "$${p#"$(DESTDIR)"}"; p=$$(dirname "$$p"); \
		done; done >$(O)/installed-dirs.new
	install -d $(foreach d,$(INSTALL_DIRS),$(DESTDIR)$(d))
	$(Q)cat $(O)/installed-dirs.new $$(cat $(INSTALLED_DIRS) \
		>/dev/null 2>&1 && echo $(INSTALLED_DIRS)) | sort -u \
		>$(O)/installed-dirs && \
		install -m 0644 $(O)/installed-dirs $(INSTALLED_DIRS)
	install -m 0644 $(O)/libpto.a $(DESTDIR)$(LIBDIR)/
	install -m 0755 $(O)/$(LIBPTO_SO_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(LIBPTO_SO_REAL) $(DESTDIR)$(LIBDIR)/$(LIBPTO_SONAME)
	ln -sf $(LIBPTO_SONAME) $(DESTDIR)$(LIBDIR)/libpto.so
	install -m 0644 $(INSTALL_HEADERS) $(DESTDIR)$(INCLUDEDIR)/pto/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
		-e 's|@VERSION@|$(PTO_VERSION)|g' lib/libpto.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/libpto.pc
	$(Q)for b in $(INSTALL_BINS); do \
		install -m 0755 $$b $(DESTDIR)$(BINDIR)/ && \
		$(STRIP_RUNPATH) $(DESTDIR)$(BINDIR)/$${b##*/} >/dev/null || exit 1; \
	done
	$(Q)for b in $(INSTALL_LIBEXEC); do \
		install -D -m 0755 $$b $(DESTDIR)$(PKGLIBEXECDIR)/$${b##*/} && \
		$(STRIP_RUNPATH) $(DESTDIR)$(PKGLIBEXECDIR)/$${b##*/} >/dev/null \
		|| exit 1; done
	$(Q)for b in $(INSTALL_BIN_LINKS); do \
		ln -sfr $(DESTDIR)$(PKGLIBEXECDIR)/$$b $(DESTDIR)$(BINDIR)/$$b; done
	$(Q)for m in $(MAN_PAGES); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done
	install -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	install -d $(DESTDIR)$(DOCDIR)/images
	install -m 0644 $(INSTALL_DOC_IMAGES) $(DESTDIR)$(DOCDIR)/images/
	$(Q)for f in $(INSTALL_EXAMPLES); do install -D -m 0644 \
		packaging/$${f%%:*} $(DESTDIR)$(DOCDIR)/examples/$${f#*:} \
		|| exit 1; done
	install -m 0644 $(INSTALL_SAMPLES) $(DESTDIR)$(PKGDATADIR)/samples/
	install -m 0644 packaging/samples.mk \
		$(DESTDIR)$(PKGDATADIR)/samples/Makefile

# Everything install added, and the directories it made (INSTALLED_DIRS)
# that are left empty: never a directory that was there before.
uninstall:
	$(Q)dirs=$$(cat $(INSTALLED_DIRS) 2>/dev/null); \
	rm -f $(DESTDIR)$(LIBDIR)/libpto.a $(DESTDIR)$(LIBDIR)/libpto.so \
		$(DESTDIR)$(LIBDIR)/$(LIBPTO_SONAME) \
		$(DESTDIR)$(LIBDIR)/$(LIBPTO_SO_REAL) \
		$(DESTDIR)$(LIBDIR)/pkgconfig/libpto.pc && \
	rm -rf $(DESTDIR)$(INCLUDEDIR)/pto $(DESTDIR)$(PKGLIBEXECDIR) \
		$(DESTDIR)$(PKGDATADIR) $(DESTDIR)$(DOCDIR) && \
	rm -f $(foreach b,$(notdir $(INSTALL_BINS) $(INSTALL_BIN_LINKS)), \
		$(DESTDIR)$(BINDIR)/$(b)) && \
	rm -f $(foreach m,$(MAN_PAGES), \
		$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m))) && \
	for d in $$(printf '%s\n' $$dirs | sort -r); do \
		rmdir "$(DESTDIR)$$d" 2>/dev/null || true; done

# The udev rule (group pto, mode 0660) where udev reads it; udevadm
# trigger or a reload applies it.  Create the group first: groupadd -r pto.
install-udev:
	install -D -m 0644 packaging/60-pto.rules \
		$(DESTDIR)$(UDEVRULESDIR)/60-pto.rules
uninstall-udev:
	rm -f $(DESTDIR)$(UDEVRULESDIR)/60-pto.rules

# ---- packages ------------------------------------------------------------------
.PHONY: deb
# libpto0, libpto-dev, pto-tools and pto-dkms from a copy of the tree, into
# $(O)/deb; lintian must report no error (packaging/mkdeb.sh).
deb:
	$(Q)O=$(O) packaging/mkdeb.sh

.PHONY: clean
clean:
	rm -rf $(O)
