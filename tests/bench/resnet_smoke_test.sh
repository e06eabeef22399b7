#!/bin/bash
# bench/infer and bench/train --model resnet18, quickly: both run to the
# end (two rounds each: mxc and PyTorch alternate), print their figures,
# and agree with PyTorch (exit status 0); a
# model whose graph says something else than its weights (BatchNorm eps
# changed in the MXNet JSON only) makes bench/infer fail. Skips (SKIPPED,
# exit 0) without PyTorch and torchvision.
#   resnet_smoke_test.sh INFER_BIN TRAIN_BIN TEST_SKIP_SH
set -euo pipefail
infer="$1"
train="$2"
# shellcheck disable=SC1090
source "$3"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import torch, torchvision' 2>/dev/null; then
  mxc_test_skip "PyTorch or torchvision missing (python3-torch, python3-torchvision)"
fi
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export MXC_BENCH_CACHE="$tmp/cache"  # models generated here; no ONNX Runtime
quick=(--models resnet18 --image-size 64 --iters 1 --warmup 0 --rounds 1)

"$infer" "${quick[@]}" --rounds 2 --batches 1,2 >"$tmp/infer.txt" 2>"$tmp/infer.err" || {
  echo "FAIL: bench/infer"; cat "$tmp/infer.txt" "$tmp/infer.err"; exit 1; }
cat "$tmp/infer.txt"
for key in cpu mxc_version resnet18_b1_ms resnet18_b2_ms resnet18_b1_torch_ms \
    resnet18_b1_maxdiff_torch resnet18_b2_maxdiff_torch \
    resnet18_b1_ratio_vs_torch resnet18_b1_round0_ratio_vs_torch \
    resnet18_b2_round1_ratio_vs_torch resnet18_b1_ratio_vs_torch_max; do
  grep -q "^$key=" "$tmp/infer.txt" || { echo "FAIL: no $key= line"; exit 1; }
done
grep -q "skipping ONNX Runtime" "$tmp/infer.err" || {
  echo "FAIL: no message about skipping ONNX Runtime"; cat "$tmp/infer.err"; exit 1; }
echo "ok: bench/infer agrees with PyTorch"

# The same weights under a graph that differs (eps 1e-5 -> 0.5): caught.
wrong="$tmp/cache/wrong"
cp -r "$tmp/cache/models" "$wrong"
sed -i 's/"eps": "1e-05"/"eps": "0.5"/' "$wrong/resnet18-symbol.json"
grep -q '"eps": "0.5"' "$wrong/resnet18-symbol.json"
if "$infer" "${quick[@]}" --batches 1 --model-dir "$wrong" --no-ort \
    >"$tmp/wrong.txt" 2>"$tmp/wrong.err"; then
  echo "FAIL: bench/infer accepted logits that differ from PyTorch's"
  cat "$tmp/wrong.txt" "$tmp/wrong.err"
  exit 1
fi
grep -q "FAIL: resnet18_b1 logits differ from torch's" "$tmp/wrong.err"
echo "ok: a wrong model is caught"

"$train" --model resnet18 --resnet-batch 4 --resnet-image-size 32 \
  --resnet-steps 1 --resnet-rounds 2 >"$tmp/train.txt" 2>"$tmp/train.err" || {
  echo "FAIL: bench/train"; cat "$tmp/train.txt" "$tmp/train.err"; exit 1; }
cat "$tmp/train.txt"
for key in resnet18_train_ms resnet18_train_torch_ms \
    resnet18_train_ratio_vs_torch resnet18_train_loss_maxdiff \
    resnet18_train_round1_ratio resnet18_train_ratio_max \
    resnet18_train_round1_cpu_ms resnet18_train_cpu_ratio_vs_torch; do
  grep -q "^$key=" "$tmp/train.txt" || { echo "FAIL: no $key= line"; exit 1; }
done
echo "ok: bench/train's ResNet-18 step agrees with PyTorch"
