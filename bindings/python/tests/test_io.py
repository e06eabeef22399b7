"""Save/load in both formats, MXNet files written here with struct (not by
mxc), and checkpoints through mxc.save_checkpoint / mxc.load_checkpoint."""
import os
import struct
import tempfile
import unittest

import numpy as np

import mxc

MXC_ERR_IO = 8

FC_JSON = """{"nodes": [
  {"op": "null", "name": "data", "inputs": []},
  {"op": "null", "name": "fc_weight", "inputs": []},
  {"op": "null", "name": "fc_bias", "inputs": []},
  {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2"},
   "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}],
 "arg_nodes": [0, 1, 2], "node_row_ptr": [0, 1, 2, 3, 4],
 "heads": [[3, 0, 0]], "attrs": {"mxnet_version": ["int", 10900]}}"""


def mxnet_list(arrays, names):
    """An MXNet NDArray list (v2, dense) from the format description."""
    out = struct.pack("<QQQ", 0x112, 0, len(arrays))
    for a in arrays:
        out += struct.pack("<Iii", 0xF993FAC9, 0, a.ndim)
        out += struct.pack("<%dq" % a.ndim, *a.shape)
        out += struct.pack("<iii", 1, 0, {np.float32: 0, np.int64: 6,
                                          np.float16: 2}[a.dtype.type])
        out += a.astype(a.dtype.newbyteorder("<")).tobytes()
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n)) + n.encode()
    return out


class IoTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def test_round_trip_both_formats(self):
        w = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
        k = np.array([7, -8, 9], dtype=np.int64)
        for fmt in ("mxc", "mxnet"):
            p = self.path("rt." + fmt)
            mxc.save(p, {"arg:w": mxc.array(w), "aux:k": mxc.array(k)}, fmt)
            got = mxc.load(p)
            self.assertEqual(sorted(got), ["arg:w", "aux:k"])
            np.testing.assert_array_equal(got["arg:w"].asnumpy(), w)
            np.testing.assert_array_equal(got["aux:k"].asnumpy(), k)
            mxc.save(p, [mxc.array(w)], fmt)
            got = mxc.load(p)
            self.assertIsInstance(got, list)
            np.testing.assert_array_equal(got[0].asnumpy(), w)

    def test_reads_an_mxnet_file_written_with_struct(self):
        a = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
        h = np.array([0.5, -2, 1024], dtype=np.float16)
        p = self.path("model-0003.params")
        with open(p, "wb") as f:
            f.write(mxnet_list([a, h], ["arg:a", "aux:h"]))
        got = mxc.load(p)
        np.testing.assert_array_equal(got["arg:a"].asnumpy(), a)
        np.testing.assert_array_equal(got["aux:h"].asnumpy(), h)
        # And mxc writes the same bytes for the same arrays.
        q = self.path("again.params")
        mxc.save(q, {"arg:a": mxc.array(a), "aux:h": mxc.array(h)}, "mxnet")
        with open(p, "rb") as f1, open(q, "rb") as f2:
            self.assertEqual(f1.read(), f2.read())

    def test_truncated_file_is_an_io_error(self):
        p = self.path("cut.params")
        raw = mxnet_list([np.ones(4, np.float32)], ["x"])
        with open(p, "wb") as f:
            f.write(raw[:-3])
        with self.assertRaises(mxc.MxcError) as cm:
            mxc.load(p)
        self.assertEqual(cm.exception.code, MXC_ERR_IO)
        self.assertIn("offset", cm.exception.message)
        with self.assertRaises(ValueError):
            mxc.save(p, [], "onnx")

    def test_checkpoint_round_trip(self):
        sym = mxc.Symbol.from_json(FC_JSON)
        w = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
        b = np.array([1, -1], dtype=np.float32)
        prefix = self.path("net")
        mxc.save_checkpoint(prefix, 12, sym,
                            {"fc_weight": mxc.array(w),
                             "fc_bias": mxc.array(b)}, {})
        self.assertTrue(os.path.exists(prefix + "-symbol.json"))
        self.assertTrue(os.path.exists(prefix + "-0012.params"))
        sym2, args, aux = mxc.load_checkpoint(prefix, 12)
        self.assertEqual(sym2.tojson(), sym.tojson())
        self.assertEqual(sorted(args), ["fc_bias", "fc_weight"])
        self.assertEqual(aux, {})
        np.testing.assert_array_equal(args["fc_weight"].asnumpy(), w)
        np.testing.assert_array_equal(args["fc_bias"].asnumpy(), b)
        # The params are an MXNet list with arg: names.
        raw = mxc.load(prefix + "-0012.params")
        self.assertEqual(sorted(raw), ["arg:fc_bias", "arg:fc_weight"])
        with self.assertRaises(mxc.MxcError) as cm:
            mxc.load_checkpoint(prefix, 13)
        self.assertIn("net-0013.params", cm.exception.message)
        sym.close()
        sym2.close()


if __name__ == "__main__":
    unittest.main()
