#!/usr/bin/python3
"""torchvision's ResNet-18 and ResNet-50 with fixed-seed weights, written
for the three runtimes that bench/infer and bench/train compare.

  make_resnet.py OUTDIR [--models resnet18,resnet50] [--force]
  make_resnet.py OUTDIR --symbols-only [--models ...]

With --symbols-only it writes the two symbol files alone (no weights, no
stamp) and needs neither torch nor torchvision: the layout comes from
spec() below, which describes torchvision's resnet18/resnet50 with the
attributes graph() reads (tests/bench checks that both give the same
JSON). bench/gpu uses it on the GPU machine, which has PyTorch but no
torchvision, and makes its own weights.

writes into OUTDIR, for each model M:
  M-symbol.json        MXNet 1.x graph for inference, torchvision's layout:
                       Convolution (no_bias) -> BatchNorm (fix_gamma=False,
                       use_global_stats=True, eps 1e-5) -> Activation relu,
                       max Pooling 3x3/2 pad 1, residual elemwise_add, global
                       average Pooling, Flatten, FullyConnected (1000 logits)
  M-0000.params        its weights, MXNet's NDArray list ("arg:"/"aux:"
                       names), written by scripts/make_mxnet_params.py
  M_train-symbol.json  the same graph for training: BatchNorm on batch
                       statistics and a SoftmaxOutput head (label
                       "softmax_label"); same params file
  M.onnx               the same model for ONNX Runtime (torch.onnx.export,
                       batch and image size dynamic)
  M.pt                 the PyTorch state dict (bench/infer_torch.py and
                       bench/train_torch.py load it into torchvision's model)
  M.stamp              what the files were made from; while it matches, a
                       new run leaves them alone (--force: always rewrite)

Weights: torchvision's initialization under torch.manual_seed, then
BatchNorm made non-trivial: gamma and beta random, the running statistics
measured on random batches in training mode (so activations stay of order
one through all the layers) and then perturbed at random (variance times
0.5..2, mean shifted), so folding or ignoring them would show.

Names follow torchvision's with '.' as '_': "layer1.0.conv1.weight" is
argument "layer1_0_conv1_weight"; BatchNorm weight/bias/running_mean/
running_var are _gamma/_beta/_moving_mean/_moving_var.

Run with Debian's interpreter: /usr/bin/python3 (python3-torch,
python3-torchvision, python3-numpy).
"""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SEEDS = {"resnet18": 18, "resnet50": 50}
EPS = 1e-5
CALIBRATION = (4, 16, 64)  # batches, batch size, image size


class Graph:
    """MXNet JSON nodes in topological order (ids are list positions)."""

    def __init__(self, train):
        self.nodes, self.train = [], train

    def add(self, op, name, attrs=None, inputs=()):
        self.nodes.append({"op": op, "name": name, "attrs": attrs or {},
                           "inputs": [[i, 0, 0] for i in inputs]})
        return len(self.nodes) - 1

    def var(self, name):
        return self.add("null", name)

    def conv(self, name, x, m):
        attrs = {"kernel": str(tuple(m.kernel_size)),
                 "stride": str(tuple(m.stride)), "pad": str(tuple(m.padding)),
                 "num_filter": str(m.out_channels), "no_bias": "True"}
        return self.add("Convolution", name, attrs,
                        [x, self.var(name + "_weight")])

    def bn(self, name, x):
        attrs = {"eps": repr(EPS), "momentum": "0.9", "fix_gamma": "False",
                 "use_global_stats": "False" if self.train else "True"}
        ins = [x] + [self.var(name + s) for s in
                     ("_gamma", "_beta", "_moving_mean", "_moving_var")]
        return self.add("BatchNorm", name, attrs, ins)

    def relu(self, name, x):
        return self.add("Activation", name, {"act_type": "relu"}, [x])

    def json(self, head):
        args = [i for i, n in enumerate(self.nodes) if n["op"] == "null"]
        return {"nodes": self.nodes, "arg_nodes": args,
                "node_row_ptr": list(range(len(self.nodes) + 1)),
                "heads": [[head, 0, 0]],
                "attrs": {"mxnet_version": ["int", 10900]}}


