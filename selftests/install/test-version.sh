#!/bin/sh
# SPDX-License-Identifier: MIT
#
# One version for the whole project: everything that carries a version
# carries VERSION's, so a release cannot ship two (CHANGELOG: tag scheme).
#   test-version.sh SRCDIR OBJDIR
set -u
src=$1 obj=$2
n=0 failed=0
check() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
v=$(cat "$src/VERSION")
echo "# VERSION $v"
echo "$v" | grep -qxE '[0-9]+\.[0-9]+\.[0-9]+'
check $? "VERSION is MAJOR.MINOR.PATCH"

h=$(awk '/define PTO_VERSION_MAJOR/ { a = $3 } /define PTO_VERSION_MINOR/ { b = $3 }
	END { print a "." b }' "$src/include/pto/pto.h")
test "$h" = "${v%.*}"
check $? "pto.h's PTO_VERSION_MAJOR.MINOR ($h) is VERSION's"

d=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/dkms.conf")
test "$d" = "$v"
check $? "dkms.conf PACKAGE_VERSION ($d)"

c=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$src/debian/changelog")
test "$c" = "$v"
check $? "debian/changelog's newest entry ($c)"

grep -qxE "$(echo "$v" | sed 's/\./\\./g')( \(unreleased\))?" "$src/CHANGELOG"
check $? "CHANGELOG has a section for $v"

bad=""
for m in "$src"/tools/*/*.1 "$src"/Documentation/man/*.[0-9]; do
	grep -q "^\.TH .* \"PTO $v\" " "$m" || bad="$bad ${m##*/}"
done
test -z "$bad"
check $? "man pages say PTO $v${bad:+ (not:$bad)}"

for t in ptorun ptotop ptobench; do
	out=$(LD_LIBRARY_PATH="$obj" "$obj/tools/$t" --version 2>&1)
	echo "$out" | grep -q "^$t (PTO) $v\b"
	check $? "$t --version: $out"
done

test -e "$obj/libpto.so.$v"
check $? "libpto's real name is libpto.so.$v"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <stdio.h>\n#include <pto/pto.h>\nint main(void)\n{\n\tputs(pto_version());\n\treturn 0;\n}\n' >"$tmp/v.c"
cc -I"$src/include" -I"$src/include/uapi" "$tmp/v.c" -L"$obj" -lpto \
	-o "$tmp/v" 2>"$tmp/cc.log" || cat "$tmp/cc.log"
out=$(LD_LIBRARY_PATH="$obj" "$tmp/v" 2>&1)
test "$out" = "$v"
check $? "pto_version() returns $v (got '$out')"

grep -q "MODULE_VERSION(PTO_VERSION)" "$src"/driver/pto_main.c &&
	grep -q 'VERSION' "$src/driver/Kbuild"
check $? "pto.ko's MODULE_VERSION comes from VERSION (the VM checks /sys/module/pto/version)"

# the device ABI's number, where the documentation gives it
abi=$(sed -n 's/^#define PTO_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
	"$src/include/uapi/pto/pto_uapi.h")
grep -q "^(${abi} in this release)" "$src/Documentation/man/pto.4"
check $? "pto(4) gives PTO_ABI_VERSION as $abi"

echo "1..$n"
[ "$failed" -eq 0 ]
