#!/bin/sh
# SPDX-License-Identifier: MIT
#
# ptorun's command line (TAP): every option value that is empty, negative,
# too large, out of libpto's range or followed by other characters exits 2
# with a message naming the option and its range, before anything is
# loaded; the values at each end of a range are accepted; and a write error
# on standard output (--help, --version, a run, all into /dev/full) exits 1
# with a message.  The samples' own test (samples/test-samples.sh) runs
# them through ptorun.
#
# Installed as $(O)/tools/test-ptorun next to ptorun; PTORUN overrides.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
PTORUN=${PTORUN:-$dir/ptorun}
SO=$dir/../samples/bgemm.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# accepted options then fail to load this (exit 1): nothing runs
none=$tmp/no-such-orchestration.so
n=0
fails=0
export PTO_STATS=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}

# Until PATTERN is in FILE, which a background ptorun writes: at most 20 s.
wait_for() {
	i=0
	while [ $i -lt 200 ] && ! grep -q "$1" "$2"; do
		sleep 0.1
		i=$((i + 1))
	done
}

skip() {
	n=$((n + 1))
	echo "ok $n # SKIP $1"
}

# Is FILE complete JSON (a trace cut short is not)?
valid_json() {
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" \
		2>/dev/null
}

# The small sample run the signal checks stop: [PREFIX...] ptorun
# --trace $tmp/NAME.json, its output in $tmp/NAME, in the background
# (pid), once its second run has started.
start_traced() {
	name=$1
	shift
	"$@" "$PTORUN" --repeat 100000 --trace "$tmp/$name.json" "$SO" \
		batch=4 m=4 n=4 k=4 tile=64 </dev/null >"$tmp/$name" 2>&1 &
	pid=$!
	wait_for 'run 2 of' "$tmp/$name"
}

# ptorun ARGS... with stdout and stderr in $tmp/out and $tmp/err
# (the helpers below keep their status in st: rc is their callers')
run() {
	timeout -k 5 30 "$PTORUN" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
}

# refused OPTION VALUE WANT: exit 2, and a message naming OPTION, the value
# and WANT (the range), then the --help hint
refused() {
	run "$1" "$2" "$none"
	st=$?
	if [ $st -eq 2 ] &&
	   grep -qF -- "ptorun: invalid $1/" "$tmp/err" &&
	   grep -qF -- "'$2': expected" "$tmp/err" &&
	   grep -qF -- "$3" "$tmp/err" &&
	   grep -q "^Try 'ptorun --help'" "$tmp/err"; then
		return 0
	fi
	echo "# ptorun $1 '$2': exit $st"
	sed 's/^/# /' "$tmp/err"
	return 1
}

# accepted OPTION VALUE: the value passes, so loading $none fails (exit 1)
accepted() {
	run "$1" "$2" "$none"
	st=$?
	[ $st -eq 1 ] && grep -q 'cannot load' "$tmp/err" && return 0
	echo "# ptorun $1 '$2': exit $st"
	sed 's/^/# /' "$tmp/err"
	return 1
}

echo "# ptorun: $PTORUN"
if [ ! -x "$PTORUN" ]; then
	echo "Bail out! $PTORUN not built"
	exit 1
fi

# ---- --cores ------------------------------------------------------------------
rc=0
for v in "" "," "cube=1," ",cube=1" "cube=1,,vector=1" "cube" "cube=" "=1" \
	 "gpu=1" "cube=-1" "cube=1x" "cube= 1" "cube=257" \
	 "cube=99999999999999999999" "cube=0,vector=0,aicpu=0,accel=0" \
	 "cube=1,cube=2" "vector=1,cube=1,vector=0"; do
	refused -c "$v" "each at most once, N from 0 to 256" || rc=1
done
ok $rc "-c: empty, malformed, out of range, a type twice and no core at all exit 2"
rc=0
for v in "cube=256" "cube=0" "cube=1,vector=0,aicpu=0,accel=0" "accel=0x10"; do
	accepted -c "$v" || rc=1
done
ok $rc "-c: 0 to 256 cores per type are accepted"

# getopt's own refusals speak as ptorun, not as the path it was run by
run --no-such-option "$none"
st=$?
[ $st -eq 2 ] && grep -q "^ptorun: unrecognized option '--no-such-option'" \
	"$tmp/err"
ok $? "an unknown option exits 2 with 'ptorun: unrecognized option' (exit $st)"

# ---- --task-window ----------------------------------------------------------
refused -w 1 "a power of two from 4 to 16777216"
ok $? "-w 1 (below the minimum of 4) exits 2 naming the minimum"
rc=0
for v in 2 0 12 33554432 -4 " 8" 8x 010 0x "" 99999999999999999999; do
	refused -w "$v" "a power of two from 4 to 16777216" || rc=1
