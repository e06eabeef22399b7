#!/bin/bash
# The install test: builds the Debian packages (scripts/package.sh),
# installs them with dpkg, builds examples/hello.c the way a user would,
# with nothing but
#
#   cc hello.c $(pkg-config --cflags --libs mxc)
#
# (and statically, with pkg-config --static), runs it against the
# installed library (and a one-rank "dist_sync" store under mpirun, with
# the installed MPI plug-in), then builds and runs the Go, Java and R examples
# against the installed bindings (golang-mxc-dev, libmxc-java with
# libmxc-jni, r-other-mxc) for a few batches, and removes the packages
# again. Every dependency of the packages is in scripts/setup.sh's list,
# since nothing can be fetched (no apt-get -f).
#
#   scripts/install_test.sh [OUTDIR]
#
# OUTDIR receives the packages with package.sh's build.log and lintian.txt
# and is kept, so the reports it points to can be read afterwards; by
# default ${TMPDIR:-/tmp}/mxc-install-test, emptied first on each run.
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
if [ $# -ge 1 ]; then
  out=$1
else
  out=${TMPDIR:-/tmp}/mxc-install-test
  rm -rf "$out"
fi
"$root/scripts/package.sh" "$out"
t1=$(date +%s)

ver=$(dpkg-parsechangelog -l "$root/packaging/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
pkgs=(libmxc1 libmxc-mpi1 libmxc-dev mxc-tools mxc-doc libmxc-jni libmxc-java r-other-mxc golang-mxc-dev)
# The CUDA plug-in, where the toolkit let package.sh build it.
cuda=0
if [ -e "$out/libmxc-cuda1_${ver}_${arch}.deb" ]; then
  pkgs+=(libmxc-cuda1)
  cuda=1
fi
debs=()
for p in "${pkgs[@]}"; do
  case "$p" in
    mxc-doc | libmxc-java | golang-mxc-dev) debs+=("$out/${p}_${ver}_all.deb") ;;
    *) debs+=("$out/${p}_${ver}_${arch}.deb") ;;
  esac
done
preinstalled=()
for p in "${pkgs[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2> /dev/null)" = "install ok installed" ]; then
    preinstalled+=("$p")
  fi
