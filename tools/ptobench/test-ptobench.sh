#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Smoke test of ptobench (not a benchmark): every shape with every built
# implementation once, with few tasks.  The JSON must parse, every cell must
# have a positive time and RSS, and all implementations must have run the
# same number of tasks per shape (the workers share one geometry).  The
# sparse shape's latencies must be ordered, 0 < p50 <= p99 <= max; how
# large they are is not tested, this machine's load decides it.
#
# Then the METG mode on tiny graphs: every pattern at widths 2 and 5 (5: not
# a power of two, so fft and tree lose points and spread wraps) with every
# built implementation.  Each worker checks itself against the sequential
# reference (task count, FLOPs, the hash of every task's inputs); here the
# driver's report must show exact task and FLOP counts, the same results in
# every implementation, and a dropped dependency must fail the pto worker.
#
# And the driver's manners: bad option values exit 2 with a message naming
# the option, output paths are checked (and --plot's directory created)
# before the run, and its workers die with it however it is killed.
set -u
dir=$(dirname "$0")
bench="$dir/ptobench"
tmp=$(mktemp -d)
# the pto workers of the signal tests, by their --tasks count (below)
marks=""
cleanup() {
	for m in $marks; do
		for p in $(workers "$m"); do
			kill -9 "$p"
		done
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
n=0
fails=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}

impls=""
for i in pto gomp omp starpu; do
	[ -x "$dir/ptobench-$i" ] && impls="$impls${impls:+,}$i"
done
skip() {
	n=$((n + 1))
	echo "ok $n - # SKIP $1"
}

echo "1..72"
echo "# implementations: $impls"

case ",$impls," in *,pto,*) r=0 ;; *) r=1 ;; esac
ok $r "the pto worker is built"

"$bench" --help >"$tmp/help" 2>&1
ok $? "--help exits 0"

if [ -w /dev/full ]; then
	"$bench" --help >/dev/full 2>"$tmp/full.err"
	rc=$?
	[ $rc -ne 0 ] && grep -q 'standard output' "$tmp/full.err"
	ok $? "--help >/dev/full fails with a message (exit $rc)"
else
	skip "no /dev/full"
fi

! grep -qi 'issue' "$tmp/help"
ok $? "--help refers to no issue"

# the default core count is what the process may use, not what is online
if command -v taskset >/dev/null 2>&1; then
	taskset -c 0 "$bench" --shapes chain --impls pto --tasks 2000 \
		--reps 1 --json "$tmp/one.json" >/dev/null 2>&1 &&
		python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["config"]["cores"] != 1)' \
		"$tmp/one.json"
	ok $? "under taskset -c 0, --cores defaults to 1"
else
	skip "no taskset"
fi

# --help and the man page's option items name the same options; the source
# tree is the current directory or above the build tree
man=tools/ptobench/ptobench.1
d=$(cd "$dir" && pwd)
while [ ! -f "$man" ] && [ "$d" != / ]; do
	man=$d/tools/ptobench/ptobench.1
	d=$(dirname "$d")
done
# the options a text names: --word or -letter, not 1-D or gemm64-acc
opts_of() {
	sed 's/\\-/-/g' "$1" |
		grep -oE -- '(^|[^a-zA-Z0-9-])--?[a-zA-Z][a-z-]*' |
		sed 's/^[^-]*//' | sort -u
}
if [ -f "$man" ]; then
	opts_of "$tmp/help" >"$tmp/help.opts"
	grep -A1 '^\.TP' "$man" | grep '^\.B' >"$tmp/man.items"
	opts_of "$tmp/man.items" >"$tmp/man.opts"
	diff "$tmp/help.opts" "$tmp/man.opts" >"$tmp/opts.diff"
	rc=$?
	[ $rc -ne 0 ] && sed 's/^/# --help vs ptobench.1: /' "$tmp/opts.diff"
	ok $rc "ptobench.1 documents exactly the options of --help"
