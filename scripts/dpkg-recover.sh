#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Finish what an interrupted dpkg left behind, so that apt-get works again.
#   scripts/dpkg-recover.sh [PACKAGE...]
# A machine whose power went, or whose apt-get or make check-deb was killed
# while DKMS was building, keeps a half-done dpkg journal; every later
# apt-get then refuses with "dpkg was interrupted".  As root this runs
# dpkg --configure -a, as apt asks.  If that cannot finish (a package's
# script fails again), the PACKAGEs named, which are the caller's own, are
# removed by force and the rest configured; other broken packages are
# reported, never removed.  Silent when dpkg is consistent; without root
# it only reports.
set -u

interrupted() {
	[ -n "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" ] ||
		[ -n "$(dpkg --audit 2>/dev/null)" ]
}

command -v dpkg >/dev/null || exit 0
interrupted || exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "dpkg was interrupted; run as root:  dpkg --configure -a" >&2
	exit 1
fi
echo "dpkg-recover: dpkg was interrupted; running dpkg --configure -a" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
dpkg --configure -a >"$log" 2>&1 && ! interrupted && exit 0
for p in "$@"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q 'ok installed$' && continue
	dpkg-query -W "$p" >/dev/null 2>&1 || continue
	echo "dpkg-recover: removing half-installed $p" >&2
	dpkg --purge --force-remove-reinstreq "$p" >>"$log" 2>&1
done
dpkg --configure -a >>"$log" 2>&1 && ! interrupted && exit 0
tail -n 20 "$log" >&2
dpkg --audit >&2
echo "dpkg-recover: dpkg is still inconsistent; see above" >&2
exit 1
