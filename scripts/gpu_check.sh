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
#        and ends with a table: cases passed/failed/skipped per program,
#        then each benchmark's figures (name=value lines).
#        Exit status 0 only when nothing failed and a GPU was used.
#        The toolkit's libraries the plug-in opens itself (cuBLAS, cuDNN,
#        NVRTC, NCCL, cuSPARSE, cuSOLVER) do not travel (hundreds of MB): where the dynamic loader
#        does not find them, `run` adds the lib folders of the nvidia-*
#        Python wheels (PyTorch's) to LD_LIBRARY_PATH and prints which.
#        bench_gpu's PyTorch peer runs with the first Python found that
#        imports torch (PyTorch's venv under /opt, or python3).
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:-}
dir=${2:-build/gpu_check}
# Programs run by `run`, in order: NAME=BAZEL_TARGET.
programs=(
  "test_cuda_plugin=//tests/gpu:test_cuda_plugin"
  "test_gpu_conformance=//tests/gpu:test_gpu_conformance"
  "test_cuda_dnn_threads=//tests/gpu:test_cuda_dnn_threads"
  "test_cuda_streams=//tests/gpu:test_cuda_streams"
  "test_kvstore_nccl_cuda=//tests/kvstore:test_kvstore_nccl_cuda"
)
# Extra arguments of a program in `run`. test_cuda_plugin's
# OperatorsOnTheGpuDoc compares the plug-in's table with the repository's
# docs/gpu-operators.md, which does not travel; the repository's own
# suite runs it (a dry run of `run` on a machine without a GPU found it
# failing there, 2026-11-29).
declare -A program_args=(
  [test_cuda_plugin]="--gtest_filter=-Cuda.OperatorsOnTheGpuDoc"
)
# Shared libraries the programs load by name from lib/ (LD_LIBRARY_PATH):
# the one-rank MPI plug-in of the KVStore's NCCL case (the GPU machine has
# no MPI): NAME=BAZEL_TARGET.
plugins=(
  "libmxc_mpi_single.so=//tests/kvstore:libmxc_mpi_single.so"
)
# Benchmarks run by `run` after the tests (name=value lines; a SKIPPED
# line means no GPU was used): NAME=BAZEL_TARGET.
benches=(
  "bench_gpu=//bench:gpu"
)
# Built with the programs and packed beside them (bench_gpu's ResNet-50
# graph; test_cuda_plugin reads it too).
extra_targets=(//bench:resnet50_train_symbol)
# Libraries opened at run time that must never be packed.
toolkit_lib='/lib(cublas|cublasLt|cudnn[^/]*|cusolver|cusparse|nvrtc|nccl)\.so'

# The C library's own files: every Linux machine has them, in a version at
# least as new as Debian 12's.
system_lib='/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so'

prepare() {
  local targets=(//backends/cuda:libmxc_cuda.so.1) p
  for p in "${programs[@]}" "${benches[@]}" "${plugins[@]}"; do
    targets+=("${p#*=}")
  done
  bazel build "${targets[@]}" "${extra_targets[@]}"
  rm -rf "$dir" "$dir.tar.xz"
  mkdir -p "$dir/bin" "$dir/lib"
  cp bazel-bin/backends/cuda/libmxc_cuda.so.1 "$dir/lib/"
  for p in "${plugins[@]}"; do
    cp "bazel-bin/$(echo "${p#*=}" | sed 's|^//||; s|:|/|')" "$dir/lib/${p%%=*}"
  done
  for p in "${programs[@]}" "${benches[@]}"; do
    local t=${p#*=}
    cp "bazel-bin/${t#//}" "$dir/bin/${p%%=*}" 2>/dev/null ||
      cp "bazel-bin/$(echo "${t#//}" | tr : /)" "$dir/bin/${p%%=*}"
  done
  chmod u+w "$dir"/bin/* "$dir"/lib/*
  ldd "$dir"/bin/* "$dir"/lib/*.so* | awk '/=> \//{print $3}' | sort -u |
    grep -vE "$system_lib" | grep -vE "$toolkit_lib" |
    xargs -r cp -L -t "$dir/lib/"
  cp scripts/gpu_check.sh "$dir/"
  cp bench/gpu_fused_torch.py bench/gpu_resnet_torch.py "$dir/"
  cp bazel-bin/bench/resnet50_train-symbol.json "$dir/"
  tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
  echo "gpu_check: prepared $dir ($(du -sh "$dir" | cut -f1)), packed" \
    "$dir.tar.xz ($(du -sh "$dir.tar.xz" | cut -f1)); carry $dir.tar.xz and" \
    "run: scripts/gpu_check.sh run $dir"
}

# found LIB: 0 when the dynamic loader finds LIB by LD_LIBRARY_PATH or
# its cache.
found() {
  local d
  for d in ${LD_LIBRARY_PATH//:/ }; do [ -e "$d/$1" ] && return 0; done
  # No grep -q: under pipefail its early exit would fail ldconfig (SIGPIPE).
  { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true; } |
    grep "[[:space:]]$1 " >/dev/null
}

# The lib folders of the nvidia-* wheels (nvidia/cublas/lib, nvidia/cu13/lib,
# ...) of the machine's python3 and of the usual virtual environments.
wheel_lib_dirs() {
  local sites d
  sites=$(python3 -c 'import site; print("\n".join(site.getsitepackages()))' \
    2>/dev/null || true)
  for d in $sites /opt/*/.venv/lib/python3*/site-packages; do
    ls -d "$d"/nvidia/*/lib 2>/dev/null || true
  done | sort -u
}

# cuBLAS, cuDNN, NVRTC (fused kernels), NCCL (the KVStore's GPU sums) and
# cuSPARSE (sparse dot, with the nvJitLink it links) and cuSOLVER (the
# linalg kernels' potrf: nvidia/cusolver/lib; it links cuBLAS, cuSPARSE and
# nvJitLink) from the wheels where the loader does not find them (NVRTC: nvidia/cuda_nvrtc/lib or
# nvidia/cu13/lib, which also hold the libnvrtc-builtins it opens; NCCL:
# nvidia/nccl/lib; libcudnn_adv.so.9, which libcudnn.so.9 opens by name for
# the RNN kernels, in case a cuDNN found elsewhere lacks it).
add_wheel_libs() {
  local lib d added=()
  for lib in libcublas.so.13 libcudnn.so.9 libcudnn_adv.so.9 libnvrtc.so.13 \
    libnccl.so.2 libcusparse.so.12 libnvJitLink.so.13 libcusolver.so.12; do
    found "$lib" && continue
    for d in $(wheel_lib_dirs); do
      if [ -e "$d/$lib" ]; then
        export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
        added+=("$d")
        break
      fi
    done
    found "$lib" || echo "gpu_check: $lib not found (its kernels will say so)"
  done
  echo "gpu_check: wheel lib folders added: ${added[*]:-none}"
}

# The Python for bench_gpu's PyTorch peer: the first that imports torch
# (MXC_BENCH_TORCH_PYTHON; unset when none does, and bench_gpu says so).
find_torch_python() {
  local py
  for py in /opt/torch/.venv/bin/python3 /opt/*/.venv/bin/python3 python3; do
    if "$py" -c 'import torch' >/dev/null 2>&1; then
      export MXC_BENCH_TORCH_PYTHON=$py
      echo "gpu_check: PyTorch peer: $py"
      return
    fi
  done
  echo "gpu_check: no Python with torch: no PyTorch figures"
}

# bench_row NAME LOG: the benchmark's figures for the summary.
bench_rows() {
  grep -E '^(gpu_name|[a-z0-9_]*_(ms|ratio_vs_[a-z0-9_]*|tflops|gbps|peer|diff))=' "$2" |
    sed "s/^/$1: /" || echo "$1: (no figures)"
}

# counts LOG: "passed failed skipped" from a GoogleTest log.
counts() {
  local ok fail skip
  ok=$(grep -c '^\[       OK \]' "$1" || true)
  fail=$(grep -c '^\[  FAILED  \] [^ ]*\.[^ ]* (' "$1" || true)
  skip=$(grep -c '^\[  SKIPPED \] [^ ]*\.[^ ]* (' "$1" || true)
  echo "$ok $fail $skip"
}

run() {
  [ -d "$dir" ] || tar -C "$(dirname "$dir")" -xJf "$dir.tar.xz"
  local out=${OUT:-/tmp/gpu_check} rows=() status=0 p name log rc t0
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export MXC_CUDA_PLUGIN="$dir/lib/libmxc_cuda.so.1"
  add_wheel_libs
  find_torch_python
  export MXC_BENCH_GPU_TORCH_SCRIPT="$dir/gpu_fused_torch.py"
  # bench_gpu's ResNet-50 step (batch 64, 224 x 224: 2 warm-up and 5 timed
  # steps, 3 rounds, each side about 10 s a round with PyTorch's start)
  # and test_cuda_plugin's check of its graph.
  export MXC_BENCH_GPU_RESNET_SCRIPT="$dir/gpu_resnet_torch.py"
  export MXC_BENCH_GPU_RESNET_SYMBOL="$dir/resnet50_train-symbol.json"
  export MXC_RESNET50_SYMBOL="$dir/resnet50_train-symbol.json"
  echo "=== gpu_check: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader ||
    echo "gpu_check: nvidia-smi failed"
  for p in "${programs[@]}"; do
    name=${p%%=*}
    log=$out/$name.log
    echo "=== gpu_check: $name"
    rc=0
    t0=$SECONDS
    # shellcheck disable=SC2086 # the arguments split on spaces
    "$dir/bin/$name" ${program_args[$name]:-} 2>&1 | tee "$log" || rc=$?
    [ "$rc" = 0 ] || status=1
    read -r ok fail skip < <(counts "$log")
    [ "$skip" = 0 ] || status=1  # a skip here means no GPU was used
    rows+=("$(printf '%-24s %6s %6s %7s %4s %5ss' "$name" "$ok" "$fail" "$skip" "$rc" $((SECONDS - t0)))")
  done
  local figures=()
  for p in "${benches[@]}"; do
    name=${p%%=*}
    log=$out/$name.log
    echo "=== gpu_check: $name"
    rc=0
    "$dir/bin/$name" 2>&1 | tee "$log" || rc=$?
    [ "$rc" = 0 ] || status=1
    grep -q SKIPPED "$log" && status=1  # no GPU used
    mapfile -t -O "${#figures[@]}" figures < <(bench_rows "$name" "$log")
    [ "$rc" = 0 ] || figures+=("$name: exit $rc")
  done
  echo "=== gpu_check: summary"
  printf '%-24s %6s %6s %7s %4s %6s\n' program passed failed skipped exit time
  printf '%s\n' "${rows[@]}"
  # Per operator, where a program reports it ("gpu_conformance: OP: ...").
  grep -h '^gpu_conformance: [^ ]*: ' "$out"/*.log || true
  [ "${#figures[@]}" = 0 ] || printf '%s\n' "${figures[@]}"
  return $status
}

case "$cmd" in
  prepare) prepare ;;
  run) run ;;
  *) sed -n '2,15p' "$0"; exit 2 ;;
esac
