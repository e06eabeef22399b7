#!/bin/bash
# Every benchmark, each measuring its peer in the same run and printing
# name=value lines with ratios: engine, operators (vs OpenBLAS), executor
# (vs imperative), element-wise fusion, ResNet inference (vs PyTorch and
# ONNX Runtime, checking that all three give the same logits), training
# (vs PyTorch CPU: Debian's python3-torch and python3-torchvision, in
# scripts/setup.sh's list like the rest), and the bindings' per-call
# overhead over C (Java, Go, R). Arguments go to bench/train.
# Generated models and npm's onnxruntime-node live in the cache folder
# ($MXC_BENCH_CACHE, default ~/.cache/mxc/bench), never in the tree.
# Timings need a quiet machine; tests never depend on them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --bench
bazel build -c opt //bench:all
for b in engine ops exec fusion sparse; do
  echo "== bench/$b"
  bazel-bin/bench/$b
done
# ONNX Runtime for bench/infer: the npm package's install script would
# download a GPU build; the CPU library ships in the package itself.
cache="${MXC_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mxc/bench}"
if [ ! -r "$cache/ort/node_modules/onnxruntime-node/package.json" ]; then
  mkdir -p "$cache/ort"
  npm install --prefix "$cache/ort" --ignore-scripts --no-audit --no-fund \
    onnxruntime-node ||
    echo "bench: onnxruntime-node not installed; bench/infer skips ONNX Runtime"
fi
echo "== bench/infer"
bazel-bin/bench/infer
echo "== bench/train"
bazel-bin/bench/train "$@"
echo "== bench/bindings"
bench/bindings/run.sh
