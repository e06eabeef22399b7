/* _contrib_MultiBoxTarget: SSD training targets, with MXNet 1.9's rules.
 *
 * Inputs anchor (1, A, 4) corner boxes, label (N, M, W >= 5) rows [class,
 * xmin, ymin, xmax, ymax, ...] (a row of class -1 ends an image's list),
 * cls_pred (N, C, A) class scores. Outputs loc_target (N, A * 4), loc_mask
 * (N, A * 4) and cls_target (N, A).
 *
 * Matching, per image with ground truths: first each ground truth takes
 * the anchor of highest IoU (greedily, the best remaining pair first, IoU
 * above 1e-6); then, with overlap_threshold > 0, every other anchor whose
 * best IoU exceeds it is positive too. Negatives: with
 * negative_mining_ratio > 0, the ratio x positives anchors (at most the
 * rest) among those whose best IoU is below negative_mining_thresh, with
 * the lowest background probability (softmax of cls_pred) first; without,
 * every non-positive anchor. Positives get class + 1, mask 1 and the
 * regression ((gx - ax) / aw / v0, (gy - ay) / ah / v1, log(gw / aw) / v2,
 * log(gh / ah) / v3); negatives class 0; the others ignore_label. Images
 * without ground truth keep ignore_label, zero targets and masks.
 * minimum_negative_samples is accepted and, as in MXNet's CPU kernel,
 * unused. No gradient (MXNet's is zero). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/vision/vision.h"

typedef struct tgt_param {
  double overlap_threshold, ignore_label, negative_mining_ratio;
  double negative_mining_thresh;
  int64_t minimum_negative_samples;
  char variances[MXC__PARAM_STR_MAX];
  double var[4]; /* parsed by param_check */
} tgt_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(tgt_param, overlap_threshold, MXC__P_FLOAT, "0.5",
               "IoU above which an anchor is a positive."),
    MXC__PARAM(tgt_param, ignore_label, MXC__P_FLOAT, "-1",
               "cls_target of anchors neither positive nor negative."),
    MXC__PARAM(tgt_param, negative_mining_ratio, MXC__P_FLOAT, "-1",
               "Negatives per positive; <= 0: every other anchor."),
    MXC__PARAM(tgt_param, negative_mining_thresh, MXC__P_FLOAT, "0.5",
               "Negatives must have a best IoU below this."),
    MXC__PARAM(tgt_param, minimum_negative_samples, MXC__P_INT, "0",
               "Accepted for compatibility; unused (as in MXNet)."),
    MXC__PARAM(tgt_param, variances, MXC__P_STRING, "(0.1, 0.1, 0.2, 0.2)",
               "Scales of the regression targets (x, y, w, h)."),
};

static int tgt_check(const char *op_name, void *param) {
  tgt_param *p = param;
  int n = 0;
  MXC_FORWARD_IF_ERROR(mxc__vision_parse_floats(op_name, "variances",
                                                p->variances, p->var, 4, &n));
  MXC_RETURN_ERROR_IF(n != 4, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': variances must hold 4 values; got %d",
                      op_name, n);
  MXC_RETURN_ERROR_IF(
      p->negative_mining_ratio > 0 && !(p->negative_mining_thresh > 0),
      MXC_ERR_INVALID_ARGUMENT,
      "operator '%s': negative mining needs negative_mining_thresh > 0",
      op_name);
  return MXC_OK;
}

