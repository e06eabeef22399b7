#!/bin/bash
# bench/bindings/fit_bench.sh with 2 timed batches: the C executor path
# (bench/train), fit() from Java and fit() from Go all run on the same
# Fashion-MNIST MLP and every figure is printed as a positive number. No
# timing is asserted; with python3-torch, PyTorch's figures too. Skips
# without java, go or the data set, and under the sanitizers.
#   fit_bindings_smoke_test.sh FIT_BENCH_SH PREFIX_SH LIB HEADER PC_IN
#       TRAIN_BIN MXC_JAR BENCH_JAR TEST_SKIP_SH
set -euo pipefail
# shellcheck disable=SC1090
source "$9"
data=/usr/share/datasets/fashion-mnist
for tool in java go swig pkg-config; do
  command -v "$tool" >/dev/null || mxc_test_skip "needs $tool"
done
[ -r "$data/train-images-idx3-ubyte.gz" ] ||
  mxc_test_skip "Fashion-MNIST not in $data (Debian: dataset-fashion-mnist)"
needed=$(readelf -d "$3" 2>/dev/null)
if grep -q 'NEEDED.*lib[at]san' <<<"$needed"; then
  # A timing harness: the bindings' own tests run under the sanitizers.
  mxc_test_skip "instrumented library (the default pass runs this smoke)"
fi
tmp=${TEST_TMPDIR:-$(mktemp -d)}
"$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" . --batches 2 --rounds 2 >"$tmp/out.txt" 2>"$tmp/err.txt" || {
  echo "FAIL: fit_bench.sh"; cat "$tmp/out.txt" "$tmp/err.txt"; exit 1; }
cat "$tmp/out.txt"
keys="fit_epoch_s_c fit_epoch_s_java fit_epoch_s_go fit_epoch_java_ratio_vs_c
  fit_epoch_go_ratio_vs_c fit_epoch_s_c_min fit_epoch_s_c_max fit_epoch_s_java_min
  fit_epoch_s_java_max fit_epoch_s_go_min fit_epoch_s_go_max"
if python3 -c 'import torch' 2>/dev/null; then
  keys="$keys fit_epoch_s_torch fit_epoch_c_ratio_vs_torch fit_epoch_java_ratio_vs_torch
    fit_epoch_go_ratio_vs_torch"
fi
for key in $keys; do
  v=$(sed -n "s/^$key=//p" "$tmp/out.txt")
  if ! awk -v v="$v" 'BEGIN { exit !(v + 0 > 0 && v ~ /^[0-9.]+$/) }'; then
    echo "FAIL: $key='$v', expected a positive number"; exit 1
  fi
done
grep -qx 'fit_rounds=2' "$tmp/out.txt" || { echo "FAIL: no fit_rounds=2"; exit 1; }
echo PASS
