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
# MXC_LIBRARY for it. Also MXC_SKIP_REASON: non-empty when the library is
# instrumented by a sanitizer (it cannot be loaded into an uninstrumented
# process: java, R, python3, a go test binary); the tests then print it
# and exit 0.
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
MXC_SKIP_REASON=""
for mxc__arg in "${@:4}"; do
  case "$mxc__arg" in
    --sanitizer=*) MXC_SKIP_REASON="${mxc__arg#--sanitizer=} build: an instrumented libmxc.so cannot be loaded into an uninstrumented process" ;;
  esac
done
# A here-string, not a pipe: under the caller's pipefail, grep -q closing
# the pipe early could make readelf fail and hide the match.
if grep -Eq 'NEEDED.*lib(a|t|ub)san' <<<"$(readelf -d "$mxc__lib" 2>/dev/null)"; then
  MXC_SKIP_REASON="the library is built with a sanitizer runtime: it cannot be loaded into an uninstrumented process"
fi
unset mxc__lib mxc__hdr mxc__pcin mxc__ver mxc__arg
