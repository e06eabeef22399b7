"""mxc from Python: a pure-ctypes binding over libmxc.so.1.

    import mxc, numpy as np
    a = mxc.array(np.ones((2, 3), np.float32))
    b = mxc.op.relu(a)            # any registry operator, by name
    print(b.asnumpy())
    t = np.from_dlpack(b)         # zero-copy views both ways
    c = mxc.from_dlpack(t)

See README.md for library lookup and ownership rules.
"""

from ctypes import byref, c_int, c_int64

from . import _lib
from ._lib import MxcError, check
from .device import Device, cpu, device_check, gpu, num_gpus
from .ndarray import NDArray, array, empty, zeros
from . import op, autograd, profiler  # noqa: E402  (op needs NDArray)
from . import custom  # noqa: E402
from .dlpack import from_dlpack
from .io import (Symbol, load, load_checkpoint, save,  # noqa: E402
                 save_checkpoint)
from .predictor import Predictor, PredictorPool  # noqa: E402
from .recordio import (DataIter, ImageRecordIter, RecordIO,  # noqa: E402
                       image_decode, pack_image, unpack_image)
from .data import CSVIter, IDXIter, LibSVMIter  # noqa: E402
from .kvstore import KVStore  # noqa: E402
from .memory import (Scope, detach_from_scope, dump_handles,  # noqa: E402
                     keep, memory_stats, scope, set_handle_debug)
from . import nn  # noqa: E402

__all__ = ["MxcError", "Device", "cpu", "gpu", "num_gpus", "device_check",
           "NDArray", "array", "empty", "zeros", "op",
           "autograd", "profiler", "custom", "from_dlpack", "Symbol", "save",
           "load", "load_checkpoint", "save_checkpoint", "Predictor",
           "PredictorPool",
           "RecordIO", "pack_image", "unpack_image", "image_decode",
           "ImageRecordIter", "DataIter", "IDXIter", "CSVIter", "LibSVMIter",
           "KVStore",
           "Scope", "scope", "keep", "detach_from_scope", "memory_stats",
           "dump_handles", "set_handle_debug", "nn", "wait_all", "version",
           "seed",
           "feature_enabled", "storage_stat", "library"]

library = _lib.lib

# mxc_storage_stat's MXC_STORAGE_* selectors.
BYTES_IN_USE, BYTES_CACHED, PEAK_IN_USE, ALLOC_COUNT, POOL_HITS = range(5)


def version():
    """The loaded library's version string ("1.0.0")."""
    return _lib.lib.mxc_version_string().decode("ascii")


def wait_all():
    """Waits for all pushed work; raises the first asynchronous failure."""
    check(_lib.lib.mxc_wait_all())


def seed(value):
    check(_lib.lib.mxc_random_seed(int(value)))


def feature_enabled(name):
    out = c_int()
    check(_lib.lib.mxc_feature_enabled(name.encode("ascii"), byref(out)))
    return bool(out.value)


def storage_stat(stat=BYTES_IN_USE, dev_type=1, dev_id=0):
    """A statistic of a device's storage allocator (CPU by default)."""
    out = c_int64()
    check(_lib.lib.mxc_storage_stat(dev_type, dev_id, stat, byref(out)))
    return out.value
