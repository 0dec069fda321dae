#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make deb: the Debian packages (libpto0, libpto-dev, pto-tools, pto-dkms)
# from a copy of the tree's sources, built with dpkg-buildpackage into
# $O/deb, then lintian, which must report no error.
set -eu
cd "$(dirname "$0")/.."
SRC=$(pwd)
O=${O:-build}
case "$O" in /*) ;; *) O="$SRC/$O" ;; esac
v=$(cat VERSION)
out="$O/deb"
tree="$out/pto-$v"

for t in dpkg-buildpackage dh lintian chrpath; do
	command -v "$t" >/dev/null 2>&1 || {
		echo "mkdeb: $t is missing (scripts/deps.sh deb)" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$tree"
# the sources: what git tracks or would (not ignored), else everything but
# the object directory
if [ -d .git ] || [ -f .git ]; then
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree"
else
	tar --exclude=./build --exclude="./${O#"$SRC"/}" -cf - . | tar -C "$tree" -xf -
fi
# the package's make must not see ours (O= would point its clean at $O)
(cd "$tree" && env -u O -u SAN -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	dpkg-buildpackage -us -uc -b -j2) >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log"; echo "mkdeb: dpkg-buildpackage failed" >&2
	exit 1; }
ls "$out"/*.deb
# errors fail; warnings are listed
rc=0
lintian --fail-on error "$out"/*.changes >"$out/lintian.log" 2>&1 || rc=$?
cat "$out/lintian.log"
[ $rc -eq 0 ] || { echo "mkdeb: lintian reports errors" >&2; exit 1; }
