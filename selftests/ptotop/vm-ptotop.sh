#!/bin/sh
# SPDX-License-Identifier: MIT
#
# ptotop against a real /dev/pto0 client, inside the VM harness (run with
# O set to the build tree and /dev/pto0 present; busybox sh, no python).
# A load generator runs on the device; ptotop -b --json must list it on
# pto0 with counters that advance, from the driver's fdinfo and sysfs.
set -u
O=${O:-build}
PTOTOP=$O/tools/ptotop
LOADGEN=$O/selftests/ptotop/pto_loadgen
n=0
failed=0
tmp=/tmp/vm-ptotop.$$

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

num() {		# FIELD LINE: first numeric value of "FIELD": in LINE
	echo "$2" | sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" | head -n 1
}

if [ ! -c /dev/pto0 ] || [ ! -x "$PTOTOP" ] || [ ! -x "$LOADGEN" ]; then
	echo "1..1"
	echo "ok 1 # SKIP needs /dev/pto0, $PTOTOP and $LOADGEN"
	exit 0
fi
mkdir -p "$tmp/stats"
# the guest has no /dev/shm; stats pages go to a private directory
export PTO_STATS_DIR="$tmp/stats"
for a in cores contexts tasks_done tasks_failed busy_ns mem_used mem_total; do
	echo "# sysfs $a: $(cat /sys/class/pto/pto0/$a 2>&1)"
done

# small rings and heap: zeroing the default 256 MiB is slow under TCG
PTO_DEVICE=/dev/pto0 PTO_HEAP_SIZE=4194304 PTO_ARENA_SIZE=1048576 \
	PTO_TASK_WINDOW=1024 "$LOADGEN" -t 120 -n 64 -s 20000 -p 5 \
	>"$tmp/loadgen.out" 2>&1 &
lg=$!
listed() {
	"$PTOTOP" -j -n 1 -p "$lg" 2>/dev/null | grep -q '"device":"pto0"'
}
# the client exists from open(); tasks complete once SETUP is done
working() {
	"$PTOTOP" -j -n 1 -p "$lg" 2>/dev/null |
		grep -q '"device":"pto0".*"tasks_completed":[1-9]'
}
wait_for 300 listed
ok $? "pid $lg running on /dev/pto0 is listed by ptotop"
wait_for 300 working
ok $? "its tasks complete on the device"

"$PTOTOP" -b -n 2 -d 0.5 --json -p "$lg" >"$tmp/run.json" 2>"$tmp/run.err"
ok $? "ptotop -b -n 2 -d 0.5 --json -p $lg exits 0"
[ "$(grep -c '^{' "$tmp/run.json")" -eq 2 ]
ok $? "two JSON documents"
one=$(sed -n 1p "$tmp/run.json")
two=$(sed -n 2p "$tmp/run.json")
echo "$two" | cut -c 1-600 | sed 's/^/# /'

echo "$one" | grep -q "\"pid\":$lg," && echo "$two" | grep -q "\"pid\":$lg," &&
	echo "$two" | grep -q '"device":"pto0"' &&
	echo "$two" | grep -q '"sources":\[[^]]*"fdinfo"' &&
	echo "$two" | grep -q '"client_id":[0-9]'
ok $? "both iterations list it on pto0 from fdinfo, with a client id"

echo "$two" | grep -q '"sources":\["statspage","fdinfo"\]'
ok $? "its stats page is merged into the fdinfo row"
echo "$two" | grep -q '"task_rings":\[{"ring":0,"scope_depth":0,"and_deeper":false,"used":true,'
ok $? "the page brings its task rings, ring 0 used"

c1=$(num tasks_completed "$one")
c2=$(num tasks_completed "$two")
echo "# tasks_completed $c1 -> $c2"
[ -n "$c1" ] && [ -n "$c2" ] && [ "$c2" -gt "$c1" ]
ok $? "tasks completed advance between iterations"

echo "$two" | grep -q '"name":"pto0","kind":"pto","cores":{"cube":[1-9]'
ok $? "device pto0 is listed with its cores"
echo "$two" | grep -q '"name":"pto0"[^]]*"utilisation":{"cube":[0-9]'
ok $? "device pto0 has a utilisation in the second iteration"
total=$(cat /sys/class/pto/pto0/mem_total)
used=$(echo "$two" |
	sed -n 's/.*"name":"pto0"[^]]*"memory_used_bytes":\([0-9]*\).*/\1/p')
echo "$two" | grep -q "\"name\":\"pto0\"[^]]*\"memory_total_bytes\":$total[,}]" &&
	[ "${used:-0}" -ge $((4 << 20)) ]
ok $? "device pto0's memory: used (${used:-none}) holds the 4 MiB heap, total is max_memory's $total"

"$PTOTOP" -b -n 1 -D pto0 >"$tmp/run.txt" 2>&1
grep -Eq "^ *$lg +[^ ]+ +pto0 " "$tmp/run.txt"
ok $? "text output shows pid $lg on pto0"
"$PTOTOP" -b -R -n 1 -p "$lg" >"$tmp/rings.txt" 2>&1
grep -q '^        0    task window  *1024 ' "$tmp/rings.txt"
ok $? "-R shows its task rings (ring 0: 1024 slots)"

kill -TERM "$lg"
if wait_for 150 gone "$lg"; then
	wait "$lg"
	ok $? "load generator exits cleanly"
else
	kill -KILL "$lg"
	ok 1 "load generator exits cleanly (ignored SIGTERM)"
fi
sed 's/^/# loadgen: /' "$tmp/loadgen.out" | tail -n 5
"$PTOTOP" -j -n 1 -p "$lg" | grep -q '"processes":\[\]'
ok $? "an exited client is no longer listed"

rm -rf "$tmp"
echo "1..$n"
[ "$failed" -eq 0 ]
