#!/usr/bin/python3
"""Golden data for the vision operators (tests/ops/vision).

Each reference is written here from MXNet 1.9's documented semantics of the
operator, in numpy (or torch where torch has the same operation), without
looking at mxc's kernels. Writes one text file of cases:

    case NAME OPERATOR
    param KEY VALUE          (any number)
    in NDIM D0 D1 ... : V V V ...     (inputs in order)
    out NDIM D0 D1 ... : V V V ...    (visible outputs in order)
    end

Usage: make_golden.py OUT_FILE
"""
import math
import sys

import numpy as np

RNG = np.random.RandomState(20)
CASES = []


def case(name, op, params, inputs, outputs):
    CASES.append((name, op, params, inputs, outputs))


def fmt_arr(tag, a):
    a = np.asarray(a, dtype=np.float64)
    dims = " ".join(str(d) for d in a.shape)
    vals = " ".join(repr(float(v)) for v in a.ravel())
    return "%s %d %s : %s" % (tag, a.ndim, dims, vals)


def write(path):
    with open(path, "w") as f:
        for name, op, params, inputs, outputs in CASES:
            f.write("case %s %s\n" % (name, op))
            for k, v in params.items():
                f.write("param %s %s\n" % (k, v))
            for a in inputs:
                f.write(fmt_arr("in", a) + "\n")
            for a in outputs:
                f.write(fmt_arr("out", a) + "\n")
            f.write("end\n")


# ---- ROIPooling ----

def c_round(v):
    """C's round(): halves away from zero (numpy rounds them to even)."""
    return math.copysign(math.floor(abs(v) + 0.5), v)


def roi_pool_ref(data, rois, pooled, scale):
    n, c, h, w = data.shape
    ph_n, pw_n = pooled
    out = np.zeros((len(rois), c, ph_n, pw_n))
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x1, y1, x2, y2 = [c_round(v * scale) for v in roi[1:]]
        rh = max(y2 - y1 + 1, 1)
        rw = max(x2 - x1 + 1, 1)
        for ph in range(ph_n):
            hs = int(min(max(math.floor(ph * rh / ph_n) + y1, 0), h))
            he = int(min(max(math.ceil((ph + 1) * rh / ph_n) + y1, 0), h))
            for pw in range(pw_n):
                ws = int(min(max(math.floor(pw * rw / pw_n) + x1, 0), w))
                we = int(min(max(math.ceil((pw + 1) * rw / pw_n) + x1, 0), w))
                if he <= hs or we <= ws:
                    continue
                out[r, :, ph, pw] = data[b, :, hs:he, ws:we].max(axis=(1, 2))
    return out


def roi_pool_cases():
    data = RNG.permutation(2 * 3 * 8 * 9).reshape(2, 3, 8, 9) / 10.0
    rois = np.array([[0, 0, 0, 15, 15], [1, 3, 5, 11, 9],
                     [1, -4, -4, 40, 40], [0, 7, 7, 7, 7],
                     [1, 5.1, 2.5, 9.5, 13.4]])
    for pooled, scale in [((2, 2), 0.5), ((3, 2), 0.5), ((4, 5), 1.0)]:
        case("roi_pool_%dx%d_s%g" % (pooled + (scale,)), "ROIPooling",
             {"pooled_size": "(%d,%d)" % pooled, "spatial_scale": scale},
             [data, rois], [roi_pool_ref(data, rois, pooled, scale)])


# ---- ROIAlign ----

def bilinear_ref(img, y, x):
    """Detectron's rule: 0 beyond one pixel outside, else clamp."""
    h, w = img.shape[-2:]
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return np.zeros(img.shape[:-2])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[..., y0, x0] +
            (1 - ly) * lx * img[..., y0, x1] +
            ly * (1 - lx) * img[..., y1, x0] + ly * lx * img[..., y1, x1])


