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
# Debian packages built from the tree, installed, and a program compiled
# against them with pkg-config (reuses the default build above).
scripts/install_test.sh
if [ "${MXC_TEST_QUICK:-0}" != 1 ]; then
  # asan and tsan have their own output directories (--platform_suffix in
  # .bazelrc), so the three builds coexist in one cache.
  bazel test --config=asan //...
  bazel test --config=tsan //...
fi
echo "all tests passed"
