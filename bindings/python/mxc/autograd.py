"""Imperative autograd over mxc_autograd_*.

Recording and training mode are per thread in the C library; ctypes calls
run on the calling Python thread, so `with record():` affects only the
thread that entered it, as the C API promises.
"""

from ctypes import byref, c_int

from . import _lib
from ._lib import check, lib

_REQS = {"null": 0, "write": 1, "add": 3}


def _req(r):
    if isinstance(r, int):
        return r
    try:
        return _REQS[r]
    except KeyError:
        raise ValueError("mxc.autograd: grad_req %r; expected 'write', 'add' "
                         "or 'null'" % (r,)) from None


class _Scope:
    """Sets recording and training mode for a with-block, then restores
    the previous values (so scopes nest)."""

    def __init__(self, recording, training):
        self._rec, self._train = recording, training
        self._prev_rec = self._prev_train = None

    def __enter__(self):
        prev = c_int()
        if self._rec is not None:
            check(lib.mxc_autograd_set_recording(int(self._rec), byref(prev)))
            self._prev_rec = prev.value
        if self._train is not None:
            check(lib.mxc_set_training(int(self._train), byref(prev)))
            self._prev_train = prev.value
        return self

    def __exit__(self, *exc):
        if self._prev_train is not None:
            check(lib.mxc_set_training(self._prev_train, None))
        if self._prev_rec is not None:
            check(lib.mxc_autograd_set_recording(self._prev_rec, None))


def record(train_mode=True):
    """with mxc.autograd.record(): ... records operators for backward."""
    return _Scope(True, train_mode)


def pause(train_mode=False):
    """Stops recording inside a record() block."""
    return _Scope(False, train_mode)


def is_recording():
    out = c_int()
    check(lib.mxc_autograd_is_recording(byref(out)))
    return bool(out.value)


def mark_variables(variables, gradients, grad_reqs="write"):
    """Marks arrays as variables; gradients[i] receives d/d variables[i].
    The library keeps its own references to the gradient buffers, so the
    caller may close its NDArrays for them."""
    variables, gradients = list(variables), list(gradients)
    if len(variables) != len(gradients):
        raise ValueError("mxc.autograd.mark_variables: %d variables but %d "
                         "gradients" % (len(variables), len(gradients)))
    n = len(variables)
    if isinstance(grad_reqs, (str, int)):
        grad_reqs = [grad_reqs] * n
    reqs = (c_int * max(n, 1))(*[_req(r) for r in grad_reqs])
    vs = (_lib.handle * max(n, 1))(*[v.handle for v in variables])
    gs = (_lib.handle * max(n, 1))(*[g.handle for g in gradients])
    check(lib.mxc_autograd_mark_variables(n, vs, reqs, gs))


def backward(heads, head_grads=None, retain_graph=False):
    """Computes gradients of heads (NDArray or list) into the marked
    variables' gradient buffers. head_grads: None (ones) or a list with an
    NDArray or None per head."""
    from .ndarray import NDArray
    if isinstance(heads, NDArray):
        heads = [heads]
    heads = list(heads)
    n = len(heads)
    hs = (_lib.handle * max(n, 1))(*[h.handle for h in heads])
    hg = None
    if head_grads is not None:
        head_grads = list(head_grads)
        if len(head_grads) != n:
            raise ValueError("mxc.autograd.backward: %d heads but %d head "
                             "gradients" % (n, len(head_grads)))
        hg = (_lib.handle * max(n, 1))(
            *[None if g is None else g.handle for g in head_grads])
    check(lib.mxc_autograd_backward(n, hs, hg, int(bool(retain_graph))))
