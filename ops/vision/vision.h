/* Internal header of the vision family (ops/vision): ROIPooling,
 * _contrib_ROIAlign, _contrib_box_nms, _contrib_box_iou,
 * _contrib_MultiBoxPrior / Target / Detection, GridGenerator,
 * BilinearSampler and SpatialTransformer, with MXNet 1.9's names,
 * parameters and semantics.
 *
 * Kernels handle float32 and float64 through MXC__FLOAT_TYPED (one typed loop
 * per dtype); coordinates and interpolation weights are computed in the
 * data's own type, as MXNet does, so that rounding and bin edges match. */
#ifndef MXC_OPS_VISION_VISION_H_
#define MXC_OPS_VISION_VISION_H_

#include "core/op/common.h"

/* infer_type: every input and output shares one dtype, float32 or
 * float64. */
int mxc__vision_type_float(const mxc__op *op, const void *param, int *in,
                           int n_in, int *out, int n_out);

/* Fills an unknown shape or checks a known one (MXC_ERR_SHAPE naming the
 * operator and `what`). */
int mxc__vision_assign(const char *op_name, mxc__shape *slot,
                       const mxc__shape *want, const char *what);

/* MXC_ERR_SHAPE unless s is known with ndim dims: "operator 'op': what
 * must be <expect>; got shape (...)". Unknown shapes pass (returns
 * MXC_OK, *known = 0). */
int mxc__vision_need_ndim(const char *op_name, const mxc__shape *s, int ndim,
                          const char *what, const char *expect, int *known);

/* A shape from n extents. */
mxc__shape mxc__vision_shape(int n, const int64_t *dims);

/* Clears n elements of es bytes unless req is ADD (gradients that
 * scatter-add into their output). */
void mxc__vision_clear(void *p, int64_t n, size_t es, mxc__req req);

/* Parses a float tuple parameter, "(a, b, ...)", "[a, b]" or "a", into at
 * most max finite values (MXC_ERR_INVALID_ARGUMENT naming op_name and key
 * otherwise); *n gets the count. */
int mxc__vision_parse_floats(const char *op_name, const char *key,
                             const char *s, double *out, int max, int *n);

int mxc__vision_register_detection(mxc__registry *r);
int mxc__vision_register_target(mxc__registry *r);
int mxc__vision_register_roi(mxc__registry *r);
int mxc__vision_register_box(mxc__registry *r);
int mxc__vision_register_prior(mxc__registry *r);
int mxc__vision_register_sampler(mxc__registry *r);

#endif /* MXC_OPS_VISION_VISION_H_ */