def roi_align_ref(data, rois, pooled, scale, ratio, ps, aligned):
    n, c, h, w = data.shape
    ph_n, pw_n = pooled
    oc = c // (ph_n * pw_n) if ps else c
    out = np.zeros((len(rois), oc, ph_n, pw_n))
    off = 0.5 if aligned else 0.0
    for r, roi in enumerate(rois):
        if rois.shape[1] == 5:
            b, coords = int(roi[0]), roi[1:]
            if roi[0] < 0:
                continue
        else:
            b, coords = 0, roi
        x1, y1, x2, y2 = [v * scale - off for v in coords]
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph_n, rw / pw_n
        gh = ratio if ratio > 0 else int(math.ceil(rh / ph_n))
        gw = ratio if ratio > 0 else int(math.ceil(rw / pw_n))
        for ph in range(ph_n):
            for pw in range(pw_n):
                acc = np.zeros(c)
                for iy in range(gh):
                    y = y1 + ph * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        x = x1 + pw * bw + (ix + 0.5) * bw / gw
                        acc += bilinear_ref(data[b], y, x)
                acc /= max(gh * gw, 1)
                if ps:
                    k = ph * pw_n + pw
                    out[r, :, ph, pw] = acc[np.arange(oc) * ph_n * pw_n + k]
                else:
                    out[r, :, ph, pw] = acc
    return out


def roi_align_cases():
    data = RNG.uniform(-1, 1, (2, 8, 7, 9))
    rois5 = np.array([[0, 0.5, 1.0, 12.0, 10.0], [1, 3.2, 2.1, 9.7, 13.3],
                      [1, -6.0, -5.0, 30.0, 25.0], [0, 4.0, 4.0, 4.2, 4.1],
                      [-1, 1.0, 1.0, 5.0, 5.0]])
    rois4 = rois5[:3, 1:]
    for pooled, scale, ratio, ps, al in [((2, 2), 0.5, 2, False, False),
                                         ((3, 3), 0.5, -1, False, False),
                                         ((2, 2), 0.5, 0, True, False),
                                         ((2, 3), 0.7, 2, False, True)]:
        params = {"pooled_size": "(%d,%d)" % pooled, "spatial_scale": scale,
                  "sample_ratio": ratio,
                  "position_sensitive": str(ps).lower(),
                  "aligned": str(al).lower()}
        rois = rois5[:4] if al else rois5
        name = "roi_align_%dx%d_r%d%s%s" % (pooled + (ratio,
                                           "_ps" if ps else "",
                                           "_al" if al else ""))
        case(name, "_contrib_ROIAlign", params, [data, rois],
             [roi_align_ref(data, rois, pooled, scale, ratio, ps, al)])
    case("roi_align_4col", "_contrib_ROIAlign",
         {"pooled_size": "(2,2)", "spatial_scale": 0.5, "sample_ratio": 2},
         [data, rois4],
         [roi_align_ref(data, rois4, (2, 2), 0.5, 2, False, False)])


# ---- GridGenerator / BilinearSampler / SpatialTransformer (torch) ----

def torch_affine_grid(theta, h, w):
    import torch
    t = torch.tensor(theta, dtype=torch.float64).view(-1, 2, 3)
    g = torch.nn.functional.affine_grid(t, (t.shape[0], 1, h, w),
                                        align_corners=True)
    return g.permute(0, 3, 1, 2).numpy()


def torch_sample(data, grid):
    import torch
    d = torch.tensor(data, dtype=torch.float64)
    g = torch.tensor(grid, dtype=torch.float64).permute(0, 2, 3, 1)
    return torch.nn.functional.grid_sample(
        d, g, mode="bilinear", padding_mode="zeros",
        align_corners=True).numpy()


def warp_grid_ref(flow):
    n, _, h, w = flow.shape
    xs = np.arange(w)[None, None, :] + flow[:, 0]
    ys = np.arange(h)[None, :, None] + flow[:, 1]
    return np.stack([xs / ((w - 1) / 2.0) - 1, ys / ((h - 1) / 2.0) - 1], 1)


def sampler_cases():
    theta = np.array([[0.9, 0.2, 0.1, -0.3, 1.1, -0.05],
                      [1.4, -0.6, 0.3, 0.5, 0.7, 0.2]])
    case("grid_affine", "GridGenerator",
         {"transform_type": "affine", "target_shape": "(5,7)"}, [theta],
         [torch_affine_grid(theta, 5, 7)])
    flow = RNG.uniform(-2, 2, (2, 2, 4, 6))
    case("grid_warp", "GridGenerator", {"transform_type": "warp"}, [flow],
         [warp_grid_ref(flow)])
    data = RNG.uniform(-1, 1, (2, 3, 6, 5))
    grid = RNG.uniform(-1.3, 1.3, (2, 2, 4, 7))
    case("bilinear_sampler", "BilinearSampler", {}, [data, grid],
         [torch_sample(data, grid)])
    case("spatial_transformer", "SpatialTransformer",
         {"transform_type": "affine", "sampler_type": "bilinear",
          "target_shape": "(4,6)"}, [data, theta],
         [torch_sample(data, torch_affine_grid(theta, 4, 6))])


