#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Run TAP test programs and total their results.
#   scripts/run-tests.sh [-l LABEL] PROG...
# Each program's "ok"/"not ok" lines are counted; a program that exits
# non-zero, or times out, without reporting a failure counts one failure.
# Totals are appended to $PTO_RESULTS (if set) as "passed failed skipped".
set -u

label=tests
if [ "${1:-}" = "-l" ]; then label=$2; shift 2; fi
timeout_s=${PTO_TEST_TIMEOUT:-600}
pass=0 fail=0 skip=0
failed_progs=""
for prog in "$@"; do
	out=$(mktemp)
	timeout -k 10 "$timeout_s" "$prog" >"$out" 2>&1
	rc=$?
	# nested (indented) TAP is for reading only; count top-level lines
	p=$(grep -cE '^ok [0-9]+' "$out"); s=$(grep -cE '^ok [0-9]+.*# *SKIP' "$out")
	f=$(grep -cE '^not ok [0-9]+' "$out")
	p=$((p - s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $prog exited with status $rc" >>"$out"
	fi
	if [ "$f" -ne 0 ]; then
		failed_progs="$failed_progs $prog"
		echo "==== $prog (exit $rc)"
		cat "$out"
	else
		echo "  $prog: $p passed, $s skipped"
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	rm -f "$out"
done
[ -n "$failed_progs" ] && echo "failed:$failed_progs"
echo "$label: $pass passed, $fail failed, $skip skipped"
[ -n "${PTO_RESULTS:-}" ] && echo "$pass $fail $skip" >>"$PTO_RESULTS"
[ "$fail" -eq 0 ]
