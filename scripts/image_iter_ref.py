#!/usr/bin/python3
# Copyright 2026 The mxc Authors. Licensed under the Apache License 2.0.
"""A numpy reference of the image record iterator (core/io/image_iter.h,
the augmentation defined in core/io/image_aug.h), independent of mxc's C
code: its own Philox4x32-10, epoch order, bilinear resize, rotation,
crop, mirror, jitter and normalization, with PIL decoding the images.

  image_iter_ref.py make DIR
      writes DIR/images.rec (+ .idx): 23 PNG/JPEG image records of
      different sizes, gray and color; record i has labels (i, i + 0.5)
      (flag 2) when i % 4 == 3, else the single label i (flag 0)
  image_iter_ref.py batches REC OUTPREFIX key=value ...
      writes the epoch's batches as OUTPREFIX.data / .label (float32) and
      OUTPREFIX.pad (text: the pad of each batch), for the iterator
      parameters given (MXNet names, as mxc takes them) plus epoch=N;
      mean_img=FILE subtracts the mean image of FILE (an MXNet NDArray
      list, read by make_mxnet_params.py's own reader)
  image_iter_ref.py mean REC OUTFILE key=value ...
      writes the mean image mxc computes for mean_img (core/io/
      image_mean.h): every record put through the deterministic steps
      (resize, pad, scale-up, centre crop; no random step, no
      normalization), averaged in float64, rounded to float32; saved as an
      MXNet NDArray list with one array named "mean_img" (the independent
      writer of make_mxnet_params.py)
"""
import io
import math
import os
import struct
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recordio_ref  # noqa: E402  (the independent RecordIO writer/reader)
import make_mxnet_params  # noqa: E402  (the independent NDArray list format)

M32 = 0xFFFFFFFF
AUG_TAG = 0x41554721


def philox(ctr, key):
    c = list(ctr)
    k0, k1 = key
    for _ in range(10):
        p0 = 0xD2511F53 * c[0]
        p1 = 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & M32, p1 & M32,
             ((p0 >> 32) ^ c[3] ^ k1) & M32, p0 & M32]
        k0 = (k0 + 0x9E3779B9) & M32
        k1 = (k1 + 0xBB67AE85) & M32
    return c


def order(n, shuffle, seed, epoch):
    perm = list(range(n))
    if not shuffle:
        return perm
    key = (seed & M32, seed >> 32)
    for i in range(n - 1, 0, -1):
        r = philox((i & M32, i >> 32, epoch & M32, epoch >> 32), key)
        j = (r[0] | r[1] << 32) % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def draws(seed, epoch, index):
    key = (seed & M32, (seed >> 32) ^ AUG_TAG)
    r = []
    for b in range(2):
        r += philox((index & M32, index >> 32, epoch & M32, b), key)
    return [np.float32((w >> 8) / 16777216.0) for w in r[:7]]


def src_coord(n_out, n_in):
    i = np.arange(n_out, dtype=np.float32)
    s = (i + np.float32(0.5)) * np.float32(n_in) / np.float32(n_out) - np.float32(0.5)
    s = np.clip(s, np.float32(0), np.float32(n_in - 1))
    i0 = s.astype(np.int64)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, (s - i0.astype(np.float32)).astype(np.float32)


def resize(img, h, w):
    y0, y1, ty = src_coord(h, img.shape[0])
    x0, x1, tx = src_coord(w, img.shape[1])
    tx = tx[None, :, None]
    top = (1 - tx) * img[y0][:, x0] + tx * img[y0][:, x1]
    bot = (1 - tx) * img[y1][:, x0] + tx * img[y1][:, x1]
    ty = ty[:, None, None]
    return ((1 - ty) * top + ty * bot).astype(np.float32)


def rotate(img, deg, fill):
    h, w, c = img.shape
    a = np.float32(deg) * np.float32(math.pi / 180.0)
    ca, sa = np.cos(a, dtype=np.float32), np.sin(a, dtype=np.float32)
    cy, cx = np.float32((h - 1) * 0.5), np.float32((w - 1) * 0.5)
    i, j = np.mgrid[0:h, 0:w].astype(np.float32)
    dy, dx = i - cy, j - cx
    sy, sx = ca * dy - sa * dx + cy, sa * dy + ca * dx + cx
    out = np.full(img.shape, np.float32(fill), np.float32)
    inside = (sy >= 0) & (sx >= 0) & (sy <= h - 1) & (sx <= w - 1)
    y0, x0 = sy[inside].astype(np.int64), sx[inside].astype(np.int64)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    ty = (sy[inside] - y0)[:, None].astype(np.float32)
    tx = (sx[inside] - x0)[:, None].astype(np.float32)
    top = (1 - tx) * img[y0, x0] + tx * img[y0, x1]
    bot = (1 - tx) * img[y1, x0] + tx * img[y1, x1]
    out[inside] = (1 - ty) * top + ty * bot
    return out


