#!/bin/bash
# Proves that the ABI guard (abi_guard.sh) can fail: a tiny library is built
# in a baseline version and in variants, each with one change, and the
# guard must reject every incompatible variant and accept the compatible
# ones. Without this, a guard that always passes would look the same as one
# that works.
#
#   guard_selftest.sh ABI_GUARD_SH
set -euo pipefail
# This test builds its own libraries with full debug info: the guard must
# check them whatever the configuration says of libmxc's (.bazelrc's
# MXC_DEBUG_TYPES for the -g1 sanitizer builds).
unset MXC_DEBUG_TYPES
guard=$(readlink -f "$1")
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/guard_selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir -p include/demo

# One header and one source; each variant flips one -D switch.
cat > include/demo/demo.h <<'EOF'
#ifndef DEMO_DEMO_H_
#define DEMO_DEMO_H_
#define DEMO_VERSION_MINOR 0
#ifdef V_MACRO
#define DEMO_ERR_SHAPE 4
#else
#define DEMO_ERR_SHAPE 3
#endif
struct demo_opts {
  int a;
#ifdef V_LAYOUT
  long inserted;
#endif
  int b;
};
enum demo_mode {
  DEMO_FAST = 0,
#ifdef V_ENUM
  DEMO_SLOW = 2
#else
  DEMO_SLOW = 1
#endif
};
#ifdef V_SIG
int demo_add(long a, int b);
#else
int demo_add(int a, int b);
#endif
int demo_sum(const struct demo_opts *o);
#ifndef V_REMOVED
int demo_mode_of(enum demo_mode m);
#endif
#if defined(V_ADDED_OLD) || defined(V_ADDED_NEW)
int demo_new(void);
#endif
#endif
EOF
cat > demo.c <<'EOF'
#include <demo/demo.h>
#ifdef V_SIG
int demo_add(long a, int b) { return (int)a + b; }
#else
int demo_add(int a, int b) { return a + b; }
#endif
int demo_sum(const struct demo_opts *o) { return o->a + o->b; }
#ifndef V_REMOVED
int demo_mode_of(enum demo_mode m) { return (int)m; }
#endif
#if defined(V_ADDED_OLD) || defined(V_ADDED_NEW)
int demo_new(void) { return 1; }
#endif
EOF
cat > old.map <<'EOF'
DEMO_1.0 { global: demo_*; local: *; };
EOF
cat > new.map <<'EOF'
DEMO_1.0 { global: demo_add; demo_sum; demo_mode_of; local: *; };
DEMO_1.1 { global: demo_new; } DEMO_1.0;
EOF

# build VARIANT [MAP]: libdemo.so.1 and its header under $tmp/VARIANT.
build() {
  local v=$1 map=${2:-old.map} def=()
  [ "$v" = base ] || def=("-DV_${v^^}")
  mkdir -p "$v/include/demo"
  gcc -std=c11 -g -O2 -fPIC -shared -Iinclude "${def[@]}" -o "$v/libdemo.so.1" demo.c \
    -Wl,-soname,libdemo.so.1 -Wl,--version-script,"$map"
  gcc -E -P -dD "${def[@]}" include/demo/demo.h | grep -v '^#define __' > "$v/include/demo/demo.h"
}

build base
"$guard" dump base/libdemo.so.1 base/include/demo/demo.h baseline > /dev/null

fail=0
# expect pass|fail VARIANT [MAP]
expect() {
  local want=$1 v=$2 map=${3:-old.map} got=pass
  build "$v" "$map"
  "$guard" check baseline "$v/libdemo.so.1" "$v/include/demo/demo.h" > "$v.log" 2>&1 || got=fail
  if [ "$got" = "$want" ]; then
    echo "ok: $v -> $got$([ "$got" = fail ] && echo " ($(grep -m1 'ABI FAIL' "$v.log"))")"
  else
    echo "WRONG: variant $v should $want but did $got:" >&2
    cat "$v.log" >&2
    fail=1
  fi
}
expect pass base
expect fail sig             # a parameter type changed
expect fail layout          # a member inserted into a public struct
expect fail enum            # an enumerator's value changed
expect fail removed         # a function removed
expect fail macro           # a #define'd constant changed
expect fail added_old       # a new function in the old version node
expect pass added_new new.map  # a new function in a new node
[ $fail = 0 ] && echo "the ABI guard rejects every incompatible variant"
exit $fail
