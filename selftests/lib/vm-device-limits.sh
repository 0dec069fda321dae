#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Ring sizes beyond what pto.ko allows, inside the VM harness (O set to
# the build tree, /dev/pto0 present): the runtime is refused with a
# message naming the setting and the module parameter that limits it,
# not a bare "Invalid argument" from SETUP; and a task the device fails
# for one of its limits is said to be a failed task, not a ring's size;
# a user whose max_user_memory leaves no room is refused with -ENOMEM
# naming the limits (it was -EINVAL after messages of a "0 MiB" heap).
set -u
O=${O:-build}
PTORUN=$O/tools/ptorun
SO=$O/samples/bgemm_builtin.so
P=/sys/module/pto/parameters
n=0
failed=0
out=/tmp/vm-device-limits.$$

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

if [ ! -c /dev/pto0 ] || [ ! -r $P/max_task_window ] ||
   [ ! -x "$PTORUN" ] || [ ! -f "$SO" ]; then
	echo "1..1"
	echo "ok 1 # SKIP needs /dev/pto0, pto.ko, $PTORUN and $SO"
	exit 0
fi
echo "1..8"

# refused OPTION VALUE PARAM SETTING: exit 1 naming PARAM and SETTING
refused() {
	PTO_HEAP_SIZE=4194304 "$PTORUN" -d /dev/pto0 "$1" "$2" "$SO" \
		</dev/null >"$out" 2>&1
	st=$?
	sed 's/^/# /' "$out" | tail -n 3
	[ $st -eq 1 ] && grep -q "$3, see pto(4)" "$out" &&
		grep -q "$4" "$out"
}

refused -w $(($(cat $P/max_task_window) * 2)) max_task_window \
	PTO_TASK_WINDOW
ok $? "a task window above max_task_window is refused, naming both"
refused -D $(($(cat $P/max_dep_pool) * 2)) max_dep_pool PTO_DEP_POOL
ok $? "a dependency pool above max_dep_pool is refused, naming both"
macs=$(cat $P/max_task_macs)
echo 100 >$P/max_task_macs
PTO_HEAP_SIZE=4194304 "$PTORUN" -d /dev/pto0 "$SO" </dev/null >"$out" 2>&1
st=$?
echo "$macs" >$P/max_task_macs
sed 's/^/# /' "$out" | tail -n 3
[ $st -eq 1 ] && grep -q 'failed: a task failed: Argument list too long' \
	"$out" && ! grep -q 'larger than its ring' "$out" &&
	grep -q "failed: Argument list too long (-7: .*max_task_macs" "$out"
ok $? "a task over max_task_macs: a failed task, which names the limit"
# an arena max_heap_size cuts: pto_malloc's failure says so, naming it
heap=$(cat $P/max_heap_size)
echo 8388608 >$P/max_heap_size
PTO_HEAP_SIZE=1048576 "$PTORUN" -d /dev/pto0 "$SO" batch=16 m=8 n=8 k=8 \
	</dev/null >"$out" 2>&1
st=$?
echo "$heap" >$P/max_heap_size
sed 's/^/# /' "$out" | tail -n 3
[ $st -eq 1 ] &&
	grep -q "cut to what the device allows: pto.ko's max_heap_size" "$out" &&
	grep -q "unless libpto's line above says the device cut" "$out"
ok $? "pto_malloc beyond an arena max_heap_size cut: the limit is named"
# libpto's default rings (256 MiB) shrink to fit max_heap_size unsaid;
# rings asked for are said to shrink
"$PTORUN" -d /dev/pto0 "$SO" </dev/null >"$out" 2>&1
st=$?
[ $st -eq 0 ] && ! grep -q 'heap: the heap rings get' "$out"
ok $? "the default rings shrink to fit, unsaid (status $st)"
PTO_HEAP_SIZE=128M "$PTORUN" -d /dev/pto0 "$SO" </dev/null >"$out" 2>&1
st=$?
sed 's/^/# /' "$out" | grep 'heap rings get'
[ $st -eq 0 ] && grep -q 'heap: the heap rings get' "$out"
ok $? "PTO_HEAP_SIZE=128M shrinks, said (status $st)"
# a user of its own (root is exempt from max_user_memory): only in the
# VM harness's guest (PTO_KO set), which this may add a user to
# as_limited BYTES ENV...: ptorun the sample as ptolimit with BYTES of
# max_user_memory, the device node open to all meanwhile; sets $st
as_limited() {
	umem=$(cat $P/max_user_memory)
	mode=$(stat -c %a /dev/pto0)
	echo "$1" >$P/max_user_memory
	chmod 0666 /dev/pto0
	shift
	su -s /bin/sh ptolimit -c \
		"LD_LIBRARY_PATH=$O $* $PTORUN -d /dev/pto0 $SO" \
		</dev/null >"$out" 2>&1
	st=$?
	echo "$umem" >$P/max_user_memory
	chmod "$mode" /dev/pto0
	sed 's/^/# /' "$out" | tail -n 3
}
if [ -n "${PTO_KO:-}" ]; then
	grep -q '^ptolimit:' /etc/passwd ||
		echo 'ptolimit:x:1009:1009::/tmp:/bin/sh' >>/etc/passwd
	chmod o+rx "$O" "$O/tools" "$O/samples"
	as_limited 1048576
	[ $st -eq 1 ] && grep -q 'no room for the heap rings' "$out" &&
		grep -q 'max_user_memory, see pto(4)' "$out" &&
		grep -q 'Cannot allocate memory' "$out"
	ok $? "a user that max_user_memory leaves 1 MiB: -ENOMEM, naming the limits"
	# 64 MiB left and 16 MiB of heap rings asked: they fit, so the
	# limit (which only shrinks the arena) goes unsaid
	as_limited 67108864 PTO_HEAP_SIZE=4M
	[ $st -eq 0 ] && ! grep -q 'this user may set up' "$out"
	ok $? "64 MiB left, 16 MiB of rings asked: runs, the limit unsaid"
else
	n=$((n + 2))
	echo "ok $((n - 1)) # SKIP a user of its own: only in the VM harness"
	echo "ok $n # SKIP a user of its own: only in the VM harness"
fi
rm -f "$out"
[ $failed -eq 0 ]
