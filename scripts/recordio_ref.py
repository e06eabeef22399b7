#!/usr/bin/python3
# Copyright 2026 The mxc Authors. Licensed under the Apache License 2.0.
"""An independent RecordIO writer and reader (MXNet's .rec/.idx format),
written from the format's description (core/io/recordio.h's comment, the
same facts as dmlc-core's recordio.h documents), not from mxc's code, for
tests/io/test_recordio.cc:

  recordio_ref.py write DIR     writes plain.rec/.idx and images.rec/.idx
                                with manifests plain.txt / images.txt
  recordio_ref.py check REC IDX MANIFEST
                                reads a file (written by mxc) with this
                                reader: exit 0 when its records and index
                                are exactly the manifest's, and its bytes are
                                exactly what this writer makes of them.
  recordio_ref.py pack LST ROOT PREFIX
                                packs the images an MXNet .lst lists
                                ("index<TAB>label...<TAB>relative path" per
                                line, paths under ROOT) into PREFIX.rec and
                                PREFIX.idx, the encoded files unchanged as
                                payloads, key and id = index: an independent
                                im2rec for the main job's image path
                                (scripts/train_images.sh, MXC_IMAGE_PACKER=ref).

Manifest lines: "key hexbytes" per record ("-" for an empty record), in
file order. images.txt has "key flag id id2 labels... | payload_hex" too,
so the test can check the image header parse.
"""
import io
import struct
import sys

MAGIC = 0xCED7230A


def pack_record(data):
    """Frames one record: split where an aligned word equals the magic."""
    out = bytearray()
    parts, start = [], 0
    for i in range(0, len(data) - len(data) % 4, 4):
        if struct.unpack_from("<I", data, i)[0] == MAGIC:
            parts.append(data[start:i])
            start = i + 4
    parts.append(data[start:])
    for n, part in enumerate(parts):
        if len(parts) == 1:
            flag = 0
        elif n == 0:
            flag = 1
        elif n == len(parts) - 1:
            flag = 3
        else:
            flag = 2
        out += struct.pack("<II", MAGIC, flag << 29 | len(part))
        out += part + b"\0" * (-len(part) % 4)
    return bytes(out)


def write_rec(path_rec, path_idx, records):
    """records: [(key, bytes)] -> the .rec and .idx files."""
    pos, lines = 0, []
    with open(path_rec, "wb") as f:
        for key, data in records:
            lines.append("%d\t%d\n" % (key, pos))
            b = pack_record(data)
            f.write(b)
            pos += len(b)
    with open(path_idx, "w") as f:
        f.writelines(lines)


def read_rec(path):
    """All records of a file, checking the framing strictly."""
    blob = open(path, "rb").read()
    pos, out = 0, []
    while pos < len(blob):
        start, data, first = pos, bytearray(), True
        while True:
            magic, lrec = struct.unpack_from("<II", blob, pos)
            assert magic == MAGIC, "bad magic at %d" % pos
            flag, n = lrec >> 29, lrec & ((1 << 29) - 1)
            assert flag in ((0, 1) if first else (2, 3)), "flag %d at %d" % (flag, pos)
            data += blob[pos + 8:pos + 8 + n]
            pos += 8 + n + (-n % 4)
            if flag in (0, 3):
                break
            data += struct.pack("<I", MAGIC)
            first = False
        out.append((start, bytes(data)))
    return out


def plain_records():
    """Records that exercise the framing: lengths around the padding,
    the magic at aligned offsets (split) and unaligned ones (not split)."""
    m = struct.pack("<I", MAGIC)
    recs = [bytes((k * 31 + j * 7) & 0xFF for j in range(n))
            for k, n in enumerate([0, 1, 2, 3, 4, 5, 7, 8, 13, 100, 4099])]
    recs += [m, m + b"tail", b"head" + m, b"ab" + m + b"cd", m + m,
             b"12345678" + m + b"x" + m + m + b"yz", b"\x0a" + m[:3]]
    return [(1000 + 3 * k, r) for k, r in enumerate(recs)]


