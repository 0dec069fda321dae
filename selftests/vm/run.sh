#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The VM stage (make vmtest): build pto.ko against Debian's
# linux-headers-*-amd64, pack busybox, the module, the driver kselftests,
# libpto, the tools and the samples into an initramfs, boot Debian's
# vmlinuz-*-amd64 in qemu-system-x86_64 (KVM if it works, else TCG), run
# selftests/vm/guest.sh inside and count its TAP on the host.
#
# The guest sees the build tree as /pto (libpto.so*, tools/, samples/,
# selftests/*/ programs) and the source tree's selftests/*/vm-*.sh as
# /pto/src/selftests/*/vm-*.sh; those run with O=/pto and cwd /pto.
#
# PTO_FUZZ_SECONDS (60), PTO_FUZZ_SEED (14) and PTO_STRESS_SECONDS (5)
# are passed to the guest's tests.
#
# Ends with "vm: N passed, N failed" and appends "passed failed skipped"
# to $PTO_RESULTS when set.  Any failed test, any report of the kernel's
# bug detectors (selftests/vm/splat-patterns: WARN, BUG, KASAN, lockdep,
# UBSAN, KMEMLEAK, RCU stalls, hung tasks ...), guest crash or timeout
# fails the stage; warnings reach the console (loglevel=5) so a guest
# that dies still shows them.  PTO_VM_APPEND adds to the kernel command
# line, PTO_VM_MEM sets the guest's memory in MiB (1024).
#
# PTO_VM_TIMEOUT (480 s) bounds a qemu run.  PTO_VM_BOOT_TIMEOUT (180 s)
# bounds the boot: a guest whose /init has not started by then is killed
# and booted once more (TCG guests rarely go silent early in the kernel's
# boot); a guest that reached userspace is never booted again, whatever
# happens to it.  PTO_VM_TEST_STALL_BOOT=1, a test hook for that retry,
# starts the first attempt's qemu paused (-S), so it never boots.
set -eu
cd "$(dirname "$0")/../.."
SRC=$(pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$SRC/$O" ;; esac
# Which kernel: by default the newest Debian amd64 kernel that has its
# headers installed.  PTO_VM_KVER picks one of Debian's by version;
# PTO_VM_VMLINUZ with PTO_VM_KHDR (a kernel build tree) boots any other,
# such as a debug kernel.  PTO_VM_NAME names the run (work directory
# $O/vm-NAME, result line "vm-NAME: ..."), so several can coexist.
#
# PTO_VM_ARCH=aarch64 boots an arm64 kernel in qemu-system-aarch64 (TCG);
# selftests/vm/arm64.sh sets it up with PTO_VM_KMAKE_ARGS (ARCH= and
# CROSS_COMPILE= for the module), PTO_VM_GUEST_O (the cross-built tree the
# guest gets; the host's $O still computes the reference checksums),
# PTO_VM_BUSYBOX and PTO_VM_SYSROOT (the libraries the guest's programs
# load, copied into its root instead of ldd's).
ARCH=${PTO_VM_ARCH:-x86_64}
GO=${PTO_VM_GUEST_O:-$O}
LABEL=vm${PTO_VM_NAME:+-$PTO_VM_NAME}
VM="$O/$LABEL"
TIMEOUT=${PTO_VM_TIMEOUT:-480}
MEM=${PTO_VM_MEM:-1024}
PATTERNS="$SRC/selftests/vm/splat-patterns"
MAKE=${MAKE:-make}

log() { echo "$LABEL: $*"; }

finish() {	# passed failed skipped
	echo "$LABEL: $1 passed, $2 failed, $3 skipped"
	[ -n "${PTO_RESULTS:-}" ] && echo "$1 $2 $3" >>"$PTO_RESULTS"
	[ "$2" -eq 0 ]
	exit $?
}

# ---- the Debian kernel and its headers (never the host's own kernel) ----
pick_kernel() {
	for k in $(ls /boot/vmlinuz-${PTO_VM_KVER:-*-amd64} 2>/dev/null |
		   sort -V -r); do
		v=${k#/boot/vmlinuz-}
		if [ -d "/usr/src/linux-headers-$v" ]; then
			KVER=$v
			return 0
		fi
	done
	return 1
}
if [ -n "${PTO_VM_VMLINUZ:-}" ]; then
	VMLINUZ=$PTO_VM_VMLINUZ
	KHDR=${PTO_VM_KHDR:?PTO_VM_VMLINUZ needs PTO_VM_KHDR}
	KVER=$(basename "$VMLINUZ")
else
	if ! pick_kernel; then
		"$SRC/scripts/deps.sh" vm
		pick_kernel || { log "no Debian kernel with headers"; finish 0 1 0; }
	fi
	VMLINUZ=/boot/vmlinuz-$KVER
	KHDR=/usr/src/linux-headers-$KVER
fi
log "kernel $KVER"

# ---- pto.ko, built in a copy so the source tree stays clean ----
rm -rf "$VM"
mkdir -p "$VM/kmod/include" "$VM/root"
# PTO_VM_KO boots a module built elsewhere (DKMS) instead, for that kernel.
if [ -n "${PTO_VM_KO:-}" ]; then
	mkdir -p "$VM/kmod/driver"
	case "$PTO_VM_KO" in
	*.xz) xz -dc "$PTO_VM_KO" >"$VM/kmod/driver/pto.ko" ;;
	*) cp "$PTO_VM_KO" "$VM/kmod/driver/pto.ko" ;;
	esac
	log "module $PTO_VM_KO"
