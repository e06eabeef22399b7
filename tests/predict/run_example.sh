#!/bin/bash
# Runs examples/predict_fashion_mnist on the shared Fashion-MNIST model
# with 3 threads sharing weights and batches of 300 (10,000 = 33 x 300 +
# 100: the last 100 images go through a reshaped predictor), and checks
# the printed accuracy against the model's known 86.8% (+- 0.5).
#   run_example.sh EXAMPLE
set -euo pipefail
# shellcheck disable=SC1091
source tools/test_skip.sh
example=$1
models=${MXC_MXNET_MODELS:-}
if [ -z "$models" ]; then
  root=$(dirname "$(dirname "$(readlink -f scripts/make_predictor_model.py)")")
  for up in ../shared ../../shared shared; do
    if [ -r "$root/$up/mxnet-models/README.md" ]; then
      models=$root/$up/mxnet-models
      break
    fi
  done
fi
data=${MXC_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
prefix=$models/mentalblood_fashion-mnist
if [ -z "$models" ] || [ ! -r "$prefix-symbol.json" ]; then
  mxc_test_skip "shared mxnet-models directory not found"
fi
[ -r "$data/t10k-images-idx3-ubyte.gz" ] ||
  mxc_test_skip "Fashion-MNIST test set not found in $data"
out=$("$example" --prefix "$prefix" --epoch 39 --data "$data" --batch 300 \
  --threads 3)
echo "$out"
acc=$(sed -n 's/.*accuracy \([0-9.]*\),.*/\1/p' <<<"$out")
case "$out" in
  "10000 images, 3 thread(s), batch 300: accuracy "*) ;;
  *) echo "FAIL: unexpected output"; exit 1 ;;
esac
awk -v a="$acc" 'BEGIN { exit !(a >= 0.863 && a <= 0.873) }' ||
  { echo "FAIL: accuracy $acc, expected 0.868 +- 0.005"; exit 1; }
echo PASS
