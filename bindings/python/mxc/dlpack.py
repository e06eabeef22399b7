"""Zero-copy exchange through DLPack (the Python capsule protocol).

Export (np.from_dlpack(arr), torch.utils.dlpack.from_dlpack(arr)):
arr.__dlpack__() wraps the DLManagedTensor of mxc_ndarray_to_dlpack in a
PyCapsule named "dltensor". A consumer renames it "used_dltensor" and calls
the tensor's deleter when done; a capsule dropped unconsumed calls it from
its destructor. Either way mxc's storage lives until the deleter ran, even
after every NDArray on it is closed.

Import (mxc.from_dlpack(x)): the producer's capsule is handed to
mxc_ndarray_from_dlpack, which takes ownership on success (it calls the
producer's deleter once the last view is freed and its work finished);
the capsule is then marked "used_dltensor" so that it does not call the
deleter a second time. On failure the capsule keeps ownership.

Only CPython's PyCapsule C functions are needed; they are called through
ctypes.pythonapi prototypes (PYFUNCTYPE keeps the GIL held, as the C API
requires).
"""

import ctypes
from ctypes import (CFUNCTYPE, PYFUNCTYPE, Structure, byref, c_char_p, c_int,
                    c_int64, c_uint8, c_uint16, c_uint64, c_void_p, py_object)

from . import _lib
from ._lib import check, lib
from .ndarray import NDArray

KDL_CPU = 1


class DLDevice(Structure):
    _fields_ = [("device_type", c_int), ("device_id", c_int)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", DLDevice), ("ndim", c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(c_int64)),
                ("strides", ctypes.POINTER(c_int64)),
                ("byte_offset", c_uint64)]


class DLManagedTensor(Structure):
    # The deleter takes the DLManagedTensor's own address.
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p),
                ("deleter", CFUNCTYPE(None, c_void_p))]


_api = ctypes.pythonapi
_capsule_new = PYFUNCTYPE(py_object, c_void_p, c_void_p, c_void_p)(
    ("PyCapsule_New", _api))
_is_valid = PYFUNCTYPE(c_int, py_object, c_char_p)(("PyCapsule_IsValid", _api))
_get_pointer = PYFUNCTYPE(c_void_p, py_object, c_char_p)(
    ("PyCapsule_GetPointer", _api))
_set_name = PYFUNCTYPE(c_int, py_object, c_void_p)(("PyCapsule_SetName", _api))
# The destructor receives a borrowed PyObject*: raw-pointer variants, so
# that no new reference to a dying object is made.
_is_valid_raw = PYFUNCTYPE(c_int, c_void_p, c_char_p)(
    ("PyCapsule_IsValid", _api))
_get_pointer_raw = PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(
    ("PyCapsule_GetPointer", _api))

# A capsule keeps the *pointer* to its name, so the names must outlive
# every capsule: module-level buffers, made immortal below.
_NAME = ctypes.create_string_buffer(b"dltensor")
_USED_NAME = ctypes.create_string_buffer(b"used_dltensor")


def call_deleter(address):
    """Runs a DLManagedTensor's deleter (if it has one)."""
    managed = DLManagedTensor.from_address(address)
    if managed.deleter:
        managed.deleter(address)


@CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):
    # Called by CPython (GIL held) when a capsule dies. Unconsumed (still
    # "dltensor"): nobody took ownership, so the tensor is released here.
    if _is_valid_raw(capsule, b"dltensor"):
        address = _get_pointer_raw(capsule, b"dltensor")
        if address:
            call_deleter(address)


# The destructor's C thunk and the names are used by capsules that may die
# during interpreter shutdown, after this module's globals are cleared:
# one extra reference each keeps them alive for the life of the process.
for _obj in (_NAME, _USED_NAME, _capsule_destructor):
    _api.Py_IncRef(py_object(_obj))
_DESTRUCTOR = ctypes.cast(_capsule_destructor, c_void_p).value


def to_capsule(arr, stream=None):
    """A "dltensor" capsule sharing arr's storage (arr.__dlpack__)."""
    if stream is not None:
        raise BufferError("mxc.NDArray.__dlpack__: stream must be None for "
                          "CPU arrays (got %r)" % (stream,))
    address = c_void_p()
    check(lib.mxc_ndarray_to_dlpack(arr.handle, byref(address)))
    try:
        return _capsule_new(address, ctypes.addressof(_NAME), _DESTRUCTOR)
    except BaseException:
        call_deleter(address.value)
        raise


def data_ptr(arr):
    """Address of arr's first element, via a short-lived export."""
    address = c_void_p()
    check(lib.mxc_ndarray_to_dlpack(arr.handle, byref(address)))
    t = DLManagedTensor.from_address(address.value).dl_tensor
    ptr = (t.data or 0) + t.byte_offset
    call_deleter(address.value)
    return ptr


def from_dlpack(obj):
    """An NDArray sharing the memory of obj without copying.

    obj: anything with __dlpack__ (numpy arrays, torch tensors, mxc
    arrays) or an unconsumed "dltensor" capsule. Only compact row-major
    CPU tensors of a dtype mxc knows are accepted; otherwise MxcError with
    the library's message, and obj is left as it was."""
    if hasattr(obj, "__dlpack__"):
        capsule = obj.__dlpack__()
    else:
        capsule = obj
    if type(capsule).__name__ != "PyCapsule" or not _is_valid(capsule,
                                                              b"dltensor"):
        raise TypeError("mxc.from_dlpack: expected an object with __dlpack__ "
                        "or an unconsumed 'dltensor' capsule, got %s"
                        % type(obj).__name__)
    address = _get_pointer(capsule, b"dltensor")
    out = _lib.handle()
    check(lib.mxc_ndarray_from_dlpack(address, byref(out)))
    # mxc owns the tensor now: the capsule must not call its deleter.
    _set_name(capsule, ctypes.addressof(_USED_NAME))
    return NDArray(out.value)