# ---- box_nms / box_iou ----

def to_corner(b, fmt):
    b = np.asarray(b, dtype=np.float64)
    if fmt == "corner":
        return b
    x, y, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack([x - w / 2, y - h / 2, x + w / 2, y + h / 2], -1)


def iou_matrix(a, b, fmt):
    """IoU of every box in a (M, 4) with every box in b (K, 4)."""
    a, b = to_corner(a, fmt), to_corner(b, fmt)
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - \
        np.maximum(a[:, None, 0], b[None, :, 0])
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - \
        np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)

    def area(x):
        w, h = x[:, 2] - x[:, 0], x[:, 3] - x[:, 1]
        return np.where((w < 0) | (h < 0), 0.0, w * h)

    union = area(a)[:, None] + area(b)[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(inter > 0, inter / union, 0.0)


def nms_ref(data, overlap_thresh=0.5, valid_thresh=0.0, topk=-1,
            coord_start=2, score_index=1, id_index=-1, background_id=-1,
            force_suppress=False, in_format="corner", out_format="corner"):
    shape = data.shape
    flat = data.reshape(-1, shape[-2], shape[-1])
    out = -np.ones_like(flat)
    if topk == 0:
        return data.copy()
    cs = slice(coord_start, coord_start + 4)
    for b, boxes in enumerate(flat):
        keep = boxes[:, score_index] > valid_thresh
        if id_index >= 0:
            keep &= boxes[:, id_index] != background_id
        idx = np.nonzero(keep)[0]
        # stable descending sort by score
        idx = idx[np.argsort(-boxes[idx, score_index], kind="stable")]
        if topk > 0:
            idx = idx[:topk]
        ious = iou_matrix(boxes[idx, cs], boxes[idx, cs], in_format)
        alive = np.ones(len(idx), bool)
        for i in range(len(idx)):
            if not alive[i]:
                continue
            for j in range(i + 1, len(idx)):
                same = (force_suppress or id_index < 0 or
                        int(boxes[idx[i], id_index]) ==
                        int(boxes[idx[j], id_index]))
                if alive[j] and same and ious[i, j] > overlap_thresh:
                    alive[j] = False
        kept = boxes[idx[alive]].copy()
        if in_format != out_format:
            c = kept[:, cs]
            conv = kept[:, coord_start] >= 0
            if out_format == "center":
                new = np.stack([(c[:, 0] + c[:, 2]) / 2,
                                (c[:, 1] + c[:, 3]) / 2,
                                c[:, 2] - c[:, 0], c[:, 3] - c[:, 1]], 1)
            else:
                new = to_corner(c, "center")
            kept[conv, cs] = new[conv]
        out[b, :len(kept)] = kept
    return out.reshape(shape)


def nms_cases():
    # The example of MXNet's documentation of box_nms.
    x = np.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
                  [0, 0.3, 0.1, 0.1, 0.14, 0.14],
                  [2, 0.6, 0.5, 0.5, 0.7, 0.8]])
    doc = {"overlap_thresh": 0.1, "coord_start": 2, "score_index": 1,
           "id_index": 0, "force_suppress": True}
    want = np.array([[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],
                     [-1] * 6, [-1] * 6])
    assert np.allclose(nms_ref(x, **doc), want)
    case("nms_doc_example", "_contrib_box_nms",
         {k: str(v).lower() if isinstance(v, bool) else v
          for k, v in doc.items()}, [x], [want])
    # Random clustered boxes, several batches, classes and settings.
    n = 24
    cls = RNG.randint(0, 3, (2, 3, n)).astype(np.float64)
    score = np.round(RNG.uniform(0, 1, (2, 3, n)), 2)  # ties included
    ctr = RNG.uniform(0, 10, (2, 3, n, 2))
    wh = RNG.uniform(1, 4, (2, 3, n, 2))
    corner = np.concatenate([ctr - wh / 2, ctr + wh / 2], -1)
    data = np.concatenate([cls[..., None], score[..., None], corner], -1)
    center = np.concatenate([cls[..., None], score[..., None], ctr, wh], -1)
    settings = [
        {},
        {"overlap_thresh": 0.3, "valid_thresh": 0.2, "topk": 10},
        {"id_index": 0, "overlap_thresh": 0.2},
        {"id_index": 0, "background_id": 1, "overlap_thresh": 0.4},
        {"id_index": 0, "force_suppress": True, "overlap_thresh": 0.25},
        {"out_format": "center", "overlap_thresh": 0.35},
        {"topk": 0},
    ]
    for i, st in enumerate(settings):
        params = {k: str(v).lower() if isinstance(v, bool) else v
                  for k, v in st.items()}
        case("nms_random_%d" % i, "_contrib_box_nms", params, [data],
             [nms_ref(data, **st)])
    case("nms_center_in", "_contrib_box_nms",
         {"in_format": "center", "out_format": "corner", "id_index": 0},
         [center], [nms_ref(center, in_format="center", id_index=0)])
    # Scores and ids away from the default columns, 2-D input.
    perm = data[0, 0][:, [2, 3, 4, 5, 1, 0]]
    case("nms_columns", "_contrib_box_nms",
         {"coord_start": 0, "score_index": 4, "id_index": 5,
          "overlap_thresh": 0.3},
         [perm], [nms_ref(perm, coord_start=0, score_index=4, id_index=5,
                          overlap_thresh=0.3)])


