"""Memory scopes from Python: ``with mxc.scope():`` frees what the thread
made inside (the library's live-handle count comes back), results moved
out survive, scopes nest and are per thread, and a million arrays made in
scopes keep resident memory flat."""
import gc
import os
import threading
import unittest

import numpy as np

import mxc
from mxc import memory


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def live():
    return mxc.memory_stats()[0]


class ScopeTest(unittest.TestCase):
    def assert_freed(self, obj):
        with self.assertRaises(mxc.MxcError) as cm:
            obj.shape  # the handle was freed by the scope's end
        self.assertEqual(cm.exception.name, "MXC_ERR_INVALID_HANDLE")

    def test_scope_frees_everything_made_inside(self):
        gc.collect()
        before = live()
        with mxc.scope() as s:
            a = mxc.array(np.arange(6, dtype=np.float32).reshape(2, 3))
            b = mxc.op.relu(a)
            c = mxc.zeros((4,))
            sym = mxc.Symbol.from_json(
                '{"nodes": [{"op": "null", "name": "x", "inputs": []}], '
                '"arg_nodes": [0], "heads": [[0, 0, 0]]}')
            handles, nbytes = s.stats()
            self.assertEqual(handles, 4)
            self.assertEqual(nbytes, 4 * (6 + 6 + 4))
        self.assertEqual(live(), before)
        for x in (a, b, c):
            self.assertTrue(memory.released(x))
            self.assert_freed(x)
        with self.assertRaises(mxc.MxcError):
            sym.tojson()
        # Their close() and the collector do not free them again.
        for x in (a, b, c, sym):
            x.close()
        del a, b, c, sym
        gc.collect()
        self.assertEqual(live(), before)

    def test_keep_detach_and_nesting(self):
        before = live()

        def compute(x):
            with mxc.scope():
                t = mxc.op.relu(x)           # a temporary
                return mxc.keep(mxc.op.sum(t))

        with mxc.scope() as outer:
            x = mxc.array(np.array([-1, 2, -3, 4], np.float32))
            y = compute(x)
            self.assertEqual(float(y.asnumpy()), 6.0)
            self.assertEqual(outer.stats()[0], 2)  # x and y
            z = mxc.detach_from_scope(mxc.zeros((3,)))
            self.assertEqual(outer.stats()[0], 2)
        self.assert_freed(y)
        np.testing.assert_array_equal(z.asnumpy(), np.zeros(3, np.float32))
        z.close()
        self.assertEqual(live(), before)

    def test_end_on_another_thread_is_refused(self):
        s = mxc.scope().__enter__()
        err = []
        t = threading.Thread(
            target=lambda: err.append(mxc.library.mxc_scope_end(s._handle)))
        t.start()
        t.join()
        self.assertEqual([mxc.library.mxc_error_name(c) for c in err],
                         [b"MXC_ERR_INVALID_ARGUMENT"])
        # Python refuses too, before touching anything.
        inner = mxc.scope().__enter__()
        with self.assertRaises(ValueError):
            s.close()
        inner.close()
        s.close()

    def test_scopes_are_per_thread(self):
        before = live()
        errors = []

        def work(seed):
            try:
                for _ in range(20):
                    with mxc.scope() as s:
                        held = [mxc.array(np.full(3, seed + i, np.float32))
                                for i in range(50)]
                        if s.stats() != (50, 600):
                            errors.append(s.stats())
                        if held[-1].asnumpy()[0] != seed + 49:
                            errors.append("wrong contents")
            except Exception as e:  # reported in the main thread
                errors.append(repr(e))

        with mxc.scope() as mine:
            ts = [threading.Thread(target=work, args=(k,)) for k in range(6)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.assertEqual(mine.stats(), (0, 0))
        self.assertEqual(errors, [])
        self.assertEqual(live(), before)

    def test_dump_names_the_scope_line(self):
        mxc.set_handle_debug(True)
        try:
            with mxc.scope() as s:
                z = mxc.zeros((2,))  # held: a dropped one is freed at once
                text = s.dump()
                self.assertTrue(z.handle)
        finally:
            mxc.set_handle_debug(False)
        self.assertIn("mxc_ndarray", text)
        # The line of this file that made the array, not the scope's.
        line = [i + 1 for i, l in enumerate(open(__file__))
                if "z = mxc.zeros((2,))" in l][0]
        self.assertRegex(text, r"8 bytes, made by mxc_ndarray_create at "
                               r"\S*test_scope\.py:%d," % line)

    def test_million_arrays_in_scopes_keep_memory_flat(self):
        n = int(os.environ.get("MXC_PY_LEAK_ITERS", "1000000"))
        per = 1000
        keep_alive = []
        for _ in range(20):  # warm the pool and the allocator
            with mxc.scope():
                keep_alive = [mxc.empty((4,)) for _ in range(per)]
        mxc.wait_all()
        gc.collect()
        before, handles = rss_bytes(), live()
        for _ in range(n // per):
            with mxc.scope():
                # Held by Python until the scope ends: only the scope
                # frees them.
                keep_alive = [mxc.empty((4,)) for _ in range(per)]
        self.assertTrue(memory.released(keep_alive[0]))
        del keep_alive
        mxc.wait_all()
        self.assertEqual(live(), handles)
        grown = rss_bytes() - before
        if os.environ.get("MXC_SANITIZER"):
            self.skipTest("RSS bound not checked under a sanitizer")
        # A leaked array per iteration would be >= 16 bytes x 1e6 of data
        # alone plus its records; the scopes' lists are reused.
        self.assertLess(grown, 16 << 20, "RSS grew by %d bytes" % grown)


if __name__ == "__main__":
    unittest.main()