def conv_bn(g, prefix, x, conv, bn_suffix):
    """conv + its BatchNorm; prefix names the conv (torchvision's path)."""
    y = g.conv(prefix, x, conv)
    return g.bn(bn_suffix, y)


def block(g, p, x, blk):
    """A BasicBlock or Bottleneck: relu(branch(x) + shortcut(x))."""
    convs = [c for c in ("conv1", "conv2", "conv3") if hasattr(blk, c)]
    y = x
    for k, c in enumerate(convs):
        y = conv_bn(g, p + c, y, getattr(blk, c), p + "bn%d" % (k + 1))
        if k + 1 < len(convs):
            y = g.relu(p + "relu%d" % (k + 1), y)
    short = x
    if blk.downsample is not None:
        short = conv_bn(g, p + "downsample_0", x, blk.downsample[0],
                        p + "downsample_1")
    s = g.add("elemwise_add", p + "add", {}, [y, short])
    return g.relu(p + "relu", s)


def graph(model, train):
    g = Graph(train)
    x = g.var("data")
    x = g.relu("relu", conv_bn(g, "conv1", x, model.conv1, "bn1"))
    x = g.add("Pooling", "maxpool", {"kernel": "(3, 3)", "stride": "(2, 2)",
                                     "pad": "(1, 1)", "pool_type": "max"}, [x])
    for li in range(1, 5):
        for bi, blk in enumerate(getattr(model, "layer%d" % li)):
            x = block(g, "layer%d_%d_" % (li, bi), x, blk)
    x = g.add("Pooling", "avgpool", {"kernel": "(1, 1)", "global_pool": "True",
                                     "pool_type": "avg"}, [x])
    x = g.add("Flatten", "flatten", {}, [x])
    x = g.add("FullyConnected", "fc",
              {"num_hidden": str(model.fc.out_features)},
              [x, g.var("fc_weight"), g.var("fc_bias")])
    if train:
        x = g.add("SoftmaxOutput", "softmax", {}, [x, g.var("softmax_label")])
    return g.json(x)


class _Layers:
    """The attributes of torchvision's modules that graph() reads."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _conv(cout, k, s, p):
    return _Layers(kernel_size=(k, k), stride=(s, s), padding=(p, p),
                   out_channels=cout)


# name: (blocks per stage, bottleneck)
SPECS = {"resnet18": ((2, 2, 2, 2), False), "resnet50": ((3, 4, 6, 3), True)}


def _block(cin, planes, stride, bottleneck):
    """torchvision's BasicBlock / Bottleneck (stride on the 3x3 conv, a
    1x1 downsample when the shape changes); returns (block, cout)."""
    cout = planes * (4 if bottleneck else 1)
    if bottleneck:
        b = _Layers(conv1=_conv(planes, 1, 1, 0),
                    conv2=_conv(planes, 3, stride, 1),
                    conv3=_conv(cout, 1, 1, 0))
    else:
        b = _Layers(conv1=_conv(planes, 3, stride, 1),
                    conv2=_conv(planes, 3, 1, 1))
    b.downsample = None
    if stride != 1 or cin != cout:
        b.downsample = [_conv(cout, 1, stride, 0), None]
    return b, cout


def spec(name, classes=1000):
    """torchvision's model `name` as far as graph() looks at it."""
    blocks, bottleneck = SPECS[name]
    m = _Layers(conv1=_conv(64, 7, 2, 3), fc=_Layers(out_features=classes))
    cin = 64
    for li, n in enumerate(blocks):
        layer = []
        for bi in range(n):
            stride = 2 if li > 0 and bi == 0 else 1
            blk, cin = _block(cin, 64 << li, stride, bottleneck)
            layer.append(blk)
        setattr(m, "layer%d" % (li + 1), layer)
    return m


def write_symbols(out, name, model):
    for train in (False, True):
        sym = os.path.join(out, name + ("_train-symbol.json" if train
                                        else "-symbol.json"))
        with open(sym, "w") as f:
            json.dump(graph(model, train), f, indent=1)


