#!/bin/sh
# SPDX-License-Identifier: MIT
#
# ptotop end to end on the host: a load generator publishes its stats page,
# ptotop lists it (JSON, text, filters), ignores and removes stale pages,
# parses the driver's fdinfo and sysfs (from a fake tree), and its
# interactive screen reacts to keys in tmux.  TAP output.
#
# Runs from the build tree (make copies it to $(O)/selftests/ptotop/), so
# it uses the ptotop and pto_loadgen built next to it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
O=$(cd "$here/../.." && pwd)
PTOTOP=${PTOTOP:-$O/tools/ptotop}
LOADGEN=${LOADGEN:-$here/pto_loadgen}
tmp=$(mktemp -d /tmp/ptotop-test.XXXXXX)
n=0 failed=0
pids=""
tmux_sock="ptotop-test-$$"
ui_n=0

cleanup() {
	# never wait on a child that may hang: KILL what is left
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	tmux -L "$tmux_sock" kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

ok() {	# ok CONDITION-EXIT-STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n # SKIP $1"
}

# wait_for TRIES COMMAND...: poll every 0.05 s, at most TRIES times.
# A tmux server of its own for each UI session: the last one may still be
# exiting when the next one starts (its ptotop quit, so its only session
# ended), and a client that reached it then fails with "server exited
# unexpectedly".
next_ui() {
	tmux -L "$tmux_sock" kill-server 2>/dev/null
	ui_n=$((ui_n + 1))
	tmux_sock="ptotop-test-$$-$ui_n"
}

wait_for() {
	tries=$1
	shift
	while [ "$tries" -gt 0 ]; do
		"$@" && return 0
		tries=$((tries - 1))
		sleep 0.05
	done
	return 1
}

# gone PID: the process has exited (a zombie counts as exited)
gone() {
	st=$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ]
}

# stop PID: SIGTERM, wait up to 10 s, then SIGKILL; returns its status
stop() {
	kill -TERM "$1" 2>/dev/null
	if ! wait_for 200 gone "$1"; then
		echo "# pid $1 ignored SIGTERM for 10 s; killing it"
		kill -KILL "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		return 1
	fi
	wait "$1"
}

page_of() {	# the stats page file of pid $2 in directory $1
	ls "$1"/pto-stats."$2".* 2>/dev/null | head -n 1
}

has_page() { [ -n "$(page_of "$1" "$2")" ]; }

# jq-like checks in python3: check FILE EXPR (EXPR sees docs = [doc...])
check() {
	file=$1
	shift
	python3 - "$file" "$@" <<'PY'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")
        if l.strip()]
def procs(d, pid):
    return [p for p in d["processes"] if p["pid"] == pid]
def dev(d, name):
    return [x for x in d["devices"] if x["name"] == name]
env = {"docs": docs, "procs": procs, "dev": dev}
for expr in sys.argv[2:]:
    if not eval(expr, env):
        print("# check failed: " + expr)
        sys.exit(1)
PY
}

echo "# ptotop: $PTOTOP"
if [ ! -x "$PTOTOP" ] || [ ! -x "$LOADGEN" ]; then
	echo "Bail out! ptotop or pto_loadgen not built"
	exit 1
fi

# ---- 0. --help and the man page agree --------------------------------------
src=$O
while [ "$src" != / ] && [ ! -f "$src/tools/ptotop/ptotop.1" ]; do
	src=$(dirname "$src")
done
man=$src/tools/ptotop/ptotop.1
if [ -f "$man" ]; then
	"$PTOTOP" --help >"$tmp/help.txt"
	rc=$?
	for opt in $(grep -o -- '--[a-z]*' "$tmp/help.txt" | sort -u); do
		m=$(echo "$opt" | sed 's/-/\\\\-/g')
		grep -q -- "$m" "$man" || { echo "# $opt not in ptotop.1"; rc=1; }
	done
	for key in pid tasks inflight stalls failures device command user; do
		grep -q "$key" "$tmp/help.txt" && grep -q "^\\.BR* $key" "$man" ||
			{ echo "# sort key $key missing"; rc=1; }
	done
	ok $rc "every option and sort key of --help is in ptotop.1"
else
	skip "ptotop.1 not found above $O"
fi
"$PTOTOP" --bogus >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "an unknown option exits 2"

# ---- 0b. usage errors, write errors, no terminal ---------------------------
# Nothing to show here: an empty stats directory, /proc and /sys.  A value
# ptotop takes runs one quick sample; timeout catches one that loops.
mkdir -p "$tmp/none"
quiet_top() {
	PTO_STATS_DIR="$tmp/none" PTOTOP_PROC_ROOT="$tmp/none" \
		PTOTOP_SYSFS_ROOT="$tmp/none" timeout -k 5 10 "$PTOTOP" "$@" \
		</dev/null >"$tmp/top.out" 2>"$tmp/top.err"
}
# top_refused OPTION VALUE WANT: exit 2 and a message naming OPTION, VALUE
# and WANT, the values it takes (the status is kept in st, not rc)
top_refused() {
	quiet_top -b -n 1 "$1" "$2"
	st=$?
	[ $st -eq 2 ] && grep -qF -- "ptotop: invalid $1/" "$tmp/top.err" &&
		grep -qF -- "'$2': expected $3" "$tmp/top.err" && return 0
	echo "# ptotop $1 '$2': exit $st"
	sed 's/^/# /' "$tmp/top.err"
	return 1
}

quiet_top -b -n 0
st=$?
[ $st -eq 2 ] && grep -qF -- \
	"ptotop: invalid -n/--iterations '0': expected a count from 1 to 2147483647" \
	"$tmp/top.err"
ok $? "-n 0 exits 2 naming -n and its range (exit $st, 124: it ran on)"
rc=0
for v in 0 -1 2147483648 99999999999999999999 1x "" " 1" +1; do
	top_refused -n "$v" "a count from 1 to 2147483647" || rc=1
done
for v in 0 0.009 -1 86401 0.5x "" " 1" nan inf 1e-400 1e999; do
	top_refused -d "$v" "seconds from 0.01 to 86400" || rc=1
done
for v in 0 -5 2147483648 4294967297 12a "" " 1"; do
	top_refused -p "$v" "a process id from 1 to 2147483647" || rc=1
done
ok $rc "-n, -d, -p: out of range, negative, overflow, garbage exit 2"
quiet_top -b -n 2147483647 -d 0.01 -p 2147483647 --help &&
	quiet_top -b -n 1 -d 86400 -p 1 && grep -q 'No PTO devices' "$tmp/top.out"
