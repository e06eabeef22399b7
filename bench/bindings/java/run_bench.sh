#!/bin/bash
# Runs org.mxc.bench.InvokeBench against the library built here laid out
# as an installed prefix (bindings/test_prefix.sh).
#   run_bench.sh PREFIX_SH LIB HEADER PC_IN MXC_JAR BENCH_JAR BENCH_JNI_SO [CALLS] [ROUNDS]
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4
mxc_jar=$(readlink -f "$5") bench_jar=$(readlink -f "$6") jni=$(readlink -f "$7")
shift 7
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin"
trap 'rm -rf "$MXC_PREFIX"' EXIT
java -Dorg.mxc.bench.jni="$jni" -cp "$mxc_jar:$bench_jar" org.mxc.bench.InvokeBench "$@"
