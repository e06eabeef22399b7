#!/bin/bash
# pkg-config agrees with the header and the library about the version, and
# is all a user needs to build a program: examples/hello.c is compiled with
# only `cc hello.c $(pkg-config --cflags --libs mxc)` against the tree's
# library laid out as an installed prefix, and run.
#
#   pkgconfig_test.sh TEST_PREFIX_SH LIB HEADER PC_IN MXC_PC HELLO_C
set -euo pipefail
prefix_sh=$1 lib=$2 header=$3 pc_in=$4 mxc_pc=$5 hello=$(readlink -f "$6")
# shellcheck source=/dev/null
source "$prefix_sh" "$lib" "$header" "$pc_in"
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }

hv=$(sed -n 's/^#define MXC_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' "$header" | paste -sd.)
[[ $hv =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || err "cannot read the version from $header: '$hv'"
mv=$(pkg-config --modversion mxc)
[ "$mv" = "$hv" ] || err "pkg-config --modversion mxc is $mv, the header says $hv"
# The pc file the Debian package installs (Bazel's //packaging:mxc_pc).
pv=$(sed -n 's/^Version: //p' "$mxc_pc")
[ "$pv" = "$hv" ] || err "//packaging:mxc_pc says Version $pv, the header $hv"
grep -q '^Libs: .*-lmxc' "$mxc_pc" || err "//packaging:mxc_pc has no -lmxc"

# Under --config=asan/tsan (MXC_SANITIZER, from test_prefix.sh) hello runs
# with the sanitizer runtime preloaded: an instrumented libmxc.so needs it
# first in the process, which a plain `cc` link does not arrange.
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/hello.XXXXXX")
cd "$dir"
cp "$hello" hello.c
# Exactly the user's command line (the prefix is not a system directory,
# so LD_LIBRARY_PATH from test_prefix.sh finds the library at run time).
# shellcheck disable=SC2046
cc hello.c $(pkg-config --cflags --libs mxc) -o hello || err "hello.c does not build with pkg-config's flags"
mxc_sanitized c ./hello > out.txt || err "hello failed"
cat out.txt
num=$(echo "$hv" | awk -F. '{print $1 * 10000 + $2 * 100 + $3}')
grep -qx "mxc_version_string=$mv" out.txt || err "mxc_version_string differs from pkg-config's $mv"
grep -qx "mxc_version=$num" out.txt || err "mxc_version() differs from $num"
grep -qx "sum=11 22 33 44 55 66" out.txt || err "hello computed a wrong sum"
# The program runs against the prefix's library, not another one.
loaded=$(ldd ./hello | awk '/libmxc/ {print $3}')
[ "$(readlink -f "$loaded")" = "$(readlink -f "$MXC_LIBRARY")" ] || err "hello loaded $loaded"
[ $fail = 0 ] && echo "pkg-config test passed: version $hv"
exit $fail
