#!/bin/bash
# Every benchmark, each measuring its peer in the same run and printing
# name=value lines with ratios: engine, operators (vs OpenBLAS), executor
# (vs imperative), element-wise fusion and training (vs PyTorch CPU,
# Debian's python3-torch, which this script installs when missing), and
# the bindings' per-call overhead over C (Java, Go, R).
# Timings need a quiet machine; tests never depend on them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if ! /usr/bin/python3 -c "import torch, numpy" 2>/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends python3-torch python3-numpy >/dev/null
fi
bazel build -c opt //bench:all
for b in engine ops exec fusion sparse; do
  echo "== bench/$b"
  bazel-bin/bench/$b
done
echo "== bench/train"
bazel-bin/bench/train "$@"
echo "== bench/bindings"
bench/bindings/run.sh
