#!/usr/bin/python3
"""Operator conformance cases: what Apache MXNet 1.9 computes, written from
its documented semantics (operator docs and the rules of its operator
source, restated here in numpy), without mxc's kernels.

  make_conformance.py OUT     writes every case of CASES to the text file OUT

tests/conformance/test_conformance.cc runs each case through the public C
API and compares. The file format, one record per case:

  case NAME
  op OPERATOR
  attr KEY VALUE                  (VALUE: the rest of the line)
  in DTYPE SHAPE V...             (inputs in order)
  out DTYPE SHAPE V...            (expected visible outputs in order)
  alias O I                       (pass input I as output O: out= that is
                                   also an input)
  state I DTYPE SHAPE V...        (expected value of input I afterwards:
                                   optimizer states)
  ograd DTYPE SHAPE V...          (head gradient per visible output: the
                                   case then runs under autograd)
  igrad I DTYPE SHAPE V...        (expected gradient of input I)
  train 1                         (training mode)
  tol RTOL ATOL
  end

SHAPE is (d0,d1,...) with () for 0-d; values are decimal (int64 exact) or
nan/inf/-inf. Expected NaN matches NaN.

Run with Debian's interpreter: /usr/bin/python3 (python3-numpy).
"""
import sys

import numpy as np

F32, F64, I64 = "float32", "float64", "int64"


class Case:
    def __init__(self, name, op, attrs=None):
        self.name, self.op = name, op
        self.attrs = attrs or {}
        self.ins, self.outs, self.aliases = [], [], []
        self.states, self.ograds, self.igrads = [], [], []
        self.train = False
        self.tol = None

    def i(self, arr, dtype=F32):
        self.ins.append(np.asarray(arr, dtype=dtype))
        return self

    def o(self, arr, dtype=F32):
        self.outs.append(np.asarray(arr, dtype=dtype))
        return self


CASES = []


def case(name, op, attrs=None):
    c = Case(name, op, attrs)
    CASES.append(c)
    return c


def arange(shape, dtype=F32, start=0.0):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) + start).reshape(shape).astype(dtype)


def rnd(shape, seed, lo=-1.0, hi=1.0, dtype=F32):
    g = np.random.RandomState(seed)
    return g.uniform(lo, hi, size=shape).astype(dtype)


# ---- slice: None anywhere in begin, end and step (Python's rules) ----

def slice_case(name, shape, begin, end, step):
    x = arange(shape)
    idx = tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))
    tup = lambda t: "(" + ",".join("None" if v is None else str(v)
                                   for v in t) + ("," if len(t) == 1 else "") + ")"
    case(name, "slice",
         {"begin": tup(begin), "end": tup(end), "step": tup(step)}
         ).i(x).o(x[idx])


slice_case("slice_step_none_all", (2, 3, 4), (None, 1, None),
           (None, None, None), (None, None, 2))
slice_case("slice_step_none_rev", (5,), (None,), (None,), (-1,))
slice_case("slice_step_none_mixed", (3, 4), (1, None), (None, 0), (None, -1))
slice_case("slice_step_none_only", (3, 4), (0, 1), (2, 3), (None, None))
slice_case("slice_neg_step_begin_none", (6,), (None,), (1,), (-2,))


# ---- int64 beyond 2^53: exact integer paths ----

BIG = 2 ** 53 + 1
I64_VALS = [BIG, -BIG, 2 ** 62 + 3, -(2 ** 62 + 7), -5, 0, 7]


def i64(v):
    return np.asarray(v, dtype=np.int64)


