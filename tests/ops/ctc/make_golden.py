#!/usr/bin/python3
"""Golden data for CTCLoss (tests/ops/ctc) from torch.nn.functional.ctc_loss.

MXNet's CTCLoss applies a softmax to data (T, N, C) itself; torch takes log
probabilities, so the reference feeds it log_softmax(data). Labels follow
MXNet's conventions (blank first: padding 0; blank last: padding -1) and
are turned into torch's target lengths here. Besides the loss, each case
gets a companion "CTCLoss:grad" case holding d(sum of losses)/d(data) from
torch's autograd. Format: see tests/ops/vision/make_golden.py.

Usage: make_golden.py OUT_FILE
"""
import sys

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
RNG = np.random.RandomState(5)
CASES = []


def fmt_arr(tag, a):
    a = np.asarray(a, dtype=np.float64)
    dims = " ".join(str(d) for d in a.shape)
    vals = " ".join(repr(float(v)) for v in a.ravel())
    return "%s %d %s : %s" % (tag, a.ndim, dims, vals)


def write(path):
    with open(path, "w") as f:
        for name, op, params, inputs, outputs in CASES:
            f.write("case %s %s\n" % (name, op))
            for k, v in params.items():
                f.write("param %s %s\n" % (k, v))
            for a in inputs:
                f.write(fmt_arr("in", a) + "\n")
            for a in outputs:
                f.write(fmt_arr("out", a) + "\n")
            f.write("end\n")


def reference(data, label, blank_last, data_len=None, label_len=None):
    t, n, c = data.shape
    blank = c - 1 if blank_last else 0
    pad = -1 if blank_last else 0
    if label_len is None:
        label_len = []
        for row in label:
            k = 0
            while k < len(row) and row[k] != pad:
                k += 1
            label_len.append(k)
    if data_len is None:
        data_len = [t] * n
    x = torch.tensor(data, requires_grad=True)
    targets = torch.tensor(np.where(label < 0, 0, label), dtype=torch.long)
    loss = torch.nn.functional.ctc_loss(
        torch.log_softmax(x, 2), targets,
        torch.tensor(data_len, dtype=torch.long),
        torch.tensor(label_len, dtype=torch.long), blank=blank,
        reduction="none", zero_infinity=False)
    finite = torch.isfinite(loss)
    loss[finite].sum().backward()
    grad = x.grad.numpy().copy()
    # MXNet's convention: an impossible alignment gives no gradient.
    grad[:, ~finite.numpy(), :] = 0
    return loss.detach().numpy(), grad


def add(name, params, data, label, blank_last, data_len=None, label_len=None):
    loss, grad = reference(data, label, blank_last, data_len, label_len)
    inputs = [data, label]
    if data_len is not None:
        inputs.append(np.array(data_len, dtype=np.float64))
    if label_len is not None:
        inputs.append(np.array(label_len, dtype=np.float64))
    CASES.append((name, "CTCLoss", params, inputs, [loss]))
    CASES.append((name + "_grad", "CTCLoss:grad", params, inputs, [grad]))


def main():
    t, n, c = 12, 4, 5
    data = RNG.uniform(-2, 2, (t, n, c))
    first = np.array([[1, 2, 3, 0], [4, 4, 0, 0], [2, 1, 2, 1], [0, 0, 0, 0]],
                     dtype=np.float64)
    add("blank_first", {}, data, first, False)
    last = first - 1  # classes 0..3, blank 4, padding -1
    add("blank_last", {"blank_label": "last"}, data, last, True)
    junk = np.array([[1, 2, 3, 4], [4, 4, 2, 1], [2, 1, 2, 1], [3, 0, 0, 0]],
                    dtype=np.float64)
    add("lengths", {"use_data_lengths": "true", "use_label_lengths": "true"},
        data, junk, False, data_len=[12, 7, 9, 1], label_len=[2, 2, 4, 1])
    add("label_lengths_only", {"use_label_lengths": "true"}, data, junk,
        False, label_len=[4, 3, 0, 1])
    # Too long for its frames: 1 frame cannot hold the 2 labels -> inf.
    add("impossible", {"use_data_lengths": "true"}, data, first, False,
        data_len=[1, 12, 2, 12])
    write(sys.argv[1])


if __name__ == "__main__":
    main()
