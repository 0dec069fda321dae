#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Device access, inside the VM (guest.sh runs it with pto.ko loaded, cwd
# /pto): the shipped udev rule, applied by hand since the initramfs has no
# udevd, gives /dev/pto0 to the group pto; a user in that group runs a
# built-in sample on it with ptorun -d, a user outside gets EACCES from
# libpto; sysfs attributes have their documented modes and only root adds
# devices; the module's version is libpto's.
P=/pto
n=0 failed=0
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else
		echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

rule=$P/src/packaging/60-pto.rules
[ -f $rule ]
ok $? "the udev rule is in the image"

# what udev does with the rule: every pto node gets its GROUP and MODE
line=$(grep -E '^[^#]*KERNEL=="pto\[0-9\]\*"' $rule)
group=$(echo "$line" | sed -n 's/.*GROUP="\([^"]*\)".*/\1/p')
mode=$(echo "$line" | sed -n 's/.*MODE="\([^"]*\)".*/\1/p')
echo "$line" | grep -q 'SUBSYSTEM=="pto"' && [ "$group" = pto ] && [ "$mode" = 0660 ]
ok $? "the rule gives pto nodes GROUP=\"$group\" MODE=\"$mode\""

# users: alice in the group, bob outside it (what adduser would write)
[ -f /etc/passwd ] || echo 'root:x:0:0:root:/:/bin/sh' >/etc/passwd
[ -f /etc/group ] || echo 'root:x:0:' >/etc/group
echo 'alice:x:1001:1001::/tmp:/bin/sh' >>/etc/passwd
echo 'bob:x:1002:1002::/tmp:/bin/sh' >>/etc/passwd
printf 'alice:x:1001:\nbob:x:1002:\n' >>/etc/group
# alice joins the group, a new one or the one the VM already has
awk -F: -v g="$group" 'BEGIN { OFS = ":" }
	$1 == g { $4 = $4 == "" ? "alice" : $4 ",alice"; found = 1 }
	{ print }
	END { if (!found) print g, "x", 990, "alice" }' /etc/group >/tmp/group &&
	cat /tmp/group >/etc/group

for d in /dev/pto[0-9]*; do
	chgrp "$group" "$d" && chmod "$mode" "$d"
done
[ "$(stat -c '%A %G' /dev/pto0)" = "crw-rw---- $group" ]
ok $? "/dev/pto0 after the rule: $(stat -c '%A %U:%G' /dev/pto0)"
su -s /bin/sh alice -c id | grep -q "($group)"
ok $? "alice is in the group $group, bob is not" 
su -s /bin/sh bob -c id | grep -q "($group)" && ok 1 "bob is not in $group"

run_as() {	# user: ptorun -d /dev/pto0 on the bgemm_builtin sample
	su -s /bin/sh "$1" -c "LD_LIBRARY_PATH=$P PTO_STATS=0 \
		$P/tools/ptorun -d /dev/pto0 $P/samples/bgemm_builtin.so" \
		</dev/null >/tmp/access.out 2>&1
}
want=$(sed -n 's/^bgemm_builtin //p' $P/checksums)
run_as alice
rc=$?
got=$(sed -n 's/.*checksum: *//p' /tmp/access.out | tr '\n' ',')
sed 's/^/# /' /tmp/access.out | tail -n 3
[ $rc -eq 0 ] && [ -n "$got" ] && [ "$got" = "$want" ]
ok $? "alice (group $group) runs ptorun -d /dev/pto0: checksum $got (sim: $want)"

run_as bob
rc=$?
sed 's/^/# /' /tmp/access.out | tail -n 3
[ $rc -ne 0 ] && grep -q 'Permission denied' /tmp/access.out
ok $? "bob (not in $group) is refused: libpto reports EACCES (Permission denied)"
su -s /bin/sh bob -c 'exec 3<>/dev/pto0' 2>/dev/null
[ $? -ne 0 ]
ok $? "bob cannot open /dev/pto0 at all"

# sysfs: statistics world-readable, device management root-only
bad=""
for a in new_device:200 del_device:200 pto0/cores:444 pto0/contexts:444 \
	 pto0/tasks_done:444 pto0/tasks_failed:444 pto0/busy_ns:444 \
	 pto0/mem_used:444 pto0/mem_total:444; do
	m=$(stat -c %a "/sys/class/pto/${a%:*}" 2>/dev/null)
	[ "$m" = "${a#*:}" ] || bad="$bad ${a%:*}=$m"
done
[ -z "$bad" ]
ok $? "sysfs attribute modes${bad:+ (wrong:$bad)}"
su -s /bin/sh alice -c 'echo 7 >/sys/class/pto/new_device' 2>/dev/null
[ $? -ne 0 ] && [ ! -e /dev/pto7 ]
ok $? "a user in $group cannot add a device through new_device"
su -s /bin/sh alice -c 'cat /sys/class/pto/pto0/tasks_done' >/dev/null
ok $? "a user reads the statistics"

# the guest's own simulator (this architecture's libpto) computes what
# the device and the host's simulator did
got=$(LD_LIBRARY_PATH=$P PTO_STATS=0 PTO_DEVICE=sim $P/tools/ptorun \
	$P/samples/bgemm_builtin.so </dev/null 2>&1 |
	sed -n 's/.*checksum: *//p' | tr '\n' ',')
[ -n "$got" ] && [ "$got" = "$want" ]
ok $? "$(uname -m) simulator: checksum $got (host sim: $want)"

# one version: the module's is the library's
mv=$(cat /sys/module/pto/version 2>/dev/null)
lv=$(LD_LIBRARY_PATH=$P $P/tools/ptorun --version | sed -n 's/^ptorun (PTO) \([^,]*\).*/\1/p')
[ -n "$mv" ] && [ "$mv" = "$lv" ]
ok $? "/sys/module/pto/version ($mv) is libpto's ($lv)"

echo "1..$n"
[ $failed -eq 0 ]
