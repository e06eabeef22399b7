#!/bin/bash
# The jobs of bench/dist (bench/dist/run.sh builds and calls this; the
# smoke test tests/bench:dist_smoke_test calls it with small sizes):
#  1. the KVStore's allreduce against MPI_Allreduce, N ranks: both modes'
#     lines, then kvstore_allreduce_ratio_vs_mpi= at the largest size (the
#     KVStore's throughput over MPI_Allreduce's; the goal is >= 0.9 at
#     64 MiB);
#  2. the main job's MLP step with BATCH examples per worker, alone
#     (mlp_step_ms_np1=) and on N ranks through dist_sync
#     (mlp_step_ms_npN=), then dist_sync_step_overhead_ms= and
#     dist_sync_step_overhead_pct= (the N-rank step's extra time over the
#     lone one's, the same work per worker: what synchronising adds).
# Figures need a quiet machine; this script asserts nothing about them.
#   jobs.sh BIN PLUGIN MPIRUN N REPS MAX_BYTES STEPS BATCH
# More machines: MXC_BENCH_MPIRUN_ARGS, e.g. "-H node1,node2".
set -euo pipefail
bin=$1 plugin=$2 mpirun=$3 np=$4 reps=$5 max_bytes=$6 steps=$7 batch=$8
export MXC_MPI_PLUGIN="$(readlink -f "$plugin")"
# Under a sanitizer build (the smoke test in --config=asan): Open MPI's own
# leaks are not mxc's (tests/kvstore/dist_test.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
job() {
  local fusion=$1
  shift
  MXC_KVSTORE_FUSION_BYTES=$fusion "$mpirun" --allow-run-as-root \
    --oversubscribe -np "$np" --bind-to none -x MXC_MPI_PLUGIN \
    -x MXC_KVSTORE_FUSION_BYTES -x ASAN_OPTIONS \
    ${MXC_BENCH_MPIRUN_ARGS:-} "$bin" "$@"
}
# The whole buffer in one collective, as MPI_Allreduce gets it.
mpi=$(job 0 --mode mpi --reps "$reps" --max-bytes "$max_bytes")
kv=$(job 0 --mode kvstore --reps "$reps" --max-bytes "$max_bytes")
echo "$mpi"
echo "$kv"
top=$(sed -n 's/^mpi_allreduce_gbps_\([0-9]*\)=.*/\1/p' <<<"$mpi" | tail -1)
m=$(sed -n "s/^mpi_allreduce_gbps_${top}=//p" <<<"$mpi")
k=$(sed -n "s/^kvstore_allreduce_gbps_${top}=//p" <<<"$kv")
awk -v k="$k" -v m="$m" -v b="$top" \
  'BEGIN { printf "kvstore_allreduce_ratio_vs_mpi=%.3f\nratio_bytes=%d\n", k / m, b }'
# The MLP: alone, then N ranks (fusion at its default, as the main job).
one=$("$bin" --mode step --store none --steps "$steps" --batch "$batch")
many=$(job 16777216 --mode step --store dist_sync --steps "$steps" \
  --batch "$batch")
echo "$one"
grep -v '^mlp_batch_per_worker=' <<<"$many"
t1=$(sed -n 's/^mlp_step_ms_np1=//p' <<<"$one")
tn=$(sed -n "s/^mlp_step_ms_np${np}=//p" <<<"$many")
awk -v a="$t1" -v b="$tn" 'BEGIN {
  printf "dist_sync_step_overhead_ms=%.3f\n", b - a
  printf "dist_sync_step_overhead_pct=%.1f\n", 100 * (b - a) / a }'
