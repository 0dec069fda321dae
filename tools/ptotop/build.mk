# SPDX-License-Identifier: MIT
# ptotop: the monitor.  It only reads files (stats pages, fdinfo, sysfs),
# so it does not link libpto and keeps working when a runtime misbehaves.
# It compiles with the public headers (include/, include/uapi/) and the
# shared helpers of util/, never lib/.  Objects live in ptotop-objs/ so the
# program itself can be $(O)/tools/ptotop.
#
# The sources in layers, each using only those below it (see ptotop.h):
# main, the views (view_tui, view_text), the model, the sources.

PTOTOP := $(O)/tools/ptotop
PTOTOP_SRCS := main.c view_tui.c view_text.c model.c sources.c
PTOTOP_OBJS := $(PTOTOP_SRCS:%.c=$(O)/tools/ptotop-objs/%.o) \
	$(O)/tools/ptotop-objs/util/json.o
# ncursesw: command lines are UTF-8, and CJK characters take two columns
PTOTOP_CFLAGS := -Iutil $(shell pkg-config --cflags ncursesw 2>/dev/null)
PTOTOP_LDLIBS := $(shell pkg-config --libs ncursesw 2>/dev/null || \
	echo -lncursesw) -lm

BINS += $(PTOTOP)
INSTALL_BINS += $(PTOTOP)
MAN_PAGES += tools/ptotop/ptotop.1

# util/json.c is built here too, not taken from libpto's objects: those are
# compiled for libpto (LTO in the default build).
$(O)/tools/ptotop-objs/%.o: tools/ptotop/%.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(PTOTOP_CFLAGS) -MMD -MP -c $< -o $@

$(O)/tools/ptotop-objs/util/%.o: util/%.c
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(PTOTOP_CFLAGS) -MMD -MP -c $< -o $@

$(PTOTOP): $(PTOTOP_OBJS)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PTOTOP_LDLIBS)