done
ok $rc "-w: not a power of two in [4, 2^24], negative, garbage exit 2"
rc=0
for v in 4 16777216 0x10; do
	accepted -w "$v" || rc=1
done
ok $rc "-w 4, 16777216 and 0x10 are accepted"

# ---- sizes and counts ---------------------------------------------------------
# each option: its range in the message, then values below and above it
while IFS='|' read -r opt want low high; do
	rc=0
	for v in "$low" "$high" -1 " -1" +16 "" 16x 99999999999999999999 \
		 0x 18446744073709551616; do
		refused "$opt" "$v" "$want" || rc=1
	done
	ok $rc "$opt: out of range, negative, empty, garbage, overflow exit 2"
done <<EOF
-H|bytes from 4K to 1T|4095|1025G
-A|bytes from 1 to 1T|0|1025G
-D|entries from 16 to 1073741822|15|1073741823
-T|entries from 16 to 1073741824|15|1073741825
-s|milliseconds from 1 to 4294967295|0|4294967296
-r|a count from 1 to|0|18446744073709551616
EOF
rc=0
for ov in "-H 4K" "-H 1024G" "-H 1T" "-H 64KiB" "-H 64kib" "-H 1Tb" "-H 256MB" \
	  "-A 1" "-A 1T" "-D 16" \
	  "-D 1073741822" "-T 16" "-T 1073741824" "-s 1" "-s 4294967295" \
	  "-r 1" "-r 0x10"; do
	# shellcheck disable=SC2086
	accepted $ov || rc=1
done
ok $rc "the values at both ends of each range, and each suffix form, are accepted"
rc=0
for v in 17179869184G 12Q 4KK 4KiBx 4 K "4 K" "1 " "8K " "0x 10" 0x-1 \
	 0x0x1000; do
	refused -H "$v" "bytes from 4K to 1T" || rc=1
done
ok $rc "-H: a size that overflows, a bad suffix, a blank or 0x0x exits 2"
rc=0
for ov in "-w 4,8,4,4" "-w 16,32" "-H 64K,1M" "-D 16,32,64,128" "-T 16,16"; do
	# shellcheck disable=SC2086
	accepted $ov || rc=1
done
ok $rc "ring size lists as the PTO_* variables take them are accepted"
rc=0
for v in "4,,8" ",4" "4," "4,8,16,32,64" "4,3" "4,8x"; do
	refused -w "$v" "or up to 4 such values separated by commas" || rc=1
done
ok $rc "-w: an empty item, more than 4, or a bad one in a list exits 2"

# ---- strings ------------------------------------------------------------------
refused -d "" "sim or a device node" && refused -t "" "a file name"
ok $? "an empty -d or -t exits 2"

run ""
st=$?
[ $st -eq 2 ] && grep -qF "ORCH.so is an empty string" "$tmp/err" &&
	grep -q "^Try 'ptorun --help'" "$tmp/err"
rc=$?
[ $rc -eq 0 ] || { echo "# ptorun '': exit $st"; sed 's/^/# /' "$tmp/err"; }
ok $rc "an empty ORCH.so exits 2, naming it"

# ---- a ring size option is every ring's, whatever PTO_* lists say ----------
if [ -f "$SO" ]; then
	PTO_TASK_WINDOW=16,4096 PTO_HEAP_SIZE=1M,2M timeout 60 "$PTORUN" -q -S \
		-w 8 -H 64K "$SO" </dev/null >"$tmp/out" 2>&1
	rc=$?
	# every ring the run used: the same sizes, none from the lists
	w=$(grep -E '^ +[0-9]+ +task window' "$tmp/out" |
		grep -vc 'task window  *8 ')
	h=$(grep -E '^ +[0-9]+ +heap ring' "$tmp/out" |
		grep -vc 'heap ring  *65536 ')
	[ $rc -eq 0 ] && grep -q 'task window' "$tmp/out" &&
		[ "$w" -eq 0 ] && [ "$h" -eq 0 ]
	ok $? "-w and -H set every ring over a PTO_* list (exit $rc; $w and $h rings other)"

	# the list a deadlock report advises works as an option value
	# (the sample submits at depths 2 and 3: the stats list those rings)
	timeout 60 "$PTORUN" -q -S -w 16,32,64 -H 64K,1M,2M,4M "$SO" \
		</dev/null >"$tmp/out" 2>&1
	rc=$?
	sizes=$(grep -E '^ +[0-9]+ +(task window|heap ring)' "$tmp/out" |
		awk '{ print $1 ":" $4 }' | sort | tr '\n' ' ')
	echo "# ring:size $sizes"
	[ $rc -eq 0 ] && [ "$sizes" = "2:2097152 2:64 3:4194304 3:64 " ]
	ok $? "-w 16,32,64 -H 64K,1M,2M,4M: each ring its value, the last one repeated (exit $rc)"
