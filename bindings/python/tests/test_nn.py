"""mxc.nn: layers, losses, optimizers and fit() from Python, each against
an independent reference (numpy), plus the MLP of the main job on
synthetic data reaching its accuracy goal through fit()."""

import os
import tempfile
import unittest

import numpy as np

import mxc
from mxc import nn


def separable(n, seed):
    """Three classes in 4-d: class c has feature c large."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    x = rng.normal(0, 0.3, (n, 4)).astype(np.float32) - 0.5
    x[np.arange(n), y] += 2.0
    return x, y.astype(np.float32)


def write_csv(dirname, name, x, y):
    data, labels = os.path.join(dirname, name + ".csv"), os.path.join(
        dirname, name + "_y.csv")
    np.savetxt(data, x, delimiter=",", fmt="%.6f")
    np.savetxt(labels, y, fmt="%d")
    return data, labels


class LayerTest(unittest.TestCase):
    def test_dense_matches_numpy(self):
        d = nn.Dense(3, activation="relu", name="fc")
        d.initialize("uniform", scale=0.5)
        x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
        y = d(mxc.array(x)).asnumpy()
        p = {k: v.asnumpy() for k, v in d.params().items()}
        self.assertEqual(sorted(p), ["fc_bias", "fc_weight"])
        want = np.maximum(x @ p["fc_weight"].T + p["fc_bias"], 0)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)

    def test_gradient_and_step_match_numpy(self):
        d = nn.Dense(2, use_bias=False)
        d.initialize("xavier")
        loss = nn.L2Loss()
        x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
        t = np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2)
        with mxc.autograd.record():
            out = loss(d(mxc.array(x)), mxc.array(t))
        mxc.autograd.backward([out])
        w = d.params()[d.name + "_weight"].asnumpy()
        g = d.grad(0).asnumpy()
        np.testing.assert_allclose(g, ((x @ w.T - t) / 2).T @ x, rtol=1e-4,
                                   atol=1e-6)
        opt = nn.Optimizer(d, "sgd_update", lr=0.5)
        opt.step(4)
        np.testing.assert_allclose(d.params()[d.name + "_weight"].asnumpy(),
                                   w - 0.5 * g / 4, rtol=1e-5, atol=1e-6)

    def test_hybridized_equals_imperative_and_bad_input_raises(self):
        net = nn.Sequential(nn.Dense(5, activation="tanh"), nn.Dense(2))
        net.initialize("xavier")
        x = mxc.array(np.ones((3, 4), np.float32))
        want = net(x).asnumpy()
        net.hybridize()
        np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5)
        with self.assertRaises(mxc.MxcError) as e:
            nn.Block("dense", unit=3)
        self.assertIn("unknown key 'unit'", str(e.exception))


class FitTest(unittest.TestCase):
    def test_mlp_reaches_the_goal_and_listeners_see_epochs(self):
        with tempfile.TemporaryDirectory() as tmp:
            train = write_csv(tmp, "train", *separable(240, 1))
            val = write_csv(tmp, "val", *separable(90, 2))
            it = mxc.CSVIter(train[0], 4, 16, labels=train[1])
            vit = mxc.CSVIter(val[0], 4, 16, labels=val[1])
            mxc.seed(3)
            net = nn.Sequential(nn.Dense(32, activation="relu"), nn.Dense(3))
            net.initialize("xavier")
            opt = nn.Optimizer(net, "sgd_mom_update", lr=0.1, momentum=0.9)
            fit = nn.Fit(net, nn.SoftmaxCrossEntropyLoss(), opt, epochs=5,
                         progress=False, csv=os.path.join(tmp, "log.csv"))
            seen = []
            fit.add_listener(lambda ev, f: ev == nn.EPOCH_END and seen.append(
                (f["epoch"], f["val_accuracy"])))
            fit.run(it, vit)
            self.assertEqual([e for e, _ in seen], [1, 2, 3, 4, 5])
            self.assertGreaterEqual(seen[-1][1], 0.97)
            with open(os.path.join(tmp, "log.csv")) as f:
                self.assertEqual(len(f.read().splitlines()), 6)

    def test_local_kvstore_trains_as_without(self):
        with tempfile.TemporaryDirectory() as tmp:
            train = write_csv(tmp, "train", *separable(96, 1))
            params = []
            for store in (None, "local", mxc.KVStore("local")):
                it = mxc.CSVIter(train[0], 4, 16, labels=train[1])
                mxc.seed(5)
                net = nn.Sequential(nn.Dense(8, activation="relu"),
                                    nn.Dense(3))
                net.initialize("xavier")
                fit = nn.Fit(net, nn.SoftmaxCrossEntropyLoss(),
                             nn.Optimizer(net, "sgd_update", lr=0.1),
                             kvstore=store, epochs=2, progress=False)
                fit.run(it)
                self.assertEqual(fit["num_workers"], 1)
                params.append([p.asnumpy() for p in net.params().values()])
            for other in params[1:]:
                for a, b in zip(params[0], other):
                    np.testing.assert_array_equal(a, b)

    def test_listener_exception_ends_the_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            train = write_csv(tmp, "train", *separable(48, 1))
            it = mxc.CSVIter(train[0], 4, 16, labels=train[1])
            net = nn.Sequential(nn.Dense(3))
            net.initialize("xavier")
            fit = nn.Fit(net, nn.SoftmaxCrossEntropyLoss(),
                         nn.Optimizer(net), epochs=3, progress=False)

            def boom(event, view):
                raise RuntimeError("stop here")

            fit.add_listener(boom)
            with self.assertRaises(RuntimeError):
                fit.run(it)
            self.assertEqual(fit["num_update"], 1)


if __name__ == "__main__":
    unittest.main()
