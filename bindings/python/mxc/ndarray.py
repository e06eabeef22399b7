"""NDArray: a Python owner of one mxc_ndarray handle.

Ownership: an NDArray owns exactly one handle and frees it exactly once,
either in close() (explicit, idempotent, also via `with`) or, as a safety
net, when the object is garbage collected (__del__). Freeing a handle never
frees storage another view, an exported DLPack tensor or pending engine
work still uses (the C library reference-counts storage), so dropping an
NDArray early is always safe.
"""

import ctypes
from ctypes import byref, c_int, c_int64, c_void_p

import numpy as np

from . import _lib
from . import memory as _scope
from ._lib import check, lib
from .device import Device, as_device

CPU = 1
STYPE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}

# mxc dtype codes (MXC_DTYPE_*) <-> numpy. bfloat16 (12) has no numpy type.
_TO_NUMPY = {
    0: np.dtype(np.float32), 1: np.dtype(np.float64),
    2: np.dtype(np.float16), 3: np.dtype(np.uint8), 4: np.dtype(np.int32),
    5: np.dtype(np.int8), 6: np.dtype(np.int64), 7: np.dtype(np.bool_),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}


def dtype_code(dtype):
    """MXC_DTYPE_* code for a numpy dtype (or anything np.dtype accepts)."""
    dt = np.dtype(dtype)
    try:
        return _FROM_NUMPY[dt]
    except KeyError:
        raise TypeError("mxc: dtype %s is not supported; expected one of %s"
                        % (dt, ", ".join(str(d) for d in _FROM_NUMPY))) from None


def _shape_arg(shape):
    shape = tuple(int(s) for s in shape)
    return (c_int64 * max(len(shape), 1))(*shape), len(shape)


