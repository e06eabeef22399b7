"""The IDX, CSV and LibSVM iterators from Python, and set_parts on each:
files written here with numpy / plain text, each example's label equal to
its row number, so the parts' labels must be every row exactly once."""

import os
import struct
import tempfile
import unittest

import numpy as np

import mxc

N = 23


class DataIterTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.images, self.labels = os.path.join(d, "x.idx"), os.path.join(d, "y.idx")
        with open(self.images, "wb") as f:  # uint8 (N, 2, 3)
            f.write(struct.pack(">I3I", 0x0803, N, 2, 3))
            f.write((np.arange(N * 6) % 251).astype(np.uint8).tobytes())
        with open(self.labels, "wb") as f:
            f.write(struct.pack(">II", 0x0801, N))
            f.write(np.arange(N, dtype=np.uint8).tobytes())
        self.csv = os.path.join(d, "a.csv")
        with open(self.csv, "w") as f:
            f.writelines("%d,%d,%d\n" % (i, 2 * i, -i) for i in range(N))
        self.svm = os.path.join(d, "a.svm")
        with open(self.svm, "w") as f:
            f.writelines("%d 0:%d 3:1.5\n" % (i, i + 1) for i in range(N))

    def tearDown(self):
        self.dir.cleanup()

    def make(self, kind):
        if kind == "idx":
            return mxc.IDXIter(self.images, self.labels, batch_size=4,
                               shuffle=True, seed=5)
        if kind == "csv":
            return mxc.CSVIter(self.csv, num_cols=3, batch_size=4, label_col=0)
        return mxc.LibSVMIter(self.svm, num_features=5, batch_size=4)

    @staticmethod
    def labels_of(it):
        out = []
        for _, label, pad in it:
            v = label.asnumpy().ravel()
            out += [int(x) for x in v[:len(v) - pad]]
        return out

    def test_parts_hold_the_data_set_once(self):
        for kind in ("idx", "csv", "svm"):
            with self.make(kind) as it:
                self.assertEqual(sorted(self.labels_of(it)), list(range(N)), kind)
            for p in (1, 2, 3, 5):
                seen = []
                for k in range(p):
                    with self.make(kind) as it:
                        part = self.labels_of(it.set_parts(p, k))
                        self.assertTrue(part or kind != "idx", (kind, p, k))
                        seen += part
                self.assertEqual(sorted(seen), list(range(N)), (kind, p))

    def test_idx_data_and_csv_label_file(self):
        with mxc.IDXIter(self.images, self.labels, batch_size=N, scale=False,
                         flat=True) as it:
            data, label, pad = next(iter(it))
            self.assertEqual(data.shape, (N, 6))
            np.testing.assert_array_equal(
                data.asnumpy().ravel(), np.arange(N * 6) % 251)
            self.assertEqual(pad, 0)
        labels = os.path.join(self.dir.name, "l.csv")
        with open(labels, "w") as f:
            f.writelines("%d\n" % (10 * i) for i in range(N))
        with mxc.CSVIter(self.csv, num_cols=3, batch_size=5, labels=labels,
                         last_batch="discard") as it:
            batches = list(it)
        self.assertEqual(len(batches), N // 5)
        np.testing.assert_array_equal(batches[1][0].asnumpy()[0], [5, 10, -5])
        self.assertEqual(batches[1][1].asnumpy().ravel()[0], 50)

    def test_bad_arguments(self):
        with self.assertRaises(mxc.MxcError):
            mxc.IDXIter(os.path.join(self.dir.name, "none"), self.labels, 4)
        with self.assertRaises(ValueError):
            mxc.CSVIter(self.csv, 3, 4, last_batch="keep")
        with self.make("csv") as it:
            for k in (-1, 3):
                with self.assertRaises(mxc.MxcError):
                    it.set_parts(3, k)
            next(iter(it))  # the epoch has started
            with self.assertRaises(mxc.MxcError) as e:
                it.set_parts(2, 0)
            self.assertIn("set_parts", str(e.exception))


if __name__ == "__main__":
    unittest.main()
