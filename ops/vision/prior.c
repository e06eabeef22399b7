/* _contrib_MultiBoxPrior: SSD anchor boxes for a feature map, with MXNet
 * 1.9's rules.
 *
 * For data (N, C, H, W) the output is (1, H * W * A, 4) corner boxes
 * (xmin, ymin, xmax, ymax) in [0, 1] image units, A = len(sizes) +
 * len(ratios) - 1 anchors per cell, ordered by row, column, anchor. Cell
 * (r, c) is centred at ((c + offsets[1]) * step_x, (r + offsets[0]) *
 * step_y), steps defaulting to 1/W and 1/H. Its anchors are every size s
 * at ratio 1 (half-width s * H / W / 2, half-height s / 2), then sizes[0]
 * at every ratio but the first (half-width scaled by sqrt(ratio),
 * half-height divided by it). clip clamps coordinates to [0, 1]. The
 * anchors depend on the data's shape only: no gradient flows to data. */
#include <math.h>
#include <string.h>

#include "ops/vision/vision.h"

#define PRIOR_MAX_VALUES 64

typedef struct prior_param {
  char sizes[MXC__PARAM_STR_MAX], ratios[MXC__PARAM_STR_MAX];
  char steps[MXC__PARAM_STR_MAX], offsets[MXC__PARAM_STR_MAX];
  int clip;
  /* Parsed by param_check. */
  int n_sizes, n_ratios;
  double size[PRIOR_MAX_VALUES], ratio[PRIOR_MAX_VALUES];
  double step[2], offset[2];
} prior_param;

static const mxc__param_def k_params[] = {
    MXC__PARAM(prior_param, sizes, MXC__P_STRING, "(1.0,)",
               "Anchor sizes as fractions of the image, e.g. (0.2, 0.272)."),
    MXC__PARAM(prior_param, ratios, MXC__P_STRING, "(1.0,)",
               "Aspect ratios (width / height) of the anchors."),
    MXC__PARAM(prior_param, clip, MXC__P_BOOL, "false",
               "Clamp anchor coordinates to [0, 1]."),
    MXC__PARAM(prior_param, steps, MXC__P_STRING, "(-1.0, -1.0)",
               "Cell size (y, x) in image units; <= 0: 1 / extent."),
    MXC__PARAM(prior_param, offsets, MXC__P_STRING, "(0.5, 0.5)",
               "Centre offset (y, x) within a cell, in cells."),
};

static int prior_check(const char *op_name, void *param) {
  prior_param *p = param;
  int ns = 0, no = 0;
  MXC_FORWARD_IF_ERROR(mxc__vision_parse_floats(
      op_name, "sizes", p->sizes, p->size, PRIOR_MAX_VALUES, &p->n_sizes));
  MXC_FORWARD_IF_ERROR(mxc__vision_parse_floats(
      op_name, "ratios", p->ratios, p->ratio, PRIOR_MAX_VALUES, &p->n_ratios));
  MXC_FORWARD_IF_ERROR(
      mxc__vision_parse_floats(op_name, "steps", p->steps, p->step, 2, &ns));
  MXC_FORWARD_IF_ERROR(mxc__vision_parse_floats(op_name, "offsets", p->offsets,
                                                p->offset, 2, &no));
  MXC_RETURN_ERROR_IF(ns != 2 || no != 2, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': steps and offsets must hold 2 values "
                      "(y, x)",
                      op_name);
  MXC_RETURN_ERROR_IF(p->n_sizes < 1 || p->n_ratios < 1,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': sizes and ratios need at least one "
                      "value each",
                      op_name);
  for (int i = 0; i < p->n_sizes; ++i) {
    MXC_RETURN_ERROR_IF(!(p->size[i] > 0), MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': sizes must be positive; got %g",
                        op_name, p->size[i]);
  }
  for (int i = 0; i < p->n_ratios; ++i) {
    MXC_RETURN_ERROR_IF(!(p->ratio[i] > 0), MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': ratios must be positive; got %g",
                        op_name, p->ratio[i]);
  }
  return MXC_OK;
}

static int prior_shape(const mxc__op *op, const void *param, mxc__shape *in,
                       int n_in, mxc__shape *out, int n_out) {
  const prior_param *p = param;
  int known;
  MXC_FORWARD_IF_ERROR(mxc__vision_need_ndim(op->name, &in[0], 4, "data",
                                             "4-D (N, C, H, W)", &known));
  if (!known) return MXC_OK;
  int64_t cells, n;
  char b[160];
  MXC_RETURN_ERROR_IF(
      !mxc__mul_i64(in[0].dims[2], in[0].dims[3], &cells) ||
          !mxc__mul_i64(cells, p->n_sizes + p->n_ratios - 1, &n),
      MXC_ERR_SHAPE, "operator '%s': too many anchors for data of shape %s",
      op->name, mxc__shape_str(&in[0], b, sizeof b));
  int64_t d[3] = {1, n, 4};
  mxc__shape o = mxc__vision_shape(3, d);
  return mxc__vision_assign(op->name, &out[0], &o, "anchors");
}

/* Writes one anchor (half extents hw, hh around cx, cy) at row k. */
static void prior_put(const prior_param *p, const mxc__blob *out, mxc__req req,
                      int64_t k, double cx, double cy, double hw, double hh) {
  double v[4] = {cx - hw, cy - hh, cx + hw, cy + hh};
  for (int t = 0; t < 4; ++t) {
    double x = p->clip ? fmin(fmax(v[t], 0), 1) : v[t];
    if (req == MXC__REQ_ADD) x += mxc__blob_get(out, k * 4 + t);
    mxc__blob_set(out, k * 4 + t, x);
  }
}

static int prior_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  const prior_param *p = param;
  int64_t h = in[0].shape.dims[2], w = in[0].shape.dims[3], k = 0;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  int dflt = p->step[0] <= 0 || p->step[1] <= 0;
  double sy = dflt ? 1.0 / (double)h : p->step[0];
  double sx = dflt ? 1.0 / (double)w : p->step[1];
  double aspect = (double)h / (double)w;
  for (int64_t r = 0; r < h; ++r) {
    double cy = ((double)r + p->offset[0]) * sy;
    for (int64_t c = 0; c < w; ++c) {
      double cx = ((double)c + p->offset[1]) * sx;
      for (int i = 0; i < p->n_sizes; ++i)
        prior_put(p, &out[0], req[0], k++, cx, cy, p->size[i] * aspect / 2,
                  p->size[i] / 2);
      for (int j = 1; j < p->n_ratios; ++j) {
        double q = sqrt(p->ratio[j]);
        prior_put(p, &out[0], req[0], k++, cx, cy, p->size[0] * aspect * q / 2,
                  p->size[0] / q / 2);
      }
    }
  }
  return MXC_OK;
}

static const char *const k_in[] = {"data", NULL};

static const mxc__op k_ops[] = {
    {
        .name = "_contrib_MultiBoxPrior",
        .doc = "SSD anchors for the cells of data (N, C, H, W): (1, H * W * "
               "(len(sizes) + len(ratios) - 1), 4) corner boxes.",
        MXC__PARAMS_OF(prior_param, k_params),
        .param_check = prior_check,
        .n_inputs = 1,
        .input_names = k_in,
        .n_outputs = 1,
        .infer_shape = prior_shape,
        .infer_type = mxc__vision_type_float,
        .compute = prior_forward,
        .gradient = mxc__grad_none,
    },
};

int mxc__vision_register_prior(mxc__registry *r) {
  for (int i = 0; i < MXC__COUNT(k_ops); ++i) {
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_ops[i]));
  }
  return MXC_OK;
}
