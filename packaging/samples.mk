# SPDX-License-Identifier: MIT
# Build the PTO samples against the installed libpto, in the current
# directory:
#   make -f /usr/share/pto/samples/Makefile
#   ptorun ./bgemm_builtin.so
# The samples resolve pto_* from the libpto.so that ptorun has loaded, so
# they only need libpto's headers (pkg-config --cflags libpto).
SRC := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
CC ?= cc
CFLAGS ?= -O2 -g
PTO_CFLAGS := $(shell pkg-config --cflags libpto)
ALL_CFLAGS = -std=gnu11 -fPIC -fvisibility=hidden -ffp-contract=off \
	-D_GNU_SOURCE -I$(SRC) $(PTO_CFLAGS) $(CFLAGS)

SAMPLES := bgemm.so bgemm_builtin.so paged_attention.so \
	paged_attention_builtin.so tree_reduce.so

all: $(SAMPLES)

bgemm.so: bgemm.o bgemm_common.o sample.o
bgemm_builtin.so: bgemm_builtin.o bgemm_common.o sample.o
paged_attention.so: paged_attention.o pa_common.o sample.o
paged_attention_builtin.so: paged_attention_builtin.o pa_common.o sample.o
tree_reduce.so: tree_reduce.o sample.o

%.o: $(SRC)/%.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

%.so:
	$(CC) -shared $(LDFLAGS) -o $@ $^ -lm

clean:
	rm -f $(SAMPLES) *.o

.PHONY: all clean
