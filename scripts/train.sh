#!/bin/bash
# The main job: on a fresh Debian machine, install what is missing (scripts/
# setup.sh: toolchain, OpenBLAS, zlib, Fashion-MNIST), build the shared
# library and the training example with optimizations, and train on
# Fashion-MNIST through the public C API: the MLP for 10 epochs (goal: test
# accuracy >= 87.5%), then LeNet for 2 epochs (goal: >= 88%), then LeNet
# again from PNG images packed into RecordIO files (scripts/train_images.sh).
# SGD with momentum 0.9; the learning rate drops tenfold for the last
# epochs (after 8 of the MLP's, after LeNet's first; see
# examples/train_fashion_mnist.c). About 2-3 minutes on 2 cores once built,
# plus the images' first making and packing. Exit status: 0 when every run
# succeeds (goal or not; each prints whether it met its goal). Extra
# arguments go to every run (e.g. --limit-batches 50 for a quick try).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bazel build -c opt //c_api:libmxc.so.1.0.0 //c_api:libmxc_so_links \
  //examples:train_fashion_mnist //examples:mxc-im2rec
bin=bazel-bin/examples/train_fashion_mnist
status=0
echo "== MLP 784-512-256-10, 10 epochs, batch 128, SGD lr 0.1 (0.01 after epoch 8) momentum 0.9"
"$bin" --model mlp --epochs 10 --batch-size 128 --lr 0.1 --momentum 0.9 "$@" || status=$?
echo
echo "== LeNet, 2 epochs, batch 128, SGD lr 0.05 (0.005 after epoch 1) momentum 0.9"
"$bin" --model lenet --epochs 2 --batch-size 128 --lr 0.05 --momentum 0.9 "$@" || status=$?
echo
echo "== The image path: PNG files -> mxc-im2rec -> RecordIO -> LeNet (scripts/train_images.sh)"
scripts/train_images.sh "$@" || status=$?
exit "$status"
