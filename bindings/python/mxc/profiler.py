"""The profiler: what mxc does, as a Chrome trace and as statistics.

    import mxc
    mxc.profiler.set_config(filename="trace.json", profile_memory=True)
    mxc.profiler.start()
    with mxc.profiler.scope("my step"):
        b = mxc.op.relu(a)
    mxc.profiler.stop()
    mxc.profiler.dump()                  # open trace.json in ui.perfetto.dev
    print(mxc.profiler.stats())          # per-operator table
    mxc.profiler.stats(as_json=True)     # the same as a dict

Keys for set_config are those of mxc_profiler_set_config (filename,
profile_all, profile_imperative, profile_symbolic, profile_engine,
profile_wait, profile_copy, profile_memory, profile_io, profile_user);
booleans may be given as Python bools. Everything here may be called from
any thread.
"""

import contextlib
import json
from ctypes import byref, c_int, c_void_p

from ._lib import check, lib, take_string

STOP, RUN, PAUSE = 0, 1, 2
_TABLE, _JSON = 0, 1

__all__ = ["STOP", "RUN", "PAUSE", "set_config", "set_state", "state",
           "start", "pause", "stop", "dump", "dumps", "stats", "scope",
           "mark", "counter"]


def set_config(**settings):
    """Sets configuration keys (see the module docstring)."""
    for key, value in settings.items():
        if isinstance(value, bool):
            value = "1" if value else "0"
        check(lib.mxc_profiler_set_config(key.encode("utf-8"),
                                          str(value).encode("utf-8")))


def set_state(value):
    check(lib.mxc_profiler_set_state(int(value)))


def state():
    """STOP, RUN or PAUSE."""
    out = c_int()
    check(lib.mxc_profiler_get_state(byref(out)))
    return out.value


def start():
    set_state(RUN)


def pause():
    set_state(PAUSE)


def stop():
    set_state(STOP)


def dump(finished=True):
    """Writes the trace to the configured file; finished also stops the
    profiler and discards the events."""
    check(lib.mxc_profiler_dump(1 if finished else 0))


def dumps():
    """The trace (Chrome trace event JSON) as a str."""
    out = c_void_p()
    check(lib.mxc_profiler_dumps(byref(out)))
    return take_string(out)


def stats(as_json=False, reset=False):
    """Per-operator statistics: a table (str), or with as_json a dict
    ({"spans": {category: {name: {"calls", "total_ns", ...}}}, ...})."""
    out = c_void_p()
    check(lib.mxc_profiler_stats(_JSON if as_json else _TABLE,
                                 1 if reset else 0, byref(out)))
    text = take_string(out)
    return json.loads(text) if as_json else text


@contextlib.contextmanager
def scope(name):
    """A named range of the calling thread's track around the block."""
    check(lib.mxc_profiler_range_begin(name.encode("utf-8")))
    try:
        yield
    finally:
        check(lib.mxc_profiler_range_end())


def mark(name):
    """An instant marker on the calling thread's track."""
    check(lib.mxc_profiler_mark(name.encode("utf-8")))


def counter(name, value):
    """A value of the counter track `name`."""
    check(lib.mxc_profiler_counter(name.encode("utf-8"), int(value)))
