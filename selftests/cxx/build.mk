# SPDX-License-Identifier: MIT
# libpto from C++: a program built with g++ -std=c++11 -pedantic, and the
# warnings strict C++ projects turn on (old-style and qualifier-dropping
# casts, 0 as a null pointer), against the public headers only (include/
# and the uapi), linked with libpto.so as a user's program would be.

# PTO_CXX= (empty, as the arm64 cross build sets it) leaves it out.
PTO_CXX ?= g++
ifeq ($(SAN),)
ifneq ($(PTO_CXX),)
CXX_TEST := $(O)/selftests/cxx/test_cxx
TEST_PROGS += $(CXX_TEST)

$(CXX_TEST): selftests/cxx/test_cxx.cc $(wildcard include/pto/*.h) \
		include/uapi/pto/pto_uapi.h $(LIBPTO_SO)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CXX     $<")
	$(Q)$(PTO_CXX) -std=c++11 -pedantic -Wall -Wextra -Werror \
		-Wold-style-cast -Wcast-qual -Wzero-as-null-pointer-constant \
		-Wno-unused-parameter -O2 -g -ffp-contract=off \
		-Iinclude -Iinclude/uapi -o $@ $< \
		-L$(O) -lpto -Wl,-rpath,'$$ORIGIN/../..' -pthread
endif
endif
