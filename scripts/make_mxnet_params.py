#!/usr/bin/python3
"""Apache MXNet NDArray list files (.params), written and checked with numpy
and struct from the format description in docs/mxnet-format.md, without
mxc's C code. tests/io uses it both ways:

  write OUTDIR        writes one file per case of CASES (OUTDIR/NAME.params);
                      mxc must read each and find the values of VALUES below
  check CASE FILE     parses FILE (written by mxc) with this script's own
                      reader and checks it holds exactly case CASE; exit 0
  dump FILE           prints what this script's reader finds in FILE

Every value is a function of the array's position k in its file and the
element index i (value() below); tests/io/test_mxnet_format.cc computes the
same function, so neither side copies the other's data.

Run with Debian's interpreter: /usr/bin/python3 (python3-numpy).
"""
import struct
import sys

import numpy as np

LIST_MAGIC = 0x112
V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
DENSE, ROW_SPARSE, CSR = 0, 1, 2
CPU = 1

# MXNet type flags -> numpy dtypes (bfloat16 is handled by hand: 12).
NP = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
      5: np.int8, 6: np.int64, 7: np.bool_}
BF16 = 12
ITEMSIZE = {0: 4, 1: 8, 2: 2, 3: 1, 4: 4, 5: 1, 6: 8, 7: 1, 12: 2}


def value(k, i, dtype):
    """Element i of the k-th array of a file: small integers, exact in
    every dtype (bool: every third element is true)."""
    v = (i * 7 + k * 3) % 23
    if dtype == 7:
        return (i + k) % 3 == 0
    if dtype == 3:
        return v
    return v - 11


def values(k, n, dtype):
    return [value(k, i, dtype) for i in range(n)]


def to_bytes(vals, dtype):
    if dtype == BF16:  # the high half of the float32 bits
        bits = np.array(vals, dtype=np.float32).view(np.uint32) >> 16
        return bits.astype("<u2").tobytes()
    return np.array(vals, dtype=NP[dtype]).astype(
        np.dtype(NP[dtype]).newbyteorder("<")).tobytes()


def from_bytes(raw, dtype):
    if dtype == BF16:
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).tolist()
    return np.frombuffer(raw, dtype=np.dtype(NP[dtype]).newbyteorder("<")).tolist()


def prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


# ---- what each case holds ----------------------------------------------
#
# A dense array: ("dense", dtype, shape). Its values: values(k, size).
# A dense array with given values: ("array", numpy array of a dtype in NP);
#   other scripts (scripts/make_resnet.py) write real weights this way.
# A none array (MXNet's placeholder without shape): ("none",).
# csr: ("csr", dtype, (rows, cols), index_dtype, indptr, indices); its
#   values: values(k, nnz). Empty indptr ([]) is an array never written.
# row_sparse: ("rsp", dtype, shape, index_dtype, row indices); its values:
#   values(k, len(rows) * prod(shape[1:])).

ALL_DTYPES = [
    ("dense", 0, (2, 3)), ("dense", 1, (4,)), ("dense", 2, (3, 2)),
    ("dense", 3, (5,)), ("dense", 4, (2, 2)), ("dense", 5, (6,)),
    ("dense", 6, (3,)), ("dense", 7, (4,)), ("dense", 12, (2, 1, 2)),
    ("dense", 0, (0, 3)), ("dense", 0, (1, 1, 1, 1, 1, 1, 1, 2)),
]
SPARSE = [
    ("csr", 0, (4, 5), 6, [0, 2, 2, 3, 5], [1, 3, 0, 2, 4]),
    ("rsp", 1, (6, 3), 6, [1, 4]),
    ("csr", 2, (3, 4), 4, [0, 1, 1, 3], [2, 0, 3]),
    ("rsp", 0, (5, 2, 2), 4, [0, 2, 4]),
    ("csr", 0, (2, 3), 6, [0, 0, 0], []),
    ("rsp", 0, (3, 2), 6, []),
]


def prefixed(n, aux_from):
    return ["%s:p%d" % ("aux" if i >= aux_from else "arg", i)
            for i in range(n)]