def iou_cases():
    a = np.concatenate([RNG.uniform(0, 5, (2, 3, 2)),
                        RNG.uniform(5, 9, (2, 3, 2))], -1)
    b = np.concatenate([RNG.uniform(0, 6, (4, 2)),
                        RNG.uniform(4, 9, (4, 2))], -1)
    b[0] = [20, 20, 21, 21]  # disjoint
    b[1] = [3, 3, 2, 2]      # negative extent
    want = iou_matrix(a.reshape(-1, 4), b, "corner").reshape(2, 3, 4)
    case("iou_corner", "_contrib_box_iou", {}, [a, b], [want])
    want_c = iou_matrix(a.reshape(-1, 4), b, "center").reshape(2, 3, 4)
    case("iou_center", "_contrib_box_iou", {"format": "center"}, [a, b],
         [want_c])


# ---- MultiBoxPrior ----

def prior_ref(h, w, sizes, ratios, steps=(-1, -1), offsets=(0.5, 0.5),
              clip=False):
    sy, sx = steps if steps[0] > 0 and steps[1] > 0 else (1.0 / h, 1.0 / w)
    shapes = [(s * h / w / 2, s / 2) for s in sizes]
    shapes += [(sizes[0] * h / w * math.sqrt(r) / 2,
                sizes[0] / math.sqrt(r) / 2) for r in ratios[1:]]
    out = []
    for r in range(h):
        cy = (r + offsets[0]) * sy
        for c in range(w):
            cx = (c + offsets[1]) * sx
            for hw, hh in shapes:
                out.append([cx - hw, cy - hh, cx + hw, cy + hh])
    out = np.array(out)[None]
    return np.clip(out, 0, 1) if clip else out


def prior_cases():
    data = np.zeros((2, 3, 4, 5))
    case("prior_default", "_contrib_MultiBoxPrior", {}, [data],
         [prior_ref(4, 5, [1.0], [1.0])])
    case("prior_sizes_ratios", "_contrib_MultiBoxPrior",
         {"sizes": "(0.2,0.35,0.5)", "ratios": "[1,2,0.5,3]"}, [data],
         [prior_ref(4, 5, [0.2, 0.35, 0.5], [1, 2, 0.5, 3])])
    case("prior_steps_clip", "_contrib_MultiBoxPrior",
         {"sizes": "(0.3,0.6)", "ratios": "(1,2)", "steps": "(0.3,0.2)",
          "offsets": "(0.25,0.75)", "clip": "true"}, [data],
         [prior_ref(4, 5, [0.3, 0.6], [1, 2], (0.3, 0.2), (0.25, 0.75),
                    True)])


