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
# The module is copied out of the read-only runfiles into $TEST_TMPDIR with
# bindings/swig beside it (cmxc.swig finds mxc.i at ../../../swig), and every
# go cache lives there too. Offline: GOPROXY=off; no dependencies outside
# the standard library.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4
shift 4
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin" "$@"
if [ -n "$MXC_SKIP_REASON" ]; then
  echo "SKIP: $MXC_SKIP_REASON"
  exit 0
fi
for tool in go swig pkg-config gcc; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: needs $tool (Debian: golang-go swig pkg-config gcc)"
    exit 0
  fi
done
tmp=${TEST_TMPDIR:-$(mktemp -d)}
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
go vet -unsafeptr=false ./internal/cmxc
go vet .
go test -count=1 -v ./...
GODEBUG=cgocheck=2 go test -count=1 -short ./...
go test -count=1 -race -short ./...

cd "$src/examples/go"
go vet ./...
go test -count=1 -v ./...

cd "$src/bench/bindings/go"
go vet .
go run . -n 2000 -rounds 1
