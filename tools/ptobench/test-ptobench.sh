#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Smoke test of ptobench (not a benchmark): every shape with every built
# implementation once, with few tasks.  The JSON must parse, every cell must
# have a positive time and RSS, and all implementations must have run the
# same number of tasks per shape (the workers share one geometry).
set -u
dir=$(dirname "$0")
bench="$dir/ptobench"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
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
echo "1..8"
echo "# implementations: $impls"

case ",$impls," in *,pto,*) r=0 ;; *) r=1 ;; esac
ok $r "the pto worker is built"

"$bench" --help >/dev/null 2>&1
ok $? "--help exits 0"

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
          "paged-attn"]
doc = json.load(open(path))
if mode == "parse":
    sys.exit(0)
bad = []
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
            tasks.add(c["tasks"])
        if len(tasks) > 1:
            bad.append("%s: task counts differ %s" % (s, sorted(tasks)))
    if "pto" in impls and "gomp" in impls:
        for s in shapes:
            if not doc["ratio_pto_over_gomp"].get(s, 0) > 0:
                bad.append("ratio " + s)
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

grep -q '^paged-attn' "$tmp/bench.txt"
ok $? "the table lists every shape"

"$bench" --impls "$impls" --shapes chain,bgemm --flat=1000 --reps 1 \
	--timeout 120 --json "$tmp/flat.json" >/dev/null 2>"$tmp/flat.err" &&
	check_json "$tmp/flat.json" flat "$impls"
ok $? "memory flatness mode reports an RSS ratio"

[ $fails -eq 0 ]
