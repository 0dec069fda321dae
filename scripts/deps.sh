#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Install the Debian packages a PTO build stage needs.
#   scripts/deps.sh GROUP...   groups: build check bench vm kernel deb arm64
# As root, missing packages are installed with apt-get; otherwise the exact
# command is printed and the script fails.
set -eu

pkgs_build="gcc make libc6-dev linux-libc-dev pkg-config liburing-dev chrpath"
# gdb: make stress's watchdog prints a hung driver's stacks with it
pkgs_check="tmux libncurses-dev libasan8 libubsan1 libtsan2 python3 g++ gdb"
# valgrind: ptobench-sched-cost counts instructions with callgrind
pkgs_bench="clang libomp-dev libstarpu-dev valgrind"
pkgs_vm="qemu-system-x86 busybox-static linux-image-amd64 linux-headers-amd64 \
linux-source-6.1 cpio kmod xz-utils liburing-dev perl sparse \
linux-image-6.12-amd64 linux-headers-6.12-amd64"
# make deb / make check-deb: the packages, lintian, DKMS
pkgs_deb="dpkg-dev debhelper dh-dkms dkms lintian chrpath libncurses-dev"
# make vmtest-arm64: cross compiler, a kernel tree's build tools, qemu;
# Debian's arm64 kernel comes from the arm64 lists (added below)
pkgs_arm64="gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm bison flex bc libssl-dev \
linux-source-6.1 xz-utils cpio"
# the debug kernel of make vmtest-debug, built from linux-source-6.1
pkgs_kernel="flex bison bc libelf-dev libssl-dev"

want=""
arm64=0
for group in "$@"; do
	case "$group" in
	build) want="$want $pkgs_build" ;;
	check) want="$want $pkgs_check $pkgs_bench $pkgs_vm $pkgs_kernel $pkgs_deb $pkgs_arm64"
	       arm64=1 ;;
	bench) want="$want $pkgs_bench" ;;
	vm) want="$want $pkgs_vm" ;;
	kernel) want="$want $pkgs_vm $pkgs_kernel" ;;
	deb) want="$want $pkgs_deb" ;;
	arm64) want="$want $pkgs_arm64"; arm64=1 ;;
	*) echo "deps.sh: unknown group '$group'" >&2; exit 2 ;;
	esac
done

missing=""
for p in $want; do
	case " $missing " in *" $p "*) continue ;; esac
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
# arm64 needs the arm64 package lists (apt-get download of Debian's arm64
# kernel and guest libraries); nothing arm64 is installed on the host.
if [ "$arm64" = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "PTO's arm64 VM needs the arm64 package lists" >&2
		echo "run as root:  dpkg --add-architecture arm64 && apt-get update" >&2
		exit 1
	fi
	echo "deps.sh: adding the arm64 architecture to apt"
	dpkg --add-architecture arm64
	rm -f /var/lib/apt/periodic/pto-update-stamp
	[ -n "$missing" ] || apt-get update -q >/dev/null
fi
[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "PTO needs these Debian packages:$missing" >&2
	echo "run as root:  apt-get update && $cmd" >&2
	exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# an apt-get killed earlier leaves dpkg refusing every install until fixed
"$(dirname "$0")/dpkg-recover.sh"
# A fresh machine has no package lists yet; refresh them at most once a day.
stamp=/var/lib/apt/periodic/pto-update-stamp
if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]; then
	apt-get update -q >/dev/null
	mkdir -p "$(dirname "$stamp")" && touch "$stamp"
fi
if ! $cmd >/tmp/pto-deps.log 2>&1; then
	# Lists may be stale even within a day; refresh and retry once.
	apt-get update -q >/dev/null
	$cmd >/tmp/pto-deps.log 2>&1 || { cat /tmp/pto-deps.log >&2; exit 1; }
fi
