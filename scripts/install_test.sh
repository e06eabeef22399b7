#!/bin/bash
# The install test: builds the Debian packages (scripts/package.sh),
# installs them with dpkg, builds examples/hello.c the way a user would,
# with nothing but
#
#   cc hello.c $(pkg-config --cflags --libs mxc)
#
# (and statically, with pkg-config --static), runs it against the
# installed library, and removes the packages again.
#
#   scripts/install_test.sh [OUTDIR]    (default: a temporary directory)
#
# Installing needs root and dpkg: without them it says so and exits 0, so
# scripts/test.sh can always call it. Packages that were already installed
# before are upgraded and left installed; otherwise dpkg -r removes them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" != 0 ] || ! command -v dpkg-buildpackage > /dev/null; then
  echo "install_test: SKIP (needs root and dpkg-dev to install packages)"
  exit 0
fi
t0=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${1:-$work/debs}
"$root/scripts/package.sh" "$out"
t1=$(date +%s)

ver=$(dpkg-parsechangelog -l "$root/packaging/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
pkgs=(libmxc1 libmxc-dev mxc-doc)
debs=("$out/libmxc1_${ver}_${arch}.deb" "$out/libmxc-dev_${ver}_${arch}.deb" "$out/mxc-doc_${ver}_all.deb")
preinstalled=()
for p in "${pkgs[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2> /dev/null)" = "install ok installed" ]; then
    preinstalled+=("$p")
  fi
done
remove() {
  if [ ${#preinstalled[@]} = 0 ]; then
    dpkg -r mxc-doc libmxc-dev libmxc1 > /dev/null && echo "install_test: packages removed"
  else
    echo "install_test: ${preinstalled[*]} were installed before: left installed (now $ver)"
  fi
  rm -rf "$work"
}
trap remove EXIT
dpkg -i "${debs[@]}" > "$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; exit 1; }
echo "install_test: installed ${pkgs[*]} $ver"

fail=0
err() { echo "install_test: FAIL: $*" >&2; fail=1; }
lib=/usr/lib/$multiarch/libmxc.so.1
[ -e "$lib" ] || err "$lib is not installed"
[ -e "/usr/lib/$multiarch/libmxc.so" ] || err "the libmxc.so link is not installed"
[ -e "/usr/lib/$multiarch/libmxc.a" ] || err "libmxc.a is not installed"
grep -q "mxc_ndarray_create" /usr/share/doc/mxc-doc/html/group__group__ndarray.html 2> /dev/null ||
  err "the API reference is not installed in /usr/share/doc/mxc-doc/html"

# A clean environment: the build tree must not leak in.
mkdir "$work/user"
cp "$root/examples/hello.c" "$work/user/hello.c"
cd "$work/user"
clean_env=(env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH -u LIBRARY_PATH -u C_INCLUDE_PATH -u CPATH)
mv=$("${clean_env[@]}" pkg-config --modversion mxc) || err "pkg-config does not know mxc"
hv=$(sed -n 's/^#define MXC_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' /usr/include/mxc/mxc.h | paste -sd.)
[ "$mv" = "$hv" ] || err "pkg-config --modversion mxc is $mv, the installed header says $hv"
[ "$mv" = "$ver" ] || err "pkg-config --modversion mxc is $mv, the package $ver"
num=$(echo "$hv" | awk -F. '{print $1 * 10000 + $2 * 100 + $3}')

check_hello() { # BINARY WHAT
  "${clean_env[@]}" "./$1" > "$1.out" || { err "$2: hello failed"; return; }
  grep -qx "mxc_version_string=$mv" "$1.out" || err "$2: mxc_version_string is not $mv"
  grep -qx "mxc_version=$num" "$1.out" || err "$2: mxc_version() is not $num"
  grep -qx "sum=11 22 33 44 55 66" "$1.out" || err "$2: wrong sum"
}
# shellcheck disable=SC2046
"${clean_env[@]}" cc hello.c $("${clean_env[@]}" pkg-config --cflags --libs mxc) -o hello ||
  err "hello.c does not build with pkg-config's flags"
if [ -x hello ]; then
  check_hello hello "shared"
  cat hello.out
  loaded=$("${clean_env[@]}" ldd ./hello | awk '/libmxc/ {print $3}')
  [ "$(readlink -f "$loaded")" = "$(readlink -f "$lib")" ] || err "hello loaded '$loaded', not $lib"
fi
# Static: libmxc.a plus its private dependencies (Libs.private). The C
# library and OpenBLAS stay shared; only libmxc is linked in. Operators
# register themselves from constructors in objects nothing else
# references, so the whole archive must be linked (--whole-archive):
# without it the program links but knows no operators.
# shellcheck disable=SC2046
"${clean_env[@]}" cc hello.c $("${clean_env[@]}" pkg-config --cflags mxc) \
  -Wl,-Bstatic -Wl,--whole-archive -lmxc -Wl,--no-whole-archive -Wl,-Bdynamic \
  $("${clean_env[@]}" pkg-config --static --libs mxc | sed 's/\(^\| \)-lmxc\( \|$\)/ /') -o hello_static ||
  err "hello.c does not link statically with pkg-config --static"
if [ -x hello_static ]; then
  check_hello hello_static "static"
  ! grep -q 'NEEDED.*libmxc' <<< "$(readelf -d hello_static)" || err "hello_static still needs libmxc.so"
  echo "install_test: static hello ok ($(stat -c %s hello_static) bytes, no libmxc.so needed)"
fi
cd "$root"
t2=$(date +%s)
[ $fail = 0 ] || exit 1
echo "install_test: passed (package build $((t1 - t0)) s, install and checks $((t2 - t1)) s)"