static int tgt_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  int ka, kl;
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(op->name, &in[0], 3, "anchor",
                                             "(1, anchors, 4)", &ka));
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(
      op->name, &in[1], 3, "label", "(batch, objects, width >= 5)", &kl));
  if (!ka || !kl) return MXC_OK;
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(
      in[0].dims[0] != 1 || in[0].dims[2] != 4 || in[1].dims[2] < 5,
      MXC_ERR_SHAPE,
      "operator '%s': anchor must be (1, anchors, 4) and "
      "label (batch, objects, >= 5); got %s and %s",
      op->name, mxc__shape_str(&in[0], b1, sizeof b1),
      mxc__shape_str(&in[1], b2, sizeof b2));
  int64_t nb = in[1].dims[0], na = in[0].dims[1], n4, pairs;
  /* The kernel keeps an anchors x objects IoU table. */
  MXC_RETURN_ERROR_IF(!mxc__mul_i64(na, 4, &n4) ||
                          !mxc__mul_i64(na + 1, in[1].dims[1] + 1, &pairs) ||
                          pairs > ((int64_t)1 << 40),
                      MXC_ERR_SHAPE,
                      "operator '%s': %lld anchors x %lld objects are too "
                      "many",
                      op->name, (long long)na, (long long)in[1].dims[1]);
  MXC_RETURN_ERROR_IF(
      in[2].ndim >= 0 && (in[2].ndim != 3 || in[2].dims[0] != nb ||
                          in[2].dims[2] != na || in[2].dims[1] < 1),
      MXC_ERR_SHAPE,
      "operator '%s': cls_pred must be (batch, classes, "
      "anchors) = (%lld, C, %lld); got %s",
      op->name, (long long)nb, (long long)na,
      mxc__shape_str(&in[2], b1, sizeof b1));
  mxc__shape loc = mxc__vision_shape(2, (int64_t[]){nb, n4});
  mxc__shape cls = mxc__vision_shape(2, (int64_t[]){nb, na});
  MXC_FORWARD_IF_ERROR(
      mxc__vision_assign(op->name, &out[0], &loc, "loc_target"));
  MXC_FORWARD_IF_ERROR(mxc__vision_assign(op->name, &out[1], &loc, "loc_mask"));
  return mxc__vision_assign(op->name, &out[2], &cls, "cls_target");
}

/* One image's state: IoUs (A x G), per-anchor flags (-1 don't care, 0
 * negative, 1 positive), best match and its IoU. */
typedef struct tgt_img {
  int64_t na, ng;
  double *iou, *best_iou;
  int64_t *best_gt;
  signed char *flag, *gt_done;
} tgt_img;

static double tgt_iou(const double *a, const double *b) {
  double w = fmax(0, fmin(a[2], b[2]) - fmax(a[0], b[0]));
  double h = fmax(0, fmin(a[3], b[3]) - fmax(a[1], b[1]));
  double i = w * h;
  return i /
         ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i);
}

/* Ground truths of image b (rows before the first class -1); IoUs. */
static void tgt_overlaps(const mxc__blob *in, int64_t b, tgt_img *g) {
  int64_t m = in[1].shape.dims[1], w = in[1].shape.dims[2];
  g->ng = 0;
  while (g->ng < m && mxc__blob_get(&in[1], (b * m + g->ng) * w) != -1) ++g->ng;
  for (int64_t j = 0; j < g->na; ++j) {
    double a[4], l[4];
    for (int t = 0; t < 4; ++t) a[t] = mxc__blob_get(&in[0], j * 4 + t);
    for (int64_t k = 0; k < g->ng; ++k) {
      for (int t = 0; t < 4; ++t)
        l[t] = mxc__blob_get(&in[1], (b * m + k) * w + 1 + t);
      g->iou[j * g->ng + k] = tgt_iou(a, l);
    }
    g->flag[j] = -1;
    g->best_iou[j] = -1;
    g->best_gt[j] = -1;
  }
}

/* Greedy bipartite stage; returns the positives it made. */
static int64_t tgt_bipartite(tgt_img *g) {
  int64_t pos = 0;
  memset(g->gt_done, 0, (size_t)g->ng);
  for (;;) {
    int64_t ba = -1, bg = -1;
    double best = 1e-6;
    for (int64_t j = 0; j < g->na; ++j) {
      if (g->flag[j] == 1) continue;
      for (int64_t k = 0; k < g->ng; ++k) {
        if (!g->gt_done[k] && g->iou[j * g->ng + k] > best)
          best = g->iou[j * g->ng + k], ba = j, bg = k;
      }
    }
    if (ba < 0) return pos;
    g->best_iou[ba] = best, g->best_gt[ba] = bg;
    g->gt_done[bg] = 1, g->flag[ba] = 1;
    ++pos;
  }
}