ok $? "the ends of the ranges are accepted"
top_refused -s bogus "pid, tasks, inflight, stalls, failures, device, command or user"
ok $? "an unknown sort key exits 2"
rc=0
for v in "" /dev/ foo pto ptox pto1x /dev/foo /tmp/pto0 sim0 " pto0" pto00 \
	/dev/pto01; do
	top_refused -D "$v" "a device name" || rc=1
done
ok $rc "-D: an empty or unknown device name exits 2"
rc=0
for v in sim pto0 /dev/pto0 pto17; do
	quiet_top -b -n 1 -D "$v" && grep -q 'No PTO devices' "$tmp/top.out" ||
		{ echo "# ptotop -D '$v' refused"; rc=1; }
done
ok $rc "-D: sim, pto0, /dev/pto0 and pto17 are accepted"

pid_opts=""
for i in $(seq 32); do pid_opts="$pid_opts -p $((1000000 + i))"; done
# shellcheck disable=SC2086
quiet_top -b -n 1 $pid_opts && grep -q 'No PTO devices' "$tmp/top.out"
ok $? "32 -p options are accepted"
# shellcheck disable=SC2086
quiet_top -b -n 1 $pid_opts -p 42
st=$?
[ $st -eq 2 ] && [ "$(head -n 1 "$tmp/top.err")" = "ptotop: -p: at most 32 processes" ]
ok $? "a 33rd -p exits 2: 'ptotop: -p: at most 32 processes' (exit $st)"

# getopt's own refusals speak as ptotop, not as the path it was run by,
# and point to --help as ptorun does (not the whole usage)
quiet_top --no-such-option
st=$?
[ $st -eq 2 ] && grep -q "^ptotop: unrecognized option '--no-such-option'" \
	"$tmp/top.err" && [ "$(sed -n 2p "$tmp/top.err")" = \
	"Try 'ptotop --help' for more information." ] &&
	[ "$(wc -l <"$tmp/top.err")" -eq 2 ]
ok $? "an unknown option exits 2 with 'ptotop: unrecognized option' and 'Try' (exit $st)"

# a mistyped PTO_STATS_DIR is said, not only "nothing found"; an empty
# directory ($tmp/none) is not worth a word
PTO_STATS_DIR="$tmp/missing" PTOTOP_PROC_ROOT="$tmp/none" \
	PTOTOP_SYSFS_ROOT="$tmp/none" timeout -k 5 10 "$PTOTOP" -b -n 1 \
	</dev/null >"$tmp/top.out" 2>"$tmp/top.err" &&
	grep -qF "stats directory $tmp/missing: No such file" "$tmp/top.err" &&
	grep -qF "(stats pages in $tmp/missing)" "$tmp/top.out"
missing=$?
quiet_top -b -n 1 && [ ! -s "$tmp/top.err" ]
empty=$?
[ $missing -eq 0 ] && [ $empty -eq 0 ]
ok $? "a stats directory that does not exist is named on stderr, an empty one is not"
# one this user cannot read is said too (root reads any: run as nobody)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups "$PTOTOP" -V \
	>/dev/null 2>&1; then
	mkdir -p "$tmp/closed" && chmod 000 "$tmp/closed"
	PTO_STATS_DIR="$tmp/closed" PTOTOP_PROC_ROOT="$tmp/none" \
		PTOTOP_SYSFS_ROOT="$tmp/none" timeout -k 5 10 setpriv \
		--reuid=65534 --regid=65534 --clear-groups "$PTOTOP" -b -n 1 \
		</dev/null >"$tmp/top.out" 2>"$tmp/top.err"
	grep -qF "stats directory $tmp/closed: Permission denied" "$tmp/top.err"
	ok $? "a stats directory this user cannot read is named on stderr"
else
	skip "not root, no setpriv, or nobody cannot run $PTOTOP"
fi

# not a terminal: batch text, never the screen's escape sequences
esc=$(printf '\033')
quiet_top -n 1 && grep -q 'No PTO devices' "$tmp/top.out" &&
	! grep -q "$esc" "$tmp/top.out"
ok $? "without -b into a file: batch text, no escape sequences"
PTO_STATS_DIR="$tmp/none" PTOTOP_PROC_ROOT="$tmp/none" \
	PTOTOP_SYSFS_ROOT="$tmp/none" timeout -k 5 10 "$PTOTOP" -R -n 1 \
	</dev/null 2>&1 | cat >"$tmp/top.out"
grep -q 'No PTO devices' "$tmp/top.out" && ! grep -q "$esc" "$tmp/top.out"
ok $? "-R without -b into a pipe: batch text, no escape sequences"
quiet_top -R "$tmp/recording" -n 1
st=$?
[ $st -eq 2 ] && grep -qF "unexpected argument '$tmp/recording'" "$tmp/top.err"
ok $? "-R (--rings) takes no file: 'ptotop -R FILE' exits 2 naming it"

if [ -w /dev/full ]; then
	for a in --help --version "-b -n 1" "-j -n 1" "-n 1"; do
		# shellcheck disable=SC2086
		PTO_STATS_DIR="$tmp/none" PTOTOP_PROC_ROOT="$tmp/none" \
			PTOTOP_SYSFS_ROOT="$tmp/none" timeout -k 5 10 \
			"$PTOTOP" $a </dev/null >/dev/full 2>"$tmp/top.err"
		st=$?
		[ $st -eq 1 ] && grep -q \
			'^ptotop: error writing standard output: No space left' \
			"$tmp/top.err"
		ok $? "ptotop $a >/dev/full exits 1 with a message (exit $st)"
	done
else
	for a in 1 2 3 4 5; do skip "no /dev/full"; done
fi

# ---- 1. a live sim runtime, through its stats page -------------------------
shm=${PTO_STATS_DIR:-/dev/shm}
PTO_DEVICE=sim PTO_RINGS=4 "$LOADGEN" -t 60 -n 64 -s 20000 -p 5 \
	>"$tmp/loadgen.out" 2>&1 &
lg=$!
pids="$pids $lg"
wait_for 400 has_page "$shm" "$lg"
ok $? "load generator $lg publishes a stats page in $shm"

"$PTOTOP" -b -n 2 -d 0.5 --json >"$tmp/run.json" 2>"$tmp/run.err"
ok $? "ptotop -b -n 2 -d 0.5 --json exits 0"
check "$tmp/run.json" 'len(docs) == 2' \
	'[d["iteration"] for d in docs] == [1, 2]' \
	'docs[0]["interval_s"] is None and docs[1]["interval_s"] >= 0.45'
ok $? "two JSON documents, iterations 1 and 2, interval about 0.5 s"

