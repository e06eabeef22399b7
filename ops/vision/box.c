/* Bounding boxes: _contrib_box_nms (non-maximum suppression) and
 * _contrib_box_iou, with MXNet 1.9's parameters and rules.
 *
 * box_nms takes data (..., N, W): per batch (all leading axes), N boxes of
 * W values holding a score (score_index), 4 coordinates from coord_start
 * and optionally a class id (id_index). Boxes with score > valid_thresh
 * (and, with an id, id != background_id) are sorted by descending score
 * (ties keep their order); only the first topk take part. Going down that
 * list, a surviving box suppresses every later one whose IoU with it
 * exceeds overlap_thresh (only boxes of its class unless force_suppress;
 * ids compare as integers). The survivors fill the output rows in order,
 * the remaining rows are -1. out_format converts the coordinates of rows
 * whose first coordinate is not negative (MXNet's test; -1 rows stay).
 * topk = 0 copies the input unchanged. The hidden second output records,
 * per output row, the flat index of the input row it came from (-1 for
 * none); the gradient copies output-row gradients back along it.
 *
 * IoU: intersection / (area_a + area_b - intersection), 0 when the boxes
 * do not overlap; areas of boxes with negative extent are 0. */
#include <math.h>
#include <stdlib.h>

#include "ops/vision/vision.h"

enum { BOX_CORNER, BOX_CENTER };
static const char *const k_formats[] = {"corner", "center", NULL};

typedef struct nms_param {
  double overlap_thresh, valid_thresh;
  int64_t topk, coord_start, score_index, id_index, background_id;
  int force_suppress, in_format, out_format;
} nms_param;

static const mxc__param_def k_nms_params[] = {
    MXC__PARAM(nms_param, overlap_thresh, MXC__P_FLOAT, "0.5",
               "IoU above which the lower-scored box is suppressed."),
    MXC__PARAM(nms_param, valid_thresh, MXC__P_FLOAT, "0",
               "Boxes need a score above this to be kept."),
    MXC__PARAM_RANGE(nms_param, topk, MXC__P_INT, "-1", -1, 1e15,
                     "Suppress among the topk best boxes only; -1: all."),
    MXC__PARAM_RANGE(nms_param, coord_start, MXC__P_INT, "2", 0, 1e9,
                     "Index of the first of the 4 coordinates."),
    MXC__PARAM_RANGE(nms_param, score_index, MXC__P_INT, "1", 0, 1e9,
                     "Index of the score."),
    MXC__PARAM_RANGE(nms_param, id_index, MXC__P_INT, "-1", -1, 1e9,
                     "Index of the class id; -1: no class."),
    MXC__PARAM(nms_param, background_id, MXC__P_INT, "-1",
               "Class id ignored (with id_index)."),
    MXC__PARAM(nms_param, force_suppress, MXC__P_BOOL, "false",
               "Suppress across classes too."),
    MXC__PARAM_ENUM(nms_param, in_format, "corner", k_formats,
                    "corner: (xmin, ymin, xmax, ymax); center: (x, y, w, "
                    "h)."),
    MXC__PARAM_ENUM(nms_param, out_format, "corner", k_formats,
                    "Encoding of the output coordinates."),
};

/* Overlap of [a0, a1] and [b0, b1] along one axis (0 when disjoint),
 * boxes given as 4 values in `fmt`; axis 0 is x, 1 is y. */
static double box_overlap(const double *a, const double *b, int fmt, int axis) {
  double l, r;
  if (fmt == BOX_CORNER) {
    l = fmax(a[axis], b[axis]);
    r = fmin(a[axis + 2], b[axis + 2]);
  } else {
    l = fmax(a[axis] - a[axis + 2] / 2, b[axis] - b[axis + 2] / 2);
    r = fmin(a[axis] + a[axis + 2] / 2, b[axis] + b[axis + 2] / 2);
  }
  return r - l < 0 ? 0 : r - l;
}

static double box_area(const double *a, int fmt) {
  double w = fmt == BOX_CORNER ? a[2] - a[0] : a[2];
  double h = fmt == BOX_CORNER ? a[3] - a[1] : a[3];
  return (w < 0 || h < 0) ? 0 : w * h;
}

static double box_iou(const double *a, const double *b, int fmt) {
  double i = box_overlap(a, b, fmt, 0) * box_overlap(a, b, fmt, 1);
  if (!(i > 0)) return 0;
  return i / (box_area(a, fmt) + box_area(b, fmt) - i);
}

/* ---- box_nms ---- */

static int nms_index_ok(int64_t i, int64_t width, const nms_param *p) {
  return i >= 0 && i < width && (i < p->coord_start || i > p->coord_start + 3);
}

