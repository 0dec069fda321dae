#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Scheduler instructions per task as the simulated device grows: runs the
# ptobench-pto worker under callgrind for each core count and prints, per
# task, the instructions of the scheduling steps (reap, scan, releases,
# dispatch, retire: sched_steps), of the completions done outside them
# (with shards: hook_complete) and of waking cores (sim_kick, with the
# short tasks it runs on the kicking thread; with shards sim_ready).
# Instruction counts, not time: on a machine with fewer CPUs than
# simulated cores only they say whether the per-task cost stays flat.
#
#   ptobench-sched-cost [-d DIR] [-t TASKS] [-m MODES] [-s SHAPES] [CORES...]
#
# DIR holds ptobench-pto (default: this script's directory, where make
# puts both; tools/ptobench/sched-cost.sh itself looks in build/tools).
# MODES: thread,workers,shards (PTO_SCHED); SHAPES: ptobench shapes; CORES: the
# sim's cores per type (default 8 16 32 72).  In thread mode sched_steps
# also counts the scheduler thread's idle polls, which depend on how
# valgrind interleaves the threads: compare a wide shape (bgemm) there.
set -eu

dir=$(dirname "$0")
[ -x "$dir/ptobench-pto" ] || dir=build/tools
tasks=20000
modes=workers,thread,shards
shapes=chain,bgemm
usage() {
	sed -n '4,20p' "$0" | sed 's/^# \{0,1\}//'
	exit "$1"
}
while getopts d:t:m:s:h opt; do
	case "$opt" in
	d) dir=$OPTARG ;;
	t) tasks=$OPTARG ;;
	m) modes=$OPTARG ;;
	s) shapes=$OPTARG ;;
	h) usage 0 ;;
	*) usage 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 8 16 32 72

worker=$dir/ptobench-pto
[ -x "$worker" ] || {
	echo "sched-cost: no $worker (make ptobench first)" >&2; exit 1; }
command -v valgrind >/dev/null || {
	echo "sched-cost: needs valgrind (scripts/deps.sh bench)" >&2; exit 1; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

# inclusive instructions of function $2 in callgrind output $1 (0: none);
# with LTO a static function may be named f.lto_priv.N
inclusive() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f="$2" '$0 ~ ":" f "(\\.[a-z_]+\\.[0-9]+)* \\[" {
				gsub(",", "", $1); print $1; exit }
			END { print 0 }' | head -1
}

printf '%-8s %-7s %6s %8s %11s %14s %10s\n' mode shape cores tasks \
	'steps/task' 'complete/task' 'wake/task'
for mode in $(echo "$modes" | tr , ' '); do
	for shape in $(echo "$shapes" | tr , ' '); do
		for cores in "$@"; do
			out=$tmp/cg.$mode.$shape.$cores
			PTO_SCHED=$mode valgrind --tool=callgrind \
				--callgrind-out-file="$out" "$worker" \
				--shape "$shape" --tasks "$tasks" \
				--cores "$cores" >"$out.log" 2>&1 || {
				echo "sched-cost: $mode $shape $cores failed:" >&2
				tail -5 "$out.log" >&2
				exit 1
			}
			# the worker runs the graph twice (a warm-up first)
			n=$(sed -n 's/.* tasks=\([0-9]*\) .*/\1/p' "$out.log")
			n=$((n * 2))
			steps=$(inclusive "$out" sched_steps)
			done_=$(inclusive "$out" hook_complete)
			wake=$(($(inclusive "$out" sim_kick) +
				$(inclusive "$out" sim_ready)))
			printf '%-8s %-7s %6s %8s %11s %14s %10s\n' "$mode" \
				"$shape" "$cores" "$n" $((steps / n)) \
				$((done_ / n)) $((wake / n))
		done
	done
done
