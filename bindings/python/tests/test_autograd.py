"""Autograd and a training step."""
import unittest

import numpy as np

import mxc


class AutogradTest(unittest.TestCase):
    def test_gradient_against_analytic(self):
        x = np.array([[1.0, -2.0, 3.0]], np.float32)
        with mxc.array(x) as a:
            a.attach_grad()
            with mxc.autograd.record():
                self.assertTrue(mxc.autograd.is_recording())
                y = mxc.op.sum(mxc.op.square(a) * 3.0)
            self.assertFalse(mxc.autograd.is_recording())
            y.backward()
            with a.grad as g:
                np.testing.assert_allclose(g.asnumpy(), 6 * x, rtol=1e-6)
            y.close()

    def test_linear_model_training_step_reduces_loss(self):
        rng = np.random.default_rng(2)
        x = rng.standard_normal((64, 3)).astype(np.float32)
        w_true = np.array([[1.5], [-2.0], [0.5]], np.float32)
        y = x @ w_true
        X, Y = mxc.array(x), mxc.array(y)
        w = mxc.zeros((3, 1))
        w.attach_grad()
        losses = []
        for step in range(30):
            with mxc.autograd.record():
                diff = mxc.op.dot(X, w) - Y
                loss = mxc.op.mean(mxc.op.square(diff))
            loss.backward()
            if step == 0:  # d/dw mean((Xw - y)^2) = 2/N X^T (Xw - y)
                ref = 2.0 / len(x) * x.T @ (x @ np.zeros((3, 1)) - y)
                with w.grad as g:
                    np.testing.assert_allclose(g.asnumpy(), ref, rtol=1e-4,
                                               atol=1e-5)
            with w.grad as g:
                mxc.op.sgd_update(w, g, lr=0.1, out=w)
            losses.append(loss.asnumpy().item())  # shape (1,), as MXNet
            loss.close()
            diff.close()
        self.assertLess(losses[-1], 0.01 * losses[0])
        np.testing.assert_allclose(w.asnumpy(), w_true, atol=0.05)
        for a in (X, Y, w):
            a.close()


if __name__ == "__main__":
    unittest.main()