check "$tmp/run.json" "all(len(procs(d, $lg)) == 1 for d in docs)" \
	"all(procs(d, $lg)[0]['device'] == 'sim' for d in docs)" \
	"'statspage' in procs(docs[1], $lg)[0]['sources']" \
	"'pto_loadgen' in procs(docs[1], $lg)[0]['command']" \
	"procs(docs[1], $lg)[0]['user'] == '$(id -un)'"
ok $? "both iterations list pid $lg on device sim with user and command"

check "$tmp/run.json" \
	"all(p['tasks_completed'] <= p['tasks_submitted'] for d in docs for p in procs(d, $lg))" \
	"all(p['tasks_in_flight'] <= p['rings']['task']['size'] for d in docs for p in procs(d, $lg))" \
	"all(r['size'] > 0 and r['high_water'] >= r['in_use'] and r['high_water'] <= r['size'] for d in docs for p in procs(d, $lg) for r in p['rings'].values())" \
	"set(procs(docs[1], $lg)[0]['rings']) == {'task', 'heap', 'dep', 'tensormap'}" \
	"procs(docs[1], $lg)[0]['cores']['cube'] > 0 and procs(docs[1], $lg)[0]['runs'] > 0"
ok $? "counters are plausible (completed <= submitted, rings within size)"

check "$tmp/run.json" \
	"procs(docs[1], $lg)[0]['tasks_completed'] > procs(docs[0], $lg)[0]['tasks_completed']" \
	"procs(docs[1], $lg)[0]['tasks_submitted'] > procs(docs[0], $lg)[0]['tasks_submitted']" \
	"procs(docs[1], $lg)[0]['runs'] > procs(docs[0], $lg)[0]['runs']"
ok $? "counters advance between the two iterations"

# tasks/s and utilisation recomputed here from the raw counters
check "$tmp/run.json" \
	"procs(docs[0], $lg)[0]['tasks_per_s'] is None" \
	"abs(procs(docs[1], $lg)[0]['tasks_per_s'] - (procs(docs[1], $lg)[0]['tasks_completed'] - procs(docs[0], $lg)[0]['tasks_completed']) / docs[1]['interval_s']) <= 0.001 * procs(docs[1], $lg)[0]['tasks_per_s'] + 0.01" \
	"procs(docs[1], $lg)[0]['tasks_per_s'] > 0" \
	"all(abs((lambda p, q, t: min(1.0, (p['busy_ns'][t] - q['busy_ns'][t]) / (docs[1]['interval_s'] * 1e9 * p['cores'][t])))(procs(docs[1], $lg)[0], procs(docs[0], $lg)[0], t) - procs(docs[1], $lg)[0]['utilisation'][t]) < 1e-4 for t in ('cube', 'vector') if procs(docs[1], $lg)[0]['cores'][t])"
ok $? "tasks/s and utilisation equal the counters' deltas over the interval"

check "$tmp/run.json" "len(dev(docs[1], 'sim')) == 1" \
	"dev(docs[1], 'sim')[0]['cores']['cube'] == sum(p['cores']['cube'] for p in docs[1]['processes'] if p['device'] == 'sim')" \
	"all(v is None or 0 <= v <= 1 for v in dev(docs[1], 'sim')[0]['utilisation'].values())" \
	"dev(docs[1], 'sim')[0]['utilisation']['cube'] is not None"
ok $? "device sim sums its runtimes' cores, utilisation within [0, 1]"

"$PTOTOP" -b -n 1 >"$tmp/run.txt" 2>&1
grep -q '^DEVICE' "$tmp/run.txt" && grep -q '^ *PID USER' "$tmp/run.txt" &&
	grep -Eq "^ *$lg +[^ ]+ +sim .*pto_loadgen" "$tmp/run.txt"
ok $? "text batch output has the device and process tables with pid $lg"

"$PTOTOP" -j -n 1 -D pto9 >"$tmp/f1.json" &&
	"$PTOTOP" -j -n 1 --device=sim -p "$lg" >"$tmp/f2.json" &&
	check "$tmp/f1.json" "docs[0]['processes'] == [] and docs[0]['devices'] == []" &&
	check "$tmp/f2.json" "[p['pid'] for p in docs[0]['processes']] == [$lg]" \
		"[d['name'] for d in docs[0]['devices']] == ['sim']"
ok $? "device and pid filters"

"$PTOTOP" -j -n 1 -s pid >"$tmp/sort.json" &&
	check "$tmp/sort.json" "[p['pid'] for p in docs[0]['processes']] == sorted(p['pid'] for p in docs[0]['processes'])" &&
	"$PTOTOP" -j -n 1 -s pid -r >"$tmp/sortr.json" &&
	check "$tmp/sortr.json" "[p['pid'] for p in docs[0]['processes']] == sorted((p['pid'] for p in docs[0]['processes']), reverse=True)"
ok $? "--sort pid and --reverse order the processes"

# ---- 1b. task rings: one per scope depth, with libpto's sizing advice ------
# lg has one level of scopes: ring 0 only.  lg2 nests them three deep with
# 8-slot task windows below ring 0, so that the orchestrator waits on them;
# when its load is done it prints pto_print_stats() and keeps its final
# page until SIGTERM: ptotop must then say what libpto said.
pgsize=$(wc -c <"$(page_of "$shm" "$lg")")
check "$tmp/run.json" \
	"all(len(p['task_rings']) == 4 for d in docs for p in procs(d, $lg))" \
	"[(r['ring'], r['scope_depth'], r['and_deeper'], r['used']) for r in procs(docs[1], $lg)[0]['task_rings']] == [(0, 0, False, True), (1, 1, False, False), (2, 2, False, False), (3, 3, True, False)]" \
	"all(sum(r['resources'][k][f] for r in p['task_rings']) == p['rings'][k][f] for d in docs for p in procs(d, $lg) for k in p['rings'] for f in ('size', 'high_water', 'stalls', 'stall_ns'))"
ok $? "JSON: four task rings, ring 0 used, their figures sum to the totals"

PTO_DEVICE=sim PTO_RINGS=4 PTO_TASK_WINDOW=4096,8 "$LOADGEN" -t 1.5 -n 200 \
	-s 200000 -p 5 -l 3 -S -w >"$tmp/loadgen2.out" 2>&1 &
lg2=$!
pids="$pids $lg2"
wait_for 600 grep -q 'load done' "$tmp/loadgen2.out"
ok $? "nested load generator $lg2 has done its load and waits"

"$PTOTOP" -j -n 1 -p "$lg2" >"$tmp/rings.json"
check "$tmp/rings.json" "len(procs(docs[0], $lg2)) == 1" \
	"[r['used'] for r in procs(docs[0], $lg2)[0]['task_rings']] == [True, True, True, False]" \
	"[r['resources']['task']['size'] for r in procs(docs[0], $lg2)[0]['task_rings']] == [4096, 8, 8, 8]" \
	"all(0 < g['high_water'] <= g['size'] for r in procs(docs[0], $lg2)[0]['task_rings'][:3] for g in r['resources'].values())"
