"""RecordIO files, image decoding and the image record iterator.

RecordIO is MXNet's record file format (.rec, with an optional .idx
index), as im2rec writes it (docs/data.md):

    with mxc.RecordIO("train.rec", "w", idx_path="train.idx") as w:
        w.write(mxc.pack_image(b"...jpeg bytes...", label=3.0, id=0), key=0)
    with mxc.RecordIO("train.rec", "r", idx_path="train.idx") as r:
        for rec in r:                       # bytes, in file order
            labels, id, id2, image = mxc.unpack_image(rec)
        rec = r.read_key(0)

    it = mxc.ImageRecordIter(path_imgrec="train.rec", data_shape=(3, 32, 32),
                             batch_size=64, shuffle=True, rand_crop=True)
    for data, label, pad in it:              # NDArrays, one epoch
        ...

Each object owns one handle; close() (or the with block, or collection)
frees it. One object is used by one thread at a time.
"""

from ctypes import (byref, c_float, c_int, c_int64, c_void_p,
                    create_string_buffer, string_at)

from . import memory as _scope
from ._lib import check, handle, lib, strings
from .ndarray import NDArray

_DTYPES = {"uint8": 3, "float32": 0}  # MXC_DTYPE_UINT8, MXC_DTYPE_FLOAT32


