"""Operators of the registry, callable by name: mxc.op.dot(a, b).

Each attribute is looked up with mxc_op_find the first time it is used
(so every operator of the loaded library is available, nothing is
generated). Calls take NDArray inputs positionally and operator
parameters as keywords, passed to the library as strings; `out=` gives
arrays (one, or a list) to write instead of returning new ones.
"""

import threading
from ctypes import byref, c_char_p, c_int, c_void_p

import numpy as np

from . import _lib
from ._lib import check, lib
from .ndarray import NDArray


def _param_str(value):
    """The string form the C parameter parser reads."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        inner = ",".join(_param_str(v) for v in value)
        return "(%s,)" % inner if len(value) == 1 else "(%s)" % inner
    if value is None:
        return "None"
    if isinstance(value, (np.dtype, type)):
        return np.dtype(value).name
    return str(value)


class Operator:
    """One registry operator. Thread-safe: holds only the static handle."""

    __slots__ = ("name", "doc", "_op", "_n_out")

    def __init__(self, name):
        op = c_void_p()
        check(lib.mxc_op_find(name.encode("utf-8"), byref(op)))
        canon = c_char_p()
        check(lib.mxc_op_name(op, byref(canon)))
        doc = c_char_p()
        check(lib.mxc_op_doc(op, byref(doc)))
        self.name = canon.value.decode("utf-8")
        self.doc = (doc.value or b"").decode("utf-8", "replace")
        self._op = op.value
        # Output count per parameter set; a dict is safe to share between
        # threads (a racing miss just computes the same value twice).
        self._n_out = {}

    def __repr__(self):
        return "<mxc operator %s>" % self.name

    def _num_outputs(self, keys, vals, n, cache_key):
        n_out = self._n_out.get(cache_key)
        if n_out is None:
            out = c_int()
            check(lib.mxc_op_num_outputs(self._op, keys, vals, n, byref(out)))
            n_out = out.value
            # Custom's count follows its registration, which may change.
            if self.name != "Custom":
                self._n_out[cache_key] = n_out
        return n_out

    def __call__(self, *inputs, out=None, **params):
        for i, a in enumerate(inputs):
            if not isinstance(a, NDArray):
                raise TypeError("mxc.op.%s: input %d is %s, expected an "
                                "mxc.NDArray" % (self.name, i, type(a).__name__))
        names = list(params)
        vals_s = [_param_str(params[k]) for k in names]
        keys, vals = _lib.strings(names), _lib.strings(vals_s)
        n_out = self._num_outputs(keys, vals, len(names),
                                  tuple(zip(names, vals_s)))
        ins = (_lib.handle * max(len(inputs), 1))(*[a.handle for a in inputs])
        outs = (_lib.handle * max(n_out, 1))()
        given = None
        if out is not None:
            given = [out] if isinstance(out, NDArray) else list(out)
            if len(given) != n_out:
                raise ValueError("mxc.op.%s: out has %d arrays, the operator "
                                 "has %d outputs" % (self.name, len(given), n_out))
            for i, o in enumerate(given):
                outs[i] = o.handle
        check(lib.mxc_op_invoke(self._op, keys, vals, len(names), ins,
                                len(inputs), outs, n_out, None))
        if given is not None:
            return out
        # Wrap every new handle at once so that none can leak.
        res = [NDArray(outs[i]) for i in range(n_out)]
        return res[0] if n_out == 1 else tuple(res)


_cache = {}
_cache_lock = threading.Lock()


def get(name):
    """The Operator named `name` (or an alias); MxcError if unknown."""
    op = _cache.get(name)
    if op is None:
        op = Operator(name)
        with _cache_lock:
            op = _cache.setdefault(name, op)
    return op


def names():
    """Canonical names of every operator in the loaded library."""
    n = c_int()
    check(lib.mxc_op_count(byref(n)))
    res = []
    for i in range(n.value):
        op, s = c_void_p(), c_char_p()
        check(lib.mxc_op_at(i, byref(op)))
        check(lib.mxc_op_name(op, byref(s)))
        res.append(s.value.decode("utf-8"))
    return res


def __getattr__(name):
    # Module-level __getattr__ (PEP 562): mxc.op.relu -> get("relu").
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return get(name)
    except _lib.MxcError as e:
        raise AttributeError("mxc.op has no operator %r (%s)"
                             % (name, e.message)) from None


def __dir__():
    return sorted(set(globals()) | set(names()))