ok $? "JSON: rings 0-2 used by three scope depths, each with its own size"
check "$tmp/rings.json" \
	"procs(docs[0], $lg2)[0]['task_rings'][1]['resources']['task']['stalls'] > 0" \
	"{'resource': 'task', 'action': 'grow', 'size': 16, 'env': 'PTO_TASK_WINDOW=4096,16,8,8'}.items() <= [a for a in procs(docs[0], $lg2)[0]['task_rings'][1]['advice'] if a['resource'] == 'task'][0].items()" \
	"procs(docs[0], $lg2)[0]['task_rings'][3]['advice'] == []"
ok $? "JSON: ring 1's task window stalled and is advised to grow to 16"

# libpto's lines: "  ring N ..." under "sizing advice:"; the ring table
sed -n '/sizing advice:/,$ s/^  ring /ring /p' "$tmp/loadgen2.out" \
	>"$tmp/libpto-advice.txt"
check "$tmp/rings.json" \
	"[l.rstrip('\n') for l in open('$tmp/libpto-advice.txt')] == [a['text'] for r in procs(docs[0], $lg2)[0]['task_rings'] for a in r['advice']]" \
	"len(open('$tmp/libpto-advice.txt').readlines()) >= 2"
ok $? "JSON: each ring's advice is pto_print_stats()'s, line for line"

"$PTOTOP" -b -R -n 1 -p "$lg2" >"$tmp/rings.txt"
sed -n 's/^ *advice: //p' "$tmp/rings.txt" >"$tmp/ptotop-advice.txt"
[ -s "$tmp/ptotop-advice.txt" ] &&
	cmp -s "$tmp/libpto-advice.txt" "$tmp/ptotop-advice.txt"
ok $? "-R prints pto_print_stats()'s sizing advice under the process"
# and the line that gives it all at once, to paste (two lines for one
# variable: pasting both kept the last)
sed -n 's/^  all of it at once: //p' "$tmp/loadgen2.out" >"$tmp/libpto-all.txt"
sed -n 's/^ *all of it at once: //p' "$tmp/rings.txt" >"$tmp/ptotop-all.txt"
[ -s "$tmp/libpto-all.txt" ] &&
	cmp -s "$tmp/libpto-all.txt" "$tmp/ptotop-all.txt" &&
	check "$tmp/rings.json" \
		"procs(docs[0], $lg2)[0]['advice_all'] == open('$tmp/libpto-all.txt').read().rstrip('\n')"
ok $? "-R and JSON give pto_print_stats()'s 'all of it at once' line"
"$PTOTOP" -R -n 1 -p "$lg2" </dev/null >"$tmp/rings-nob.txt"
sed -n 's/^ *advice: //p' "$tmp/rings-nob.txt" |
	cmp -s "$tmp/libpto-advice.txt" - && ! grep -q "$(printf '\033')" \
	"$tmp/rings-nob.txt"
ok $? "-R without -b into a file: the same advice as batch text"
# ring, resource, size, high water, stalls, stall ms; in use is live there
ring_table() { awk '$1 ~ /^[0-9]$/ { print $1, $2, $3, $4, $6, $7, $8 }' "$1"; }
ring_table "$tmp/loadgen2.out" >"$tmp/libpto-rings.txt"
ring_table "$tmp/rings.txt" >"$tmp/ptotop-rings.txt"
[ "$(wc -l <"$tmp/libpto-rings.txt")" -eq 13 ] &&
	cmp -s "$tmp/libpto-rings.txt" "$tmp/ptotop-rings.txt"
ok $? "-R's per ring figures equal pto_print_stats()'s"
grep -Eq "^ *$lg2 +[^ ]+ +sim .*pto_loadgen" "$tmp/rings.txt" &&
	grep -q '^        3    (scope depth 3 and deeper: no tasks)$' "$tmp/rings.txt"
ok $? "-R: the process row, then its rings; the unused one says so"
"$PTOTOP" -b -n 1 -p "$lg2" >"$tmp/norings.txt"
grep -Eq "^ *$lg2 +[^ ]+ +sim " "$tmp/norings.txt" &&
	! grep -Eq 'advice|task window|scope depth' "$tmp/norings.txt"
ok $? "without -R the text keeps one line per process"

# One full task ring stops the orchestrator however empty the others are:
# the occupancy columns show the fullest ring (a mean over four rings
# showed a deadlock on a full ring 0 as 25%).  Chained tasks of 0.3 s
# each keep ring 0's window of 8 full while the orchestrator waits.
PTO_DEVICE=sim PTO_RINGS=4 PTO_TASK_WINDOW=8 "$LOADGEN" -t 60 -n 40 \
	-s 300000000 -p 0 >"$tmp/loadgen3.out" 2>&1 &
lg3=$!
pids="$pids $lg3"
ring_full() {
	"$PTOTOP" -b -n 1 -p "$lg3" >"$tmp/full.txt" 2>&1 &&
		awk -v p="$lg3" '$1 == p && $6 == "100.0" { f = 1 }
			END { exit !f }' "$tmp/full.txt"
}
wait_for 400 ring_full
ok $? "a full ring 0 of four shows TASK% 100.0, the fullest ring's"
kill -TERM "$lg3" 2>/dev/null
wait "$lg3" 2>/dev/null

# ---- 2. the interactive screen in tmux -----------------------------------------
screen() { tmux -L "$tmux_sock" capture-pane -p -t ptotop 2>/dev/null; }
screen_has() { screen | grep -q -- "$1"; }
screen_lacks() { ! screen | grep -q -- "$1"; }
alive() { tmux -L "$tmux_sock" has-session -t ptotop 2>/dev/null; }
dead() { ! alive; }