# name -> (array version, arrays, names or None)
CASES = {
    "dense_v2": (2, ALL_DTYPES, prefixed(len(ALL_DTYPES), 9)),
    "dense_v1": (1, ALL_DTYPES[:9], ["w%d" % i for i in range(9)]),
    "legacy_v0": (0, [("dense", 0, (128,)), ("dense", 1, (2, 3)),
                      ("dense", 4, (1, 2, 3))], None),
    "dense_v3": (3, [("dense", 0, ()), ("dense", 6, (2, 2)),
                     ("dense", 2, (0,))], ["scalar", "m", "empty"]),
    "unnamed_v2": (2, ALL_DTYPES[:3], None),
    "sparse_v2": (2, SPARSE[:4], ["arg:c64", "arg:r64", "arg:c32", "aux:r32"]),
    "sparse_edge_v2": (2, SPARSE[4:] + [("csr", 0, (3, 2), 6, [], [])],
                       ["csr0", "rsp0", "csr_unwritten"]),
    "none_v2": (2, [("dense", 0, (2,)), ("none",), ("dense", 4, (1,))],
                ["a", "b", "c"]),
    "none_v0": (0, [("none",), ("dense", 3, (3,))], ["x", "y"]),
    "none_v3": (3, [("none",), ("dense", 0, (2,))], ["x", "y"]),
    "empty_list": (2, [], None),
}


# ---- writer --------------------------------------------------------------

def shape_bytes(version, dims):
    if version == 0:
        return struct.pack("<I", len(dims)) + b"".join(
            struct.pack("<I", d) for d in dims)
    return struct.pack("<i", len(dims)) + b"".join(
        struct.pack("<q", d) for d in dims)


def head(version, stype):
    if version == 0:
        return b""  # the shape's ndim comes first
    if version == 1:
        return struct.pack("<I", V1)
    return struct.pack("<Ii", V3 if version == 3 else V2, stype)


def none_bytes(version):
    if version == 3:
        return head(3, DENSE) + struct.pack("<i", -1)
    return head(version, DENSE) + shape_bytes(version, ())


def dense_bytes(version, k, dtype, shape):
    out = head(version, DENSE) + shape_bytes(version, shape)
    out += struct.pack("<iii", CPU, 0, dtype)
    return out + to_bytes(values(k, prod(shape), dtype), dtype)


def sparse_bytes(k, spec):
    kind, dtype, shape, idt = spec[:4]
    if kind == "csr":
        aux = [spec[4], spec[5]]
        nnz = len(spec[5])
        sshape = (nnz,)
    else:
        aux = [spec[4]]
        nnz = len(spec[4])
        sshape = (nnz,) + tuple(shape[1:])
    out = head(2, CSR if kind == "csr" else ROW_SPARSE)
    out += shape_bytes(2, sshape) + shape_bytes(2, shape)
    out += struct.pack("<iii", CPU, 0, dtype)
    for a in aux:
        out += struct.pack("<i", idt) + shape_bytes(2, (len(a),))
    out += to_bytes(values(k, prod(sshape), dtype), dtype)
    for a in aux:
        out += to_bytes(a, idt)
    return out


def given_bytes(version, a):
    """A dense array with the values of numpy array a."""
    flag = [f for f, t in NP.items() if np.dtype(t) == a.dtype]
    if not flag:
        raise ValueError("no MXNet type flag for numpy dtype %s" % a.dtype)
    out = head(version, DENSE) + shape_bytes(version, a.shape)
    out += struct.pack("<iii", CPU, 0, flag[0])
    return out + to_bytes(a.ravel(), flag[0])


def array_bytes(version, k, spec):
    if spec[0] == "none":
        return none_bytes(version)
    if spec[0] == "array":
        return given_bytes(version, spec[1])
    if spec[0] == "dense":
        return dense_bytes(version, k, spec[1], spec[2])
    return sparse_bytes(k, spec)


def list_bytes(version, arrays, names):
    out = struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))
    out += b"".join(array_bytes(version, k, a) for k, a in enumerate(arrays))
    names = names or []
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n.encode())) + n.encode()
    return out


