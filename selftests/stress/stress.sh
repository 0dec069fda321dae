#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make stress: the stress driver (selftests/stress/stress.c) under a
# watchdog.  The driver rewrites a heartbeat file before every run; when
# it has not changed for STRESS_IDLE seconds (20), the run is hung: the
# watchdog prints the iteration's seed, every thread's stack (gdb), the
# runtime's window and scheduler state (the driver's SIGUSR1 dump) and
# libpto's log, kills the driver and fails.  Output is TAP.
#
#   STRESS_SECONDS=N   time budget (60)
#   STRESS_SEED=S      first seed; a failing iteration's seed with
#                      STRESS_ITERS=1 replays it alone
#   STRESS_SCHED=thread|workers, STRESS_ITERS, STRESS_STALL_MS,
#   STRESS_WEDGE=1     see stress.c
set -u
cd "$(dirname "$0")/../.."
O=${O:-build}
driver=${STRESS_DRIVER:-$O/selftests/stress/stress}
idle_limit=${STRESS_IDLE:-20}
dir=$(mktemp -d /tmp/pto-stress.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export STRESS_SECONDS="${STRESS_SECONDS:-60}"
export STRESS_LOG="$dir/log" STRESS_HEARTBEAT="$dir/beat"

[ -x "$driver" ] || { echo "Bail out! no $driver (make first)"; exit 2; }

# (the subshell's stderr closed: no "Killed" from it when the watchdog bites)
( "$driver" & echo $! >"$dir/pid"; exec 2>/dev/null; wait $!
  echo $? >"$dir/rc" ) &

# Everything the watchdog knows about a hung driver, then kill it.
dump() {
	pid=$1
	echo "not ok 1 - watchdog: no run finished for $idle_limit s"
	echo "# at run $(cat "$dir/beat" 2>/dev/null)"
	echo "# every thread's stack:"
	if command -v gdb >/dev/null; then
		timeout 60 gdb -p "$pid" -batch -ex 'set pagination off' \
			-ex 'thread apply all bt' 2>&1 | sed 's/^/#   /'
	else
		echo "#   gdb is not installed (scripts/deps.sh check)"
	fi
	kill -USR1 "$pid"
	# the dump is written by the driver's handler: wait for its end mark
	n=0
	while [ $n -lt 50 ] && ! grep -q '^stress: dumped' "$dir/log"; do
		sleep 0.1; n=$((n + 1))
	done
	echo "# libpto's log and the runtime's state (last 200 lines):"
	tail -n 200 "$dir/log" | sed 's/^/#   /'
	kill -KILL "$pid"
	wait
	echo "1..1"
	exit 1
}

# Poll the heartbeat once a second; the budget is the driver's own.
last="" idle=0
while [ ! -f "$dir/rc" ]; do
	sleep 1
	[ -f "$dir/rc" ] && break
	beat=$(cat "$dir/beat" 2>/dev/null)
	if [ "$beat" != "$last" ]; then
		last=$beat idle=0
		continue
	fi
	idle=$((idle + 1))
	[ $idle -ge "$idle_limit" ] && dump "$(cat "$dir/pid")"
done
wait
rc=$(cat "$dir/rc")
if [ "$rc" -ne 0 ]; then
	# a crash (or a sanitizer's report) is in the log, not on stdout
	echo "# the driver exited with status $rc at run $(cat "$dir/beat")"
	echo "# libpto's log ends:"
	tail -n 50 "$dir/log" | sed 's/^/#   /'
fi
exit "$rc"