/* Best ground truth of anchor j (first maximum), recorded. */
static void tgt_best(tgt_img *g, int64_t j) {
  for (int64_t k = 0; k < g->ng; ++k) {
    if (g->iou[j * g->ng + k] > g->best_iou[j])
      g->best_iou[j] = g->iou[j * g->ng + k], g->best_gt[j] = k;
  }
}

static int64_t tgt_threshold(const tgt_param *p, tgt_img *g) {
  int64_t pos = 0;
  for (int64_t j = 0; j < g->na; ++j) {
    if (g->flag[j] == 1) continue;
    tgt_best(g, j);
    if (g->best_gt[j] >= 0 && g->best_iou[j] > p->overlap_threshold)
      g->flag[j] = 1, ++pos;
  }
  return pos;
}

typedef struct tgt_neg {
  double prob;
  int64_t anchor;
} tgt_neg;

/* Ascending background probability, ties by anchor: MXNet's stable sort
 * of -prob in descending order. */
static int tgt_neg_cmp(const void *a, const void *b) {
  const tgt_neg *x = a, *y = b;
  if (x->prob != y->prob) return x->prob < y->prob ? -1 : 1;
  return (x->anchor > y->anchor) - (x->anchor < y->anchor);
}

/* Background probability of anchor j in image b. */
static double tgt_background(const mxc__blob *pred, int64_t b, int64_t j) {
  int64_t nc = pred->shape.dims[1], na = pred->shape.dims[2];
  double m = -INFINITY, s = 0;
  for (int64_t k = 0; k < nc; ++k)
    m = fmax(m, mxc__blob_get(pred, (b * nc + k) * na + j));
  for (int64_t k = 0; k < nc; ++k)
    s += exp(mxc__blob_get(pred, (b * nc + k) * na + j) - m);
  return exp(mxc__blob_get(pred, b * nc * na + j) - m) / s;
}

static void tgt_mine(const tgt_param *p, const mxc__blob *pred, int64_t b,
                     int64_t pos, tgt_img *g, tgt_neg *cand) {
  int64_t want = (int64_t)((double)pos * p->negative_mining_ratio), n = 0;
  if (want > g->na - pos) want = g->na - pos;
  if (want <= 0) return;
  for (int64_t j = 0; j < g->na; ++j) {
    if (g->flag[j] == 1) continue;
    if (g->best_iou[j] < 0) tgt_best(g, j);
    if (g->best_iou[j] < p->negative_mining_thresh) {
      cand[n].prob = tgt_background(pred, b, j);
      cand[n++].anchor = j;
    }
  }
  qsort(cand, (size_t)n, sizeof *cand, tgt_neg_cmp);
  for (int64_t i = 0; i < want && i < n; ++i) g->flag[cand[i].anchor] = 0;
}

/* Targets of anchor j for ground truth row k of image b (rows of 6 into
 * v: class target, then the 4 regression targets). */
static void tgt_encode(const tgt_param *p, const mxc__blob *in, int64_t b,
                       int64_t j, int64_t k, double *v) {
  int64_t m = in[1].shape.dims[1], w = in[1].shape.dims[2];
  double a[4], l[4];
  for (int t = 0; t < 4; ++t) {
    a[t] = mxc__blob_get(&in[0], j * 4 + t);
    l[t] = mxc__blob_get(&in[1], (b * m + k) * w + 1 + t);
  }
  double aw = a[2] - a[0], ah = a[3] - a[1], gw = l[2] - l[0], gh = l[3] - l[1];
  v[0] = mxc__blob_get(&in[1], (b * m + k) * w) + 1;
  v[1] = ((l[0] + l[2]) / 2 - (a[0] + a[2]) / 2) / aw / p->var[0];
  v[2] = ((l[1] + l[3]) / 2 - (a[1] + a[3]) / 2) / ah / p->var[1];
  v[3] = log(gw / aw) / p->var[2];
  v[4] = log(gh / ah) / p->var[3];
}

