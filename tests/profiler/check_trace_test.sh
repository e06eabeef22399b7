#!/bin/bash
# Writes a trace with trace_gen and checks it with check_trace.py (Python's
# json parser, the format's rules, nesting per track, statistics); then
# profiles an unmodified program (examples/hello, linked against
# libmxc.so.1) with MXC_PROFILER_AUTOSTART and checks its trace too.
set -euo pipefail
gen=$1 checker=$2 hello=$3
out=${TEST_TMPDIR:-$(mktemp -d)}
"$gen" "$out/trace.json" "$out/stats.json"
python3 "$checker" "$out/trace.json" "$out/stats.json"
rm -f "$out/auto.json"
MXC_PROFILER_AUTOSTART=1 MXC_PROFILER_FILENAME="$out/auto.json" "$hello" >/dev/null
python3 "$checker" "$out/auto.json"
python3 - "$out/auto.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
if not any(e.get("cat") == "operator" for e in events):
    sys.exit("FAIL: the autostarted trace has no operator events")
PY
