#!/bin/sh
# SPDX-License-Identifier: MIT
#
# TAP test of ptorun and the samples.  Installed as $(O)/samples/test-samples
# and finds ptorun and the .so files from its own location, so the same
# script serves build/, build/asan and build/tsan.
#
# Every sample runs through ptorun in several configurations (defaults,
# task windows of 8 and 16, a small heap, small dependency and TensorMap
# pools, one core per type, many cores, all tiny at once, repeated runs)
# and must print PASS with exit status 0; the checksum a sample prints must
# be the same in every configuration.  The samples' other data layouts
# (layout=rowmajor: 2-D tile views; layout=ranges) run in the cheaper
# configurations and must print the default layout's checksums.  Then
# ptorun's own behaviour: --help, --version, usage errors, a missing
# object, a run that cannot fit its window, --trace and --stats.
set -u

here=$(cd "$(dirname "$0")" && pwd)
O_DIR=$(dirname "$here")
PTORUN=$O_DIR/tools/ptorun
SO=$here
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
RUN_TIMEOUT=${PTO_SAMPLE_TIMEOUT:-300}

n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	[ -n "${2:-}" ] && [ -f "$2" ] && sed -e 's/^/# /' "$2" | tail -40
}

# run OUT ARGS...: ptorun ARGS with stdout+stderr in OUT; returns rc
run() {
	out=$1
	shift
	timeout -k 10 "$RUN_TIMEOUT" "$PTORUN" "$@" </dev/null >"$out" 2>&1
}

# The configurations every sample must pass, as "name|ptorun options".
CONFIGS='default|
window8|--task-window 8
window16|--task-window 16
smallheap|--heap-size 64K
smallpools|--dep-pool 64 --tensormap-pool 64
cores1|--cores cube=1,vector=1,aicpu=1,accel=1
manycores|--cores cube=8,vector=8,aicpu=4,accel=4
tiny|--task-window 8 --heap-size 64K --cores cube=1,vector=1,aicpu=1,accel=1
repeat|--repeat 3 --quiet'

# The samples with their arguments: the defaults, except BGEMM with more,
# smaller tiles (a quarter of the flops, twice the tasks: the sanitizer
# builds are slow), and the f32 tree over a length that does not split
# evenly.  The BGEMM defaults run once below.
SAMPLES='bgemm|tile=32 k=8
bgemm_builtin|tile=32 k=8
paged_attention|
paged_attention_builtin|
tree_reduce|
tree_reduce|type=f32 n=300001 leaf=1000'

# check_run DESC OUT RC: exit 0, at least one PASS, no FAIL
check_run() {
	desc=$1 out=$2 rc=$3
	if [ "$rc" -ne 0 ]; then
		not_ok "$desc (exit $rc)" "$out"
	elif ! grep -q ': PASS$' "$out" || grep -q ': FAIL$' "$out"; then
		not_ok "$desc (no PASS, or a FAIL)" "$out"
	else
		ok "$desc"
	fi
}

# One sample with its arguments in every configuration, then the checksum
# comparison.  Here-documents, not pipes, keep the counters in this shell.
run_sample() {
	sample=$1 args=$2
	so=$SO/$sample.so
	sums=$TMP/sums
	: >"$sums"
	while IFS='|' read -r cname copts; do
		# shellcheck disable=SC2086 # options and args split on purpose
		run "$TMP/out" $copts "$so" $args
		check_run "$sample $args [$cname]" "$TMP/out" $?
		grep -o 'checksum: [0-9a-f]\{16\}' "$TMP/out" | tr '\n' ' ' \
			>>"$sums"
		echo >>"$sums"
	done <<EOF
$CONFIGS
EOF
	# the first run's checksums: what the other layouts must print
	[ -f "$TMP/ref.$sample" ] || head -1 "$sums" >"$TMP/ref.$sample"
	if [ "$(sort -u "$sums" | wc -l)" -eq 1 ] &&
	   grep -q 'checksum' "$sums"; then
		ok "$sample $args: same checksums in every configuration"
	else
		not_ok "$sample $args: checksums differ between configs" \
			"$sums"
	fi
}

while IFS='|' read -r sample args; do
	run_sample "$sample" "$args"
done <<EOF
$SAMPLES
EOF

# The layouts other than tiled, with the sample's first arguments above,
# in the configurations that reach their corners: the smallest windows,
# heap and core counts.  Same checksums as the tiled layout.
LAYOUT_CONFIGS=$(echo "$CONFIGS" |
	grep -E '^(default|window8|smallheap|cores1|tiny)[|]')