# other users of PTO on this machine must not push ours off the screen: -p
if command -v tmux >/dev/null; then
	next_ui
	tmux -L "$tmux_sock" -f /dev/null new-session -d -s ptotop -x 80 -y 24 \
		"env TERM=screen $PTOTOP -d 0.3 -p $lg"
	wait_for 200 screen_has " $lg "
	ok $? "UI (80x24) shows pid $lg"
	screen >"$tmp/screen1.txt"
	grep -q 'sort:TASKS/S' "$tmp/screen1.txt" &&
		grep -q '^sim' "$tmp/screen1.txt" &&
		grep -qi 'cube' "$tmp/screen1.txt"
	ok $? "UI shows the sort key, the sim device and its core types"
	awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$tmp/screen1.txt"
	ok $? "no line wider than the terminal"

	tmux -L "$tmux_sock" send-keys -t ptotop h
	wait_for 100 screen_has "ptotop help"
	ok $? "h shows the help"
	tmux -L "$tmux_sock" send-keys -t ptotop x
	wait_for 100 screen_lacks "ptotop help" && screen_has " $lg "
	ok $? "any key returns from the help to the table"

	tmux -L "$tmux_sock" send-keys -t ptotop P
	wait_for 100 screen_has "sort:PID"
	ok $? "P sorts by pid"
	tmux -L "$tmux_sock" send-keys -t ptotop S
	wait_for 100 screen_has "sort:STALLS"
	ok $? "S sorts by stalls"
	tmux -L "$tmux_sock" send-keys -t ptotop r
	wait_for 100 screen_has "sort:STALLS(rev)"
	ok $? "r reverses the order"

	tmux -L "$tmux_sock" send-keys -t ptotop f
	wait_for 100 screen_has "dev:sim"
	ok $? "f filters by device"
	tmux -L "$tmux_sock" send-keys -t ptotop Space
	wait_for 100 screen_has "PAUSED"
	ok $? "space pauses"
	tmux -L "$tmux_sock" send-keys -t ptotop Space

	tmux -L "$tmux_sock" resize-window -t ptotop -x 60 -y 14 2>/dev/null
	wait_for 100 sh -c "tmux -L $tmux_sock capture-pane -p -t ptotop | awk 'length(\$0) > 60 { bad = 1 } END { exit bad }'" &&
		wait_for 100 screen_has " $lg " && alive
	ok $? "survives a resize to 60x14 and still shows pid $lg"

	tmux -L "$tmux_sock" send-keys -t ptotop q
	wait_for 100 dead
	ok $? "q quits"

	# + and - keep to -d's range (0.01 to 86400 s), said as such
	next_ui
	tmux -L "$tmux_sock" -f /dev/null new-session -d -s ptotop -x 80 -y 24 \
		"env TERM=screen $PTOTOP -d 30000 -p $lg"
	wait_for 200 screen_has "every 30000s"
	tmux -L "$tmux_sock" send-keys -t ptotop + + +
	wait_for 100 screen_has "every 86400s"
	ok $? "+ raises the interval up to -d's 86400 s, not 3600 (shown as 3.6e+03)"
	tmux -L "$tmux_sock" kill-session -t ptotop 2>/dev/null

	# a terminal curses does not know (TERM unset): text, as -b prints
	next_ui
	tmux -L "$tmux_sock" -f /dev/null new-session -d -s ptotop -x 80 -y 24 \
		"env -u TERM $PTOTOP -n 2 -d 0.1 -p $lg 2>$tmp/noterm.err; echo \$? >$tmp/noterm.rc; sleep 60"
	wait_for 200 test -s "$tmp/noterm.rc"
	[ "$(cat "$tmp/noterm.rc" 2>/dev/null)" = 0 ] && screen_has " $lg " &&
		grep -q 'TERM=(unset)) is unknown to curses' "$tmp/noterm.err"
	ok $? "TERM unset: says so, prints the text as -b does, exits 0"
	tmux -L "$tmux_sock" kill-session -t ptotop 2>/dev/null

	# standard input at its end: it still refreshes, and rests between
	# (its CPU time over 2 s of wall time, in clock ticks of 10 ms)
	next_ui
	tmux -L "$tmux_sock" -f /dev/null new-session -d -s ptotop -x 80 -y 24 \
		"echo \$\$ >$tmp/top.pid; exec env TERM=screen $PTOTOP -d 0.3 -p $lg </dev/null"
	wait_for 200 screen_has " $lg "
	top=$(cat "$tmp/top.pid")
	t0=$(awk '{ print $14 + $15 }' "/proc/$top/stat")
	sleep 2
	t1=$(awk '{ print $14 + $15 }' "/proc/$top/stat")
	screen_has " $lg " && [ $((t1 - t0)) -lt 40 ]
	ok $? "standard input at its end: the screen stays, $((t1 - t0)) of 200 ticks of CPU in 2 s (fewer than 40)"
	tmux -L "$tmux_sock" kill-session -t ptotop 2>/dev/null

	# the task ring view; sorted by pid so that lg is first and lg2 second
	rev=
	[ "$lg2" -lt "$lg" ] && rev=-r
	next_ui
	tmux -L "$tmux_sock" -f /dev/null new-session -d -s ptotop -x 80 -y 24 \
		"env TERM=screen $PTOTOP -d 0.3 -s pid $rev -p $lg -p $lg2"
	wait_for 200 screen_has " $lg2 " && screen_has " $lg "
	ok $? "UI shows pids $lg and $lg2"
	tmux -L "$tmux_sock" send-keys -t ptotop Enter
	wait_for 100 screen_has "Task rings of pid $lg, pto_loadgen on sim" &&
		screen_has "^0    task window " &&
		screen_has "^1    (scope depth 1: no tasks)"
	ok $? "Enter shows the rings of the first row, selected at start"
	tmux -L "$tmux_sock" send-keys -t ptotop Escape
	wait_for 100 screen_lacks "Task rings of" && screen_has " $lg2 "
	ok $? "Esc returns to the process table"
	tmux -L "$tmux_sock" send-keys -t ptotop Down Enter
	wait_for 100 screen_has "Task rings of pid $lg2, pto_loadgen on sim"
	ok $? "Down selects the next row, Enter shows its rings"
	screen >"$tmp/rings-screen.txt"
	sed 's/^/# /' "$tmp/rings-screen.txt"
	grep -Eq '^1 +task window +8 +[0-9]+ +8 +[1-9][0-9]* +[0-9.]+ +grow 16$' \
		"$tmp/rings-screen.txt" &&
		grep -Eq '^ +heap ring +64\.0M .* shrink ' "$tmp/rings-screen.txt" &&
		grep -q '^3    (scope depth 3 and deeper: no tasks)' \
			"$tmp/rings-screen.txt" &&
		grep -q '^ring 1 task window: full [0-9]* times' \
			"$tmp/rings-screen.txt" &&
		grep -q 'PTO_TASK_WINDOW=4096,16,8,8' "$tmp/rings-screen.txt"
	ok $? "each used ring's resources with short advice, then libpto's"
	# lines are clipped at the edge: a whole one ends with its advice, and
	# all but ring 2's task window (if it never stalled) have some
	[ "$(grep -Ec ' (grow|shrink) [0-9.]+[KMG]?$' "$tmp/rings-screen.txt")" -ge 11 ]
	ok $? "the ring view fits 80 columns: its resource lines are whole"
	tmux -L "$tmux_sock" send-keys -t ptotop j
	wait_for 100 screen_has "\\[2-21 of [0-9]*, j/k\\]$" &&
		screen_lacks "^0    task window"
	ok $? "j scrolls the ring view"
	tmux -L "$tmux_sock" send-keys -t ptotop Enter
	wait_for 100 screen_lacks "Task rings of" && screen_has " $lg2 "
	ok $? "Enter returns to the process table"
	tmux -L "$tmux_sock" send-keys -t ptotop q
	wait_for 100 dead

	mkdir -p "$tmp/empty"
	next_ui
	tmux -L "$tmux_sock" -f /dev/null new-session -d -s ptotop -x 160 -y 24 \
		"env TERM=screen PTO_STATS_DIR=$tmp/empty PTOTOP_PROC_ROOT=$tmp/empty PTOTOP_SYSFS_ROOT=$tmp/empty $PTOTOP"
	wait_for 100 screen_has "No PTO devices or runtimes found" &&
		screen_has "stats pages in $tmp/empty)"
	ok $? "UI says so when there is nothing to show, and where it looked"
	tmux -L "$tmux_sock" send-keys -t ptotop h
	wait_for 100 screen_has "ptotop help"
	tmux -L "$tmux_sock" send-keys -t ptotop q
	wait_for 100 dead
	ok $? "q quits from the help screen too"
	tmux -L "$tmux_sock" kill-server 2>/dev/null
