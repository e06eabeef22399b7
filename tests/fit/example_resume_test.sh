#!/bin/bash
# examples/train_fashion_mnist end to end, quickly (--limit-batches): two
# epochs in one run must print exactly the same second-epoch figures (loss,
# train and test accuracy) as one epoch, --save, then --resume up to two
# epochs. Skips (SKIPPED, exit 0) when Fashion-MNIST is not installed.
#   example_resume_test.sh TRAIN_BIN TEST_SKIP_SH
set -euo pipefail
bin="$1"
# shellcheck disable=SC1090
source "$2"
data=/usr/share/datasets/fashion-mnist
if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
  mxc_test_skip "$data is not installed"
fi
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
common=(--limit-batches 4 --batch-size 64 --seed 3 --lr-step-epochs 1)
for model in mlp lenet; do
  ckpt="$tmp/$model.ckpt"
  "$bin" --model "$model" --epochs 2 "${common[@]}" >"$tmp/full.txt" 2>/dev/null
  "$bin" --model "$model" --epochs 1 --save "$ckpt" "${common[@]}" >"$tmp/first.txt" 2>/dev/null
  "$bin" --model "$model" --epochs 2 --resume "$ckpt" "${common[@]}" >"$tmp/resumed.txt" 2>/dev/null
  grep -q "resumed from $ckpt: 1 epoch(s) done" "$tmp/resumed.txt"
  # The figures after the timing: "train loss ..., train acc ..., test acc ...".
  want=$(grep '^epoch 2/2' "$tmp/full.txt" | sed 's/.*img\/s), //')
  got=$(grep '^epoch 2/2' "$tmp/resumed.txt" | sed 's/.*img\/s), //')
  if [ -z "$want" ] || [ "$want" != "$got" ]; then
    echo "FAIL ($model): uninterrupted '$want' vs resumed '$got'"
    cat "$tmp/full.txt" "$tmp/first.txt" "$tmp/resumed.txt"
    exit 1
  fi
  grep -q '^final_test_accuracy=' "$tmp/resumed.txt"
  echo "ok ($model): $got"
done
# Bad usage and a missing checkpoint fail cleanly with a message.
if "$bin" --model nonsense >/dev/null 2>"$tmp/err.txt"; then exit 1; fi
grep -q "unknown model 'nonsense'" "$tmp/err.txt"
if "$bin" --resume "$tmp/missing.ckpt" --limit-batches 1 >/dev/null 2>"$tmp/err.txt"; then
  exit 1
fi
grep -q "missing.ckpt" "$tmp/err.txt"
echo "ok: errors"