x = i64(I64_VALS)
case("int64_negative", "negative").i(x, I64).o(-x, I64)
case("int64_abs", "abs").i(x, I64).o(np.abs(x), I64)
case("int64_relu", "relu").i(x, I64).o(np.maximum(x, 0), I64)
case("int64_sign", "sign").i(x, I64).o(np.sign(x), I64)
sq = i64([3037000499, -3037000499, 2 ** 31 + 1, BIG // 2 ** 20])
case("int64_square", "square").i(sq, I64).o(sq * sq, I64)
case("int64_copy", "_copy").i(x, I64).o(x, I64)
y = i64([BIG + 1, -BIG + 1, 2 ** 62 + 2, -(2 ** 62 + 6), -6, 1, 6])
case("int64_maximum", "maximum").i(x, I64).i(y, I64).o(np.maximum(x, y), I64)
case("int64_minimum", "minimum").i(x, I64).i(y, I64).o(np.minimum(x, y), I64)
case("int64_broadcast_maximum", "broadcast_maximum").i(
    x.reshape(7, 1), I64).i(i64([[BIG + 2]]), I64).o(
    np.maximum(x.reshape(7, 1), BIG + 2), I64)
case("int64_clip", "clip", {"a_min": "-1e18", "a_max": "1e18"}).i(
    i64([BIG, -BIG, 2 ** 62, 3]), I64).o(
    i64([BIG, -BIG, 10 ** 18, 3]), I64)
case("int64_elemwise_add", "elemwise_add").i(x, I64).i(y, I64).o(x + y, I64)
case("int64_sum", "sum").i(i64([BIG, 2, 2 ** 60]), I64).o(
    i64([BIG + 2 + 2 ** 60]), I64)


# scalar forms: MXNet casts the scalar to the array's dtype, so int64
# arithmetic with an integral scalar stays exact
for op, f in [("_plus_scalar", lambda v: v + 3), ("_minus_scalar",
              lambda v: v - 3), ("_rminus_scalar", lambda v: 3 - v),
              ("_mul_scalar", lambda v: v * 3),
              ("_maximum_scalar", lambda v: np.maximum(v, 3)),
              ("_minimum_scalar", lambda v: np.minimum(v, 3))]:
    xs = i64([BIG, -BIG, 2 ** 60 + 1, -7, 0])
    case("int64" + op, op, {"scalar": "3"}).i(xs, I64).o(f(xs), I64)
# data movement keeps every bit
XM = i64([[BIG, -BIG, 2 ** 62 + 3], [-(2 ** 62 + 7), 5, BIG + 2]])
case("int64_transpose", "transpose").i(XM, I64).o(XM.T, I64)
case("int64_reshape", "reshape", {"shape": "(3,2)"}).i(XM, I64).o(
    XM.reshape(3, 2), I64)
case("int64_flip", "flip", {"axis": "1"}).i(XM, I64).o(XM[:, ::-1], I64)
case("int64_slice", "slice", {"begin": "(None,1)", "end": "(None,None)"}
     ).i(XM, I64).o(XM[:, 1:], I64)
case("int64_concat", "Concat", {"num_args": "2", "dim": "0"}).i(XM, I64).i(
    XM, I64).o(np.concatenate([XM, XM]), I64)
case("int64_tile", "tile", {"reps": "(1,2)"}).i(XM, I64).o(
    np.tile(XM, (1, 2)), I64)
case("int64_broadcast_to", "broadcast_to", {"shape": "(2,2,3)"}).i(
    XM[None], I64).o(np.broadcast_to(XM[None], (2, 2, 3)), I64)
case("int64_take", "take").i(XM, I64).i(i64([1, 0]), I64).o(XM[[1, 0]], I64)
case("int64_where", "where").i(i64([[1, 0, 1], [0, 1, 0]]), I64).i(
    XM, I64).i(-XM, I64).o(np.where([[1, 0, 1], [0, 1, 0]], XM, -XM), I64)
case("int64_cast", "Cast", {"dtype": "int64"}).i(XM, I64).o(XM, I64)
case("int64_sum_axis", "sum", {"axis": "0"}).i(XM, I64).o(XM.sum(axis=0),
                                                          I64)


# ---- NaN in maximum/minimum (MXNet: a NaN on either side gives NaN) ----

nan = float("nan")


def mx_max(a, b):
    return np.where(np.isnan(a) | (a > b), a, b)


def mx_min(a, b):
    return np.where(np.isnan(a) | (a < b), a, b)


a = np.array([nan, 1.0, nan, 2.0, -1.0], np.float32)
b = np.array([1.0, nan, nan, 3.0, -2.0], np.float32)
case("nan_maximum", "maximum").i(a).i(b).o(mx_max(a, b))
case("nan_minimum", "minimum").i(a).i(b).o(mx_min(a, b))
case("nan_maximum_f64", "maximum").i(a, F64).i(b, F64).o(mx_max(a, b), F64)
a2 = np.array([[nan, 0.5], [2.0, nan]], np.float32)
b2 = np.array([[1.0, 1.0]], np.float32)
case("nan_broadcast_maximum", "broadcast_maximum").i(a2).i(b2).o(
    mx_max(a2, b2))
case("nan_broadcast_minimum", "broadcast_minimum").i(a2).i(b2).o(
    mx_min(a2, b2))
case("nan_broadcast_maximum_right", "broadcast_maximum").i(b2).i(a2).o(
    mx_max(b2, a2))
s = np.array([nan, 0.0, 5.0], np.float32)
case("nan_maximum_scalar", "_maximum_scalar", {"scalar": "1"}).i(s).o(
    mx_max(s, np.float32(1)))
case("nan_minimum_scalar", "_minimum_scalar", {"scalar": "1"}).i(s).o(
    mx_min(s, np.float32(1)))


# ---- relu keeps NaN ----

r = np.array([nan, -1.0, 0.0, 2.0], np.float32)
mx_relu = np.where(np.isnan(r) | (r > 0), r, 0).astype(np.float32)
case("nan_relu", "relu").i(r).o(mx_relu)
case("nan_activation_relu", "Activation", {"act_type": "relu"}).i(r).o(mx_relu)
case("nan_activation_relu_f64", "Activation", {"act_type": "relu"}).i(
    r, F64).o(mx_relu, F64)


# ---- rint: the nearer of floor and ceil, floor on a tie ----

h = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -1.7, 1.2, 3.5, 4.0],
             np.float64)