class NDArray:
    """A dense or sparse mxc array. Create with mxc.array / mxc.empty /
    mxc.zeros / mxc.from_dlpack or get one from an operator."""

    __slots__ = ("_handle", "_scope", "__weakref__")

    def __init__(self, handle):
        # Takes ownership of a handle the caller got from the library.
        self._handle = handle
        self._scope = _scope.owner()  # whose end frees the handle
        _scope.tag_new(handle)

    # ---- ownership -------------------------------------------------------

    @property
    def handle(self):
        """The raw mxc_ndarray (an int), borrowed: valid until close()."""
        h = self._handle
        if h is None:
            raise ValueError("mxc.NDArray: the array is closed")
        return h

    @property
    def closed(self):
        return self._handle is None

    def close(self):
        """Frees the handle now. Idempotent; the array is unusable after."""
        h, self._handle = self._handle, None
        if h is not None and not _scope.released(self):
            lib.mxc_ndarray_free(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self, _free=lib.mxc_ndarray_free,
                _released=_scope.released):
        # The safety net for arrays never closed. _free is bound at class
        # creation so it still works while the interpreter shuts down and
        # module globals are already cleared.
        h = getattr(self, "_handle", None)
        if h is not None and not _released(self):
            self._handle = None
            _free(h)

    # ---- metadata --------------------------------------------------------

    @property
    def shape(self):
        ndim = c_int()
        dims = ctypes.POINTER(c_int64)()
        check(lib.mxc_ndarray_shape(self.handle, byref(ndim), byref(dims)))
        return tuple(dims[i] for i in range(ndim.value))

    @property
    def ndim(self):
        ndim = c_int()
        check(lib.mxc_ndarray_shape(self.handle, byref(ndim), None))
        return ndim.value

    @property
    def size(self):
        n = c_int64()
        check(lib.mxc_ndarray_size(self.handle, byref(n)))
        return n.value

    @property
    def dtype(self):
        """The numpy dtype (bfloat16 arrays raise TypeError)."""
        code = c_int()
        check(lib.mxc_ndarray_dtype(self.handle, byref(code)))
        try:
            return _TO_NUMPY[code.value]
        except KeyError:
            raise TypeError("mxc: dtype code %d has no numpy equivalent"
                            % code.value) from None

    @property
    def stype(self):
        """"default" (dense), "row_sparse" or "csr"."""
        st = c_int()
        check(lib.mxc_ndarray_stype(self.handle, byref(st)))
        return STYPE_NAMES[st.value]

    @property
    def device(self):
        """The array's mxc.Device (a (device type, id) named tuple:
        MXC_DEVICE_CPU is 1, MXC_DEVICE_GPU 2)."""
        t, i = c_int(), c_int()
        check(lib.mxc_ndarray_device(self.handle, byref(t), byref(i)))
        return Device(t.value, i.value)

    context = device  # MXNet's name

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d mxc.NDArray")
        return shape[0]

    def __repr__(self):
        if self._handle is None:
            return "<mxc.NDArray closed>"
        return "<mxc.NDArray %s %s %s>" % (self.shape, self.dtype, self.stype)

    # ---- data ------------------------------------------------------------

    def asnumpy(self):
        """A numpy copy of the values (sparse arrays are densified). Waits
        for pending writes and raises the failure of any that failed."""
        if self.stype != "default":
            out = _lib.handle()
            check(lib.mxc_ndarray_cast_storage(self.handle, 0, byref(out)))
            with NDArray(out.value) as dense:
                return dense.asnumpy()
        res = np.empty(self.shape, dtype=self.dtype)
        check(lib.mxc_ndarray_copy_to_host(self.handle,
                                           res.ctypes.data_as(c_void_p),
                                           res.nbytes))
        return res

    def __array__(self, dtype=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def copyfrom(self, source):
        """Writes a numpy array (or anything np.asarray accepts) into this
        array in place; shapes must match, the dtype is converted."""
        src = np.asarray(source, dtype=self.dtype, order="C")
        if src.shape != self.shape:
            raise ValueError("mxc.NDArray.copyfrom: source shape %s, expected "
                             "%s" % (src.shape, self.shape))
        check(lib.mxc_ndarray_copy_from_host(self.handle,
                                             src.ctypes.data_as(c_void_p),
                                             src.nbytes))
        return self

    def wait_to_read(self):
        check(lib.mxc_ndarray_wait_to_read(self.handle))
        return self

    def copyto(self, other):
        """Copies the values into other: an NDArray of the same shape and
        dtype on any device (returned), or a device (mxc.gpu(1)), where a
        new array the caller owns is created. The copy is asynchronous
        (ordered by the engine; reading the result waits for it). Dense
        arrays only. A device that cannot be used raises MxcError."""
        if isinstance(other, NDArray):
            check(lib.mxc_ndarray_copy(self.handle, other.handle))
            return other
        dst = empty(self.shape, self.dtype, device=other)
        try:
            check(lib.mxc_ndarray_copy(self.handle, dst.handle))
        except BaseException:
            dst.close()
            raise
        return dst

    def as_in_context(self, device):
        """This array when it is already on device, else copyto(device)
        (a new array). MXNet's name; also as_in_device."""
        if self.device == as_device(device):
            return self
        return self.copyto(device)

    as_in_device = as_in_context

    # ---- autograd --------------------------------------------------------

    def attach_grad(self, grad_req="write"):
        """Marks this array as an autograd variable with a zero gradient
        buffer of the same shape and dtype (see mxc.autograd)."""
        from . import autograd
        with zeros(self.shape, self.dtype, device=self.device) as g:
            autograd.mark_variables([self], [g], grad_req)

    @property
    def grad(self):
        """The gradient buffer (a new NDArray), or None if not marked."""
        out = _lib.handle()
        code = lib.mxc_autograd_get_grad(self.handle, byref(out))
        if code == 7:  # MXC_ERR_NOT_FOUND: not a marked variable
            return None
        check(code)
        return NDArray(out.value)

    def backward(self, head_grad=None, retain_graph=False):
        from . import autograd
        autograd.backward([self], None if head_grad is None else [head_grad],
                          retain_graph)

    def detach(self):
        out = _lib.handle()
        check(lib.mxc_ndarray_detach(self.handle, byref(out)))
        return NDArray(out.value)

    # ---- DLPack (see mxc.dlpack) -----------------------------------------

    def __dlpack__(self, stream=None):
        from . import dlpack
        return dlpack.to_capsule(self, stream)

    def __dlpack_device__(self):
        # kDLCPU is 1, kDLCUDA 2: mxc exports GPU arrays as kDLCUDA.
        dev = self.device
        return (1 if dev.device_type == CPU else 2, dev.device_id)

    def data_ptr(self):
        """Address of the first element (exported briefly through DLPack,
        which waits for pending writes). For zero-copy checks."""
        from . import dlpack
        return dlpack.data_ptr(self)

    # ---- arithmetic through operators -------------------------------------

    def _binary(self, other, op, scalar_op):
        from . import op as ops
        if isinstance(other, NDArray):
            return getattr(ops, op)(self, other)
        return getattr(ops, scalar_op)(self, scalar=float(other))

    def __add__(self, o):
        return self._binary(o, "broadcast_add", "_plus_scalar")

    def __sub__(self, o):
        return self._binary(o, "broadcast_sub", "_minus_scalar")

    def __mul__(self, o):
        return self._binary(o, "broadcast_mul", "_mul_scalar")

    def __truediv__(self, o):
        return self._binary(o, "broadcast_div", "_div_scalar")

    __radd__ = __add__
    __rmul__ = __mul__

    def __rsub__(self, o):
        from . import op as ops
        return ops._rminus_scalar(self, scalar=float(o))

    def __neg__(self):
        from . import op as ops
        return ops.negative(self)


def empty(shape, dtype=np.float32, device=None, ctx=None):
    """A new dense array with unspecified contents on device (mxc.cpu(),
    the default, or mxc.gpu(n); ctx is MXNet's name for it). A GPU that
    cannot be used raises MxcError (MXC_ERR_UNSUPPORTED) with the reason."""
    dev = as_device(device if device is not None else ctx)
    dims, ndim = _shape_arg(shape)
    out = _lib.handle()
    check(lib.mxc_ndarray_create(dims, ndim, dtype_code(dtype),
                                 dev.device_type, dev.device_id, 0,
                                 byref(out)))
    return NDArray(out.value)


def array(source, dtype=None, device=None, ctx=None):
    """A new dense array on device (default: the CPU) holding a copy of a
    numpy array (or anything np.asarray accepts). dtype defaults to the
    source's (float64 Python floats stay float64; pass dtype=np.float32
    for the usual type)."""
    src = np.asarray(source, dtype=dtype)
    if src.dtype not in _FROM_NUMPY:
        raise TypeError("mxc.array: dtype %s is not supported" % src.dtype)
    arr = empty(src.shape, src.dtype, device, ctx)
    try:
        arr.copyfrom(src)
    except BaseException:
        arr.close()
        raise
    return arr


def zeros(shape, dtype=np.float32, device=None, ctx=None):
    """A new dense array of zeros on device (default: the CPU)."""
    arr = empty(shape, dtype, device, ctx)
    try:
        arr.copyfrom(np.zeros(arr.shape, dtype=arr.dtype))
    except BaseException:
        arr.close()
        raise
    return arr
