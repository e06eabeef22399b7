"""mxc.KVStore ("local"): sums against numpy in list order, pull and
pushpull, an optimizer against calling its operator directly, an updater
in Python, errors; the "dist_sync" reason outside an MPI job.
(kvstore_dist.py runs the store across 2 MPI ranks.)"""
import unittest

import numpy as np

import mxc

MXC_ERR_NOT_FOUND = 7
MXC_ERR_SHAPE = 3
MXC_ERR_UNSUPPORTED = 9


class KVStoreTest(unittest.TestCase):
    def setUp(self):
        self.kv = mxc.KVStore("local")
        self.rng = np.random.default_rng(19)

    def tearDown(self):
        self.kv.close()
        mxc.wait_all()

    def test_facts(self):
        self.assertEqual(self.kv.type, "local")
        self.assertEqual(self.kv.rank, 0)
        self.assertEqual(self.kv.num_workers, 1)
        self.kv.barrier()

    def test_push_sums_in_list_order(self):
        vals = [self.rng.standard_normal((3, 4)).astype(np.float32)
                for _ in range(3)]
        self.kv.init("w", mxc.zeros((3, 4)))
        self.kv.push(["w", "w", "w"], [mxc.array(v) for v in vals])
        out = mxc.zeros((3, 4))
        self.kv.pull("w", out)
        want = (vals[0] + vals[1]) + vals[2]
        self.assertEqual(out.asnumpy().tobytes(), want.tobytes())

    def test_int_keys_and_pushpull_in_place(self):
        self.kv.init([3, 4], [mxc.zeros((2,)), mxc.zeros((2,), np.int64)])
        a = mxc.array(np.array([1, 2], np.float32))
        b = mxc.array(np.array([10, 20], np.int64))
        self.kv.pushpull([3, 4], [a, b])
        np.testing.assert_array_equal(a.asnumpy(), [1, 2])
        np.testing.assert_array_equal(b.asnumpy(), [10, 20])

    def test_optimizer_matches_its_operator(self):
        w0 = self.rng.standard_normal((5,)).astype(np.float32)
        g = self.rng.standard_normal((5,)).astype(np.float32)
        self.kv.set_optimizer("sgd_mom_update", lr=0.1, momentum=0.9, wd=0.01)
        self.kv.init("w", mxc.array(w0))
        ref, mom = mxc.array(w0), mxc.zeros((5,))
        for _ in range(3):
            self.kv.push("w", mxc.array(g))
            mxc.op.sgd_mom_update(ref, mxc.array(g), mom, out=ref, lr=0.1,
                                  momentum=0.9, wd=0.01)
        out = mxc.zeros((5,))
        self.kv.pull("w", out)
        self.assertEqual(out.asnumpy().tobytes(), ref.asnumpy().tobytes())

    def test_updater_in_python(self):
        seen = []

        def update(key, recv, local):
            seen.append(key)
            mxc.op.elemwise_sub(local, recv, out=local)

        self.kv.set_updater(update)
        self.kv.init(["a"], [mxc.array(np.array([10, 20], np.float32))])
        self.kv.push("a", mxc.array(np.array([1, 2], np.float32)))
        out = mxc.zeros((2,))
        self.kv.pull("a", out)
        np.testing.assert_array_equal(out.asnumpy(), [9, 18])
        self.assertEqual(seen, ["a"])
        self.kv.set_updater(None)

    def test_errors(self):
        with self.assertRaises(mxc.MxcError) as e:
            self.kv.push("nope", mxc.zeros((2,)))
        self.assertEqual(e.exception.code, MXC_ERR_NOT_FOUND)
        self.assertIn("key 'nope'", e.exception.message)
        self.kv.init("w", mxc.zeros((2,)))
        with self.assertRaises(mxc.MxcError) as e:
            self.kv.push("w", mxc.zeros((3,)))
        self.assertEqual(e.exception.code, MXC_ERR_SHAPE)
        with self.assertRaises(TypeError):
            self.kv.push(["w", 1], [mxc.zeros((2,)), mxc.zeros((2,))])
        with self.assertRaises(mxc.MxcError):
            self.kv.set_optimizer("sgd_update", lr="fast")

    def test_dist_sync_outside_a_job_says_why(self):
        with self.assertRaises(mxc.MxcError) as e:
            mxc.KVStore("dist_sync")
        self.assertEqual(e.exception.code, MXC_ERR_UNSUPPORTED)
        self.assertIn("MPI launcher", e.exception.message)


if __name__ == "__main__":
    unittest.main()
