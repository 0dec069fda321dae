#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The driver's style and documentation as TAP, for make check:
# checkpatch --strict from linux-source-6.1 over driver/ and the uapi,
# and kernel-doc -none over driver/ and the uapi, both without a message.
cd "$(dirname "$0")/../.."
O=${O:-build}
MAKE=${MAKE:-make}
n=0
for t in checkpatch kerneldoc; do
	n=$((n + 1))
	if out=$($MAKE --no-print-directory -s O="$O" $t 2>&1); then
		echo "ok $n - $t"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok $n - $t"
	fi
done
echo "1..$n"