def luma(v):
    return (np.float32(0.299) * v[..., 0] + np.float32(0.587) * v[..., 1] +
            np.float32(0.114) * v[..., 2])


def augment(px, p, u):
    img = px.astype(np.float32)
    C, H, W = p["data_shape"]
    if p["resize"] > 0:
        s = min(img.shape[:2])
        h = int(img.shape[0] * p["resize"] / s + 0.5)
        w = int(img.shape[1] * p["resize"] / s + 0.5)
        img = resize(img, max(h, 1), max(w, 1))
    if p["max_rotate_angle"] > 0:
        img = rotate(img, np.float32(p["max_rotate_angle"]) * (2 * u[3] - 1), p["fill_value"])
    if p["pad"] > 0:
        q = p["pad"]
        out = np.full((img.shape[0] + 2 * q, img.shape[1] + 2 * q, img.shape[2]),
                      np.float32(p["fill_value"]), np.float32)
        out[q:q + img.shape[0], q:q + img.shape[1]] = img
        img = out
    if img.shape[0] < H or img.shape[1] < W:
        f = max(H / img.shape[0], W / img.shape[1])
        h, w = math.ceil(img.shape[0] * f), math.ceil(img.shape[1] * f)
        img = resize(img, max(h, H), max(w, W))
    h, w = img.shape[:2]
    y0, x0 = (h - H) // 2, (w - W) // 2
    if p["rand_crop"]:
        y0 = int(u[0] * np.float32(h - H + 1))
        x0 = int(u[1] * np.float32(w - W + 1))
    crop = img[y0:y0 + H, x0:x0 + W].copy()
    if p["rand_mirror"] and u[2] < 0.5:
        crop = crop[:, ::-1].copy()
    b, c, s = p["brightness"], p["contrast"], p["saturation"]
    if b > 0 or c > 0 or s > 0:
        if b > 0:
            crop *= 1 + np.float32(b) * (2 * u[4] - 1)
        if c > 0:
            m = np.float32(np.mean((luma(crop) if C == 3 else crop[..., 0]).astype(np.float64)))
            crop = (crop - m) * (1 + np.float32(c) * (2 * u[5] - 1)) + m
        if s > 0 and C == 3:
            g = luma(crop)[..., None]
            crop = (crop - g) * (1 + np.float32(s) * (2 * u[6] - 1)) + g
        crop = np.clip(crop, 0, 255)
    mean = np.array(p["mean"][:C], np.float32)
    if p["mean_img"] is not None:
        mean = p["mean_img"].transpose(1, 2, 0)  # CHW -> HWC
    k = np.float32(p["scale"]) / np.array(p["std"][:C], np.float32)
    return ((crop - mean) * k).transpose(2, 0, 1).astype(np.float32)


def decode(payload, channels):
    img = Image.open(io.BytesIO(payload))
    if img.format == "JPEG" and channels == 1:
        img.draft("L", img.size)
    return np.asarray(img.convert("L" if channels == 1 else "RGB"), np.uint8).reshape(
        img.size[1], img.size[0], channels)


def parse_args(kv):
    p = {"data_shape": None, "batch_size": 0, "label_width": 1, "shuffle": 0,
         "seed": 0, "round_batch": 1, "num_parts": 1, "part_index": 0,
         "resize": -1, "pad": 0, "rand_crop": 0, "rand_mirror": 0, "max_rotate_angle": 0.0,
         "fill_value": 255.0, "brightness": 0.0, "contrast": 0.0,
         "saturation": 0.0, "mean": [0.0] * 3, "std": [1.0] * 3, "scale": 1.0,
         "epoch": 0, "mean_img": None}
    for item in kv:
        k, v = item.split("=", 1)
        if k == "data_shape":
            p[k] = tuple(int(x) for x in v.strip("()").split(","))
        elif k == "mean_img":
            p[k] = read_mean(v)
        elif k in ("mean_r", "mean_g", "mean_b", "std_r", "std_g", "std_b"):
            p[k[:-2] if k.startswith("mean") else "std"]["rgb".index(k[-1])] = float(v)
        elif k in p:
            p[k] = type(p[k])(float(v)) if not isinstance(p[k], tuple) else v
        # other keys (threads, prefetch) do not change the batches
    return p