mx_rint = np.where(h - np.floor(h) <= np.ceil(h) - h, np.floor(h),
                   np.ceil(h))
case("rint_halves", "rint").i(h).o(mx_rint)
case("rint_halves_f64", "rint").i(h, F64).o(mx_rint, F64)


# ---- reductions over every axis give (1,) ----

X = np.array([[1.0, -2.0, 3.0], [4.0, 0.5, -6.0]], np.float32)
XN = np.array([[1.0, nan, 3.0], [nan, 0.5, -6.0]], np.float32)
for op, ref, data in [
        ("sum", np.sum, X), ("mean", np.mean, X), ("prod", np.prod, X),
        ("max", np.max, X), ("min", np.min, X), ("nansum", np.nansum, XN),
        ("nanprod", np.nanprod, XN),
        ("norm", lambda v: np.sqrt(np.sum(v.astype(np.float64) ** 2)), X)]:
    case("reduce_all_" + op, op).i(data).o(np.array([ref(data)]))
    case("reduce_all_keepdims_" + op, op, {"keepdims": "True"}).i(data).o(
        np.array(ref(data)).reshape(1, 1))
# argmax/argmin without axis: the flat index, float, shape (1,)
case("reduce_all_argmax", "argmax").i(X).o(np.array([np.argmax(X)]))
case("reduce_all_argmin", "argmin").i(X).o(np.array([np.argmin(X)]))
case("reduce_axis_sum", "sum", {"axis": "1"}).i(X).o(X.sum(axis=1))
case("reduce_all_axes_listed_sum", "sum", {"axis": "(0,1)"}).i(X).o(
    np.array([X.sum()]))


# ---- max/min gradients: every tied element gets the full gradient ----

def grad_case(name, op, attrs, xin, og, ig, dtype=F32):
    c = case(name, op, attrs)
    c.i(xin, dtype)
    c.ograds.append(np.asarray(og, dtype=dtype))
    c.igrads.append((0, np.asarray(ig, dtype=dtype)))
    return c