class _Handle:
    __slots__ = ("_handle", "_scope")
    _free = None

    def close(self):
        h, self._handle = self._handle, None
        if h is not None and not _scope.released(self):
            type(self)._free(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self.close()

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("mxc.%s: closed" % type(self).__name__)
        return self._handle


class RecordIO(_Handle):
    """A .rec file opened for reading ("r") or writing ("w"), with its
    .idx index when idx_path is given."""

    __slots__ = ()
    _free = lib.mxc_recordio_free

    def __init__(self, path, mode="r", idx_path=None):
        self._handle = None
        h = handle()
        check(lib.mxc_recordio_open(
            path.encode("utf-8"),
            idx_path.encode("utf-8") if idx_path else None,
            mode.encode("ascii"), byref(h)))
        self._handle = h.value
        self._scope = _scope.owner()

    def _current(self, size):
        if size < 0:
            return None
        buf = create_string_buffer(max(size, 1))
        check(lib.mxc_recordio_copy(self.handle, buf, size))
        return buf.raw[:size]

    def read(self):
        """The next record as bytes, or None at the end of the file."""
        n = c_int64()
        check(lib.mxc_recordio_read(self.handle, byref(n)))
        return self._current(n.value)

    def read_key(self, key):
        """The record the index lists under key (KeyError-like MxcError
        with code MXC_ERR_NOT_FOUND for an unknown key)."""
        n = c_int64()
        check(lib.mxc_recordio_read_key(self.handle, int(key), byref(n)))
        return self._current(n.value)

    def __iter__(self):
        while True:
            rec = self.read()
            if rec is None:
                return
            yield rec

    def write(self, data, key=None):
        """Appends one record (bytes); with key, also its index line."""
        data = bytes(data)
        if key is None:
            check(lib.mxc_recordio_write(self.handle, data, len(data)))
        else:
            check(lib.mxc_recordio_write_key(self.handle, int(key), data,
                                             len(data)))

    def flush(self):
        check(lib.mxc_recordio_flush(self.handle))

    def keys(self):
        n, k = c_int64(), c_int64()
        check(lib.mxc_recordio_num_keys(self.handle, byref(n)))
        out = []
        for i in range(n.value):
            check(lib.mxc_recordio_key(self.handle, i, byref(k)))
            out.append(k.value)
        return out

    def tell(self):
        pos = c_int64()
        check(lib.mxc_recordio_tell(self.handle, byref(pos)))
        return pos.value

    def seek(self, pos):
        check(lib.mxc_recordio_seek(self.handle, int(pos)))

    def close(self):
        if getattr(self, "_handle", None) is not None:
            try:
                check(lib.mxc_recordio_flush(self._handle))
            finally:
                _Handle.close(self)


def pack_image(image, label=0.0, id=0, id2=0):
    """An image record (im2rec's layout): header, label(s), image bytes.
    label: a number (stored in the header) or a sequence of numbers."""
    labels = list(label) if hasattr(label, "__len__") else [label]
    arr = (c_float * max(len(labels), 1))(*labels)
    image = bytes(image)
    need = c_int64()
    lib.mxc_recordio_pack_image(arr, len(labels), int(id), int(id2), image,
                                len(image), None, 0, byref(need))
    out = create_string_buffer(max(need.value, 1))
    check(lib.mxc_recordio_pack_image(arr, len(labels), int(id), int(id2),
                                      image, len(image), out, need.value,
                                      byref(need)))
    return out.raw[:need.value]


def unpack_image(record):
    """(labels list, id, id2, image bytes) of an image record."""
    record = bytes(record)
    n, i1, i2, off = c_int(), c_int64(), c_int64(), c_int64()
    check(lib.mxc_recordio_unpack_image(record, len(record), None, 0,
                                        byref(n), byref(i1), byref(i2),
                                        byref(off)))
    labels = (c_float * max(n.value, 1))()
    check(lib.mxc_recordio_unpack_image(record, len(record), labels, n.value,
                                        byref(n), byref(i1), byref(i2),
                                        byref(off)))
    return (list(labels)[:n.value], i1.value & (2**64 - 1),
            i2.value & (2**64 - 1), record[off.value:])


def image_decode(data, channels=3, dtype="uint8"):
    """A JPEG or PNG image (bytes) as an NDArray (channels, height, width)."""
    data = bytes(data)
    h = handle()
    check(lib.mxc_image_decode(data, len(data), int(channels),
                               _DTYPES[dtype], byref(h)))
    return NDArray(h.value)


def _param(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (tuple, list)):
        return "(%s)" % ",".join(str(x) for x in v)
    return str(v)


class DataIter(_Handle):
    """A data iterator of any kind (mxc_data_iter): iterating gives
    (data, label, pad) for one epoch, then resets. Subclasses create it."""

    __slots__ = ()
    _free = lib.mxc_data_iter_free

    def num_examples(self):
        n = c_int64()
        check(lib.mxc_data_iter_num_examples(self.handle, byref(n)))
        return n.value

    def set_parts(self, num_parts, part_index):
        """From now on reads only part part_index of num_parts of the data
        (mxc_data_iter_set_parts: IDX and image records take contiguous
        ranges, CSV and LibSVM every num_parts-th row); the parts together
        hold the data set once. Call it before iterating or after a whole
        epoch (iterating resets at the end); MxcError otherwise and for
        p < 1 or k outside [0, p). Returns self."""
        check(lib.mxc_data_iter_set_parts(self.handle, int(num_parts),
                                          int(part_index)))
        return self

    def __iter__(self):
        has = c_int()
        while True:
            check(lib.mxc_data_iter_next(self.handle, byref(has)))
            if not has.value:
                break
            d, l, pad = handle(), handle(), c_int64()
            check(lib.mxc_data_iter_data(self.handle, byref(d)))
            data = NDArray(d.value)
            check(lib.mxc_data_iter_label(self.handle, byref(l)))
            check(lib.mxc_data_iter_pad(self.handle, byref(pad)))
            yield data, NDArray(l.value), pad.value
        check(lib.mxc_data_iter_reset(self.handle))


class ImageRecordIter(DataIter):
    """MXNet's ImageRecordIter over a .rec of image records; keyword
    arguments are its parameters (see mxc_data_iter_image_record_create).
    num_parts/part_index keywords or set_parts() shard it."""

    __slots__ = ()

    def __init__(self, **params):
        self._handle = None
        keys = list(params)
        vals = [_param(params[k]) for k in keys]
        h = handle()
        check(lib.mxc_data_iter_image_record_create(
            len(keys), strings(keys), strings(vals), byref(h)))
        self._handle = h.value
        self._scope = _scope.owner()
