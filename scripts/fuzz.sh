#!/bin/bash
# Fuzzing with libFuzzer (docs/fuzzing.md).
#
#   scripts/fuzz.sh TARGET MINUTES [JOBS]   one target, a long run
#   scripts/fuzz.sh --smoke [SECONDS]       every target for SECONDS (25)
#   scripts/fuzz.sh --list                  the targets
#   MXC_FUZZ_RUNS=N scripts/fuzz.sh ...     also stop after N executions
#   MXC_FUZZ_BIN=DIR scripts/fuzz.sh ...    prebuilt binaries, no build
#   MXC_FUZZ_TIMEOUT=S scripts/fuzz.sh ...  per-input time limit (default 25)
#
# Targets are built with --config=fuzz (clang, libFuzzer, ASan+UBSan).
# Each run starts from the committed corpus (tests/fuzz/corpus/TARGET) plus
# what earlier runs on this machine found (fuzz-work/TARGET/corpus, not
# committed), and writes crashes to fuzz-work/TARGET/ (crash-*, oom-*,
# timeout-*). A finding becomes a fixed bug plus a regression input:
# minimize it (BIN -minimize_crash=1 FILE), copy it into
# tests/fuzz/corpus/TARGET/ as regress_<what>, and fix the bug; the
# corpus tests then replay it in every test pass.
# The last line of a run is a summary: target, executions, coverage
# (edges), corpus size, findings.
set -euo pipefail
cd "$(dirname "$0")/.."

targets() {
  grep -A1 "^mxc_fuzz_target(" tests/fuzz/BUILD | sed -n 's/^ *name = "\(.*\)",$/\1/p'
}

# MXC_FUZZ_BIN=DIR runs copies of the binaries kept in DIR and builds
# nothing: a long run then goes on while the tree is edited and rebuilt.
bin_dir=${MXC_FUZZ_BIN:-$PWD/bazel-out/k8-optfuzz/bin/tests/fuzz}

build() {
  [ -n "${MXC_FUZZ_BIN:-}" ] && return 0
  bazel build --config=fuzz $(targets | sed 's|^|//tests/fuzz:|')
}

# Large single allocations fail (mxc reports MXC_ERR_OOM) rather than
# count as findings: a model may legitimately ask for more memory than the
# machine has; what must never happen is a crash or an undersized buffer.
export ASAN_OPTIONS="allocator_may_return_null=1:max_allocation_size_mb=512:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export MXC_NUM_THREADS="${MXC_NUM_THREADS:-2}"

# run TARGET SECONDS JOBS: fuzzes and prints the summary line.
run() {
  local t=$1 secs=$2 jobs=$3 root=$PWD work log
  work=fuzz-work/$t
  mkdir -p "$work/corpus"
  rm -f "$work"/fuzz-*.log
  log=$root/$work/last.log
  # MXC_FUZZ_TIMEOUT: seconds one input may take (default 25). Raise it
  # for runs beside other work: on a loaded machine at nice 19 an input
  # that takes 0.5 s of CPU once took 27 s of wall time and stopped a run
  # as a false "timeout" finding.
  local opts=(-max_total_time="$secs" -rss_limit_mb=2560
    -timeout="${MXC_FUZZ_TIMEOUT:-25}" -print_final_stats=1)
  [ -f "tests/fuzz/$t.dict" ] && opts+=(-dict="$root/tests/fuzz/$t.dict")
  # MXC_FUZZ_RUNS=N also ends a run after N executions (per job).
  [ -n "${MXC_FUZZ_RUNS:-}" ] && opts+=(-runs="$MXC_FUZZ_RUNS")
  # Several jobs: libFuzzer forks workers that share the corpus directory
  # and write fuzz-N.log each.
  [ "$jobs" -gt 1 ] && opts+=(-jobs="$jobs" -workers="$jobs")
  local rc=0
  # Findings are the files this run writes: the work folder outlives runs
  # and may hold an older input, already fixed and in the corpus.
  touch "$work/.started"
  (cd "$work" && "$bin_dir/$t" "${opts[@]}" \
    corpus "$root/tests/fuzz/corpus/$t") > "$log" 2>&1 || rc=$?
  cat "$work"/fuzz-*.log >> "$log" 2>/dev/null || true
  local execs cov corpus crashes
  execs=$(awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}' "$log")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  corpus=$(ls "$work/corpus" | wc -l)
  crashes=$(find "$work" -maxdepth 1 -newer "$work/.started" \
    \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) |
    wc -l)
  echo "fuzz: target=$t seconds=$secs executions=$execs coverage_edges=${cov:-0} corpus=$corpus findings=$crashes rc=$rc"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    echo "fuzz: $t FAILED; the report:" >&2
    grep -A40 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error|==ABORT' "$log" | head -80 >&2 || tail -40 "$log" >&2
    return 1
  fi
}

# smoke SECONDS: every target for SECONDS, MXC_FUZZ_PARALLEL (default:
# the number of CPUs) at a time, since one libFuzzer job keeps one CPU
# busy; each target's lines are printed together, in the list's order.
smoke() {
  local secs=$1 par=${MXC_FUZZ_PARALLEL:-$(nproc)} fail=0 t
  mkdir -p fuzz-work
  export -f run
  export bin_dir
  targets | xargs -P "$par" -I{} bash -c \
    'run "$1" "$2" 1 > "fuzz-work/$1.smoke" 2>&1' _ {} "$secs" || fail=1
  for t in $(targets); do cat "fuzz-work/$t.smoke"; done
  return $fail
}

case "${1:-}" in
--list) targets ;;
--smoke)
  build
  smoke "${2:-25}"
  ;;
fuzz_*)
  [ $# -ge 2 ] || { echo "usage: $0 TARGET MINUTES [JOBS]" >&2; exit 2; }
  targets | grep -qx "$1" || { echo "unknown target $1; see $0 --list" >&2; exit 2; }
  build
  [ "$2" -gt 0 ] || { echo "MINUTES must be > 0" >&2; exit 2; }
  run "$1" $(($2 * 60)) "${3:-1}"
  ;;
*)
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
  ;;
esac
