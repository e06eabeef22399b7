#!/bin/bash
# The R binding's Bazel test: builds the package from a copy of the
# sources (SWIG, R CMD build, R CMD check with its testthat tests; any
# ERROR or WARNING fails), installs it into a temporary library, then runs
# the million-array memory tests (arrays dropped; arrays in with_scope
# blocks) and a few hundred batches of the
# Fashion-MNIST example with its loss/accuracy check.
#
#   run_tests.sh PREFIX_SH LIB HEADER PC_IN MLP_R [--sanitizer=asan|tsan]
#
# Under --config=asan every process of the build and the tests runs
# with the sanitizer runtime preloaded (bindings/sanitizer.sh), the
# package's SWIG wrapper is compiled with the same -fsanitize flags as the
# library (R_MAKEVARS_USER), and the million-array run drops 100000
# arrays without its resident-memory bound (ASan's quarantine; leaks are
# LeakSanitizer's). Under --config=tsan the tests run in R's binary
# without its shell wrapper (see below). Skips (SKIPPED, exit 0) when R,
# SWIG or testthat are missing. Everything is written under $TEST_TMPDIR.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4 mlp=$(readlink -f "$5")
shift 5
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin" "$@"
# Under TSan, R's own programs stay uninstrumented: R and Rscript start
# through /usr/bin/R, a shell script, and both bash and dash die at start
# with libtsan preloaded (SIGSEGV before main's first call, measured:
# LD_PRELOAD=libtsan.so sh -c true), and R CMD check runs the tests through
# shells too. So the package is built and installed without the runtime
# (no check: loading an instrumented libmxc.so needs libtsan first), and
# the tests run in R's binary itself, started directly (r_run below) with
# libtsan preloaded: the testthat suite, the million arrays and the
# examples.
for tool in R Rscript swig pkg-config gcc; do
  command -v "$tool" >/dev/null || mxc_test_skip "$tool not found (Debian: r-base-dev, swig)"
done
if ! Rscript -e 'quit(status = !requireNamespace("testthat", quietly = TRUE))'; then
  mxc_test_skip "the R package testthat is missing (Debian: r-cran-testthat)"
fi

# The predictor tests' model (//tests/predict:model) and, unless set, the
# shared directory of real MXNet models beside or above the source tree.
export MXC_PREDICTOR_MODEL=$PWD/tests/predict/model
# The independent RecordIO / image / iterator scripts the RecordIO tests
# run (test-recordio.R skips without them or without python3's numpy/PIL).
export MXC_SCRIPTS=$PWD/scripts
# The fake GPU plug-in (BUILD's env) for test-gpu.R, relative to the
# runfiles root: the package is checked from a copy elsewhere.
[ -z "${MXC_CUDA_PLUGIN:-}" ] || export MXC_CUDA_PLUGIN=$(realpath "$MXC_CUDA_PLUGIN")
if [ -z "${MXC_MXNET_MODELS:-}" ]; then
  root=$(dirname "$(dirname "$(readlink -f scripts/make_predictor_model.py)")")
  for up in ../shared ../../shared shared; do
    if [ -r "$root/$up/mxnet-models/README.md" ]; then
      export MXC_MXNET_MODELS=$root/$up/mxnet-models
      break
    fi
  done
fi

# A real copy: R CMD build and SWIG see plain files, not runfiles links.
src=$tmp/src
rm -rf "$src"
mkdir -p "$src/bindings"
cp -rL bindings/r bindings/swig "$src/bindings/"
export HOME=$tmp/home R_LIBS_USER=$tmp/Rlib TMPDIR=$tmp
mkdir -p "$HOME" "$R_LIBS_USER"
million=${MXC_R_MILLION_N:-1000000}
if [ "$MXC_SANITIZER" = asan ]; then
  printf 'CFLAGS = -g -O1 -fno-omit-frame-pointer %s\n' \
    "-fsanitize=address,undefined -fno-sanitize-recover=all" >"$tmp/Makevars"
  export R_MAKEVARS_USER=$tmp/Makevars
  million=${MXC_R_MILLION_N:-100000}
fi
[ "$MXC_SANITIZER" != tsan ] || million=${MXC_R_MILLION_N:-100000}
# r_run SCRIPT ARGS...: Rscript SCRIPT ARGS, or under TSan R's binary
# started without its shell wrapper, with the environment the wrapper sets.
r_run() {
  local script=$1 home
  shift
  if [ "$MXC_SANITIZER" != tsan ]; then
    mxc_sanitized r Rscript "$script" "$@"
    return
  fi
  home=$(R RHOME)
  R_HOME=$home R_SHARE_DIR=/usr/share/R/share R_INCLUDE_DIR=/usr/share/R/include \
    R_DOC_DIR=/usr/share/R/doc mxc_sanitized r "$home/bin/exec/R" \
    --no-echo --no-restore --vanilla --file="$script" --args "$@"
}

if [ "$MXC_SANITIZER" = tsan ]; then
  "$src/bindings/r/build.sh" --no-check --install "$tmp/Rlib" "$tmp/r-build"
  export R_LIBS=$tmp/Rlib
  echo "== testthat suite (TSan) =="
  printf '%s\n' 'library(testthat)' 'library(mxc)' \
    "test_dir('$src/bindings/r/mxc/tests/testthat', stop_on_failure = TRUE)" \
    >"$tmp/testthat_tsan.R"
  r_run "$tmp/testthat_tsan.R"
else
  mxc_sanitized r "$src/bindings/r/build.sh" --install "$tmp/Rlib" "$tmp/r-build"
  export R_LIBS=$tmp/Rlib
fi
# The KVStore across 2 ranks of an MPI job on this machine (BUILD names
# mpirun and the plug-in where Open MPI is installed; the default pass:
# an instrumented libmxc in an uninstrumented R under mpirun is left out).
if [ -n "${MXC_TEST_MPIRUN:-}" ] && [ -n "${MXC_TEST_MPI_PLUGIN:-}" ] &&
   [ -z "$MXC_SANITIZER" ]; then
  echo "== KVStore across 2 ranks =="
  MXC_TEST_NP=2 MXC_MPI_PLUGIN=$PWD/$MXC_TEST_MPI_PLUGIN \
    MXC_KVSTORE_TIMEOUT=60 timeout 240 "$MXC_TEST_MPIRUN" \
    --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader \
    --bind-to none -x MXC_TEST_NP -x MXC_MPI_PLUGIN -x MXC_KVSTORE_TIMEOUT \
    -x TEST_TMPDIR -x LD_LIBRARY_PATH -x R_LIBS -x HOME -x MXC_LIBRARY \
    Rscript "$src/bindings/r/tests/kvstore_dist.R"
fi
echo "== million arrays =="
r_run "$src/bindings/r/tests/million.R" "$million"
echo "== million arrays in with_scope blocks =="
r_run "$src/bindings/r/tests/million_scopes.R" "$million"
echo "== examples/r/mlp.R =="
r_run "$mlp" --batches 300 --check
# The layer-API example, briefly: 100 batches of one epoch (its goals
# need the full 10 epochs; see the README for those figures).
echo "== examples/r/fit_fashion_mnist.R =="
r_run "$(dirname "$mlp")/fit_fashion_mnist.R" --epochs 1 --batches-per-epoch 100
echo "PASS"
