#!/usr/bin/python3
"""Golden data for the RNN operator, computed by torch (Debian's python3).

For each case of CASES, torch.nn.RNN/LSTM/GRU in float64 runs a random
sequence; its weights are repacked into MXNet's layout for the fused RNN
operator (every weight, layer by layer and direction by direction, i2h
then h2h; then every bias in the same order; torch's gate orders i,f,g,o
and r,z,n are MXNet's), and autograd gives the gradients of
L = sum(out * dout) + sum(hy * dhy) [+ sum(cy * dcy)].

Usage: make_rnn_golden.py write DIR  -> DIR/<case>.bin per case.

File format (little-endian): a sequence of records, each
  uint32 name length, name bytes (ASCII), uint32 ndim, int64 dims[ndim],
  float64 values (row-major).
Records: x, params, h0, [c0], [lens], out, hy, [cy], dout, dhy, [dcy],
dx, dparams, dh0, [dc0]."""

import os
import struct
import sys

import torch

# name, mode, T, N, I, H, layers, bidirectional, with sequence lengths
CASES = [
    ("lstm_1l", "lstm", 5, 3, 4, 6, 1, False, False),
    ("lstm_2l_bi", "lstm", 4, 2, 3, 5, 2, True, False),
    ("gru_1l", "gru", 5, 3, 4, 6, 1, False, False),
    ("gru_3l_bi", "gru", 3, 2, 4, 3, 3, True, False),
    ("tanh_2l", "rnn_tanh", 6, 2, 3, 4, 2, False, False),
    ("relu_1l_bi", "rnn_relu", 4, 3, 5, 4, 1, True, False),
    ("lstm_bi_len", "lstm", 5, 3, 2, 4, 2, True, True),
    ("gru_len", "gru", 6, 4, 3, 3, 1, False, True),
]


def make_module(mode, inp, hid, layers, bi):
    kw = dict(num_layers=layers, bidirectional=bi, dtype=torch.float64)
    if mode == "lstm":
        return torch.nn.LSTM(inp, hid, **kw)
    if mode == "gru":
        return torch.nn.GRU(inp, hid, **kw)
    act = "relu" if mode == "rnn_relu" else "tanh"
    return torch.nn.RNN(inp, hid, nonlinearity=act, **kw)


def mxnet_order(module, layers, bi, fmt):
    """torch parameter names in MXNet's packed order (fmt weight/bias)."""
    names = []
    for kind in ("weight", "bias"):
        for layer in range(layers):
            for d in range(2 if bi else 1):
                sfx = "_reverse" if d else ""
                for part in ("ih", "hh"):
                    names.append("%s_%s_l%d%s" % (kind, part, layer, sfx))
    return [fmt(getattr(module, n)) for n in names]


def run_case(case, gen):
    name, mode, t, n, i, h, layers, bi, with_lens = case
    torch.manual_seed(gen)
    mod = make_module(mode, i, h, layers, bi)
    for p in mod.parameters():
        torch.nn.init.uniform_(p, -0.5, 0.5)
    nd = 2 if bi else 1
    x = (torch.rand(t, n, i, dtype=torch.float64) * 2 - 1).requires_grad_()
    h0 = (torch.rand(layers * nd, n, h, dtype=torch.float64) - 0.5)
    h0.requires_grad_()
    c0 = (torch.rand(layers * nd, n, h, dtype=torch.float64) - 0.5)
    c0.requires_grad_()
    lens = torch.randint(1, t + 1, (n,)) if with_lens else None
    if lens is not None:
        lens[0] = t  # one full row
    state = (h0, c0) if mode == "lstm" else h0
    feed = x
    if lens is not None:
        feed = torch.nn.utils.rnn.pack_padded_sequence(
            x, lens, enforce_sorted=False)
    out, st = mod(feed, state)
    if lens is not None:
        out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, total_length=t)
    hy, cy = st if mode == "lstm" else (st, None)
    dout = torch.rand_like(out) - 0.5
    dhy = torch.rand_like(hy) - 0.5
    loss = (out * dout).sum() + (hy * dhy).sum()
    dcy = None
    if cy is not None:
        dcy = torch.rand_like(cy) - 0.5
        loss = loss + (cy * dcy).sum()
    loss.backward()
    flat = lambda p: p.detach().reshape(-1)
    params = torch.cat(mxnet_order(mod, layers, bi, flat))
    dparams = torch.cat(mxnet_order(mod, layers, bi, lambda p: p.grad.reshape(-1)))
    recs = [("x", x), ("params", params), ("h0", h0)]
    if mode == "lstm":
        recs.append(("c0", c0))
    if lens is not None:
        recs.append(("lens", lens.to(torch.float64)))
    recs += [("out", out), ("hy", hy)]
    if cy is not None:
        recs.append(("cy", cy))
    recs += [("dout", dout), ("dhy", dhy)]
    if dcy is not None:
        recs.append(("dcy", dcy))
    recs += [("dx", x.grad), ("dparams", dparams), ("dh0", h0.grad)]
    if mode == "lstm":
        recs.append(("dc0", c0.grad))
    return recs


def encode(recs):
    b = bytearray()
    for name, arr in recs:
        a = arr.detach().to(torch.float64).contiguous()
        b += struct.pack("<I", len(name)) + name.encode("ascii")
        b += struct.pack("<I", a.dim())
        b += struct.pack("<%dq" % a.dim(), *a.shape)
        b += struct.pack("<%dd" % a.numel(), *a.reshape(-1).tolist())
    return bytes(b)


def main(argv):
    if len(argv) != 3 or argv[1] != "write":
        sys.exit("usage: make_rnn_golden.py write DIR")
    os.makedirs(argv[2], exist_ok=True)
    for k, case in enumerate(CASES):
        with open(os.path.join(argv[2], case[0] + ".bin"), "wb") as f:
            f.write(encode(run_case(case, 1000 + k)))


if __name__ == "__main__":
    main(sys.argv)
