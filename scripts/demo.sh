#!/bin/bash
# The main job: set up, build the shared library and the demo program (which
# uses only the public API, linked against libmxc.so.1), and run it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bazel build //c_api:libmxc.so.1.0.0 //c_api:libmxc_a //c_api:libmxc_so_links //packaging:mxc_pc //examples:demo
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bazel-bin/examples/demo "$out/demo_arrays.mxc"
