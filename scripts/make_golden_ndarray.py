#!/usr/bin/python3
"""Writes tests/io/golden_v1.mxc with numpy and zlib, independently of mxc's
C writer, following docs/ndarray-format.md. The C test loads it and checks
the values against the same formulas, and checks that mxc writes the same
bytes. Run with Debian's interpreter: /usr/bin/python3 (python3-numpy).

Usage: /usr/bin/python3 scripts/make_golden_ndarray.py tests/io/golden_v1.mxc
"""
import struct
import sys
import zlib

import numpy as np

# mxc dtype codes (MXNet's type flags).
DTYPES = {np.float32: 0, np.float64: 1, np.float16: 2, np.uint8: 3,
          np.int32: 4, np.int8: 5, np.int64: 6, np.bool_: 7}


def entry(name, arr):
    body = struct.pack("<I", len(name.encode())) + name.encode()
    body += struct.pack("<III", 0, DTYPES[arr.dtype.type], arr.ndim)
    body += b"".join(struct.pack("<q", d) for d in arr.shape)
    data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
    body += struct.pack("<Q", len(data)) + data
    return body + struct.pack("<I", zlib.crc32(body))


def main(path):
    arrays = [
        ("f32", (np.arange(12, dtype=np.float32) * np.float32(0.5)
                 - np.float32(1)).reshape(3, 4)),
        ("f64", (np.arange(8, dtype=np.float64) ** 2 / 3).reshape(2, 2, 2)),
        ("i32", np.arange(5, dtype=np.int32) * np.int32(-1000003)),
        ("", np.array(True)),
    ]
    head = b"MXCNDARR" + struct.pack("<IIQ", 1, 0, len(arrays))
    out = head + struct.pack("<I", zlib.crc32(head))
    out += b"".join(entry(n, a) for n, a in arrays)
    with open(path, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main(sys.argv[1])