static int nms_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  const nms_param *p = param;
  if (in[0].ndim < 0) return MXC_OK;
  char b[160];
  mxc__shape_str(&in[0], b, sizeof b);
  MXC_RETURN_ERROR_IF(in[0].ndim < 2, MXC_ERR_SHAPE,
                      "operator '%s': data must be (..., num_boxes, "
                      "box_width); got shape %s",
                      op->name, b);
  int64_t w = in[0].dims[in[0].ndim - 1];
  MXC_RETURN_ERROR_IF(
      w < 5 + (p->id_index >= 0) || p->coord_start + 3 >= w ||
          !nms_index_ok(p->score_index, w, p) ||
          (p->id_index >= 0 &&
           (!nms_index_ok(p->id_index, w, p) || p->id_index == p->score_index)),
      MXC_ERR_SHAPE,
      "operator '%s': boxes of width %lld (data %s) cannot "
      "hold coordinates at %lld..%lld, the score at %lld "
      "and the id at %lld without overlap",
      op->name, (long long)w, b, (long long)p->coord_start,
      (long long)p->coord_start + 3, (long long)p->score_index,
      (long long)p->id_index);
  MXC_FORWARD_IF_ERROR(mxc__vision_assign(op->name, &out[0], &in[0], "output"));
  mxc__shape rec = in[0];
  rec.dims[rec.ndim - 1] = 1;
  return n_out > 1 ? mxc__vision_assign(op->name, &out[1], &rec, "record")
                   : MXC_OK;
}

typedef struct nms_cand {
  double score;
  int64_t row;
} nms_cand;