else
	for t in $(seq 22); do skip "tmux not installed"; done
fi

# Terminals said to be larger than curses can hold (its sizes are shorts,
# and it allocates every cell): a resize to 32768 columns crashed ptotop,
# one to 9999x9999 took gigabytes and left q unanswered.  A pty of our
# own, as tmux will not make one that large.
mkdir -p "$tmp/empty"
cat >"$tmp/huge.py" <<'PY'
import fcntl, os, pty, re, select, signal, struct, sys, termios, time
rows, cols, top = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
	os.environ["TERM"] = "xterm"
	os.execv(top[0], top)
out = b""
def read_until(pat, secs):		# a deadline, not a delay
	global out
	end = time.time() + secs
	while time.time() < end and not re.search(pat, out):
		if select.select([fd], [], [], 0.05)[0]:
			try:
				out += os.read(fd, 1 << 20)
			except OSError:
				return False
	return bool(re.search(pat, out))
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
read_until(rb"No PTO devices", 10)
out = b""
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
os.kill(pid, signal.SIGWINCH)
drawn = read_until(rb"No PTO devices", 10)
deepest = max([int(r) for r in re.findall(rb"\x1b\[(\d+);\d+H", out)] or [0])
def too_late(sig, frame):
	os.kill(pid, signal.SIGKILL)
os.write(fd, b"q")
signal.signal(signal.SIGALRM, too_late)
signal.alarm(10)			# at most 10 s for q
try:					# drain the pty until ptotop closes it
	while os.read(fd, 1 << 20):
		pass
except OSError:
	pass
status = os.waitpid(pid, 0)[1]
signal.alarm(0)
print("redrawn" if drawn else "not redrawn", "to row", deepest,
      "status", status)
sys.exit(not (drawn and status == 0 and deepest <= 500))
PY
for size in "10 32768" "9999 9999"; do
	PTO_STATS_DIR=$tmp/empty PTOTOP_PROC_ROOT=$tmp/empty \
		PTOTOP_SYSFS_ROOT=$tmp/empty timeout 60 \
		python3 "$tmp/huge.py" $size "$PTOTOP" >"$tmp/huge.out" 2>&1
	ok $? "UI resized to ${size% *} rows by ${size#* } columns: draws at most 500 rows and q quits ($(cat "$tmp/huge.out"))"
done

# ---- 3. clean exit and stale pages ------------------------------------------------
page=$(page_of "$shm" "$lg")
stop "$lg"
rc=$?
[ $rc -ne 0 ] && sed 's/^/# loadgen: /' "$tmp/loadgen.out" | head -n 60
ok $rc "load generator exits cleanly on SIGTERM"
stop "$lg2"
ok $? "nested load generator exits cleanly on SIGTERM"
pids=""
[ ! -e "$page" ]
ok $? "its stats page is removed at exit"

mkdir "$tmp/shm"
PTO_STATS_DIR="$tmp/shm" "$LOADGEN" -t 60 -n 16 -s 0 -p 5 >/dev/null 2>&1 &
crash=$!
pids="$crash"
wait_for 400 has_page "$tmp/shm" "$crash"
ok $? "second load generator publishes in a private directory"
kill -KILL "$crash"
wait "$crash" 2>/dev/null
pids=""
stale=$(page_of "$tmp/shm" "$crash")
[ -n "$stale" ] && [ -e "$stale" ]
ok $? "SIGKILL leaves a stale page behind"
# pid reuse: a live process (this shell) that does not map the page
reused="$tmp/shm/pto-stats.$$.9"
python3 - "$stale" "$reused" $$ <<'PY'
import struct, sys
page = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<i", page, 24, int(sys.argv[3]))	# pid, after magic/version/size/seq
open(sys.argv[2], "wb").write(page)
PY
PTO_STATS_DIR="$tmp/shm" "$PTOTOP" -j -n 1 >"$tmp/stale.json" &&
	check "$tmp/stale.json" "procs(docs[0], $crash) == []" \
		"dev(docs[0], 'sim') == []"
ok $? "a page whose process is gone is not listed"
[ ! -e "$stale" ]
ok $? "ptotop removes the stale page (same owner)"
[ ! -e "$reused" ] && check "$tmp/stale.json" "procs(docs[0], $$) == []"
ok $? "a page whose pid was reused by a process not mapping it is stale too"
# a writer killed between creating its page and renaming it into place
: >"$tmp/shm/.pto-stats.new.$crash.0"
: >"$tmp/shm/.pto-stats.new.$$.0"
PTO_STATS_DIR="$tmp/shm" "$PTOTOP" -j -n 1 >/dev/null &&
	[ ! -e "$tmp/shm/.pto-stats.new.$crash.0" ] &&
	[ -e "$tmp/shm/.pto-stats.new.$$.0" ]
ok $? "a dead writer's half-made page is removed, a live one's kept"
rm -f "$tmp/shm/.pto-stats.new.$$.0"
PTO_STATS_DIR="$tmp/shm" PTOTOP_PROC_ROOT="$tmp/none" PTOTOP_SYSFS_ROOT="$tmp/none" \
	"$PTOTOP" -b -n 1 | grep -q 'No PTO devices or runtimes found'
ok $? "says so when there is nothing to show"

