#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The parameter makers at compile time (TAP), in C and C++: PTO_SCALAR()
# of a float is refused with a message naming pto_f32_bits() (a cast
# would truncate 0.5f to 0, silently); integers, enums and pointers are
# taken, and in C++ PTO_OUT() of a pointer to const and PTO_SUBMIT() with
# an int kernel id compile without a warning under -Wsign-conversion and
# the casts warnings the headers promise to keep quiet.
#
# Made into $(O)/selftests/cxx/test_params with the compilers and the
# source tree filled in (selftests/cxx/build.mk).
set -u
CC='@CC@'
CXX='@CXX@'
INC='-I@SRCDIR@/include -I@SRCDIR@/include/uapi'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		sed 's/^/# /' "$tmp/err"
	fi
}

cat >"$tmp/good.c" <<'C'
#include <pto/pto.h>
enum colour { RED, GREEN };
int orch(struct pto_runtime *rt, void *arg)
{
	const float *in = arg;
	float *out;
	unsigned char u8 = 3;

	return PTO_SUBMIT(rt, 1, PTO_WORKER_VECTOR, PTO_IN(in, 0, 4),
			  PTO_OUT(&out, 64), PTO_SCALAR(u8), PTO_SCALAR(-1),
			  PTO_SCALAR(GREEN), PTO_SCALAR(in),
			  PTO_SCALAR(pto_f32_bits(0.5f))) < 0;
}
C
cat >"$tmp/float.c" <<'C'
#include <pto/pto.h>
int orch(struct pto_runtime *rt, void *arg)
{
	float scale = 0.5f;

	return PTO_SUBMIT(rt, 1, PTO_WORKER_VECTOR, PTO_SCALAR(scale)) < 0;
}
C
cp "$tmp/float.c" "$tmp/float.cc"
sed -e 's/const float \*in = arg;/const float *in = static_cast<const float *>(arg);/' \
	-e 's/float \*out;/const float *out = nullptr;/' \
	"$tmp/good.c" >"$tmp/good.cc"

if [ -n "$CC" ] && command -v "${CC%% *}" >/dev/null 2>&1; then
	$CC -std=c11 -pedantic -Wall -Wextra -Werror -c $INC \
		-o "$tmp/good.o" "$tmp/good.c" 2>"$tmp/err"
	ok $? "C: PTO_SCALAR() of integers, an enum and a pointer compiles"
	! $CC -std=c11 -c $INC -o "$tmp/float.o" "$tmp/float.c" \
		2>"$tmp/err" && grep -q 'pass a float as pto_f32_bits' "$tmp/err"
	ok $? "C: PTO_SCALAR() of a float is refused, naming pto_f32_bits()"
else
	echo "ok $((n + 1)) # SKIP no C compiler"
	echo "ok $((n + 2)) # SKIP no C compiler"
	n=$((n + 2))
fi
if [ -n "$CXX" ] && command -v "${CXX%% *}" >/dev/null 2>&1; then
	$CXX -std=c++11 -pedantic -Wall -Wextra -Werror -Wsign-conversion \
		-Wold-style-cast -Wcast-qual -Wzero-as-null-pointer-constant \
		-c $INC -o "$tmp/good.o" "$tmp/good.cc" 2>"$tmp/err"
	ok $? "C++: PTO_OUT() of a pointer to const and an int kernel id compile with no warning"
	! $CXX -std=c++11 -c $INC -o "$tmp/float.o" "$tmp/float.cc" \
		2>"$tmp/err" && grep -q 'pass a float as pto_f32_bits' "$tmp/err"
	ok $? "C++: PTO_SCALAR() of a float is refused, naming pto_f32_bits()"
else
	echo "ok $((n + 1)) # SKIP no C++ compiler"
	echo "ok $((n + 2)) # SKIP no C++ compiler"
	n=$((n + 2))
fi
echo "1..$n"
