"""Memory scopes: free every handle made in a block when it ends.

    with mxc.scope():
        x = mxc.array(...)
        y = mxc.op.relu(x) * 2     # temporaries: freed at the end
        result = mxc.keep(y)       # moved out to the enclosing scope

A scope (the C library's mxc_scope_begin/end) frees every array, symbol,
predictor, iterator or RecordIO file the thread made inside it, unless it
was moved out with keep() (to the enclosing scope; from an outermost
scope to none) or detach_from_scope() (to none), so loops that make many
temporaries keep native memory flat without calling close() on each.
Objects freed by their scope are marked, so their close() and the garbage
collector never free them again; using one afterwards raises MxcError
(INVALID_HANDLE).

Scopes are per thread (each thread has its own stack of them) and must
end on the thread that began them, innermost first, which ``with``
guarantees. memory_stats() and dump_handles() tell what is live; with
MXC_DEBUG_HANDLES=1 (or set_handle_debug(True)) the dump names, for each
handle, the line of Python code that made it.
"""

import sys
import threading
from ctypes import byref, c_int, c_int64, c_void_p

from ._lib import check, handle, lib, take_string

_local = threading.local()
_debug = [False]  # handle debugging on? (cached; set at the end)
_PKG = __file__.rsplit("/", 1)[0] + "/"


def owner():
    """The calling thread's innermost open scope (None: no scope): what a
    new wrapper object records as its owner."""
    return getattr(_local, "top", None)


def tag_new(h):
    """With handle debugging on, tags the new handle h with the caller's
    line (the first frame outside this package): dumps then say where
    each leaked object was made. One branch when debugging is off."""
    if not _debug[0]:
        return
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    if f is not None:
        lib.mxc_handle_tag(h, ("%s:%d" % (f.f_code.co_filename,
                                           f.f_lineno)).encode("utf-8"))


def released(obj):
    """Whether obj's handle was freed by the end of its scope."""
    s = getattr(obj, "_scope", None)
    return s is not None and s._ended


class Scope:
    """One open scope of the calling thread (see the module's doc)."""

    __slots__ = ("_handle", "_parent", "_ended", "_tag")

    def __init__(self):
        self._handle = None
        self._parent = None
        self._ended = False
        self._tag = None

    def __enter__(self):
        if self._handle is not None or self._ended:
            raise ValueError("mxc.scope: a Scope is entered once")
        h = handle()
        self._tag = _caller_tag(2)
        if self._tag is not None:
            check(lib.mxc_handle_tag_set(self._tag))
        check(lib.mxc_scope_begin(byref(h)))
        self._handle, self._parent = h.value, owner()
        _local.top = self
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Ends the scope (what leaving the ``with`` block does)."""
        if self._handle is None or self._ended:
            return
        if owner() is not self:
            raise ValueError("mxc.scope: not this thread's innermost open "
                             "scope (end scopes on the thread that began "
                             "them, innermost first)")
        # Marked first: wrappers freed by the end must not be freed again
        # by a collector running meanwhile.
        self._ended = True
        _local.top = self._parent
        check(lib.mxc_scope_end(self._handle))
        if self._tag is not None:  # back to the enclosing scope's tag
            check(lib.mxc_handle_tag_set(getattr(self._parent, "_tag", None)))

    def stats(self):
        """(live handles, bytes of their array data) registered here."""
        return _stats(self._handle)

    def dump(self):
        """A line per live handle of this scope (see dump_handles)."""
        return dump_handles(self)


def scope():
    """A new scope, for ``with mxc.scope():``."""
    return Scope()


def _move(obj, detach):
    h = obj.handle
    s = getattr(obj, "_scope", None)
    if s is not None and s._ended:
        raise ValueError("mxc.keep: the object's scope has ended")
    fn = lib.mxc_scope_detach if detach else lib.mxc_scope_keep
    check(fn(h))
    try:
        obj._scope = None if detach or s is None else s._parent
    except AttributeError:
        pass  # a wrapper without scope tracking: nothing to update
    return obj


def keep(obj):
    """Moves obj out of its scope into the enclosing one (or none);
    returns obj, for ``return mxc.keep(result)``."""
    return _move(obj, False)


def detach_from_scope(obj):
    """Moves obj out of every scope: only close() or the collector frees
    it. Returns obj."""
    return _move(obj, True)


def _stats(h):
    n, b = c_int64(), c_int64()
    check(lib.mxc_scope_stats(h, byref(n), byref(b)))
    return n.value, b.value


def memory_stats():
    """(live handles, bytes of live arrays' data) in the whole process."""
    return _stats(None)


def dump_handles(scope_=None):
    """A text with a line per live handle (of scope_, or all): kind,
    bytes, the C function that made it and, with handle debugging on,
    where (the ``with mxc.scope()`` line)."""
    out = c_void_p()
    check(lib.mxc_handle_dump(scope_._handle if scope_ else None,
                              byref(out)))
    return take_string(out)


def set_handle_debug(on):
    """Turns handle debugging on or off: while on, every object records
    the line that made it (dump_handles shows it)."""
    check(lib.mxc_handle_debug_set(1 if on else 0))
    _debug[0] = bool(on)


def handle_debug():
    out = c_int()
    check(lib.mxc_handle_debug_enabled(byref(out)))
    _debug[0] = bool(out.value)
    return _debug[0]


def _caller_tag(depth):
    """With handle debugging on, "file:line" (bytes) of the frame `depth`
    levels up, else None."""
    if not handle_debug():
        return None
    f = sys._getframe(depth)
    return ("%s:%d" % (f.f_code.co_filename, f.f_lineno)).encode("utf-8")


_debug[0] = handle_debug()  # MXC_DEBUG_HANDLES=1 turns it on at start
