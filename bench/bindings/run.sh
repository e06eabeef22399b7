#!/bin/bash
# bench/bindings: the per-call cost of a tiny operator invoke (elemwise_add
# of two 4-element float32 arrays, a new output each call, freed each
# call) through the Java, Go and R bindings, each measured against the
# same loop written in C and run in the same process, alternating rounds
# and keeping the best of each. Prints, per language, c_invoke_us=,
# <lang>_invoke_us= and <lang>_overhead_us= (goal for Java and Go:
# overhead <= 0.2 us). Timings need a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build //c_api:libmxc.so.1.0.0
echo "== java"
bazel run //bench/bindings/java:bench
echo "== go"
(
  # shellcheck disable=SC1091
  source bindings/test_prefix.sh bazel-bin/c_api/libmxc.so.1.0.0 \
    c_api/include/mxc/mxc.h packaging/mxc.pc.in
  trap 'rm -rf "$MXC_PREFIX"' EXIT
  cd bench/bindings/go
  go run .
)
echo "== r"
bazel run //bench/bindings/r:bench