# ---- MultiBoxDetection ----

def detection_ref(cls_prob, loc_pred, anchor, clip=True, threshold=0.01,
                  nms_threshold=0.5, force_suppress=False,
                  variances=(0.1, 0.1, 0.2, 0.2), nms_topk=-1):
    nb, nc, na = cls_prob.shape
    out = -np.ones((nb, na, 6))
    a = anchor[0]
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) / 2, (a[:, 1] + a[:, 3]) / 2
    for b in range(nb):
        d = loc_pred[b].reshape(na, 4)
        cx = d[:, 0] * variances[0] * aw + ax
        cy = d[:, 1] * variances[1] * ah + ay
        hw = np.exp(d[:, 2] * variances[2]) * aw / 2
        hh = np.exp(d[:, 3] * variances[3]) * ah / 2
        boxes = np.stack([cx - hw, cy - hh, cx + hw, cy + hh], 1)
        if clip:
            boxes = np.clip(boxes, 0, 1)
        fg = cls_prob[b, 1:]
        ids = np.argmax(fg, 0)          # first maximum
        scores = fg[ids, np.arange(na)]
        keep = scores >= threshold
        rows = np.concatenate([ids[keep, None].astype(float),
                               scores[keep, None], boxes[keep]], 1)
        k = len(rows)
        res = -np.ones((na, 6))
        res[:k] = rows
        if k > 0 and 0 < nms_threshold <= 1:
            order = np.argsort(-rows[:, 1], kind="stable")
            nkeep = nms_topk if 0 < nms_topk < k else k
            res[nkeep:k, 0] = -1
            res[:nkeep] = rows[order[:nkeep]]
            for i in range(nkeep):
                if res[i, 0] < 0:
                    continue
                for j in range(i + 1, nkeep):
                    if res[j, 0] < 0:
                        continue
                    if not force_suppress and res[i, 0] != res[j, 0]:
                        continue
                    bi, bj = res[i, 2:], res[j, 2:]
                    w = max(0.0, min(bi[2], bj[2]) - max(bi[0], bj[0]))
                    h = max(0.0, min(bi[3], bj[3]) - max(bi[1], bj[1]))
                    inter = w * h
                    u = ((bi[2] - bi[0]) * (bi[3] - bi[1]) +
                         (bj[2] - bj[0]) * (bj[3] - bj[1]) - inter)
                    iou = 0.0 if u <= 0 else inter / u
                    if iou >= nms_threshold:
                        res[j, 0] = -1
        out[b] = res
    return out


def detection_cases():
    anchor = prior_ref(3, 4, [0.3, 0.5], [1, 2])  # (1, 36, 4)
    na = anchor.shape[1]
    logits = RNG.uniform(-2, 2, (2, 4, na))
    prob = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    loc = RNG.uniform(-1, 1, (2, na * 4))
    settings = [
        {},
        {"threshold": 0.3, "nms_threshold": 0.3},
        {"force_suppress": True, "nms_threshold": 0.2, "nms_topk": 9},
        {"clip": False, "variances": (0.2, 0.2, 0.3, 0.1),
         "nms_threshold": 0.45},
        {"nms_threshold": 0.0},
    ]
    for i, st in enumerate(settings):
        params = {}
        for k, v in st.items():
            if isinstance(v, bool):
                v = str(v).lower()
            elif isinstance(v, tuple):
                v = "(%s)" % ",".join(repr(x) for x in v)
            params[k] = v
        case("detection_%d" % i, "_contrib_MultiBoxDetection", params,
             [prob, loc, anchor], [detection_ref(prob, loc, anchor, **st)])


# ---- MultiBoxTarget ----

