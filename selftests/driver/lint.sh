#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The style and documentation as TAP, for make check: checkpatch --strict
# from linux-source-6.1 over driver/ and the uapi, and over the userspace
# code (libpto, ops, util, tools, samples: the kernel's style too), and
# kernel-doc -none over driver/, the uapi and libpto's public headers, all
# without a message.
cd "$(dirname "$0")/../.."
O=${O:-build}
MAKE=${MAKE:-make}
n=0
for t in checkpatch checkpatch-user kerneldoc; do
	n=$((n + 1))
	if out=$($MAKE --no-print-directory -s O="$O" $t 2>&1); then
		echo "ok $n - $t"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok $n - $t"
	fi
done
echo "1..$n"
