"""RecordIO, image decoding and the image record iterator from Python:
files read back and checked against the format's framing (struct), images
against PIL's decode, the iterator's batches against the images."""

import io
import os
import struct
import tempfile
import unittest

import numpy as np

import mxc

MAGIC = 0xCED7230A

try:
    from PIL import Image
except ImportError:  # Debian: python3-pil
    Image = None


class RecordIOTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.rec = os.path.join(self.dir.name, "a.rec")
        self.idx = os.path.join(self.dir.name, "a.idx")

    def tearDown(self):
        self.dir.cleanup()

    def test_round_trip_with_index_and_split_records(self):
        m = struct.pack("<I", MAGIC)
        recs = [b"", b"abc", m, b"xy" + m + b"zw", m + m + b"12345", b"q" * 999]
        with mxc.RecordIO(self.rec, "w", idx_path=self.idx) as w:
            for k, r in enumerate(recs):
                w.write(r, key=10 * k)
        with open(self.rec, "rb") as f:
            raw = f.read()
        # Framing: each part starts with the magic; the aligned magics in
        # the data were split out, so the file holds one magic per part.
        first = struct.unpack_from("<II", raw, 0)
        self.assertEqual(first, (MAGIC, 0))
        with mxc.RecordIO(self.rec, "r", idx_path=self.idx) as r:
            self.assertEqual(list(r), recs)
            self.assertEqual(r.keys(), [10 * k for k in range(len(recs))])
            self.assertEqual(r.read_key(30), recs[3])
            self.assertEqual(r.read(), recs[4])  # continues after the key
            with self.assertRaises(mxc.MxcError) as e:
                r.read_key(7)
            self.assertEqual(e.exception.name, "MXC_ERR_NOT_FOUND")

    def test_truncated_file_is_an_io_error(self):
        with mxc.RecordIO(self.rec, "w") as w:
            w.write(b"0123456789")
        with open(self.rec, "rb") as f:
            data = f.read()
        with open(self.rec, "wb") as f:
            f.write(data[:-3])
        with mxc.RecordIO(self.rec) as r:
            with self.assertRaises(mxc.MxcError) as e:
                r.read()
            self.assertEqual(e.exception.name, "MXC_ERR_IO")
            self.assertIn("a.rec", e.exception.message)

    def test_image_records_pack_and_unpack(self):
        rec = mxc.pack_image(b"IMG", label=2.5, id=7, id2=2**64 - 1)
        self.assertEqual(rec[:24], struct.pack("<IfQQ", 0, 2.5, 7, 2**64 - 1))
        self.assertEqual(mxc.unpack_image(rec), ([2.5], 7, 2**64 - 1, b"IMG"))
        rec = mxc.pack_image(b"", label=[1, 2, 3])
        self.assertEqual(mxc.unpack_image(rec)[0], [1.0, 2.0, 3.0])
        with self.assertRaises(mxc.MxcError):
            mxc.unpack_image(b"short")


@unittest.skipIf(Image is None, "PIL missing (Debian: python3-pil)")
class ImageTest(unittest.TestCase):
    def png(self, px):
        buf = io.BytesIO()
        Image.fromarray(px).save(buf, format="PNG")
        return buf.getvalue()

    def test_decode_matches_pil(self):
        px = np.random.RandomState(0).randint(0, 256, (9, 13, 3)).astype(np.uint8)
        a = mxc.image_decode(self.png(px)).asnumpy()
        self.assertEqual(a.shape, (3, 9, 13))
        np.testing.assert_array_equal(a.transpose(1, 2, 0), px)
        f = mxc.image_decode(self.png(px), channels=3, dtype="float32")
        np.testing.assert_array_equal(f.asnumpy(), a.astype(np.float32))
        with self.assertRaises(mxc.MxcError):
            mxc.image_decode(b"GIF89a")

    def test_image_record_iter_reads_every_image(self):
        d = tempfile.TemporaryDirectory()
        path = os.path.join(d.name, "i.rec")
        rng = np.random.RandomState(1)
        images = [rng.randint(0, 256, (8, 8, 3)).astype(np.uint8) for _ in range(7)]
        with mxc.RecordIO(path, "w") as w:
            for k, px in enumerate(images):
                w.write(mxc.pack_image(self.png(px), label=k))
        epochs = []
        for threads in (1, 3):
            it = mxc.ImageRecordIter(path_imgrec=path, data_shape=(3, 8, 8),
                                     batch_size=3, preprocess_threads=threads,
                                     shuffle=True, seed=4)
            self.assertEqual(it.num_examples(), 7)
            batches = [(x.asnumpy(), y.asnumpy(), p) for x, y, p in it]
            it.close()
            self.assertEqual([p for _, _, p in batches], [0, 0, 2])
            epochs.append(batches)
            for x, y, _ in batches:
                for row in range(3):
                    np.testing.assert_array_equal(
                        x[row].transpose(1, 2, 0), images[int(y[row])])
        for (x1, y1, _), (x2, y2, _) in zip(*epochs):
            np.testing.assert_array_equal(x1, x2)
            np.testing.assert_array_equal(y1, y2)
        d.cleanup()

    def test_image_record_iter_parts_cover_the_file_once(self):
        d = tempfile.TemporaryDirectory()
        path = os.path.join(d.name, "p.rec")
        rng = np.random.RandomState(2)
        images = [rng.randint(0, 256, (4, 5, 3)).astype(np.uint8) for _ in range(11)]
        with mxc.RecordIO(path, "w") as w:
            for k, px in enumerate(images):
                w.write(mxc.pack_image(self.png(px), label=k))
        it = mxc.ImageRecordIter(path_imgrec=path, data_shape=(3, 4, 5),
                                 batch_size=2, shuffle=True, seed=3)
        for p in (1, 2, 3, 5):
            seen = []
            for k in range(p):
                it.set_parts(p, k)
                lo, hi = 11 * k // p, 11 * (k + 1) // p
                self.assertEqual(it.num_examples(), hi - lo)
                part = []
                for x, y, pad in it:
                    for row in range(2 - pad):
                        np.testing.assert_array_equal(
                            x.asnumpy()[row].transpose(1, 2, 0),
                            images[int(y.asnumpy()[row])])
                        part.append(int(y.asnumpy()[row]))
                self.assertEqual(sorted(part), list(range(lo, hi)))
                seen += part
            self.assertEqual(sorted(seen), list(range(11)))
        for p, k in ((0, 0), (3, 3), (2, -1)):
            with self.assertRaises(mxc.MxcError) as e:
                it.set_parts(p, k)
            self.assertEqual(e.exception.name, "MXC_ERR_INVALID_ARGUMENT")
        it.close()
        d.cleanup()


if __name__ == "__main__":
    unittest.main()
