/* _contrib_MultiBoxDetection: SSD decoding and NMS, with MXNet 1.9's rules.
 *
 * Inputs cls_prob (N, C, A) (class 0 is the background), loc_pred (N, A *
 * 4) and anchor (1, A, 4) corner boxes; output (N, A, 6) rows [id, score,
 * xmin, ymin, xmax, ymax]. Per anchor, the best non-background class (the
 * first maximum) is its id - 1 and score, unless the score is below
 * threshold. Boxes decode as centre (ax + px * v0 * aw, ay + py * v1 * ah),
 * size (aw * exp(pw * v2), ah * exp(ph * v3)), clipped to [0, 1] with
 * clip. The kept anchors fill the first rows in anchor order (the others
 * are -1); when 0 < nms_threshold <= 1 they are sorted by descending score
 * (stable), rows past nms_topk get id -1, and NMS marks (id = -1, the rest
 * of the row stays) every box whose IoU with a better surviving box of the
 * same class (any class with force_suppress) is >= nms_threshold.
 * MXNet's CPU kernel ignores background_id (class 0 is the background);
 * so does this one. No gradient (MXNet's is zero). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/vision/vision.h"

typedef struct det_param {
  int clip, force_suppress;
  double threshold, nms_threshold;
  int64_t background_id, nms_topk;
  char variances[MXC__PARAM_STR_MAX];
  double var[4]; /* parsed by param_check */
} det_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(det_param, clip, MXC__P_BOOL, "true", "Clip boxes to [0, 1]."),
    MXC__PARAM(det_param, threshold, MXC__P_FLOAT, "0.01",
               "Scores below this make no detection."),
    MXC__PARAM(det_param, background_id, MXC__P_INT, "0",
               "Accepted for compatibility; class 0 is the background (as "
               "in MXNet's CPU kernel)."),
    MXC__PARAM(det_param, nms_threshold, MXC__P_FLOAT, "0.5",
               "IoU at which NMS suppresses; outside (0, 1] no NMS."),
    MXC__PARAM(det_param, force_suppress, MXC__P_BOOL, "false",
               "Suppress across classes."),
    MXC__PARAM(det_param, variances, MXC__P_STRING, "(0.1, 0.1, 0.2, 0.2)",
               "Scales of the regression (x, y, w, h)."),
    MXC__PARAM_RANGE(det_param, nms_topk, MXC__P_INT, "-1", -1, 1e15,
                     "Keep at most this many detections before NMS; -1: "
                     "all."),
};

static int det_check(const char *op_name, void *param) {
  det_param *p = param;
  int n = 0;
  MXC_FORWARD_IF_ERROR(mxc__vision_parse_floats(op_name, "variances",
                                                p->variances, p->var, 4, &n));
  MXC_RETURN_ERROR_IF(n != 4, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': variances must hold 4 values; got %d",
                      op_name, n);
  return MXC_OK;
}

static int det_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  int kc;
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(op->name, &in[0], 3, "cls_prob",
                                             "3-D (N, classes, anchors)", &kc));
  if (!kc) return MXC_OK;
  int64_t nb = in[0].dims[0], na = in[0].dims[2], n4;
  char b[160];
  MXC_RETURN_ERROR_IF(in[0].dims[1] < 1 || !mxc__mul_i64(na, 4, &n4),
                      MXC_ERR_SHAPE,
                      "operator '%s': cls_prob %s needs at least one class",
                      op->name, mxc__shape_str(&in[0], b, sizeof b));
  mxc__shape loc = mxc__vision_shape(2, (int64_t[]){nb, n4});
  mxc__shape anc = mxc__vision_shape(3, (int64_t[]){1, na, 4});
  mxc__shape o = mxc__vision_shape(3, (int64_t[]){nb, na, 6});
  MXC_FORWARD_IF_ERROR(
      mxc__vision_assign(op->name, &in[1], &loc, "loc_pred (N, anchors * 4)"));
  MXC_FORWARD_IF_ERROR(
      mxc__vision_assign(op->name, &in[2], &anc, "anchor (1, anchors, 4)"));
  return mxc__vision_assign(op->name, &out[0], &o, "output");
}

/* Decodes the box of anchor i into v[0..4). */
static void det_decode(const det_param *p, const mxc__blob *loc,
                       const mxc__blob *anc, int64_t b, int64_t na, int64_t i,
                       double *v) {
  double a[4], d[4];
  for (int t = 0; t < 4; ++t) {
    a[t] = mxc__blob_get(anc, i * 4 + t);
    d[t] = mxc__blob_get(loc, (b * na + i) * 4 + t);
  }
  double aw = a[2] - a[0], ah = a[3] - a[1];
  double cx = d[0] * p->var[0] * aw + (a[0] + a[2]) / 2;
  double cy = d[1] * p->var[1] * ah + (a[1] + a[3]) / 2;
  double hw = exp(d[2] * p->var[2]) * aw / 2;
  double hh = exp(d[3] * p->var[3]) * ah / 2;
  double box[4] = {cx - hw, cy - hh, cx + hw, cy + hh};
  for (int t = 0; t < 4; ++t)
    v[t] = p->clip ? fmax(0, fmin(1, box[t])) : box[t];
}

