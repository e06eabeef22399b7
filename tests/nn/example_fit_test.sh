#!/bin/bash
# examples/fit_fashion_mnist end to end, quickly (--batches-per-epoch): both
# models beat chance (10%) by far on the test set after a few dozen
# batches, and the exported MLP is a valid MXNet checkpoint (symbol with
# the dense layers' nodes, params with "arg:" names). Skips (SKIPPED,
# exit 0) when Fashion-MNIST is not installed.
#   example_fit_test.sh FIT_BIN TEST_SKIP_SH
set -euo pipefail
bin="$1"
# shellcheck disable=SC1090
source "$2"
data=/usr/share/datasets/fashion-mnist
if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
  mxc_test_skip "$data is not installed"
fi
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
for model in mlp lenet; do
  "$bin" --model "$model" --epochs 1 --batches-per-epoch 40 --seed 2 \
    --export "$tmp/$model" >"$tmp/out.txt"
  acc=$(sed -n 's/^final_test_accuracy=\([0-9.]*\) .*/\1/p' "$tmp/out.txt")
  if [ -z "$acc" ] || ! awk -v a="$acc" 'BEGIN { exit !(a >= 0.6) }'; then
    echo "FAIL ($model): test accuracy '$acc' after 40 batches; expected >= 0.6"
    cat "$tmp/out.txt"
    exit 1
  fi
  grep -q '"fc1_fwd"' "$tmp/$model-symbol.json"
  grep -q 'arg:fc1_weight' "$tmp/$model-0000.params"
done
# Bad usage is exit status 2.
set +e
"$bin" --model resnet >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: bad --model not refused"; exit 1; }
echo PASS
