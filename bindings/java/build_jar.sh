#!/bin/bash
# Builds mxc.jar (genrule //bindings/java:mxc_jar).
#   build_jar.sh OUT_JAR FILES...
# FILES: the SWIG srcjar (*.srcjar), libmxc_jni.so, the org.mxc sources and
# LICENSE, which goes to META-INF/LICENSE as in other Apache-2.0 jars.
set -euo pipefail
out=$1
shift
srcjar="" so="" license="" srcs=()
for f in "$@"; do
  case "$f" in
    *.srcjar) srcjar=$f ;;
    *.so) so=$f ;;
    *.java) srcs+=("$f") ;;
    */LICENSE | LICENSE) license=$f ;;
  esac
done
work=$(mktemp -d "${TMPDIR:-/tmp}/mxc-jar.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/gen" "$work/classes/native/linux-x86_64" "$work/classes/META-INF"
(cd "$work/gen" && jar xf "$OLDPWD/$srcjar")
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -d "$work/classes" \
  "${srcs[@]}" $(find "$work/gen" -name '*.java')
cp "$so" "$work/classes/native/linux-x86_64/libmxc_jni.so"
cp "$license" "$work/classes/META-INF/LICENSE"
jar --create --file "$work/mxc.jar" --date=1980-01-01T00:00:02Z -C "$work/classes" .
cp "$work/mxc.jar" "$out"