else
	skip "no source tree for ptobench.1"
fi

# Bad values and misplaced options: exit 2 with the message after '|'
# before anything runs (the timeout: a value taken runs a benchmark).
while IFS='|' read -r args want; do
	# shellcheck disable=SC2086
	timeout 60 "$bench" $args </dev/null >/dev/null 2>"$tmp/bad.err"
	rc=$?
	[ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/bad.err"
	r=$?
	[ $r -ne 0 ] && sed 's/^/# /' "$tmp/bad.err"
	ok $r "'$args' exits 2 (exit $rc) saying '$want'"
done <<'BAD'
--tasks -5|--tasks: '-5' is not a number between 1 and
--tasks 99999999999999999999|--tasks: '99999999999999999999' is not a number
--tasks 0|--tasks: '0' is not a number between 1 and
--tasks 10x|--tasks: '10x' is not a number
--reps 0|--reps: '0' is not a number between 1 and 1000
--cores -1|--cores: '-1' is not a number between 1 and
--load 257|--load: '257' is not a number between 0 and 256
--timeout 1.5|--timeout: '1.5' is not a number
--flat=abc|--flat: 'abc' is not a number
--flat 5|write --flat=5
--flat --shapes sparse|--flat does not measure sparse
--gap-us 1000001|--gap-us: '1000001' is not a number between 0 and 1000000
--metg --gap-us 5|--gap-us does not work with --metg
--shapes chain,nope|--shapes: unknown name 'nope'
--shapes chain,|--shapes: an empty item in the list 'chain,'
--impls ,pto|--impls: an empty item in the list ',pto'
--metg --patterns fft,,tree|--patterns: an empty item in the list 'fft,,tree'
--metg --widths 2,|--widths: an empty item in the list '2,'
--metg --steps 0|--steps: '0' is not a number between 1 and
--metg --radix 10|--radix: '10' is not a number between 1 and 9
--metg --min-grain abc|--min-grain: 'abc' is not a number
--metg --min-grain 0x10|--min-grain: '0x10' is not a number
--metg --max-grain 1e2|--max-grain: '1e2' is not a number
--metg --max-grain inf|--max-grain: 'inf' is not a number
--metg --min-grain +5|--min-grain: '+5' is not a number
--metg --min-grain .|--min-grain: '.' is not a number
--metg --peak-ms -1|--peak-ms: '-1' is not a number
--metg --widths 2x|--widths: '2x' is not a number
--metg --min-grain 8 --max-grain 4|--max-grain 4 is below --min-grain 8
--metg --vary 3|--vary wants N:F
--metg --vary 1:5|--vary wants N:F
--views --tasks 63|--tasks: '63' is not a number between 64 and
--steps 5|--steps works only with --metg
--metg --shapes chain|--shapes does not work with --metg
--views --cores 2|--cores does not work with --views
BAD

# Output paths are checked before any worker runs (the fake ones would
# leave a file behind).
mkdir "$tmp/fake"
for w in pto peak; do
	printf '#!/bin/sh\ntouch "%s/ran"\nexit 1\n' "$tmp/fake" \
		>"$tmp/fake/ptobench-$w"
	chmod +x "$tmp/fake/ptobench-$w"
done
: >"$tmp/file"
while IFS='|' read -r args want; do
	# shellcheck disable=SC2046
	PTOBENCH_WORKER_DIR="$tmp/fake" timeout 60 "$bench" --impls pto \
		--reps 1 $(echo "$args" | sed "s|TMP|$tmp|") \
		</dev/null >/dev/null 2>"$tmp/out.err"
	rc=$?
	[ $rc -eq 2 ] && [ ! -e "$tmp/fake/ran" ] &&
		grep -qF -- "$want" "$tmp/out.err"
	r=$?
	[ $r -ne 0 ] && sed 's/^/# /' "$tmp/out.err"
	rm -f "$tmp/fake/ran"
	ok $r "'$args' fails before the run (exit $rc)"
done <<'OUT'
--json TMP/no/such/dir/out.json|--json: cannot write
--metg --json TMP/file/out.json|--json: cannot write
--metg --plot TMP/file/plots|--plot: cannot write into directory
OUT

"$bench" --shapes no-such-shape >/dev/null 2>&1
[ $? -ne 0 ]
ok $? "an unknown shape is refused"

"$bench" --impls "$impls" --tasks 2000 --reps 1 --timeout 120 \
	--json "$tmp/bench.json" >"$tmp/bench.txt" 2>"$tmp/bench.err"
rc=$?
[ $rc -ne 0 ] && sed 's/^/# /' "$tmp/bench.err"
ok $rc "every shape x {$impls} runs"

# Python 3 is in the check group of scripts/deps.sh.
check_json() {
	python3 - "$@" <<'EOF'
import json, sys

path, mode, impls = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
shapes = ["chain", "bgemm", "bgemm-weight", "bgemm-scratch", "stencil",
          "paged-attn", "wait", "sparse", "runs"]
doc = json.load(open(path))
if mode == "parse":
    sys.exit(0)
bad = []


def lat_ok(c):
    # sparse: 0 < p50 <= p99 <= max, the medians and every run's
    lat = c.get("latency_ns") or {}
    med = [(lat.get(k) or {}).get("median", 0)
           for k in ("p50", "p99", "max")]
    runs = c.get("samples_latency_ns") or []
    return (0 < med[0] <= med[1] <= med[2] and len(runs) == c["runs"] > 0 and
            all(0 < r[0] <= r[1] <= r[2] for r in runs))


if mode == "cells":
    cells = {(c["shape"], c["impl"]): c for c in doc["results"]}
    for s in shapes:
        tasks = set()
        for i in impls:
            c = cells.get((s, i))
            if (c is None or c["ns_per_task"] is None or
                    not c["ns_per_task"]["median"] > 0 or
                    not c["peak_rss_kib"]["median"] > 0):
                bad.append("%s/%s" % (s, i))
                continue
            if s == "sparse" and not lat_ok(c):
                bad.append("sparse/%s: latencies %s" % (i, c.get("latency_ns")))
            tasks.add(c["tasks"])
        if len(tasks) > 1:
            bad.append("%s: task counts differ %s" % (s, sorted(tasks)))
    # sparse's ns/task is its gap: no ratio
    if "pto" in impls and "gomp" in impls:
        for s in shapes:
            r = doc["ratio_pto_over_gomp"].get(s)
            if s == "sparse" and r is not None:
                bad.append("ratio sparse: %s" % r)
            elif s != "sparse" and not (r or 0) > 0:
                bad.append("ratio " + s)
elif mode == "sparse":
    cells = {c["impl"]: c for c in doc["results"] if c["shape"] == "sparse"}
    for i in impls:
        if i not in cells or cells[i]["failed"] or not lat_ok(cells[i]):
            bad.append("sparse/%s: %s" % (i, cells.get(i)))
    if len(doc["results"]) != len(impls):
        bad.append("%d cells, not %d" % (len(doc["results"]), len(impls)))
elif mode == "metg":
    pats = ["trivial", "stencil_1d", "nearest", "spread", "fft", "tree",
            "all_to_all", "random_nearest"]
    steps = doc["config"]["steps"]
    fpi = doc["config"]["flops_per_iter"]
    seen = set()
    for r in doc["results"]:
        p, w = r["pattern"], r["width"]
        seen.add((p, w))
        # The tree fans out: step t has min(2^t, width) points.
        want = (sum(min(2 ** t, w) for t in range(steps)) if p == "tree"
                else w * steps)
        if r["tasks"] != want:
            bad.append("%s/%d: %d tasks, expected %d" % (p, w, r["tasks"],
                                                         want))
        for i in impls:
            pts = r["impls"].get(i, {}).get("points", [])
            if not pts:
                bad.append("%s/%d/%s: no points" % (p, w, i))
            for pt in pts:
                if (pt["runs"] < 1 or pt["failed"] or pt["mismatch"] or
                        pt["tasks"] != want or
                        pt["flops"] != want * pt["iters"] * fpi or
                        not (pt["efficiency"] or 0) > 0 or
                        not (pt["cpu_us_per_task"] or 0) > 0):
                    bad.append("%s/%d/%s: %s" % (p, w, i, pt))
        for g in range(len(doc["peak"])):
            checks = set(r["impls"][i]["points"][g]["check"] for i in impls
                         if r["impls"].get(i))
            if len(checks) != 1:
                bad.append("%s/%d: results differ %s" % (p, w, checks))
    for p in pats:
        for w in (2, 5):
            if (p, w) not in seen:
                bad.append("missing %s/%d" % (p, w))
elif mode == "vary":
    # one task in N, by its seed (taskbench.h), runs F times the iterations
    M = (1 << 64) - 1

    def mix(x):
        x ^= x >> 31
        x = x * 0x7fb5d329728ea185 & M
        x ^= x >> 27
        x = x * 0x81dadef4bc2dd44d & M
        return x ^ x >> 33

    every = doc["config"]["vary_every"]
    factor = doc["config"]["vary_factor"]
    steps = doc["config"]["steps"]
    fpi = doc["config"]["flops_per_iter"]
    for r in doc["results"]:
        w = r["width"]
        seeds = [mix(((t << 32 | i) + 0x9e3779b97f4a7c15) & M)
                 for t in range(steps) for i in range(w)]
        varied = sum(1 for s in seeds if s % every == 0)
        if not 0 < varied < len(seeds):
            bad.append("%s: %d of %d varied" % (r["pattern"], varied,
                                                len(seeds)))
        for i in impls:
            for pt in r["impls"][i]["points"]:
                want = (len(seeds) + varied * (factor - 1)) * \
                    pt["iters"] * fpi
                if pt["runs"] < 1 or pt["failed"] or pt["flops"] != want:
                    bad.append("%s/%s: %s, want %d FLOPs" %
                               (r["pattern"], i, pt, want))
elif mode == "svg":
    import xml.dom.minidom
    for f in sys.argv[4:]:
        xml.dom.minidom.parse(f)
elif mode == "views":
    # per case: views infer what tile-major does, ranges more; same results
    cells = {}
    for c in doc["views"]:
        cells.setdefault((c["case"], c["cores"]), {})[c["layout"]] = c
    for key, lay in cells.items():
        if set(lay) != {"tiled", "ranges", "views"}:
            bad.append("%s: layouts %s" % (key, sorted(lay)))
            continue
        if any(c["failed"] for c in lay.values()):
            bad.append("%s: a run failed" % (key,))
        # edges to producers already retired are not counted: exact
        # only where kernels sleep long enough for none to retire first
        exact = key[0].startswith("sleep")
        if (exact and lay["views"]["edges"] != lay["tiled"]["edges"]) or \
           lay["ranges"]["edges"] <= lay["views"]["edges"]:
            bad.append("%s: edges %s" % (key, {l: c["edges"]
                                               for l, c in lay.items()}))
        if len({c["checksum"] for c in lay.values()}) != 1:
            bad.append("%s: checksums differ" % (key,))
    if not cells:
        bad.append("no views cells")
elif mode == "flat":
    for c in doc["flat"]:
        if not (c["ratio"] or 0) > 0 or c["large_tasks"] < 9 * c["small_tasks"]:
            bad.append("%s/%s" % (c["shape"], c["impl"]))
    if not doc["flat"]:
        bad.append("no flat cells")
for b in bad:
    print("# bad:", b)
sys.exit(1 if bad else 0)
EOF
}

check_json "$tmp/bench.json" parse "$impls"
ok $? "JSON is well-formed"

check_json "$tmp/bench.json" cells "$impls"
ok $? "every cell has a positive figure and equal task counts"

grep -q '^paged-attn' "$tmp/bench.txt" && grep -q '^wait' "$tmp/bench.txt" &&
	grep -q '^sparse' "$tmp/bench.txt" && grep -q '^runs' "$tmp/bench.txt"
ok $? "the table lists every shape"

# sparse: every worker reports its submit-to-start latencies, in ns
r=0
for i in $(echo "$impls" | tr , ' '); do
	"$dir/ptobench-$i" --shape sparse --tasks 300 --gap-us 5 --timeout 120 \
		>"$tmp/sparse-$i.out" 2>&1
	rc=$?
	awk '/^result / { for (f = 2; f <= NF; f++) {
			split($f, kv, "="); v[kv[1]] = kv[2] + 0 } }
	     END { exit !(v["lat_p50"] > 0 && v["lat_p50"] <= v["lat_p99"] &&
			  v["lat_p99"] <= v["lat_max"]) }' "$tmp/sparse-$i.out" &&
		[ $rc -eq 0 ] && continue
	r=1
	sed "s/^/# $i: /" "$tmp/sparse-$i.out"
