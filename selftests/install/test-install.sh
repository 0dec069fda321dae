#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make install into a scratch DESTDIR, then build and run the example of
# Documentation/libpto.rst against the installed tree with pkg-config, both
# shared and static: the install is what users of libpto get.  Then what a
# distribution expects of it: no RUNPATH, helpers under libexec, pages and
# docs and samples where they belong (the samples build from there and
# compute what the build tree's do), and make uninstall removing every file
# install added.  Last, modules_clean removes Kbuild's output and nothing
# else, checked on a copy of the tree after a real module build.
#   test-install.sh SRCDIR OBJDIR
set -u
src=$1 obj=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root
mkdir -p "$dest" "$tmp/w"
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
	>"$tmp/install.log" 2>&1
check $? "make install DESTDIR=... PREFIX=/usr" || cat "$tmp/install.log"

for f in usr/include/pto/pto.h usr/include/pto/pto_uapi.h \
	 usr/lib/libpto.a usr/lib/pkgconfig/libpto.pc usr/bin/ptorun \
	 usr/bin/ptotop usr/libexec/pto/ptobench usr/libexec/pto/ptobench-pto \
	 usr/share/man/man1/ptorun.1 usr/share/man/man1/ptotop.1 \
	 usr/share/man/man1/ptobench.1 usr/share/man/man3/libpto.3 \
	 usr/share/man/man4/pto.4 usr/share/doc/pto/README.md \
	 usr/share/doc/pto/CHANGELOG usr/share/doc/pto/libpto.rst \
	 usr/share/doc/pto/examples/60-pto.rules \
	 usr/share/doc/pto/examples/modprobe.d/pto.conf usr/share/doc/pto/examples/modules-load.d/pto.conf \
	 usr/share/pto/samples/Makefile usr/share/pto/samples/bgemm.c; do
	test -e "$dest/$f"
	check $? "installed $f"