def encode_image(k, fmt):
    """A small deterministic image encoded by PIL."""
    import numpy as np
    from PIL import Image
    h, w = 5 + k % 4, 7 + k % 3
    y, x, c = np.mgrid[0:h, 0:w, 0:3]
    px = ((x * 37 + y * 11 + c * 71 + k * 13) % 256).astype(np.uint8)
    img = Image.fromarray(px if k % 2 == 0 else px[:, :, 0])
    buf = io.BytesIO()
    img.save(buf, format=fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    return buf.getvalue()


def image_records():
    """(key, flag, id, id2, labels, payload): one label in the header
    (flag 0) or a label array after it (flag = count)."""
    out = []
    for k in range(6):
        labels = [float(k) + 0.5] if k % 3 == 0 else [k * 1.25 + j for j in range(k % 3 + 1)]
        flag = 0 if k % 3 == 0 else len(labels)
        payload = encode_image(k, "PNG" if k % 2 == 0 else "JPEG")
        out.append((k, flag, k * 7 + (1 << 40), 2**64 - 1 - k, labels, payload))
    return out


def image_bytes(flag, id1, id2, labels, payload):
    label = labels[0] if flag == 0 else 0.0
    head = struct.pack("<IfQQ", flag, label, id1, id2)
    extra = b"".join(struct.pack("<f", v) for v in labels) if flag else b""
    return head + extra + payload


def hexs(b):
    return b.hex() if b else "-"


def write(d):
    plain = plain_records()
    write_rec(d + "/plain.rec", d + "/plain.idx", plain)
    with open(d + "/plain.txt", "w") as f:
        for key, r in plain:
            f.write("%d %s\n" % (key, hexs(r)))
    imgs = image_records()
    write_rec(d + "/images.rec", d + "/images.idx",
              [(k, image_bytes(fl, a, b, ls, p)) for k, fl, a, b, ls, p in imgs])
    with open(d + "/images.txt", "w") as f:
        for k, fl, a, b, ls, p in imgs:
            f.write("%d %d %d %d %s | %s\n" % (k, fl, a, b, " ".join(repr(v) for v in ls), p.hex()))


def parse_manifest(path):
    out = []
    for line in open(path):
        key, hx = line.split()[:2]
        out.append((int(key), b"" if hx == "-" else bytes.fromhex(hx)))
    return out


def check(rec, idx, manifest):
    want = parse_manifest(manifest)
    got = read_rec(rec)
    if [r for _, r in got] != [r for _, r in want]:
        print("records differ from the manifest", file=sys.stderr)
        return 1
    lines = [l.split() for l in open(idx) if l.strip()]
    if [(int(k), int(o)) for k, o in lines] != [(k, p) for (k, _), (p, _) in zip(want, got)]:
        print("index differs: %r" % lines[:4], file=sys.stderr)
        return 1
    expect = b"".join(pack_record(r) for _, r in want)
    if open(rec, "rb").read() != expect:
        print("bytes differ from this writer's", file=sys.stderr)
        return 1
    return 0


def pack(lst, root, prefix):
    records = []
    with open(lst) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 3:
                continue
            index, labels = int(cols[0]), [float(v) for v in cols[1:-1]]
            with open(root + "/" + cols[-1], "rb") as img:
                payload = img.read()
            flag = 0 if len(labels) == 1 else len(labels)
            records.append((index, image_bytes(flag, index, 0, labels, payload)))
    write_rec(prefix + ".rec", prefix + ".idx", records)
    print("packed %d records into %s.rec" % (len(records), prefix))


def main(argv):
    if len(argv) == 3 and argv[1] == "write":
        write(argv[2])
        return 0
    if len(argv) == 5 and argv[1] == "check":
        return check(argv[2], argv[3], argv[4])
    if len(argv) == 5 and argv[1] == "pack":
        pack(argv[2], argv[3], argv[4])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
