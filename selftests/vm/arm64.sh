#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make vmtest-arm64: pto.ko and its kselftests on arm64, from an amd64
# Debian 12 host.
#
#  1. Debian's arm64 kernel: linux-image-ABI-arm64 and linux-headers-ABI-
#     arm64 of the installed linux-source-6.1's version, or of its upstream
#     version while the arm64 builds of a new upload lag (apt-get
#     download, after dpkg --add-architecture arm64), plus the arm64
#     busybox-static, liburing and ncurses the guest needs.
#  2. linux-source-6.1 prepared for arm64 (Debian's arm64 config and
#     Module.symvers, the release string of Debian's kernel, make
#     modules_prepare with gcc-aarch64-linux-gnu), kept in $O/arm64/linux
#     while its version is current.
#  3. libpto, the tools, samples and kselftests cross-built into
#     $O/arm64/user, and the arm64 libraries they load.
#  4. run.sh with PTO_VM_ARCH=aarch64: the module cross-built against the
#     prepared tree (no warnings allowed), booted in qemu-system-aarch64
#     (TCG, cortex-a57) with everything guest.sh runs.
#
# Ends with run.sh's "vm-arm64: N passed, N failed, N skipped" line.
set -eu
cd "$(dirname "$0")/../.."
SRC=$(pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$SRC/$O" ;; esac
W="$O/arm64"
MAKE=${MAKE:-make}
CROSS=aarch64-linux-gnu-
KMAKE="env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS $MAKE ARCH=arm64 CROSS_COMPILE=$CROSS"
log() { echo "vm-arm64: $*"; }
fail() {
	log "$*"
	echo "vm-arm64: 0 passed, 1 failed, 0 skipped"
	[ -n "${PTO_RESULTS:-}" ] && echo "0 1 0" >>"$PTO_RESULTS"
	exit 1
}
mkdir -p "$W/debs"

"$SRC/scripts/deps.sh" arm64 || fail "missing packages (scripts/deps.sh arm64)"

# ---- 1. Debian's arm64 packages, the version of linux-source-6.1 ----
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
	fail "linux-source-6.1 is not installed"
# The image of that version; else, as the archive may publish a
# linux-source upload (6.1.192-3) before its arm64 builds, the newest one
# of the same upstream version (6.1.192-2): same ABI name (6.1.0-N), which
# Debian keeps binary-compatible, and the boot below checks the module.
imgs=$(apt-cache madison linux-image-arm64:arm64 2>/dev/null |
       awk -F'|' '{gsub(/ /, "", $2); print $2}')
imgver=""
for v in $imgs; do
	[ "$v" = "$srcver" ] && imgver=$v
done
if [ -z "$imgver" ]; then
	for v in $imgs; do
		[ "${v%-*}" = "${srcver%-*}" ] && { imgver=$v; break; }
	done
fi
[ -n "$imgver" ] || fail "no linux-image-arm64 ${srcver%-*} in the arm64 lists (dpkg --add-architecture arm64; apt-get update)"
abi=$(apt-cache show "linux-image-arm64:arm64=$imgver" |
      sed -n 's/^Depends: linux-image-\(6\.1\.0-[0-9]*\)-arm64 .*/\1/p' |
      head -n 1)
[ -n "$abi" ] || fail "linux-image-arm64 $imgver names no linux-image-6.1.0-N-arm64"
KVER=$abi-arm64
log "kernel $KVER (image $imgver, source $srcver)"
get() {		# package (arch-qualified): download once, extract into dir
	pkg=$1 dir=$2
	f=$(ls "$W/debs/${pkg%%:*}_"*.deb 2>/dev/null | head -n 1)
	if [ -z "$f" ]; then
		(cd "$W/debs" && apt-get download -q "$pkg" >/dev/null 2>&1) ||
			fail "apt-get download $pkg failed"
		f=$(ls "$W/debs/${pkg%%:*}_"*.deb | head -n 1)
	fi
	mkdir -p "$dir"
	dpkg-deb -x "$f" "$dir"
}
rm -rf "$W/image" "$W/headers" "$W/sysroot"
get "linux-image-$KVER:arm64=$imgver" "$W/image"
get "linux-headers-$KVER:arm64=$imgver" "$W/headers"
for p in busybox-static liburing2 liburing-dev libncurses-dev libncurses6 \
	 libncursesw6 libtinfo6; do
	get "$p:arm64" "$W/sysroot"
done
IMAGE="$W/image/boot/vmlinuz-$KVER"
[ -f "$IMAGE" ] || fail "no $IMAGE in the image package"

# ---- 2. linux-source-6.1 prepared for arm64 ----
K="$W/linux"
stamp="$srcver $KVER $imgver"
if [ "$(cat "$K/.pto-prepared" 2>/dev/null)" != "$stamp" ]; then
	log "preparing linux-source-6.1 for arm64"
	rm -rf "$K" "$W/linux-source-6.1"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$W"
	mv "$W/linux-source-6.1" "$K"
	cp "$W/image/boot/config-$KVER" "$K/.config"
	cp "$W/headers/usr/src/linux-headers-$KVER/Module.symvers" "$K/"
	# Debian's release string, so vermagic matches its kernel
	$KMAKE -C "$K" -s KERNELVERSION="$KVER" olddefconfig >"$W/prepare.log" 2>&1 &&
	$KMAKE -C "$K" -s -j2 KERNELVERSION="$KVER" modules_prepare \
		>>"$W/prepare.log" 2>&1 || { tail -n 30 "$W/prepare.log"
		fail "modules_prepare for arm64 failed"; }
	[ "$(cat "$K/include/config/kernel.release")" = "$KVER" ] ||
		fail "prepared tree says $(cat "$K/include/config/kernel.release"), not $KVER"
	echo "$stamp" >"$K/.pto-prepared"
fi

# ---- 3. userspace for arm64, and the libraries it loads ----
SR="$W/sysroot"
log "cross-building libpto, tools, samples, kselftests"
# the arm64 headers and libraries of $SR in every compile and link
XCC="${CROSS}gcc -I$SR/usr/include"
for d in "$SR/usr/lib/aarch64-linux-gnu" "$SR/lib/aarch64-linux-gnu"; do
	XCC="$XCC -L$d -Wl,-rpath-link,$d"
done
env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS $MAKE -s -j2 O="$W/user" \
	CC="$XCC" AR=${CROSS}ar PTOBENCH_GOMP_CC=false \
	PTOBENCH_OMP_CC=false PTOBENCH_STARPU_PC= PTO_CXX= \
	all driver-tests >"$W/user.log" 2>&1 ||
	{ tail -n 30 "$W/user.log"; fail "cross build of the userspace failed"; }

G="$W/guestlibs"
rm -rf "$G"
mkdir -p "$G/lib/aarch64-linux-gnu"
cp -L /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 "$G/lib/"
needed() {	# ELF files: their NEEDED libraries, recursively
	todo="$*" seen=""
	while [ -n "$todo" ]; do
		set -- $todo
		todo=""
		for f in "$@"; do
			for l in $(${CROSS}readelf -d "$f" 2>/dev/null |
				   sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
				case " $seen " in *" $l "*) continue ;; esac
				seen="$seen $l"
				for d in /usr/aarch64-linux-gnu/lib \
					 "$SR/lib/aarch64-linux-gnu" \
					 "$SR/usr/lib/aarch64-linux-gnu" "$W/user"; do
					[ -e "$d/$l" ] || continue
					cp -L "$d/$l" "$G/lib/aarch64-linux-gnu/"
					todo="$todo $d/$l"
					break
				done
			done
		done
	done
}
needed $(find "$W/user" -type f \( -perm -u+x -o -name '*.so*' \) \
	! -name '*.sh' ! -name '*.o')

# ---- 4. the VM ----
PTO_VM_ARCH=aarch64 PTO_VM_NAME=${PTO_VM_NAME:-arm64} \
PTO_VM_VMLINUZ="$IMAGE" PTO_VM_KHDR="$K" \
PTO_VM_KMAKE_ARGS="ARCH=arm64 CROSS_COMPILE=$CROSS" \
PTO_VM_GUEST_O="$W/user" PTO_VM_BUSYBOX="$SR/bin/busybox" \
PTO_VM_SYSROOT="$G" PTO_VM_TIMEOUT=${PTO_VM_TIMEOUT:-1500} \
O="$O" MAKE="$MAKE" exec sh "$SRC/selftests/vm/run.sh"
