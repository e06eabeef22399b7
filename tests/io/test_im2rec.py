#!/usr/bin/python3
# Copyright 2026 The mxc Authors. Licensed under the Apache License 2.0.
"""mxc-im2rec end to end: a folder of class subfolders (PNG and JPEG made
by PIL) -> --list -> .lst in MXNet's format -> pack -> .rec/.idx read by the
independent reader (scripts/recordio_ref.py): every image present once
with its folder's label, pass-through bytes identical to the files,
--resize giving the asked shorter side; an unreadable image skipped with
its path named and exit status 2; bad usage exit status 2 with usage.

  test_im2rec.py IM2REC   (from the repository root, as Bazel runs it)
"""
import io
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image

sys.path.insert(0, "scripts")
import recordio_ref  # noqa: E402


def make_tree(root):
    files = {}
    rng = np.random.RandomState(1)
    for label, cls in enumerate(["bird", "cat", "dog"]):
        os.makedirs(os.path.join(root, cls))
        for k in range(4):
            h, w = 10 + k, 16 - k
            img = Image.fromarray(rng.randint(0, 256, (h, w, 3)).astype(np.uint8))
            name = "%s/%d.%s" % (cls, k, "png" if k % 2 else "jpg")
            img.save(os.path.join(root, name), quality=90)
            files[name] = label
    with open(os.path.join(root, "cat", "notes.txt"), "w") as f:
        f.write("not an image\n")
    return files


def records(prefix):
    out = {}
    for _, r in recordio_ref.read_rec(prefix + ".rec"):
        flag, label, idx, _ = struct.unpack_from("<IfQQ", r, 0)
        assert flag == 0, flag
        out[idx] = (label, r[24:])
    return out


def check(ok, what):
    if not ok:
        print("FAILED: " + what)
        sys.exit(1)


def main(tool):
    with tempfile.TemporaryDirectory() as d:
        root, prefix = os.path.join(d, "imgs"), os.path.join(d, "set")
        files = make_tree(root)
        run = lambda *a: subprocess.run([tool, *a], capture_output=True, text=True)
        r = run("--list", "--shuffle", "--seed", "3", prefix, root)
        check(r.returncode == 0, "list: " + r.stderr)
        lst = [l.rstrip("\n").split("\t") for l in open(prefix + ".lst")]
        check(sorted(l[2] for l in lst) == sorted(files), "list names")
        check(all(files[l[2]] == int(l[1]) for l in lst), "list labels")
        check([int(l[0]) for l in lst] == list(range(len(files))), "indices")
        r = run(prefix, root)
        check(r.returncode == 0, "pack: " + r.stderr)
        recs = records(prefix)
        check(len(recs) == len(files), "record count")
        for idx, label, name in ((int(a), float(b), c) for a, b, c in lst):
            raw = open(os.path.join(root, name), "rb").read()
            check(recs[idx] == (label, raw), "pass-through record %d" % idx)
        idx_lines = [l.split() for l in open(prefix + ".idx")]
        check(len(idx_lines) == len(files), "index lines")
        # The independent packer (scripts/train_images.sh with
        # MXC_IMAGE_PACKER=ref) writes the same bytes from the same list.
        recordio_ref.pack(prefix + ".lst", root, prefix + "-ref")
        for ext in (".rec", ".idx"):
            same = open(prefix + ext, "rb").read() == open(prefix + "-ref" + ext, "rb").read()
            check(same, "independent packer's %s equals mxc-im2rec's" % ext)
        r = run("--resize", "20", "--quality", "80", prefix, root)
        check(r.returncode == 0, "resize: " + r.stderr)
        for idx, (label, payload) in records(prefix).items():
            img = Image.open(io.BytesIO(payload))
            check(img.format == "JPEG" and min(img.size) == 20, "resized %d" % idx)
        with open(os.path.join(root, "dog", "9.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\ntruncated")
        with open(prefix + ".lst", "a") as f:
            f.write("99\t2\tdog/9.png\n")
        r = run(prefix, root)
        check(r.returncode == 2 and "dog/9.png" in r.stderr, "skip: %d %s" % (r.returncode, r.stderr))
        check(len(records(prefix)) == len(files), "skipped record absent")
        r = run("--resize", "x", prefix, root)
        check(r.returncode == 2 and "usage" in r.stderr, "bad option")
        r = run("--list", prefix, os.path.join(d, "missing"))
        check(r.returncode == 1 and "class subfolders" in r.stderr, "missing root")
    print("PASSED")


if __name__ == "__main__":
    main(sys.argv[1])
