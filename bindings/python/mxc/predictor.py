"""Inference from an exported model: mxc.Predictor (mxc_predictor_*).

    with mxc.Predictor.from_checkpoint("model", 39,
                                       {"data": (1, 1, 28, 28)}) as p:
        probs = p.predict(image)          # set input, forward, output 0

A predictor owns its inputs and outputs; clone() and reshape() make
predictors that share the weights (one copy of the model in memory), for
other threads or batch sizes. One predictor must be used by one thread at
a time; ctypes releases the GIL during each call, so predictors on
different threads run in parallel.
"""

import contextlib
import queue
from ctypes import byref, c_int, c_int64, c_size_t

import numpy as np

from . import memory as _scope
from ._lib import check, handle, lib, strings
from .ndarray import _TO_NUMPY, NDArray, dtype_code

_CPU = 1


def _shape_args(shapes):
    """names, ndims, dims as the C API takes them, from {name: shape}."""
    names = list(shapes)
    dims = [int(d) for n in names for d in shapes[n]]
    ndims = (c_int * len(names))(*[len(shapes[n]) for n in names])
    return names, ndims, (c_int64 * max(len(dims), 1))(*dims)


def _create_args(input_shapes, dtypes, outputs):
    if not input_shapes:
        raise ValueError("mxc.Predictor: input_shapes must name at least "
                         "one input, e.g. {'data': (1, 3, 224, 224)}")
    names, ndims, dims = _shape_args(input_shapes)
    codes = None
    if dtypes is not None:
        codes = (c_int * len(names))(
            *[dtype_code(dtypes.get(n, np.float32)) for n in names])
    outs = list(outputs or [])
    return (len(names), strings(names), ndims, dims, codes, len(outs),
            strings(outs))


class Predictor:
    """An mxc_predictor. Make one with Predictor(json, params_bytes,
    input_shapes) or Predictor.from_checkpoint(prefix, epoch,
    input_shapes); input_shapes is {name: shape} (insertion order kept),
    dtypes an optional {name: numpy dtype} (float32 otherwise), outputs an
    optional list of output names ("fc1_output" or "fc1", inner nodes
    included). Errors raise mxc.MxcError."""

    __slots__ = ("_handle", "_scope", "_inputs", "_dtypes")

    def __init__(self, symbol_json, params, input_shapes, dtypes=None,
                 outputs=None):
        raw = bytes(params)
        h = handle()
        check(lib.mxc_predictor_create(
            symbol_json.encode("utf-8"), raw, len(raw), _CPU, 0,
            *_create_args(input_shapes, dtypes, outputs), byref(h)))
        self._handle = h.value
        self._scope = _scope.owner()
        _scope.tag_new(h.value)
        self._inputs = dict(input_shapes)
        self._dtypes = dict(dtypes or {})

    @classmethod
    def from_checkpoint(cls, prefix, epoch, input_shapes, dtypes=None,
                        outputs=None):
        """From PREFIX-symbol.json and PREFIX-EEEE.params."""
        h = handle()
        check(lib.mxc_predictor_create_from_checkpoint(
            prefix.encode("utf-8"), int(epoch), _CPU, 0,
            *_create_args(input_shapes, dtypes, outputs), byref(h)))
        return cls._wrap(h.value, input_shapes, dtypes)

    @classmethod
    def _wrap(cls, h, input_shapes, dtypes):
        p = cls.__new__(cls)
        p._handle = h
        p._scope = _scope.owner()
        _scope.tag_new(h)
        p._inputs = dict(input_shapes)
        p._dtypes = dict(dtypes or {})
        return p

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("mxc.Predictor: the predictor is closed")
        return self._handle

    @property
    def input_shapes(self):
        return dict(self._inputs)

    def set_input(self, name, value):
        """Copies value into the input name: an array-like with exactly
        the input's number of elements (C order; converted to the input's
        dtype), or an NDArray of the input's shape and dtype."""
        if isinstance(value, NDArray):
            check(lib.mxc_predictor_set_input_array(
                self.handle, name.encode("utf-8"), value.handle))
            return
        a = np.ascontiguousarray(value, self._dtypes.get(name, np.float32))
        check(lib.mxc_predictor_set_input(
            self.handle, name.encode("utf-8"), a.ctypes.data, a.nbytes))

    def forward(self, **inputs):
        """Sets the given inputs (by keyword) and runs the model."""
        for name, value in inputs.items():
            self.set_input(name, value)
        check(lib.mxc_predictor_forward(self.handle))
        return self

    @property
    def num_outputs(self):
        n = c_int()
        check(lib.mxc_predictor_num_outputs(self.handle, byref(n)))
        return n.value

    def output_shape(self, index=0):
        """(shape tuple, numpy dtype) of output index."""
        nd, dt = c_int(), c_int()
        dims = (c_int64 * 8)()
        check(lib.mxc_predictor_output_shape(self.handle, index, byref(nd),
                                             dims, byref(dt)))
        return tuple(dims[:nd.value]), _TO_NUMPY[dt.value]

    def output(self, index=0):
        """Output index of the last forward as a new numpy array."""
        shape, dtype = self.output_shape(index)
        out = np.empty(shape, dtype=dtype)
        check(lib.mxc_predictor_get_output(self.handle, index,
                                           out.ctypes.data, out.nbytes))
        return out

    def predict(self, value, name=None):
        """forward with value as the (first) input; output 0."""
        name = name or next(iter(self._inputs))
        return self.forward(**{name: value}).output(0)

    def clone(self):
        """A predictor sharing these weights (for another thread)."""
        h = handle()
        check(lib.mxc_predictor_clone(self.handle, byref(h)))
        return Predictor._wrap(h.value, self._inputs, self._dtypes)

    def reshape(self, input_shapes):
        """A predictor sharing these weights with the named inputs
        reshaped ({name: shape}; e.g. another batch size)."""
        names, ndims, dims = _shape_args(input_shapes)
        h = handle()
        check(lib.mxc_predictor_reshape(self.handle, len(names),
                                        strings(names), ndims, dims,
                                        byref(h)))
        shapes = dict(self._inputs)
        shapes.update({n: tuple(input_shapes[n]) for n in names})
        return Predictor._wrap(h.value, shapes, self._dtypes)

    def close(self):
        h, self._handle = self._handle, None
        if h is not None and not _scope.released(self):
            lib.mxc_predictor_free(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self, _free=lib.mxc_predictor_free,
                _released=_scope.released):
        h = getattr(self, "_handle", None)
        if h is not None and not _released(self):
            self._handle = None
            _free(h)


