#!/usr/bin/python3
# Copyright 2026 The mxc Authors. Licensed under the Apache License 2.0.
"""Writes Fashion-MNIST as a folder of PNG images, one subfolder per class
(the layout mxc-im2rec --list, like MXNet's im2rec, reads):

  make_fmnist_images.py OUT [--data-dir DIR] [--limit N]

OUT/train/<class>/<index>.png and OUT/test/<class>/<index>.png, class
folders named 0_tshirt ... 9_boot so that sorting them gives labels 0..9.
Reads the IDX files (plain or gzip) of DIR (default: Debian's
dataset-fashion-mnist) with numpy; PIL encodes the PNGs.
"""
import argparse
import gzip
import os
import struct

import numpy as np
from PIL import Image

CLASSES = ["0_tshirt", "1_trouser", "2_pullover", "3_dress", "4_coat",
           "5_sandal", "6_shirt", "7_sneaker", "8_bag", "9_boot"]


def read_idx(path):
    opener = gzip.open if os.path.exists(path + ".gz") else open
    with opener(path + ".gz" if opener is gzip.open else path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack_from(">HBB", data, 0)
    assert zero == 0 and dtype == 0x08, "expected an unsigned-byte IDX file"
    dims = struct.unpack_from(">%dI" % ndim, data, 4)
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def write_split(out, data_dir, split, prefix, limit):
    images = read_idx(os.path.join(data_dir, prefix + "-images-idx3-ubyte"))
    labels = read_idx(os.path.join(data_dir, prefix + "-labels-idx1-ubyte"))
    n = len(labels) if limit is None else min(limit, len(labels))
    for c in CLASSES:
        os.makedirs(os.path.join(out, split, c), exist_ok=True)
    for i in range(n):
        path = os.path.join(out, split, CLASSES[labels[i]], "%05d.png" % i)
        Image.fromarray(images[i]).save(path)
    print("make_fmnist_images: %d %s images in %s" % (n, split, os.path.join(out, split)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--limit", type=int, default=None)
    a = ap.parse_args()
    write_split(a.out, a.data_dir, "train", "train", a.limit)
    write_split(a.out, a.data_dir, "test", "t10k", a.limit)


if __name__ == "__main__":
    main()
