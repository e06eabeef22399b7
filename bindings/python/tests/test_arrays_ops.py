"""Arrays, operators, errors and library lookup."""
import os
import subprocess
import sys
import unittest

import numpy as np

import mxc


class ArrayTest(unittest.TestCase):
    def test_round_trip_dtypes_and_shapes(self):
        rng = np.random.default_rng(0)
        for dt in (np.float32, np.float64, np.int32, np.int64, np.uint8,
                   np.int8, np.float16):
            for shape in ((), (0,), (5,), (2, 3, 4)):
                src = (rng.standard_normal(shape) * 10).astype(dt)
                with mxc.array(src) as a:
                    self.assertEqual(a.shape, shape)
                    self.assertEqual(a.dtype, np.dtype(dt))
                    self.assertEqual(a.stype, "default")
                    np.testing.assert_array_equal(a.asnumpy(), src)

    def test_close_is_idempotent_and_checked(self):
        a = mxc.zeros((2, 2))
        a.close()
        a.close()
        self.assertTrue(a.closed)
        with self.assertRaises(ValueError):
            a.shape

    def test_stale_handle_reports_invalid_handle(self):
        a = mxc.zeros((2,))
        h = a.handle
        a.close()
        stale = mxc.NDArray(h)
        with self.assertRaises(mxc.MxcError) as cm:
            stale.shape
        self.assertEqual(cm.exception.code, 2)  # MXC_ERR_INVALID_HANDLE
        stale._handle = None  # never free it a second time

    def test_sparse_densifies(self):
        src = np.array([[0, 1, 0], [2, 0, 0]], np.float32)
        with mxc.array(src) as a, mxc.op.cast_storage(a, stype="csr") as c:
            self.assertEqual(c.stype, "csr")
            np.testing.assert_array_equal(c.asnumpy(), src)

    def test_missing_library_is_a_clear_import_error(self):
        env = dict(os.environ, MXC_LIBRARY="/nonexistent/libmxc.so.1")
        p = subprocess.run([sys.executable, "-c", "import mxc"], env=env,
                           capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("ImportError", p.stderr)
        self.assertIn("/nonexistent/libmxc.so.1", p.stderr)
        self.assertIn("MXC_LIBRARY", p.stderr)


class OpTest(unittest.TestCase):
    def test_dot_relu_against_numpy(self):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((7, 5)).astype(np.float32)
        w = rng.standard_normal((4, 5)).astype(np.float32)
        with mxc.array(x) as a, mxc.array(w) as b:
            with mxc.op.dot(a, b, transpose_b=True) as y:
                np.testing.assert_allclose(y.asnumpy(), x @ w.T, rtol=1e-5,
                                           atol=1e-5)
            with mxc.op.relu(a) as r:
                np.testing.assert_array_equal(r.asnumpy(), np.maximum(x, 0))
            with a * 2.0 + 1.0 as s:
                np.testing.assert_allclose(s.asnumpy(), x * 2 + 1, rtol=1e-6)

    def test_out_and_multiple_outputs(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        with mxc.array(x) as a, mxc.zeros((3, 4)) as o:
            self.assertIs(mxc.op.square(a, out=o), o)
            np.testing.assert_array_equal(o.asnumpy(), x * x)
            parts = mxc.op.split(a, num_outputs=2, axis=1)
            self.assertEqual(len(parts), 2)
            for p, ref in zip(parts, np.split(x, 2, axis=1)):
                np.testing.assert_array_equal(p.asnumpy(), ref)
                p.close()

    def test_errors_arrive_as_mxc_error(self):
        with mxc.zeros((2, 3)) as a:
            with self.assertRaises(mxc.MxcError) as cm:
                mxc.op.dot(a, a)
            e = cm.exception
            self.assertEqual(e.code, 3)  # MXC_ERR_SHAPE
            self.assertEqual(e.name, "MXC_ERR_SHAPE")
            self.assertIn("dot", e.message)
            self.assertEqual(e.message, mxc.library.mxc_last_error().decode())
            with self.assertRaises(mxc.MxcError) as cm:
                mxc.op.sum(a, axis="not-a-number")
            self.assertIn("axis", cm.exception.message)
            with self.assertRaises(mxc.MxcError) as cm:
                mxc.op.get("no_such_operator")
            self.assertEqual(cm.exception.code, 7)  # MXC_ERR_NOT_FOUND
            with self.assertRaises(AttributeError):
                mxc.op.no_such_operator
            with self.assertRaises(TypeError):
                mxc.op.relu(np.zeros(3))
            with self.assertRaises(mxc.MxcError):
                mxc.op.relu(a, a)  # wrong arity
            # The library is still fine after the failures.
            with mxc.op.relu(a) as r:
                np.testing.assert_array_equal(r.asnumpy(), np.zeros((2, 3)))


if __name__ == "__main__":
    unittest.main()