done
ok $r "every sparse worker prints 0 < lat_p50 <= lat_p99 <= lat_max"

# and the driver their medians, in the table and the JSON
"$bench" --impls "$impls" --shapes sparse --tasks 500 --gap-us 10 --reps 2 \
	--timeout 120 --json "$tmp/sparse.json" >"$tmp/sparse.txt" \
	2>"$tmp/sparse.err"
rc=$?
[ $rc -ne 0 ] && sed 's/^/# /' "$tmp/sparse.err"
ok $rc "--shapes sparse runs {$impls}"

check_json "$tmp/sparse.json" sparse "$impls"
ok $? "sparse JSON: 0 < p50 <= p99 <= max latency in every run"

r=0
num='[0-9]+\.[0-9]+'
for i in $(echo "$impls" | tr , ' '); do
	grep -Eq "^sparse +$i +$num +$num +\( *$num - +$num\) +$num +$num" \
		"$tmp/sparse.txt" || r=1
done
! grep -q 'ns/task' "$tmp/sparse.txt" || r=1
[ $r -ne 0 ] && sed 's/^/# /' "$tmp/sparse.txt"
ok $r "sparse table: p50, p99 (min - max), max per implementation"

# --json -: standard output holds the JSON alone, the table goes to stderr
"$bench" --impls pto --shapes chain --tasks 2000 --reps 1 --timeout 120 \
	--json - >"$tmp/stdout.json" 2>"$tmp/stdout.err" &&
	check_json "$tmp/stdout.json" parse pto &&
	grep -q '^chain' "$tmp/stdout.err"
