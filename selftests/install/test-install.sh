#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make install into a scratch DESTDIR, then build and run the example of
# Documentation/libpto.rst against the installed tree with pkg-config, both
# shared and static: the install is what users of libpto get.
#   test-install.sh SRCDIR OBJDIR
set -u
src=$1 obj=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
n=0 failed=0

check() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
	return "$1"
}

make -s -C "$src" O="$obj" install DESTDIR="$dest" PREFIX=/usr \
	>"$dest/install.log" 2>&1
check $? "make install DESTDIR=... PREFIX=/usr" || cat "$dest/install.log"

for f in usr/include/pto/pto.h usr/include/pto/pto_uapi.h \
	 usr/lib/libpto.a usr/lib/pkgconfig/libpto.pc usr/bin/ptorun; do
	test -e "$dest/$f"
	check $? "installed $f"
done
soname=$(readelf -d "$dest"/usr/lib/libpto.so.0.* 2>/dev/null |
	 sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
test "$soname" = libpto.so.0 && test -L "$dest/usr/lib/libpto.so.0"
check $? "libpto.so carries the soname libpto.so.0 ($soname)"

export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_PATH="$dest/usr/lib/pkgconfig"
awk '/code-block:: c/ { f = 1; next } f && /^Build it/ { f = 0 } f' \
	"$src/Documentation/libpto.rst" | sed 's/^   //' >"$dest/prog.c"
# shellcheck disable=SC2046
cc "$dest/prog.c" $(pkg-config --cflags --libs libpto) -o "$dest/prog" \
	2>"$dest/cc.log"
check $? "cc prog.c \$(pkg-config --cflags --libs libpto)" || cat "$dest/cc.log"
out=$(LD_LIBRARY_PATH="$dest/usr/lib" PTO_STATS=0 "$dest/prog" 2>&1)
test "$out" = 1000
check $? "the documented example prints 1000 (got '$out')"

# shellcheck disable=SC2046
cc "$dest/prog.c" -static-libgcc $(pkg-config --cflags libpto) \
	"$dest/usr/lib/libpto.a" $(pkg-config --libs-only-other --static libpto) \
	-pthread -ldl -lm -luring -o "$dest/prog-static" 2>"$dest/cc2.log"
check $? "links statically against libpto.a" || cat "$dest/cc2.log"
out=$(PTO_STATS=0 "$dest/prog-static" 2>&1)
test "$out" = 1000
check $? "the static build prints 1000 too (got '$out')"

echo "1..$n"
[ "$failed" -eq 0 ]
