#!/bin/bash
# Trains examples/sparse_linear (a softmax classifier on sparse LibSVM
# features with row_sparse gradients and lazy SGD) on a synthetic data set,
# generating it first if it is missing.
#   scripts/sparse_linear.sh [DATA_DIR] [-- extra sparse_linear options]
# DATA_DIR (default /tmp/mxc_sparse_linear) receives train.svm and
# test.svm: 50000 / 10000 samples, 100000 features, about 30 per sample,
# 2 classes (examples/make_libsvm_data; deterministic, seed 1).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/mxc_sparse_linear}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
features=100000
bazel build -c opt //examples:sparse_linear //examples:make_libsvm_data
if [ ! -s "$dir/train.svm" ] || [ ! -s "$dir/test.svm" ]; then
  mkdir -p "$dir"
  bazel-bin/examples/make_libsvm_data --out-dir "$dir" --features "$features"
fi
exec bazel-bin/examples/sparse_linear --train "$dir/train.svm" \
  --test "$dir/test.svm" --features "$features" --epochs 5 --lr 1 "$@"
