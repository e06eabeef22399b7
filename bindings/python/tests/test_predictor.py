"""mxc.Predictor on the model scripts/make_predictor_model.py writes (its
numpy forward is the reference), threads sharing weights, bad input, the
checkpoint wrappers, and the real Fashion-MNIST model of the shared
mxnet-models directory (skipped when absent)."""
import gzip
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import mxc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "make_predictor_model.py")
MXC_ERR_SHAPE, MXC_ERR_NOT_FOUND, MXC_ERR_IO = 3, 7, 8


def models_dir():
    """$MXC_MXNET_MODELS, else shared/mxnet-models beside or above the
    source tree (found from the real path of the model script)."""
    env = os.environ.get("MXC_MXNET_MODELS")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.realpath(SCRIPT)))
    for up in ("../shared", "../../shared", "shared"):
        d = os.path.normpath(os.path.join(root, up, "mxnet-models"))
        if os.path.exists(os.path.join(d, "README.md")):
            return d
    return None


def read_idx_gz(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = np.frombuffer(raw[4:4 + 4 * ndim], dtype=">u4")
    return np.frombuffer(raw[4 + 4 * ndim:], dtype=np.uint8).reshape(dims)


class ScriptModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        subprocess.run([sys.executable, SCRIPT, cls.tmp.name, "4"],
                       check=True)
        d = cls.tmp.name
        cls.prefix = os.path.join(d, "model")
        with open(os.path.join(d, "meta.txt")) as f:
            b, c, h, w, k = map(int, f.read().split())
        cls.x = np.fromfile(os.path.join(d, "input.f32"),
                            "<f4").reshape(b, c, h, w)
        cls.want = np.fromfile(os.path.join(d, "expected.f32"),
                               "<f4").reshape(b, k)
        with open(cls.prefix + "-symbol.json") as f:
            cls.json = f.read()
        with open(cls.prefix + "-0000.params", "rb") as f:
            cls.params = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def shapes(self, batch):
        return {"data": (batch,) + self.x.shape[1:]}

    def test_from_bytes_matches_numpy(self):
        with mxc.Predictor(self.json, self.params, self.shapes(4)) as p:
            self.assertEqual(p.num_outputs, 1)
            self.assertEqual(p.output_shape(0), ((4, 5), np.float32))
            np.testing.assert_allclose(p.predict(self.x), self.want,
                                       atol=2e-5)
            # float64 input is converted to the input's dtype.
            np.testing.assert_allclose(p.predict(self.x.astype(np.float64)),
                                       self.want, atol=2e-5)

    def test_from_checkpoint_reshape_clone(self):
        with mxc.Predictor.from_checkpoint(self.prefix, 0,
                                           self.shapes(4)) as p:
            with p.reshape(self.shapes(1)) as one, p.clone() as c:
                for i in range(4):
                    np.testing.assert_allclose(one.predict(self.x[i:i + 1]),
                                               self.want[i:i + 1], atol=2e-5)
                np.testing.assert_allclose(c.predict(self.x), self.want,
                                           atol=2e-5)

    def test_input_array_and_named_outputs(self):
        with mxc.Predictor(self.json, self.params, self.shapes(4),
                           outputs=["fc", "softmax"]) as p:
            with mxc.array(self.x) as a:
                p.set_input("data", a)
            p.forward()
            scores, probs = p.output(0), p.output(1)
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        np.testing.assert_allclose(e / e.sum(axis=1, keepdims=True),
                                   self.want, atol=2e-5)
        np.testing.assert_allclose(probs, self.want, atol=2e-5)

    def test_threads_share_weights(self):
        base = mxc.Predictor(self.json, self.params, self.shapes(1))
        ref = [base.predict(self.x[i:i + 1]) for i in range(4)]
        preds = [base.clone() for _ in range(4)]
        base.close()
        bad = []

        def work(t):
            with preds[t] as p:
                for r in range(20):
                    i = (t + r) % 4
                    if not np.array_equal(p.predict(self.x[i:i + 1]), ref[i]):
                        bad.append((t, r))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(bad, [])

    def test_pool_serves_many_threads(self):
        """16 threads share a pool of 3 predictors (one copy of the
        weights): every answer equals the single-thread one, nothing
        fails, and closing the pool leaves no handle behind."""
        before = mxc.memory_stats()[0]
        base = mxc.Predictor(self.json, self.params, self.shapes(1))
        ref = [base.predict(self.x[i:i + 1]) for i in range(4)]
        bad = []
        with mxc.scope():  # the pool's predictors are not the scope's
            pool = mxc.PredictorPool(base, 3)
        base.close()

        def work(t):
            try:
                for r in range(40):
                    i = (t * 7 + r) % 4
                    if not np.array_equal(pool.predict(self.x[i:i + 1]),
                                          ref[i]):
                        bad.append((t, r))
            except Exception as e:  # reported in the main thread
                bad.append(repr(e))

        threads = [threading.Thread(target=work, args=(t,))
                   for t in range(16)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(bad, [])
        pool.close()
        self.assertEqual(mxc.memory_stats()[0], before)

    def test_pool_blocks_when_all_are_busy(self):
        with mxc.Predictor(self.json, self.params, self.shapes(1)) as base:
            pool = mxc.PredictorPool(base, 1, timeout=0.05)
        with pool:
            with pool.acquire():
                got = []
                t = threading.Thread(target=lambda: got.append(
                    self._try_acquire(pool)))
                t.start()
                t.join()
            self.assertEqual(got, ["busy"])
            self.assertEqual(self._try_acquire(pool), "ok")
        with self.assertRaises(ValueError):
            mxc.PredictorPool(base, 0)

    @staticmethod
    def _try_acquire(pool):
        import queue
        try:
            with pool.acquire():
                return "ok"
        except queue.Empty:
            return "busy"

    def test_bad_input(self):
        with self.assertRaises(mxc.MxcError) as e:
            mxc.Predictor(self.json, self.params, {"image": (1, 3, 6, 6)})
        self.assertEqual(e.exception.code, MXC_ERR_NOT_FOUND)
        with self.assertRaises(mxc.MxcError) as e:
            mxc.Predictor(self.json, self.params, {"data": (1, 2, 6, 6)})
        self.assertEqual(e.exception.code, MXC_ERR_SHAPE)
        with self.assertRaises(mxc.MxcError) as e:
            mxc.Predictor(self.json, self.params[:-9], self.shapes(1))
        self.assertEqual(e.exception.code, MXC_ERR_IO)
        self.assertIn("offset", e.exception.message)
        with self.assertRaises(mxc.MxcError) as e:
            mxc.Predictor.from_checkpoint(self.prefix + "x", 0,
                                          self.shapes(1))
        self.assertEqual(e.exception.code, MXC_ERR_IO)
        with mxc.Predictor(self.json, self.params, self.shapes(1)) as p:
            with self.assertRaises(mxc.MxcError) as e:
                p.set_input("data", self.x)  # four images for one
            self.assertEqual(e.exception.code, MXC_ERR_SHAPE)
            with self.assertRaises(mxc.MxcError) as e:
                p.set_input("label", self.x[:1])
            self.assertEqual(e.exception.code, MXC_ERR_NOT_FOUND)
        with self.assertRaises(ValueError):
            p.forward()  # closed
        with self.assertRaises(ValueError):
            mxc.Predictor(self.json, self.params, {})

    def test_checkpoint_load_save_round_trip(self):
        sym, args, aux = mxc.load_checkpoint(self.prefix, 0)
        self.assertIn("bn_moving_var", aux)
        with tempfile.TemporaryDirectory() as d:
            mxc.save_checkpoint(os.path.join(d, "again"), 3, sym, args, aux)
            with mxc.Predictor.from_checkpoint(os.path.join(d, "again"), 3,
                                               self.shapes(4)) as p:
                np.testing.assert_allclose(p.predict(self.x), self.want,
                                           atol=2e-5)


class RealModel(unittest.TestCase):
    def test_fashion_mnist_accuracy(self):
        d = models_dir()
        if d is None:
            self.skipTest("shared mxnet-models directory not found")
        data = os.environ.get("MXC_FASHION_MNIST",
                              "/usr/share/datasets/fashion-mnist")
        img = os.path.join(data, "t10k-images-idx3-ubyte.gz")
        lab = os.path.join(data, "t10k-labels-idx1-ubyte.gz")
        if not (os.path.exists(img) and os.path.exists(lab)):
            self.skipTest("Fashion-MNIST test set not found in " + data)
        x = (read_idx_gz(img).astype(np.float32) / 255 - 0.2860) / 0.3530
        y = read_idx_gz(lab)
        batch = 1000
        correct = 0
        with mxc.Predictor.from_checkpoint(
                os.path.join(d, "mentalblood_fashion-mnist"), 39,
                {"data": (batch, 1, 28, 28)}) as p:
            for i in range(0, len(x), batch):
                probs = p.predict(x[i:i + batch])
                correct += int((probs.argmax(axis=1) == y[i:i + batch]).sum())
        self.assertAlmostEqual(correct / len(x), 0.868, delta=0.005)


if __name__ == "__main__":
    unittest.main()
