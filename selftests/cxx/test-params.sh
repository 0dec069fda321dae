#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The parameter makers at compile time (TAP), in C and C++: PTO_SCALAR()
# of a float is refused with a message naming pto_f32_bits() (a cast
# would truncate 0.5f to 0, silently); integers, enums and pointers are
# taken, and PTO_IN(), PTO_OUT() and PTO_IN_VIEW() of pointers to const
# compile without a warning under -Wcast-qual, in C++ also PTO_SUBMIT()
# with an int kernel id under -Wsign-conversion and the other casts
# warnings the headers promise to keep quiet; in C99 (no float check
# there) the makers compile quietly under -pedantic; and in C++ pto.h may
# be included inside extern "C" { }.
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
		sed 's/^/# /' "$tmp/err" | head -n 40
	fi
}

cat >"$tmp/good.c" <<'C'
#include <pto/pto.h>
enum colour { RED, GREEN };
int orch(struct pto_runtime *rt, void *arg)
{
	const float *in = arg;
	const float *out;
	const struct pto_view *v = arg;
	unsigned char u8 = 3;

	return PTO_SUBMIT(rt, 1, PTO_WORKER_VECTOR, PTO_IN(in, 0, 4),
			  PTO_OUT(&out, 64), PTO_IN_VIEW(v),
			  PTO_SCALAR(u8), PTO_SCALAR(-1),
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
	-e 's/const float \*out;/const float *out = nullptr;/' \
	-e 's/\*v = arg;/*v = static_cast<const struct pto_view *>(arg);/' \
	"$tmp/good.c" >"$tmp/good.cc"

# A compiler named by the build, if it is here (a cross build may not be).
have() {
	[ -n "$1" ] && command -v "${1%% *}" >/dev/null 2>&1
}

# LANG COMPILER STD SUFFIX FLAGS...: both checks of one language.
check_lang() {
	lang=$1 cc=$2 std=$3 sfx=$4
	shift 4
	if ! have "$cc"; then
		for i in 1 2; do
			n=$((n + 1))
			echo "ok $n # SKIP no $lang compiler"
		done
		return
	fi
	$cc -std="$std" -pedantic -Wall -Wextra -Werror "$@" -c $INC \
		-o "$tmp/good.o" "$tmp/good.$sfx" 2>"$tmp/err"
	ok $? "$lang: integer, enum and pointer scalars and outputs compile with no warning"
	! $cc -std="$std" -c $INC -o "$tmp/float.o" "$tmp/float.$sfx" \
		2>"$tmp/err" && grep -q 'pass a float as pto_f32_bits' "$tmp/err"
	ok $? "$lang: PTO_SCALAR() of a float is refused, naming pto_f32_bits()"
}

check_lang C "$CC" c11 c -Wcast-qual
# C99 has neither anonymous unions nor _Generic: quiet all the same
if have "$CC"; then
	$CC -std=c99 -pedantic -Wall -Wextra -Wcast-qual -Werror -c $INC \
		-o "$tmp/good.o" "$tmp/good.c" 2>"$tmp/err"
	ok $? "C99: the makers compile with no warning under -std=c99 -pedantic"
else
	n=$((n + 1))
	echo "ok $n # SKIP no C compiler"
fi
# and, in C++: PTO_OUT() of a pointer to const, an int kernel id
check_lang C++ "$CXX" c++11 cc -Wsign-conversion -Wold-style-cast \
	-Wcast-qual -Wzero-as-null-pointer-constant
# a C library's header is often included inside extern "C" in C++
if have "$CXX"; then
	{
		echo 'extern "C" {'
		echo '#include <pto/pto.h>'
		echo '}'
		grep -v '#include <pto/pto.h>' "$tmp/good.cc"
	} >"$tmp/externc.cc"
	$CXX -std=c++11 -pedantic -Wall -Wextra -Werror -c $INC \
		-o "$tmp/externc.o" "$tmp/externc.cc" 2>"$tmp/err"
	ok $? "C++: pto.h included inside extern \"C\" { } compiles and its makers work"
else
	n=$((n + 1))
	echo "ok $n # SKIP no C++ compiler"
fi
echo "1..$n"