/* Fills rows (A x 6, -1 first) with the kept anchors of batch b in anchor
 * order; returns their count. */
static int64_t det_collect(const det_param *p, const mxc__blob *in, int64_t b,
                           double *rows) {
  int64_t nc = in[0].shape.dims[1], na = in[0].shape.dims[2], k = 0;
  for (int64_t i = 0; i < na * 6; ++i) rows[i] = -1;
  for (int64_t i = 0; i < na; ++i) {
    double score = -1;
    int64_t id = 0;
    for (int64_t j = 1; j < nc; ++j) {
      double s = mxc__blob_get(&in[0], (b * nc + j) * na + i);
      if (s > score) score = s, id = j;
    }
    if (id == 0 || score < p->threshold) continue;
    rows[k * 6] = (double)(id - 1);
    rows[k * 6 + 1] = score;
    det_decode(p, &in[1], &in[2], b, na, i, rows + k * 6 + 2);
    ++k;
  }
  return k;
}

static double det_iou(const double *a, const double *b) {
  double w = fmax(0, fmin(a[2], b[2]) - fmax(a[0], b[0]));
  double h = fmax(0, fmin(a[3], b[3]) - fmax(a[1], b[1]));
  double i = w * h;
  double u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i;
  return u <= 0 ? 0 : i / u;
}

typedef struct det_sort {
  double score;
  int64_t row;
} det_sort;

static int det_cmp(const void *a, const void *b) {
  const det_sort *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

/* Sorts the k kept rows (copy in `tmp`), drops those past nms_topk and
 * runs NMS among the rest. */
static void det_nms(const det_param *p, double *rows, int64_t k, double *tmp,
                    det_sort *s) {
  memcpy(tmp, rows, (size_t)k * 6 * sizeof *rows);
  for (int64_t i = 0; i < k; ++i) s[i].score = rows[i * 6 + 1], s[i].row = i;
  qsort(s, (size_t)k, sizeof *s, det_cmp);
  int64_t keep = (p->nms_topk > 0 && p->nms_topk < k) ? p->nms_topk : k;
  for (int64_t i = keep; i < k; ++i) rows[i * 6] = -1;
  for (int64_t i = 0; i < keep; ++i)
    memcpy(rows + i * 6, tmp + s[i].row * 6, 6 * sizeof *rows);
  for (int64_t i = 0; i < keep; ++i) {
    if (rows[i * 6] < 0) continue;
    for (int64_t j = i + 1; j < keep; ++j) {
      if (rows[j * 6] < 0) continue;
      if (!p->force_suppress && rows[i * 6] != rows[j * 6]) continue;
      if (det_iou(rows + i * 6 + 2, rows + j * 6 + 2) >= p->nms_threshold)
        rows[j * 6] = -1;
    }
  }
}

static int det_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const det_param *p = param;
  int64_t nb = in[0].shape.dims[0], na = in[0].shape.dims[2];
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  void *t = NULL;
  size_t rows_bytes = (size_t)na * 6 * sizeof(double);
  MXC_FORWARD_IF_ERROR(
      mxc__opctx_temp(ctx, 2 * rows_bytes + (size_t)na * sizeof(det_sort), &t));
  double *rows = t, *tmp = rows + na * 6;
  det_sort *s = (det_sort *)(tmp + na * 6);
  for (int64_t b = 0; b < nb; ++b) {
    int64_t k = det_collect(p, in, b, rows);
    if (k > 0 && p->nms_threshold > 0 && p->nms_threshold <= 1)
      det_nms(p, rows, k, tmp, s);
    for (int64_t i = 0; i < na * 6; ++i) {
      double v = rows[i];
      if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(&out[0], b * na * 6 + i);
      mxc__blob_set(&out[0], b * na * 6 + i, v);
    }
  }
  return MXC_OK;
}

static const char *const k_in[] = {"cls_prob", "loc_pred", "anchor", NULL};
static const char *const k_alias[] = {"_npx_multibox_detection", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "_contrib_MultiBoxDetection",
        .aliases = k_alias,
        .doc = "SSD detections from cls_prob (N, C, A), loc_pred (N, A * 4) "
               "and anchor (1, A, 4): (N, A, 6) rows [id, score, xmin, ymin, "
               "xmax, ymax], -1 where none.",
        MXC__PARAMS_OF(det_param, k_params),
        .param_check = det_check,
        .n_inputs = 3,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = det_shape,
        .infer_type = mxc__vision_type_float,
        .compute = det_forward,
        .gradient = mxc__grad_none,
        .resources = MXC__RES_TEMP,
    },
};

int mxc__vision_register_detection(mxc__registry *r) {
  for (int i = 0; i < MXC__COUNT(k_ops); ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
