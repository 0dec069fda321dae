#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The whole test suite, as "make check" runs it: the userspace tests, the
# same tests under ASan+UBSan and under TSan, 30 s of make stress
# (PTO_STRESS_SECONDS), the driver's style and kernel-doc, the VM
# stages for the driver (newest Debian kernel, 6.1, arm64, and with
# PTO_VM_DEBUG=1 the debug kernel with KASAN, lockdep, KUnit ...) and
# the Debian packages.  Ends with one "N passed, N failed" line for
# everything.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
MAKE=${MAKE:-make}
export PTO_RESULTS="$(mktemp)"
status=0

stage() {
	name=$1; shift
	echo "=== $name"
	"$@" || status=1
}

stage unit $MAKE --no-print-directory -s O="$O" check-unit
stage asan $MAKE --no-print-directory -s O="$O" check-asan
stage tsan $MAKE --no-print-directory -s O="$O" check-tsan
# a short stress stage: random runtimes and programs under the watchdog
stage stress env O="$O" STRESS_SECONDS="${PTO_STRESS_SECONDS:-30}" \
	scripts/run-tests.sh -l stress selftests/stress/stress.sh
if [ -x selftests/driver/lint.sh ]; then
	stage driver-lint scripts/run-tests.sh -l driver-lint selftests/driver/lint.sh
fi
if [ -x selftests/vm/run.sh ] && [ "${PTO_SKIP_VM:-0}" != 1 ]; then
	stage vm $MAKE --no-print-directory -s O="$O" vmtest
	# vm boots the newest Debian kernel (6.12); 6.1 too, and arm64
	stage vm-6.1 env O="$O" MAKE="$MAKE" sh selftests/vm/kernels.sh 6.1
	stage vm-arm64 $MAKE --no-print-directory -s O="$O" vmtest-arm64
	# the debug kernel takes 40-70 minutes to build and boot under TCG
	# on 2 CPUs, beyond CI's budget with the rest: PTO_VM_DEBUG=1 adds it
	if [ -x selftests/vm/vmtest-debug.sh ] && [ "${PTO_VM_DEBUG:-0}" = 1 ]; then
		stage vm-debug $MAKE --no-print-directory -s O="$O" vmtest-debug
	fi
fi
# the Debian packages: build, lintian, install (DKMS), use, purge; root only
if [ "${PTO_SKIP_DEB:-0}" != 1 ]; then
	stage deb $MAKE --no-print-directory -s O="$O" check-deb
fi

awk '{p += $1; f += $2; s += $3}
     END {printf "total: %d passed, %d failed, %d skipped\n", p, f, s}' "$PTO_RESULTS"
if awk '{f += $2} END {exit !(f > 0)}' "$PTO_RESULTS"; then status=1; fi
rm -f "$PTO_RESULTS"
exit $status
