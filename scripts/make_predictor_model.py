#!/usr/bin/python3
"""A small MXNet checkpoint and its expected predictions, written with numpy
alone (no mxc code), for the predictor tests of every binding.

  make_predictor_model.py OUTDIR [BATCH]

writes into OUTDIR:
  model-symbol.json    an MXNet 1.x graph: Convolution (3x3, pad 1) ->
                       BatchNorm (moving statistics as auxiliary states) ->
                       relu -> max Pooling 2x2 -> Flatten -> FullyConnected
                       -> SoftmaxOutput (whose label inference never reads)
  model-0000.params    MXNet's NDArray list, layout v2, "arg:"/"aux:" names
  input.f32            BATCH x 3 x 6 x 6 float32 inputs (little-endian)
  expected.f32         BATCH x 5 float32 softmax outputs of the numpy
                       forward below (float64 arithmetic)
  meta.txt             "BATCH C H W CLASSES", one line

The forward pass is written out from MXNet's operator definitions
(cross-correlation with zero padding; BatchNorm in inference mode
(x - moving_mean) / sqrt(moving_var + eps) * gamma + beta; max pooling;
FullyConnected x W^T + b; softmax over classes), not from mxc.

Run with Debian's interpreter: /usr/bin/python3 (python3-numpy).
"""
import json
import os
import struct
import sys

import numpy as np

C_IN, H, W = 3, 6, 6
FILTERS, CLASSES = 4, 5
EPS = 1e-3
V2, DENSE, CPU, FLOAT32 = 0xF993FAC9, 0, 1, 0


def node(op, name, attrs=None, inputs=()):
    return {"op": op, "name": name, "attrs": attrs or {},
            "inputs": [[i, 0, 0] for i in inputs]}


def graph():
    """The nodes in topological order; ids are list positions."""
    n = [node("null", "data"), node("null", "conv_weight"),
         node("null", "conv_bias")]
    n.append(node("Convolution", "conv", {"kernel": "(3, 3)", "pad": "(1, 1)",
                                          "num_filter": str(FILTERS)},
                  [0, 1, 2]))
    n += [node("null", "bn_gamma"), node("null", "bn_beta"),
          node("null", "bn_moving_mean"), node("null", "bn_moving_var")]
    n.append(node("BatchNorm", "bn", {"eps": str(EPS), "fix_gamma": "False"},
                  [3, 4, 5, 6, 7]))
    n.append(node("Activation", "relu", {"act_type": "relu"}, [8]))
    n.append(node("Pooling", "pool", {"kernel": "(2, 2)", "stride": "(2, 2)",
                                      "pool_type": "max"}, [9]))
    n.append(node("Flatten", "flat", {}, [10]))
    n += [node("null", "fc_weight"), node("null", "fc_bias")]
    n.append(node("FullyConnected", "fc", {"num_hidden": str(CLASSES)},
                  [11, 12, 13]))
    n.append(node("null", "softmax_label"))
    n.append(node("SoftmaxOutput", "softmax", {}, [14, 15]))
    args = [i for i, x in enumerate(n) if x["op"] == "null"]
    return {"nodes": n, "arg_nodes": args,
            "node_row_ptr": list(range(len(n) + 1)),
            "heads": [[len(n) - 1, 0, 0]],
            "attrs": {"mxnet_version": ["int", 10900]}}


def params(rng):
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    return {
        "arg:conv_weight": f(FILTERS, C_IN, 3, 3) * 0.5,
        "arg:conv_bias": f(FILTERS) * 0.1,
        "arg:bn_gamma": 1.0 + f(FILTERS) * 0.2,
        "arg:bn_beta": f(FILTERS) * 0.1,
        "aux:bn_moving_mean": f(FILTERS) * 0.3,
        "aux:bn_moving_var": (0.5 + rng.random(FILTERS)).astype(np.float32),
        "arg:fc_weight": f(CLASSES, FILTERS * (H // 2) * (W // 2)) * 0.3,
        "arg:fc_bias": f(CLASSES) * 0.1,
        # Not used by the graph: a predictor ignores it.
        "arg:unused_extra": f(2),
    }


def params_bytes(p):
    out = struct.pack("<QQQ", 0x112, 0, len(p))
    for a in p.values():
        out += struct.pack("<Ii", V2, DENSE)
        out += struct.pack("<i", a.ndim) + struct.pack("<%dq" % a.ndim,
                                                       *a.shape)
        out += struct.pack("<iii", CPU, 0, FLOAT32)
        out += a.astype("<f4").tobytes()
    out += struct.pack("<Q", len(p))
    for k in p:
        out += struct.pack("<Q", len(k.encode())) + k.encode()
    return out


def conv(x, w, b):
    n, _, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(h):
        for j in range(wd):
            patch = xp[:, :, i:i + 3, j:j + 3]
            out[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3],
                                                           [1, 2, 3]))
    return out + b[None, :, None, None]


def forward(x, p):
    g = {k.split(":")[1]: v.astype(np.float64) for k, v in p.items()}
    y = conv(x.astype(np.float64), g["conv_weight"], g["conv_bias"])
    bn = lambda v: v[None, :, None, None]
    y = (y - bn(g["bn_moving_mean"])) / np.sqrt(bn(g["bn_moving_var"]) + EPS)
    y = y * bn(g["bn_gamma"]) + bn(g["bn_beta"])
    y = np.maximum(y, 0)
    n, c, h, w = y.shape
    y = y.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    y = y.reshape(n, -1) @ g["fc_weight"].T + g["fc_bias"]
    e = np.exp(y - y.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main(argv):
    out = argv[1]
    batch = int(argv[2]) if len(argv) > 2 else 4
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20)
    p = params(rng)
    x = rng.standard_normal((batch, C_IN, H, W)).astype(np.float32)
    with open(os.path.join(out, "model-symbol.json"), "w") as f:
        json.dump(graph(), f, indent=1)
    with open(os.path.join(out, "model-0000.params"), "wb") as f:
        f.write(params_bytes(p))
    x.astype("<f4").tofile(os.path.join(out, "input.f32"))
    forward(x, p).astype("<f4").tofile(os.path.join(out, "expected.f32"))
    with open(os.path.join(out, "meta.txt"), "w") as f:
        f.write("%d %d %d %d %d\n" % (batch, C_IN, H, W, CLASSES))


if __name__ == "__main__":
    main(sys.argv)
