#!/usr/bin/python3
"""A small float64 interpreter of Apache MXNet symbol JSON, the independent
reference tests/io/test_mxnet_models.cc compares mxc's outputs with. It
reads the graph (0.8 "param"/"attr" files as well as 1.x "attrs") and the
weights itself (.params through make_mxnet_params.py's own reader) and
runs inference (is_train = 0) with numpy/torch in float64, following
MXNet's documented operator definitions, never mxc's code.

  mxnet_ref.py SYMBOL.json PARAMS DATA.f32 N,C,H,W OUTPREFIX

DATA.f32 holds the input "data" as little-endian float32; PARAMS may be
"-" for none. Writes OUTPREFIX.I.f64 (float64, little-endian) for each
graph head I. Inputs a 0.8 file omits (BatchNorm's moving statistics) are
found under "<node>_<input>", as MXNet names them. Run with Debian's
/usr/bin/python3 (python3-numpy, python3-torch).
"""
import ast
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_mxnet_params as mp  # noqa: E402


def load_params(path):
    if path == "-":
        return {}
    arrays, names = mp.read_list(open(path, "rb").read())
    out = {}
    for a, n in zip(arrays, names):
        if a[0] != "dense":
            continue
        _, _, shape, data = a
        out[n.split(":", 1)[-1]] = np.array(data, np.float64).reshape(shape)
    return out


def tup(s):
    v = ast.literal_eval(s)
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def boolean(s):
    return str(s).lower() in ("true", "1")


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a, np.float64))


def conv(a, x, w, b=None):
    k = tup(a["kernel"])
    stride = tup(a["stride"]) if "stride" in a else (1,) * len(k)
    pad = tup(a["pad"]) if "pad" in a else (0,) * len(k)
    dil = tup(a["dilate"]) if "dilate" in a else (1,) * len(k)
    g = int(a.get("num_group", 1))
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(k)]
    y = fn(t(x), t(w), None if b is None else t(b), stride, pad, dil, g)
    return y.numpy()


def pool_out(n, k, s, p, full):
    if full:
        return 1 + int(np.ceil((n + 2 * p - k) / s))
    return 1 + (n + 2 * p - k) // s