# ---- 3b. pages of another version -------------------------------------------
# A live process mapping a page of version 1 (smaller: no task rings) or 3
# is not read but reported; a dead process's page is left alone.
cat >"$tmp/page.py" <<'PY'
# page.py DIR VERSION SIZE [PID]: a stats page header of that version; with
# no PID, this process's own page, kept mapped until it is killed
import mmap, os, struct, sys, time
d, version, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pid = int(sys.argv[4]) if len(sys.argv) > 4 else os.getpid()
path = "%s/pto-stats.%d.0" % (d, pid)
page = bytearray(size)
struct.pack_into("<QII", page, 0, 0x5054535041474531, version, size)
with open(path, "wb") as f:
    f.write(page)
if len(sys.argv) == 4:
    m = mmap.mmap(os.open(path, os.O_RDONLY), 0, prot=mmap.PROT_READ)
    time.sleep(120)
PY
mkdir "$tmp/ver"
python3 "$tmp/page.py" "$tmp/ver" 1 $((pgsize - 640)) &
v1=$!
python3 "$tmp/page.py" "$tmp/ver" 3 $((pgsize + 64)) &
v3=$!
pids="$v1 $v3"
python3 "$tmp/page.py" "$tmp/ver" 1 $((pgsize - 640)) "$crash"
maps_page() { grep -q "/pto-stats\.$1\.0\$" "/proc/$1/maps" 2>/dev/null; }
wait_for 200 maps_page "$v1" && wait_for 200 maps_page "$v3"
ok $? "processes $v1 and $v3 map pages of versions 1 and 3"
PTO_STATS_DIR="$tmp/ver" "$PTOTOP" -j -n 1 >"$tmp/ver.json" &&
	check "$tmp/ver.json" "docs[0]['processes'] == []" \
		"sorted((u['pid'], u['version'], u['file']) for u in docs[0]['unsupported_pages']) == sorted([($v1, 1, 'pto-stats.$v1.0'), ($v3, 3, 'pto-stats.$v3.0')])"
ok $? "JSON lists the live pages of versions 1 and 3, not the dead one's"
PTO_STATS_DIR="$tmp/ver" "$PTOTOP" -b -n 1 >"$tmp/ver.txt"
grep -q "^pid $v1 not shown: its stats page pto-stats.$v1.0 is version 1, from an older libpto; ptotop reads version 2\$" "$tmp/ver.txt" &&
	grep -q "^pid $v3 not shown: its stats page pto-stats.$v3.0 is version 3, from a newer libpto; ptotop reads version 2: update ptotop\$" "$tmp/ver.txt" &&
	! grep -q "pid $crash" "$tmp/ver.txt"
ok $? "text says which runtimes are not shown, and why"
PTO_STATS_DIR="$tmp/ver" "$PTOTOP" -j -n 1 -p "$v3" >"$tmp/ver3.json" &&
	check "$tmp/ver3.json" "[u['pid'] for u in docs[0]['unsupported_pages']] == [$v3]"
ok $? "-p filters them too"
if command -v tmux >/dev/null; then
	next_ui
	tmux -L "$tmux_sock" -f /dev/null new-session -d -s ptotop -x 80 -y 24 \
		"env TERM=screen PTO_STATS_DIR=$tmp/ver $PTOTOP"
	wait_for 100 screen_has "2 runtimes not shown: stats pages of other versions"
	ok $? "UI says so too"
	tmux -L "$tmux_sock" kill-server 2>/dev/null
else
	skip "tmux not installed"
fi
[ -e "$tmp/ver/pto-stats.$v1.0" ] && [ -e "$tmp/ver/pto-stats.$v3.0" ] &&
	[ -e "$tmp/ver/pto-stats.$crash.0" ]
ok $? "pages of other versions are left in place, a dead process's too"
for p in $pids; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
pids=""

# ---- 4. /dev/ptoN clients through fdinfo and sysfs (fake tree) ------------------
fake=$tmp/fake
fp=4242
mkdir -p "$fake/proc/$fp/fd" "$fake/proc/$fp/fdinfo" "$fake/sys/class/pto/pto0" \
	"$fake/sys/class/pto/pto1"
printf 'Character devices:\n  1 mem\n240 pto\n\nBlock devices:\n  8 sd\n' \
	>"$fake/proc/devices"
# UTF-8 (U+6A21 U+578B), then a byte that is no UTF-8 and an escape
printf 'fakeapp\0--model\0\346\250\241\345\236\213.bin\0\377\033x\0' \
	>"$fake/proc/$fp/cmdline"
ln -s /dev/pto0 "$fake/proc/$fp/fd/5"
ln -s /dev/pto0 "$fake/proc/$fp/fd/6"	# a dup(): same client id
ln -s /dev/null "$fake/proc/$fp/fd/7"
fdinfo() {
	printf 'pos:\t0\nflags:\t02\nmnt_id:\t21\nino:\t5\n'
	printf 'pto-driver:\tpto\npto-device:\tpto0\npto-client-id:\t17\n'
	printf 'pto-engine-cube:\t%s ns\npto-engine-vector:\t500 ns\n' "$1"
	printf 'pto-engine-aicpu:\t0 ns\npto-engine-accel:\t0 ns\n'
	printf 'pto-engine-capacity-cube:\t4\npto-engine-capacity-vector:\t2\n'
	printf 'pto-engine-capacity-aicpu:\t1\npto-engine-capacity-accel:\t1\n'
	printf 'pto-memory-heap:\t2048 KiB\npto-memory-window:\t64 KiB\n'
	printf 'pto-task-window:\t256\npto-tasks-in-flight:\t12\n'
	printf 'pto-tasks-done:\t%s\npto-tasks-failed:\t1\npto-state:\tactive\n' "$2"
}
fdinfo 1000 5000 >"$fake/proc/$fp/fdinfo/5"
cp "$fake/proc/$fp/fdinfo/5" "$fake/proc/$fp/fdinfo/6"
printf 'pos:\t0\nflags:\t02\n' >"$fake/proc/$fp/fdinfo/7"
sysfs=$fake/sys/class/pto/pto0
echo "4 2 1 1" >"$sysfs/cores"
echo "1000000 0 0 0" >"$sysfs/busy_ns"
echo 3 >"$sysfs/contexts"
echo 9000 >"$sysfs/tasks_done"
echo 2 >"$sysfs/tasks_failed"
echo 5242880 >"$sysfs/mem_used"		# other users' clients too
echo 536870912 >"$sysfs/mem_total"
echo "1 1 0 0" >"$fake/sys/class/pto/pto1/cores"

