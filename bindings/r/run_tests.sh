#!/bin/bash
# The R binding's Bazel test: builds the package from a copy of the
# sources (SWIG, R CMD build, R CMD check with its testthat tests; any
# ERROR or WARNING fails), installs it into a temporary library, then runs
# the million-array memory test and a few hundred batches of the
# Fashion-MNIST example with its loss/accuracy check.
#
#   run_tests.sh PREFIX_SH LIB HEADER PC_IN MLP_R [--sanitizer=asan|tsan]
#
# Skips (exit 0 with a message) under sanitizers (an instrumented libmxc
# cannot be loaded into R, see bindings/BUILD) and when R, SWIG or
# testthat are missing. Everything is written under $TEST_TMPDIR.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4 mlp=$(readlink -f "$5")
shift 5
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin" "$@"
if [ -n "$MXC_SKIP_REASON" ]; then
  echo "SKIP: $MXC_SKIP_REASON"
  exit 0
fi
for tool in R Rscript swig pkg-config gcc; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not found (Debian: r-base-dev, swig)"; exit 0; }
done
if ! Rscript -e 'quit(status = !requireNamespace("testthat", quietly = TRUE))'; then
  echo "SKIP: the R package testthat is missing (Debian: r-cran-testthat)"
  exit 0
fi

# A real copy: R CMD build and SWIG see plain files, not runfiles links.
src=$tmp/src
rm -rf "$src"
mkdir -p "$src/bindings"
cp -rL bindings/r bindings/swig "$src/bindings/"
export HOME=$tmp/home R_LIBS_USER=$tmp/Rlib TMPDIR=$tmp
mkdir -p "$HOME" "$R_LIBS_USER"
"$src/bindings/r/build.sh" --install "$tmp/Rlib" "$tmp/r-build"

export R_LIBS=$tmp/Rlib
echo "== million arrays =="
Rscript "$src/bindings/r/tests/million.R" "${MXC_R_MILLION_N:-1000000}"
echo "== examples/r/mlp.R =="
Rscript "$mlp" --batches 300 --check
echo "PASS"
