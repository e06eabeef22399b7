#!/bin/bash
# Runs the Python binding's unittest suite with /usr/bin/python3 (Debian's,
# which has numpy and torch) against the library built here, laid out as
# an installed prefix (bindings/test_prefix.sh).
#   run_tests.sh PREFIX_SH LIB HEADER PC_IN [--sanitizer=KIND]
# Under --config=asan/tsan python3 runs with the sanitizer runtime
# preloaded (bindings/sanitizer.sh); the million-array test then runs
# 100000 arrays (its resident-memory bound does not apply there; bytes in
# use and LeakSanitizer still check). Skips (SKIPPED, exit 0) when numpy
# or torch are missing.
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4
shift 4
# shellcheck disable=SC1090
source "$prefix_sh" "$lib" "$hdr" "$pcin" "$@"
py=/usr/bin/python3
if ! "$py" -c 'import numpy, torch' 2>/dev/null; then
  mxc_test_skip "$py lacks numpy or torch (Debian: apt-get install python3-numpy python3-torch)"
fi
here=$(pwd)/bindings/python
# The fake GPU plug-in's path (BUILD's env) is relative to the runfiles
# root; the suite runs from bindings/python.
[ -z "${MXC_CUDA_PLUGIN:-}" ] || export MXC_CUDA_PLUGIN=$(realpath "$MXC_CUDA_PLUGIN")
export PYTHONPATH=$here
export PYTHONDONTWRITEBYTECODE=1
[ -z "$MXC_SANITIZER" ] || export MXC_PY_LEAK_ITERS=${MXC_PY_LEAK_ITERS:-100000}
cd "$here"
mxc_sanitized python "$py" -m unittest discover -s tests -v
