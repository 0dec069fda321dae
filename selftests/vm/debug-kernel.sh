#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel of "make vmtest-debug": Debian's linux-source-6.1 built
# with selftests/vm/debug.config (allnoconfig plus the harness's needs and
# KASAN, lockdep, KMEMLEAK, UBSAN, KFENCE, DEBUG_OBJECTS and friends).
#
#   selftests/vm/debug-kernel.sh        prints the kernel build tree
#
# The tree is cached by a hash of the config, the source package version,
# the compiler and this script, in $PTO_KCACHE (reused across clones) or
# else $O/kcache (reused across runs in one checkout).  A cached tree is
# used as it is; otherwise it is built with $PTO_KBUILD_JOBS jobs (2) and
# the build time is logged.  The tree keeps what out-of-tree modules need
# (headers, scripts, Module.symvers) and arch/x86/boot/bzImage; object
# files are dropped.  Progress goes to stderr, the path to stdout.
set -eu
cd "$(dirname "$0")/../.."
SRC=$(pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$SRC/$O" ;; esac
CACHE=${PTO_KCACHE:-$O/kcache}
JOBS=${PTO_KBUILD_JOBS:-2}
CONFIG=$SRC/selftests/vm/debug.config
TAR=/usr/src/linux-source-6.1.tar.xz

log() { echo "debug-kernel: $*" >&2; }

if [ ! -f "$TAR" ] || ! command -v flex >/dev/null || ! command -v bison >/dev/null; then
	"$SRC/scripts/deps.sh" kernel >&2
fi
[ -f "$TAR" ] || { log "$TAR is missing (linux-source-6.1)"; exit 1; }

pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || ls -l "$TAR")
hash=$({ cat "$CONFIG" "$0"; echo "$pkgver"; ${CC:-gcc} --version | head -n 1; } |
       sha256sum | cut -c1-16)
dir=$CACHE/linux-6.1-debug-$hash
if [ -f "$dir/.pto-done" ]; then
	log "cached: $dir"
	echo "$dir"
	exit 0
fi

mkdir -p "$CACHE"
# one build per cache at a time; a second caller waits and then reuses it
exec 9>"$CACHE/.lock"
flock 9
if [ -f "$dir/.pto-done" ]; then
	echo "$dir"
	exit 0
fi

start=$(date +%s)
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
log "extracting $TAR"
tar -xJf "$TAR" -C "$dir.tmp" --strip-components=1
cd "$dir.tmp"
log "configuring (allnoconfig + $(basename "$CONFIG"))"
make -s allnoconfig KCONFIG_ALLCONFIG="$CONFIG" >&2
# every option the fragment sets must have survived Kconfig's dependencies
missing=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) want=$line ;;
	"# CONFIG_"*" is not set") want=$line ;;
	*) continue ;;
	esac
	if ! grep -qxF "$want" .config; then
		# "is not set" also holds when the option is absent altogether
		case "$want" in
		"# "*) opt=${want#\# }; opt=${opt%% *}
		       grep -q "^$opt=" .config || continue ;;
		esac
		log "config: '$want' did not stick"
		missing=1
	fi
done <"$CONFIG"
[ "$missing" -eq 0 ] || { log "fix $(basename "$CONFIG")"; exit 1; }

log "building with -j$JOBS"
if ! make -j"$JOBS" bzImage modules >"$dir.tmp.log" 2>&1; then
	tail -n 40 "$dir.tmp.log" >&2
	log "build failed (log: $dir.tmp.log)"
	exit 1
fi
make -s modules_prepare >&2
# keep what M= builds need; objects and the uncompressed images go
find . -name '*.o' ! -path './scripts/*' ! -path './tools/*' -delete
find . \( -name '*.cmd' -o -name '*.a' \) ! -path './scripts/*' \
	! -path './tools/*' -delete
rm -f vmlinux.o .tmp_vmlinux* arch/x86/boot/compressed/vmlinux
end=$(date +%s)
log "built in $((end - start)) s"
echo "$((end - start))" >.pto-build-seconds
touch .pto-done
cd "$SRC"
mv "$dir.tmp" "$dir"
mv "$dir.tmp.log" "$dir/build.log"
echo "$dir"