t = np.array([1.0, 3.0, 3.0, 2.0], np.float32)
grad_case("max_grad_ties", "max", {}, t, [2.0], np.where(t == 3, 2.0, 0.0))
grad_case("min_grad_ties", "min", {}, -t, [2.0], np.where(t == 3, 2.0, 0.0))
T2 = np.array([[1.0, 5.0, 5.0], [4.0, 4.0, 4.0]], np.float32)
og2 = np.array([0.5, -1.0], np.float32)
grad_case("max_grad_ties_axis", "max", {"axis": "1"}, T2, og2,
          np.where(T2 == T2.max(axis=1, keepdims=True), og2[:, None], 0))
grad_case("min_grad_ties_axis_f64", "min", {"axis": "1"}, -T2, og2,
          np.where(T2 == T2.max(axis=1, keepdims=True), og2[:, None], 0), F64)


# ---- clip's gradient passes for a_min <= x <= a_max ----

cx = np.array([-1.0, 0.0, 0.5, 1.0, 2.0], np.float32)
grad_case("clip_grad_bounds", "clip", {"a_min": "0", "a_max": "1"}, cx,
          np.full(5, 3.0), np.where((cx >= 0) & (cx <= 1), 3.0, 0.0))


# ---- Deconvolution: no_bias defaults to true in MXNet 1.9 ----

def deconv_ref(x, w, stride):
    n, c, h, wd = x.shape
    _, f, kh, kw = w.shape
    oh, ow = (h - 1) * stride + kh, (wd - 1) * stride + kw
    y = np.zeros((n, f, oh, ow), np.float64)
    for b in range(n):
        for ci in range(c):
            for i in range(h):
                for j in range(wd):
                    for fo in range(f):
                        y[b, fo, i * stride:i * stride + kh,
                          j * stride:j * stride + kw] += x[b, ci, i, j] * w[ci, fo]
    return y


dx = rnd((1, 2, 2, 2), 1)
dw = rnd((2, 3, 2, 2), 2)
case("deconv_default_no_bias", "Deconvolution",
     {"kernel": "(2,2)", "num_filter": "3", "stride": "(2,2)"}).i(dx).i(
    dw).o(deconv_ref(dx, dw, 2))


# ---- nag_mom_update: MXNet 1.9's NAGMomKernel ----

def nag_ref(w, g, m, lr, mom, wd, rg, clip):
    g = g.astype(np.float64) * rg
    if clip >= 0:
        g = np.clip(g, -clip, clip)
    r = g + wd * w
    m1 = mom * m
    out = w - m1 + (mom + 1) * (m1 - lr * r)
    return out, m1 - lr * r


for nm, clip in [("nag_mom_update", -1.0), ("nag_mom_update_clip", 0.3)]:
    w, g, m = rnd((6,), 3, dtype=F64), rnd((6,), 4, -2, 2, F64), \
        rnd((6,), 5, dtype=F64)
    out, m2 = nag_ref(w, g, m, 0.1, 0.9, 0.01, 0.5, clip)
    c = case(nm, "nag_mom_update",
             {"lr": "0.1", "momentum": "0.9", "wd": "0.01",
              "rescale_grad": "0.5", "clip_gradient": str(clip)})
    c.i(w, F64).i(g, F64).i(m, F64).o(out, F64)
    c.states.append((2, np.asarray(m2, np.float64)))


# ---- softmax / log_softmax with use_length: the first L elements of a
# row are normalized among themselves, the rest are 0 ----

def softmax_len(x, lengths, axis, log):
    x = np.ascontiguousarray(np.moveaxis(x.astype(np.float64), axis, -1))
    y = np.zeros(x.shape)  # contiguous: the reshapes below are views
    flat, fy = x.reshape(-1, x.shape[-1]), y.reshape(-1, x.shape[-1])
    for r, n in enumerate(np.asarray(lengths).reshape(-1).astype(int)):
        n = max(0, min(n, flat.shape[1]))
        if n == 0:
            continue
        z = flat[r, :n] - flat[r, :n].max()
        e = np.exp(z)
        fy[r, :n] = z - np.log(e.sum()) if log else e / e.sum()
    return np.moveaxis(y, -1, axis)