ok $? "--json -: standard output is the JSON alone, the table on stderr"

"$bench" --impls "$impls" --shapes chain,bgemm --flat=1000 --reps 1 \
	--timeout 120 --json "$tmp/flat.json" >/dev/null 2>"$tmp/flat.err" &&
	check_json "$tmp/flat.json" flat "$impls"
ok $? "memory flatness mode reports an RSS ratio"

"$bench" --metg --impls "$impls" --widths 2,5 --steps 6 --reps 1 \
	--max-grain 3 --min-grain 3 --peak-ms 5 --timeout 120 \
	--json "$tmp/metg.json" --plot "$tmp/plots/metg" >"$tmp/metg.txt" \
	2>"$tmp/metg.err"
rc=$?
[ $rc -ne 0 ] && sed 's/^/# /' "$tmp/metg.err"
ok $rc "--metg runs every pattern x {$impls}"

[ -f "$tmp/plots/metg/metg-all.svg" ]
ok $? "--plot creates its directory, parents included"

check_json "$tmp/metg.json" parse "$impls"
ok $? "METG JSON is well-formed"

check_json "$tmp/metg.json" metg "$impls"
ok $? "METG: exact task and FLOP counts, equal results in every implementation"

grep -q '^random_nearest  *5 ' "$tmp/metg.txt" &&
	grep -q '^all_to_all, width 2,' "$tmp/metg.txt"