done
remove() {
  if [ ${#preinstalled[@]} = 0 ]; then
    # Dependents first (dpkg -r refuses to break a dependency).
    [ "$cuda" = 0 ] || dpkg -r libmxc-cuda1 > /dev/null
    dpkg -r golang-mxc-dev libmxc-java libmxc-jni r-other-mxc mxc-doc mxc-tools libmxc-dev libmxc-mpi1 libmxc1 \
      > /dev/null && echo "install_test: packages removed"
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

/usr/bin/mxc-im2rec --help | grep -q 'PREFIX.lst' || err "mxc-im2rec is not installed or does not run"
if [ "$cuda" = 1 ]; then
  # The installed plug-in is found by libmxc's default lookup: the reason a
  # GPU is unusable here is the driver's or the device count's, never a
  # missing plug-in.
  printf '%s\n' '#include <mxc/mxc.h>' '#include <stdio.h>' \
    'int main(void) { int rc = mxc_device_check(MXC_DEVICE_GPU, 0);' \
    '  printf("%d %s\n", rc, rc ? mxc_last_error() : "gpu(0) usable"); return 0; }' \
    > "$work/gpu_probe.c"
  cc "$work/gpu_probe.c" -o "$work/gpu_probe" -lmxc || err "gpu_probe does not build"
  probe=$("$work/gpu_probe" 2>&1) || true
  echo "install_test: GPU probe: $probe"
  case "$probe" in
    *"could not be loaded"* | "") err "the installed CUDA plug-in is not found: $probe" ;;
  esac
fi
[ -e /usr/share/man/man1/mxc-im2rec.1.gz ] || err "mxc-im2rec's manual page is not installed"
# The installed MPI plug-in (libmxc-mpi1) is found by libmxc's default
# lookup, its name libmxc_mpi.so.1 through the dynamic loader, without
# MXC_MPI_PLUGIN: a "dist_sync" store in a one-rank MPI job.
if command -v mpirun > /dev/null; then
  printf '%s\n' '#include <mxc/mxc.h>' '#include <stdio.h>' \
    'int main(void) { mxc_kvstore kv = NULL; int n = 0;' \
    '  if (mxc_kvstore_create("dist_sync", &kv) != MXC_OK) {' \
    '    printf("%s\n", mxc_last_error()); return 1; }' \
    '  mxc_kvstore_num_workers(kv, &n); mxc_kvstore_free(kv);' \
    '  printf("dist_sync workers=%d\n", n); return 0; }' > "$work/mpi_probe.c"
  cc "$work/mpi_probe.c" -o "$work/mpi_probe" -lmxc || err "mpi_probe does not build"
  probe=$(env -u MXC_MPI_PLUGIN -u LD_LIBRARY_PATH TMPDIR="$work" \
    mpirun --allow-run-as-root -np 1 "$work/mpi_probe" 2>&1) || true
  echo "install_test: MPI probe: $probe"
  grep -qx 'dist_sync workers=1' <<< "$probe" ||
    err "the installed MPI plug-in is not found by its default name, or fails: $probe"
fi

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

# The bindings, each as its user would use it, with only /usr: a home,
# caches and build output under $work, and no R_LIBS, CLASSPATH or GOPATH
# of the caller. The examples train for a few batches only.
data=/usr/share/datasets/fashion-mnist
if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
  echo "install_test: SKIP the bindings' examples (no Fashion-MNIST in $data;" \
    "Debian: dataset-fashion-mnist)"
else
  b=$work/bindings
  mkdir -p "$b/home" "$b/go/mlp" "$b/java"
  user_env=("${clean_env[@]}" -u R_LIBS -u R_LIBS_USER -u R_LIBS_SITE -u CLASSPATH
    -u GOPATH -u GOROOT -u GOFLAGS -u GOTOOLCHAIN HOME="$b/home" TMPDIR="$b")

  # Go: GOPATH mode over Debian's Go source tree; the go tool runs SWIG on
  # mxc.dev/mxc/internal/cmxc, which finds mxc.i in mxc.dev/swig and mxc
  # through pkg-config.
  cp "$root/examples/go/mlp/main.go" "$b/go/mlp/"
  if (cd "$b/go/mlp" && "${user_env[@]}" GO111MODULE=off GOPATH=/usr/share/gocode \
    GOCACHE="$b/gocache" GOPROXY=off CGO_ENABLED=1 go build -o mlp . > "$b/go.log" 2>&1) &&
    "${user_env[@]}" "$b/go/mlp/mlp" -epochs 1 -batches 30 >> "$b/go.log" 2>&1; then
    echo "install_test: Go example ok: $(tail -1 "$b/go.log")"
  else
    cat "$b/go.log" >&2
    err "the Go example does not build or run against golang-mxc-dev"
  fi

  # Java: the packaged jar holds no native code, so NativeLoader falls
  # through to System.loadLibrary, which finds libmxc-jni's library in
  # the JNI directory on Debian's default java.library.path.
  jar=/usr/share/java/mxc.jar
  ! jar tf "$jar" | grep -q '^native/' || err "$jar packs a JNI library"
  [ -e "/usr/lib/$multiarch/jni/libmxc_jni.so" ] || err "libmxc_jni.so is not in /usr/lib/$multiarch/jni"
  if "${user_env[@]}" javac --release 17 -encoding UTF-8 -cp "$jar" -d "$b/java" \
    "$root"/examples/java/org/mxc/examples/*.java > "$b/java.log" 2>&1 &&
    "${user_env[@]}" java -cp "$jar:$b/java" org.mxc.examples.MlpFashionMnist 1 >> "$b/java.log" 2>&1; then
    echo "install_test: Java example ok: $(tail -1 "$b/java.log")"
  else
    cat "$b/java.log" >&2
    err "the Java example does not build or run with libmxc-java"
  fi

  # R: library(mxc) from /usr/lib/R/site-library.
  where=$("${user_env[@]}" Rscript -e 'cat(find.package("mxc"))' 2>&1) || true
  [ "$where" = /usr/lib/R/site-library/mxc ] || err "R finds mxc at '$where'"
  if "${user_env[@]}" Rscript "$root/examples/r/mlp.R" --batches 30 > "$b/r.log" 2>&1 &&
    ! grep -q SKIP "$b/r.log"; then
    echo "install_test: R example ok: $(tail -1 "$b/r.log")"
  else
    cat "$b/r.log" >&2
    err "the R example does not run with r-other-mxc"
  fi
fi
t3=$(date +%s)
[ $fail = 0 ] || exit 1
echo "install_test: passed (package.sh $((t1 - t0)) s, install and C checks $((t2 - t1)) s," \
  "bindings $((t3 - t2)) s; packages and reports kept in $out)"
