"""DLPack both ways with numpy and torch: zero-copy, shared writes, and
that deleters run (observed through mxc's storage statistics when mxc
produced the memory, and through a weak reference to the producer object
when numpy or torch did)."""
import gc
import unittest
import weakref

import numpy as np

import mxc

try:
    import torch
    import torch.utils.dlpack
except ImportError:  # the runner skips the whole suite without torch
    torch = None


def in_use():
    mxc.wait_all()
    return mxc.storage_stat(mxc.BYTES_IN_USE)


class ExportTest(unittest.TestCase):
    def check_export(self, consume, ptr_of, write_other_side):
        gc.collect()
        base = in_use()
        a = mxc.array(np.arange(1 << 16, dtype=np.float32))
        self.assertGreater(in_use(), base)
        view = consume(a)
        self.assertEqual(ptr_of(view), a.data_ptr())  # zero-copy
        a.copyfrom(np.full(a.shape, 5.0))  # mxc writes, the view sees it
        self.assertEqual(float(view[3]), 5.0)
        if write_other_side:
            view[7] = -1.0
            self.assertEqual(float(a.asnumpy()[7]), -1.0)
        a.close()  # storage lives on: the consumer holds the tensor
        self.assertGreater(in_use(), base)
        self.assertEqual(float(view[0]), 5.0)
        del view
        gc.collect()
        self.assertEqual(in_use(), base)  # the deleter ran

    def test_numpy_consumer(self):
        self.check_export(np.from_dlpack, lambda v: v.ctypes.data, False)

    @unittest.skipIf(torch is None, "torch missing")
    def test_torch_consumer(self):
        self.check_export(torch.utils.dlpack.from_dlpack,
                          lambda v: v.data_ptr(), True)

    def test_unconsumed_capsule_releases(self):
        gc.collect()
        base = in_use()
        with mxc.zeros((1000,)) as a:
            cap = a.__dlpack__()
        self.assertGreater(in_use(), base)
        del cap
        self.assertEqual(in_use(), base)

    def test_device_and_stream(self):
        with mxc.zeros((2,)) as a:
            self.assertEqual(a.__dlpack_device__(), (1, 0))
            with self.assertRaises(BufferError):
                a.__dlpack__(stream=1)


class ImportTest(unittest.TestCase):
    def check_import(self, make, ptr_of, write):
        src = make()  # the only reference, so the weakref shows its death
        ptr = ptr_of(src)
        ref = weakref.ref(src)
        m = mxc.from_dlpack(src)
        self.assertEqual(m.data_ptr(), ptr)  # zero-copy
        write(src, 0, 9.0)  # the producer writes, mxc sees it
        self.assertEqual(float(m.asnumpy()[0]), 9.0)
        m.copyfrom(np.full(m.shape, 4.0))  # mxc writes, producer sees it
        self.assertEqual(float(src[1]), 4.0)
        del src
        gc.collect()
        self.assertIsNotNone(ref())  # mxc keeps the producer alive
        with mxc.op.square(m) as sq:  # pending work on the array...
            m.close()  # ...so the deleter must wait for it
            np.testing.assert_array_equal(sq.asnumpy(), 16.0)
        mxc.wait_all()
        gc.collect()
        self.assertIsNone(ref())  # the producer's deleter ran

    def test_numpy_producer(self):
        self.check_import(lambda: np.arange(100, dtype=np.float32),
                          lambda s: s.ctypes.data,
                          lambda s, i, v: s.__setitem__(i, v))

    @unittest.skipIf(torch is None, "torch missing")
    def test_torch_producer(self):
        self.check_import(lambda: torch.arange(100, dtype=torch.float32),
                          lambda s: s.data_ptr(),
                          lambda s, i, v: s.__setitem__(i, v))
        # torch's own capsule (to_dlpack) works as well.
        t = torch.ones(3, 2, dtype=torch.float64)
        with mxc.from_dlpack(torch.utils.dlpack.to_dlpack(t)) as m:
            self.assertEqual(m.shape, (3, 2))
            self.assertEqual(m.dtype, np.float64)

    def test_rejected_import_leaves_producer_intact(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]  # strided
        with self.assertRaises(mxc.MxcError) as cm:
            mxc.from_dlpack(x)
        self.assertIn("stride", cm.exception.message)
        self.assertEqual(float(x[2, 1]), 10.0)
        with self.assertRaises(mxc.MxcError):
            mxc.from_dlpack(np.zeros(3, np.complex64))
        with self.assertRaises(TypeError):
            mxc.from_dlpack([1, 2, 3])

    def test_round_trip_through_mxc(self):
        with mxc.array(np.arange(4, dtype=np.int64)) as a:
            with mxc.from_dlpack(a) as b:
                self.assertEqual(b.data_ptr(), a.data_ptr())
                np.testing.assert_array_equal(b.asnumpy(), np.arange(4))


if __name__ == "__main__":
    unittest.main()
