#!/bin/bash
# ABI checks on the built shared library:
#  - the SONAME is libmxc.so.1;
#  - the exported (dynamic, defined) symbols are exactly the functions the
#    header declares with MXC_API, and exactly those listed in mxc.map;
#  - every one of them carries the version node mxc.map puts it in;
#  - packaging/debian/libmxc1.symbols lists exactly these name@node pairs;
#  - the header compiles alone as C99 and C11 (-pedantic-errors) and as
#    C++ (11 and 17, -pedantic).
set -euo pipefail
so=$1 map=$2 header=$3 symbols=${4:-}
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }

soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libmxc.so.1" ] || err "SONAME is '$soname', expected libmxc.so.1"

exported=$(nm -D --defined-only "$so" | awk '$2 ~ /[TWDBRV]/ {print $3}' | sed 's/@.*//' | sort -u)
declared=$(grep -oE '^MXC_API [^(]*\(' "$header" | sed -E 's/.*[ *](mxc_[a-z0-9_]+)\($/\1/' | sort -u)
mapped=$(sed -n '/global:/,/local:/p' "$map" | grep -oE 'mxc_[a-z0-9_]+' | sort -u)

bad=$(echo "$exported" | grep -v '^mxc_' || true)
[ -z "$bad" ] || err "non-mxc_ symbols exported: $bad"
[ "$exported" = "$declared" ] || err "exported != declared: $(diff <(echo "$exported") <(echo "$declared") || true)"
[ "$mapped" = "$declared" ] || err "mxc.map != header: $(diff <(echo "$mapped") <(echo "$declared") || true)"
n=$(echo "$declared" | wc -l)
[ "$n" -gt 30 ] || err "only $n declared functions found; the header parser is broken"

# The Debian symbols file (dpkg-gensymbols checks it against the library at
# package build time; here it is checked against the map, in every test run).
if [ -n "$symbols" ]; then
  listed=$(grep -oE '^ mxc_[a-z0-9_]+@MXC_[0-9.]+' "$symbols" | sed 's/^ //' | sort -u)
  want=$(objdump -T "$so" | awk '$4 != "*UND*" && $NF ~ /^mxc_/ {v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v}' | sort -u)
  [ "$listed" = "$want" ] || err "$symbols != the library's symbols: $(diff <(echo "$listed") <(echo "$want") || true)"
fi

# Each symbol carries the version node mxc.map lists it under (MXC_1.0
# for 1.0's functions, MXC_1.1 for those added in 1.1, ...).
in_map=$(awk '/^MXC_[0-9.]+ *\{/ {node = $1} node != "" && /^ *mxc_[a-z0-9_]+;/ {gsub(/[ ;]/, ""); print $0 "@" node}' "$map" | sort -u)
in_so=$(objdump -T "$so" | awk '$4 != "*UND*" && $NF ~ /^mxc_/ {v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v}' | sort -u)
[ "$in_map" = "$in_so" ] || err "version nodes differ from mxc.map: $(diff <(echo "$in_map") <(echo "$in_so") || true)"

# A C library must not drag in the C++ runtime.
# (Here-strings, not pipes into grep -q: with pipefail, grep exiting early
# would fail the writer and turn a match into a miss.)
dynamic=$(readelf -d "$so")
if grep -q 'NEEDED.*libstdc++' <<< "$dynamic"; then err "libmxc depends on libstdc++"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc=$(dirname "$(dirname "$header")")
# Included alone (and twice: the include guard), first in the file.
printf '#include <mxc/mxc.h>\n#include <mxc/mxc.h>\nint main(void) { return mxc_version() > 0 ? 0 : 1; }\n' > "$tmp/c.c"
strict=(-pedantic-errors -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes)
gcc -std=c99 "${strict[@]}" -I"$inc" -c "$tmp/c.c" -o "$tmp/c.o" || err "header is not C99 -pedantic clean"
gcc -std=c11 "${strict[@]}" -I"$inc" -c "$tmp/c.c" -o "$tmp/c11.o" || err "header is not C11 -pedantic clean"
cp "$tmp/c.c" "$tmp/cc.cc"
g++ -std=c++11 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$tmp/cc.cc" -o "$tmp/cc.o" || err "header does not compile as C++11"
g++ -std=c++17 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$tmp/cc.cc" -o "$tmp/cc17.o" || err "header does not compile as C++17"
# A program linked only against the shared library runs (skipped for a
# sanitizer build, whose runtime must be loaded first).
if grep -qE 'NEEDED.*lib(asan|tsan|ubsan)' <<< "$dynamic"; then
  echo "sanitizer build: skipping the link-and-run check"
else
cp "$so" "$tmp/libmxc.so.1"
ln -s libmxc.so.1 "$tmp/libmxc.so"
gcc "$tmp/c.o" -o "$tmp/c" -L"$tmp" -lmxc -Wl,-rpath,"$tmp" || err "cannot link against $so"
"$tmp/c" || err "program linked against $so failed"
fi

[ $fail = 0 ] && echo "ABI checks passed: $n exported symbols, SONAME $soname"
exit $fail
