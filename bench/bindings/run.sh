#!/bin/bash
# bench/bindings: the per-call cost of a tiny operator invoke (elemwise_add
# of two 4-element float32 arrays, a new output each call, freed each
# call) through the Java, Go and R bindings, each measured against the
# same loop written in C and run in the same process, alternating rounds
# and keeping the best of each. Prints, per language, c_invoke_us=,
# <lang>_invoke_us= and <lang>_overhead_us= (goal for Java and Go:
# overhead <= 0.2 us).
#
# Each language runs twice: with the threaded engine (what programs get;
# the C time itself varies by tens of percent with how often the engine's
# workers sleep and wake, so the difference is noisy) and with
# MXC_ENGINE=naive (operators run in the calling thread: the C time is
# steady and the difference is the binding's own cost), whose lines carry
# the suffix _naive (java_overhead_us_naive=). Timings need a quiet
# machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build //c_api:libmxc.so.1.0.0 //bench/bindings/java:bench \
  //bench/bindings/r:bench

# Runs "$@" with each engine; the naive run's name=value lines get _naive.
both_engines() {
  "$@"
  MXC_ENGINE=naive "$@" | sed -E 's/^([a-z_]+_us)=/\1_naive=/'
}

go_bench() {
  (
    # shellcheck disable=SC1091
    source bindings/test_prefix.sh bazel-bin/c_api/libmxc.so.1.0.0 \
      c_api/include/mxc/mxc.h packaging/mxc.pc.in
    # A fresh build cache: cgo packages keep the -L of the prefix they
    # were built against, and each run makes a new prefix.
    export GOCACHE="$MXC_PREFIX/gocache" GOFLAGS=-mod=mod GOPROXY=off
    trap 'chmod -R u+w "$MXC_PREFIX" 2>/dev/null; rm -rf "$MXC_PREFIX"' EXIT
    cd bench/bindings/go
    go build -o "$MXC_PREFIX/bench" .
    both_engines "$MXC_PREFIX/bench"
  )
}

echo "== java"
both_engines bazel run //bench/bindings/java:bench 2>/dev/null
echo "== go"
go_bench
echo "== r"
both_engines bazel run //bench/bindings/r:bench 2>/dev/null
