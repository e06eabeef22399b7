#!/bin/bash
# bench/data --quick (48 JPEGs, batch 16, one epoch, two training steps):
# it makes its data set (scripts/make_bench_images.py + mxc-im2rec), runs
# the iterator and PyTorch's DataLoader to the end, prints every figure,
# and both sides read each image once with the same labels and values
# (bench/data compares them: image counts, label sums, the mean per
# channel and standard deviation of the normalized values). With red and
# blue swapped in the images of the folder PyTorch reads, or one of them
# removed (the .rec unchanged), bench/data must see the mismatch and fail.
# No timing is asserted. Skips (SKIPPED, exit 0) without PyTorch,
# torchvision, numpy or PIL.
#   data_smoke_test.sh DATA_BIN TEST_SKIP_SH
set -euo pipefail
data="$1"
# shellcheck disable=SC1090
source "$2"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import torch, torchvision, numpy, PIL' 2>/dev/null; then
  mxc_test_skip "PyTorch, torchvision, numpy or PIL missing (python3-torch, python3-torchvision, python3-numpy, python3-pil)"
fi
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
export MXC_BENCH_CACHE="$tmp/cache"  # the JPEGs are made here

"$data" --quick --threads 2 >"$tmp/data.txt" 2>"$tmp/data.err" || {
  echo "FAIL: bench/data --quick"; cat "$tmp/data.txt" "$tmp/data.err"; exit 1; }
cat "$tmp/data.txt"
for key in cpu image_iter_images_per_s image_iter_median_images_per_s \
    image_iter_torch_images_per_s image_iter_ratio_vs_torch \
    image_iter_mean_r image_iter_std image_iter_torch_mean_b \
    image_iter_torch_std \
    train_step_ms_from_iter train_step_ms_in_memory data_wait_ms_per_step \
    train_step_ratio_iter_vs_memory; do
  grep -q "^$key=" "$tmp/data.txt" || { echo "FAIL: no $key= line"; exit 1; }
done
grep -q "^image_iter_epoch_images=48$" "$tmp/data.txt" || {
  echo "FAIL: mxc's epoch is not the 48 images"; exit 1; }
grep -q "^image_iter_torch_epoch_images=48$" "$tmp/data.txt" || {
  echo "FAIL: PyTorch's epoch is not the 48 images"; exit 1; }
[ "$(find "$tmp/cache/data-48/images" -name '*.jpg' | wc -l)" = 48 ]
[ -s "$tmp/cache/data-48/bench.rec" ] && [ -s "$tmp/cache/data-48/bench.idx" ]
echo "ok: bench/data runs and both sides read the same 48 images"

# The folder's images get red and blue swapped (a channel order bug on
# one side): the same images and labels, other values; caught.
"$py" - "$tmp/cache/data-48/images" <<'EOF'
import pathlib
import sys
from PIL import Image
for path in pathlib.Path(sys.argv[1]).rglob("*.jpg"):
    r, g, b = Image.open(path).convert("RGB").split()
    Image.merge("RGB", (b, g, r)).save(path, quality=90)
EOF
if "$data" --quick --threads 1 >"$tmp/swap.txt" 2>"$tmp/swap.err"; then
  echo "FAIL: bench/data accepted values that differ between the sides"
  cat "$tmp/swap.txt" "$tmp/swap.err"
  exit 1
fi
grep -q "FAIL: image_iter_mean_r=" "$tmp/swap.err" || {
  echo "FAIL: no message about the values"; cat "$tmp/swap.err"; exit 1; }
echo "ok: values that differ between the sides are caught"

# The folder loses an image the .rec still holds: the sides differ.
rm "$tmp/cache/data-48/images/class3/00003.jpg"
if "$data" --quick --threads 1 >"$tmp/bad.txt" 2>"$tmp/bad.err"; then
  echo "FAIL: bench/data accepted data sets that differ"
  cat "$tmp/bad.txt" "$tmp/bad.err"
  exit 1
fi
grep -q "FAIL: mxc read 48 images" "$tmp/bad.err" || {
  echo "FAIL: no message about the mismatch"; cat "$tmp/bad.err"; exit 1; }
echo "ok: a data set that differs between the sides is caught"
