#!/bin/bash
# The ABI guard: compares a built shared library and its public header with
# a recorded baseline, and fails on anything that would break a program
# built against the baseline.
#
#   abi_guard.sh dump  LIB HEADER OUTDIR        record a baseline
#   abi_guard.sh check BASEDIR LIB HEADER       compare against one
#
# A baseline directory holds (named after LIB's SONAME, e.g. libmxc.so.1):
#   SONAME.abi     abidw's XML of the exported interfaces (functions, the
#                  types reachable from them: struct layouts, enums,
#                  typedefs, parameter and return types);
#   SONAME.macros  every object-like macro the header defines, one
#                  "NAME VALUE" a line (the constants are #defines, which
#                  DWARF does not carry, so abidw cannot see them).
#
# check fails when:
#  - abidiff reports any change to an existing interface. Its exit status is
#    a bit field: 1 error, 2 usage error, 4 ABI_CHANGE, 8
#    ABI_INCOMPATIBLE_CHANGE. Bit 8 is only set for removed symbols, while a
#    changed parameter type or struct layout only sets bit 4, so bit 4 fails
#    too. Added symbols also set bit 4, so they are left out of that diff
#    (--no-added-syms) and checked below instead;
#  - a baseline symbol is gone or left its version node;
#  - a new symbol carries no version, or a version node the baseline
#    already has (a released node is closed: a new function belongs in a
#    new node, MXC_1.1 { ... } MXC_1.0; in the map);
#  - the SONAME changed;
#  - a baseline macro is gone or has a different value (the version macros
#    MINOR and PATCH and the include guard may change; new macros are fine).
set -euo pipefail
# One collation for sort and comm, whatever the caller's locale.
export LC_ALL=C

# Flags shared by dump and check: only what leaves the library matters, and
# paths of the build tree do not.
ABIDW_FLAGS=(--no-corpus-path --no-comp-dir-path --exported-interfaces-only)
# Macros that may legitimately change between compatible releases.
MACRO_EXEMPT='(_VERSION_MINOR|_VERSION_PATCH|_H_|_API)'

soname_of() { objdump -p "$1" | awk '/SONAME/ {print $2}'; }

# "name version" for each defined dynamic symbol.
symbols_of() {
  objdump -T "$1" | awk '$4 != "*UND*" && $4 != "*ABS*" && NF >= 7 && $2 ~ /g/ {
    v = $(NF-1); gsub(/[()]/, "", v); print $NF, v }' | sort -u
}

# "NAME VALUE" for each object-like macro the header itself defines, with
# the value as the preprocessor sees it (continuation lines joined).
macros_of() {
  local header=$1 names
  names=$(grep -oE '^#[[:space:]]*define[[:space:]]+[A-Za-z_][A-Za-z0-9_]*' "$header" |
    awk '{print $NF}' | sed 's/^define//' | sort -u)
  gcc -dM -E -x c "$header" -I"$(dirname "$(dirname "$header")")" |
    awk -v names="$names" 'BEGIN { n = split(names, a, "\n"); for (i = 1; i <= n; i++) want[a[i]] = 1 }
      $1 == "#define" && ($2 in want) { v = $0; sub(/^#define [^ ]+ ?/, "", v); gsub(/[ \t]+/, " ", v); print $2, v }' |
    grep -vE "^[^ ]*${MACRO_EXEMPT} " | sort
}

cmd=${1:-}
case "$cmd" in
dump)
  lib=$2 header=$3 out=$4
  so=$(soname_of "$lib")
  mkdir -p "$out"
  abidw "${ABIDW_FLAGS[@]}" --out-file "$out/$so.abi" "$lib"
  macros_of "$header" > "$out/$so.macros"
  bad=$(symbols_of "$lib" | awk '$2 == "" || $2 == "Base"' || true)
  [ -z "$bad" ] || { echo "dump: symbols without a version node: $bad" >&2; exit 1; }
  echo "baseline of $so: $(grep -c '<elf-symbol ' "$out/$so.abi") symbols," \
    "$(wc -l < "$out/$so.macros") macros, in $out"
  ;;
check)
  base=$2 lib=$3 header=$4
  # The sanitizer configurations compile with line tables only (-g1,
  # .bazelrc), which hold no types for abidiff; the default pass checks.
  if [ "${MXC_DEBUG_TYPES:-1}" = 0 ]; then
    echo "SKIPPED: this configuration's library has line tables only (-g1): no types to compare; the default test pass checks the ABI"
    exit 0
  fi
  fail=0
  err() { echo "ABI FAIL: $*" >&2; fail=1; }
  so=$(soname_of "$lib")
  [ -f "$base/$so.abi" ] || { echo "ABI FAIL: no baseline $base/$so.abi for SONAME '$so'" >&2; exit 1; }
  base_so=$(sed -n "1s/.*soname='\([^']*\)'.*/\1/p" "$base/$so.abi")
  [ "$so" = "$base_so" ] || err "SONAME $so differs from the baseline's $base_so"

  tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/abi_guard.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  rc=0
  # Also run on ASan/TSan builds (-O1, instrumented): instrumentation adds
  # undefined __asan_/__tsan_ references but changes no exported type, and
  # abidiff was checked to report nothing there.
  abidiff --no-added-syms --exported-interfaces-only "$base/$so.abi" "$lib" > "$tmp/diff" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    cat "$tmp/diff" >&2
    if [ $((rc & 3)) -ne 0 ]; then err "abidiff failed to run (exit $rc)"
    elif [ $((rc & 8)) -ne 0 ]; then err "abidiff: incompatible change (removed symbol; exit $rc)"
    else err "abidiff: changed interface (exit $rc): a signature, struct layout or enum differs"
    fi
  fi

  # Version nodes: baseline symbols from the XML, current ones from the ELF.
  sed -n "s/.*<elf-symbol name='\([^']*\)' version='\([^']*\)'.*is-defined='yes'.*/\1 \2/p" \
    "$base/$so.abi" | sort -u > "$tmp/base.syms"
  symbols_of "$lib" > "$tmp/cur.syms"
  gone=$(comm -23 "$tmp/base.syms" "$tmp/cur.syms")
  [ -z "$gone" ] || err "baseline symbols missing or moved to another version node: $gone"
  new=$(comm -13 <(cut -d' ' -f1 "$tmp/base.syms") <(cut -d' ' -f1 "$tmp/cur.syms"))
  for s in $new; do
    v=$(awk -v s="$s" '$1 == s {print $2}' "$tmp/cur.syms")
    if [ -z "$v" ] || [ "$v" = Base ] || grep -qxF "$v" < <(cut -d' ' -f2 "$tmp/base.syms"); then
      err "new symbol $s is in the released node '${v:-none}': add it under a new version node"
    fi
  done

  macros_of "$header" > "$tmp/cur.macros"
  changed=$(comm -23 "$base/$so.macros" "$tmp/cur.macros")
  [ -z "$changed" ] || err "header macros removed or changed (baseline value shown): $changed"

  if [ $fail = 0 ]; then
    echo "ABI guard passed: $so matches the baseline ($(wc -l < "$tmp/base.syms") symbols," \
      "$(wc -l < "$base/$so.macros") macros); $(echo "$new" | grep -c . || true) added symbols in newer nodes"
  fi
  exit $fail
  ;;
*)
  echo "usage: $0 dump LIB HEADER OUTDIR | check BASEDIR LIB HEADER" >&2
  exit 2
  ;;
esac