BN_NAMES = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
            "running_var": "moving_var"}


def mxnet_params(model, torch):
    """(names, arrays) for the .params file from the state dict."""
    names, arrays = [], []
    bns = {n for n, m in model.named_modules()
           if isinstance(m, torch.nn.BatchNorm2d)}
    for key, t in model.state_dict().items():
        mod, _, leaf = key.rpartition(".")
        if leaf == "num_batches_tracked":
            continue
        base = mod.replace(".", "_")
        if mod in bns:
            kind = "aux" if leaf.startswith("running") else "arg"
            names.append("%s:%s_%s" % (kind, base, BN_NAMES[leaf]))
        else:
            names.append("arg:%s_%s" % (base, leaf))
        arrays.append(("array", t.detach().cpu().numpy().astype("float32")))
    return names, arrays


def randomize_bn(model, torch):
    """Random gamma/beta, statistics measured on random data, then
    perturbed (see the module doc)."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        for m in bns:
            m.weight.uniform_(0.5, 1.5)
            m.bias.normal_(0, 0.2)
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the batches
        model.train()
        n, b, s = CALIBRATION
        for _ in range(n):
            model(torch.randn(b, 3, s, s))
        for m in bns:
            m.running_var.mul_(torch.empty_like(m.running_var).uniform_(0.5, 2))
            m.running_mean.add_(torch.randn_like(m.running_mean) * 0.2 *
                                m.running_var.sqrt())
            m.momentum = 0.1
    model.eval()


def build(name, torch, torchvision):
    torch.manual_seed(SEEDS[name])
    model = getattr(torchvision.models, name)(weights=None)
    randomize_bn(model, torch)
    return model


def write(out, name, model, torch):
    path = lambda suffix: os.path.join(out, name + suffix)
    write_symbols(out, name, model)
    import make_mxnet_params  # the repo's one .params writer (numpy)
    names, arrays = mxnet_params(model, torch)
    with open(path("-0000.params"), "wb") as f:
        f.write(make_mxnet_params.list_bytes(2, arrays, names))
    torch.save(model.state_dict(), path(".pt"))
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, x, path(".onnx"), input_names=["data"],
                      output_names=["logits"], opset_version=13,
                      dynamic_axes={"data": {0: "n", 2: "h", 3: "w"},
                                    "logits": {0: "n"}})


def stamp():
    """A digest of this script and the params writer (what the files depend
    on besides torch)."""
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for f in (__file__, os.path.join(here, "make_mxnet_params.py")):
        with open(f, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def up_to_date(out, name):
    try:
        with open(os.path.join(out, name + ".stamp")) as f:
            old = f.read().strip()
    except OSError:
        return False
    files = ["-symbol.json", "_train-symbol.json", "-0000.params", ".onnx",
             ".pt"]
    return old == stamp() and all(
        os.path.exists(os.path.join(out, name + s)) for s in files)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--models", default="resnet18,resnet50")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--symbols-only", action="store_true",
                    help="the symbol files from spec(): no torch needed")
    args = ap.parse_args()
    names = [m for m in args.models.split(",") if m]
    bad = [m for m in names if m not in SEEDS]
    if bad:
        ap.error("unknown model %s; expected some of %s" % (bad, list(SEEDS)))
    if args.symbols_only:
        os.makedirs(args.out, exist_ok=True)
        for name in names:
            write_symbols(args.out, name, spec(name))
        return 0
    todo = [m for m in names if args.force or not up_to_date(args.out, m)]
    if not todo:
        return 0
    try:
        import torch
        import torchvision
    except ImportError as e:
        print("make_resnet: %s (Debian: python3-torch python3-torchvision)"
              % e, file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(2)
    for name in todo:
        print("make_resnet: writing %s into %s" % (name, args.out),
              file=sys.stderr)
        write(args.out, name, build(name, torch, torchvision), torch)
        with open(os.path.join(args.out, name + ".stamp"), "w") as f:
            f.write(stamp() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
