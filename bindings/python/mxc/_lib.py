"""Loading libmxc.so.1, the C signatures this package uses, and errors.

Every call goes through ctypes.CDLL, which releases the GIL for the
duration of the foreign call. That matters beyond speed: mxc may run a
DLPack producer's deleter (numpy's, torch's) on an engine worker thread,
and such deleters take the GIL; were it held while the main thread waits
on mxc, the two would deadlock.
"""

import ctypes
import os
import subprocess
from ctypes import (POINTER, c_char_p, c_int, c_int64, c_size_t, c_uint64,
                    c_void_p)

_SONAME = "libmxc.so.1"
_MAJOR = 1


class MxcError(Exception):
    """A failure reported by the C library.

    code: the MXC_ERR_* value; name: its name ("MXC_ERR_SHAPE");
    message: mxc_last_error()'s text for the failing call."""

    def __init__(self, code, message, name=None):
        self.code = code
        self.name = name or "MXC_ERR_%d" % code
        self.message = message
        super().__init__("%s: %s" % (self.name, message))


def _candidates():
    """(path, how it was found) pairs to try, in order.

    MXC_LIBRARY is an explicit choice, so when set it is the only one tried:
    silently loading another copy would hide a broken setting."""
    env = os.environ.get("MXC_LIBRARY")
    if env:
        if os.path.isdir(env):
            env = os.path.join(env, _SONAME)
        return [(env, "MXC_LIBRARY")]
    found = []
    try:
        libdir = subprocess.run(
            ["pkg-config", "--variable=libdir", "mxc"],
            capture_output=True, text=True, timeout=10, check=False,
        ).stdout.strip()
        if libdir:
            found.append((os.path.join(libdir, _SONAME),
                          "pkg-config --variable=libdir mxc"))
    except (OSError, subprocess.SubprocessError):
        pass  # no pkg-config: fall through to the loader's own search
    found.append((_SONAME, "the dynamic loader's search path"))
    return found


def _load():
    tried = []
    for path, how in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (from %s): %s" % (path, how, e))
            continue
        version = lib.mxc_version()
        if version // 10000 != _MAJOR:
            tried.append("%s (from %s): version %d, expected major %d"
                         % (path, how, version, _MAJOR))
            continue
        return lib
    raise ImportError(
        "mxc: cannot load %s; tried:\n  %s\nSet MXC_LIBRARY to the library "
        "file (or its directory), or install mxc so that pkg-config finds "
        "it." % (_SONAME, "\n  ".join(tried)))


lib = _load()

# Handles are opaque pointer-sized values (slot + generation, never
# dereferenced here); ctypes hands them back as int, or None for NULL.
handle = c_void_p
_P = POINTER

