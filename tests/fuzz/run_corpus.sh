#!/bin/bash
# Replays a fuzz target's committed corpus (seeds and regression inputs):
# run_corpus.sh TARGET_BINARY CORPUS_DIR. A crash, sanitizer report or
# abort fails the test. Huge allocations fail (return NULL, reported by mxc
# as MXC_ERR_OOM) instead of ending the run, as under scripts/fuzz.sh.
set -euo pipefail
bin=$1 dir=$2
[ -d "$dir" ] || { echo "no corpus directory $dir" >&2; exit 1; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:max_allocation_size_mb=512"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}allocator_may_return_null=1"
"$bin" "$dir"
