"""PyTorch peer of bench/gpu's ResNet-50 training step (bench/gpu_resnet.c).

ResNet-50 written out here in torchvision's layout and names (Bottleneck
v1.5: the stride on the 3x3 convolution), because the GPU machine's
PyTorch comes without torchvision. It loads the weights bench/gpu made
(WORK/weights.txt: "name count" per line, mxc's names, in the order of
WORK/weights.f32), trains on the batch bench/gpu wrote (WORK/data.f32,
WORK/label.f32) with CrossEntropyLoss (mean) and SGD(momentum=0.9) in
training mode, --warmup untimed steps and then --steps timed ones, each
ending with the loss read on the host (as mxc's step does). Prints
    torch_version=, torch_device=, torch_tf32=0
    torch_loss_K=...        the loss of step K (warm-up first)
    torch_ms_per_step=...   mean milliseconds per timed step (names that
                            scripts/gpu_check.sh does not list: bench/gpu
                            prints the medians)
or torch_error=<why> (exit 3). With --dump PATH it writes every weight
after step 0, in weights.txt's order (float32), for bench/gpu's agreement
check.

TF32 is turned off for convolutions (PyTorch's default allows it there):
mxc's cuDNN calls ask for FMA math in float32, so both sides compute the
same thing and the losses can be compared tightly.

Usage: gpu_resnet_torch.py --work WORK --device cuda|cpu --batch B
           --image S [--warmup N] [--steps N] [--lr 0.01] [--dump PATH]
"""
import argparse
import array
import os
import sys
import time

CLASSES = 1000
BN_NAMES = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
            "running_var": "moving_var"}


def make_model(torch):
    nn = torch.nn

    def bn(c):
        return nn.BatchNorm2d(c, eps=1e-5, momentum=0.1)

    class Bottleneck(nn.Module):
        def __init__(self, cin, planes, stride):
            super().__init__()
            cout = planes * 4
            self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
            self.bn1 = bn(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = bn(planes)
            self.conv3 = nn.Conv2d(planes, cout, 1, bias=False)
            self.bn3 = bn(cout)
            self.relu = nn.ReLU()
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), bn(cout))

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            s = x if self.downsample is None else self.downsample(x)
            return self.relu(y + s)

    class ResNet50(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = bn(64)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            cin = 64
            for li, n in enumerate((3, 4, 6, 3)):
                blocks = []
                for bi in range(n):
                    stride = 2 if li > 0 and bi == 0 else 1
                    blocks.append(Bottleneck(cin, 64 << li, stride))
                    cin = (64 << li) * 4
                setattr(self, "layer%d" % (li + 1), nn.Sequential(*blocks))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(cin, CLASSES)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            for li in range(1, 5):
                x = getattr(self, "layer%d" % li)(x)
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet50()


def mxc_name(model_name, bns):
    """mxc's argument name of a state-dict entry (make_resnet.py's rule)."""
    mod, _, leaf = model_name.rpartition(".")
    base = mod.replace(".", "_")
    if mod in bns:
        return "%s_%s" % (base, BN_NAMES[leaf])
    return "%s_%s" % (base, leaf)


def read_f32(path, torch):
    """A little-endian float32 file as a 1-D tensor (no numpy needed: the
    GPU machine's venv may lack it)."""
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    if sys.byteorder != "little":
        raise RuntimeError("the files are little-endian float32")
    return torch.frombuffer(raw, dtype=torch.float32).clone()


def f32_bytes(t):
    t = t.detach().float().cpu().contiguous().reshape(-1)
    try:
        return t.numpy().tobytes()
    except Exception:  # no numpy: slower, same bytes
        return array.array("f", t.tolist()).tobytes()


def read_weights(work, torch):
    names = []
    with open(os.path.join(work, "weights.txt")) as f:
        for line in f:
            name, count = line.split()
            names.append((name, int(count)))
    flat = read_f32(os.path.join(work, "weights.f32"), torch)
    if flat.numel() != sum(c for _, c in names):
        raise ValueError("weights.f32 does not match weights.txt")
    out, at = {}, 0
    for name, count in names:
        out[name] = flat[at:at + count]
        at += count
    return names, out


def entries_of(model, torch):
    """mxc's name -> the model's tensor, for every weight and state."""
    bns = {n for n, m in model.named_modules()
           if isinstance(m, torch.nn.BatchNorm2d)}
    return {mxc_name(k, bns): t for k, t in
            model.state_dict(keep_vars=True).items()
            if not k.endswith("num_batches_tracked")}


def load(model, work, torch):
    """Copies bench/gpu's weights into model; returns weights.txt's
    (name, count) list."""
    order, values = read_weights(work, torch)
    entries = entries_of(model, torch)
    missing = [n for n, _ in order if n not in entries]
    extra = [n for n in entries if n not in values]
    if missing or extra:
        raise ValueError("the graphs differ: weights the model lacks %s, "
                         "model tensors without weights %s"
                         % (missing[:5], extra[:5]))
    with torch.no_grad():
        for name, t in entries.items():
            v = values[name]
            if v.numel() != t.numel():
                raise ValueError("%s: %d values for %d" %
                                 (name, v.numel(), t.numel()))
            t.copy_(v.reshape(t.shape))
    return order


def batch(args, torch, dev):
    b, s = args.batch, args.image
    x = read_f32(os.path.join(args.work, "data.f32"), torch)
    y = read_f32(os.path.join(args.work, "label.f32"), torch)
    return x.reshape(b, 3, s, s).to(dev), y.long().to(dev)


def dump(path, order, entries):
    with open(path, "wb") as f:
        for name, _ in order:
            f.write(f32_bytes(entries[name]))


def run(args, torch):
    dev = torch.device(args.device)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    model = make_model(torch)
    order = load(model, args.work, torch)
    model.to(dev).train()
    entries = entries_of(model, torch)  # after .to(): buffers are new
    x, y = batch(args, torch, dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(k):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        v = float(loss)  # the host waits for the step, as mxc's does
        print("torch_loss_%d=%.6f" % (k, v), flush=True)
        if k == 0 and args.dump:
            dump(args.dump, order, entries)

    for k in range(args.warmup):
        step(k)
    start = time.perf_counter()
    for k in range(args.steps):
        step(args.warmup + k)
    return 1e3 * (time.perf_counter() - start) / max(args.steps, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--image", type=int, required=True)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--dump", help="weights after step 0 into this file")
    args = ap.parse_args()
    try:
        import torch
        if args.device != "cpu" and not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
    except Exception as e:  # not installed, broken, or no CUDA
        print("torch_error=%s" % str(e).replace("\n", " "), flush=True)
        return 3
    if args.device == "cpu":
        torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    print("torch_version=%s torch_device=%s torch_tf32=0"
          % (torch.__version__, args.device), flush=True)
    ms = run(args, torch)
    print("torch_ms_per_step=%.3f" % ms, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
