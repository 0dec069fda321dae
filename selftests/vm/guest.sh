#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM (see run.sh), output on ttyS1: load pto.ko, run the
# driver kselftests, the samples on /dev/pto0 against the host's sim
# checksums, the wait benchmark and every vm-*.sh, then unload the module
# and check the kernel log.  Prints TAP; the host counts top-level lines.
P=/pto
export LD_LIBRARY_PATH=$P
n=0

ok() {		# status description
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
	fi
}

# Run a TAP program; a non-zero exit without a "not ok" line is a failure.
run_tap() {	# name command...
	name=$1
	shift
	echo "# === $name"
	# a hung test costs its own 300 s, not the whole VM's time
	timeout 300 "$@" >/tmp/out 2>&1
	rc=$?
	cat /tmp/out
	if [ $rc -ne 0 ] && ! grep -qE '^not ok [0-9]+' /tmp/out; then
		ok 1 "$name exited with status $rc"
	fi
}

echo "# guest kernel $(uname -r)"
insmod $P/pto.ko
ok $? "insmod pto.ko"
[ -c /dev/pto0 ]
ok $? "/dev/pto0 exists"
ls -l /dev/pto0 | grep -q '^crw-rw----'
ok $? "/dev/pto0 has mode 0660"

if [ -f $P/only.sh ]; then
	(cd $P && . $P/only.sh)
	echo "=== vm guest done"
	exit 0
fi

run_tap pto_driver_test $P/selftests/driver/pto_driver_test

# built-in samples on the device: every checksum (one per case) equals
# the one the host's sim printed, so the results are equal bit for bit
while read -r s want; do
	got=$(PTO_DEVICE=/dev/pto0 $P/tools/ptorun $P/samples/$s.so 2>&1 </dev/null |
	      tee /tmp/sample.out | sed -n 's/.*checksum: *//p' | tr '\n' ',')
	sed 's/^/# /' /tmp/sample.out | tail -n 5
	[ -n "$got" ] && [ "$got" = "$want" ]
	ok $? "$s on /dev/pto0: checksum ${got:-none} (sim: $want)"
done <$P/checksums

# C-function kernels exist only on the sim
if [ -f $P/samples/bgemm.so ]; then
	PTO_DEVICE=/dev/pto0 $P/tools/ptorun $P/samples/bgemm.so </dev/null \
		>/tmp/c.out 2>&1
	rc=$?
	tail -n 2 /tmp/c.out | sed 's/^/# /'
	[ $rc -ne 0 ] && grep -qi 'not supported' /tmp/c.out
	ok $? "C kernels are refused on /dev/pto0 (-EOPNOTSUPP)"
fi

run_tap pto_wait_bench $P/selftests/driver/pto_wait_bench 5 2000

for t in $P/src/selftests/*/vm-*.sh; do
	[ -f "$t" ] || continue
	(cd $P && O=$P run_tap "$(basename "$t")" sh "$t")
done

rmmod pto
ok $? "rmmod pto once every context is closed"
[ ! -e /dev/pto0 ]
ok $? "/dev/pto0 is gone after rmmod"

dmesg >/tmp/dmesg
if grep -qE 'WARNING:|BUG:|Oops|KASAN|lockdep|circular locking|general protection|INFO: task .* blocked' /tmp/dmesg; then
	grep -E -A15 'WARNING:|BUG:|Oops|KASAN|lockdep|circular locking|general protection|INFO: task' /tmp/dmesg |
		sed 's/^/# /' | head -n 80
	ok 1 "kernel log is clean"
else
	ok 0 "kernel log is clean"
fi
echo "=== vm guest done"
