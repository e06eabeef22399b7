# Sourced by the bindings' sh_tests (bash). Lays the library built by
# Bazel out as an installed prefix, so each binding finds it the way it
# would on a user's machine: through pkg-config.
#
#   source bindings/test_prefix.sh LIB HEADER PC_IN [--sanitizer=KIND]...
#     LIB    the built libmxc.so.1.0.0 (runfiles path)
#     HEADER c_api/include/mxc/mxc.h
#     PC_IN  packaging/mxc.pc.in
#     --sanitizer=KIND  what the bindings' BUILD files pass under
#            --config=asan/tsan (other arguments are ignored)
#
# Sets MXC_PREFIX (a fresh directory under $TEST_TMPDIR, or mktemp -d
# outside Bazel) holding include/mxc/mxc.h, lib/libmxc.so{,.1,.1.0.0} and
# lib/pkgconfig/mxc.pc, and exports PKG_CONFIG_PATH, LD_LIBRARY_PATH and
# MXC_LIBRARY for it. Also exports MXC_SANITIZER: asan or tsan when the
# library is instrumented (from --sanitizer=, or its DT_NEEDED), else
# empty; the tests run their host process through mxc_sanitized
# (bindings/sanitizer.sh), and the memory tests read it to drop their
# resident-memory bounds. Defines mxc_test_skip (tools/test_skip.sh).
mxc__lib=$(readlink -f "$1")
mxc__hdr=$(readlink -f "$2")
mxc__pcin=$(readlink -f "$3")
MXC_PREFIX=$(mktemp -d "${TEST_TMPDIR:-/tmp}/mxc-prefix.XXXXXX")
mkdir -p "$MXC_PREFIX/include/mxc" "$MXC_PREFIX/lib/pkgconfig"
cp "$mxc__hdr" "$MXC_PREFIX/include/mxc/mxc.h"
cp "$mxc__lib" "$MXC_PREFIX/lib/libmxc.so.1.0.0"
ln -sf libmxc.so.1.0.0 "$MXC_PREFIX/lib/libmxc.so.1"
ln -sf libmxc.so.1 "$MXC_PREFIX/lib/libmxc.so"
mxc__ver=$(sed -n 's/^#define MXC_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  "$mxc__hdr" | paste -sd.)
sed -e "s|@PREFIX@|$MXC_PREFIX|" -e "s|@LIBDIR@|lib|" -e "s|@VERSION@|$mxc__ver|" \
  "$mxc__pcin" > "$MXC_PREFIX/lib/pkgconfig/mxc.pc"
export PKG_CONFIG_PATH="$MXC_PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$MXC_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MXC_LIBRARY="$MXC_PREFIX/lib/libmxc.so.1"
export MXC_SANITIZER=""
for mxc__arg in "${@:4}"; do
  case "$mxc__arg" in
    --sanitizer=*) MXC_SANITIZER=${mxc__arg#--sanitizer=} ;;
  esac
done
# A here-string, not a pipe: under the caller's pipefail, grep -q closing
# the pipe early could make readelf fail and hide the match.
mxc__needed=$(readelf -d "$mxc__lib" 2>/dev/null)
if grep -q 'NEEDED.*libasan' <<<"$mxc__needed"; then
  MXC_SANITIZER=asan
elif grep -q 'NEEDED.*libtsan' <<<"$mxc__needed"; then
  MXC_SANITIZER=tsan
fi
# shellcheck disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/sanitizer.sh"
# shellcheck disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/../tools/test_skip.sh"
unset mxc__lib mxc__hdr mxc__pcin mxc__ver mxc__arg mxc__needed