done
# every figure an installed document shows is installed beside it
missing=""
for img in $(sed -n 's/^\.\. image:: //p' "$dest"/usr/share/doc/pto/*.rst); do
	test -e "$dest/usr/share/doc/pto/$img" || missing="$missing $img"
done
test -z "$missing"
check $? "the documents' images are installed (missing:${missing:- none})"
# the installed README's links lead to installed documents (in the source
# tree they go to Documentation/)
missing=""
links=$(grep -o ']([^)]*)' "$dest/usr/share/doc/pto/README.md" |
	sed 's/^](//; s/)$//; s/#.*//' | grep -v '://')
for l in $links; do
	test -e "$dest/usr/share/doc/pto/$l" || missing="$missing $l"
done
test -n "$links" && test -z "$missing"
check $? "the installed README's links resolve (missing:${missing:- none})"

soname=$(readelf -d "$dest"/usr/lib/libpto.so.0.* 2>/dev/null |
	 sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
test "$soname" = libpto.so.0 && test -L "$dest/usr/lib/libpto.so.0"
check $? "libpto.so carries the soname libpto.so.0 ($soname)"

# no build-tree search path in what is installed
bad=""
for f in "$dest"/usr/bin/* "$dest"/usr/libexec/pto/* "$dest"/usr/lib/libpto.so.0.*; do
	[ -L "$f" ] && continue
	readelf -d "$f" 2>/dev/null | grep -qE 'R(UN)?PATH' && bad="$bad ${f#"$dest"}"
done
test -z "$bad"
check $? "no RPATH/RUNPATH in installed programs and libraries${bad:+:$bad}"

# ptobench's workers are helpers: libexec, and the command is a symlink
ls "$dest"/usr/bin | grep -q '^ptobench-'
test $? -ne 0
check $? "no ptobench-* helper in bindir"
test "$(readlink "$dest/usr/bin/ptobench")" = ../libexec/pto/ptobench
check $? "bindir's ptobench links to libexec/pto/ptobench"

# every page has the same header form
bad=""
for m in "$dest"/usr/share/man/man*/*; do
	head -n 3 "$m" | grep -qE '^\.TH [A-Z]+ [0-9] [0-9-]+ "PTO [0-9.]+" "PTO Manual"$' ||
		bad="$bad ${m##*/}"
done
test -z "$bad"
check $? "man pages share one .TH header form${bad:+ (not:$bad)}"
# libpto(3)'s synopsis declares every function the library exports
sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' \
	"$dest/usr/share/man/man3/libpto.3" >"$tmp/synopsis"
bad=""
for f in $(sed -n 's/^[[:space:]]*\(pto_[a-z0-9_]*\);$/\1/p' \
	   "$src/lib/libpto.map" | sort -u); do
	grep -qE "[ *(]$f\(" "$tmp/synopsis" || bad="$bad $f"
done
test -z "$bad"
check $? "libpto(3)'s synopsis has every exported function${bad:+ (not:$bad)}"

awk '/code-block:: c/ { f = 1; next } f && /^Build it/ { f = 0 } f' \
	"$src/Documentation/libpto.rst" | sed 's/^   //' >"$tmp/prog.c"
# before installing: the build tree's libpto-uninstalled.pc (README)
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror "$tmp/prog.c" $(PKG_CONFIG_PATH="$obj" \
	pkg-config --cflags --libs libpto) -o "$tmp/prog-tree" 2>"$tmp/cc0.log"
check $? "cc -Wall -Wextra -Werror prog.c against the build tree (PKG_CONFIG_PATH=build)" ||
	cat "$tmp/cc0.log"
out=$(PTO_STATS=0 "$tmp/prog-tree" 2>&1)
test "$out" = 1000
check $? "it runs from the build tree without LD_LIBRARY_PATH (got '$out')"

export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_PATH="$dest/usr/lib/pkgconfig"
test "$(pkg-config --modversion libpto)" = "$(cat "$src/VERSION")"
check $? "pkg-config --modversion libpto is VERSION's"
pkg-config --print-requires-private libpto | grep -q '^liburing'
check $? "libpto.pc: Requires.private: liburing"

# shellcheck disable=SC2046
cc "$tmp/prog.c" $(pkg-config --cflags --libs libpto) -o "$tmp/prog" \
	2>"$tmp/cc.log"
check $? "cc prog.c \$(pkg-config --cflags --libs libpto)" || cat "$tmp/cc.log"
out=$(LD_LIBRARY_PATH="$dest/usr/lib" PTO_STATS=0 "$tmp/prog" 2>&1)
test "$out" = 1000
check $? "the documented example prints 1000 (got '$out')"

# shellcheck disable=SC2046
cc "$tmp/prog.c" -static-libgcc $(pkg-config --cflags libpto) \
	"$dest/usr/lib/libpto.a" $(pkg-config --static --libs-only-l libpto |
	sed 's/-lpto//') -pthread -o "$tmp/prog-static" 2>"$tmp/cc2.log"
check $? "links statically against libpto.a with pkg-config --static" ||
	cat "$tmp/cc2.log"
out=$(PTO_STATS=0 "$tmp/prog-static" 2>&1)
test "$out" = 1000
check $? "the static build prints 1000 too (got '$out')"

# the installed samples build with their Makefile and compute what the
# build tree's do
make -s -C "$tmp/w" -f "$dest/usr/share/pto/samples/Makefile" \
	>"$tmp/samples.log" 2>&1
check $? "the installed samples build with share/pto/samples/Makefile" ||
	cat "$tmp/samples.log"
sum() {	# ptorun sample.so
	LD_LIBRARY_PATH="$dest/usr/lib" PTO_STATS=0 timeout 120 "$1" "$2" \
		2>&1 </dev/null | sed -n 's/.*checksum: *//p' | tr '\n' ,
}
want=$(sum "$obj/tools/ptorun" "$obj/samples/bgemm_builtin.so")
got=$(sum "$dest/usr/bin/ptorun" "$tmp/w/bgemm_builtin.so")
test -n "$want" && test "$got" = "$want"
check $? "installed ptorun runs the installed bgemm_builtin sample ($got)"

# make uninstall takes back every file and link make install added
make -s -C "$src" O="$obj" uninstall DESTDIR="$dest" PREFIX=/usr \
	>"$tmp/uninstall.log" 2>&1
check $? "make uninstall" || cat "$tmp/uninstall.log"
left=$(find "$dest" ! -type d | sed "s|^$dest||")
test -z "$left"
check $? "nothing install added is left${left:+:$(echo $left)}"
left=$(find "$dest" -mindepth 1 -type d | sed "s|^$dest||")
test -z "$left"
check $? "no directory install made is left${left:+:$(echo $left)}"

# and none that was there before: a prefix whose directories exist
skel="usr/local/bin usr/local/include usr/local/lib usr/local/share/man
usr/local/sbin usr/local/src"
root2=$tmp/root2
for d in $skel; do mkdir -p "$root2/$d"; done
make -s -C "$src" O="$obj" install DESTDIR="$root2" PREFIX=/usr/local \
	>"$tmp/install2.log" 2>&1 &&
	make -s -C "$src" O="$obj" uninstall DESTDIR="$root2" \
		PREFIX=/usr/local >>"$tmp/install2.log" 2>&1
check $? "make install and uninstall into an existing /usr/local" ||
	cat "$tmp/install2.log"
gone=""
for d in $skel; do [ -d "$root2/$d" ] || gone="$gone /$d"; done
left=$(find "$root2" | sed "s|^$root2||" | sort | tr '\n' ' ')
want=$(for d in $skel; do p=$d; while [ "$p" != . ]; do echo "/$p";
	p=$(dirname "$p"); done; done | sort -u | tr '\n' ' ')
test -z "$gone" && test "$left" = " $want"
check $? "uninstall keeps the directories that were there${gone:+ (removed:$gone)}"

# modules_clean: on a copy of the tree, after a real module build if a
# kernel build tree is installed, only Kbuild's output goes
k=$(ls -d /usr/src/linux-headers-*-amd64 /usr/src/linux-headers-*-arm64 \
	2>/dev/null | sort -V | tail -n 1)
t=$tmp/tree
mkdir -p "$t"
tar -C "$src" --exclude=./build --exclude=./.git -cf - . | tar -C "$t" -xf -
find "$t" | sort >"$tmp/before"
mkdir -p "$t/build/lib" "$t/build/ops"
touch "$t/build/lib/runtime.o" "$t/build/ops/pto_ops.o" "$t/build/libpto.a"
if [ -n "$k" ]; then
	make -s -C "$t" modules KDIR="$k" >"$tmp/kmod.log" 2>&1
	check $? "make modules against $k" || tail -n 20 "$tmp/kmod.log"
else
	touch "$t/driver/pto.ko" "$t/ops/pto_ops.o" "$t/driver/.pto.ko.cmd"
	echo "ok $((n + 1)) - make modules # SKIP no kernel headers"
	n=$((n + 1))
fi
make -s -C "$t" modules_clean >"$tmp/clean.log" 2>&1
check $? "make modules_clean" || cat "$tmp/clean.log"
test -e "$t/build/lib/runtime.o" && test -e "$t/build/ops/pto_ops.o" &&
	test -e "$t/build/libpto.a"
check $? "modules_clean leaves the userspace objects under build/"
rm -rf "$t/build"
find "$t" | sort >"$tmp/after"
left=$(comm -13 "$tmp/before" "$tmp/after" | sed "s|^$t/||")
test -z "$left"
check $? "modules_clean removes all of Kbuild's output${left:+ (left:$(echo $left))}"

echo "1..$n"
[ "$failed" -eq 0 ]
