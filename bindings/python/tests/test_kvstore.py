"""mxc.KVStore ("local"): sums against numpy in list order, pull and
pushpull, an optimizer against calling its operator directly, an updater
in Python, errors; the "dist_sync" reason outside an MPI job.
(kvstore_dist.py runs the store across 2 MPI ranks.)"""
import threading
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

    def test_updater_exception_fails_the_push_with_its_text(self):
        def update(key, recv, local):
            if key == 2:
                raise ValueError("refuses key 2")
            mxc.op.elemwise_add(local, recv, out=local)

        self.kv.set_updater(update)
        self.kv.init([1, 2], [mxc.zeros((2,)), mxc.zeros((2,))])
        g = mxc.array(np.array([1, 2], np.float32))
        with self.assertRaises(mxc.MxcError) as e:
            self.kv.push([1, 2], [g, g])
        self.assertEqual(e.exception.code, 1)
        self.assertRegex(e.exception.message,
                         r"key 2: KVStore updater raised "
                         r"ValueError\('refuses key 2'\)")
        out = mxc.zeros((2,))
        self.kv.pull(1, out)  # key 1 was updated before key 2 failed
        np.testing.assert_array_equal(out.asnumpy(), [1, 2])

    def test_replacing_the_updater_while_another_thread_pushes(self):
        # The store frees each replaced ctypes callback only after the
        # last push calling it: freed earlier, the pushing thread would
        # jump into freed memory. Every updater subtracts the sum, so the
        # result is known whichever one each push ran.
        pushes = 200
        self.kv.init("w", mxc.zeros((3,)))
        one = mxc.array(np.ones(3, np.float32))

        def update(key, recv, local):
            mxc.op.elemwise_sub(local, recv, out=local)

        self.kv.set_updater(update)
        live = len(mxc.kvstore._updaters)
        done = threading.Event()
        failed = []

        def push():
            try:
                for _ in range(pushes):
                    self.kv.push("w", one)
            except Exception as e:  # pylint: disable=broad-except
                failed.append(e)
            done.set()

        t = threading.Thread(target=push)
        t.start()
        replaced = 0
        while not done.is_set() or replaced < 200:
            self.kv.set_updater(lambda k, r, l: update(k, r, l))
            replaced += 1
        t.join()
        self.assertEqual(failed, [])
        out = mxc.zeros((3,))
        self.kv.pull("w", out)
        np.testing.assert_array_equal(out.asnumpy(), [-pushes] * 3)
        self.assertEqual(len(mxc.kvstore._updaters), live)
        self.kv.set_updater(None)
        self.assertEqual(len(mxc.kvstore._updaters), live - 1)

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
