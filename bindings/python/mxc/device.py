"""Devices: mxc.cpu(), mxc.gpu(n), mxc.num_gpus().

A Device is a (device_type, device_id) named tuple, so it compares equal
to the plain tuples NDArray.device returned before it existed
((1, 0) == mxc.cpu()). Creating one checks nothing: the check happens
where an array is created or copied on it, and a GPU that cannot be used
raises MxcError (MXC_ERR_UNSUPPORTED) with mxc's reason (plug-in missing,
no driver, device id out of range, ...). mxc.device_check(dev) raises the
same error up front.
"""

from collections import namedtuple
from ctypes import byref, c_int

from ._lib import check, lib

CPU, GPU = 1, 2  # MXC_DEVICE_CPU, MXC_DEVICE_GPU
_NAMES = {CPU: "cpu", GPU: "gpu"}


class Device(namedtuple("Device", "device_type device_id")):
    """A device of mxc: Device(MXC_DEVICE_*, id). Immutable; thread-safe."""

    __slots__ = ()

    def __new__(cls, device_type, device_id=0):
        if device_type not in _NAMES:
            raise ValueError("mxc.Device: device type %r, expected 1 (cpu) "
                             "or 2 (gpu)" % (device_type,))
        if int(device_id) < 0:
            raise ValueError("mxc.Device: device id %d, expected >= 0"
                             % device_id)
        return super().__new__(cls, int(device_type), int(device_id))

    def __repr__(self):
        return "%s(%d)" % (_NAMES[self.device_type], self.device_id)

    __str__ = __repr__


def cpu(device_id=0):
    """The CPU (every id names the same host memory; 0 is the usual one)."""
    return Device(CPU, device_id)


def gpu(device_id=0):
    """GPU number device_id (not checked until used: see device_check)."""
    return Device(GPU, device_id)


def as_device(dev):
    """A Device from a Device, a (type, id) tuple or None (the CPU)."""
    if dev is None:
        return cpu()
    if isinstance(dev, Device):
        return dev
    if isinstance(dev, tuple) and len(dev) == 2:
        return Device(*dev)
    raise TypeError("mxc: device %r, expected mxc.cpu(), mxc.gpu(n) or a "
                    "(device_type, device_id) tuple" % (dev,))


def num_gpus():
    """How many GPUs this process can use: 0 without the CUDA plug-in, a
    driver or a GPU (not an error; device_check(gpu(0)) says why). The
    first call loads the plug-in. Thread-safe."""
    out = c_int()
    check(lib.mxc_device_count(GPU, byref(out)))
    return out.value


def device_check(dev):
    """Returns dev as a Device when it can be used; otherwise raises
    MxcError (MXC_ERR_UNSUPPORTED for a GPU) with mxc's reason."""
    dev = as_device(dev)
    check(lib.mxc_device_check(dev.device_type, dev.device_id))
    return dev