def target_ref(anchor, label, cls_pred, overlap_threshold=0.5,
               ignore_label=-1.0, negative_mining_ratio=-1.0,
               negative_mining_thresh=0.5, variances=(0.1, 0.1, 0.2, 0.2)):
    a = anchor[0]
    na = len(a)
    nb = label.shape[0]
    loc_t = np.zeros((nb, na * 4))
    loc_m = np.zeros((nb, na * 4))
    cls_t = np.full((nb, na), ignore_label)
    for b in range(nb):
        gts = []
        for row in label[b]:
            if row[0] == -1:
                break
            gts.append(row)
        if not gts:
            continue
        gts = np.array(gts)
        ious = iou_matrix(a, gts[:, 1:5], "corner")
        flag = -np.ones(na, int)
        match = -np.ones(na, int)
        best = -np.ones(na)
        done = np.zeros(len(gts), bool)
        pos = 0
        while not done.all():
            m = np.where((flag[:, None] == 1) | done[None, :], -np.inf, ious)
            j, k = np.unravel_index(np.argmax(m), m.shape)  # first maximum
            if not m[j, k] > 1e-6:
                break
            flag[j], match[j], best[j] = 1, k, m[j, k]
            done[k] = True
            pos += 1
        if overlap_threshold > 0:
            for j in range(na):
                if flag[j] == 1:
                    continue
                match[j] = np.argmax(ious[j])
                best[j] = ious[j, match[j]]
                if best[j] > overlap_threshold:
                    flag[j] = 1
                    pos += 1
        if negative_mining_ratio > 0:
            want = min(int(pos * negative_mining_ratio), na - pos)
            cands = []
            for j in range(na):
                if flag[j] == 1:
                    continue
                if best[j] < 0:
                    match[j] = np.argmax(ious[j])
                    best[j] = ious[j, match[j]]
                if best[j] < negative_mining_thresh:
                    z = cls_pred[b, :, j]
                    e = np.exp(z - z.max())
                    cands.append((e[0] / e.sum(), j))
            cands.sort(key=lambda t: t[0])  # stable: ties keep anchor order
            for _, j in cands[:max(want, 0)]:
                flag[j] = 0
        else:
            flag[flag != 1] = 0
        for j in range(na):
            if flag[j] == 1:
                g = gts[match[j]]
                aw, ah = a[j, 2] - a[j, 0], a[j, 3] - a[j, 1]
                gw, gh = g[3] - g[1], g[4] - g[2]
                loc_t[b, 4 * j:4 * j + 4] = [
                    ((g[1] + g[3]) / 2 - (a[j, 0] + a[j, 2]) / 2) / aw /
                    variances[0],
                    ((g[2] + g[4]) / 2 - (a[j, 1] + a[j, 3]) / 2) / ah /
                    variances[1],
                    math.log(gw / aw) / variances[2],
                    math.log(gh / ah) / variances[3]]
                loc_m[b, 4 * j:4 * j + 4] = 1
                cls_t[b, j] = g[0] + 1
            elif flag[j] == 0:
                cls_t[b, j] = 0
    return loc_t, loc_m, cls_t


def target_cases():
    anchor = prior_ref(4, 4, [0.25, 0.45], [1, 2, 0.5])  # (1, 64, 4)
    na = anchor.shape[1]
    label = -np.ones((3, 4, 5))
    label[0, :3] = [[0, 0.1, 0.1, 0.45, 0.5], [2, 0.5, 0.55, 0.95, 0.9],
                    [1, 0.3, 0.05, 0.6, 0.3]]
    label[1, :1] = [[1, 0.2, 0.6, 0.5, 0.95]]
    # image 2 has no objects
    cls_pred = RNG.uniform(-2, 2, (3, 4, na))
    settings = [
        {},
        {"overlap_threshold": 0.3, "ignore_label": -2.0},
        {"negative_mining_ratio": 3.0, "negative_mining_thresh": 0.4},
        {"overlap_threshold": 0.0, "negative_mining_ratio": 2.0,
         "variances": (0.2, 0.2, 0.1, 0.1)},
    ]
    for i, st in enumerate(settings):
        params = {k: ("(%s)" % ",".join(repr(x) for x in v)
                      if isinstance(v, tuple) else v) for k, v in st.items()}
        case("target_%d" % i, "_contrib_MultiBoxTarget", params,
             [anchor, label, cls_pred],
             list(target_ref(anchor, label, cls_pred, **st)))


def main():
    target_cases()
    detection_cases()
    prior_cases()
    nms_cases()
    iou_cases()
    roi_pool_cases()
    roi_align_cases()
    sampler_cases()
    write(sys.argv[1])


if __name__ == "__main__":
    main()
