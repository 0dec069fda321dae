#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A device removed in the middle of a run, inside the VM harness (run as
# root with O set to the build tree): pto_run() fails with -ENODEV and
# ptorun exits 1 saying why, instead of its scheduler waiting for ever
# for completions that cannot come (and spinning on a wait that returns
# at once, SIGTERM unable to end it).
set -u
O=${O:-build}
PTORUN=$O/tools/ptorun
SO=$O/samples/bgemm_builtin.so
DEV=7
n=0
failed=0
out=/tmp/vm-device-lost.$$

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

wait_for() {	# TRIES COMMAND...: poll every 0.1 s
	tries=$1
	shift
	while [ "$tries" -gt 0 ]; do
		"$@" && return 0
		tries=$((tries - 1))
		sleep 0.1
	done
	return 1
}

gone() {	# the process has exited (zombies count)
	st=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ]
}

if [ ! -w /sys/class/pto/new_device ] || [ ! -x "$PTORUN" ] ||
   [ ! -f "$SO" ]; then
	echo "1..1"
	echo "ok 1 # SKIP needs root, pto.ko, $PTORUN and $SO"
	exit 0
fi
echo "1..3"
echo $DEV >/sys/class/pto/del_device 2>/dev/null	# leftovers
echo $DEV >/sys/class/pto/new_device	# the load-time core counts
wait_for 50 test -c /dev/pto$DEV
ok $? "/dev/pto$DEV made for the test"

PTO_HEAP_SIZE=4194304 PTO_TASK_WINDOW=1024 "$PTORUN" -d /dev/pto$DEV \
	-r 100000 "$SO" </dev/null >"$out" 2>&1 &
pid=$!
wait_for 600 grep -q 'run 2 of' "$out"
echo $DEV >/sys/class/pto/del_device
# a run's tasks take milliseconds: 30 s is a hang
wait_for 300 gone $pid
exited=$?
if [ $exited -ne 0 ]; then
	kill -9 $pid 2>/dev/null
	echo "# ptorun still running 30 s after the device went away"
fi
wait $pid
rc=$?
sed 's/^/# /' "$out" | tail -n 5
ok $exited "ptorun ends after its device is removed mid-run"
[ $rc -eq 1 ] && grep -q 'device went away' "$out" &&
	grep -q 'No such device' "$out"
ok $? "it exits 1 saying the device went away (-ENODEV), status $rc"
rm -f "$out"
[ $failed -eq 0 ]
