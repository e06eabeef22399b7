"""Saving and loading arrays, symbols and checkpoints.

Files are mxc's own format or Apache MXNet's NDArray list (.params); load
reads either. Checkpoints are MXNet's pair PREFIX-symbol.json +
PREFIX-EEEE.params, so models move between mxc and MXNet-era tools.
"""

from ctypes import byref, c_char_p, c_int, c_void_p, string_at

from . import memory as _scope
from ._lib import check, handle, lib, strings
from .ndarray import NDArray

# mxc_ndarray_save_format's MXC_FILE_FORMAT_*.
FORMATS = {"mxc": 0, "mxnet": 1}


class Symbol:
    """A computation graph (an mxc_symbol). Make one with Symbol.from_json
    or load_checkpoint; close() frees it (or let it be collected)."""

    __slots__ = ("_handle", "_scope")

    def __init__(self, h):
        self._handle = h  # takes ownership
        self._scope = _scope.owner()
        _scope.tag_new(h)

    @classmethod
    def from_json(cls, text):
        h = handle()
        check(lib.mxc_symbol_from_json(text.encode("utf-8"), byref(h)))
        return cls(h.value)

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("mxc.Symbol: the symbol is closed")
        return self._handle

    def tojson(self):
        """The graph in MXNet 1.x JSON (a str)."""
        out = c_void_p()
        check(lib.mxc_symbol_to_json(self.handle, byref(out)))
        try:
            return string_at(out.value).decode("utf-8")
        finally:
            lib.mxc_string_free(out)

    def close(self):
        h, self._handle = self._handle, None
        if h is not None and not _scope.released(self):
            lib.mxc_symbol_free(h)

    def __del__(self, _free=lib.mxc_symbol_free,
                _released=_scope.released):
        h = getattr(self, "_handle", None)
        if h is not None and not _released(self):
            self._handle = None
            _free(h)


def _items(data):
    """(names or None, arrays) of a dict (named) or a list (unnamed)."""
    if isinstance(data, dict):
        return list(data.keys()), list(data.values())
    return None, list(data)


def _handles(arrays):
    arr = (handle * max(len(arrays), 1))()
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            raise TypeError("expected mxc.NDArray, got %s" % type(a).__name__)
        arr[i] = a.handle
    return arr


def save(path, data, format="mxc"):
    """Writes a dict {name: NDArray} or a list of NDArrays to path,
    atomically, in format "mxc" (dense arrays) or "mxnet" (MXNet's
    .params: dense, csr and row_sparse)."""
    if format not in FORMATS:
        raise ValueError("format must be one of %s" % sorted(FORMATS))
    names, arrays = _items(data)
    check(lib.mxc_ndarray_save_format(
        path.encode("utf-8"), _handles(arrays), strings(names),
        len(arrays), FORMATS[format]))


def _take_list(h):
    """[(name, NDArray)] of a list handle, which it frees."""
    try:
        n = c_int()
        check(lib.mxc_ndarray_list_size(h, byref(n)))
        out = []
        for i in range(n.value):
            a, name = handle(), c_char_p()
            check(lib.mxc_ndarray_list_name(h, i, byref(name)))
            check(lib.mxc_ndarray_list_get(h, i, byref(a)))
            out.append((name.value.decode("utf-8"), NDArray(a.value)))
        return out
    finally:
        lib.mxc_ndarray_list_free(h)


def load(path):
    """Reads a file of either format: a dict {name: NDArray} when the
    arrays are named, else a list (as MXNet's nd.load)."""
    h = handle()
    check(lib.mxc_ndarray_load(path.encode("utf-8"), byref(h)))
    pairs = _take_list(h.value)
    if pairs and all(name for name, _ in pairs):
        return dict(pairs)
    return [a for _, a in pairs]


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) of PREFIX-symbol.json and
    PREFIX-EEEE.params, the dicts keyed by names without arg:/aux:."""
    s, a, x = handle(), handle(), handle()
    check(lib.mxc_checkpoint_load(prefix.encode("utf-8"), int(epoch),
                                  byref(s), byref(a), byref(x)))
    sym = Symbol(s.value)
    return sym, dict(_take_list(a.value)), dict(_take_list(x.value))


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params):
    """Writes symbol and the parameter dicts as an MXNet checkpoint."""
    args, aux = dict(arg_params), dict(aux_params or {})
    check(lib.mxc_checkpoint_save(
        prefix.encode("utf-8"), int(epoch), symbol.handle, len(args),
        strings(list(args)), _handles(list(args.values())), len(aux),
        strings(list(aux)), _handles(list(aux.values()))))
