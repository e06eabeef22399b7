#!/bin/bash
# Runs a Java example class (CLASS, e.g. org.mxc.examples.MlpFashionMnist)
# with the library built here laid out as an installed prefix
# (bindings/test_prefix.sh).
#   run_example.sh PREFIX_SH LIB HEADER PC_IN MXC_JAR EXAMPLES_JAR CLASS [ARGS...]
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4 mxc_jar=$(readlink -f "$5") ex_jar=$(readlink -f "$6")
class=$7
shift 7
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin"
trap 'rm -rf "$MXC_PREFIX"' EXIT
java -cp "$mxc_jar:$ex_jar" "$class" "$@"
