"""mxc.nn.UserBlock: a forward pass written in Python over child blocks,
checked against numpy from the children's parameters; imperative against
hybridized (traced) outputs; exceptions and bad returns raised again by the
call; the blocks freed (live-handle count back where it was)."""

import gc
import unittest

import numpy as np

import mxc
from mxc import nn


class Residual(nn.UserBlock):
    def __init__(self, units, name=None):
        super().__init__(name)
        self.dense = nn.Dense(units, name=(name or "res") + "_d")
        self.add(self.dense)

    def forward(self, x):
        return self.dense(x) * 2.0 + x


class Broken(nn.UserBlock):
    def forward(self, x):
        raise ValueError("no forward today")


class Echo(nn.UserBlock):
    def forward(self, x):
        return x


def reference(block, x):
    p = {k: v.asnumpy() for k, v in block.params().items()}
    w, b = p["r_d_weight"], p["r_d_bias"]
    return (x @ w.T + b) * 2.0 + x


class UserBlockTest(unittest.TestCase):
    def tearDown(self):
        gc.collect()

    def test_forward_matches_numpy(self):
        blk = Residual(4, name="r")
        blk.initialize("uniform", scale=0.5)
        x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
        y = blk(mxc.array(x)).asnumpy()
        np.testing.assert_allclose(y, reference(blk, x), rtol=1e-5, atol=1e-6)

    def test_hybridized_equals_imperative(self):
        blk = Residual(4, name="r")
        blk.initialize("uniform", scale=0.5)
        x = mxc.array(np.linspace(-2, 1, 8, dtype=np.float32).reshape(2, 4))
        want = blk(x).asnumpy()
        blk.hybridize()
        for _ in range(2):  # the trace, then the cached graph
            np.testing.assert_allclose(blk(x).asnumpy(), want, rtol=1e-5,
                                       atol=1e-6)

    def test_inside_a_sequential(self):
        inner = Residual(4, name="r")
        net = nn.Sequential(inner, nn.Activation("relu"))
        net.initialize("uniform", scale=0.5)
        x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
        y = net(mxc.array(x)).asnumpy()
        np.testing.assert_allclose(y, np.maximum(reference(inner, x), 0),
                                   rtol=1e-5, atol=1e-6)

    def test_exception_is_raised_again(self):
        x = mxc.array(np.ones((1, 2), np.float32))
        with self.assertRaisesRegex(ValueError, "no forward today"):
            Broken()(x)
        with self.assertRaisesRegex(TypeError, "new mxc.NDArray"):
            Echo()(x)

    def test_scope_frees_user_blocks(self):
        gc.collect()
        before = mxc.memory_stats()[0]
        with mxc.scope():
            blk = Residual(3, name="r")
            blk.initialize("uniform")
            blk(mxc.array(np.ones((2, 3), np.float32))).asnumpy()
        del blk
        gc.collect()
        self.assertEqual(mxc.memory_stats()[0], before)


if __name__ == "__main__":
    unittest.main()