ok $? "METG table lists every pattern and width"

check_json "$tmp/metg.json" svg "$impls" "$tmp/plots/metg/metg-all.svg" \
	"$tmp/plots/metg/metg-fft-w5.svg"
ok $? "METG plots are well-formed SVG"

"$bench" --metg --impls "$impls" --patterns trivial,stencil_1d --widths 5 \
	--steps 12 --reps 1 --max-grain 3 --min-grain 3 --peak-ms 5 \
	--timeout 120 --vary 3:4 --json "$tmp/vary.json" >"$tmp/vary.txt" \
	2>"$tmp/vary.err"
rc=$?
[ $rc -ne 0 ] && sed 's/^/# /' "$tmp/vary.err"
ok $rc "--metg --vary runs variable kernels in {$impls}"

check_json "$tmp/vary.json" vary "$impls"
ok $? "--vary: every implementation ran exactly the varied tasks' FLOPs"

# --views: every case runs in every layout; views remove the false
# dependencies byte ranges give row-major tiles, and nothing else
"$bench" --views --reps 1 --tasks 2000 --json "$tmp/views.json" \
	>"$tmp/views.txt" 2>"$tmp/views.err"
rc=$?
[ $rc -ne 0 ] && sed 's/^/# /' "$tmp/views.err"
ok $rc "--views runs every case in every layout"

