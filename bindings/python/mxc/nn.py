"""Layers, losses, optimizers and fit() over mxc_block_* / mxc_fit_*.

    net = mxc.nn.Sequential(mxc.nn.Dense(128, activation="relu"),
                            mxc.nn.Dense(10))
    net.initialize("xavier")
    loss = mxc.nn.SoftmaxCrossEntropyLoss()
    opt = mxc.nn.Optimizer(net, "sgd_mom_update", lr=0.1, momentum=0.9)
    fit = mxc.nn.Fit(net, loss, opt, epochs=10, csv="log.csv")
    fit.add_listener(lambda event, fit: print(fit["val_accuracy"]))
    fit.run(train_iter, val_iter)

Under `mpirun -np N`, `Fit(..., kvstore="dist_sync")` trains the same
model data-parallel on N processes (docs/kvstore.md).

Blocks are called like functions; inside `with mxc.autograd.record():`
their operators are recorded, so `loss(net(x), y).backward()` then
`opt.step(batch_size)` is the loop by hand. Keyword arguments are the C
library's configuration keys (mxc.h, "Layers"); values are turned into
strings (True -> "1", tuples -> "(a,b)"). Every object holds one C handle,
freed by close() (or `with`, or the garbage collector), or, when it was
made inside `with mxc.scope():`, by the scope's end unless moved out with
mxc.keep() / mxc.detach_from_scope(), as arrays are.
"""

import ctypes
import threading
import weakref
from ctypes import byref, c_char_p, c_double, c_int

from . import _lib
from . import memory as _scope
from ._lib import check, handle, lib, strings
from .kvstore import KVStore
from .ndarray import NDArray


def _text(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (tuple, list)):
        return "(" + ",".join(str(int(x)) for x in v) + ")"
    return str(v)


def _kv(kwargs):
    items = [(k, _text(v)) for k, v in kwargs.items() if v is not None]
    keys = strings([k for k, _ in items])
    vals = strings([v for _, v in items])
    return keys, vals, len(items)


class _Handle:
    """One C handle (a block, optimizer or fit), registered like an
    array's in the thread's innermost scope when it was made: the scope's
    end frees it (using it afterwards raises MxcError INVALID_HANDLE), and
    neither close() nor the collector free it again."""

    _free = None

    def __init__(self, h):
        self._h = h
        self._scope = _scope.owner()  # whose end frees the handle
        _scope.tag_new(h)

    @property
    def handle(self):
        if self._h is None:
            raise ValueError("mxc.nn: %s is closed" % type(self).__name__)
        return self._h

    def close(self):
        h, self._h = self._h, None
        if h is not None and not _scope.released(self):
            type(self)._free(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self, _released=_scope.released):
        # Bound as a default: module globals may be gone at interpreter exit.
        h = getattr(self, "_h", None)
        if h is not None and not _released(self):
            self._h = None
            type(self)._free(h)


class Block(_Handle):
    """A block of a built-in kind ("dense", "conv2d", ...; see mxc.h)."""

    _free = staticmethod(lib.mxc_block_free)

    def __init__(self, kind, name=None, **config):
        keys, vals, n = _kv(config)
        h = handle()
        check(lib.mxc_block_create(kind.encode(), name.encode() if name else None,
                                   keys, vals, n, byref(h)))
        super().__init__(h.value)
        self._children = []

    @property
    def name(self):
        s = c_char_p()
        check(lib.mxc_block_name(self.handle, byref(s)))
        return s.value.decode()

    def add(self, *blocks):
        for b in blocks:
            check(lib.mxc_block_add(self.handle, b.handle))
            self._children.append(b)
        return self

    def initialize(self, method="uniform", force=False, **params):
        keys, vals, n = _kv(params)
        check(lib.mxc_block_initialize(self.handle, method.encode(), keys,
                                       vals, n, int(force)))
        return self

    def __call__(self, *inputs):
        arr = (handle * len(inputs))(*[x.handle for x in inputs])
        out = handle()
        check(lib.mxc_block_forward(self.handle, len(inputs), arr, byref(out)))
        return NDArray(out.value)

    def params(self):
        """{name: NDArray} of every parameter (made by the first call)."""
        n = c_int()
        check(lib.mxc_block_num_params(self.handle, byref(n)))
        out = {}
        for i in range(n.value):
            s, h = c_char_p(), handle()
            check(lib.mxc_block_param_name(self.handle, i, byref(s)))
            check(lib.mxc_block_param(self.handle, i, byref(h)))
            out[s.value.decode()] = NDArray(h.value)
        return out

    def grad(self, index):
        h = handle()
        check(lib.mxc_block_param_grad(self.handle, index, byref(h)))
        return NDArray(h.value)

    def hybridize(self, active=True):
        check(lib.mxc_block_hybridize(self.handle, int(active)))
        return self

    def export(self, prefix, epoch=0):
        check(lib.mxc_block_export(self.handle, prefix.encode(), int(epoch)))

    def save_parameters(self, path):
        check(lib.mxc_block_save_params(self.handle, path.encode()))

    def load_parameters(self, path):
        check(lib.mxc_block_load_params(self.handle, path.encode()))