else
	skip "$SO not built"
fi

# ---- a signal: exit 128+N, and the lines printed so far are out -----------
if [ -f "$SO" ]; then
	"$PTORUN" --repeat 1000 "$SO" batch=16 m=8 n=8 k=16 tile=64 \
		</dev/null >"$tmp/sig" 2>&1 &
	pid=$!
	# the init line reaches the file while the runs go on
	wait_for 'tasks per run' "$tmp/sig"
	seen=$(grep -c 'tasks per run' "$tmp/sig")
	kill -TERM $pid
	wait $pid
	rc=$?
	[ "$seen" -eq 1 ] && [ $rc -eq 143 ]
	ok $? "SIGTERM mid-run: exit 143, init's line already written (exit $rc, $seen line)"

	# SIGINT with a trace: the run is cancelled, the trace completed
	# (a background job starts with SIGINT ignored: not this one)
	start_traced sigint env --default-signal=INT
	kill -INT $pid
	wait $pid
	rc=$?
	grep -q 'Interrupt: run [0-9]* of 100000 cancelled' "$tmp/sigint" &&
		grep -q '^ptorun: stopping once the tasks on a core have finished (a second signal ends ptorun at once)' "$tmp/sigint"
	said=$?
	valid_json "$tmp/sigint.json"
	json=$?
	[ $rc -eq 130 ] && [ $said -eq 0 ] && [ $json -eq 0 ]
	ok $? "SIGINT mid-run: the run is cancelled, exit 130, the trace is complete JSON (exit $rc, said $said, json $json)"

	# timeout(1) sends SIGTERM to ptorun and then to its process group:
	# the same signal from the same process again, which must not cut
	# the clean stop short.  Sent here once the first has cancelled the
	# run, so that it lands while ptorun finishes (fini, the trace).
	start_traced twice
	kill -TERM $pid
	wait_for 'pto_run: cancelled' "$tmp/twice"
	kill -TERM $pid 2>/dev/null
	wait $pid
	rc=$?
	grep -q 'Terminated: run [0-9]* of 100000 cancelled' "$tmp/twice"
	said=$?
	valid_json "$tmp/twice.json"
	json=$?
	[ $rc -eq 143 ] && [ $said -eq 0 ] && [ $json -eq 0 ]
	ok $? "SIGTERM twice from one sender (as timeout sends it): exit 143, the trace is complete JSON (exit $rc, said $said, json $json)"
	rc=0
	for i in 1 2 3; do
		timeout --preserve-status 0.5 "$PTORUN" --repeat 100000 \
			--trace "$tmp/to.json" "$SO" batch=4 m=4 n=4 k=4 \
			tile=64 </dev/null >"$tmp/to" 2>&1
		st=$?
		valid_json "$tmp/to.json" &&
			grep -q 'Terminated: run [0-9]* of 100000 cancelled' \
				"$tmp/to" && [ $st -eq 143 ] ||
			{ echo "# timeout run $i: exit $st"; rc=1; }
	done
	ok $rc "timeout 0.5 ptorun: exit 143 and a complete trace, three times"
else
	skip "$SO not built"
	skip "$SO not built"
	skip "$SO not built"
	skip "$SO not built"
fi

# ---- write errors on standard output ----------------------------------------
if [ -w /dev/full ]; then
	for a in --help --version; do
		timeout 30 "$PTORUN" $a >/dev/full 2>"$tmp/err"
		rc=$?
		[ $rc -eq 1 ] &&
			grep -q '^ptorun: error writing standard output: ' "$tmp/err"
		ok $? "ptorun $a >/dev/full exits 1 with a message (exit $rc)"
	done
	if [ -f "$SO" ]; then
		timeout 60 "$PTORUN" "$SO" </dev/null >/dev/full 2>"$tmp/err"
		rc=$?
		[ $rc -eq 1 ] &&
			grep -q '^ptorun: error writing standard output: No space' \
				"$tmp/err"
		ok $? "a run into /dev/full exits 1 with a message (exit $rc)"
		timeout 60 "$PTORUN" -q -t /dev/full "$SO" </dev/null \
			>/dev/null 2>"$tmp/err"
		rc=$?
		[ $rc -eq 1 ] &&
			grep -q '^ptorun: writing the trace failed; it is incomplete: No space' \
				"$tmp/err" &&
			[ "$(grep -c 'incomplete' "$tmp/err")" = 1 ]
		ok $? "a trace into /dev/full exits 1 with one message (exit $rc)"
	else
		skip "$SO not built"
		skip "$SO not built"
	fi
else
	skip "no /dev/full"
	skip "no /dev/full"
	skip "no /dev/full"
	skip "no /dev/full"