check_json "$tmp/views.json" views "$impls"
ok $? "--views: views infer the tile-major edges, ranges more, same results"

# Workers die with the driver: kill -9 (PR_SET_PDEATHSIG), SIGTERM and
# SIGINT (the driver kills and reaps them and exits with 128 + the signal).
# Each run has a --tasks count of its own to find its processes by (a
# zombie, dead but not reaped, has no command line), and a timeout in case
# its worker outlives the test.
wdir=$(cd "$dir" && pwd -P)
wre=$(printf '%s\n' "$wdir/ptobench-pto" | sed 's/[][\.*^$+?(){}|]/\\&/g')
mark=$((900000000 + $$ % 100000 * 10))

# the pto worker of the run with --tasks $1: the exact binary path
workers() {
	pgrep -f "^$wre --shape chain --tasks $1 "
}
worker_up() {
	workers "$1" >/dev/null
}
# neither the driver nor its load nor its worker is left
all_gone() {
	! pgrep -f -- "--tasks $1 " >/dev/null
}
# poll N CMD...: CMD succeeds within N tenths of a second
poll() {
	tries=$1
	shift
	until "$@"; do
		[ "$tries" -gt 0 ] || return 1
		tries=$((tries - 1))
		sleep 0.1
	done
}
# killed SIG MARK STATUS: kill a long run's driver (started with $pre) with
# SIG once its worker runs; it must exit with STATUS (or any) and take its
# worker and competing load along
killed() {
	marks="$marks $2"
	# shellcheck disable=SC2086
	PTOBENCH_WORKER_DIR="$wdir" $pre "$bench" --impls pto --shapes chain \
		--tasks "$2" --reps 1 --timeout 120 --load 1 \
		</dev/null >/dev/null 2>&1 &
	bg=$!
	if ! poll 100 worker_up "$2"; then
		kill -9 "$bg"
		wait "$bg" 2>/dev/null
		echo "# no worker started"
		return 1
	fi
	kill -s "$1" "$bg"
	wait "$bg" 2>/dev/null
	rc=$?
	[ "$3" = any ] || [ "$rc" -eq "$3" ] ||
		{ echo "# exit status $rc, not $3"; return 1; }
	poll 50 all_gone "$2" && return 0
	pgrep -af -- "--tasks $2 " | sed 's/^/# left: /'
	return 1
}