fi
[ -z "${PTO_VM_KO:-}" ] && cp -r Kbuild VERSION driver ops "$VM/kmod/"
cp -r include/uapi "$VM/kmod/include/"
# sparse too when it is installed (make C=2); its warnings fail the stage
sparse=""
command -v sparse >/dev/null 2>&1 && sparse="C=2"
# The kernel's make must not inherit our command line (O= means something
# else to Kbuild), so it runs with a clean MAKEFLAGS.
if [ -z "${PTO_VM_KO:-}" ] && ! env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS \
	$MAKE -s -C "$KHDR" M="$VM/kmod" $sparse ${PTO_VM_KMAKE_ARGS:-} modules -j2 \
	>"$VM/kmod.log" 2>&1; then
	cat "$VM/kmod.log"
	log "module build failed"
	finish 0 1 0
fi
grep -sE 'warning:' "$VM/kmod.log" && { log "module build warnings"; finish 0 1 0; }

# ---- reference checksums of the built-in samples on the host's sim ----
R="$VM/root"
mkdir -p "$R/pto/tools" "$R/pto/samples" "$R/pto/src"
: >"$R/pto/checksums"
for s in bgemm_builtin paged_attention_builtin; do
	so="$O/samples/$s.so"
	[ -f "$so" ] && [ -x "$O/tools/ptorun" ] || continue
	sum=$(PTO_DEVICE=sim timeout 120 "$O/tools/ptorun" "$so" 2>&1 </dev/null |
	      sed -n 's/.*checksum: *//p' | tr '\n' ',')
	echo "$s ${sum:-none}" >>"$R/pto/checksums"
done

# ---- the initramfs ----
copy_libs() {	# ELF files: copy the shared libraries they need
	for f in "$@"; do
		ldd "$f" 2>/dev/null | awk '/=> \//{print $3} /^\t\//{print $1}'
	done | sort -u | while read -r lib; do
		[ -e "$R$lib" ] && continue
		mkdir -p "$R$(dirname "$lib")"
		cp -L "$lib" "$R$lib"
	done
}
mkdir -p "$R/bin" "$R/sbin" "$R/proc" "$R/sys" "$R/dev" "$R/tmp" "$R/etc"
cp "${PTO_VM_BUSYBOX:-/bin/busybox}" "$R/bin/busybox"
cp "$VM/kmod/driver/pto.ko" "$R/pto/pto.ko"
# the KUnit suites, built where the kernel has KUnit
[ -f "$VM/kmod/driver/tests/pto_kunit.ko" ] &&
	cp "$VM/kmod/driver/tests/pto_kunit.ko" "$R/pto/pto_kunit.ko"
grep -v '^#' "$PATTERNS" | grep . >"$R/pto/splat-patterns"
# a group for the 0660 nodes and users in it and not in it
cat >"$R/etc/passwd" <<'EOF2'
root:x:0:0:root:/:/bin/sh
ptouser:x:1000:1000:pto user:/tmp:/bin/sh
nobody:x:65534:65534:nobody:/tmp:/bin/sh
EOF2
cat >"$R/etc/group" <<'EOF2'
root:x:0:
pto:x:1000:ptouser
nogroup:x:65534:
EOF2
cp -P "$GO"/libpto.so* "$R/pto/" 2>/dev/null || true
for t in ptorun ptotop ptobench; do
	[ -x "$GO/tools/$t" ] && cp "$GO/tools/$t" "$R/pto/tools/"