def pooling(a, x):
    ptype = a.get("pool_type", "max")
    if boolean(a.get("global_pool", "False")):
        ax = tuple(range(2, x.ndim))
        return x.max(axis=ax, keepdims=True) if ptype == "max" else \
            x.mean(axis=ax, keepdims=True)
    k = tup(a["kernel"])
    s = tup(a["stride"]) if "stride" in a else (1,) * len(k)
    p = tup(a["pad"]) if "pad" in a else (0,) * len(k)
    full = a.get("pooling_convention", "valid") == "full"
    n, c, h, w = x.shape
    oh = pool_out(h, k[0], s[0], p[0], full)
    ow = pool_out(w, k[1], s[1], p[1], full)
    y = np.empty((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - p[0], j * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[0]), min(w0 + k[1], w + p[1])
            area = (h1 - h0) * (w1 - w0)  # avg: padding counts, as MXNet
            win = x[:, :, max(h0, 0):min(h1, h), max(w0, 0):min(w1, w)]
            if ptype == "max":
                y[:, :, i, j] = win.max(axis=(2, 3))
            else:
                y[:, :, i, j] = win.sum(axis=(2, 3)) / area
    return y


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def activation(kind, x):
    if kind == "relu":
        return np.maximum(x, 0)
    if kind == "tanh":
        return np.tanh(x)
    if kind == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if kind == "softrelu":
        return np.log1p(np.exp(x))
    raise NotImplementedError("Activation " + kind)


def leaky(a, x, gamma):
    kind = a.get("act_type", "leaky")
    if kind == "prelu":
        g = gamma.reshape((1, -1) + (1,) * (x.ndim - 2))
        return np.where(x > 0, x, g * x)
    if kind == "leaky":
        return np.where(x > 0, x, float(a.get("slope", 0.25)) * x)
    raise NotImplementedError("LeakyReLU " + kind)


def batch_norm(a, x, gamma, beta, mean, var):
    if boolean(a.get("fix_gamma", "True")):
        gamma = np.ones_like(gamma)
    eps = float(a.get("eps", 1e-3))
    sh = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * \
        gamma.reshape(sh) + beta.reshape(sh)


SCALAR = {"_plus_scalar": lambda x, s: x + s, "_PlusScalar": lambda x, s: x + s,
          "_minus_scalar": lambda x, s: x - s,
          "_MinusScalar": lambda x, s: x - s,
          "_mul_scalar": lambda x, s: x * s, "_MulScalar": lambda x, s: x * s,
          "_div_scalar": lambda x, s: x / s, "_DivScalar": lambda x, s: x / s}
BINARY = {"elemwise_add": np.add, "_Plus": np.add, "_plus": np.add,
          "elemwise_sub": np.subtract, "_Minus": np.subtract,
          "elemwise_mul": np.multiply, "_Mul": np.multiply}


def run_op(op, a, ins, name):
    x = ins[0] if ins else None
    if op == "Convolution":
        return [conv(a, x, ins[1], None if boolean(a.get("no_bias", "False"))
                     else ins[2])]
    if op == "FullyConnected":
        x2 = x.reshape(x.shape[0], -1)
        y = x2 @ ins[1].T
        if not boolean(a.get("no_bias", "False")):
            y = y + ins[2]
        return [y]
    if op == "BatchNorm":
        return [batch_norm(a, *ins[:5])]
    if op == "Activation":
        return [activation(a["act_type"], x)]
    if op == "LeakyReLU":
        return [leaky(a, x, ins[1] if len(ins) > 1 else None)]
    if op == "Pooling":
        return [pooling(a, x)]
    if op in ("Flatten", "flatten"):
        return [x.reshape(x.shape[0], -1)]
    if op == "Dropout":
        return [x]
    if op == "SoftmaxActivation":
        if a.get("mode", "instance") == "channel":
            return [softmax(x, 1)]
        return [softmax(x.reshape(x.shape[0], -1), 1).reshape(x.shape)]
    if op in ("SoftmaxOutput", "Softmax"):
        if boolean(a.get("multi_output", "False")):
            return [softmax(x, 1)]
        if boolean(a.get("preserve_shape", "False")):
            return [softmax(x, x.ndim - 1)]
        return [softmax(x.reshape(x.shape[0], -1), 1).reshape(x.shape)]
    if op in ("Concat", "concat"):
        return [np.concatenate(ins, axis=int(a.get("dim", 1)))]
    if op in ("SliceChannel", "split"):
        n = int(a["num_outputs"])
        parts = np.split(x, n, axis=int(a.get("axis", 1)))
        if boolean(a.get("squeeze_axis", "False")):
            parts = [p.squeeze(int(a.get("axis", 1))) for p in parts]
        return parts
    if op in SCALAR:
        return [SCALAR[op](x, float(a["scalar"]))]
    if op in BINARY:
        return [BINARY[op](ins[0], ins[1])]
    raise NotImplementedError("operator %s (node %s)" % (op, name))


# Inputs of each operator, for the ones a 0.8 file may omit.
INPUT_NAMES = {"BatchNorm": ["data", "gamma", "beta", "moving_mean",
                             "moving_var"]}


def run(graph, params, data):
    nodes = graph["nodes"]
    vals = []
    for n in nodes:
        a = dict(n.get("param", {}))  # 0.8: parameters under "param"
        a.update(n.get("attrs", {}))
        if n["op"] == "null":
            name = n["name"]
            if name == "data":
                vals.append([data])
            elif name in params:
                vals.append([params[name]])
            else:  # labels: unused in inference
                vals.append([None])
            continue
        ins = [vals[e[0]][e[1]] for e in n["inputs"]]
        want = INPUT_NAMES.get(n["op"], [])
        for k in range(len(ins), len(want)):
            ins.append(params[n["name"] + "_" + want[k]])
        vals.append(run_op(n["op"], a, ins, n["name"]))
    return [vals[h[0]][h[1]] for h in graph["heads"]]


def main(argv):
    sym, par, data_path, shape, prefix = argv[1:6]
    dims = tuple(int(d) for d in shape.split(","))
    data = np.fromfile(data_path, "<f4").astype(np.float64).reshape(dims)
    graph = json.load(open(sym))
    outs = run(graph, load_params(par), data)
    for i, o in enumerate(outs):
        np.asarray(o, "<f8").tofile("%s.%d.f64" % (prefix, i))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
