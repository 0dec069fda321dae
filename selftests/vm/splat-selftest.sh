#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Proves that the VM harness fails on what the debug kernel's detectors
# print: for each kind of bug, a throwaway copy of the tree whose pto.ko
# commits that bug when it loads is booted on the debug kernel
# (PTO_VM_ONLY), and run.sh must report a failure naming the report.
#
#   selftests/vm/splat-selftest.sh [KIND...]
#
# Kinds: warn kasan ubsan lockdep sleep objects leak hung rcu.  Prints
# TAP, one line per kind.  Not part of make check (about 90 s a kind).
set -u
cd "$(dirname "$0")/../.."
SRC=$(pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$SRC/$O" ;; esac
K=$(O="$O" sh selftests/vm/debug-kernel.sh) || exit 1
kinds=${*:-warn kasan ubsan lockdep sleep objects leak hung rcu}
n=0
failed=0

# The bug, committed by pto_init() of the throwaway copy.
splat_c() {
	cat <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* Throwaway: a deliberate bug for splat-selftest.sh. */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timer.h>

static DEFINE_MUTEX(splat_a);
static DEFINE_MUTEX(splat_b);
static DEFINE_SPINLOCK(splat_lock);
static void *splat_leak;
static int splat_shift = 40;

struct splat_timer {
	struct timer_list t;
};

static void splat_timer_fn(struct timer_list *t)
{
}

static int splat_thread(void *arg)
{
	if (PTO_SPLAT == 8) {		/* hung task */
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule_timeout(40 * HZ);
	} else {			/* RCU stall */
		preempt_disable();
		mdelay(12000);
		preempt_enable();
	}
	return 0;
}

void pto_splat(void);
void pto_splat(void)
{
	volatile int x;
	volatile char *p;
	struct splat_timer *st;

	switch (PTO_SPLAT) {
	case 1:
		WARN_ON(1);
		break;
	case 2:
		p = kmalloc(8, GFP_KERNEL);
		p[8] = 1;
		kfree((void *)p);
		break;
	case 3:
		x = 1 << READ_ONCE(splat_shift);
		(void)x;
		break;
	case 4:
		mutex_lock(&splat_a);
		mutex_lock(&splat_b);
		mutex_unlock(&splat_b);
		mutex_unlock(&splat_a);
		mutex_lock(&splat_b);
		mutex_lock(&splat_a);
		mutex_unlock(&splat_a);
		mutex_unlock(&splat_b);
		break;
	case 5:
		spin_lock(&splat_lock);
		msleep(1);
		spin_unlock(&splat_lock);
		break;
	case 6:
		st = kmalloc(sizeof(*st), GFP_KERNEL);
		timer_setup(&st->t, splat_timer_fn, 0);
		mod_timer(&st->t, jiffies + 100 * HZ);
		kfree(st);
		break;
	case 7:
		splat_leak = kmalloc(128, GFP_KERNEL);
		splat_leak = NULL;
		break;
	case 8:
	case 9:
		kthread_run(splat_thread, NULL, "pto_splat");
		break;
	}
}
EOF
}

for kind in $kinds; do
	n=$((n + 1))
	only="true"
	append=""
	case "$kind" in
	warn) id=1 ;;
	kasan) id=2 ;;
	ubsan) id=3 ;;
	lockdep) id=4 ;;
	sleep) id=5 ;;
	objects) id=6 ;;
	leak) id=7 ;;
	hung) id=8; only="echo 5 >/proc/sys/kernel/hung_task_timeout_secs; sleep 30" ;;
	rcu) id=9; only="sleep 20"; append="rcupdate.rcu_cpu_stall_timeout=3" ;;
	*) echo "not ok $n - unknown kind $kind"; failed=1; continue ;;
	esac
	S=$(mktemp -d /tmp/pto-splat.XXXXXX)
	cp -r Kbuild driver ops include selftests scripts "$S/"
	splat_c >"$S/driver/pto_splat.c"
	sed -i 's/^pto-y := /pto-y := pto_splat.o /' "$S/driver/Kbuild"
	echo "ccflags-y += -DPTO_SPLAT=$id" >>"$S/driver/Kbuild"
	sed -i 's/^static int __init pto_init(void)$/void pto_splat(void);\n&/' \
		"$S/driver/pto_main.c"
	perl -0pi -e 's/(\tif \(ret\)\n\t\tgoto err_new_device;\n)\treturn 0;/$1\tpto_splat();\n\treturn 0;/' \
		"$S/driver/pto_main.c"
	grep -q 'pto_splat();' "$S/driver/pto_main.c" ||
		{ echo "not ok $n - $kind: could not inject"; failed=1; continue; }
	log="$O/vm-splat-$kind.out"
	(cd "$S" && O="$O" PTO_VM_VMLINUZ="$K/arch/x86/boot/bzImage" \
		PTO_VM_KHDR="$K" PTO_VM_NAME="splat-$kind" PTO_VM_ONLY="$only" \
		PTO_VM_APPEND="preempt=full $append" PTO_VM_TIMEOUT=600 \
		PTO_VM_BOOT_TIMEOUT=${PTO_VM_BOOT_TIMEOUT:-300} \
		sh selftests/vm/run.sh) >"$log" 2>&1
	rc=$?
	grep -v '^#' "$S/selftests/vm/splat-patterns" | grep . >"$S/pat"
	what=$(grep -E -f "$S/pat" "$log" | grep -v ' - ' | head -n 1 |
	       sed 's/^#* *//')
	rm -rf "$S"
	if [ "$rc" -ne 0 ] && [ -n "$what" ]; then
		echo "ok $n - harness fails on $kind: $what"
	else
		echo "not ok $n - harness did not fail on $kind (status $rc, log $log)"
		failed=1
	fi
done
echo "1..$n"
exit $failed
