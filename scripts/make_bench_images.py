#!/usr/bin/python3
# Copyright 2026 The mxc Authors. Licensed under the Apache License 2.0.
"""Writes the JPEG data set of bench/data into a cache folder (never the
tree) and packs it with mxc-im2rec:

  make_bench_images.py OUT [--count N] [--seed S] [--quality Q]
                           [--im2rec PATH]

OUT/images/<class>/<index>.jpg: N (default 2000) synthetic color images in
10 class folders (image i is in class i % 10), laid out as ImageNet is
after im2rec --resize 256: the shorter side 256 pixels, the longer one
uniform in 256..384, landscape or portrait; JPEG quality Q (default 90,
4:2:0 subsampling, as PIL writes it). With --im2rec, the same files are
listed and packed as they are (mxc-im2rec's pass-through, no re-encoding)
into OUT/bench.lst, OUT/bench.rec and OUT/bench.idx, so mxc's iterator and
torchvision's ImageFolder decode the same bytes.

The content is synthetic, from a fixed seed (numpy's PCG64): a smooth
background (a coarse grid of random colors upscaled bicubically), a few
filled ellipses and rectangles with hard edges, and Gaussian noise of
sigma 10 for texture. The noise matters: decode time grows with the
entropy a JPEG holds, and a purely smooth image would compress to a few
kB and decode faster than a photograph does (these files average about
29 kB, in the range of ImageNet photographs at this size and quality).

OUT/stamp.txt records the parameters; when it matches and every output is
there, the script returns at once.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
from PIL import Image, ImageDraw

CLASSES = 10
SHORT = 256
LONG_MAX = 384
VERSION = 1  # bump when the images change for the same parameters


def stamp_text(a):
    return "version=%d count=%d seed=%d quality=%d packed=%d\n" % (
        VERSION, a.count, a.seed, a.quality, a.im2rec is not None)


def up_to_date(a):
    path = os.path.join(a.out, "stamp.txt")
    if not os.path.exists(path):
        return False
    with open(path) as f:
        if f.read() != stamp_text(a):
            return False
    if a.im2rec is None:
        return True
    return all(os.path.exists(os.path.join(a.out, "bench" + ext))
               for ext in (".rec", ".idx", ".lst"))


def make_image(rng):
    """One synthetic photograph-like image (uint8 H x W x 3)."""
    long_side = int(rng.integers(SHORT, LONG_MAX + 1))
    w, h = (long_side, SHORT) if rng.random() < 0.5 else (SHORT, long_side)
    cells = (int(rng.integers(3, 9)), int(rng.integers(3, 9)), 3)
    grid = rng.integers(0, 256, size=cells, dtype=np.uint8)
    img = Image.fromarray(grid, "RGB").resize((w, h), Image.BICUBIC)
    draw = ImageDraw.Draw(img)
    for _ in range(int(rng.integers(2, 7))):
        x0, x1 = sorted(rng.integers(0, w, 2).tolist())
        y0, y1 = sorted(rng.integers(0, h, 2).tolist())
        color = tuple(rng.integers(0, 256, 3).tolist())
        shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
        shape([x0, y0, x1 + 8, y1 + 8], fill=color)
    noisy = np.asarray(img, np.float32) + rng.normal(0, 10, (h, w, 3))
    return np.clip(noisy + 0.5, 0, 255).astype(np.uint8)


def write_images(a):
    root = os.path.join(a.out, "images")
    for c in range(CLASSES):
        os.makedirs(os.path.join(root, "class%d" % c), exist_ok=True)
    rng = np.random.default_rng(a.seed)
    total = 0
    for i in range(a.count):
        path = os.path.join(root, "class%d" % (i % CLASSES), "%05d.jpg" % i)
        Image.fromarray(make_image(rng)).save(path, quality=a.quality)
        total += os.path.getsize(path)
    print("make_bench_images: %d JPEGs (%.1f kB on average) in %s"
          % (a.count, total / 1024.0 / max(a.count, 1), root))


def pack(a):
    prefix = os.path.join(a.out, "bench")
    root = os.path.join(a.out, "images")
    subprocess.run([a.im2rec, "--list", prefix, root], check=True)
    subprocess.run([a.im2rec, prefix, root], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--im2rec", default=None,
                    help="mxc-im2rec binary: pack OUT/bench.rec and .idx")
    a = ap.parse_args()
    if a.count < 1 or not 1 <= a.quality <= 100:
        sys.exit("make_bench_images: --count >= 1 and --quality 1..100")
    if up_to_date(a):
        return
    os.makedirs(a.out, exist_ok=True)
    stamp = os.path.join(a.out, "stamp.txt")
    if os.path.exists(stamp):
        os.remove(stamp)  # a run cut short must not look complete
    write_images(a)
    if a.im2rec is not None:
        pack(a)
    with open(stamp, "w") as f:
        f.write(stamp_text(a))


if __name__ == "__main__":
    main()
