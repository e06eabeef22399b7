#!/usr/bin/python3
"""Golden data for the nn operators of tests/ops/nn/test_golden.cc, computed
with torch's functional operators (an implementation independent of mxc).

Usage: make_nn_golden.py OUT_FILE

Without numpy or torch the file holds one line, "#skip <reason>", and the
test skips (as the Python binding's tests do): the build never needs them.

Each array is written as three lines: its name, its shape ("ndim d0 d1
..."), and its values in row-major order (repr of float64). Inputs come
from a fixed seed, so the file is the same on every run. Where MXNet and
torch define an operator differently the case is built so that they agree
(see the comments)."""
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the test skips
    np = None
    MISSING = str(e)

arrays = []


def put(name, a):
    arrays.append((name, np.asarray(a, dtype=np.float64)))


def rand(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, size=shape)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def lrn():
    # torch divides the windowed sum of squares by size, as MXNet divides
    # alpha by nsize; both windows run from c - size//2 for size channels.
    x = rand(2, 7, 3, 3)
    put("lrn.x", x)
    for size in (3, 4, 5):
        y = F.local_response_norm(t(x), size, alpha=0.05, beta=0.75, k=2.0)
        put("lrn.y%d" % size, y.numpy())


def norms():
    x, g, b = rand(2, 6, 4, 3), rand(6, lo=0.5, hi=1.5), rand(6)
    put("gn.x", x)
    put("gn.gamma", g)
    put("gn.beta", b)
    put("gn.y", F.group_norm(t(x), 3, t(g), t(b), eps=1e-5).numpy())
    x, g, b = rand(2, 3, 5), rand(3, lo=0.5, hi=1.5), rand(3)
    put("in.x", x)
    put("in.gamma", g)
    put("in.beta", b)
    put("in.y", F.instance_norm(t(x), weight=t(g), bias=t(b), eps=1e-3).numpy())


def resize():
    x = rand(1, 2, 4, 5)
    put("bilinear.x", x)
    for (h, w) in ((7, 3), (3, 2), (4, 5)):
        for align in (True, False):
            y = F.interpolate(t(x), size=(h, w), mode="bilinear",
                              align_corners=align)
            put("bilinear.y%d_%d_%d" % (h, w, int(align)), y.numpy())
    x = rand(2, 3, 7, 5)
    put("adaptive.x", x)
    for (h, w) in ((3, 4), (2, 2), (7, 5), (1, 1)):
        put("adaptive.y%d_%d" % (h, w),
            F.adaptive_avg_pool2d(t(x), (h, w)).numpy())


def upsampling_bilinear():
    # MXNet's bilinear UpSampling is a depthwise deconvolution with kernel
    # 2s - s%2, stride s, pad ceil((s-1)/2), num_group = C, no bias.
    for s in (2, 3):
        x, c = rand(2, 3, 3, 4), 3
        k, p = 2 * s - s % 2, (s - 1 + 1) // 2
        w = rand(c, 1, k, k)
        put("upbil%d.x" % s, x)
        put("upbil%d.w" % s, w)
        y = F.conv_transpose2d(t(x), t(w), stride=s, padding=p, groups=c)
        put("upbil%d.y" % s, y.numpy())


def main():
    if np is None:
        with open(sys.argv[1], "w") as f:
            f.write("#skip %s\n" % MISSING)
        return
    global RNG
    RNG = np.random.RandomState(20)
    lrn()
    norms()
    resize()
    upsampling_bilinear()
    with open(sys.argv[1], "w") as f:
        for name, a in arrays:
            f.write(name + "\n")
            f.write(" ".join(str(d) for d in (a.ndim,) + a.shape) + "\n")
            f.write(" ".join(repr(float(v)) for v in a.ravel()) + "\n")


if __name__ == "__main__":
    main()
