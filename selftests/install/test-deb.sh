#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Debian packages as an operator gets them (make check-deb; root, on
# Debian): make deb (lintian without errors), install all four with apt,
# which has DKMS build pto.ko for every kernel whose headers are
# installed; boot the DKMS-built module in the VM; build and run a program
# and the installed samples with pkg-config against the packages; purge
# them and check that no file they or their scripts created is left.
# The system group pto stays, as Debian's policy wants of system groups.
#   test-deb.sh SRCDIR OBJDIR
set -u
src=$1 obj=$2
n=0 failed=0
check() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"; failed=$((failed + 1)); fi
	return "$1"
}
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
	echo "ok 1 - packages # SKIP needs root on Debian"
	echo "1..1"
	exit 0
fi
# run from make check, MAKEFLAGS would carry our O= through apt and dpkg
# into DKMS's kernel make, where O= means an output tree
unset MAKEFLAGS MFLAGS MAKEOVERRIDES MAKELEVEL
v=$(cat "$src/VERSION")
pkgs="libpto0 libpto-dev pto-tools pto-dkms"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# every file under these whose path names pto, before and after, must be
# the same set (anything the packages or DKMS add does; other files may
# come and go with whatever else runs on the machine)
snapshot() {
	find /usr /lib /etc /var/lib/dkms /opt -xdev ! -type d 2>/dev/null |
		grep -i pto | sort
}
# a check-deb or apt-get killed mid-way (while DKMS built, say) leaves
# dpkg interrupted, and every apt-get below would fail on it
sh "$src/scripts/dpkg-recover.sh" $pkgs 2>&1 | sed 's/^/# /'
apt-get purge -y $pkgs >/dev/null 2>&1
snapshot >"$tmp/before"

make -s -C "$src" O="$obj" deb >"$tmp/deb.log" 2>&1
check $? "make deb: dpkg-buildpackage, lintian without errors" ||
	tail -n 30 "$tmp/deb.log"
debs=""
for p in $pkgs; do
	f=$(ls "$obj/deb/${p}_${v}_"*.deb 2>/dev/null)
	check $? "built ${p}_${v}" && debs="$debs $f"
done

# libpto0's symbols file (dependents get the version their symbols need)
# lists exactly what the packaged library exports
mkdir "$tmp/lib0"
dpkg-deb -x "$obj/deb/libpto0_${v}_"*.deb "$tmp/lib0" 2>/dev/null &&
	dpkg-deb -e "$obj/deb/libpto0_${v}_"*.deb "$tmp/lib0/DEBIAN" 2>/dev/null
objdump -T "$tmp"/lib0/usr/lib/*/libpto.so.0 2>/dev/null |
	awk '$NF ~ /^pto_/ { v = $(NF - 1); gsub(/[()]/, "", v);
			     print $NF "@" v }' | sort >"$tmp/exported"
sed -n 's/^ \(pto_[^ ]*\) .*/\1/p' "$tmp/lib0/DEBIAN/symbols" 2>/dev/null |
	sort >"$tmp/listed"
[ -s "$tmp/exported" ] && cmp -s "$tmp/exported" "$tmp/listed"
check $? "libpto0's symbols file lists the $(wc -l <"$tmp/exported") symbols libpto.so.0 exports" ||
	diff "$tmp/exported" "$tmp/listed"
grep -q '^ pto_run_cancel@LIBPTO_0.2 0.2.0$' "$tmp/lib0/DEBIAN/symbols"
check $? "a program calling pto_run_cancel needs libpto0 >= 0.2.0"

DEBIAN_FRONTEND=noninteractive apt-get install -y $debs >"$tmp/apt.log" 2>&1
check $? "apt-get install the four packages (DKMS builds pto.ko)" ||
	tail -n 30 "$tmp/apt.log"
for k in $(ls /lib/modules); do
	[ -d "/lib/modules/$k/build" ] || continue
	dkms status "pto/$v" -k "$k" 2>/dev/null | grep -q ': installed'
	check $? "dkms built and installed pto/$v for $k"
	ko=$(ls /lib/modules/"$k"/updates/dkms/pto.ko* 2>/dev/null)
	mv=$(modinfo -F version "$ko" 2>/dev/null)
	test "$mv" = "$v"
	check $? "$k: modinfo says version $mv"
	case "$k" in 6.1.*-amd64) ko61=$ko; k61=$k ;; esac
done
getent group pto >/dev/null
check $? "the group pto exists"
test -f /lib/udev/rules.d/60-pto.rules
check $? "the udev rule is installed"
out=$(ptorun --version 2>&1)
echo "$out" | grep -q "^ptorun (PTO) $v"
check $? "installed ptorun --version: $out"
readelf -d /usr/bin/ptorun | grep -qE 'R(UN)?PATH'
test $? -ne 0
check $? "installed ptorun has no RUNPATH"

awk '/code-block:: c/ { f = 1; next } f && /^Build it/ { f = 0 } f' \
	"$src/Documentation/libpto.rst" | sed 's/^   //' >"$tmp/prog.c"
# shellcheck disable=SC2046
cc "$tmp/prog.c" $(pkg-config --cflags --libs libpto) -o "$tmp/prog" \
	2>"$tmp/cc.log"
check $? "cc prog.c \$(pkg-config --cflags --libs libpto) against the packages" ||
	cat "$tmp/cc.log"
out=$(PTO_STATS=0 "$tmp/prog" 2>&1)
test "$out" = 1000
check $? "it runs with the packaged libpto.so.0 and prints 1000 (got '$out')"
mkdir "$tmp/s"
make -s -C "$tmp/s" -f /usr/share/pto/samples/Makefile >"$tmp/s.log" 2>&1 &&
	PTO_STATS=0 ptorun "$tmp/s/bgemm_builtin.so" </dev/null 2>&1 | grep -q PASS
check $? "the packaged samples build and pass with the packaged ptorun"

if [ -n "${ko61:-}" ] && [ "${PTO_SKIP_VM:-0}" != 1 ]; then
	PTO_VM_KO=$ko61 PTO_VM_KVER=$k61 PTO_VM_NAME=dkms \
		O="$obj" sh "$src/selftests/vm/run.sh" >"$tmp/vm.log" 2>&1
	check $? "the VM boots $k61 with the DKMS-built module: $(tail -n 1 "$tmp/vm.log")" ||
		grep -E '^not ok|failed' "$tmp/vm.log" | head -n 20
	# a boot retried after a stall (run.sh) shows, passed or not
	grep 'VM boot:' "$tmp/vm.log" | sed 's/^/# /'
fi

DEBIAN_FRONTEND=noninteractive apt-get purge -y $pkgs >"$tmp/purge.log" 2>&1
check $? "apt-get purge the four packages" || tail -n 20 "$tmp/purge.log"
dkms status 2>/dev/null | grep -q '^pto/'
test $? -ne 0
check $? "dkms knows no pto any more"
snapshot >"$tmp/after"
left=$(comm -13 "$tmp/before" "$tmp/after")
test -z "$left"
check $? "no file is left behind${left:+: $(echo $left | head -c 400)}"
getent group pto >/dev/null && echo "# the system group pto stays (Debian policy)"

echo "1..$n"
[ "$failed" -eq 0 ]