/* Descending score, then ascending row: a stable descending sort. */
static int nms_cmp(const void *a, const void *b) {
  const nms_cand *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

/* The geometry of one call: nb batches of n boxes of width w. */
typedef struct nms_geom {
  int64_t nb, n, w;
} nms_geom;

/* Row r of batch b as doubles. */
static double nms_get(const mxc__blob *x, const nms_geom *g, int64_t row,
                      int64_t k) {
  return mxc__blob_get(x, row * g->w + k);
}

static int nms_same_class(const mxc__blob *x, const nms_geom *g,
                          const nms_param *p, int64_t a, int64_t b) {
  if (p->force_suppress || p->id_index < 0) return 1;
  return trunc(nms_get(x, g, a, p->id_index)) ==
         trunc(nms_get(x, g, b, p->id_index));
}

/* Valid candidates of batch b sorted, into c; returns their count. */
static int64_t nms_candidates(const mxc__blob *x, const nms_geom *g,
                              const nms_param *p, int64_t b, nms_cand *c) {
  int64_t k = 0;
  for (int64_t i = 0; i < g->n; ++i) {
    int64_t row = b * g->n + i;
    double s = nms_get(x, g, row, p->score_index);
    if (!(s > p->valid_thresh)) continue;
    if (p->id_index >= 0 &&
        nms_get(x, g, row, p->id_index) == (double)p->background_id)
      continue;
    c[k].score = s;
    c[k++].row = row;
  }
  qsort(c, (size_t)k, sizeof *c, nms_cmp);
  return k;
}

/* Marks suppressed candidates with row -1 among the first k. */
static void nms_suppress(const mxc__blob *x, const nms_geom *g,
                         const nms_param *p, nms_cand *c, int64_t k) {
  for (int64_t i = 0; i < k; ++i) {
    if (c[i].row < 0) continue;
    double a[4];
    for (int t = 0; t < 4; ++t)
      a[t] = nms_get(x, g, c[i].row, p->coord_start + t);
    for (int64_t j = i + 1; j < k; ++j) {
      if (c[j].row < 0 || !nms_same_class(x, g, p, c[i].row, c[j].row))
        continue;
      double bb[4];
      for (int t = 0; t < 4; ++t)
        bb[t] = nms_get(x, g, c[j].row, p->coord_start + t);
      if (box_iou(a, bb, p->in_format) > p->overlap_thresh) c[j].row = -1;
    }
  }
}

/* Converts the 4 coordinates at v between encodings, unless v[0] < 0. */
static void nms_convert(double *v, int to) {
  if (v[0] < 0) return;
  double a = v[0], b = v[1], c = v[2], d = v[3];
  if (to == BOX_CENTER) {
    v[0] = (a + c) / 2, v[1] = (b + d) / 2, v[2] = c - a, v[3] = d - b;
  } else {
    v[0] = a - c / 2, v[1] = b - d / 2, v[2] = a + c / 2, v[3] = b + d / 2;
  }
}

/* Writes output row `orow` from input row `irow` (-1: a row of -1). */
static void nms_emit(const mxc__blob *x, const nms_geom *g, const nms_param *p,
                     int convert, int64_t irow, int64_t orow,
                     const mxc__blob *out, mxc__req req, double *buf) {
  for (int64_t k = 0; k < g->w; ++k)
    buf[k] = irow < 0 ? -1 : nms_get(x, g, irow, k);
  if (convert) nms_convert(buf + p->coord_start, p->out_format);
  for (int64_t k = 0; k < g->w; ++k) {
    double v = buf[k];
    if (req == MXC__REQ_ADD) v += mxc__blob_get(out, orow * g->w + k);
    mxc__blob_set(out, orow * g->w + k, v);
  }
}

static void nms_record(const mxc__blob *rec, int64_t i, int64_t v) {
  if (rec) mxc__blob_set(rec, i, (double)v);
}

static void nms_batch(const mxc__blob *x, const nms_geom *g, const nms_param *p,
                      int64_t b, nms_cand *c, double *buf, const mxc__blob *out,
                      mxc__req req, const mxc__blob *rec) {
  int64_t k = nms_candidates(x, g, p, b, c);
  if (p->topk >= 0 && p->topk < k) k = p->topk;
  nms_suppress(x, g, p, c, k);
  int64_t o = b * g->n;
  for (int64_t i = 0; i < k; ++i) {
    if (c[i].row < 0) continue;
    nms_emit(x, g, p, p->in_format != p->out_format, c[i].row, o, out, req,
             buf);
    nms_record(rec, o++, c[i].row);
  }
  for (; o < (b + 1) * g->n; ++o) {
    nms_emit(x, g, p, 0, -1, o, out, req, buf);
    nms_record(rec, o, -1);
  }
}

static int nms_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const nms_param *p = param;
  const mxc__shape *s = &in[0].shape;
  nms_geom g = {1, s->dims[s->ndim - 2], s->dims[s->ndim - 1]};
  for (int i = 0; i < s->ndim - 2; ++i) g.nb *= s->dims[i];
  const mxc__blob *rec = n_out > 1 && req[1] != MXC__REQ_NULL ? &out[1] : NULL;
  if (req[0] == MXC__REQ_NULL && !rec) return MXC_OK;
  void *tmp = NULL;
  MXC_FORWARD_IF_ERROR(mxc__opctx_temp(
      ctx, (size_t)g.n * sizeof(nms_cand) + (size_t)g.w * sizeof(double),
      &tmp));
  nms_cand *c = tmp;
  double *buf = (double *)(c + g.n);
  for (int64_t b = 0; b < g.nb; ++b) {
    if (p->topk == 0) {
      for (int64_t i = b * g.n; i < (b + 1) * g.n; ++i) {
        nms_emit(&in[0], &g, p, 0, i, i, &out[0], req[0], buf);
        nms_record(rec, i, i);
      }
      continue;
    }
    nms_batch(&in[0], &g, p, b, c, buf, &out[0], req[0], rec);
  }
  return MXC_OK;
}

/* _backward__contrib_box_nms: (ograd, record) -> ddata. */
static int nms_backward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  const mxc__shape *s = &in[0].shape;
  int64_t w = s->dims[s->ndim - 1], rows = mxc__shape_size(s) / (w ? w : 1);
  if (req[0] == MXC__REQ_NULL || w == 0) return MXC_OK;
  mxc__vision_clear(out[0].ptr, rows * w, mxc__dtype_size(out[0].dtype),
                    req[0]);
  MXC__FLOAT_TYPED(in[0].dtype, {
    const T *g = in[0].ptr, *rec = in[1].ptr;
    T *dx = out[0].ptr;
    for (int64_t i = 0; i < rows; ++i) {
      /* Written so that NaN records are skipped. */
      if (!(rec[i] >= 0 && rec[i] < (T)rows)) continue;
      int64_t r = (int64_t)rec[i];
      for (int64_t k = 0; k < w; ++k) dx[r * w + k] += g[i * w + k];
    }
  });
  return MXC_OK;
}

static int nms_bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                         int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0) return MXC_OK;
  return mxc__vision_assign(op->name, &out[0], &in[0], "data gradient");
}

static int nms_grad(const mxc__node *fwd, const mxc__entry *ograd,
                    mxc__entry *igrad) {
  mxc__entry ins[2] = {ograd[0], {(mxc__node *)fwd, 1}};
  static const int grad_of[1] = {0};
  return mxc__grad_node_pick(fwd, "_backward__contrib_box_nms", ins, 2,
                               grad_of, igrad);
}

