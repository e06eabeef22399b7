"""Custom operators written in Python: forward, backward under autograd
(checked against the analytic gradient and finite differences), failing
callbacks, registration errors."""
import unittest

import numpy as np

import mxc


def softsign_forward(inputs, outputs, req, is_train, kwargs):
    x = inputs[0]
    y = x / (1 + np.abs(x)) * float(kwargs.get("scale", "1"))
    if req[0] == "add":
        outputs[0][...] += y
    elif req[0] == "write":
        outputs[0][...] = y


def softsign_backward(ograds, inputs, outputs, igrads, req, kwargs):
    x = inputs[0]
    g = ograds[0] * float(kwargs.get("scale", "1")) / (1 + np.abs(x)) ** 2
    if req[0] == "add":
        igrads[0][...] += g
    elif req[0] == "write":
        igrads[0][...] = g


def concat_shape(in_shapes, kwargs):
    a, b = in_shapes
    return [(a[0] + b[0],) + tuple(a[1:])]


def concat_forward(inputs, outputs, req, is_train, kwargs):
    outputs[0][...] = np.concatenate(inputs, axis=0)


class CustomTest(unittest.TestCase):
    def setUp(self):
        mxc.custom.register("py_softsign", softsign_forward,
                            backward=softsign_backward)

    def tearDown(self):
        mxc.custom.unregister("py_softsign")

    def test_forward_matches_numpy(self):
        x = np.linspace(-3, 3, 12).reshape(3, 4)
        with mxc.array(x) as a:
            y = mxc.op.Custom(a, op_type="py_softsign", scale=2)
            np.testing.assert_allclose(y.asnumpy(), 2 * x / (1 + abs(x)))
            y.close()

    def test_gradient_by_autograd_and_finite_differences(self):
        x = np.array([-1.5, -0.2, 0.3, 2.0])
        a = mxc.array(x)
        a.attach_grad()
        with mxc.autograd.record():
            y = mxc.op.Custom(a, op_type="py_softsign")
            loss = mxc.op.sum(y * y)
        loss.backward()
        f = lambda v: np.sum((v / (1 + np.abs(v))) ** 2)
        eps = 1e-6
        fd = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps)
                       for e in np.eye(len(x))])
        with a.grad as g:
            np.testing.assert_allclose(g.asnumpy(), fd, rtol=1e-6)
        for h in (a, y, loss):
            h.close()

    def test_infer_shape_callback(self):
        mxc.custom.register("py_concat", concat_forward,
                            infer_shape=concat_shape, num_inputs=2)
        try:
            a = mxc.array(np.ones((2, 3), np.float32))
            b = mxc.array(np.zeros((1, 3), np.float32))
            y = mxc.op.Custom(a, b, op_type="py_concat")
            self.assertEqual(y.shape, (3, 3))
            np.testing.assert_array_equal(y.asnumpy()[:, 0], [1, 1, 0])
        finally:
            mxc.custom.unregister("py_concat")

    def test_exception_becomes_operator_error(self):
        def bad(inputs, outputs, req, is_train, kwargs):
            raise ValueError("no good")
        mxc.custom.register("py_bad", bad)
        try:
            with mxc.array(np.ones(3)) as a:
                y = mxc.op.Custom(a, op_type="py_bad")
                with self.assertRaises(mxc.MxcError) as cm:
                    y.asnumpy()
                self.assertIn("py_bad", str(cm.exception))
                self.assertIn("ValueError: no good", str(cm.exception))
                y.close()
            # The failure is also kept for the next wait_all: take it.
            with self.assertRaises(mxc.MxcError):
                mxc.wait_all()
        finally:
            mxc.custom.unregister("py_bad")

    def test_registration_errors(self):
        with self.assertRaises(mxc.MxcError) as cm:
            mxc.custom.register("py_softsign", softsign_forward)
        self.assertIn("already registered", str(cm.exception))
        with self.assertRaises(mxc.MxcError):
            mxc.custom.unregister("py_never")
        with self.assertRaises(mxc.MxcError):
            mxc.op.Custom(mxc.array(np.ones(2)), op_type="py_never")


if __name__ == "__main__":
    unittest.main()