static void tgt_put(const mxc__blob *b, int64_t i, double v, mxc__req req) {
  if (req == MXC__REQ_NULL) return;
  if (req == MXC__REQ_ADD) v += mxc__blob_get(b, i);
  mxc__blob_set(b, i, v);
}

static void tgt_write(const tgt_param *p, const mxc__blob *in,
                      const mxc__blob *out, const mxc__req *req, int64_t b,
                      const tgt_img *g) {
  for (int64_t j = 0; j < g->na; ++j) {
    double v[5] = {p->ignore_label, 0, 0, 0, 0}, mask = 0;
    if (g->ng > 0 && g->flag[j] == 1) {
      tgt_encode(p, in, b, j, g->best_gt[j], v);
      mask = 1;
    } else if (g->ng > 0 && g->flag[j] == 0) {
      v[0] = 0;
    }
    for (int t = 0; t < 4; ++t) {
      tgt_put(&out[0], (b * g->na + j) * 4 + t, v[1 + t], req[0]);
      tgt_put(&out[1], (b * g->na + j) * 4 + t, mask, req[1]);
    }
    tgt_put(&out[2], b * g->na + j, v[0], req[2]);
  }
}

static int tgt_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const tgt_param *p = param;
  int64_t na = in[0].shape.dims[1], m = in[1].shape.dims[1];
  size_t bytes = (size_t)(na * m + na) * sizeof(double) +
                 (size_t)na * (sizeof(int64_t) + sizeof(tgt_neg) + 1) +
                 (size_t)m + 64;
  void *t = NULL;
  MXC_FORWARD_IF_ERROR(mxc__opctx_temp(ctx, bytes, &t));
  tgt_img g = {na, 0, t, (double *)t + na * m, NULL, NULL, NULL};
  g.best_gt = (int64_t *)(g.best_iou + na);
  tgt_neg *cand = (tgt_neg *)(g.best_gt + na);
  g.flag = (signed char *)(cand + na);
  g.gt_done = g.flag + na;
  for (int64_t b = 0; b < in[1].shape.dims[0]; ++b) {
    tgt_overlaps(in, b, &g);
    if (g.ng > 0) {
      int64_t pos = tgt_bipartite(&g);
      if (p->overlap_threshold > 0) pos += tgt_threshold(p, &g);
      if (p->negative_mining_ratio > 0) {
        tgt_mine(p, &in[2], b, pos, &g, cand);
      } else {
        for (int64_t j = 0; j < na; ++j) g.flag[j] = g.flag[j] == 1;
      }
    }
    tgt_write(p, in, out, req, b, &g);
  }
  return MXC_OK;
}

static const char *const k_in[] = {"anchor", "label", "cls_pred", NULL};
static const char *const k_out[] = {"loc_target", "loc_mask", "cls_target",
                                    NULL};

static const mxc__op k_ops[] = {
    {
        .name = "_contrib_MultiBoxTarget",
        .doc = "SSD training targets from anchor (1, A, 4), label (N, M, 5+) "
               "and cls_pred (N, C, A): loc_target and loc_mask (N, A * 4), "
               "cls_target (N, A).",
        MXC__PARAMS_OF(tgt_param, k_params),
        .param_check = tgt_check,
        .n_inputs = 3,
        .input_names = k_in,
        .n_outputs = 3,
        .output_names = k_out,
        .infer_shape = tgt_shape,
        .infer_type = mxc__vision_type_float,
        .compute = tgt_forward,
        .gradient = mxc__grad_none,
        .resources = MXC__RES_TEMP,
    },
};

int mxc__vision_register_target(mxc__registry *r) {
  for (int i = 0; i < MXC__COUNT(k_ops); ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