# name: (restype, argtypes). Only what the package uses is declared, so a
# signature mismatch can only come from this table.
_SIGNATURES = {
    "mxc_version": (c_int, []),
    "mxc_version_string": (c_char_p, []),
    "mxc_last_error": (c_char_p, []),
    "mxc_last_error_code": (c_int, []),
    "mxc_error_name": (c_char_p, [c_int]),
    "mxc_feature_enabled": (c_int, [c_char_p, _P(c_int)]),
    "mxc_random_seed": (c_int, [c_uint64]),
    "mxc_wait_all": (c_int, []),
    "mxc_ndarray_create": (c_int, [_P(c_int64), c_int, c_int, c_int, c_int,
                                   c_int, _P(handle)]),
    "mxc_ndarray_free": (None, [handle]),
    "mxc_ndarray_shape": (c_int, [handle, _P(c_int), _P(_P(c_int64))]),
    "mxc_ndarray_size": (c_int, [handle, _P(c_int64)]),
    "mxc_ndarray_dtype": (c_int, [handle, _P(c_int)]),
    "mxc_ndarray_stype": (c_int, [handle, _P(c_int)]),
    "mxc_ndarray_device": (c_int, [handle, _P(c_int), _P(c_int)]),
    "mxc_ndarray_copy_from_host": (c_int, [handle, c_void_p, c_size_t]),
    "mxc_ndarray_copy_to_host": (c_int, [handle, c_void_p, c_size_t]),
    "mxc_ndarray_copy": (c_int, [handle, handle]),
    "mxc_device_count": (c_int, [c_int, _P(c_int)]),
    "mxc_device_check": (c_int, [c_int, c_int]),
    "mxc_ndarray_wait_to_read": (c_int, [handle]),
    "mxc_ndarray_cast_storage": (c_int, [handle, c_int, _P(handle)]),
    "mxc_ndarray_to_dlpack": (c_int, [handle, _P(c_void_p)]),
    "mxc_ndarray_from_dlpack": (c_int, [c_void_p, _P(handle)]),
    "mxc_storage_stat": (c_int, [c_int, c_int, c_int, _P(c_int64)]),
    "mxc_op_find": (c_int, [c_char_p, _P(c_void_p)]),
    "mxc_op_name": (c_int, [c_void_p, _P(c_char_p)]),
    "mxc_op_doc": (c_int, [c_void_p, _P(c_char_p)]),
    "mxc_op_count": (c_int, [_P(c_int)]),
    "mxc_op_at": (c_int, [c_int, _P(c_void_p)]),
    "mxc_op_num_outputs": (c_int, [c_void_p, _P(c_char_p), _P(c_char_p),
                                   c_int, _P(c_int)]),
    "mxc_op_invoke": (c_int, [c_void_p, _P(c_char_p), _P(c_char_p), c_int,
                              _P(handle), c_int, _P(handle), c_int,
                              _P(c_int)]),
    "mxc_set_training": (c_int, [c_int, _P(c_int)]),
    "mxc_autograd_set_recording": (c_int, [c_int, _P(c_int)]),
    "mxc_autograd_is_recording": (c_int, [_P(c_int)]),
    "mxc_autograd_mark_variables": (c_int, [c_int, _P(handle), _P(c_int),
                                            _P(handle)]),
    "mxc_autograd_backward": (c_int, [c_int, _P(handle), _P(handle), c_int]),
    "mxc_autograd_get_grad": (c_int, [handle, _P(handle)]),
    "mxc_ndarray_detach": (c_int, [handle, _P(handle)]),
    "mxc_ndarray_save_format": (c_int, [c_char_p, _P(handle), _P(c_char_p),
                                        c_int, c_int]),
    "mxc_ndarray_load": (c_int, [c_char_p, _P(handle)]),
    "mxc_ndarray_list_free": (None, [handle]),
    "mxc_ndarray_list_size": (c_int, [handle, _P(c_int)]),
    "mxc_ndarray_list_get": (c_int, [handle, c_int, _P(handle)]),
    "mxc_ndarray_list_name": (c_int, [handle, c_int, _P(c_char_p)]),
    "mxc_recordio_open": (c_int, [c_char_p, c_char_p, c_char_p, _P(handle)]),
    "mxc_recordio_free": (None, [handle]),
    "mxc_recordio_read": (c_int, [handle, _P(c_int64)]),
    "mxc_recordio_read_key": (c_int, [handle, c_int64, _P(c_int64)]),
    "mxc_recordio_copy": (c_int, [handle, c_void_p, c_int64]),
    "mxc_recordio_write": (c_int, [handle, c_char_p, c_int64]),
    "mxc_recordio_write_key": (c_int, [handle, c_int64, c_char_p, c_int64]),
    "mxc_recordio_flush": (c_int, [handle]),
    "mxc_recordio_num_keys": (c_int, [handle, _P(c_int64)]),
    "mxc_recordio_key": (c_int, [handle, c_int64, _P(c_int64)]),
    "mxc_recordio_tell": (c_int, [handle, _P(c_int64)]),
    "mxc_recordio_seek": (c_int, [handle, c_int64]),
    "mxc_recordio_pack_image": (c_int, [c_void_p, c_int, c_int64, c_int64,
                                        c_char_p, c_int64, c_void_p, c_int64,
                                        _P(c_int64)]),
    "mxc_recordio_unpack_image": (c_int, [c_char_p, c_int64, c_void_p, c_int,
                                          _P(c_int), _P(c_int64), _P(c_int64),
                                          _P(c_int64)]),
    "mxc_image_decode": (c_int, [c_char_p, c_int64, c_int, c_int,
                                 _P(handle)]),
    "mxc_data_iter_image_record_create": (c_int, [c_int, _P(c_char_p),
                                                  _P(c_char_p), _P(handle)]),
    "mxc_data_iter_idx_create": (c_int, [c_char_p, c_char_p, c_int64, c_int,
                                         c_uint64, c_int, c_int, c_int,
                                         _P(handle)]),
    "mxc_data_iter_csv_create": (c_int, [c_char_p, c_char_p, c_int64, c_int64,
                                         c_int, c_int64, c_int, _P(handle)]),
    "mxc_data_iter_libsvm_create": (c_int, [c_char_p, c_int64, c_int64,
                                            c_int, c_int, _P(handle)]),
    "mxc_data_iter_free": (None, [handle]),
    "mxc_data_iter_next": (c_int, [handle, _P(c_int)]),
    "mxc_data_iter_data": (c_int, [handle, _P(handle)]),
    "mxc_data_iter_label": (c_int, [handle, _P(handle)]),
    "mxc_data_iter_pad": (c_int, [handle, _P(c_int64)]),
    "mxc_data_iter_reset": (c_int, [handle]),
    "mxc_data_iter_num_examples": (c_int, [handle, _P(c_int64)]),
    "mxc_data_iter_set_parts": (c_int, [handle, c_int64, c_int64]),
    "mxc_symbol_free": (None, [handle]),
    "mxc_symbol_to_json": (c_int, [handle, _P(c_void_p)]),
    "mxc_symbol_from_json": (c_int, [c_char_p, _P(handle)]),
    "mxc_string_free": (None, [c_void_p]),
    "mxc_checkpoint_load": (c_int, [c_char_p, c_int, _P(handle), _P(handle),
                                    _P(handle)]),
    "mxc_checkpoint_save": (c_int, [c_char_p, c_int, handle, c_int,
                                    _P(c_char_p), _P(handle), c_int,
                                    _P(c_char_p), _P(handle)]),
    "mxc_predictor_create": (c_int, [c_char_p, c_void_p, c_size_t, c_int,
                                     c_int, c_int, _P(c_char_p), _P(c_int),
                                     _P(c_int64), _P(c_int), c_int,
                                     _P(c_char_p), _P(handle)]),
    "mxc_predictor_create_from_checkpoint": (
        c_int, [c_char_p, c_int, c_int, c_int, c_int, _P(c_char_p),
                _P(c_int), _P(c_int64), _P(c_int), c_int, _P(c_char_p),
                _P(handle)]),
    "mxc_predictor_clone": (c_int, [handle, _P(handle)]),
    "mxc_predictor_reshape": (c_int, [handle, c_int, _P(c_char_p), _P(c_int),
                                      _P(c_int64), _P(handle)]),
    "mxc_predictor_free": (None, [handle]),
    "mxc_predictor_set_input": (c_int, [handle, c_char_p, c_void_p,
                                        c_size_t]),
    "mxc_predictor_set_input_array": (c_int, [handle, c_char_p, handle]),
    "mxc_predictor_forward": (c_int, [handle]),
    "mxc_predictor_num_outputs": (c_int, [handle, _P(c_int)]),
    "mxc_predictor_output_shape": (c_int, [handle, c_int, _P(c_int),
                                           _P(c_int64), _P(c_int)]),
    "mxc_predictor_get_output": (c_int, [handle, c_int, c_void_p, c_size_t]),
    "mxc_profiler_set_config": (c_int, [c_char_p, c_char_p]),
    "mxc_profiler_set_state": (c_int, [c_int]),
    "mxc_profiler_get_state": (c_int, [_P(c_int)]),
    "mxc_profiler_dump": (c_int, [c_int]),
    "mxc_profiler_dumps": (c_int, [_P(c_void_p)]),
    "mxc_profiler_stats": (c_int, [c_int, c_int, _P(c_void_p)]),
    "mxc_profiler_range_begin": (c_int, [c_char_p]),
    "mxc_profiler_range_end": (c_int, []),
    "mxc_profiler_mark": (c_int, [c_char_p]),
    "mxc_profiler_counter": (c_int, [c_char_p, c_int64]),
    "mxc_scope_begin": (c_int, [_P(handle)]),
    "mxc_scope_end": (c_int, [handle]),
    "mxc_scope_keep": (c_int, [handle]),
    "mxc_scope_detach": (c_int, [handle]),
    "mxc_scope_stats": (c_int, [handle, _P(c_int64), _P(c_int64)]),
    "mxc_handle_dump": (c_int, [handle, _P(c_void_p)]),
    "mxc_handle_debug_set": (c_int, [c_int]),
    "mxc_handle_debug_enabled": (c_int, [_P(c_int)]),
    "mxc_handle_tag_set": (c_int, [c_char_p]),
    "mxc_handle_tag": (c_int, [handle, c_char_p]),
    "mxc_block_create": (c_int, [c_char_p, c_char_p, _P(c_char_p),
                                 _P(c_char_p), c_int, _P(handle)]),
    "mxc_block_create_user": (c_int, [c_char_p, c_void_p, c_void_p, c_void_p,
                                      _P(handle)]),
    "mxc_block_free": (None, [handle]),
    "mxc_block_add": (c_int, [handle, handle]),
    "mxc_block_name": (c_int, [handle, _P(c_char_p)]),
    "mxc_block_initialize": (c_int, [handle, c_char_p, _P(c_char_p),
                                     _P(c_char_p), c_int, c_int]),
    "mxc_block_forward": (c_int, [handle, c_int, _P(handle), _P(handle)]),
    "mxc_block_num_params": (c_int, [handle, _P(c_int)]),
    "mxc_block_param_name": (c_int, [handle, c_int, _P(c_char_p)]),
    "mxc_block_param": (c_int, [handle, c_int, _P(handle)]),
    "mxc_block_param_grad": (c_int, [handle, c_int, _P(handle)]),
    "mxc_block_save_params": (c_int, [handle, c_char_p]),
    "mxc_block_load_params": (c_int, [handle, c_char_p]),
    "mxc_block_hybridize": (c_int, [handle, c_int]),
    "mxc_block_export": (c_int, [handle, c_char_p, c_int]),
    "mxc_optimizer_create": (c_int, [handle, c_char_p, _P(c_char_p),
                                     _P(c_char_p), c_int, _P(handle)]),
    "mxc_optimizer_free": (None, [handle]),
    "mxc_optimizer_step": (c_int, [handle, c_int64]),
    "mxc_optimizer_set_lr": (c_int, [handle, ctypes.c_double]),
    "mxc_optimizer_get_lr": (c_int, [handle, _P(ctypes.c_double)]),
    "mxc_fit_create": (c_int, [handle, handle, handle, _P(c_char_p),
                               _P(c_char_p), c_int, _P(handle)]),
    "mxc_fit_free": (None, [handle]),
    "mxc_fit_add_listener": (c_int, [handle, c_void_p, c_void_p, c_void_p]),
    "mxc_fit_run": (c_int, [handle, handle, handle]),
    "mxc_fit_value": (c_int, [handle, c_char_p, _P(ctypes.c_double)]),
    "mxc_fit_stop": (c_int, [handle]),
    "mxc_fit_set_kvstore": (c_int, [handle, handle]),
    "mxc_fit_save_checkpoint": (c_int, [handle, c_char_p]),
    "mxc_fit_load_checkpoint": (c_int, [handle, c_char_p]),
}

for _name, (_res, _args) in _SIGNATURES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


def last_error():
    """The calling thread's last mxc error message (a str)."""
    return lib.mxc_last_error().decode("utf-8", "replace")


def check(code):
    """Raises MxcError for a nonzero status, with the thread's message.

    The message is thread-local in the C library and ctypes runs the call
    on the calling thread, so reading it right after the failing call
    gives that call's message even while other threads fail too."""
    if code != 0:
        name = lib.mxc_error_name(code).decode("ascii", "replace")
        raise MxcError(code, last_error(), name)


def strings(values):
    """A ctypes char* array of UTF-8 strings (None when empty)."""
    if not values:
        return None
    arr = (c_char_p * len(values))()
    arr[:] = [v.encode("utf-8") for v in values]
    return arr


def take_string(ptr):
    """The str of a `char *` the library returned (c_void_p), freed."""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8")
    finally:
        lib.mxc_string_free(ptr)
