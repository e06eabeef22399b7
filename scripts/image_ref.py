#!/usr/bin/python3
# Copyright 2026 The mxc Authors. Licensed under the Apache License 2.0.
"""Images encoded and decoded by PIL (Debian's python3-pil) for
tests/io/test_image.cc:

  image_ref.py write DIR

writes one encoded file per case (DIR/NAME.png or .jpg) and what PIL
decodes from it (DIR/NAME.C.raw: height x width x C bytes, for C = 1
and 3), plus DIR/cases.txt: "NAME FILE HEIGHT WIDTH TOL1 TOL3" per case,
where TOLc is the largest difference per pixel the test allows for C
channels: 0 everywhere today (libjpeg-turbo decodes JPEG for PIL too;
PNG samples are exact and both sides use ITU-R 601 luma for gray).
"""
import io
import os
import sys

import numpy as np
from PIL import Image


def pattern(h, w, c, k):
    y, x, ch = np.mgrid[0:h, 0:w, 0:c]
    return ((x * 29 + y * 13 + ch * 83 + k * 7 + (x * y) % 17) % 256).astype(np.uint8)


def cases():
    """(name, PIL image, format, save options, tol gray, tol rgb)."""
    rgb = Image.fromarray(pattern(21, 34, 3, 1))
    gray = Image.fromarray(pattern(17, 9, 1, 2)[:, :, 0])
    rgba = Image.fromarray(np.concatenate(
        [pattern(8, 8, 3, 3), np.full((8, 8, 1), 255, np.uint8)], axis=2))
    pal = rgb.convert("P", palette=Image.ADAPTIVE, colors=16)
    g16 = Image.fromarray((pattern(6, 5, 1, 4)[:, :, 0].astype(np.uint16) * 257), "I;16")
    # Color -> gray: PIL is asked to decode JPEG straight to gray (draft),
    # libjpeg's own conversion, as TurboJPEG's; PNG uses 601 luma.
    return [
        ("png_rgb", rgb, "PNG", {}, 0, 0),
        ("png_gray", gray, "PNG", {}, 0, 0),
        ("png_rgba_opaque", rgba, "PNG", {}, 0, 0),
        ("png_palette", pal, "PNG", {}, 0, 0),
        ("png_gray16", g16, "PNG", {}, 0, 0),
        ("jpg_rgb420", rgb, "JPEG", {"quality": 90}, 0, 0),
        ("jpg_rgb444", rgb, "JPEG", {"quality": 95, "subsampling": 0}, 0, 0),
        ("jpg_gray", gray, "JPEG", {"quality": 90}, 0, 0),
        ("jpg_progressive", rgb, "JPEG", {"quality": 80, "progressive": True}, 0, 0),
    ]


def decoded(data, fmt, channels):
    img = Image.open(io.BytesIO(data))
    if fmt == "JPEG" and channels == 1:
        img.draft("L", img.size)
    if img.mode in ("I", "I;16", "I;16B"):  # 16-bit gray ("I" once opened)
        a = (np.asarray(img).astype(np.uint32) + 128) // 257  # to 8 bits, rounded
        img = Image.fromarray(a.astype(np.uint8))
    mode = "L" if channels == 1 else "RGB"
    return np.asarray(img.convert(mode), dtype=np.uint8)


def write(d):
    lines = []
    for name, img, fmt, opts, tol1, tol3 in cases():
        buf = io.BytesIO()
        img.save(buf, format=fmt, **opts)
        data = buf.getvalue()
        fname = name + (".png" if fmt == "PNG" else ".jpg")
        with open(os.path.join(d, fname), "wb") as f:
            f.write(data)
        for c in (1, 3):
            px = decoded(data, fmt, c)
            px.tofile(os.path.join(d, "%s.%d.raw" % (name, c)))
        h, w = px.shape[:2]
        lines.append("%s %s %d %d %d %d\n" % (name, fname, h, w, tol1, tol3))
    with open(os.path.join(d, "cases.txt"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        write(sys.argv[2])
        sys.exit(0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