class PredictorPool:
    """Serving one model from many threads: a bounded pool of predictors
    sharing one copy of the weights (clones of `model`, which stays the
    caller's). A predictor runs one request at a time, so a thread takes
    one (blocking while all `size` are busy), runs it and gives it back:

        pool = mxc.PredictorPool(model, size=4)
        probs = pool.predict(image)          # from any thread
        with pool.acquire() as p:            # several inputs or outputs
            p.forward(data=x, mask=m)
            a, b = p.output(0), p.output(1)

    Memory: the weights once, plus inputs, outputs and intermediate
    arrays per predictor; size bounds both the memory and the requests
    running at once. The pool's predictors are outside any memory scope
    (the pool frees them in close()). Thread-safe; close() must not
    overlap requests. Requests waiting longer than `timeout` seconds
    (None: forever) raise queue.Empty."""

    def __init__(self, model, size, timeout=None):
        if int(size) < 1:
            raise ValueError("mxc.PredictorPool: size must be >= 1, got %r"
                             % (size,))
        self._idle = queue.LifoQueue()  # the last used is the warmest
        self._all = []
        self._timeout = timeout
        try:
            for _ in range(int(size)):
                p = _scope.detach_from_scope(model.clone())
                self._all.append(p)
                self._idle.put(p)
        except BaseException:
            self.close()
            raise

    @property
    def size(self):
        return len(self._all)

    @contextlib.contextmanager
    def acquire(self):
        """A predictor of the pool for the duration of the with block."""
        if self._all is None:
            raise ValueError("mxc.PredictorPool: the pool is closed")
        p = self._idle.get(timeout=self._timeout)
        try:
            yield p
        finally:
            self._idle.put(p)

    def predict(self, value, name=None):
        """Predictor.predict on a pooled predictor: output 0 for value as
        the (first) input, as a new numpy array."""
        with self.acquire() as p:
            return p.predict(value, name)

    def close(self):
        """Frees the pool's predictors (not the model); idempotent."""
        preds, self._all = self._all, None
        for p in preds or ():
            p.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
