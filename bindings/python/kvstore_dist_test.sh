#!/bin/bash
# The Python binding's KVStore across 2 MPI ranks (tests/kvstore_dist.py),
# against the library and MPI plug-in built here.
#   kvstore_dist_test.sh PREFIX_SH LIB HEADER PC_IN MPIRUN PLUGIN [--sanitizer=KIND]
set -euo pipefail
prefix_sh=$1 lib=$2 hdr=$3 pcin=$4 mpirun=$5 plugin=$6
shift 6
source "$prefix_sh" "$lib" "$hdr" "$pcin" "$@"
py=/usr/bin/python3
if ! "$py" -c 'import numpy' 2>/dev/null; then
  mxc_test_skip "$py lacks numpy (Debian: apt-get install python3-numpy)"
fi
if [ -n "$MXC_SANITIZER" ]; then
  # An instrumented libmxc in an uninstrumented python3 under mpirun: the
  # default pass covers the binding; the sanitizers cover the C tests.
  mxc_test_skip "the MPI job of the Python binding runs in the default pass"
fi
export PYTHONPATH=$(pwd)/bindings/python PYTHONDONTWRITEBYTECODE=1
export MXC_MPI_PLUGIN="$(pwd)/$plugin" MXC_TEST_NP=2 MXC_KVSTORE_TIMEOUT=60
unset TEST_PREMATURE_EXIT_FILE XML_OUTPUT_FILE
export TMPDIR="${TEST_TMPDIR:-/tmp}"
timeout 240 "$mpirun" --allow-run-as-root --oversubscribe -np 2 \
  --mca btl self,vader --bind-to none \
  -x PYTHONPATH -x MXC_MPI_PLUGIN -x MXC_TEST_NP -x MXC_KVSTORE_TIMEOUT \
  -x TEST_TMPDIR -x MXC_LIBRARY -x LD_LIBRARY_PATH \
  "$py" bindings/python/tests/kvstore_dist.py