# ---- blocks whose forward pass is Python (mxc_block_create_user) --------

_USER_FORWARD = ctypes.CFUNCTYPE(c_int, ctypes.c_void_p, ctypes.c_void_p, c_int,
                                 ctypes.POINTER(ctypes.c_void_p),
                                 ctypes.POINTER(ctypes.c_void_p))
_USER_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# user_data -> weak reference to the UserBlock: the C block may outlive
# the Python object (a container holds it), and a strong reference here
# would keep both alive for ever. The C side's free function drops the
# entry.
_user_blocks = {}
_user_lock = threading.Lock()
_user_next = [1]
_MXC_ERR_OPERATOR = 11


class _Borrowed(NDArray):
    """An input of a user block's forward pass: borrowed for the call,
    never freed by Python."""

    __slots__ = ()

    def __init__(self, h):  # pylint: disable=super-init-not-called
        self._handle = h
        self._scope = None

    def close(self):
        self._handle = None

    def __del__(self):
        pass


def _user_call(blk, n_in, ins, out):
    y = blk.forward(*[_Borrowed(ins[i]) for i in range(n_in)])
    if not isinstance(y, NDArray) or isinstance(y, _Borrowed):
        raise TypeError("%s.forward must return a new mxc.NDArray (not one "
                        "of its inputs: return x.copy() for that), got %s"
                        % (type(blk).__name__, type(y).__name__))
    out[0] = y.handle
    y._handle = None  # ownership passes to mxc (mxc.h, mxc_block_forward_fn)


@_USER_FORWARD
def _user_forward(user_data, _self, n_in, ins, out):
    ref = _user_blocks.get(user_data or 0)
    blk = ref() if ref is not None else None
    if blk is None:
        return 2  # MXC_ERR_INVALID_HANDLE: the Python block is gone
    try:
        _user_call(blk, n_in, ins, out)
        return 0
    except _lib.MxcError as e:
        blk._error = e
        return e.code
    except Exception as e:  # pylint: disable=broad-except
        blk._error = e  # re-raised by UserBlock.__call__
        return _MXC_ERR_OPERATOR


@_USER_FREE
def _user_free(user_data):
    with _user_lock:
        _user_blocks.pop(user_data or 0, None)


