#!/bin/bash
# Runs the Go binding's checks (sh_test //bindings/go:go_test) against the
# library built here laid out as an installed prefix (bindings/test_prefix.sh),
# found by the go tool through pkg-config like on a user's machine:
#   - the SWIG wrapper compiled alone with -std=c11 -Wall -Wextra -Werror
#     -pedantic (cgo's own generated C is not -Wextra clean, so this is not
#     done through CGO_CFLAGS);
#   - go vet, go test, GODEBUG=cgocheck=2 go test -short, go test -race
#     -short (-short skips the million-array run, which takes ~15 s under
#     the race detector, and shortens the goroutine hammer);
#   - the example's vet and test (300 batches of Fashion-MNIST; skipped
#     without the data set) and a smoke run of the benchmark.
#   run_tests.sh PREFIX_SH LIB HEADER PC_IN [--sanitizer=KIND]
# Under --config=asan: go test -asan (Go 1.18+: cgo compiled and the test
# binary linked with -fsanitize=address, and Go's own accesses to C memory
# checked) with GODEBUG=cgocheck=2, for the module and the example; vet,
# -race and the benchmark are left to the default pass. Go 1.19 exits
# without running LeakSanitizer (Go 1.25 added that), so the Go pass has
# no leak check. Under --config=tsan: the test binaries run with libtsan
# preloaded, see below.
# The module is copied out of the read-only runfiles into $TEST_TMPDIR with
# bindings/swig beside it (cmxc.swig finds mxc.i at ../../../swig), and every
# go cache lives there too. Offline: GOPROXY=off; no dependencies outside
# the standard library.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4
shift 4
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin" "$@"
# Under TSan. -race links Go's own ThreadSanitizer runtime into the test
# binary; with a libmxc.so built with GCC's -fsanitize=thread the process
# would hold two TSan runtimes and dies at start (SIGSEGV, measured). So
# the test binaries are built without -race and run with GCC's libtsan
# preloaded: mxc's C code (its engine threads, locks and atomics, the
# SWIG glue) is checked while Go drives it from many goroutines. Go's
# own synchronization (channels, sync.Mutex, the scheduler) does not go
# through pthread and is invisible to libtsan, so a report whose two
# accesses are ordered only by a Go hand-over is a false one. Two kinds
# were seen (Go's heap memory mapped or reused by another thread than the
# one whose C call then touches it): bindings/tsan_go.supp leaves out
# those, and only those. The default pass runs go test -race against the
# uninstrumented library for the Go side.
for tool in go swig pkg-config gcc; do
  if ! command -v "$tool" >/dev/null; then
    mxc_test_skip "needs $tool (Debian: golang-go swig pkg-config gcc)"
  fi
done
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# The KVStore's MPI job (below): BUILD names mpirun and the plug-in where
# Open MPI is installed.
mpi_plugin=${MXC_TEST_MPI_PLUGIN:+$PWD/$MXC_TEST_MPI_PLUGIN}
# The fake GPU plug-in (BUILD's env), relative to the runfiles root: the
# tests run from the copy below.
[ -z "${MXC_CUDA_PLUGIN:-}" ] || export MXC_CUDA_PLUGIN=$(realpath "$MXC_CUDA_PLUGIN")
src=$tmp/src
rm -rf "$src"
mkdir -p "$src/bindings" "$src/examples" "$src/bench/bindings"
cp -rL bindings/go bindings/swig "$src/bindings/"
cp -rL examples/go "$src/examples/"
cp -rL bench/bindings/go "$src/bench/bindings/"
chmod -R u+w "$src"
export HOME=$tmp/home GOCACHE=$tmp/gocache GOPATH=$tmp/gopath GOTMPDIR=$tmp
export GOPROXY=off GOFLAGS= GO111MODULE=on CGO_ENABLED=1
unset GOTOOLCHAIN GOROOT
mkdir -p "$HOME"
set -x

cd "$src/bindings/go"
swig -go -cgo -intgosize 64 -module cmxc -I"$MXC_PREFIX/include" -I../swig \
  -o "$tmp/cmxc_wrap.c" -outdir "$tmp" internal/cmxc/cmxc.swig
# shellcheck disable=SC2046
gcc -fsyntax-only -std=c11 -Wall -Wextra -Werror -pedantic \
  $(pkg-config --cflags mxc) -I../swig "$tmp/cmxc_wrap.c"

# The SWIG-generated Go converts uintptr to unsafe.Pointer (C memory).
# First: vetting it after something cached its build fails (go 1.19 then
# looks for SWIG's output in a work directory that is gone).
if [ "$MXC_SANITIZER" = asan ]; then
  GODEBUG=cgocheck=2 mxc_sanitized go go test -asan -count=1 -v ./...
  cd "$src/examples/go"
  mxc_sanitized go go test -asan -count=1 -v ./...
  exit 0
fi

if [ "$MXC_SANITIZER" = tsan ]; then
  go test -c -o "$tmp/mxc_go.test" .
  mxc_sanitized go "$tmp/mxc_go.test" -test.count=1 -test.v -test.short
  cd "$src/examples/go/mlp"
  go test -c -o "$tmp/example_go.test" .
  mxc_sanitized go "$tmp/example_go.test" -test.count=1 -test.v
  exit 0
fi

go vet -unsafeptr=false ./internal/cmxc
go vet .
go test -count=1 -v ./...
GODEBUG=cgocheck=2 go test -count=1 -short ./...
go test -count=1 -race -short ./...
# TestKVStoreDist across 2 ranks of an MPI job on this machine.
if [ -n "${MXC_TEST_MPIRUN:-}" ] && [ -n "$mpi_plugin" ]; then
  go test -c -o "$tmp/mxc_kv.test" .
  MXC_TEST_NP=2 MXC_MPI_PLUGIN=$mpi_plugin MXC_KVSTORE_TIMEOUT=60 \
    TEST_PREMATURE_EXIT_FILE= timeout 240 "$MXC_TEST_MPIRUN" \
    --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader \
    --bind-to none -x MXC_TEST_NP -x MXC_MPI_PLUGIN -x MXC_KVSTORE_TIMEOUT \
    -x TEST_TMPDIR -x LD_LIBRARY_PATH \
    "$tmp/mxc_kv.test" -test.run '^TestKVStoreDist$' -test.count=1 -test.v
fi

cd "$src/examples/go"
go vet ./...
go test -count=1 -v ./...

cd "$src/bench/bindings/go"
go vet ./...
go run . -n 2000 -rounds 1