done
cp "$GO"/samples/*.so "$R/pto/samples/" 2>/dev/null || true
for d in "$GO"/selftests/*/; do
	n=$(basename "$d")
	[ "$n" = asan ] || [ "$n" = tsan ] && continue
	for f in "$d"*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		mkdir -p "$R/pto/selftests/$n"
		cp "$f" "$R/pto/selftests/$n/"
	done
done
for f in selftests/*/vm-*.sh; do
	[ -x "$f" ] || continue
	mkdir -p "$R/pto/src/$(dirname "$f")"
	cp "$f" "$R/pto/src/$f"
done
mkdir -p "$R/pto/src/packaging"
cp packaging/60-pto.rules "$R/pto/src/packaging/"	# for vm-access.sh
cp selftests/vm/guest.sh "$R/pto/guest.sh"
# knobs of the guest's tests, passed through
: >"$R/pto/env"
for v in PTO_FUZZ_SECONDS PTO_FUZZ_SEED PTO_STRESS_SECONDS PTO_TEST_SCALE; do
	eval "val=\${$v:-}"
	[ -n "$val" ] && echo "export $v='$val'" >>"$R/pto/env"
done
# debugging: PTO_VM_ONLY="commands" runs just those after loading pto.ko
[ -n "${PTO_VM_ONLY:-}" ] && echo "$PTO_VM_ONLY" >"$R/pto/only.sh"
if [ -n "${PTO_VM_SYSROOT:-}" ]; then
	cp -a "$PTO_VM_SYSROOT"/. "$R/"
else
	copy_libs $(find "$R/pto" -type f \( -perm -u+x -o -name '*.so*' \))
fi
cat >"$R/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "=== vm guest userspace" >/dev/ttyS1
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
sh /pto/guest.sh >/dev/ttyS1 2>&1
echo "guest.sh exited $?" >/dev/ttyS1
sync
poweroff -f
EOF
# arm64's virt board has one UART: the guest's TAP and the kernel's
# console (emergencies only; guest.sh checks dmesg) share it.
[ "$ARCH" = aarch64 ] && sed -i 's|/dev/ttyS1|/dev/ttyAMA0|g' "$R/init"
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) >"$VM/initramfs.gz"

# ---- boot ----
# Now and then a TCG guest goes silent early in the kernel's boot and
# would sit out the whole $TIMEOUT (about one CI run in 15; the console
# stops before userspace and the same kernel boots fine the next time).
# /init prints $USERSPACE as soon as it has /dev: a guest that has not
# printed it after $BOOT_TIMEOUT s is killed and booted once more.  Once
# it has, a hang or a failure is the guest's own and is not retried.  On
# the 2-CPU build machine userspace came 5 to 9 s after qemu started
# (6.1, 6.12, arm64), 30 s at worst with a load average of 13: the
# default is six times that, and a stalled boot still costs far less
# than $TIMEOUT.
USERSPACE='=== vm guest userspace'
BOOT_TIMEOUT=${PTO_VM_BOOT_TIMEOUT:-180}

# Succeeds once the guest has reached userspace or qemu (pid $1) has
# exited (its logs say how), fails if neither happened in $BOOT_TIMEOUT s.
await_userspace() {	# pid
	deadline=$(($(date +%s) + BOOT_TIMEOUT))
	while :; do
		if grep -qs "^$USERSPACE" "$VM/guest.log"; then
			log "userspace after $(($(date +%s) - start)) s"
			return 0
		fi
		kill -0 "$1" 2>/dev/null || return 0	# its logs say how
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 1		# polling the log, not synchronization
	done
}

# One qemu run, at most $TIMEOUT s; sets qrc.  Fails, qemu killed, if the
# guest did not reach userspace within $BOOT_TIMEOUT s.
qemu_once() {	# qemu command...
	start=$(date +%s)
	timeout "$TIMEOUT" "$@" </dev/null >"$VM/qemu.log" 2>&1 &
	qpid=$!
	if ! await_userspace "$qpid"; then
		kill "$qpid" 2>/dev/null	# timeout(1) passes it on to qemu
		wait "$qpid"
		qrc="killed: no userspace after $BOOT_TIMEOUT s"
		return 1
	fi
	wait "$qpid"
	qrc=$?
	log "qemu exited $qrc after $(($(date +%s) - start)) s"
}

# The first qemu_once; the test hook PTO_VM_TEST_STALL_BOOT=1 starts its
# qemu paused, a boot that makes no progress.
first_attempt() {	# qemu command...
	[ "${PTO_VM_TEST_STALL_BOOT:-0}" = 1 ] && set -- "$@" -S
	qemu_once "$@"
}

# The stalled attempt's logs as *.1.log, for a post-mortem, and how far
# it got; the retry's own logs are the ones checked.
keep_stalled_logs() {
	for f in console guest qemu; do
		[ -f "$VM/$f.log" ] || continue
		mv "$VM/$f.log" "$VM/$f.1.log"
		[ -s "$VM/$f.1.log" ] || continue
		log "the stalled boot's $f.log ends:"
		tail -n 5 "$VM/$f.1.log"
	done
}

# qemu_once, and a second time if the first boot stalled before
# userspace.
run_qemu() {	# qemu command...
	set +e
	if ! first_attempt "$@"; then
		keep_stalled_logs
		log "VM boot: no progress for $BOOT_TIMEOUT s before userspace, retrying (attempt 2/2)"
		qemu_once "$@" ||
			log "VM boot: no progress for $BOOT_TIMEOUT s before userspace, giving up"
	fi
	set -e
}

boot() {	# accelerator options
	log "booting with $*"
	run_qemu qemu-system-x86_64 "$@" -m "$MEM" -smp 2 \
		-display none -monitor none -no-reboot -nodefaults \
		-serial "file:$VM/console.log" -serial "file:$VM/guest.log" \
		-kernel "$VMLINUZ" -initrd "$VM/initramfs.gz" \
		-append "console=ttyS0 loglevel=5 panic=-1 rdinit=/init ${PTO_VM_APPEND:-}"
	grep -q '^=== vm guest done' "$VM/guest.log"
}
boot_aarch64() {
	log "booting qemu-system-aarch64 (TCG)"
	run_qemu qemu-system-aarch64 -M virt -cpu cortex-a57 \
		-accel tcg -m 1024 -smp 2 \
		-display none -monitor none -no-reboot -nodefaults \
		-serial "file:$VM/guest.log" \
		-kernel "$VMLINUZ" -initrd "$VM/initramfs.gz" \
		-append "console=ttyAMA0 loglevel=1 panic=-1 rdinit=/init"
	ln -sf guest.log "$VM/console.log"
}
# TCG by default: KVM passes a start-up probe on these machines but the
# nested guest then hangs.  PTO_VM_KVM=1 tries KVM first, then TCG.
# boot's status only chooses between the two: a guest that did not finish
# is reported and counted below (under set -e it ended the script here,
# without the console's tail and without a result line).
#
# x86 TCG runs its vCPUs on one host thread (thread=single): with one
# thread per vCPU, a guest CPU now and then ran a stale translation of
# code the kernel had just patched (a static key flipped by the first
# memory cgroup, the TSC marked unstable) and died with "Oops: int3" at
# the patched site, in 1 of ~50 runs.  Guest run time is the same
# (118 s against 117 s for the selftests), the host having 2 CPUs.
TCG="tcg,thread=single"
if [ "$ARCH" = aarch64 ]; then
	boot_aarch64
elif [ -w /dev/kvm ] && [ "${PTO_VM_KVM:-0}" = 1 ] &&
   echo quit | timeout 20 qemu-system-x86_64 -accel kvm -M q35 \
	-display none -monitor stdio -S -nodefaults >/dev/null 2>&1; then
	boot -accel kvm -cpu host || boot -accel $TCG || true
else
	boot -accel $TCG || true
fi

tr -d '\r' <"$VM/guest.log" >"$VM/guest.tap"
cat "$VM/guest.tap"
pass=$(grep -cE '^ok [0-9]+' "$VM/guest.tap" || true)
skip=$(grep -cE '^ok [0-9]+.*# *SKIP' "$VM/guest.tap" || true)
fail=$(grep -cE '^not ok [0-9]+' "$VM/guest.tap" || true)
pass=$((pass - skip))
if ! grep -q '^=== vm guest done' "$VM/guest.tap"; then
	echo "not ok 1 - guest did not finish (qemu status $qrc)"
	tail -n 50 "$VM/console.log"
	cat "$VM/qemu.log"
	fail=$((fail + 1))
fi
pat=$(mktemp)
grep -v '^#' "$PATTERNS" | grep . >"$pat"
if grep -qE -f "$pat" "$VM/console.log"; then
	echo "not ok 1 - kernel console reports a problem"
	grep -E -A20 -f "$pat" "$VM/console.log" | head -n 80
	fail=$((fail + 1))
fi
rm -f "$pat"
finish "$pass" "$fail" "$skip"
