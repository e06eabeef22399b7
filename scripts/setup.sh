#!/bin/bash
# Installs the Debian packages mxc needs to build and test (with --bench:
# and to run the benchmarks), if any is missing. Safe to run repeatedly;
# needs root (or sudo) only when it has
# something to install.
set -euo pipefail
pkgs=(
  bazel-bootstrap    # Bazel 4.2.3
  bazel-rules-java   # @rules_java, which Bazel 4 loads even for C builds
  libgtest-dev googletest
  libopenblas-dev
  libdnnl-dev        # oneDNN 2.6: the CPU backend, and float32 GEMM where
                     # OpenBLAS's kernels lag the CPU
  libdlpack-dev
  zlib1g-dev         # gzip-compressed IDX files
  libturbojpeg0-dev libpng-dev  # JPEG and PNG decoding (image records)
  python3-pil                   # tests: the independent RecordIO/image writer
  dataset-fashion-mnist  # the training data (tests use it when present)
  pkg-config
  libopenmpi-dev openmpi-bin   # the KVStore's MPI plug-in (backends/mpi) and
                               # its tests under mpirun (tests/kvstore)
  python3-numpy python3-torch  # bindings/python tests, tests/ops/nn golden data
                               # (they skip without)
  python3-torchvision          # the ResNets of bench/infer, bench/train
                               # (scripts/make_resnet.py); bench/data's peer
  swig                         # bindings/java, go, r generate their wrappers
  openjdk-17-jdk-headless junit5  # bindings/java (jar, JNI library, JUnit 5)
  golang-go                    # bindings/go (go test -race, go vet)
  r-base-core r-base-dev r-cran-testthat  # bindings/r (R CMD build/check)
  binutils gcc g++
  abigail-tools                # abidw/abidiff: the ABI guard (tests/abi)
  doxygen                      # the API reference (docs/api)
  dpkg-dev debhelper           # Debian packages (scripts/package.sh)
  chrpath                      # drops the build tree's RUNPATH when packaging
  lintian                      # checks the built packages
  clang libclang-rt-14-dev     # libFuzzer and the fuzz targets (tests/fuzz)
  gnuplot-nox graphviz         # examples: --curves PNG, --graph SVG (optional)
)
# --bench: also what the benchmarks alone need (scripts/bench.sh passes
# it; the tests never do, which keeps CI's install short: Debian's npm
# brings hundreds of packages). node and npm run ONNX Runtime, bench/infer's
# peer (scripts/bench.sh installs npm's onnxruntime-node into a cache
# folder). A machine may have them from elsewhere (NodeSource's nodejs
# bundles npm and conflicts with Debian's npm), so only a missing command
# asks for Debian's package.
if [ "${1:-}" = --bench ]; then
  command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
  command -v npm >/dev/null 2>&1 || pkgs+=(npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} = 0 ]; then
  echo "setup: all ${#pkgs[@]} Debian packages already installed"
  exit 0
fi
# A first install takes minutes: say what comes and let apt show each
# download and unpack (-q: one line per step, no spinner, fit for CI logs).
echo "setup: installing ${#missing[@]} Debian packages (and their dependencies):"
printf '  %s\n' "${missing[@]}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "setup: apt-get update"
$SUDO apt-get -q update
echo "setup: apt-get install"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
