#!/bin/bash
# Runs the Python binding's unittest suite with /usr/bin/python3 (Debian's,
# which has numpy and torch) against the library given as $1.
# Skips (exit 0 with a message) when numpy/torch are missing or the library
# is sanitizer-instrumented (see BUILD for why).
set -euo pipefail
lib=$1
shift
for arg in "$@"; do
  case "$arg" in
    --sanitizer=*) echo "SKIP: ${arg#--sanitizer=} build; an instrumented libmxc.so cannot be loaded into an uninstrumented python3"; exit 0 ;;
  esac
done
if readelf -d "$lib" 2>/dev/null | grep -Eq 'NEEDED.*lib(asan|tsan|ubsan|lsan)'; then
  echo "SKIP: $lib links a sanitizer runtime; it cannot be loaded into python3"
  exit 0
fi
py=/usr/bin/python3
if ! "$py" -c 'import numpy, torch' 2>/dev/null; then
  echo "SKIP: $py lacks numpy or torch (Debian: apt-get install python3-numpy python3-torch)"
  exit 0
fi
here=$(pwd)/bindings/python
export MXC_LIBRARY=$(pwd)/$lib
export PYTHONPATH=$here
export PYTHONDONTWRITEBYTECODE=1
cd "$here"
exec "$py" -m unittest discover -s tests -v
