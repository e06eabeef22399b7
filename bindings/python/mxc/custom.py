"""Custom operators written in Python (mxc_custom_op_register).

    def forward(inputs, outputs, req, is_train, kwargs):
        outputs[0][...] = inputs[0] * float(kwargs.get("scale", 1))

    mxc.custom.register("scale", forward, backward=..., num_inputs=1)
    y = mxc.op.Custom(x, op_type="scale", scale=3)

Callbacks get numpy views of the arrays (valid during the call only):
  forward(inputs, outputs, req, is_train, kwargs)
  backward(ograds, inputs, outputs, igrads, req, kwargs)
  infer_shape(in_shapes, kwargs) -> list of output shapes
req[i] is "write", "add" or "null" for outputs[i] (igrads[i]); kwargs are
the call's other parameters, as strings. They run on mxc's engine threads
(ctypes takes the GIL); an exception becomes the operator's error, raised
at the next wait with its text. Calls into mxc from a callback follow the
C rules: invoking works, waiting raises MXC_ERR_REENTRANT.
"""

import ctypes
import threading
import traceback
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int64,
                    c_size_t, c_void_p)

import numpy as np

from ._lib import check, lib
from .ndarray import _TO_NUMPY

MAX_NDIM = 8
_REQ = {0: "null", 1: "write", 3: "add"}


class _Tensor(Structure):
    _fields_ = [("data", c_void_p), ("ndim", c_int),
                ("shape", POINTER(c_int64)), ("dtype", c_int)]


class _Call(Structure):
    _fields_ = [("user_data", c_void_p), ("n_kw", c_int),
                ("keys", POINTER(c_char_p)), ("vals", POINTER(c_char_p)),
                ("is_train", c_int), ("msg", c_void_p), ("msg_len", c_size_t)]


_INFER = CFUNCTYPE(c_int, POINTER(_Call), c_int, POINTER(c_int),
                   POINTER(c_int64), c_int, POINTER(c_int), POINTER(c_int64))
_FORWARD = CFUNCTYPE(c_int, POINTER(_Call), c_int, POINTER(_Tensor), c_int,
                     POINTER(_Tensor), POINTER(c_int))
_BACKWARD = CFUNCTYPE(c_int, POINTER(_Call), c_int, c_int, POINTER(_Tensor),
                      POINTER(_Tensor), POINTER(_Tensor), POINTER(_Tensor),
                      POINTER(c_int))
_DESTROY = CFUNCTYPE(None, c_void_p)


class _Def(Structure):
    _fields_ = [("num_inputs", c_int), ("num_outputs", c_int),
                ("infer_shape", _INFER), ("forward", _FORWARD),
                ("backward", _BACKWARD), ("destroy", _DESTROY),
                ("user_data", c_void_p)]


lib.mxc_custom_op_register.restype = c_int
lib.mxc_custom_op_register.argtypes = [c_char_p, c_void_p]
lib.mxc_custom_op_unregister.restype = c_int
lib.mxc_custom_op_unregister.argtypes = [c_char_p]

# The ctypes thunks of each registration must outlive every C call into
# them: kept here by id until mxc calls destroy, then moved to _retired
# (not dropped: destroy may run inside one of those thunks' calls) and
# released by a later register().
_lock = threading.Lock()
_live = {}
_retired = []
_next_id = [1]


def _view(t):
    """numpy view of a tensor (no copy)."""
    shape = tuple(t.shape[i] for i in range(t.ndim))
    dt = _TO_NUMPY[t.dtype]
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if n == 0 or not t.data:
        return np.zeros(shape, dt)
    buf = (ctypes.c_char * (n * dt.itemsize)).from_address(t.data)
    return np.frombuffer(buf, dt).reshape(shape)


def _kwargs(call):
    c = call.contents
    return {c.keys[i].decode("utf-8"): c.vals[i].decode("utf-8")
            for i in range(c.n_kw)}


def _fail(call, exc):
    """Writes the exception's text into the call's message buffer."""
    c = call.contents
    text = ("%s: %s" % (type(exc).__name__, exc)).encode("utf-8", "replace")
    text = text[:max(0, c.msg_len - 1)]
    ctypes.memmove(c.msg, text + b"\0", len(text) + 1)
    return -1


def _guard(fn):
    """Runs fn(call, ...) turning exceptions into a failed result."""
    def run(call, *args):
        try:
            fn(call, *args)
            return 0
        except BaseException as e:  # noqa: B902 - nothing may cross into C
            if not isinstance(e, Exception):
                traceback.print_exc()
            return _fail(call, e)
    return run


def _make_forward(forward):
    def fwd(call, n_in, ins, n_out, outs, req):
        inputs = [_view(ins[i]) for i in range(n_in)]
        outputs = [_view(outs[i]) for i in range(n_out)]
        reqs = [_REQ[req[i]] for i in range(n_out)]
        forward(inputs, outputs, reqs, bool(call.contents.is_train),
                _kwargs(call))
    return _FORWARD(_guard(fwd))


def _make_backward(backward):
    def bwd(call, n_in, n_out, og, ins, outs, ig, req):
        backward([_view(og[i]) for i in range(n_out)],
                 [_view(ins[i]) for i in range(n_in)],
                 [_view(outs[i]) for i in range(n_out)],
                 [_view(ig[i]) for i in range(n_in)],
                 [_REQ[req[i]] for i in range(n_in)], _kwargs(call))
    return _BACKWARD(_guard(bwd))


def _make_infer(infer_shape):
    def infer(call, n_in, in_nd, in_dims, n_out, out_nd, out_dims):
        shapes = [tuple(in_dims[i * MAX_NDIM + k] for k in range(in_nd[i]))
                  for i in range(n_in)]
        got = list(infer_shape(shapes, _kwargs(call)))
        if len(got) != n_out:
            raise ValueError("infer_shape returned %d shapes for %d outputs"
                             % (len(got), n_out))
        for i, s in enumerate(got):
            s = tuple(int(d) for d in s)
            if len(s) > MAX_NDIM:
                raise ValueError("output %d has more than %d axes"
                                 % (i, MAX_NDIM))
            out_nd[i] = len(s)
            for k, d in enumerate(s):
                out_dims[i * MAX_NDIM + k] = d
    return _INFER(_guard(infer))


def register(name, forward, backward=None, infer_shape=None, num_inputs=1,
             num_outputs=1):
    """Registers a custom operator, run by mxc.op.Custom(..., op_type=name).

    Raises MxcError (MXC_ERR_INVALID_ARGUMENT) for a name already
    registered or bad counts. Thread-safe."""
    with _lock:
        del _retired[:]
        key = _next_id[0]
        _next_id[0] += 1
    d = _Def(num_inputs=num_inputs, num_outputs=num_outputs)
    thunks = [_make_forward(forward)]
    d.forward = thunks[0]
    if backward is not None:
        thunks.append(_make_backward(backward))
        d.backward = thunks[-1]
    if infer_shape is not None:
        thunks.append(_make_infer(infer_shape))
        d.infer_shape = thunks[-1]

    def destroy(_user_data, key=key):
        with _lock:
            _retired.append(_live.pop(key, None))
    thunks.append(_DESTROY(destroy))
    d.destroy = thunks[-1]
    with _lock:
        _live[key] = thunks
    try:
        check(lib.mxc_custom_op_register(name.encode("utf-8"),
                                         ctypes.addressof(d)))
    except BaseException:
        with _lock:
            _live.pop(key, None)
        raise


def unregister(name):
    """Unregisters name; calls already running finish first."""
    check(lib.mxc_custom_op_unregister(name.encode("utf-8")))
