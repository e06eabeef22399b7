#!/bin/bash
# examples/train_fashion_mnist --kvstore, quickly (--limit-batches):
#  - "local" trains exactly as without a store (the same figures);
#  - "dist_sync" with 2 ranks under mpirun: every rank prints its epochs
#    with its "[rank r/2]" prefix, both hold the same parameters (the same
#    test accuracy after every epoch), rank 0 alone prints the result.
# Skips (SKIPPED, exit 0) when Fashion-MNIST is not installed.
#   example_dist_test.sh TRAIN_BIN TEST_SKIP_SH MPIRUN PLUGIN TSAN_SUPP
set -euo pipefail
bin="$1" mpirun="$3" plugin="$4" supp="$PWD/$5"
# shellcheck disable=SC1090
source "$2"
data=/usr/share/datasets/fashion-mnist
if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
  mxc_test_skip "$data is not installed"
fi
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
common=(--epochs 2 --limit-batches 6 --batch-size 64 --seed 3 --threads 1)
"$bin" "${common[@]}" >"$tmp/alone.txt" 2>/dev/null
"$bin" "${common[@]}" --kvstore local >"$tmp/local.txt" 2>/dev/null
figures() { grep '^epoch' "$1" | sed 's/.*img\/s), //'; }
if [ "$(figures "$tmp/alone.txt")" != "$(figures "$tmp/local.txt")" ] ||
   [ -z "$(figures "$tmp/alone.txt")" ]; then
  echo "FAIL: --kvstore local trains otherwise than no store"
  cat "$tmp/alone.txt" "$tmp/local.txt"
  exit 1
fi
export MXC_MPI_PLUGIN="$PWD/$plugin" MXC_KVSTORE_TIMEOUT=60
# Sanitizer passes: Open MPI's own leaks and locking are not mxc's (see
# tests/kvstore/dist_test.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$supp"
unset TEST_PREMATURE_EXIT_FILE XML_OUTPUT_FILE
export TMPDIR="$tmp"
timeout 240 "$mpirun" --allow-run-as-root --oversubscribe -np 2 \
  --mca btl self,vader --bind-to none -x MXC_MPI_PLUGIN -x MXC_KVSTORE_TIMEOUT \
  -x ASAN_OPTIONS -x TSAN_OPTIONS "$bin" "${common[@]}" --kvstore dist_sync >"$tmp/dist.txt" 2>"$tmp/dist.err"
cat "$tmp/dist.txt"
for r in 0 1; do
  grep -q "^\[rank $r/2\] data parallel (dist_sync): 2 workers, 32 examples" "$tmp/dist.txt"
  grep -q "^\[rank $r/2\] epoch 2/2: " "$tmp/dist.txt"   # its progress
done
for e in 1 2; do
  acc=$(grep "^\[rank [01]/2\] epoch $e/2" "$tmp/dist.txt" | sed 's/.*test acc //' | sort -u)
  if [ "$(wc -l <<<"$acc")" != 1 ] || [ -z "$acc" ]; then
    echo "FAIL: the ranks' test accuracies after epoch $e differ: $acc"
    exit 1
  fi
done
if [ "$(grep -c '^final_test_accuracy=' "$tmp/dist.txt")" != 1 ]; then
  echo "FAIL: the result must be printed once (by rank 0)"
  exit 1
fi
echo "PASS"
