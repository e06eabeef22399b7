#!/bin/bash
# Builds the R package from this directory: SWIG output, R CMD build and
# R CMD check (no network, no manual), failing on any ERROR or WARNING.
#
#   bindings/r/build.sh [--no-check] [--install LIB] [BUILD_DIR]
#
# mxc must be visible to pkg-config (PKG_CONFIG_PATH; bindings/test_prefix.sh
# sets it for the library built in the tree). BUILD_DIR (default
# $TEST_TMPDIR/mxc-r-build, else /tmp/mxc-r-build) receives a copy of the
# package with src/mxc_wrap.c, src/mxcb.h and R/mxc.R generated, the
# source tarball mxc_1.0.0.tar.gz and mxc.Rcheck/. --install LIB installs the tarball
# into the library directory LIB. Nothing is written outside BUILD_DIR
# (and LIB): caches, R_LIBS_USER and TMPDIR live under it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check=1
lib=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-check) check=0; shift ;;
    --install) lib=$2; shift 2 ;;
    *) break ;;
  esac
done
out=${1:-${TEST_TMPDIR:-/tmp}/mxc-r-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)

pkg-config --exists mxc || { echo "build.sh: pkg-config cannot find mxc" >&2; exit 1; }
inc=$(pkg-config --variable=includedir mxc)

rm -rf "$out/pkg" "$out/tmp" "$out/mxc.Rcheck"
mkdir -p "$out/pkg" "$out/tmp" "$out/home" "$out/Rlib"
cp -r "$here/mxc" "$out/pkg/mxc"
rm -f "$out/pkg/mxc/src/Makevars" "$out/pkg/mxc/src/"*.o "$out/pkg/mxc/src/"*.so
cp "$here/../swig/mxcb.h" "$out/pkg/mxc/src/mxcb.h"
# -DSWIGWORDSIZE64: int64_t is long on LP64 Linux; without it SWIG's
# stdint.i declares it long long and the wrapper casts pointers wrongly.
swig -r -DSWIGWORDSIZE64 -I"$here/../swig" -I"$inc" \
  -o "$out/pkg/mxc/src/mxc_wrap.c" -outdir "$out/pkg/mxc/R" "$here/mxc_r.i"

# The project's warning policy on the generated wrapper, separately from
# R's own flags (R CMD check flags -Werror in Makevars as non-portable).
# The three -Wno-: SWIG's R runtime casts every routine to DL_FUNC
# (cast-function-type), takes the unused `.copy` argument and leaves an
# unused `ecode` in the callback wrappers it emits for mxc.h's
# function-pointer types (unused-parameter, unused-variable).
gcc -std=c11 -Wall -Wextra -Werror -Wno-cast-function-type \
  -Wno-unused-parameter -Wno-unused-variable -fsyntax-only \
  $(R CMD config --cppflags) $(pkg-config --cflags mxc) \
  -I"$out/pkg/mxc/src" "$out/pkg/mxc/src/mxc_wrap.c"

export TMPDIR="$out/tmp" R_LIBS_USER="$out/Rlib" HOME="$out/home"
export _R_CHECK_FORCE_SUGGESTS_=false _R_CHECK_CRAN_INCOMING_=false
export R_BROWSER=false R_PDFVIEWER=false
# DESCRIPTION says UTF-8: under the C locale (Bazel's sandbox) R CMD check
# tries to switch to en_US.UTF-8, which may not exist, and warns.
export LC_ALL=C.UTF-8
cd "$out"
rm -f mxc_*.tar.gz
R CMD build --no-build-vignettes --no-manual pkg/mxc
tarball=$(ls mxc_*.tar.gz)
if [ "$check" = 1 ]; then
  status=0
  R CMD check --no-manual --no-build-vignettes "$tarball" || status=$?
  log=mxc.Rcheck/00check.log
  if [ -f mxc.Rcheck/tests/testthat.Rout.fail ]; then
    cat mxc.Rcheck/tests/testthat.Rout.fail
  fi
  if [ "$status" != 0 ] || grep -Eq '\.\.\. *(ERROR|WARNING)' "$log"; then
    grep -E -A12 '\.\.\. *(ERROR|WARNING)' "$log" >&2 || true
    echo "build.sh: R CMD check reported an ERROR or WARNING (see $out/$log)" >&2
    exit 1
  fi
  grep -E '\.\.\. *NOTE' "$log" || true
fi
if [ -n "$lib" ]; then
  mkdir -p "$lib"
  R CMD INSTALL --no-test-load -l "$lib" "$tarball"
fi
