#!/bin/bash
# Re-records the ABI baseline from the library built by Bazel. Run it only
# as packaging/ABI.md says: when a release adds a version node (the new
# symbols then become part of the promise), or when a new major version
# (new SONAME) starts a new baseline. Never to make //tests/abi:abi_compat
# pass after an incompatible change.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build //c_api:libmxc.so.1.0.0
tests/abi/abi_guard.sh dump bazel-bin/c_api/libmxc.so.1.0.0 c_api/include/mxc/mxc.h packaging/abi