class UserBlock(Block):
    """A block whose forward pass is written in Python, Gluon's
    HybridBlock in spirit: subclass it, add children with add() (their
    parameters are this block's), and define forward(self, *inputs)
    returning a new NDArray made from the children and operators. It can
    be hybridized (forward then runs once per trace, with autograd
    recording) and exported like the built-in blocks.

        class Residual(mxc.nn.UserBlock):
            def __init__(self):
                super().__init__()
                self.dense = mxc.nn.Dense(8)
                self.add(self.dense)
            def forward(self, x):
                return self.dense(x) + x

    An exception raised by forward is raised again by the call that ran
    it (net(x)); inside fit(), which runs forward from C, it fails the
    fit with MXC_ERR_OPERATOR."""

    def __init__(self, name=None):  # pylint: disable=super-init-not-called
        with _user_lock:
            key = _user_next[0]
            _user_next[0] += 1
            _user_blocks[key] = weakref.ref(self)
        self._error = None
        h = handle()
        check(lib.mxc_block_create_user(
            name.encode() if name else None,
            ctypes.cast(_user_forward, ctypes.c_void_p), ctypes.c_void_p(key),
            ctypes.cast(_user_free, ctypes.c_void_p), byref(h)))
        _Handle.__init__(self, h.value)
        self._children = []

    def forward(self, *inputs):
        raise NotImplementedError("subclasses of mxc.nn.UserBlock define "
                                  "forward(self, *inputs)")

    def __call__(self, *inputs):
        self._error = None
        try:
            return super().__call__(*inputs)
        except _lib.MxcError:
            err, self._error = self._error, None
            if err is not None:
                raise err from None
            raise


def Sequential(*blocks, name=None):
    return Block("sequential", name).add(*blocks)


def Dense(units, activation=None, name=None, **kw):
    return Block("dense", name, units=units, activation=activation, **kw)


def Conv2D(channels, kernel_size, activation=None, name=None, **kw):
    return Block("conv2d", name, channels=channels, kernel_size=kernel_size,
                 activation=activation, **kw)


def Conv1D(channels, kernel_size, activation=None, name=None, **kw):
    """Input (batch, channels, width); weight (channels, in, kernel_size)."""
    return Block("conv1d", name, channels=channels, kernel_size=kernel_size,
                 activation=activation, **kw)


def MaxPool2D(pool_size=2, name=None, **kw):
    return Block("maxpool2d", name, pool_size=pool_size, **kw)


def AvgPool2D(pool_size=2, name=None, **kw):
    return Block("avgpool2d", name, pool_size=pool_size, **kw)


def Flatten(name=None):
    return Block("flatten", name)


def Activation(activation, name=None):
    return Block("activation", name, activation=activation)


def Dropout(rate, name=None):
    return Block("dropout", name, rate=rate)


def BatchNorm(name=None, **kw):
    return Block("batchnorm", name, **kw)


def LayerNorm(name=None, **kw):
    """Normalizes over axis (-1); parameters gamma, beta."""
    return Block("layernorm", name, **kw)


def Embedding(input_dim, output_dim, name=None, **kw):
    """Rows of a (input_dim, output_dim) weight picked by integer index."""
    return Block("embedding", name, input_dim=input_dim,
                 output_dim=output_dim, **kw)


def LSTM(hidden_size, num_layers=1, layout="TNC", name=None, **kw):
    """Gluon's rnn.LSTM: input (T, N, C) or (N, T, C) (layout "NTC"),
    output (.., D*hidden_size) from zero begin states; further keys
    bidirectional, dropout, input_size and the i2h/h2h weight and bias
    initializers. Parameters "<name>_l0_i2h_weight", ... (mxc.h)."""
    return Block("lstm", name, hidden_size=hidden_size, num_layers=num_layers,
                 layout=layout, **kw)


def GRU(hidden_size, num_layers=1, layout="TNC", name=None, **kw):
    """Gluon's rnn.GRU; configured as LSTM."""
    return Block("gru", name, hidden_size=hidden_size, num_layers=num_layers,
                 layout=layout, **kw)


def SoftmaxCrossEntropyLoss(name=None, **kw):
    return Block("softmax_cross_entropy_loss", name, **kw)


def L2Loss(name=None, **kw):
    return Block("l2_loss", name, **kw)


def L1Loss(name=None, **kw):
    """|prediction - label|, the mean per example."""
    return Block("l1_loss", name, **kw)


