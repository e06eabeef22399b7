#!/bin/bash
# Runs a test binary as an MPI job of N ranks on this machine (loopback:
# shared memory between the ranks, no network), with the MPI plug-in of
# this build. $1: mpirun, $2: N, $3: the binary, $4: libmxc_mpi.so.1.
# --oversubscribe: more ranks than the machine's cores are fine for tests;
# --allow-run-as-root: CI containers run as root.
set -euo pipefail
mpirun="$1" np="$2" bin="$3" plugin="$4"
export MXC_MPI_PLUGIN="$PWD/$plugin"
# The fake GPU plug-in, where the test names one (a path from here).
if [ -n "${MXC_CUDA_PLUGIN:-}" ]; then
  export MXC_CUDA_PLUGIN="$PWD/$MXC_CUDA_PLUGIN"
fi
export MXC_TEST_NP="$np"
# Small enough that the tests' keys are fused several to a buffer and some
# keys are larger than one.
export MXC_KVSTORE_FUSION_BYTES=4096
# A hung collective fails the test in bounded time.
export MXC_KVSTORE_TIMEOUT=60
# Open MPI's session directory under the test's own temporary directory.
# gtest files of the test, which one rank must not share with another.
unset TEST_PREMATURE_EXIT_FILE XML_OUTPUT_FILE GTEST_OUTPUT
export TMPDIR="${TEST_TMPDIR:-/tmp}"
# Under --config=asan: Open MPI keeps allocations until exit (in libmpi,
# hwloc and components it dlopens), which LeakSanitizer would report;
# mxc's own leaks are checked by test_kvstore, in one process.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# Under --config=tsan: Open MPI's own locking is left out (tsan_mpi.supp).
supp="$(cd "$(dirname "$0")" && pwd)/tsan_mpi.supp"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$supp"
exec timeout 240 "$mpirun" --allow-run-as-root --oversubscribe -np "$np" \
  --mca btl self,vader --bind-to none \
  -x MXC_MPI_PLUGIN -x MXC_TEST_NP -x MXC_KVSTORE_FUSION_BYTES \
  -x MXC_KVSTORE_TIMEOUT -x TEST_TMPDIR -x ASAN_OPTIONS -x TSAN_OPTIONS -x MXC_NUM_THREADS -x MXC_ENGINE \
  -x MXC_CUDA_PLUGIN -x MXC_FAKE_GPU -x MXC_FAKE_NCCL -x MXC_KVSTORE_NCCL \
  -x MXC_TEST_NCCL -x MXC_TEST_NCCL_WHY -x GTEST_FILTER \
  "$bin"
