"""The KVStore: parameter synchronisation, in one process ("local") or
across the processes of an MPI job ("dist_sync"; docs/kvstore.md).

    kv = mxc.KVStore("dist_sync")          # launched by mpirun -np N
    kv.init(["w", "b"], [w, b])            # every worker gets rank 0's
    kv.set_optimizer("sgd_mom_update", lr=0.1, momentum=0.9)
    kv.push(["w", "b"], [gw, gb])          # summed over the workers, then
    kv.pull(["w", "b"], [w, b])            # the update; copied back
    kv.pushpull("g", grad, grad)           # a sum in place

Keys are ints or strs (one kind per call); a value may be one NDArray or
a list (several values of one key are summed). Calls return at once:
the work runs on the engine in the order of all other work on the arrays
(read results with asnumpy, or mxc.wait_all()).

One KVStore owns one handle; close() (or the with block, or collection)
frees it, or the end of the ``with mxc.scope()`` it was made in, as for
arrays (mxc.keep moves it out). Every method may be called from any thread; with "dist_sync"
every worker must make the same calls in the same order.
"""

import itertools
import threading
from ctypes import CFUNCTYPE, byref, c_char_p, c_int, c_int64, c_void_p

from . import memory as _scope
from ._lib import MxcError, check, handle, lib, strings
from .ndarray import NDArray

# int (*)(const char *str_key, int64_t int_key, mxc_ndarray recv,
#         mxc_ndarray local, void *user_data)
_UPDATER = CFUNCTYPE(c_int, c_char_p, c_int64, c_void_p, c_void_p, c_void_p)

lib.mxc_kvstore_create.argtypes = [c_char_p, c_void_p]
lib.mxc_kvstore_create.restype = c_int
lib.mxc_kvstore_free.argtypes = [handle]
lib.mxc_kvstore_free.restype = None
lib.mxc_kvstore_type.argtypes = [handle, c_void_p]
for _n in ("rank", "num_workers"):
    getattr(lib, "mxc_kvstore_" + _n).argtypes = [handle, c_void_p]
lib.mxc_kvstore_barrier.argtypes = [handle]
lib.mxc_kvstore_init.argtypes = [handle, c_int, c_void_p, c_void_p, c_void_p]
for _n in ("push", "pull"):
    getattr(lib, "mxc_kvstore_" + _n).argtypes = [
        handle, c_int, c_void_p, c_void_p, c_void_p, c_int]
lib.mxc_kvstore_pushpull.argtypes = [handle, c_int, c_void_p, c_void_p,
                                     c_void_p, c_void_p, c_int]
lib.mxc_kvstore_set_optimizer.argtypes = [handle, c_char_p, c_void_p,
                                          c_void_p, c_int]
# void (*)(void *user_data): mxc_free_fn.
_UPDATER_FREE = CFUNCTYPE(None, c_void_p)
lib.mxc_kvstore_set_updater_ex.argtypes = [handle, _UPDATER, c_void_p,
                                           _UPDATER_FREE]
lib.mxc_set_last_error.argtypes = [c_int, c_char_p]
lib.mxc_set_last_error.restype = c_int

# user_data -> the ctypes callback of an updater a store holds. The store
# owns it (mxc_kvstore_set_updater_ex): _updater_free drops the entry, so
# the callback's code, once the updater is replaced or removed or the
# store freed and no push (in any thread, also a fit's) still calls it.
_updaters = {}
_updaters_lock = threading.Lock()
_updaters_next = itertools.count(1)


@_UPDATER_FREE
def _updater_free(user_data):
    # Any thread; calls no mxc function (mxc.h forbids it here).
    with _updaters_lock:
        _updaters.pop(user_data or 0, None)


def _updater_call(fn):
    """The C updater over fn(key, recv, local). An exception fails the
    push with its text (mxc_set_last_error: mxc puts the key before it)."""
    def call(str_key, int_key, recv, local, _ud):
        key = str_key.decode("utf-8") if str_key is not None else int_key
        try:
            fn(key, _Borrowed(recv), _Borrowed(local))
            return 0
        except MxcError as e:
            return lib.mxc_set_last_error(e.code, e.message.encode("utf-8"))
        except Exception as e:  # noqa: BLE001 -- reported as a failed push
            text = "KVStore updater raised %r" % (e,)
            # MXC_ERR_INVALID_ARGUMENT, as before the message existed.
            return lib.mxc_set_last_error(1, text.encode("utf-8", "replace"))
    return _UPDATER(call)


