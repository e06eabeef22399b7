#!/bin/bash
# bench/gpu's ResNet-50 training step through the same code path on the
# CPU (--cpu), small: without a GPU the program prints its skip line and
# exits 0; with --cpu it binds, trains, runs the PyTorch peer
# (bench/gpu_resnet_torch.py, ResNet-50 written without torchvision) and
# agrees with it; a graph whose loss gradient is doubled (SoftmaxOutput
# grad_scale 2: what a wrong gradient kernel would do) fails the update
# check. Where torchvision is installed, the torch-free graph of
# scripts/make_resnet.py --symbols-only is the one made from torchvision's
# models. Skips (SKIPPED, exit 0) without PyTorch.
#   gpu_resnet_smoke_test.sh GPU_BIN SYMBOL MAKE_RESNET TEST_SKIP_SH
set -euo pipefail
gpu="$1"
symbol="$2"
make_resnet="$3"
# shellcheck disable=SC1090
source "$4"
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

unset MXC_CUDA_PLUGIN
"$gpu" >"$tmp/skip.txt" 2>&1 || { echo "FAIL: bench/gpu without a GPU"; cat "$tmp/skip.txt"; exit 1; }
grep -q '^bench_gpu: SKIPPED: no usable GPU' "$tmp/skip.txt" || {
  echo "FAIL: no skip line"; cat "$tmp/skip.txt"; exit 1; }
echo "ok: $(cat "$tmp/skip.txt")"

if ! "$py" -c 'import torch' 2>/dev/null; then
  mxc_test_skip "PyTorch missing (python3-torch)"
fi

if "$py" -c 'import torchvision' 2>/dev/null; then
  "$py" - "$make_resnet" <<'PY'
import importlib.util, sys, torchvision
spec = importlib.util.spec_from_file_location("make_resnet", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
for name in ("resnet18", "resnet50"):
    tv = getattr(torchvision.models, name)(weights=None)
    for train in (False, True):
        assert m.graph(m.spec(name), train) == m.graph(tv, train), name
print("ok: make_resnet.py's spec() gives torchvision's graphs")
PY
fi

# Batch 4 of 64 x 64: the last BatchNorms see 16 values per channel; the
# default tolerances (see bench/gpu_resnet.c).
small=(--cpu --batch 4 --image 64 --warmup 1 --steps 1 --rounds 1
  --python "$py")
"$gpu" "${small[@]}" --symbol "$symbol" >"$tmp/cpu.txt" 2>&1 || {
  echo "FAIL: bench/gpu --cpu"; cat "$tmp/cpu.txt"; exit 1; }
cat "$tmp/cpu.txt"
for key in resnet50_train_gpu_ms resnet50_train_gpu_torch_ms \
    resnet50_train_gpu_ratio_vs_torch resnet50_train_gpu_loss_diff \
    resnet50_train_gpu_update_diff; do
  grep -q "^$key=" "$tmp/cpu.txt" || { echo "FAIL: no $key= line"; exit 1; }
done
echo "ok: bench/gpu --cpu agrees with PyTorch"

"$py" - "$symbol" "$tmp/doubled.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
heads = [n for n in g["nodes"] if n["op"] == "SoftmaxOutput"]
assert len(heads) == 1
heads[0]["attrs"]["grad_scale"] = "2"
json.dump(g, open(sys.argv[2], "w"))
PY
# Smaller still: a doubled gradient makes the update differ by 100%.
tiny=(--cpu --batch 2 --image 32 --warmup 1 --steps 1 --rounds 1 --python "$py")
if "$gpu" "${tiny[@]}" --symbol "$tmp/doubled.json" >"$tmp/bad.txt" 2>&1; then
  echo "FAIL: a doubled gradient passed the agreement check"
  cat "$tmp/bad.txt"
  exit 1
fi
grep -q "FAIL: ResNet-50 training differs from PyTorch's" "$tmp/bad.txt" || {
  echo "FAIL: no FAIL message"; cat "$tmp/bad.txt"; exit 1; }
grep '^resnet50_train_gpu_update_diff=' "$tmp/bad.txt"
echo "ok: a doubled gradient is caught"
