"""GPU arrays from Python: mxc.gpu(n), copies between devices, an
operator on a GPU, and the error for a GPU that cannot be used.

The GPU cases skip when mxc sees no GPU (mxc.num_gpus() == 0). The Bazel
test runs them with the fake plug-in (tests/gpu/fake_plugin.c, two GPUs
whose memory the host cannot read, MXC_FAKE_GPU=ok), so a path that read
device memory on the host would crash here instead of passing."""

import os
import unittest

import numpy as np

import mxc


def _gpus():
    return mxc.num_gpus()


class DeviceValueTest(unittest.TestCase):
    def test_values(self):
        self.assertEqual(repr(mxc.gpu(1)), "gpu(1)")
        self.assertEqual(mxc.cpu(), (1, 0))
        self.assertEqual(mxc.gpu(3), mxc.Device(2, 3))
        self.assertNotEqual(mxc.gpu(0), mxc.cpu(0))
        with self.assertRaises(ValueError):
            mxc.gpu(-1)
        with self.assertRaises(ValueError):
            mxc.Device(5, 0)

    def test_cpu_arrays_report_cpu(self):
        with mxc.zeros((2,), device=mxc.cpu()) as a:
            self.assertEqual(a.device, mxc.cpu())
            self.assertIs(a.as_in_context(mxc.cpu()), a)


@unittest.skipIf(_gpus() == 0, "mxc sees no GPU (MXC_CUDA_PLUGIN=%s)"
                 % os.environ.get("MXC_CUDA_PLUGIN", "unset"))
class GpuArrayTest(unittest.TestCase):
    def test_create_copy_round_trip(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 2.0
        with mxc.array(x, device=mxc.gpu(0)) as g0:
            self.assertEqual(g0.device, mxc.gpu(0))
            self.assertEqual(g0.shape, (3, 4))
            with g0.copyto(mxc.gpu(1)) as g1, g1.copyto(mxc.cpu()) as h:
                self.assertEqual(g1.device, mxc.gpu(1))
                self.assertEqual(h.device, mxc.cpu())
                np.testing.assert_array_equal(h.asnumpy(), x)
                np.testing.assert_array_equal(g1.asnumpy(), x)

    def test_zeros_empty_and_copy_into_array(self):
        if _gpus() < 2:
            self.skipTest("needs 2 GPUs")
        with mxc.zeros((5,), np.float64, ctx=mxc.gpu(1)) as z, \
                mxc.empty((5,), np.float64, device=mxc.gpu(0)) as e, \
                mxc.array(np.full(5, 7.0)) as src:
            self.assertEqual(e.device, mxc.gpu(0))
            np.testing.assert_array_equal(z.asnumpy(), np.zeros(5))
            src.copyto(e)
            e.copyto(z)
            np.testing.assert_array_equal(z.asnumpy(), np.full(5, 7.0))

    def test_elementwise_ops_on_gpu(self):
        a = np.array([-1.5, 0.0, 2.0, 3.25], np.float32)
        b = np.array([0.5, -4.0, 1.0, 0.75], np.float32)
        with mxc.array(a, device=mxc.gpu(1)) as ga, \
                mxc.array(b, device=mxc.gpu(1)) as gb:
            with mxc.op.elemwise_add(ga, gb) as s, mxc.op.relu(ga) as r:
                self.assertEqual(s.device, mxc.gpu(1))
                # Independent references: numbers worked out by hand.
                np.testing.assert_array_equal(
                    s.asnumpy(), np.array([-1.0, -4.0, 3.0, 4.0], np.float32))
                np.testing.assert_array_equal(
                    r.asnumpy(), np.array([0.0, 0.0, 2.0, 3.25], np.float32))

    def test_as_in_context(self):
        with mxc.array(np.ones(3, np.float32)) as h:
            g = h.as_in_context(mxc.gpu(0))
            with g:
                self.assertEqual(g.device, mxc.gpu(0))
                self.assertIs(g.as_in_device(mxc.gpu(0)), g)
                np.testing.assert_array_equal(g.asnumpy(), np.ones(3))

    def test_missing_device_is_mxc_error(self):
        bad = mxc.gpu(_gpus() + 5)
        with self.assertRaises(mxc.MxcError) as cm:
            mxc.zeros((2,), device=bad)
        self.assertEqual(cm.exception.name, "MXC_ERR_UNSUPPORTED")
        self.assertIn(str(bad.device_id), cm.exception.message)
        with self.assertRaises(mxc.MxcError):
            mxc.device_check(bad)
        with mxc.array(np.ones(2, np.float32)) as h, \
                self.assertRaises(mxc.MxcError):
            h.copyto(bad)
        self.assertEqual(mxc.device_check(mxc.gpu(0)), mxc.gpu(0))


@unittest.skipIf(_gpus() > 0, "a GPU is present")
class NoGpuTest(unittest.TestCase):
    def test_gpu_request_fails_with_reason(self):
        with self.assertRaises(mxc.MxcError) as cm:
            mxc.empty((2,), device=mxc.gpu(0))
        self.assertEqual(cm.exception.name, "MXC_ERR_UNSUPPORTED")
        self.assertTrue(cm.exception.message)


if __name__ == "__main__":
    unittest.main()