def softmax_len_grad(y, og, lengths, axis, log):
    y = np.ascontiguousarray(np.moveaxis(y.astype(np.float64), axis, -1))
    og = np.ascontiguousarray(np.moveaxis(og.astype(np.float64), axis, -1))
    d = np.zeros(y.shape)
    fy, fg, fd = (a.reshape(-1, y.shape[-1]) for a in (y, og, d))
    for r, n in enumerate(np.asarray(lengths).reshape(-1).astype(int)):
        n = max(0, min(n, fy.shape[1]))
        g, yy = fg[r, :n], fy[r, :n]
        fd[r, :n] = g - np.exp(yy) * g.sum() if log else yy * (g - (g * yy).sum())
    return np.moveaxis(d, -1, axis)


SX = rnd((2, 3, 5), 30)
for op, log in [("softmax", False), ("log_softmax", True)]:
    lens = np.array([[5, 2, 0], [1, 4, 9]], np.int32)
    case(op + "_use_length", op, {"use_length": "True"}).i(SX).i(
        lens, "int32").o(softmax_len(SX, lens, -1, log))
    lens1 = np.array([[3, 1, 2, 2, 0], [1, 2, 3, 3, 3]], np.float32)
    case(op + "_use_length_axis1", op, {"use_length": "True", "axis": "1"}
         ).i(SX).i(lens1).o(softmax_len(SX, lens1, 1, log))
    og = rnd((2, 3, 5), 31)
    y = softmax_len(SX, lens, -1, log).astype(np.float32)
    c = grad_case(op + "_use_length_grad", op, {"use_length": "True"}, SX,
                  og, softmax_len_grad(y, og, lens, -1, log))
    c.i(lens, "int32")
    c.tol = (1e-4, 1e-5)


# ---- SoftmaxOutput multi_output: gradient normalisation of MXNet 1.9 ----