export PTOTOP_PROC_ROOT="$fake/proc" PTOTOP_SYSFS_ROOT="$fake/sys"
PTO_STATS_DIR="$tmp/shm" "$PTOTOP" -b -n 2 -d 2 --json >"$tmp/fd.json" &
top=$!
wait_for 200 grep -q . "$tmp/fd.json"
# between the two samples: the device and the client do more work
fdinfo 3000 7000 >"$fake/proc/$fp/fdinfo/5.new"
mv "$fake/proc/$fp/fdinfo/5.new" "$fake/proc/$fp/fdinfo/5"
echo "5000000 800000 0 0" >"$sysfs/busy_ns.new"
mv "$sysfs/busy_ns.new" "$sysfs/busy_ns"
wait "$top"
ok $? "ptotop with a fake /proc and /sys exits 0"
unset PTOTOP_PROC_ROOT PTOTOP_SYSFS_ROOT
check "$tmp/fd.json" "len(docs) == 2" \
	"[len(procs(d, $fp)) for d in docs] == [1, 1]" \
	"procs(docs[0], $fp)[0]['device'] == 'pto0'" \
	"procs(docs[0], $fp)[0]['client_id'] == 17" \
	"procs(docs[0], $fp)[0]['sources'] == ['fdinfo']" \
	"procs(docs[0], $fp)[0]['command'] == 'fakeapp --model \\u6a21\\u578b.bin ? x'"
ok $? "the fdinfo client is listed once (dup'ed fd), on pto0, with its command (UTF-8 kept)"
check "$tmp/fd.json" \
	"procs(docs[0], $fp)[0]['cores'] == {'cube': 4, 'vector': 2, 'aicpu': 1, 'accel': 1}" \
	"procs(docs[0], $fp)[0]['busy_ns']['cube'] == 1000" \
	"procs(docs[0], $fp)[0]['tasks_completed'] == 5000" \
	"procs(docs[0], $fp)[0]['tasks_failed'] == 1" \
	"procs(docs[0], $fp)[0]['tasks_in_flight'] == 12" \
	"procs(docs[0], $fp)[0]['tasks_submitted'] is None" \
	"procs(docs[0], $fp)[0]['state'] == 'active'" \
	"procs(docs[0], $fp)[0]['memory_bytes'] == {'heap': 2048 * 1024, 'window': 64 * 1024}" \
	"procs(docs[0], $fp)[0]['rings']['task']['size'] == 256" \
	"procs(docs[0], $fp)[0]['rings']['task']['in_use'] == 12"
ok $? "fdinfo fields parsed (engines, capacity, memory, window, tasks, state)"
check "$tmp/fd.json" "procs(docs[0], $fp)[0]['task_rings'] is None" \
	"docs[0]['unsupported_pages'] == []"
ok $? "an fdinfo client has no task rings (null)"
PTOTOP_PROC_ROOT="$fake/proc" PTOTOP_SYSFS_ROOT="$fake/sys" \
	PTO_STATS_DIR="$tmp/shm" "$PTOTOP" -b -R -n 1 >"$tmp/fd.txt"
grep -Eq "^ *$fp +[^ ]+ +pto0 " "$tmp/fd.txt" &&
	! grep -Eq 'resource|advice' "$tmp/fd.txt"
ok $? "-R prints no ring lines for it"
check "$tmp/fd.json" "sorted(d['name'] for d in docs[0]['devices']) == ['pto0', 'pto1']" \
	"dev(docs[0], 'pto0')[0]['cores'] == {'cube': 4, 'vector': 2, 'aicpu': 1, 'accel': 1}" \
	"dev(docs[0], 'pto0')[0]['contexts'] == 3" \
	"dev(docs[0], 'pto0')[0]['tasks_done'] == 9000" \
	"dev(docs[0], 'pto0')[0]['tasks_failed'] == 2" \
	"dev(docs[0], 'pto0')[0]['kind'] == 'pto'" \
	"dev(docs[0], 'pto1')[0]['processes'] == 0"
ok $? "sysfs devices listed with cores, contexts and task counts"
check "$tmp/fd.json" "dev(docs[0], 'pto0')[0]['memory_used_bytes'] == 5242880" \
	"dev(docs[0], 'pto0')[0]['memory_total_bytes'] == 536870912" \
	"dev(docs[0], 'pto1')[0]['memory_total_bytes'] is None"
ok $? "device memory from sysfs mem_used/mem_total, not the rows' sum"
grep -Eq '^pto0 .* 5\.0M/512\.0M$' "$tmp/fd.txt"
ok $? "text: pto0's MEM USED/TOTAL from sysfs"
check "$tmp/fd.json" \
	"abs(dev(docs[1], 'pto0')[0]['utilisation']['cube'] / (4000000 / (docs[1]['interval_s'] * 1e9 * 4)) - 1) < 1e-6" \
	"abs(dev(docs[1], 'pto0')[0]['utilisation']['vector'] / (800000 / (docs[1]['interval_s'] * 1e9 * 2)) - 1) < 1e-6" \
	"dev(docs[1], 'pto0')[0]['utilisation']['aicpu'] == 0" \
	"abs(procs(docs[1], $fp)[0]['tasks_per_s'] / (2000 / docs[1]['interval_s']) - 1) < 1e-6" \
	"abs(procs(docs[1], $fp)[0]['utilisation']['cube'] / (2000 / (docs[1]['interval_s'] * 1e9 * 4)) - 1) < 1e-6"
ok $? "device utilisation = delta busy_ns / (interval x cores), client tasks/s"

# the screen in a UTF-8 locale: a CJK character takes two columns, and a
# line is cut before a character that would not fit, never inside one
if command -v tmux >/dev/null; then
	mo=$(printf '\346\250\241\345\236\213')	# U+6A21 U+578B
	printf 'fakeapp\0--model\0%s%s%s%s%s%s%s%s.bin\0' $mo $mo $mo $mo \
		$mo $mo $mo $mo >"$fake/proc/$fp/cmdline"
	next_ui
	tmux -L "$tmux_sock" -f /dev/null new-session -d -s ptotop -x 100 -y 12 \
		"env LANG=C.UTF-8 TERM=screen PTOTOP_PROC_ROOT=$fake/proc PTOTOP_SYSFS_ROOT=$fake/sys PTO_STATS_DIR=$tmp/shm $PTOTOP -d 0.3 -p $fp"
	wait_for 200 screen_has "fakeapp --model $mo$mo"
	ok $? "UI shows a UTF-8 command line as it is"
	screen >"$tmp/utf8-screen.txt"
	python3 - "$tmp/utf8-screen.txt" <<'PY'
import sys, unicodedata
for line in open(sys.argv[1], encoding="utf-8"):
    cols = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in line.rstrip("\n"))
    if cols > 100:
        sys.exit("# %d columns: %s" % (cols, line))
PY
	ok $? "no line wider than the terminal, in columns"
	tmux -L "$tmux_sock" kill-server 2>/dev/null
else
	skip "tmux not installed"
	skip "tmux not installed"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
