#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets into tests/fuzz/corpus/.

Seeds are small valid inputs that reach deep into each target (a graph
that binds and runs, an array file that loads, an iterator file with a few
batches), laid out in each harness's input format (see the target's
source). Regression inputs found by fuzzing are added beside them by
hand (docs/fuzzing.md) and are never rewritten by this script.

  /usr/bin/python3 tests/fuzz/make_seeds.py NUM_OPS   (from the repository root;
  NUM_OPS: mxc_op_count(), for one seed per operator)
"""
import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import struct
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(ROOT, "corpus")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed_" + name), "wb") as f:
        f.write(data)


def u16(n):
    return struct.pack(">H", n)


def with_shapes(path, shapes):
    g = json.load(open(path))
    for node in g["nodes"]:
        if node["op"] == "null" and node["name"] in shapes:
            key = "attrs" if "attrs" in node or "param" not in node else "attr"
            node.setdefault(key, {})["__shape__"] = shapes[node["name"]]
    return json.dumps(g)


def symbol_json_seeds():
    td = os.path.join(ROOT, "..", "graph", "testdata")
    put("fuzz_symbol_json", "mlp1x.json",
        with_shapes(os.path.join(td, "mlp_mxnet1x.json"), {"data": "(2, 8)"}))
    put("fuzz_symbol_json", "mlp0x.json",
        with_shapes(os.path.join(td, "mlp_mxnet0x.json"), {"data": "(2, 8)"}))
    put("fuzz_symbol_json", "convnet.json",
        with_shapes(os.path.join(td, "convnet_mxnet1x.json"),
                    {"data": "(1, 1, 12, 12)"}))
    # Element-wise chain that the executor fuses, and a reshape/concat graph.
    nodes = [
        {"op": "null", "name": "x", "attrs": {"__shape__": "(3, 4)"}, "inputs": []},
        {"op": "null", "name": "y", "attrs": {"__shape__": "(3, 4)"}, "inputs": []},
        {"op": "elemwise_mul", "name": "m", "inputs": [[0, 0, 0], [1, 0, 0]]},
        {"op": "exp", "name": "e", "inputs": [[2, 0, 0]]},
        {"op": "Concat", "name": "c", "attrs": {"num_args": "2", "dim": "1"},
         "inputs": [[3, 0, 0], [0, 0, 0]]},
        {"op": "Reshape", "name": "r", "attrs": {"shape": "(-1, 2)"},
         "inputs": [[4, 0, 0]]},
        {"op": "sum", "name": "s", "attrs": {"axis": "1"}, "inputs": [[5, 0, 0]]},
    ]
    g = {"nodes": nodes, "arg_nodes": [0, 1],
         "node_row_ptr": list(range(len(nodes) + 1)),
         "heads": [[6, 0, 0]], "attrs": {"mxnet_version": ["int", 10900]}}
    put("fuzz_symbol_json", "chain.json", json.dumps(g))
    # A 0.8-era file the loader upgrades (old attribute keys, a BatchNorm
    # listing 3 inputs, legacy operator names), with an mx.rnn-style
    # _zeros(shape=(0, 6)) begin state, SoftmaxActivation and Crop.
    def old(op, name, ins, param=None, attr=None):
        return {"op": op, "param": param or {}, "name": name,
                "inputs": ins, "backward_source_id": -1, "attr": attr or {}}
    nodes = [
        old("null", "data", [], attr={"__shape__": "(2, 1, 4, 6)",
                                      "ctx_group": "a", "lr_mult": "0.5"}),
        old("null", "bn_gamma", []),
        old("null", "bn_beta", []),
        old("BatchNorm", "bn", [[0, 0], [1, 0], [2, 0]],
            {"fix_gamma": "False"}, {"wd_mult": "0", "gamma_lr_mult": "2"}),
        old("_MulScalar", "twice", [[3, 0]], {"scalar": "2"}),
        old("_Plus", "sum", [[4, 0], [3, 0]]),
        old("Crop", "crop", [[5, 0]], {"num_args": "1", "h_w": "(2, 3)",
                                      "center_crop": "True"}),
        old("SoftmaxActivation", "prob", [[6, 0]], {"mode": "channel"}),
        old("Reshape", "flat", [[7, 0]], {"shape": "(2, 6)"}),
        old("_zeros", "begin", [], {"shape": "(0, 6)"}),
        old("_Plus", "out", [[8, 0], [9, 0]]),
    ]
    g = {"nodes": nodes, "arg_nodes": [0, 1, 2], "heads": [[10, 0]]}
    put("fuzz_symbol_json", "legacy0x.json", json.dumps(g))


def load_script(name):
    """scripts/NAME.py as a module (the writers need numpy or PIL: run this
    script with Debian's /usr/bin/python3)."""
    path = os.path.join(ROOT, "..", "..", "scripts", name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_writer():
    """scripts/make_mxnet_params.py as a module."""
    return load_script("make_mxnet_params")


def mxnet_params_files():
    """{case: bytes} of MXNet-format files from the repo's independent
    writer (scripts/make_mxnet_params.py, which needs numpy)."""
    tmp = tempfile.mkdtemp()
    try:
        subprocess.run(["/usr/bin/python3",
                        os.path.join(ROOT, "..", "..", "scripts",
                                     "make_mxnet_params.py"), "write", tmp],
                       check=True)
        return {f[:-len(".params")]: open(os.path.join(tmp, f), "rb").read()
                for f in sorted(os.listdir(tmp))}
    finally:
        shutil.rmtree(tmp)


def ndarray_seeds(mxnet):
    golden = os.path.join(ROOT, "..", "io", "golden_v1.mxc")
    put("fuzz_ndarray_load", "golden_v1.mxc", open(golden, "rb").read())
    for case, data in mxnet.items():
        put("fuzz_ndarray_load", "mxnet_" + case, data)


def checkpoint_graph():
    """data (2, 3) -> FullyConnected(2) with parameters w and b."""
    nodes = [
        {"op": "null", "name": "data", "attrs": {"__shape__": "(2, 3)"},
         "inputs": []},
        {"op": "null", "name": "w", "inputs": []},
        {"op": "null", "name": "b", "inputs": []},
        {"op": "FullyConnected", "name": "fc",
         "attrs": {"num_hidden": "2"}, "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    ]
    return json.dumps({"nodes": nodes, "arg_nodes": [0, 1, 2],
                       "node_row_ptr": list(range(5)), "heads": [[3, 0, 0]],
                       "attrs": {"mxnet_version": ["int", 10900]}}).encode()


def checkpoint_seeds(mxnet):
    """A graph and its parameters: a 16-bit length, the JSON, the params."""
    g = checkpoint_graph()
    # The FullyConnected parameters, as MXNet v2 and legacy v0 write them
    # (the independent writer's list_bytes; float32 is dtype 0), then
    # arbitrary files of the writer's cases.
    mp = load_writer()
    fc = [("dense", 0, (2, 3)), ("dense", 0, (2,))]
    for version in (2, 0):
        params = mp.list_bytes(version, fc, ["arg:w", "arg:b"])
        put("fuzz_checkpoint", "fc_v%d" % version, u16(len(g)) + g + params)
    for case in ("dense_v2", "legacy_v0"):
        put("fuzz_checkpoint", case, u16(len(g)) + g + mxnet[case])


def predictor_seeds(mxnet):
    """flags, ndim, extents, a 16-bit length, the JSON, the params bytes:
    the predictor tests' model (scripts/make_predictor_model.py, batch 2),
    the FullyConnected graph of checkpoint_seeds, and a writer's case."""
    pm = load_script("make_predictor_model")
    import numpy as np
    g = json.dumps(pm.graph()).encode()
    params = pm.params_bytes(pm.params(np.random.default_rng(1)))
    for flags in (0x01, 0x06, 0x0b):
        put("fuzz_predictor", "conv_%02x" % flags,
            bytes([flags, 4, 2, 3, 6, 6]) + u16(len(g)) + g + params)
    fc = checkpoint_graph()
    fcp = load_writer().list_bytes(2, [("dense", 0, (2, 3)),
                                       ("dense", 0, (2,))], ["arg:w", "arg:b"])
    put("fuzz_predictor", "fc_v2", bytes([0, 2, 2, 3]) + u16(len(fc)) + fc + fcp)
    put("fuzz_predictor", "fc_legacy_v0",
        bytes([2, 2, 2, 3]) + u16(len(fc)) + fc + mxnet["legacy_v0"])
    # mxc's own array format (the golden file of tests/io): the reader of
    # params bytes in memory for that format.
    golden = open(os.path.join(ROOT, "..", "io", "golden_v1.mxc"), "rb").read()
    put("fuzz_predictor", "fc_mxc_golden",
        bytes([1, 2, 2, 3]) + u16(len(fc)) + fc + golden)


def idx_file(dims, code, payload):
    return struct.pack(">BBBB", 0, 0, code, len(dims)) + b"".join(
        struct.pack(">I", d) for d in dims) + payload


def idx_seeds():
    images = idx_file([5, 3, 2], 0x08, bytes(range(30)))
    labels = idx_file([5], 0x08, bytes([0, 1, 2, 3, 4]))
    for flags in (0x00, 0x07, 0x0a):
        put("fuzz_idx", "plain_%02x" % flags,
            bytes([1, flags]) + u16(len(images)) + images + labels)
    gz = gzip.compress(images, mtime=0)
    put("fuzz_idx", "gzip", bytes([2, 0x02]) + u16(len(gz)) + gz +
        gzip.compress(labels, mtime=0))
    floats = idx_file([2, 1, 2], 0x0D, struct.pack(">4f", 1, 2, 3, 4))
    put("fuzz_idx", "float", bytes([0, 0]) + u16(len(floats)) + floats +
        idx_file([2], 0x0C, struct.pack(">2i", 7, 9)))


def csv_seeds():
    data = b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n"
    labels = b"l\n0\n1\n0\n"
    # cols, batch, flags (1 header, 2 label file, 4.. last_batch), label_col+2,
    # parts (0 whole; (num_parts + 1) << 4 | (part_index + 1))
    put("fuzz_csv", "header_labelfile",
        bytes([3, 1, 0x03, 1, 0]) + u16(len(data)) + data + labels)
    put("fuzz_csv", "label_col", bytes([0, 1, 0x01, 2, 0]) + u16(len(data)) + data)
    put("fuzz_csv", "pad", bytes([0, 3, 0x00, 1, 0]) + u16(12) + b"1,2\n3,4\n5,6\n")
    put("fuzz_csv", "parts_labelfile",
        bytes([3, 1, 0x03, 1, 0x32]) + u16(len(data)) + data + labels)


def libsvm_seeds():
    text = b"1 0:0.5 3:1.5\n0 1:2 2:-1 # comment\n\n1 4:3e2\n"
    # features << 1, batch - 1, flags (1 one_based, 2.. last_batch), parts
    put("fuzz_libsvm", "zero_based", struct.pack(">I", 10 << 1) + bytes([1, 0, 0]) + text)
    put("fuzz_libsvm", "one_based", struct.pack(">I", 10 << 1) + bytes([2, 1, 0]) +
        b"1 1:1 5:2\n0 2:3\n")
    put("fuzz_libsvm", "parts", struct.pack(">I", 10 << 1) + bytes([0, 0, 0x42]) + text)


def op_invoke_seeds(n_ops):
    # op by index (u32, as fz_pick reads counts above 256), no parameters,
    # two 2x3 float32 inputs (inputs beyond the operator's count are
    # ignored), then the mode byte (plain, training, recorded).
    ones = struct.pack("<6f", 0.5, -1.0, 2.0, 0.25, 3.0, -0.75)
    inp = bytes([2, 2, 3, 0]) + ones
    for i in range(n_ops):
        mode = i % 4
        put("fuzz_op_invoke", "op%03d" % i,
            bytes([0]) + struct.pack(">I", i) + bytes([0]) +
            inp + inp + inp + bytes([mode]))


def recordio_seeds():
    ref = load_script("recordio_ref")
    with tempfile.TemporaryDirectory() as d:
        ref.write(d)
        for name in ("plain", "images"):
            rec = open(os.path.join(d, name + ".rec"), "rb").read()
            idx = open(os.path.join(d, name + ".idx"), "rb").read()
            put("fuzz_recordio", name + "_idx", bytes([1]) + u16(len(rec)) + rec + idx)
            put("fuzz_recordio", name, bytes([0]) + u16(len(rec)) + rec)


def image_seeds():
    ref = load_script("image_ref")
    with tempfile.TemporaryDirectory() as d:
        ref.write(d)
        for k, line in enumerate(open(os.path.join(d, "cases.txt"))):
            name, fname = line.split()[:2]
            data = open(os.path.join(d, fname), "rb").read()
            put("fuzz_image", name, bytes([k % 4]) + data)


def image_iter_seeds():
    ref = load_script("image_iter_ref")
    with tempfile.TemporaryDirectory() as d:
        ref.make(d)
        rec = open(os.path.join(d, "images.rec"), "rb").read()
        # flags, then one byte each (fz_pick): height, width, batch, threads
        for name, flags in (("plain", 0), ("color_aug", 0x1F)):
            head = bytes([flags, 7, 9, 2, 1])
            put("fuzz_image_iter", name, head + rec)
        # flags 0x61: color, a part byte (part 1 of 3), a mean_img file of
        # data_shape (3, 8, 10)
        mx = load_script("make_mxnet_params")
        mean = mx.list_bytes(2, [("array", mx.np.full((3, 8, 10), 100, mx.np.float32))],
                             ["mean_img"])
        head = bytes([0x61, 7, 9, 2, 1, 0x42])
        put("fuzz_image_iter", "mean_parts", head + u16(len(mean)) + mean + rec)


def dlpack_seeds():
    # device pick 0 (cpu), id byte 2 (= 0), ndim pick 4 (= 2), no ndim
    # override, dtype code, bits, lanes byte (< 230: 1), 12 shape extents,
    # flags (1 no shape, 2 strides, 4 offset, 8 no data), 12 strides.
    shape = bytes([2, 3] + [1] * 10)
    put("fuzz_dlpack", "f32_2x3",
        bytes([0, 2, 4, 0, 2, 32, 0]) + shape + bytes([0]) + bytes([1] * 12))
    put("fuzz_dlpack", "i64_strided",
        bytes([0, 2, 4, 0, 0, 64, 0]) + shape + bytes([2]) +
        bytes([3, 1] + [1] * 10))
    put("fuzz_dlpack", "u8_offset",
        bytes([0, 2, 3, 0, 1, 8, 0]) + shape + bytes([4]) + bytes([1] * 12) +
        bytes([4]))


def main():
    n_ops = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    symbol_json_seeds()
    mxnet = mxnet_params_files()
    ndarray_seeds(mxnet)
    checkpoint_seeds(mxnet)
    predictor_seeds(mxnet)
    idx_seeds()
    csv_seeds()
    libsvm_seeds()
    if n_ops:
        op_invoke_seeds(n_ops)
    dlpack_seeds()
    recordio_seeds()
    image_seeds()
    image_iter_seeds()


if __name__ == "__main__":
    main()
