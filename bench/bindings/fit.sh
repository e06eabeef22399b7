#!/bin/bash
# A fit() epoch from Java and Go against the C executor path (see
# fit_bench.sh): builds what it needs with -c opt and runs it here.
#   bench/bindings/fit.sh [--batches N] [--rounds R] [--data-dir DIR] [--no-torch]
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build -c opt //c_api:libmxc.so.1.0.0 //bench:train //bindings/java:mxc.jar \
  //bench/bindings/java:mxc-bench.jar
bin=bazel-bin
exec bench/bindings/fit_bench.sh bindings/test_prefix.sh "$bin/c_api/libmxc.so.1.0.0" \
  c_api/include/mxc/mxc.h packaging/mxc.pc.in "$bin/bench/train" \
  "$bin/bindings/java/mxc.jar" "$bin/bench/bindings/java/mxc-bench.jar" . "$@"
