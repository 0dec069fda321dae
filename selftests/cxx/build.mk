# SPDX-License-Identifier: MIT
# libpto from C++: a program built with -std=c++11 -pedantic, and the
# warnings strict C++ projects turn on (old-style and qualifier-dropping
# casts, 0 as a null pointer), against the public headers only (include/
# and the uapi), linked with libpto.so as a user's program would be; with
# g++, and with clang++ too where it is installed (the two warn apart).

# PTO_CXX= (empty, as the arm64 cross build sets it) leaves both out.
PTO_CXX ?= g++
PTO_CLANGXX ?= $(if $(PTO_CXX),$(shell command -v clang++ 2>/dev/null))
CXX_TEST_FLAGS := -std=c++11 -pedantic -Wall -Wextra -Werror \
	-Wold-style-cast -Wcast-qual -Wzero-as-null-pointer-constant \
	-Wno-unused-parameter -O2 -g -ffp-contract=off -Iinclude -Iinclude/uapi
CXX_TEST_DEPS := selftests/cxx/test_cxx.cc $(wildcard include/pto/*.h) \
	include/uapi/pto/pto_uapi.h $(LIBPTO_SO)

# $(call cxx_test_build,COMPILER,LABEL): the recipe of either program
define cxx_test_build
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  $(2) $<")
	$(Q)$(1) $(CXX_TEST_FLAGS) -o $@ $< \
		-L$(O) -lpto -Wl,-rpath,'$$ORIGIN/../..' -pthread
endef

ifeq ($(SAN),)
ifneq ($(PTO_CXX),)
CXX_TEST := $(O)/selftests/cxx/test_cxx
TEST_PROGS += $(CXX_TEST)

$(CXX_TEST): $(CXX_TEST_DEPS)
	$(call cxx_test_build,$(PTO_CXX),CXX    )
endif
ifneq ($(PTO_CLANGXX),)
CLANG_CXX_TEST := $(O)/selftests/cxx/test_cxx_clang
TEST_PROGS += $(CLANG_CXX_TEST)

$(CLANG_CXX_TEST): $(CXX_TEST_DEPS)
	$(call cxx_test_build,$(PTO_CLANGXX),CLANGXX)
endif
endif

# The parameter makers at compile time, with this build's compilers (the
# sanitizer builds too: nothing of theirs is compiled).
PARAMS_TEST := $(O)/selftests/cxx/test_params
TEST_PROGS += $(PARAMS_TEST)

$(PARAMS_TEST): selftests/cxx/test-params.sh selftests/cxx/build.mk
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@CC@|$(CC)|' -e 's|@CXX@|$(PTO_CXX)|' \
		-e 's|@SRCDIR@|$(abspath .)|g' $< >$@
	$(Q)chmod +x $@
