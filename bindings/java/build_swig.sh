#!/bin/bash
# Runs SWIG for Java (genrule //bindings/java:swig_java).
#   build_swig.sh MXC_JAVA_I SHARED_MXC_I MXC_H OUT_WRAP_C OUT_SRCJAR
# -DSWIGWORDSIZE64: int64_t is C long on x86-64 Linux (see mxc_java.i).
set -euo pipefail
iface=$1 shared_dir=$(dirname "$2") inc_dir=$(dirname "$(dirname "$3")")
wrap=$4 srcjar=$5
gen=$(mktemp -d "${TMPDIR:-/tmp}/mxc-swig-java.XXXXXX")
trap 'rm -rf "$gen"' EXIT
mkdir -p "$gen/org/mxc/swig"
swig -java -DSWIGWORDSIZE64 -package org.mxc.swig -outdir "$gen/org/mxc/swig" \
  -o "$wrap" -I"$shared_dir" -I"$inc_dir" "$iface"
# A srcjar is a zip; jar is always there with the JDK. Fixed timestamps
# keep the output identical from run to run.
find "$gen" -exec touch -d @0 {} +
srcjar_abs=$(cd "$(dirname "$srcjar")" && pwd)/$(basename "$srcjar")
(cd "$gen" && jar --create --file "$srcjar_abs" --no-manifest --date=1980-01-01T00:00:02Z org)