# ---- reader (independent of mxc) -------------------------------------------

class Reader:
    def __init__(self, raw):
        self.raw, self.pos = raw, 0

    def take(self, n):
        if self.pos + n > len(self.raw):
            raise ValueError("truncated at %d" % self.pos)
        b = self.raw[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def shape(self):
        (ndim,) = self.unpack("<i")
        if ndim < 0:
            return None
        return tuple(self.unpack("<%dq" % ndim)) if ndim else ()


def read_array(r):
    (magic,) = r.unpack("<I")
    if magic not in (V1, V2, V3):
        dims = tuple(r.unpack("<%dI" % magic)) if magic else ()
        return read_dense_rest(r, dims, 0)
    version = {V1: 1, V2: 2, V3: 3}[magic]
    if version == 1:
        return read_dense_rest(r, r.shape(), 1)
    (stype,) = r.unpack("<i")
    if stype == DENSE:
        return read_dense_rest(r, r.shape(), version)
    sshape, shape = r.shape(), r.shape()
    _, _, dtype = r.unpack("<iii")
    auxes = []
    for _ in range(2 if stype == CSR else 1):
        (idt,) = r.unpack("<i")
        auxes.append((idt, r.shape()))
    data = from_bytes(r.take(prod(sshape) * ITEMSIZE[dtype]), dtype)
    aux = [from_bytes(r.take(prod(s) * ITEMSIZE[t]), t) for t, s in auxes]
    kind = "csr" if stype == CSR else "rsp"
    return (kind, dtype, shape, auxes[0][0]) + tuple(aux) + (data,)


def read_dense_rest(r, shape, version):
    if shape is None or (version < 3 and shape == ()):
        return ("none",)
    _, _, dtype = r.unpack("<iii")
    data = from_bytes(r.take(prod(shape) * ITEMSIZE[dtype]), dtype)
    return ("dense", dtype, shape, data)


def read_list(raw):
    r = Reader(raw)
    magic, _, n = r.unpack("<QQQ")
    if magic != LIST_MAGIC:
        raise ValueError("bad list magic")
    arrays = [read_array(r) for _ in range(n)]
    (n_names,) = r.unpack("<Q")
    names = []
    for _ in range(n_names):
        (ln,) = r.unpack("<Q")
        names.append(r.take(ln).decode())
    if r.pos != len(raw):
        raise ValueError("%d trailing bytes" % (len(raw) - r.pos))
    return arrays, names


def expected(k, spec):
    """What read_array returns for spec as the k-th array."""
    if spec[0] == "none":
        return spec
    if spec[0] == "dense":
        _, dtype, shape = spec
        return ("dense", dtype, tuple(shape),
                from_bytes(to_bytes(values(k, prod(shape), dtype), dtype), dtype))
    kind, dtype, shape, idt = spec[:4]
    nnz = len(spec[-1])
    n = nnz if kind == "csr" else nnz * prod(shape[1:])
    vals = from_bytes(to_bytes(values(k, n, dtype), dtype), dtype)
    return (kind, dtype, tuple(shape), idt) + tuple(spec[4:]) + (vals,)


def check(case, path):
    _, arrays, names = CASES[case]
    with open(path, "rb") as f:
        got, got_names = read_list(f.read())
    want = [expected(k, a) for k, a in enumerate(arrays)]
    ok = got == want and got_names == (names or [])
    if not ok:
        print("mismatch in %s (case %s):\n got  %r %r\n want %r %r" %
              (path, case, got, got_names, want, names or []))
    return ok


def main(argv):
    if argv[1] == "write":
        for name, (version, arrays, names) in CASES.items():
            with open("%s/%s.params" % (argv[2], name), "wb") as f:
                f.write(list_bytes(version, arrays, names))
        return 0
    if argv[1] == "check":
        return 0 if check(argv[2], argv[3]) else 1
    if argv[1] == "dump":
        with open(argv[2], "rb") as f:
            print(read_list(f.read()))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
