# Sourced by bindings/test_prefix.sh: runs a binding's test process under
# the sanitizer the library was built with (--config=asan or tsan).
#
# The host programs (java, python3, R, a Go test binary) are not
# instrumented, but an instrumented libmxc.so needs the sanitizer runtime
# to be the first library in the process, so it is preloaded:
#   asan: libasan + libubsan (the library links both), and:
#     all     intercept_tls_get_addr=0: with it on, LeakSanitizer's
#             stop-the-world tracer died with SIGSEGV at exit now and then
#             ("Tracer caught signal 11": no leak check at all), in R
#             running mxc's engine threads and always in the JVM. It walks
#             the dynamic TLS of dlopen()ed libraries, which this runtime
#             can misread (google/sanitizers#1322 gives this option as the
#             workaround); static TLS and stacks are still scanned.
#     jvm     the JVM uses SIGSEGV itself (implicit null checks, safepoint
#             polls): handle_segv=0, allow_user_segv_handler=1. libjvm.so
#             is preloaded: dlopen()ed by the launcher, the tracer crash
#             above happened on every run (OpenJDK 17). And
#             symbolize=0: the JVM leaves thousands of its own allocations
#             at exit, and symbolizing their deep stacks took minutes
#             (sanitizer_logs.py symbolizes the frames in mxc's modules).
#     python  PYTHONMALLOC=malloc: pymalloc's arenas are mmap()ed, which
#             LeakSanitizer does not scan, so memory referenced only from
#             Python objects (ctypes buffers, DLPack capsules) would look
#             leaked; with malloc they are scanned.
#     go      nothing preloaded: `go test -asan` links the runtime into
#             the test binary and instruments the Go side too (Go code
#             touching poisoned C memory is reported).
#   tsan: libtsan; for the JVM and Go a suppression file (tsan_jvm.supp and
#     tsan_go.supp say why).
#     R's tests run in R's binary without its shell wrapper and Go's
#     test binaries without -race (their run_tests.sh say why).
# Reports go to one file per process (log_path) and the leak check does
# not change exit statuses (exitcode=0; other ASan errors still abort,
# abort_on_error=1 comes from .bazelrc); bindings/sanitizer_logs.py then
# fails the test on any error and on any leak allocated by mxc's code,
# and ignores the leaks of the runtimes themselves.
#
#   mxc_sanitized RUNTIME COMMAND...   RUNTIME: jvm, python, r or go.
# Runs COMMAND, with the settings above when $MXC_SANITIZER is asan or
# tsan (only COMMAND and its children get them, not the rest of the
# script), and returns non-zero when COMMAND or the reports fail.

mxc__san_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

mxc__asan_env() {
  local runtime=$1 logs=$2 preload opts
  preload="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  # <module> after every frame: sanitizer_logs.py attributes leaks by it.
  opts="detect_leaks=1:exitcode=0:intercept_tls_get_addr=0:log_path=$logs/asan"
  opts+=":stack_trace_format=\"    #%n %p %F %L <%m>\""
  case "$runtime" in
    jvm)
      preload+=" $(dirname "$(readlink -f "$(command -v java)")")/../lib/server/libjvm.so"
      opts+=":handle_segv=0:allow_user_segv_handler=1:symbolize=0" ;;
    python) export PYTHONMALLOC=malloc ;;
    go) preload="" ;;
  esac
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$opts"
  [ -z "$preload" ] || export LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}"
}

mxc__tsan_env() {
  local runtime=$1 logs=$2 opts="log_path=$logs/tsan"
  case "$runtime" in
    jvm) opts+=":suppressions=$mxc__san_dir/tsan_jvm.supp" ;;
    go) opts+=":suppressions=$mxc__san_dir/tsan_go.supp" ;;
  esac
  export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}$opts"
  export LD_PRELOAD="$(gcc -print-file-name=libtsan.so)${LD_PRELOAD:+ $LD_PRELOAD}"
}

mxc_sanitized() {
  local runtime=$1 logs status=0
  shift
  if [ -z "${MXC_SANITIZER:-}" ]; then
    "$@"
    return
  fi
  logs=$(mktemp -d "${TEST_TMPDIR:-/tmp}/sanitizer-logs.XXXXXX")
  echo "sanitizer: $MXC_SANITIZER ($runtime), reports in $logs" >&2
  (
    "mxc__${MXC_SANITIZER}_env" "$runtime" "$logs"
    exec "$@"
  ) || status=$?
  python3 "$mxc__san_dir/sanitizer_logs.py" "$logs" >&2 || [ "$status" != 0 ] || status=1
  return "$status"
}