if ! command -v pgrep >/dev/null; then
	skip "no pgrep"
	skip "no pgrep"
	skip "no pgrep"
else
	pre=""
	killed KILL "$mark" any
	ok $? "kill -9 of ptobench takes its worker and load along"
	killed TERM $((mark + 1)) 143
	ok $? "SIGTERM: ptobench kills its worker and load, exits 143"
	if env --default-signal=INT true 2>/dev/null; then
		# not ignored, as sh leaves it for background commands
		pre="env --default-signal=INT"
		killed INT $((mark + 2)) 130
		ok $? "SIGINT: ptobench kills its worker and load, exits 130"
	else
		skip "env --default-signal is not supported"
	fi
fi

# a worker past --timeout: said in those words, not as "signal 14"
timeout 60 "$bench" --impls pto --shapes chain --tasks 100000000 --reps 1 \
	--timeout 1 </dev/null >/dev/null 2>"$tmp/timeout.err"
rc=$?
[ $rc -eq 1 ] && grep -q 'ran past --timeout' "$tmp/timeout.err" &&
	! grep -q 'signal 14' "$tmp/timeout.err"
ok $? "a worker past --timeout: exit 1, said as such (exit $rc)"

# SIGTERM once a run has completed: that run's result is printed and
# written, the run killed is neither a result nor a failure, exit 143
if env --default-signal=TERM true 2>/dev/null; then
	env --default-signal=TERM "$bench" --impls pto --shapes chain \
		--tasks 200000 --reps 1000 -v --json "$tmp/stop.json" \
		</dev/null >"$tmp/stop.out" 2>"$tmp/stop.err" &
	bg=$!
	poll 300 grep -q ' ns/task ' "$tmp/stop.err"
	kill -TERM "$bg"
	wait "$bg"
	rc=$?
	[ $rc -eq 143 ] &&
		grep -Eq '^chain +pto +[0-9]+\.[0-9]' "$tmp/stop.out" &&
		grep -q 'stopped by' "$tmp/stop.err" &&
		! grep -q 'failed' "$tmp/stop.err" &&
		check_json "$tmp/stop.json" parse pto
	ok $? "SIGTERM after a run: its result is printed and written, exit 143 (exit $rc)"
else
	skip "env --default-signal is not supported"
fi

PTOBENCH_METG_FAULT=1 "$dir/ptobench-pto" --metg --pattern stencil_1d \
	--width 2 --steps 4 --iters 8 --cores 2 >/dev/null 2>"$tmp/fault.err"
rc=$?
[ $rc -ne 0 ] && grep -q 'dependency was missed' "$tmp/fault.err"
ok $? "a dropped dependency fails the pto worker's check"

# the scheduler's instruction counts: a line per mode x shape x cores
# (not under valgrind: a sanitized build, which valgrind cannot run)
if ldd "$dir/ptobench-pto" 2>/dev/null | grep -q 'lib[at]san'; then
	echo "ok $((n + 1)) - # SKIP sanitized build: no valgrind"
	n=$((n + 1))
elif command -v valgrind >/dev/null; then
	"$dir/ptobench-sched-cost" -d "$dir" -t 500 -s chain 2 4 \
		>"$tmp/cost.txt" 2>"$tmp/cost.err"
	rc=$?
	# steps in every mode; completions outside them only with shards
	[ $rc -eq 0 ] && [ "$(awk 'NR > 1 && $5 > 0 &&
		(($1 == "shards") == ($6 > 0))' "$tmp/cost.txt" |
		wc -l)" -eq 6 ]
	rc=$?
	[ $rc -ne 0 ] && sed 's/^/# /' "$tmp/cost.txt" "$tmp/cost.err"
	ok $rc "ptobench-sched-cost counts scheduler instructions per task"
else
	echo "ok $((n + 1)) - # SKIP no valgrind"
	n=$((n + 1))
fi

[ $fails -eq 0 ]
