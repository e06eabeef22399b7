#!/bin/bash
# A 2-rank job in which rank 1 dies or hangs must end with a failure that
# names what happened, in bounded time; one without a fault ("idle") must
# not. $1: mpirun, $2: the fault ("die", "hang", "oom" or "idle"), $3:
# the binary, $4: libmxc_mpi.so.1.
set -uo pipefail
mpirun="$1" fault="$2" bin="$3" plugin="$4"
case "$fault" in
  # mpirun ends the job at once, naming the process that exited first:
  # [[job,1],1] is rank 1 of the application.
  die) want='Process name: \[\[[0-9]+,[0-9]+\],1\]' ;;
  # Rank 0's watchdog, after MXC_KVSTORE_TIMEOUT seconds, naming the
  # collective it waits in and rank 1 as the one that did not join it.
  hang) want='rank 0 of 2: collective #[0-9]+ \(kvstore allreduce of 2 keys from key 1\) has waited [0-9]+ s \(MXC_KVSTORE_TIMEOUT=3\): rank 1 has not joined it: .*; rank 0 is alive and waiting' ;;
  # Rank 1's pushpull returned the error (no abort there). Then the first
  # watchdog to fire ends the job: rank 0's, left waiting for the
  # collective, or rank 1's, whose freeing of its store waits for the
  # collectives it had pushed before (which of the two is timing).
  oom) want='rank 1: pushpull failed with 6: .*out of memory for a fusion buffer'
       want2='rank [01] of 2: collective #[0-9]+ \(.+\) has waited [0-9]+ s .*: rank [01] has not joined it' ;;
  # No fault: both ranks live on after MPI_Finalize, past the timeout.
  idle) ;;
  *) echo "unknown fault $fault"; exit 2 ;;
esac
export MXC_MPI_PLUGIN="$PWD/$plugin" MXC_TEST_FAULT="$fault"
export MXC_KVSTORE_TIMEOUT=3
unset TEST_PREMATURE_EXIT_FILE XML_OUTPUT_FILE GTEST_OUTPUT
export TMPDIR="${TEST_TMPDIR:-/tmp}"
# Under --config=asan: Open MPI keeps allocations until exit (in libmpi,
# hwloc and components it dlopens), which LeakSanitizer would report;
# mxc's own leaks are checked by test_kvstore, in one process.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# Under --config=tsan: Open MPI's own locking is left out (tsan_mpi.supp).
supp="$(cd "$(dirname "$0")" && pwd)/tsan_mpi.supp"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}suppressions=$supp"
start=$(date +%s)
# -k: once, under TSan on a loaded machine, both ranks had ended (zombies)
# and mpirun itself never exited, not even on SIGTERM; the test then hit
# Bazel's timeout with no output. SIGKILL 10 s after the SIGTERM ends it
# (status 137), and the ranks' output is still checked below.
out=$(timeout -k 10 120 "$mpirun" --allow-run-as-root --oversubscribe -np 2 \
  --mca btl self,vader --bind-to none -x MXC_MPI_PLUGIN -x MXC_TEST_FAULT \
  -x MXC_KVSTORE_TIMEOUT -x ASAN_OPTIONS -x TSAN_OPTIONS "$bin" 2>&1)
status=$?
took=$(( $(date +%s) - start ))
echo "$out"
echo "mpirun exited with status $status after ${took}s"
if [[ "$fault" == idle ]]; then
  if [[ $status -ne 0 ]] || [[ $(grep -c "stayed alive after freeing" <<<"$out") -ne 2 ]]; then
    echo "FAIL: a rank did not live on after freeing its store"
    exit 1
  fi
  echo "PASS: idle"
  exit 0
fi
if [[ $status -eq 0 || $status -eq 124 ]]; then
  echo "FAIL: the job should have failed, and within the timeout"
  exit 1
fi
if [[ $status -eq 137 ]]; then
  # The ranks' messages decide (they are what the watchdog promises);
  # mpirun's own hang after its ranks ended is Open MPI's.
  echo "note: mpirun ignored SIGTERM and was killed; checking the ranks' output"
fi
if grep -q "finished all steps" <<<"$out"; then
  echo "FAIL: a rank went on as if nothing happened"
  exit 1
fi
for w in "$want" "${want2:-}"; do
  if [[ -n "$w" ]] && ! grep -Eq "$w" <<<"$out"; then
    echo "FAIL: the output does not match: $w"
    exit 1
  fi
done
echo "PASS: $fault"