/* ---- box_iou ---- */

typedef struct iou_param {
  int format;
} iou_param;

static const mxc__param_def k_iou_params[] = {
    MXC__PARAM_ENUM(iou_param, format, "corner", k_formats,
                    "corner: (xmin, ymin, xmax, ymax); center: (x, y, w, "
                    "h)."),
};

static int iou_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  if (in[0].ndim < 0 || in[1].ndim < 0) return MXC_OK;
  char b1[160], b2[160];
  int nd = in[0].ndim + in[1].ndim - 2;
  MXC_RETURN_ERROR_IF(
      in[0].ndim < 1 || in[1].ndim < 1 || in[0].dims[in[0].ndim - 1] != 4 ||
          in[1].dims[in[1].ndim - 1] != 4 || nd > MXC_MAX_NDIM,
      MXC_ERR_SHAPE,
      "operator '%s': lhs and rhs must be (..., 4) boxes "
      "with at most %d leading axes together; got %s and %s",
      op->name, MXC_MAX_NDIM, mxc__shape_str(&in[0], b1, sizeof b1),
      mxc__shape_str(&in[1], b2, sizeof b2));
  mxc__shape o;
  o.ndim = nd;
  for (int i = 0; i < in[0].ndim - 1; ++i) o.dims[i] = in[0].dims[i];
  for (int i = 0; i < in[1].ndim - 1; ++i)
    o.dims[in[0].ndim - 1 + i] = in[1].dims[i];
  return mxc__vision_assign(op->name, &out[0], &o, "output");
}

static int iou_forward(const mxc__op *op, const mxc__opctx *ctx,
                       const void *param, const mxc__blob *in, int n_in,
                       const mxc__blob *out, int n_out, const mxc__req *req) {
  const iou_param *p = param;
  int64_t nl = mxc__shape_size(&in[0].shape) / 4,
          nr = mxc__shape_size(&in[1].shape) / 4;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  for (int64_t i = 0; i < nl; ++i) {
    double a[4];
    for (int t = 0; t < 4; ++t) a[t] = mxc__blob_get(&in[0], i * 4 + t);
    for (int64_t j = 0; j < nr; ++j) {
      double b[4];
      for (int t = 0; t < 4; ++t) b[t] = mxc__blob_get(&in[1], j * 4 + t);
      double v = box_iou(a, b, p->format);
      if (req[0] == MXC__REQ_ADD) v += mxc__blob_get(&out[0], i * nr + j);
      mxc__blob_set(&out[0], i * nr + j, v);
    }
  }
  return MXC_OK;
}

static const char *const k_nms_in[] = {"data", NULL};
static const char *const k_nms_out[] = {"output", "record", NULL};
static const char *const k_nms_bwd_in[] = {"ograd", "record", NULL};
static const char *const k_nms_alias[] = {
    "_contrib_box_non_maximum_suppression", NULL};
static const char *const k_iou_in[] = {"lhs", "rhs", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "_contrib_box_nms",
        .aliases = k_nms_alias,
        .doc = "Non-maximum suppression of boxes (..., N, W): survivors "
               "sorted by score, then rows of -1; same shape.",
        MXC__PARAMS_OF(nms_param, k_nms_params),
        .n_inputs = 1,
        .input_names = k_nms_in,
        .n_outputs = 2,
        .n_visible_outputs = 1,
        .output_names = k_nms_out,
        .infer_shape = nms_shape,
        .infer_type = mxc__vision_type_float,
        .compute = nms_forward,
        .gradient = nms_grad,
        .backward_uses_outputs = 2,
        .resources = MXC__RES_TEMP,
    },
    {
        MXC__BACKWARD("_contrib_box_nms"),
        MXC__PARAMS_OF(nms_param, k_nms_params),
        .n_inputs = 2,
        .input_names = k_nms_bwd_in,
        .n_outputs = 1,
        .infer_shape = nms_bwd_shape,
        .infer_type = mxc__vision_type_float,
        .compute = nms_backward,
    },
    {
        .name = "_contrib_box_iou",
        .doc = "IoU of every box of lhs (..., 4) with every box of rhs "
               "(..., 4): shape lhs[:-1] + rhs[:-1].",
        MXC__PARAMS_OF(iou_param, k_iou_params),
        .n_inputs = 2,
        .input_names = k_iou_in,
        .n_outputs = 1,
        .infer_shape = iou_shape,
        .infer_type = mxc__vision_type_float,
        .compute = iou_forward,
        .gradient = mxc__grad_none,
    },
};

int mxc__vision_register_box(mxc__registry *r) {
  for (int i = 0; i < MXC__COUNT(k_ops); ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
