#!/bin/bash
# bench/dist: the KVStore's allreduce against MPI_Allreduce, N ranks on
# this machine (default 2; more machines: set MXC_BENCH_MPIRUN_ARGS, e.g.
# "-H node1,node2"). Prints both modes' lines, then
# kvstore_allreduce_ratio_vs_mpi= at 64 MiB (the KVStore's throughput over
# MPI_Allreduce's; the goal is >= 0.9). Needs a quiet machine for
# meaningful figures. Usage: bench/dist/run.sh [N] [reps]
set -euo pipefail
cd "$(dirname "$0")/../.."
np="${1:-2}" reps="${2:-20}"
bazel build -c opt //bench/dist:dist //backends/mpi:libmxc_mpi.so.1
bin=bazel-bin/bench/dist/dist
export MXC_MPI_PLUGIN="$PWD/bazel-bin/backends/mpi/libmxc_mpi.so.1"
# The whole buffer in one collective, as MPI_Allreduce gets it.
export MXC_KVSTORE_FUSION_BYTES=0
run() {
  mpirun --allow-run-as-root --oversubscribe -np "$np" --bind-to none \
    -x MXC_MPI_PLUGIN -x MXC_KVSTORE_FUSION_BYTES ${MXC_BENCH_MPIRUN_ARGS:-} \
    "$bin" --mode "$1" --reps "$reps"
}
mpi=$(run mpi)
kv=$(run kvstore)
echo "$mpi"
echo "$kv"
top=$((64 << 20))
m=$(sed -n "s/^mpi_allreduce_gbps_${top}=//p" <<<"$mpi")
k=$(sed -n "s/^kvstore_allreduce_gbps_${top}=//p" <<<"$kv")
awk -v k="$k" -v m="$m" 'BEGIN { printf "kvstore_allreduce_ratio_vs_mpi=%.3f\n", k / m }'
