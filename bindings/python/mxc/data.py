# Copyright 2026 The mxc Authors. Licensed under the Apache License 2.0.
"""The IDX, CSV and LibSVM iterators (mxc_data_iter_*_create); every
iterator shares mxc.DataIter's iteration, num_examples and set_parts."""

from ctypes import byref

from . import memory as _scope
from ._lib import check, handle, lib
from .recordio import DataIter

_LAST_BATCH = {"pad": 0, "discard": 1}  # MXC_LAST_BATCH_*


def _last(last_batch):
    if last_batch not in _LAST_BATCH:
        raise ValueError("last_batch must be 'pad' or 'discard', not %r"
                         % (last_batch,))
    return _LAST_BATCH[last_batch]


def _path(p):
    return None if p is None else str(p).encode()


class IDXIter(DataIter):
    """MNIST-style IDX files (images, labels), as mxc_data_iter_idx_create:
    batches of (batch_size, 1, rows, cols) float32 (flat: rows * cols)."""

    __slots__ = ()

    def __init__(self, images, labels, batch_size, shuffle=False, seed=0,
                 flat=False, scale=True, last_batch="pad"):
        self._handle = None
        h = handle()
        check(lib.mxc_data_iter_idx_create(
            _path(images), _path(labels), int(batch_size), int(bool(shuffle)),
            int(seed), int(bool(flat)), int(bool(scale)), _last(last_batch),
            byref(h)))
        self._handle = h.value
        self._scope = _scope.owner()


class CSVIter(DataIter):
    """Rows of float32 numbers, as mxc_data_iter_csv_create: the label is
    column label_col of the data file (-1: none), or the rows of
    label_path."""

    __slots__ = ()

    def __init__(self, data, num_cols, batch_size, labels=None, header=False,
                 label_col=-1, last_batch="pad"):
        self._handle = None
        h = handle()
        check(lib.mxc_data_iter_csv_create(
            _path(data), _path(labels), int(num_cols), int(batch_size),
            int(bool(header)), int(label_col), _last(last_batch), byref(h)))
        self._handle = h.value
        self._scope = _scope.owner()


class LibSVMIter(DataIter):
    """LibSVM text (label index:value ...), as
    mxc_data_iter_libsvm_create: CSR data batches of num_features
    columns."""

    __slots__ = ()

    def __init__(self, path, num_features, batch_size, one_based=False,
                 last_batch="pad"):
        self._handle = None
        h = handle()
        check(lib.mxc_data_iter_libsvm_create(
            _path(path), int(num_features), int(batch_size),
            int(bool(one_based)), _last(last_batch), byref(h)))
        self._handle = h.value
        self._scope = _scope.owner()