class Optimizer(_Handle):
    """The registry's update operator update_op applied to net's parameters
    (keyword arguments: the operator's parameters, lr included)."""

    _free = staticmethod(lib.mxc_optimizer_free)

    def __init__(self, net, update_op="sgd_update", **params):
        keys, vals, n = _kv(params)
        h = handle()
        check(lib.mxc_optimizer_create(net.handle, update_op.encode(), keys,
                                       vals, n, byref(h)))
        super().__init__(h.value)
        self.net = net

    def step(self, batch_size):
        check(lib.mxc_optimizer_step(self.handle, int(batch_size)))

    @property
    def lr(self):
        v = c_double()
        check(lib.mxc_optimizer_get_lr(self.handle, byref(v)))
        return v.value

    @lr.setter
    def lr(self, value):
        check(lib.mxc_optimizer_set_lr(self.handle, float(value)))


BATCH_END, EPOCH_END, TRAIN_END = 1, 2, 3

_LISTENER = ctypes.CFUNCTYPE(c_int, ctypes.c_void_p, c_int, ctypes.c_void_p)


class Fit(_Handle):
    """fit(): keyword arguments are the keys of mxc_fit_create (epochs,
    lr_scheduler, csv, tensorboard, checkpoint_prefix, resume,
    shard_by_rank, ...). kvstore: an mxc.KVStore, or its type ("local",
    "dist_sync"), to train data-parallel (see set_kvstore)."""

    _free = staticmethod(lib.mxc_fit_free)

    def __init__(self, net, loss, optimizer, kvstore=None, **config):
        keys, vals, n = _kv(config)
        h = handle()
        check(lib.mxc_fit_create(net.handle, loss.handle, optimizer.handle,
                                 keys, vals, n, byref(h)))
        super().__init__(h.value)
        self._keep = [net, loss, optimizer]
        self._callbacks = []
        self._kvstore = None
        if kvstore is not None:
            self.set_kvstore(kvstore)

    def set_kvstore(self, kvstore):
        """Trains through kvstore (mxc_fit_set_kvstore): under mpirun with
        a "dist_sync" store every process trains on its part of the
        training data, gradients are summed over the processes and every
        process keeps the same parameters; files and progress come from
        rank 0. A str makes a new store of that type; None trains alone."""
        if isinstance(kvstore, str):
            kvstore = KVStore(kvstore)
        check(lib.mxc_fit_set_kvstore(
            self.handle, kvstore.handle if kvstore is not None else None))
        self._kvstore = kvstore

    def add_listener(self, fn):
        """fn(event, view) after each event; view[name] reads a value
        ("epoch", "train_loss", "val_accuracy", ...), view.stop() ends the
        run. An exception in fn ends the run and is raised by run()."""
        owner = self

        def call(_user, event, fit_handle):
            try:
                fn(event, _View(fit_handle))
                return 0
            except BaseException as e:  # noqa: BLE001 (re-raised by run)
                owner._error = e
                return 1  # MXC_ERR_... : any nonzero stops the run

        cb = _LISTENER(call)
        self._callbacks.append(cb)
        check(lib.mxc_fit_add_listener(self.handle, ctypes.cast(cb, ctypes.c_void_p),
                                       None, None))

    def run(self, train, val=None):
        self._error = None
        rc = lib.mxc_fit_run(self.handle, train.handle,
                             val.handle if val is not None else None)
        if self._error is not None:
            raise self._error
        check(rc)

    def __getitem__(self, name):
        return _View(self.handle)[name]

    def save_checkpoint(self, path):
        check(lib.mxc_fit_save_checkpoint(self.handle, path.encode()))

    def load_checkpoint(self, path):
        check(lib.mxc_fit_load_checkpoint(self.handle, path.encode()))


class _View:
    """A fit as a listener sees it: values by name, stop()."""

    def __init__(self, h):
        self._h = h

    def __getitem__(self, name):
        v = c_double()
        check(lib.mxc_fit_value(self._h, name.encode(), byref(v)))
        return v.value

    def stop(self):
        check(lib.mxc_fit_stop(self._h))


__all__ = ["Block", "UserBlock", "Sequential", "Dense", "Conv2D", "MaxPool2D", "Flatten",
           "Activation", "Dropout", "BatchNorm", "SoftmaxCrossEntropyLoss",
           "L2Loss", "Optimizer", "Fit", "BATCH_END", "EPOCH_END",
           "TRAIN_END"]
_ = _lib
