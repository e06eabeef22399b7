#!/bin/bash
# Builds and installs the R package (no check) against the library built
# here, laid out as an installed prefix, then runs bench.R.
#   run_bench.sh PREFIX_SH LIB HEADER PC_IN BUILD_SH BENCH_R [CALLS] [ROUNDS]
# `bazel run -c opt //bench/bindings/r:bench` passes the first six.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4
build_sh=$(readlink -f "$5") bench_r=$(readlink -f "$6")
shift 6
tmp=$(mktemp -d)
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin"
trap 'rm -rf "$tmp" "$MXC_PREFIX"' EXIT
"$build_sh" --no-check --install "$tmp/lib" "$tmp/build" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; exit 1; }
R_LIBS=$tmp/lib Rscript "$bench_r" "$@"
