#!/bin/bash
# Smoke test of examples/sparse_linear (linked against libmxc.so.1, public
# API only): a small synthetic LibSVM data set from
# examples/make_libsvm_data, a few epochs of a few batches; the example's
# --check makes it fail unless the training loss went down. Also: the
# generator is deterministic, and usage / missing-file errors exit nonzero
# with a message instead of crashing.
set -euo pipefail
train=$1 gen=$2
dir=${TEST_TMPDIR:-/tmp}/sparse_linear_smoke
mkdir -p "$dir" "$dir/again"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$gen" --out-dir "$dir" --train 2000 --test 500 --features 5000 --nnz 20 \
  --classes 3 --seed 7 > "$dir/gen.log"
"$gen" --out-dir "$dir/again" --train 2000 --test 500 --features 5000 \
  --nnz 20 --classes 3 --seed 7 > /dev/null
cmp -s "$dir/train.svm" "$dir/again/train.svm" || fail "generator not deterministic"
cmp -s "$dir/test.svm" "$dir/again/test.svm" || fail "generator not deterministic"

"$train" --train "$dir/train.svm" --test "$dir/test.svm" --features 5000 \
  --classes 3 --batch-size 64 --epochs 3 --lr 1 --limit-batches 20 --check \
  > "$dir/run.log" 2> "$dir/run.err" || { cat "$dir/run.log" "$dir/run.err"; fail "training run"; }
cat "$dir/run.log"
grep -q '^epoch 3:' "$dir/run.log" || fail "no epoch 3 line"
grep -q 'weight rows touched by row_sparse updates' "$dir/run.log" || fail "no touched-rows line"
grep -q "storage fallbacks logged: 0" "$dir/run.log" || fail "an operator fell back to dense: $(cat "$dir/run.err")"
# With momentum (sgd_mom_update with a row_sparse gradient) as well.
"$train" --train "$dir/train.svm" --test "$dir/test.svm" --features 5000 \
  --classes 3 --batch-size 64 --epochs 2 --lr 0.5 --momentum 0.9 \
  --limit-batches 10 --check > "$dir/mom.log" 2>&1 || { cat "$dir/mom.log"; fail "momentum run"; }

# Errors: bad usage is status 2; a missing file or a feature index past
# --features is status 1 with the library's message.
set +e
"$train" --features 10 > /dev/null 2>&1; [ $? -eq 2 ] || fail "usage status"
"$train" --train "$dir/nope.svm" --test "$dir/test.svm" --features 5000 \
  2> "$dir/err1" > /dev/null
[ $? -eq 1 ] && grep -q 'nope.svm' "$dir/err1" || fail "missing file: $(cat "$dir/err1")"
"$train" --train "$dir/train.svm" --test "$dir/test.svm" --features 100 \
  --classes 3 2> "$dir/err2" > /dev/null
[ $? -eq 1 ] && grep -q 'train.svm:1:' "$dir/err2" || fail "index range: $(cat "$dir/err2")"
"$gen" --out-dir "$dir" --classes 1 > /dev/null 2>&1; [ $? -eq 2 ] || fail "generator usage"
echo PASS
