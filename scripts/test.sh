#!/bin/bash
# Every test: set up, then the whole suite in the default (optimized)
# configuration, under ASan+UBSan, and under TSan. Benchmarks are built (not
# timed: tests never assert on timing). MXC_TEST_QUICK=1 skips the
# sanitizer passes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bazel build //...
bazel test //...
if [ "${MXC_TEST_QUICK:-0}" != 1 ]; then
  # Separate output bases would rebuild everything; --config changes the
  # configuration hash, so the three builds coexist in one cache.
  bazel test --config=asan //...
  bazel test --config=tsan //...
fi
echo "all tests passed"
