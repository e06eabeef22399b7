#!/bin/bash
# Writes a trace with trace_gen and checks it with check_trace.py (Python's
# json parser, the format's rules, nesting per track, statistics).
set -euo pipefail
gen=$1 checker=$2
out=${TEST_TMPDIR:-$(mktemp -d)}
"$gen" "$out/trace.json" "$out/stats.json"
python3 "$checker" "$out/trace.json" "$out/stats.json"