def _listed(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _keys(keys, n):
    """(int_keys, str_keys) ctypes arrays for n keys (one kind)."""
    keys = _listed(keys)
    if len(keys) == 1 and n > 1:
        keys = keys * n
    if len(keys) != n:
        raise ValueError("mxc.KVStore: %d keys for %d arrays" % (len(keys), n))
    if all(isinstance(k, str) for k in keys):
        return None, strings(keys)
    if all(isinstance(k, int) and not isinstance(k, bool) for k in keys):
        return (c_int64 * n)(*keys), None
    raise TypeError("mxc.KVStore: keys must be all ints or all strs")


def _handles(arrays):
    arrays = _listed(arrays)
    for a in arrays:
        if not isinstance(a, NDArray):
            raise TypeError("mxc.KVStore: values must be mxc.NDArray, got %s"
                            % type(a).__name__)
    return (c_void_p * len(arrays))(*[a.handle for a in arrays]), len(arrays)


class KVStore:
    """A store of type "local" or "dist_sync"."""

    def __init__(self, type="local"):
        self._handle = None
        h = handle()
        check(lib.mxc_kvstore_create(type.encode("ascii"), byref(h)))
        self._handle = h.value
        self._scope = _scope.owner()  # whose end frees the handle
        _scope.tag_new(h.value)

    def close(self):
        h, self._handle = self._handle, None
        if h is not None and not _scope.released(self):
            lib.mxc_kvstore_free(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self, _free=lib.mxc_kvstore_free,
                _released=_scope.released):
        h = getattr(self, "_handle", None)
        if h is not None and not _released(self):
            self._handle = None
            _free(h)

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("mxc.KVStore: closed")
        return self._handle

    @property
    def type(self):
        out = c_char_p()
        check(lib.mxc_kvstore_type(self.handle, byref(out)))
        return out.value.decode("ascii")

    @property
    def rank(self):
        out = c_int()
        check(lib.mxc_kvstore_rank(self.handle, byref(out)))
        return out.value

    @property
    def num_workers(self):
        out = c_int()
        check(lib.mxc_kvstore_num_workers(self.handle, byref(out)))
        return out.value

    def barrier(self):
        check(lib.mxc_kvstore_barrier(self.handle))

    def init(self, keys, values):
        vals, n = _handles(values)
        ik, sk = _keys(keys, n)
        check(lib.mxc_kvstore_init(self.handle, n, ik, sk, vals))

    def push(self, keys, values, priority=0):
        vals, n = _handles(values)
        ik, sk = _keys(keys, n)
        check(lib.mxc_kvstore_push(self.handle, n, ik, sk, vals, priority))

    def pull(self, keys, out, priority=0):
        outs, n = _handles(out)
        ik, sk = _keys(keys, n)
        check(lib.mxc_kvstore_pull(self.handle, n, ik, sk, outs, priority))

    def pushpull(self, keys, values, out=None, priority=0):
        vals, n = _handles(values)
        outs, m = _handles(values if out is None else out)
        if m != n:
            raise ValueError("mxc.KVStore.pushpull: %d values, %d outputs"
                             % (n, m))
        ik, sk = _keys(keys, n)
        check(lib.mxc_kvstore_pushpull(self.handle, n, ik, sk, vals, outs,
                                       priority))

    def set_optimizer(self, name, **params):
        """An update operator of the registry ("sgd_update", "adam_update",
        ...) with its parameters (lr=0.1, wd=1e-4, ...)."""
        keys = strings(list(params))
        vals = strings([str(v) for v in params.values()])
        check(lib.mxc_kvstore_set_optimizer(self.handle, name.encode("ascii"),
                                            keys, vals, len(params)))

    def set_updater(self, fn):
        """fn(key, recv, local): updates the NDArray local (the stored
        value) from recv (the sum of a push); key is the int or str. The
        arrays are borrowed for the call. None removes the updater.

        The store holds fn until it is replaced or removed or the store
        freed, and lets go of it after the last push still calling it.
        Thread-safe: may be called while other threads (or a fit training
        through the store) push; each push runs the old or the new fn.
        fn's exception fails the push (MxcError naming the key and the
        exception)."""
        h = self.handle
        if fn is None:
            check(lib.mxc_kvstore_set_updater_ex(h, _UPDATER(), None,
                                                 _UPDATER_FREE()))
            return
        cb = _updater_call(fn)
        with _updaters_lock:
            ud = next(_updaters_next)
            _updaters[ud] = cb
        # Frees ud (through _updater_free) also when it fails.
        check(lib.mxc_kvstore_set_updater_ex(h, cb, ud, _updater_free))


class _Borrowed(NDArray):
    """An NDArray over a handle the callback borrows: never freed here."""

    __slots__ = ()

    def close(self):
        self._handle = None

    def __del__(self, _free=None):
        self._handle = None
