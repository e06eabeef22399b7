#!/bin/bash
# libmxc.so.1 must load where no MPI is installed (most of its users): it
# needs no MPI library and names no MPI symbol. MPI lives in the plug-in,
# libmxc_mpi.so.1, which is loaded with dlopen for "dist_sync" only
# (core/kvstore/mpi_plugin.h). $1: libmxc.so.1, $2 (where Open MPI is
# installed): libmxc_mpi.so.1, which must show what the check looks for,
# so that the check itself is known to find it.
set -euo pipefail
lib="$1" plugin="${2:-}"
mpi_libs='NEEDED.*\[lib(mpi|open-rte|open-pal|pmix|mpich)[^]]*\]'
# Here-strings, not pipes into grep -q (pipefail: see tests/abi).
needs_mpi() { grep -Eq "$mpi_libs" <<<"$(readelf -d "$1")"; }
names_mpi() { grep -Eq ' U (P?MPI_|ompi_)' <<<"$(nm -D "$1")"; }
fail=0
if needs_mpi "$lib"; then
  echo "FAIL: $lib needs an MPI library:"
  readelf -d "$lib" | grep NEEDED
  fail=1
fi
if names_mpi "$lib"; then
  echo "FAIL: $lib names MPI symbols:"
  nm -D "$lib" | grep -E ' U (P?MPI_|ompi_)' | head
  fail=1
fi
if [ -n "$plugin" ]; then
  needs_mpi "$plugin" || { echo "FAIL: the check does not see libmpi in $plugin"; fail=1; }
  names_mpi "$plugin" || { echo "FAIL: the check does not see MPI symbols in $plugin"; fail=1; }
fi
[ "$fail" = 0 ] && echo "PASS: $(basename "$lib") needs: $(readelf -d "$lib" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | paste -sd' ')"
exit "$fail"
