#!/bin/bash
# bench/dist on this machine with N ranks (default 2): the KVStore's
# allreduce against MPI_Allreduce (4 KiB .. 64 MiB, REPS repetitions each)
# and the per-step overhead of dist_sync in the main job's MLP (50 steps,
# 64 examples per worker). Prints name=value lines (bench/dist/jobs.sh
# says which). More machines: set MXC_BENCH_MPIRUN_ARGS, e.g.
# "-H node1,node2". Needs a quiet machine for meaningful figures.
# Usage: bench/dist/run.sh [N] [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
np="${1:-2}" reps="${2:-20}"
bazel build -c opt //bench/dist:dist //backends/mpi:libmxc_mpi.so.1
exec bench/dist/jobs.sh bazel-bin/bench/dist/dist \
  bazel-bin/backends/mpi/libmxc_mpi.so.1 mpirun "$np" "$reps" \
  $((64 << 20)) 50 64