fi
# ---- standard output or error closed: nothing else goes into them --------
if [ -f "$SO" ]; then
	# the trace file would be the lowest free descriptor: 1
	timeout 60 "$PTORUN" -t "$tmp/closed1.json" "$SO" </dev/null \
		2>"$tmp/err" >&-
	rc=$?
	valid_json "$tmp/closed1.json"
	json=$?
	[ $rc -eq 1 ] && [ $json -eq 0 ] &&
		grep -q 'error writing standard output' "$tmp/err"
	ok $? "standard output closed, with a trace: exit 1, the trace is complete JSON (exit $rc, json $json)"
	# and 2, where libpto says why a run fails (an OUTPUT too large)
	timeout 60 "$PTORUN" -q -H 4K -t "$tmp/closed2.json" "$SO" \
		</dev/null >/dev/null 2>&-
	rc=$?
	valid_json "$tmp/closed2.json"
	json=$?
	[ $rc -eq 1 ] && [ $json -eq 0 ]
	ok $? "standard error closed, a run that fails, with a trace: exit 1, the trace is complete JSON (exit $rc, json $json)"
else
	skip "$SO not built"
	skip "$SO not built"
fi

# an object without the entry (libpto itself): say what C++ needs for it
if [ -f "$dir/../libpto.so" ]; then
	"$PTORUN" "$dir/../libpto.so" </dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] &&
		grep -q 'does not export pto_orchestration_entry (one defined in C++ needs C linkage' \
			"$tmp/err"
	ok $? "an object without the entry: exit 1, naming C linkage (exit $rc)"
else
	skip "libpto.so not built"
fi

# libpto's codes whose strerror() misleads are said as libpto means them
if [ -f "$SO" ]; then
	timeout 60 "$PTORUN" -q -H 4K "$SO" </dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 1 ] &&
		grep -q 'failed: a task or buffer larger than its ring can hold (E2BIG, -7)' "$tmp/err" &&
		! grep -q 'Argument list too long' "$tmp/err"
	ok $? "-E2BIG is reported as a task too large for its ring, not 'Argument list too long' (exit $rc)"
else
	skip "$SO not built"
fi

# a deadlock's advice names PTO_* variables, which -w overrides: say so,
# and not when the sizes came from the variables
if [ -f "$SO" ]; then
	PTO_STALL_TIMEOUT_MS=200 timeout 60 "$PTORUN" -q -w 4 "$SO" tile=16 \
		kgroup=4 </dev/null >/dev/null 2>"$tmp/err"
	rc=$?
	PTO_STALL_TIMEOUT_MS=200 PTO_TASK_WINDOW=4 timeout 60 "$PTORUN" -q \
		"$SO" tile=16 kgroup=4 </dev/null >/dev/null 2>"$tmp/err2"
	rc2=$?
	[ $rc -eq 1 ] && [ $rc2 -eq 1 ] &&
		grep -q 'PTO_TASK_WINDOW=' "$tmp/err" &&
		grep -q '^ptorun: ring sizes given with -w override the PTO_\* variables' "$tmp/err" &&
		! grep -q 'ring sizes given with' "$tmp/err2"
	ok $? "a deadlock under -w says the option overrides the advised PTO_TASK_WINDOW (exit $rc, $rc2)"

	# A reader that goes away (| head -1) or a file size limit stops
	# ptorun as a write error, after fini and the trace's end, rather
	# than killing it by SIGPIPE or SIGXFSZ.
	rc=$( (timeout 60 "$PTORUN" -t "$tmp/pipe.json" -r 100000 "$SO" \
		2>"$tmp/err"; echo $? >"$tmp/rc") | head -1 >/dev/null
		cat "$tmp/rc")
	[ "$rc" = 1 ] && valid_json "$tmp/pipe.json" &&
		grep -q 'stopping after run [0-9]* of 100000: standard output cannot be written' "$tmp/err" &&
		grep -q 'error writing standard output: Broken pipe' "$tmp/err"
	ok $? "| head -1: exit 1, no further runs, the trace complete (exit $rc)"
	rc=$( (ulimit -f 8; timeout 60 "$PTORUN" -q -t "$tmp/fsz.json" -r 20 \
		"$SO" >/dev/null 2>"$tmp/err"; echo $?))
	[ "$rc" = 1 ] && grep -q 'trace failed.*File too large' "$tmp/err"
	ok $? "ulimit -f: the trace's write error is said, exit 1 (exit $rc)"
else
	skip "$SO not built"
fi

"$PTORUN" --help >"$tmp/help" 2>"$tmp/err" && [ ! -s "$tmp/err" ] &&
	grep -q -- '--task-window' "$tmp/help"
ok $? "ptorun --help into a file exits 0, quietly"

echo "1..$n"
[ "$fails" -eq 0 ]