LAYOUTS='bgemm|tile=32 k=8|rowmajor
bgemm|tile=32 k=8|ranges
bgemm_builtin|tile=32 k=8|rowmajor
paged_attention||rowmajor
paged_attention_builtin||rowmajor'

run_layout() {
	sample=$1 args=$2 layout=$3
	sums=$TMP/sums
	: >"$sums"
	while IFS='|' read -r cname copts; do
		# shellcheck disable=SC2086 # options and args split on purpose
		run "$TMP/out" $copts "$SO/$sample.so" $args layout=$layout
		check_run "$sample ${args:+$args }layout=$layout [$cname]" \
			"$TMP/out" $?
		grep -o 'checksum: [0-9a-f]\{16\}' "$TMP/out" | tr '\n' ' ' \
			>>"$sums"
		echo >>"$sums"
	done <<EOF
$LAYOUT_CONFIGS
EOF
	if [ "$(cat "$sums" "$TMP/ref.$sample" | sort -u | wc -l)" -eq 1 ] &&
	   grep -q 'checksum' "$sums"; then
		ok "$sample layout=$layout: the tiled layout's checksums"
	else
		echo "# tiled: $(cat "$TMP/ref.$sample")"
		not_ok "$sample layout=$layout: checksums differ from tiled" \
			"$sums"
	fi
}

while IFS='|' read -r sample args layout; do
	run_layout "$sample" "$args" "$layout"
done <<EOF
$LAYOUTS
EOF

for s in bgemm bgemm_builtin; do
	run "$TMP/out" "$SO/$s.so"
	check_run "$s with its default sizes" "$TMP/out" $?
done

# Ragged multi-block sequences need a bigger window than one block per
# sequence: run them with the defaults and with one core per type.
# Both layouts, with the same checksums.
for copts in "" "--cores cube=1,vector=1,aicpu=1,accel=1"; do
	for s in paged_attention paged_attention_builtin; do
		for layout in tiled rowmajor; do
			# shellcheck disable=SC2086
			run "$TMP/out" $copts "$SO/$s.so" case=CaseVarLen \
				layout=$layout
			check_run "$s case=CaseVarLen layout=$layout [${copts:-default}]" \
				"$TMP/out" $?
			grep -o 'checksum: [0-9a-f]\{16\}' "$TMP/out" \
				>"$TMP/varlen.$layout"
		done
		if [ -s "$TMP/varlen.tiled" ] &&
		   cmp -s "$TMP/varlen.tiled" "$TMP/varlen.rowmajor"; then
			ok "$s case=CaseVarLen [${copts:-default}]: same checksum in both layouts"
		else
			not_ok "$s case=CaseVarLen [${copts:-default}]: checksums differ between layouts"
		fi
	done
done

# --help and the man page name the same options.
if run "$TMP/help" --help && grep -q -- '--task-window' "$TMP/help"; then
	ok "ptorun --help exits 0 and lists the options"
else
	not_ok "ptorun --help" "$TMP/help"
fi
# the source tree: the current directory, or above the build tree
man=tools/ptorun/ptorun.1
d=$O_DIR
while [ ! -f "$man" ] && [ "$d" != / ]; do
	man=$d/tools/ptorun/ptorun.1
	d=$(dirname "$d")
done
if [ -f "$man" ]; then
	sed 's/\\-/-/g' "$man" >"$TMP/man"
	missing=""
	for opt in $(grep -o -- '--[a-z][a-z-]*' "$TMP/help" | sort -u); do
		grep -q -- "$opt" "$TMP/man" || missing="$missing $opt"
	done
	if [ -z "$missing" ]; then
		ok "ptorun.1 documents every option of --help"
	else
		echo "# missing from ptorun.1:$missing"
		not_ok "ptorun.1 documents every option of --help"
	fi
else
	ok "ptorun.1 documents every option of --help # SKIP no source tree"
fi

if run "$TMP/out" --version && grep -q '^ptorun (PTO) ' "$TMP/out"; then
	ok "ptorun --version"
else
	not_ok "ptorun --version" "$TMP/out"
fi

# usage errors: exit 2 with a message, before anything runs
for bad in "--task-window 12" "--heap-size 12Q" "--cores gpu=1" \
	    "--repeat 0" "--no-such-option" ""; do
	# shellcheck disable=SC2086
	run "$TMP/out" $bad "$SO/bgemm.so"
	rc=$?
	[ -z "$bad" ] && { run "$TMP/out"; rc=$?; }
	if [ "$rc" -eq 2 ] && grep -q 'ptorun' "$TMP/out"; then
		ok "usage error '${bad:-no ORCH.so}' exits 2 with a message"
	else
		not_ok "usage error '${bad:-no ORCH.so}' (exit $rc)" "$TMP/out"
	fi