def so_multi_grad(x, label, norm, ignore=-1.0, use_ignore=False):
    n, k = x.shape[0], x.shape[1]
    sp = int(np.prod(x.shape[2:]))
    z = x.reshape(n, k, sp).astype(np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    lab = label.reshape(n, sp)
    g = y.copy()
    for b in range(n):
        for p in range(sp):
            c = int(lab[b, p])
            if use_ignore and lab[b, p] == ignore:
                g[b, :, p] = 0
            elif 0 <= c < k:
                g[b, c, p] -= 1
    if norm == "valid":
        valid = max(1, int((np.trunc(lab) != np.trunc(ignore)).sum()))
        scale = 1.0 / valid
    else:
        scale = 1.0 / sp / (n if norm == "batch" else 1)
    return (g * scale).reshape(x.shape)


MX = rnd((2, 3, 2, 2), 32, -2, 2)
ML = np.array([[[0, 2], [1, -1]], [[2, 2], [0, 1]]], np.float32)
for norm in ["null", "batch", "valid"]:
    for ign in [False, True]:
        attrs = {"multi_output": "True", "normalization": norm}
        if ign:
            attrs["use_ignore"] = "True"
        c = grad_case("softmax_output_multi_%s%s" % (norm, "_ignore" if ign
                                                     else ""),
                      "SoftmaxOutput", attrs, MX, np.ones(MX.shape),
                      so_multi_grad(MX, ML, norm, use_ignore=ign))
        c.i(ML)


# ---- BatchNorm and LayerNorm with output_mean_var: three outputs ----

def bn_ref(x, gamma, beta, mm, mv, eps, momentum, train, fix_gamma):
    axes = (0, 2, 3)
    if train:
        mean = x.mean(axis=axes)
        var = x.var(axis=axes)
    else:
        mean, var = mm, mv
    g = np.ones_like(gamma) if fix_gamma else gamma
    sh = (1, -1, 1, 1)
    out = (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + eps) * \
        g.reshape(sh) + beta.reshape(sh)
    # MXNet's CPU kernel outputs the inverse standard deviation as "var".
    inv_std = 1.0 / np.sqrt(var + eps)
    nmm = mm * momentum + mean * (1 - momentum) if train else mm
    nmv = mv * momentum + var * (1 - momentum) if train else mv
    return out, mean, inv_std, nmm, nmv


BX = rnd((2, 3, 2, 2), 40, dtype=F64)
BG, BB = rnd((3,), 41, 0.5, 1.5, F64), rnd((3,), 42, dtype=F64)
BMM, BMV = rnd((3,), 43, dtype=F64), rnd((3,), 44, 0.5, 2, F64)
for train in [False, True]:
    out, mean, inv_std, nmm, nmv = bn_ref(BX, BG, BB, BMM, BMV, 1e-3, 0.9,
                                          train, False)
    c = case("batch_norm_output_mean_var" + ("_train" if train else ""),
             "BatchNorm", {"output_mean_var": "True", "fix_gamma": "False"})
    for v in (BX, BG, BB, BMM, BMV):
        c.i(v, F64)
    c.o(out, F64).o(mean, F64).o(inv_std, F64)
    c.states += [(3, nmm), (4, nmv)]
    c.train = train

LX = rnd((2, 3, 4), 45, dtype=F64)
LG, LB = rnd((4,), 46, 0.5, 1.5, F64), rnd((4,), 47, dtype=F64)
lmean = LX.mean(axis=-1, keepdims=True)
lstd = np.sqrt(LX.var(axis=-1, keepdims=True) + 1e-5)
case("layer_norm_output_mean_var", "LayerNorm",
     {"output_mean_var": "True"}).i(LX, F64).i(LG, F64).i(LB, F64).o(
    (LX - lmean) / lstd * LG + LB, F64).o(lmean, F64).o(lstd, F64)


# ---- out= that is also an input: the answer of separate arrays ----

def alias_case(name, op, attrs, ins, ref, out_from, dtypes=None):
    c = case(name, op, attrs)
    for k, v in enumerate(ins):
        c.i(v, dtypes[k] if dtypes else F32)
    c.o(ref, dtypes[out_from] if dtypes else F32)
    c.aliases.append((0, out_from))
    return c


A = rnd((3, 3), 10)
B = rnd((3, 3), 11)
alias_case("alias_add_n_second", "add_n", {"num_args": "3"}, [A, B, A],
           A + B + A, 1)
alias_case("alias_add_n_first", "add_n", {"num_args": "2"}, [A, B], A + B, 0)
alias_case("alias_dot_lhs", "dot", {}, [A, B], A.astype(np.float64) @ B, 0)
alias_case("alias_dot_rhs", "dot", {}, [A, B], A.astype(np.float64) @ B, 1)
alias_case("alias_dot_transpose_b", "dot", {"transpose_b": "True"}, [A, B],
           A.astype(np.float64) @ B.T, 1)
BA, BB = rnd((2, 3, 3), 12), rnd((2, 3, 3), 13)
alias_case("alias_batch_dot", "batch_dot", {}, [BA, BB],
           np.einsum("bij,bjk->bik", BA.astype(np.float64), BB), 0)
FD, FW, FB = rnd((3, 3), 14), rnd((3, 3), 15), rnd((3,), 16)
alias_case("alias_fully_connected_data", "FullyConnected",
           {"num_hidden": "3"}, [FD, FW, FB],
           FD.astype(np.float64) @ FW.T + FB, 0)
alias_case("alias_fully_connected_weight", "FullyConnected",
           {"num_hidden": "3"}, [FD, FW, FB],
           FD.astype(np.float64) @ FW.T + FB, 1)
alias_case("alias_transpose", "transpose", {}, [A], A.T, 0)
T3 = rnd((2, 2, 2), 17)
alias_case("alias_transpose_axes", "transpose", {"axes": "(2,0,1)"}, [T3],
           np.transpose(T3, (2, 0, 1)), 0)
alias_case("alias_swapaxes", "SwapAxis", {"dim1": "0", "dim2": "1"}, [A],
           A.T, 0)
V = rnd((7,), 18)
alias_case("alias_flip", "flip", {"axis": "0"}, [V], V[::-1], 0)
alias_case("alias_reverse", "reverse", {"axis": "0"}, [V], V[::-1], 0)
alias_case("alias_sort", "sort", {}, [V], np.sort(V), 0)
alias_case("alias_sort_descend", "sort", {"is_ascend": "False"}, [V],
           np.sort(V)[::-1], 0)
alias_case("alias_argsort", "argsort", {}, [V],
           np.argsort(V, kind="stable").astype(np.float32), 0)
idx = np.array([6, 0, 3, 3, 1, 2, 5], np.float32)
alias_case("alias_take_data", "take", {}, [V, idx], V[idx.astype(int)], 0)
alias_case("alias_take_indices", "take", {}, [V, idx], V[idx.astype(int)], 1)
alias_case("alias_slice_reverse", "slice",
           {"begin": "(None,)", "end": "(None,)", "step": "(-1,)"}, [V],
           V[::-1], 0)
alias_case("alias_topk_value", "topk", {"k": "7", "ret_typ": "value"}, [V],
           np.sort(V)[::-1], 0)
S = rnd((2, 4), 19)
sm = np.exp(S - S.max(axis=1, keepdims=True))
sm = sm / sm.sum(axis=1, keepdims=True)
alias_case("alias_softmax", "softmax", {}, [S], sm, 0)
alias_case("alias_log_softmax", "log_softmax", {}, [S], np.log(sm), 0)
l2 = S / np.sqrt((S.astype(np.float64) ** 2).sum(axis=1, keepdims=True)
                 + 1e-10)
alias_case("alias_l2_normalization", "L2Normalization", {}, [S], l2, 0)
alias_case("alias_broadcast_add_rhs", "broadcast_add", {},
           [S[:1], S], S[:1] + S, 1)
alias_case("alias_elemwise_sub_rhs", "elemwise_sub", {}, [A, B], A - B, 1)
CX, CW = rnd((1, 1, 4, 4), 20), rnd((1, 1, 3, 3), 21)
conv = np.zeros((1, 1, 4, 4))
P = np.pad(CX[0, 0].astype(np.float64), 1)
for i in range(4):
    for j in range(4):
        conv[0, 0, i, j] = (P[i:i + 3, j:j + 3] * CW[0, 0]).sum()
alias_case("alias_convolution_data", "Convolution",
           {"kernel": "(3,3)", "pad": "(1,1)", "num_filter": "1",
            "no_bias": "True"}, [CX, CW], conv, 0)
G = np.array([[2, 0, 1]], np.float32)
alias_case("alias_gather_nd", "gather_nd", {}, [V[:3].copy(), G],
           V[:3][G[0].astype(int)], 0)


# ---- writing ----

def shape_str(a):
    return "(" + ",".join(str(d) for d in a.shape) + ")"


def vals_str(a):
    out = []
    for v in a.reshape(-1).tolist():
        if isinstance(v, float):
            out.append("nan" if v != v else repr(v))
        else:
            out.append(str(int(v)))
    return " ".join(out)


def arr_line(tag, a, dtype=None):
    dt = dtype or str(a.dtype)
    return "%s %s %s %s" % (tag, dt, shape_str(a), vals_str(a))


def write(path):
    names = set()
    with open(path, "w") as f:
        for c in CASES:
            assert c.name not in names, c.name
            names.add(c.name)
            f.write("case %s\nop %s\n" % (c.name, c.op))
            for k, v in c.attrs.items():
                f.write("attr %s %s\n" % (k, v))
            for a in c.ins:
                f.write(arr_line("in", a) + "\n")
            for k, a in enumerate(c.outs):
                dt = str(a.dtype)
                f.write(arr_line("out", a, dt) + "\n")
            for o, i in c.aliases:
                f.write("alias %d %d\n" % (o, i))
            for i, a in c.states:
                f.write("state %d %s\n" % (i, arr_line("", a).strip()))
            for a in c.ograds:
                f.write(arr_line("ograd", a) + "\n")
            for i, a in c.igrads:
                f.write("igrad %d %s\n" % (i, arr_line("", a).strip()))
            if c.train:
                f.write("train 1\n")
            if c.tol:
                f.write("tol %r %r\n" % c.tol)
            f.write("end\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_conformance.py OUT")
    write(sys.argv[1])