def read_mean(path):
    with open(path, "rb") as f:
        arrays, names = make_mxnet_params.read_list(f.read())
    kind, dtype, shape, data = arrays[names.index("mean_img")]
    assert kind == "dense" and dtype == 0, (kind, dtype)
    return np.asarray(data, np.float32).reshape(shape)


def image_of(record, channels):
    flag = struct.unpack_from("<I", record, 0)[0]
    return decode(record[24 + 4 * flag:], channels)


def mean(rec, out, kv):
    p = parse_args(kv)
    p.update(rand_crop=0, rand_mirror=0, max_rotate_angle=0.0, brightness=0.0,
             contrast=0.0, saturation=0.0, mean=[0.0] * 3, std=[1.0] * 3,
             scale=1.0, mean_img=None)
    C = p["data_shape"][0]
    crops = [augment(image_of(r, C), p, [0.0] * 7).astype(np.float64)
             for _, r in recordio_ref.read_rec(rec)]
    m = (np.sum(crops, axis=0) / len(crops)).astype(np.float32)
    with open(out, "wb") as f:
        f.write(make_mxnet_params.list_bytes(2, [("array", m)], ["mean_img"]))


def batches(rec, prefix, kv):
    p = parse_args(kv)
    recs = [data for _, data in recordio_ref.read_rec(rec)]
    n_all = len(recs)
    lo = n_all * p["part_index"] // p["num_parts"]
    hi = n_all * (p["part_index"] + 1) // p["num_parts"]
    n, B = hi - lo, p["batch_size"]
    perm = order(n, p["shuffle"], p["seed"], p["epoch"])
    nb = (n + B - 1) // B if p["round_batch"] else n // B
    C = p["data_shape"][0]
    data, labels, pads = [], [], []
    for t in range(nb * B):
        idx = lo + perm[t % n]
        r = recs[idx]
        flag, label, _, _ = struct.unpack_from("<IfQQ", r, 0)
        labs = [label] if flag == 0 else list(struct.unpack_from("<%df" % flag, r, 24))
        payload = r[24 + 4 * flag:]
        px = decode(payload, C)
        data.append(augment(px, p, draws(p["seed"], p["epoch"], idx)))
        labels.append(labs[:p["label_width"]])
    for b in range(nb):
        pads.append(max(0, (b + 1) * B - n))
    np.array(data, np.float32).tofile(prefix + ".data")
    np.array(labels, np.float32).tofile(prefix + ".label")
    with open(prefix + ".pad", "w") as f:
        f.write(" ".join(str(x) for x in pads) + "\n")


def make(d):
    rng = np.random.RandomState(5)
    records = []
    for i in range(23):
        h, w = 12 + (i * 7) % 19, 14 + (i * 5) % 23
        gray = i % 5 == 2
        px = rng.randint(0, 256, size=(h, w) if gray else (h, w, 3)).astype(np.uint8)
        ramp = np.linspace(0, 190, w).astype(np.uint8)
        px = (px // 4 + (ramp[None, :] if gray else ramp[None, :, None])).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(px).save(buf, format="PNG" if i % 3 else "JPEG", quality=92)
        if i % 4 == 3:
            head = struct.pack("<IfQQ", 2, 0.0, i, 0) + struct.pack("<2f", i, i + 0.5)
        else:
            head = struct.pack("<IfQQ", 0, float(i), i, 0)
        records.append((i, head + buf.getvalue()))
    recordio_ref.write_rec(os.path.join(d, "images.rec"), os.path.join(d, "images.idx"), records)


def main(argv):
    if len(argv) == 3 and argv[1] == "make":
        make(argv[2])
        return 0
    if len(argv) >= 4 and argv[1] == "batches":
        batches(argv[2], argv[3], argv[4:])
        return 0
    if len(argv) >= 4 and argv[1] == "mean":
        mean(argv[2], argv[3], argv[4:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