done

run "$TMP/out" "$TMP/does-not-exist.so"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'cannot load' "$TMP/out"; then
	ok "a missing ORCH.so exits 1 with a message"
else
	not_ok "a missing ORCH.so (exit $rc)" "$TMP/out"
fi

run "$TMP/out" --device "$TMP/no-such-pto" "$SO/bgemm_builtin.so"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'cannot create the runtime' "$TMP/out"; then
	ok "a missing device exits 1 with a message"
else
	not_ok "a missing device (exit $rc)" "$TMP/out"
fi

run "$TMP/out" "$SO/bgemm.so" nonsense=1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'init failed: Invalid argument' "$TMP/out"; then
	ok "a bad sample argument fails init with -EINVAL, exit 1"
else
	not_ok "a bad sample argument (exit $rc)" "$TMP/out"
fi

# Sample arguments that describe nothing runnable fail init, naming why.
while IFS='|' read -r args want; do
	# shellcheck disable=SC2086
	run "$TMP/out" "$SO/paged_attention.so" $args
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q -- "$want" "$TMP/out" &&
	   ! grep -q ': PASS$' "$TMP/out"; then
		ok "paged_attention $args: refused ($want)"
	else
		not_ok "paged_attention $args: not refused (exit $rc)" "$TMP/out"
	fi
done <<EOF
case=|names no case
case=,|names no case
heads=0|heads=0 .*out of range
case=Case1 heads=4|exclude each other
heads=-1|heads=-1: must not be negative
heads=4x|heads=4x: not a number
heads=99999999999999999999|heads=99999999999999999999: too large
EOF
# numbers are decimal (010 is ten) or 0x hex
run "$TMP/out" "$SO/bgemm.so" batch=1 tile=010
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'tiles of 10x10' "$TMP/out" &&
   run "$TMP/out" "$SO/bgemm.so" batch=1 tile=0x10 &&
   grep -q 'tiles of 16x16' "$TMP/out"; then
	ok "sample numbers: 010 is ten, 0x10 sixteen"
else
	not_ok "sample numbers: 010 and 0x10 (exit $rc)" "$TMP/out"
fi
run "$TMP/out" "$SO/bgemm.so" batch=65536 m=65536 k=65536 tile=1024
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'A (batch=65536 .*exceed 1 TiB' "$TMP/out"; then
	ok "bgemm: a matrix over 1 TiB is refused, naming the matrix"
else
	not_ok "bgemm: a matrix over 1 TiB (exit $rc)" "$TMP/out"
fi

# A case's inputs do not depend on which other cases run with it.
run "$TMP/alone" "$SO/paged_attention.so" case=CaseVarLen
rc1=$?
run "$TMP/with" "$SO/paged_attention.so" case=Case1,CaseBatch256,CaseVarLen
rc2=$?
a=$(grep 'CaseVarLen.*checksum' "$TMP/alone" | grep -o 'checksum: [0-9a-f]*')
b=$(grep 'CaseVarLen.*checksum' "$TMP/with" | grep -o 'checksum: [0-9a-f]*')
if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ -n "$a" ] && [ "$a" = "$b" ]; then
	ok "paged_attention: CaseVarLen has one checksum alone and with others"
else
	not_ok "paged_attention: CaseVarLen checksum '$a' alone, '$b' with others" \
		"$TMP/with"
fi

# A sequence of 7 blocks needs 31 tasks in one scope: a window of 16 must
# fail with an error naming the task ring, not hang and not pass.
run "$TMP/out" --task-window 16 --stall-timeout 300 \
	"$SO/paged_attention_builtin.so" case=CaseVarLen chunk=1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'run 1 of 1 failed' "$TMP/out" &&
   grep -q 'task window' "$TMP/out" &&
   ! grep -q ': PASS$' "$TMP/out"; then
	ok "a window too small for one scope fails with exit 1"
else
	not_ok "a window too small for one scope (exit $rc)" "$TMP/out"
fi

run "$TMP/out" --trace "$TMP/trace.json" "$SO/bgemm.so" batch=1 m=2 n=2 k=2 \
	tile=16
rc=$?
if [ "$rc" -eq 0 ] && [ -s "$TMP/trace.json" ] &&
   grep -q 'gemm_tile' "$TMP/trace.json"; then
	ok "--trace writes a trace naming the kernels"
