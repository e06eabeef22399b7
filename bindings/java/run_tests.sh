#!/bin/bash
# Runs the Java binding's JUnit 5 tests (sh_test //bindings/java:java_test)
# with the library built here laid out as an installed prefix
# (bindings/test_prefix.sh), through Debian's JUnit console launcher.
#   run_tests.sh PREFIX_SH LIB HEADER PC_IN MXC_JAR TESTS_JAR [--sanitizer=KIND]
# Under --config=asan/tsan the JVM runs with the sanitizer runtime
# preloaded (bindings/sanitizer.sh). Skips (SKIPPED, exit 0) without java
# or JUnit.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4
mxc_jar=$(readlink -f "$5") tests_jar=$(readlink -f "$6")
shift 6
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin" "$@"
junit=/usr/share/java/junit-platform-console-standalone.jar
if ! command -v java >/dev/null || [ ! -r "$junit" ]; then
  mxc_test_skip "needs java (OpenJDK 17) and $junit (Debian: junit5)"
fi
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# The fake GPU plug-in (BUILD's env): a path relative to the runfiles root.
[ -z "${MXC_CUDA_PLUGIN:-}" ] || export MXC_CUDA_PLUGIN=$(realpath "$MXC_CUDA_PLUGIN")
# A fixed, pre-touched heap: the resident-memory test then measures native
# memory, not the JVM growing its heap. Every cache and temporary file
# (the extracted JNI library) under the test's own directory.
mxc_sanitized jvm java -Xms256m -Xmx256m -XX:+AlwaysPreTouch \
  -Duser.home="$tmp" -Djava.io.tmpdir="$tmp" \
  -jar "$junit" --class-path "$mxc_jar:$tests_jar" --select-package org.mxc \
  --disable-banner --details=tree --fail-if-no-tests
# KVStoreTest.distSync across 2 ranks of an MPI job on this machine, where
# BUILD names mpirun and the MPI plug-in (Open MPI installed); the
# sanitizer passes leave it to the default one.
if [ -n "${MXC_TEST_MPIRUN:-}" ] && [ -n "${MXC_TEST_MPI_PLUGIN:-}" ] &&
   [ -z "$MXC_SANITIZER" ]; then
  MXC_TEST_NP=2 MXC_MPI_PLUGIN="$PWD/$MXC_TEST_MPI_PLUGIN" \
    MXC_KVSTORE_TIMEOUT=60 timeout 300 "$MXC_TEST_MPIRUN" \
    --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader \
    --bind-to none -x MXC_TEST_NP -x MXC_MPI_PLUGIN -x MXC_KVSTORE_TIMEOUT \
    -x TEST_TMPDIR -x LD_LIBRARY_PATH \
    java -Xmx256m -Duser.home="$tmp" -Djava.io.tmpdir="$tmp" \
    -jar "$junit" --class-path "$mxc_jar:$tests_jar" \
    --select-method org.mxc.KVStoreTest#distSync --disable-banner \
    --details=tree --fail-if-no-tests
fi
