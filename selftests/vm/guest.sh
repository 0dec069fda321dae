#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM (see run.sh), output on ttyS1: load pto.ko, run the
# KUnit suites (where the kernel has KUnit), the driver kselftests as root
# and as a user of the device's group, the samples on /dev/pto0 against
# the host's sim checksums, the wait benchmark, the stress tests, the
# fuzzer and every vm-*.sh, then unload the module, scan for leaks and
# check the kernel log against the bug detectors' reports.  Prints TAP;
# the host counts top-level lines.
P=/pto
[ -f $P/env ] && . $P/env
export LD_LIBRARY_PATH=$P
export PTO_KO=$P/pto.ko
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
	# a hung test costs its own time, not the whole VM's
	timeout "${PTO_TAP_TIMEOUT:-300}" "$@" >/tmp/out 2>&1
	rc=$?
	cat /tmp/out
	if [ $rc -ne 0 ] && ! grep -qE '^not ok [0-9]+' /tmp/out; then
		ok 1 "$name exited with status $rc"
	fi
}

# The kernel log without timestamps, from line $1 on.
klog_from() {
	dmesg | tail -n "+$1" | sed 's/^\[ *[0-9.]*\] //'
}

# KUnit prints KTAP in the kernel log: a suite per "# Subtest:", its test
# cases one level in ("    ok 1 name"), parameters of a case one level
# deeper, and the suite's own line at the top.  Each test case is counted
# once, as one TAP line here; parameters only through their case's result,
# suites only through a check that they reported as many cases as they
# have.
kunit() {
	[ -f $P/pto_kunit.ko ] || return 0
	echo "# === pto_kunit (KUnit)"
	from=$(($(dmesg | wc -l) + 1))
	insmod $P/pto_kunit.ko
	ok $? "insmod pto_kunit.ko (the KUnit suites run on load)"
	klog_from "$from" >/tmp/ktap
	sed 's/^/# /' /tmp/ktap | grep -E '^# +(#|KTAP|1\.\.)|not ok|Expected|expected|at ' |
		head -n 200
	suite=""
	cases=0
	while IFS= read -r line; do
		case "$line" in
		"    # Subtest: "*)
			suite=${line#    \# Subtest: }
			cases=0
			;;
		"    ok "*|"    not ok "*)
			desc=$(echo "$line" | sed -E 's/^ +(not )?ok [0-9]+ (- )?//')
			cases=$((cases + 1))
			case "$line" in
			*"# SKIP"*) n=$((n + 1)); echo "ok $n - kunit $suite.$desc" ;;
			"    ok "*) ok 0 "kunit $suite.$desc" ;;
			*) ok 1 "kunit $suite.$desc" ;;
			esac
			;;
		"# $suite: pass:"*)
			total=$(echo "$line" | sed -n 's/.*total:\([0-9]*\).*/\1/p')
			[ "$cases" -eq "${total:-0}" ]
			ok $? "kunit $suite: $cases of ${total:-?} cases reported"
			;;
		"not ok "*)
			# a suite that failed without reporting any case
			[ "$cases" -eq 0 ] && ok 1 "kunit: $line"
			;;
		esac
	done </tmp/ktap
	grep -q '# Subtest: pto_' /tmp/ktap
	ok $? "the KUnit suites of pto ran"
	rmmod pto_kunit
	ok $? "rmmod pto_kunit"
}

# The bug detectors' verdict: KMEMLEAK (objects unreferenced for 5 s,
# found by two scans) and every report in the kernel log.
final_checks() {
	if [ -w /sys/kernel/debug/kmemleak ]; then
		sleep 6
		echo scan >/sys/kernel/debug/kmemleak
		echo scan >/sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak >/tmp/leaks
		sed 's/^/# /' /tmp/leaks | head -n 60
		[ ! -s /tmp/leaks ]
		ok $? "kmemleak finds no leak"
	fi
	dmesg >/tmp/dmesg
	if grep -qE -f $P/splat-patterns /tmp/dmesg; then
		grep -E -A15 -f $P/splat-patterns /tmp/dmesg | sed 's/^/# /' |
			head -n 120
		ok 1 "kernel log is clean"
	else
		ok 0 "kernel log is clean"
	fi
}

echo "# guest kernel $(uname -r) $(cat /proc/cmdline)"
insmod $P/pto.ko
ok $? "insmod pto.ko"
[ -c /dev/pto0 ]
ok $? "/dev/pto0 exists"
ls -l /dev/pto0 | grep -q '^crw-rw----'
ok $? "/dev/pto0 has mode 0660"

if [ -f $P/only.sh ]; then
	(cd $P && . $P/only.sh)
	final_checks
	echo "=== vm guest done"
	exit 0
fi

kunit

PTO_TAP_TIMEOUT=900 run_tap pto_driver_test $P/selftests/driver/pto_driver_test
PTO_TAP_TIMEOUT=1200 run_tap pto_hardening_test \
	$P/selftests/driver/pto_hardening_test

# the 0660 node as udev would set it up: group pto; its members use the
# device without privileges (tests needing root skip themselves)
chgrp pto /dev/pto0
ok $? "chgrp pto /dev/pto0"
chmod 0755 $P $P/selftests $P/selftests/driver
run_tap "pto_driver_test as ptouser" \
	su -s /bin/sh ptouser -c "LD_LIBRARY_PATH=$P $P/selftests/driver/pto_driver_test"

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

if [ -x $P/selftests/fuzz/pto_fuzz ]; then
	run_tap pto_fuzz $P/selftests/fuzz/pto_fuzz -t "${PTO_FUZZ_SECONDS:-60}" \
		-s "${PTO_FUZZ_SEED:-14}"
fi

# the longest any core ran with preemption off, over everything above
# (wall-clock time, which TCG inflates by stalling vCPUs for tens of ms;
# natively a section takes about 250 us, the old driver's a whole op)
ns=$(cat /sys/class/pto/pto0/max_section_ns 2>/dev/null)
echo "# longest section with preemption off on pto0: ${ns:-?} ns"
[ -n "$ns" ] && [ "$ns" -lt 1000000000 ]
ok $? "no section ran 1 s or more with preemption off (${ns:-?} ns)"

# last: it unloads and reloads the module
[ -x $P/selftests/driver/pto_stress ] &&
	PTO_TAP_TIMEOUT=1800 run_tap pto_stress $P/selftests/driver/pto_stress

rmmod pto
ok $? "rmmod pto once every context is closed"
[ ! -e /dev/pto0 ]
ok $? "/dev/pto0 is gone after rmmod"

final_checks
echo "=== vm guest done"
