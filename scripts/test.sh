#!/bin/bash
# Every test: set up, then the whole suite in the default (optimized)
# configuration, the install test, and the suite under ASan+UBSan and
# under TSan. Benchmarks are built (not timed: tests never assert on
# timing). MXC_TEST_QUICK=1 skips the sanitizer and fuzzing passes.
#
# Each pass prints a banner when it starts and its time when it ends; the
# total comes last. CI (a fresh clone, 2 cores, installs included) took 54
# minutes at 2026-11-27's first stop, mostly compiling every source in four
# configurations; .bazelrc's --force_pic then halved the compile actions of
# each (874 to 438 under ASan). A new pass is one more
# `pass NAME COMMAND...` line; measure the suite when you add one.
set -euo pipefail
cd "$(dirname "$0")/.."

t_start=$(date +%s)
timings=()

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

times_so_far() {
  echo "=== test.sh: times"
  printf '  %s\n' "${timings[@]}"
  echo "  $(printf '%-22s %s' total "$(fmt_time $(($(date +%s) - t_start)))")"
  disk_report
}

# disk_report: free space where Bazel writes (its output base and any
# disk cache), and the output base's size. A full disk once failed CI
# (2026-11-29) as a link with no message: the linker's own error could
# not be written either. Each pass adds a configuration's objects
# (several GB), so the figures at each pass's end show the headroom.
disk_report() {
  local base free
  base=$(bazel info output_base 2>/dev/null) || base=
  free=$(df -h --output=avail "${base:-.}" 2>/dev/null | tail -1 | tr -d ' ')
  echo "  disk: ${free:-?} free${base:+, output base $(du -sh "$base" 2>/dev/null | cut -f1)}"
}

# pass NAME COMMAND...: runs COMMAND (a program: set -e does not reach
# into a shell function called here) under a banner and records its time;
# the first pass that fails ends the script with the times so far.
pass() {
  local name=$1 t0 dt out
  shift
  echo
  echo "=== test.sh: $name: $*"
  t0=$(date +%s)
  out=$(mktemp)
  if ! "$@" 2>&1 | tee "$out"; then
    dt=$(($(date +%s) - t0))
    timings+=("$(printf '%-22s %s FAILED' "$name" "$(fmt_time "$dt")")")
    echo "=== test.sh: $name: FAILED after $(fmt_time "$dt")"
    times_so_far
    failure_digest "$out"
    exit 1
  fi
  rm -f "$out"
  dt=$(($(date +%s) - t0))
  timings+=("$(printf '%-22s %s' "$name" "$(fmt_time "$dt")")")
  echo "=== test.sh: $name: passed in $(fmt_time "$dt")"
  disk_report
}

# failure_digest OUTPUT: the lines that say why each failed Bazel test
# failed (a failing Go or JUnit case, a sanitizer's summary, a panic), at
# most 12 per test, printed last: CI shows the start and the end of a long
# output, and a failure's reason was lost in the middle once (2026-11-28).
failure_digest() {
  local log strong='^(--- FAIL|FAIL|panic:|fatal error:|SUMMARY: |WARNING: |==[0-9]+==ERROR|\[  FAILED  \] [A-Za-z]|.*MethodSource|Error in )'
  grep -o 'FAIL: //[^ ]* (see [^)]*)' "$1" | sed 's/.*(see \(.*\))/\1/' |
    sort -u | while IFS= read -r log; do
      echo "=== test.sh: why ${log%/test.log}"
      [ -f "$log" ] || continue
      grep -E "$strong" "$log" | head -8 | cut -c1-300
      grep -E '_test\.(go|cc|py|R):[0-9]+: |\.java:[0-9]+\)|[Ee]rror: ' "$log" |
        grep -vE "$strong" | tail -4 | cut -c1-300
    done
}

# skipped TESTLOGS: Bazel 4 reports a test that skipped itself as PASSED,
# so after each test pass this lists the tests whose log says
# `SKIPPED: REASON` (tools/test_skip.sh) and how many GoogleTest cases
# skipped (GTEST_SKIP). Logs of cached results are there too: the list is
# the whole pass's, not only what ran this time.
skipped() {
  local logs=$1 log target n=0 cases
  [ -d "$logs" ] || return 0
  echo "=== test.sh: skipped in $logs"
  while IFS= read -r log; do
    target=${log#"$logs"/}
    target=//${target%/test.log}
    printf '  SKIPPED %s: %s\n' "${target%/*}:${target##*/}" \
      "$(grep -m1 '^SKIPPED: ' "$log" | cut -c10-)"
    n=$((n + 1))
  done < <(grep -rlx --include=test.log 'SKIPPED: .*' "$logs" | sort)
  cases=$(grep -rhE --include=test.log '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$logs" | wc -l)
  echo "  $n test(s) skipped entirely; $cases GoogleTest case(s) skipped"
}

pass setup scripts/setup.sh
# The output base held 7.8 GB halfway through the ASan pass (2026-11-29),
# and a disk cache (~/.bazelrc) keeps a second copy: warn at the start
# rather than fail at a link.
free_kb=$(df --output=avail -k . | tail -1)
if [ "$free_kb" -lt $((20 * 1024 * 1024)) ]; then
  echo "=== test.sh: WARNING: $((free_kb / 1024)) MiB free here; the passes" \
    "below may write 20 GB of build outputs"
fi
pass build bazel build //...
pass test bazel test //...
skipped bazel-out/k8-opt/testlogs
# Debian packages built from the tree, installed, and a program compiled
# against them with pkg-config (reuses the default build above).
pass "install test" scripts/install_test.sh
if [ "${MXC_TEST_QUICK:-0}" != 1 ]; then
  # asan and tsan have their own output directories (--platform_suffix in
  # .bazelrc: bazel-out/k8-optasan, k8-opttsan), so the three builds
  # coexist in one cache; their test logs are under
  # bazel-out/k8-optasan/testlogs and bazel-out/k8-opttsan/testlogs.
  # --build_tests_only: the sanitizer builds compile what the tests run,
  # not every benchmark and example again (the default build above
  # compiles those once).
  pass "ASan+UBSan" bazel test --config=asan --build_tests_only //...
  skipped bazel-out/k8-optasan/testlogs
  # Tests tagged no_tsan (single-threaded host logic, or the real GPU
  # plug-in without a GPU: tests/gpu/BUILD says which and why) are neither
  # built nor run under TSan; the two passes above run them.
  pass "TSan" bazel test --config=tsan --build_tests_only \
    --test_tag_filters=-no_tsan //...
  skipped bazel-out/k8-opttsan/testlogs
  # Every libFuzzer target for a short run under ASan+UBSan (clang,
  # --config=fuzz; long runs: scripts/fuzz.sh TARGET MINUTES). The corpus
  # of each is also replayed by the //tests/fuzz:*_corpus tests above.
  pass "fuzz smoke" scripts/fuzz.sh --smoke "${MXC_FUZZ_SMOKE_SECONDS:-10}"
fi

echo
times_so_far
echo "all tests passed"