else
	not_ok "--trace (exit $rc)" "$TMP/out"
fi

# A core runs one task at a time, whichever thread runs it (its own, or
# one running a sleeping core's short tasks on its behalf): the slices of
# a core's track never overlap.  The default bgemm, with its thousands of
# short tasks, had 1 to 6 overlapping pairs in 5 runs of 5 when a task's
# start was taken from the end of that thread's task before.
overlaps='import json, sys
from collections import defaultdict
by = defaultdict(list)
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") == "task":
        by[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
n = sum(1 for l in by.values() for a, b in zip(sorted(l), sorted(l)[1:])
        if b[0] < a[1] - 0.01)
print(n, sum(map(len, by.values())))'
bad=0 tasks=0
for i in 1 2 3; do
	run "$TMP/out" --quiet --trace "$TMP/trace.json" "$SO/bgemm.so" ||
		{ bad=-1; break; }
	set -- $(python3 -c "$overlaps" "$TMP/trace.json")
	bad=$((bad + $1)) tasks=$((tasks + $2))
done
if [ "$bad" -eq 0 ] && [ "$tasks" -gt 1000 ]; then
	ok "bgemm's trace: no two slices of a core overlap ($tasks tasks)"
else
	echo "# overlapping pairs: $bad, tasks: $tasks" >>"$TMP/out"
	not_ok "bgemm's trace: slices of a core overlap" "$TMP/out"
fi

# A task's slice starts after its producers' slices end (the flow arrows
# point forward in time) and after its submit span begins.  With shards, a
# thread running a sleeping core's tasks took the start of the next one
# from the end of the last, so the completion between them (readying the
# next, writing the trace) and any preemption counted as the next task's:
# in one tree_reduce run in four or five a slice began 20-140 us before
# its producer ended, or before it was submitted.  2 us of slack for the
# threads' clocks (lib/clock.c).
order='import bisect, json, sys
from collections import defaultdict
ev = json.load(open(sys.argv[1]))["traceEvents"]
tasks = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "task"]
track = defaultdict(list)
for e in tasks:
    track[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
for l in track.values():
    l.sort()
def slice_at(e):
    l = track[e["tid"]]
    i = bisect.bisect_right(l, (e["ts"], float("inf"))) - 1
    return l[i] if i >= 0 and l[i][0] <= e["ts"] <= l[i][1] else None
src = {e["id"]: e for e in ev if e.get("ph") == "s"}
bad = 0
for f in (e for e in ev if e.get("ph") == "f"):
    p, c = slice_at(src[f["id"]]), slice_at(f)
    bad += p is None or c is None or c[0] < p[1] - 2
sub = {e["args"]["task"]: e["ts"] for e in ev
       if e.get("ph") == "X" and e.get("name") == "submit"}
bad += sum(1 for e in tasks if e["ts"] < sub[e["args"]["task"]] - 2)
print(bad, len(tasks), len(src))'
bad=0 tasks=0 edges=0
for i in 1 2 3 4 5 6 7 8; do
	PTO_SCHED=shards run "$TMP/out" --quiet --cores cube=3,vector=4 \
		--trace "$TMP/trace.json" "$SO/tree_reduce.so" ||
		{ bad=-1; break; }
	set -- $(python3 -c "$order" "$TMP/trace.json")
	bad=$((bad + $1)) tasks=$((tasks + $2)) edges=$((edges + $3))
done
if [ "$bad" -eq 0 ] && [ "$tasks" -gt 1000 ] && [ "$edges" -gt 1000 ]; then
	ok "tree_reduce's traces with shards: no slice starts before its producers end or its submit ($tasks tasks, $edges edges)"
else
	echo "# slices out of order: $bad, tasks: $tasks, edges: $edges" >>"$TMP/out"
	not_ok "tree_reduce's traces with shards: slices start before their producers end or their submit" "$TMP/out"
fi

run "$TMP/out" --stats --quiet "$SO/tree_reduce.so" n=65536 leaf=512
rc=$?
if [ "$rc" -eq 0 ] && grep -qi 'heap' "$TMP/out" &&
   ! grep -q '^ptorun: run' "$TMP/out"; then
	ok "--stats prints the ring statistics, --quiet the run lines"
else
	not_ok "--stats --quiet (exit $rc)" "$TMP/out"
fi

# "help" as a sample argument prints the sample's options and exits 0
if run "$TMP/out" "$SO/paged_attention.so" help &&
   grep -q 'CaseBatch256' "$TMP/out"; then
	ok "a sample's help argument exits 0"
else
	not_ok "a sample's help argument" "$TMP/out"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
