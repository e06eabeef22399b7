#!/bin/bash
# Every benchmark, each measuring its peer in the same run and printing
# name=value lines with ratios: engine, operators (vs OpenBLAS), executor
# (vs imperative), element-wise fusion and training (vs PyTorch CPU:
# Debian's python3-torch, in scripts/setup.sh's list like the rest), and
# the bindings' per-call overhead over C (Java, Go, R).
# Timings need a quiet machine; tests never depend on them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bazel build -c opt //bench:all
for b in engine ops exec fusion sparse; do
  echo "== bench/$b"
  bazel-bin/bench/$b
done
echo "== bench/train"
bazel-bin/bench/train "$@"
echo "== bench/bindings"
bench/bindings/run.sh
