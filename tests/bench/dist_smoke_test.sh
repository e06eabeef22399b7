#!/bin/bash
# Smoke run of bench/dist (bench/dist/jobs.sh) with 2 ranks at small
# sizes: every figure is printed as a number, nothing about timing is
# asserted.  dist_smoke_test.sh BIN PLUGIN MPIRUN JOBS_SH TSAN_SUPP
set -euo pipefail
bin=$1 plugin=$2 mpirun=$3 jobs=$4 supp=$5
unset TEST_PREMATURE_EXIT_FILE XML_OUTPUT_FILE
export TMPDIR="${TEST_TMPDIR:-/tmp}" MXC_KVSTORE_TIMEOUT=60
# As tests/kvstore/dist_test.sh: one machine's transports only (TCP's
# component takes its locks in orders TSan calls inverted, seen in CI), and
# under --config=tsan Open MPI's own locking is left out (tsan_mpi.supp).
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$(readlink -f "$supp")"
export MXC_BENCH_MPIRUN_ARGS="--mca btl self,vader -x TSAN_OPTIONS"
out=$(timeout 240 "$jobs" "$bin" "$plugin" "$mpirun" 2 2 65536 3 16)
echo "$out"
num='-?[0-9]+(\.[0-9]+)?'
for name in mpi_allreduce_gbps_4096 mpi_allreduce_gbps_65536 \
  kvstore_allreduce_gbps_4096 kvstore_allreduce_gbps_65536 \
  kvstore_allreduce_ratio_vs_mpi mlp_batch_per_worker mlp_step_ms_np1 \
  mlp_step_ms_np2 dist_sync_step_overhead_ms dist_sync_step_overhead_pct; do
  if ! grep -Eq "^${name}=${num}$" <<<"$out"; then
    echo "FAIL: no number for ${name}="
    exit 1
  fi
done
grep -q '^ratio_bytes=65536$' <<<"$out"
grep -q '^mlp_batch_per_worker=16$' <<<"$out"
echo "PASS"
