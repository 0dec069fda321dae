#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The 0.1 program (test_abi_0_1) must bind to libpto's 0.1 symbol versions
# and run against today's library.  Usage: test-abi.sh BUILD_DIR
set -u
O=$1
prog=$O/selftests/abi/test_abi_0_1
n=0
ok() {	# status description
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

syms=$(readelf --dyn-syms -W "$prog")
echo "$syms" | grep -q 'pto_config_init@LIBPTO_0 '
ok $? "the 0.1 program calls pto_config_init@LIBPTO_0"
echo "$syms" | grep -q 'pto_get_stats@LIBPTO_0 '
ok $? "the 0.1 program calls pto_get_stats@LIBPTO_0"
echo "$syms" | grep -qE 'pto_scope_begin@LIBPTO_0( |$)'
ok $? "the 0.1 program calls pto_scope_begin@LIBPTO_0 (void in 0.1)"
! echo "$syms" | grep -q 'LIBPTO_0\.2'
ok $? "the 0.1 program needs nothing newer than LIBPTO_0"
readelf --dyn-syms -W "$O/libpto.so" | grep -q 'pto_config_init_sized@@LIBPTO_0.2'
ok $? "libpto.so exports the 0.2 additions in node LIBPTO_0.2"
lsyms=$(readelf --dyn-syms -W "$O/libpto.so")
echo "$lsyms" | grep -q 'pto_scope_begin@@LIBPTO_0.2' &&
	echo "$lsyms" | grep -qE 'pto_scope_begin@LIBPTO_0( |$)'
ok $? "libpto.so exports pto_scope_begin@@LIBPTO_0.2 (int) and @LIBPTO_0"

# libpto.a linked into a shared object (its build failed while the
# archive bound symbol versions), loaded as Python loads an extension
python3 -c 'import ctypes, sys; sys.exit(ctypes.CDLL(sys.argv[1]).plugin_run())' \
	"$O/selftests/abi/plugin.so"
rc=$?
ok $rc "a shared object with libpto.a in it loads and runs (status $rc)"

# the program's own TAP, numbered after ours
out=$(LD_LIBRARY_PATH=$O "$prog" 2>&1)
rc=$?
echo "$out" | awk -v base=$n '
	/^ok [0-9]+/ { sub(/^ok [0-9]+/, "ok " base + $2); print; next }
	/^not ok [0-9]+/ { sub(/^not ok [0-9]+/, "not ok " base + $3); print; next }
	/^1\.\./ { next }
	{ print }'
cnt=$(echo "$out" | grep -cE '^(not )?ok [0-9]+')
n=$((n + cnt))
[ $rc -eq 0 ]
ok $? "the 0.1 program exits 0"
echo "1..$n"
