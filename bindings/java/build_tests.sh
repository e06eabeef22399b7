#!/bin/bash
# Compiles the JUnit 5 tests and the Java example (genrule
# //bindings/java:tests_jar) against mxc.jar and Debian's JUnit console jar.
#   build_tests.sh OUT_JAR MXC_JAR FILES...   (only *.java of FILES are used)
# -Xlint:-try: the tests call close() inside try-with-resources on purpose
# (close() must be idempotent).
set -euo pipefail
out=$1 mxc_jar=$2
shift 2
junit=/usr/share/java/junit-platform-console-standalone.jar
srcs=()
for f in "$@"; do
  case "$f" in *.java) srcs+=("$f") ;; esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/mxc-jtests.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/classes"
javac --release 17 -Xlint:all,-processing,-try -Werror -encoding UTF-8 \
  -cp "$mxc_jar:$junit" -d "$work/classes" "${srcs[@]}"
jar --create --file "$work/t.jar" --date=1980-01-01T00:00:02Z -C "$work/classes" .
cp "$work/t.jar" "$out"
