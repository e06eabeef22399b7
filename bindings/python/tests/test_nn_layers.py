"""The named layer wrappers of mxc.nn (Conv1D, AvgPool2D, LayerNorm,
Embedding, L1Loss, LSTM, GRU): each built and run forward, its output
checked against numpy, or for LSTM / GRU against torch's layers given the
same weights (the gate orders are the same: i, f, g, o and r, z, n)."""

import gc
import unittest

import numpy as np
import torch

import mxc
from mxc import nn


def params(block):
    return {k: v.asnumpy() for k, v in block.params().items()}


class NamedLayerTest(unittest.TestCase):
    def tearDown(self):
        # Frames held by assertRaises' tracebacks keep blocks alive in
        # cycles; collected here, not inside a later test that counts live
        # handles (test_predictor's pool test).
        gc.collect()

    def test_conv1d_matches_numpy(self):
        c = nn.Conv1D(2, 3, name="c")
        c.initialize("uniform", scale=0.5)
        x = np.linspace(-1, 1, 2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
        y = c(mxc.array(x)).asnumpy()
        p = params(c)
        w, b = p["c_weight"], p["c_bias"]
        self.assertEqual(w.shape, (2, 3, 3))
        want = np.zeros((2, 2, 3), np.float32)
        for k in range(3):
            want += np.einsum("oc,ncw->now", w[:, :, k], x[:, :, k:k + 3])
        np.testing.assert_allclose(y, want + b[None, :, None], rtol=1e-5,
                                   atol=1e-6)

    def test_avgpool_layernorm_embedding_l1(self):
        x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
        y = nn.AvgPool2D(2)(mxc.array(x)).asnumpy()
        np.testing.assert_allclose(y, [[[[2.5, 4.5], [10.5, 12.5]]]])

        ln = nn.LayerNorm(name="ln")
        ln.initialize()
        z = np.array([[1, 2, 3, 6]], np.float32)
        got = ln(mxc.array(z)).asnumpy()
        want = (z - z.mean()) / np.sqrt(z.var() + 1e-5)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

        emb = nn.Embedding(5, 3, name="emb")
        emb.initialize("uniform", scale=1.0)
        idx = np.array([[4, 0], [2, 2]], np.float32)
        got = emb(mxc.array(idx)).asnumpy()
        table = params(emb)["emb_weight"]
        np.testing.assert_allclose(got, table[idx.astype(int)])

        p = np.array([[1, -2], [0.5, 3]], np.float32)
        t = np.array([[0, 0], [1, 1]], np.float32)
        got = nn.L1Loss()(mxc.array(p), mxc.array(t)).asnumpy()
        np.testing.assert_allclose(got, [1.5, 1.25])

    def check_rnn(self, kind):
        make = nn.LSTM if kind == "lstm" else nn.GRU
        net = make(3, num_layers=2, layout="NTC", bidirectional=True,
                   name="r")
        net.initialize("uniform", scale=0.5)
        x = np.sin(np.arange(2 * 4 * 5, dtype=np.float32)).reshape(2, 4, 5)
        y = net(mxc.array(x)).asnumpy()
        self.assertEqual(y.shape, (2, 4, 6))
        p = params(net)
        self.assertEqual(p["r_l0_i2h_weight"].shape,
                         ((4 if kind == "lstm" else 3) * 3, 5))
        ref = (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(
            5, 3, num_layers=2, bidirectional=True, batch_first=True)
        with torch.no_grad():
            for l in range(2):
                for d, sfx in (("l", ""), ("r", "_reverse")):
                    for ours, theirs in (("i2h_weight", "weight_ih"),
                                         ("h2h_weight", "weight_hh"),
                                         ("i2h_bias", "bias_ih"),
                                         ("h2h_bias", "bias_hh")):
                        getattr(ref, "%s_l%d%s" % (theirs, l, sfx)).copy_(
                            torch.from_numpy(p["r_%s%d_%s" % (d, l, ours)]))
            want = ref(torch.from_numpy(x))[0].numpy()
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)

    def test_lstm_matches_torch(self):
        self.check_rnn("lstm")

    def test_gru_matches_torch(self):
        self.check_rnn("gru")

    def test_rnn_bad_input_raises(self):
        with self.assertRaises(mxc.MxcError):
            nn.LSTM(0)
        net = nn.GRU(2)
        net.initialize()
        with self.assertRaises(mxc.MxcError):
            net(mxc.array(np.zeros((2, 3), np.float32)))


if __name__ == "__main__":
    unittest.main()
