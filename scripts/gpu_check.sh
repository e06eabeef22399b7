#!/bin/bash
# One prepared run for a GPU machine (issue 17; figures go to docs/gpu.md).
#
#   scripts/gpu_check.sh prepare [DIR]  on a build machine (CUDA toolkit,
#        no GPU needed): builds the CUDA plug-in and the GPU test programs
#        into DIR (default build/gpu_check) with the shared libraries they
#        load that a bare CUDA machine may lack, then packs DIR.tar.xz
#        (what travels: the libraries are large, the archive is not).
#   scripts/gpu_check.sh run [DIR]      on the GPU machine (no Bazel, no
#        network): unpacks DIR.tar.xz if DIR is missing, runs every program
#        against the plug-in, writes logs under $OUT (or /tmp/gpu_check)
#        and ends with a table: cases passed/failed/skipped per program.
#        Exit status 0 only when nothing failed and a GPU was used.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}
dir=${2:-build/gpu_check}
# Programs run by `run`, in order: NAME=BAZEL_TARGET.
programs=(
  "test_cuda_plugin=//tests/gpu:test_cuda_plugin"
  "test_gpu_conformance=//tests/gpu:test_gpu_conformance"
  "test_cuda_dnn_threads=//tests/gpu:test_cuda_dnn_threads"
)

# The C library's own files: every Linux machine has them, in a version at
# least as new as Debian 12's.
system_lib='/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so'
# Toolkit libraries are never carried (the plug-in opens them on first
# use; `run` finds the GPU machine's own): a program that links one by
# mistake fails there instead of growing the archive by hundreds of MB.
toolkit_lib='/lib(cudnn|cublas|cublasLt|cusparse|nvrtc|nccl)[^/]*\.so'

prepare() {
  local targets=(//backends/cuda:libmxc_cuda.so.1) p
  for p in "${programs[@]}"; do targets+=("${p#*=}"); done
  bazel build "${targets[@]}"
  rm -rf "$dir" "$dir.tar.xz"
  mkdir -p "$dir/bin" "$dir/lib"
  cp bazel-bin/backends/cuda/libmxc_cuda.so.1 "$dir/lib/"
  for p in "${programs[@]}"; do
    local t=${p#*=}
    cp "bazel-bin/${t#//}" "$dir/bin/${p%%=*}" 2>/dev/null ||
      cp "bazel-bin/$(echo "${t#//}" | tr : /)" "$dir/bin/${p%%=*}"
  done
  chmod u+w "$dir"/bin/* "$dir"/lib/*
  ldd "$dir"/bin/* "$dir"/lib/*.so* | awk '/=> \//{print $3}' | sort -u |
    { grep -vE "$system_lib|$toolkit_lib" || true; } |
    xargs -r cp -L -t "$dir/lib/"
  cp scripts/gpu_check.sh "$dir/"
  tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
  echo "gpu_check: prepared $dir ($(du -sh "$dir" | cut -f1)), packed" \
    "$dir.tar.xz ($(du -sh "$dir.tar.xz" | cut -f1)); carry $dir.tar.xz and" \
    "run: scripts/gpu_check.sh run $dir"
}

# counts LOG: "passed failed skipped" from a GoogleTest log.
counts() {
  local ok fail skip
  ok=$(grep -c '^\[       OK \]' "$1" || true)
  fail=$(grep -c '^\[  FAILED  \] [^ ]*\.[^ ]* (' "$1" || true)
  skip=$(grep -c '^\[  SKIPPED \] [^ ]*\.[^ ]* (' "$1" || true)
  echo "$ok $fail $skip"
}

# Toolkit libraries the plug-in opens on first use (backends/cuda/dynlib.h)
# and never carries (hundreds of MB): the machine's own, found by the
# loader, or else those of the nvidia-* Python wheels (PyTorch's).
toolkit_libs=(libcudnn.so.9)

# found LIB: 0 when the dynamic loader finds LIB (LD_LIBRARY_PATH or its
# cache).
found() {
  local d path=${LD_LIBRARY_PATH:-}
  for d in ${path//:/ }; do [ -e "$d/$1" ] && return 0; done
  ldconfig -p 2>/dev/null | grep -q "/$1\$"
}

# The lib folders of the nvidia-* wheels: python3's site-packages first,
# then the usual virtual environments.
wheel_lib_dirs() {
  python3 -c 'import glob, os, sys
for p in sys.path:
    for d in sorted(glob.glob(os.path.join(p, "nvidia", "*", "lib"))):
        print(d)' 2>/dev/null || true
  ls -d /opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib 2>/dev/null || true
}

# Puts the wheels' lib folders on LD_LIBRARY_PATH when a toolkit library
# is not otherwise found, and says which were used.
use_wheel_libs() {
  local lib missing=() d dirs=()
  for lib in "${toolkit_libs[@]}"; do found "$lib" || missing+=("$lib"); done
  [ ${#missing[@]} = 0 ] && { echo "gpu_check: toolkit libraries found" \
    "by the loader: ${toolkit_libs[*]}"; return; }
  while read -r d; do
    [ -n "$d" ] && [[ " ${dirs[*]} " != *" $d "* ]] && dirs+=("$d")
  done < <(wheel_lib_dirs)
  if [ ${#dirs[@]} = 0 ]; then
    echo "gpu_check: ${missing[*]} not found, and no nvidia-* wheel lib" \
      "folder: their kernels will answer MXC_ERR_UNSUPPORTED"
    return
  fi
  local joined
  joined=$(IFS=:; echo "${dirs[*]}")
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$joined"
  echo "gpu_check: ${missing[*]} not found by the loader; using the wheel" \
    "lib folders:"
  printf '  %s\n' "${dirs[@]}"
  for lib in "${missing[@]}"; do
    found "$lib" || echo "gpu_check: $lib still not found"
  done
}

run() {
  [ -d "$dir" ] || tar -C "$(dirname "$dir")" -xJf "$dir.tar.xz"
  local out=${OUT:-/tmp/gpu_check} rows=() status=0 p name log rc
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  use_wheel_libs
  export MXC_CUDA_PLUGIN="$dir/lib/libmxc_cuda.so.1"
  echo "=== gpu_check: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader ||
    echo "gpu_check: nvidia-smi failed"
  for p in "${programs[@]}"; do
    name=${p%%=*}
    log=$out/$name.log
    echo "=== gpu_check: $name"
    rc=0
    "$dir/bin/$name" 2>&1 | tee "$log" || rc=$?
    [ "$rc" = 0 ] || status=1
    read -r ok fail skip < <(counts "$log")
    [ "$skip" = 0 ] || status=1  # a skip here means no GPU was used
    rows+=("$(printf '%-24s %6s %6s %7s %4s' "$name" "$ok" "$fail" "$skip" "$rc")")
  done
  echo "=== gpu_check: summary"
  printf '%-24s %6s %6s %7s %4s\n' program passed failed skipped exit
  printf '%s\n' "${rows[@]}"
  # The conformance suite's line per kernel: which operators failed.
  if [ -f "$out/test_gpu_conformance.log" ]; then
    echo "=== gpu_check: kernels compared with the CPU"
    grep '^gpu_conformance: ' "$out/test_gpu_conformance.log" || true
  fi
  return $status
}

case "$cmd" in
  prepare) prepare ;;
  run) run ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
