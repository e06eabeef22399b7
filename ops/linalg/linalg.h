/* Internal header of the linear-algebra family (ops/linalg): dot,
 * batch_dot, FullyConnected, Convolution, Deconvolution, Pooling.
 *
 * Everything here computes in float32 or float64; float16 and bfloat16
 * arrays go through float32 copies (core/op/half_compute.h, as MXNet
 * computes half precision), and the shared type inference rejects other
 * dtypes at invoke time. Matrix products go
 * through one GEMM wrapper (OpenBLAS when built with MXC_USE_OPENBLAS, a
 * portable loop otherwise). Convolution-like operators share a geometry
 * description and the im2col/col2im helpers below. */
#ifndef MXC_OPS_LINALG_LINALG_H_
#define MXC_OPS_LINALG_LINALG_H_

#include <stdint.h>

#include "core/op/common.h"
#include "ops/linalg/linalg_params.h"

/* ---- GEMM ---- */

/* Row-major C(m,n) = op(A) op(B) (+ C when accumulate), op(X) = X or X^T
 * as ta/tb say; A is (m,k) or, transposed, stored (k,m); likewise B.
 * dtype is MXC_DTYPE_FLOAT32 or MXC_DTYPE_FLOAT64. Zero-sized products
 * are handled (k == 0 clears C unless accumulating). Never fails. */
void mxc__gemm(int dtype, int ta, int tb, int64_t m, int64_t n, int64_t k,
               const void *a, int64_t lda, const void *b, int64_t ldb,
               int accumulate, void *c, int64_t ldc);

/* 1 when products go to OpenBLAS (MXC_USE_OPENBLAS is defined only when
 * compiling this family): registration then adds the build feature
 * "OPENBLAS" (mxc_feature_enabled). */
int mxc__linalg_uses_openblas(void);

/* ---- shared inference helpers ---- */

/* infer_type for the family: every input and output has one dtype,
 * float32, float64, float16 or bfloat16. */
int mxc__linalg_infer_type(const mxc__op *op, const void *param, int *in,
                           int n_in, int *out, int n_out);
/* float32 or float64 only: for kernels without a half-precision path
 * (the linalg_* operators load every array as float or double). */
int mxc__linalg_infer_type_float(const mxc__op *op, const void *param,
                                 int *in, int n_in, int *out, int n_out);

/* infer_shape of the _backward_ operators built by mxc__grad_use_in:
 * inputs (ograd, x0, x1, ...), outputs (dx0, dx1, ...) shaped like the
 * forward inputs. */
int mxc__linalg_bwd_infer_shape(const mxc__op *op, const void *param,
                                mxc__shape *in, int n_in, mxc__shape *out,
                                int n_out);

/* Fills an unknown shape, or checks a known one against `want`
 * (MXC_ERR_SHAPE naming the operator and input). */
int mxc__linalg_assign_shape(const mxc__op *op, const void *param,
                             mxc__shape *slot, const mxc__shape *want,
                             const char *what);

/* ---- convolution parameters (Convolution, Deconvolution) ---- */

/* Layout choices shared by Convolution, Deconvolution and Pooling; only
 * the channel-first ones are implemented (param_check rejects others). */
enum {
  MXC__LAYOUT_NONE,
  MXC__LAYOUT_NCW,
  MXC__LAYOUT_NCHW,
  MXC__LAYOUT_NCDHW,
  MXC__LAYOUT_NWC,
  MXC__LAYOUT_NHWC,
  MXC__LAYOUT_NDHWC
};
extern const char *const mxc__linalg_layouts[];

/* Checks a layout against the number of spatial dims (nsp, 1..3). */
int mxc__linalg_check_layout(const char *op_name, int layout, int nsp);

typedef struct mxc__conv_param {
  mxc__tuple kernel, stride, dilate, pad;
  mxc__tuple adj, target_shape; /* Deconvolution only */
  int64_t num_filter, num_group, workspace;
  int no_bias, cudnn_off, layout;
} mxc__conv_param;

/* Parameter table entries common to Convolution and Deconvolution;
 * no_bias_default as MXNet 1.9 has it: "false" for Convolution, "true"
 * for Deconvolution. */
#define MXC__CONV_PARAM_DEFS(no_bias_default)                                  \
  MXC__PARAM(mxc__conv_param, kernel, MXC__P_TUPLE, NULL,                      \
             "Kernel size: (w,), (h, w) or (d, h, w)."),                       \
      MXC__PARAM(mxc__conv_param, stride, MXC__P_TUPLE, "()",                  \
                 "Stride per spatial axis; default 1."),                       \
      MXC__PARAM(mxc__conv_param, dilate, MXC__P_TUPLE, "()",                  \
                 "Dilation per spatial axis; default 1."),                     \
      MXC__PARAM(mxc__conv_param, pad, MXC__P_TUPLE, "()",                     \
                 "Zero padding on both sides per spatial axis; default 0."),   \
      MXC__PARAM_RANGE(mxc__conv_param, num_filter, MXC__P_INT, NULL, 1, 1e15, \
                       "Number of output channels."),                          \
      MXC__PARAM_RANGE(mxc__conv_param, num_group, MXC__P_INT, "1", 1, 1e15,   \
                       "Groups: channels split into this many independent "    \
                       "convolutions."),                                       \
      MXC__PARAM_RANGE(mxc__conv_param, workspace, MXC__P_INT, "1024", 0,      \
                       1e15,                                                   \
                       "Accepted for compatibility; workspace is sized "       \
                       "automatically."),                                      \
      MXC__PARAM(mxc__conv_param, no_bias, MXC__P_BOOL, no_bias_default,       \
                 "Omit the bias input."),                                      \
      MXC__PARAM(mxc__conv_param, cudnn_off, MXC__P_BOOL, "false",             \
                 "Accepted for compatibility; no effect on CPU."),             \
      MXC__PARAM_ENUM(                                                         \
          mxc__conv_param, layout, "None", mxc__linalg_layouts,                \
          "Data layout: None (channel-first), NCW, NCHW or NCDHW; "            \
          "channel-last layouts are rejected.")

/* Pooling's parameters (pool.c), here for the GPU plug-in's kernels,
 * which read them (backends/cuda). pool_type and pooling_convention
 * index the enums below, in the order of pool.c's choice lists. */
enum { MXC__POOL_MAX, MXC__POOL_AVG, MXC__POOL_SUM, MXC__POOL_LP };
enum { MXC__POOL_VALID, MXC__POOL_FULL, MXC__POOL_SAME };

typedef struct mxc__pool_param {
  mxc__tuple kernel, stride, pad;
  int pool_type, global_pool, pooling_convention, count_include_pad;
  int cudnn_off, layout;
  mxc__opt_int p_value;
} mxc__pool_param;

/* Fills defaults (stride/dilate 1, pad/adj 0) and checks what can be
 * checked without shapes. `deconv` enables adj/target_shape. */
int mxc__conv_param_check(const char *op_name, mxc__conv_param *p, int deconv);

/* The extent the kernel covers along spatial axis i with dilation,
 * dilate * (kernel - 1) + 1, checked: MXC_ERR_SHAPE when it overflows. */
int mxc__conv_span(const char *op_name, const mxc__conv_param *p, int i,
                   int64_t *out);

/* Input names and counts depending on no_bias. The name lists hold every
 * possible input (for introspection); num_inputs gives the count used. */
extern const char *const mxc__conv_input_names[];
extern const char *const mxc__conv_bwd_input_names[];
int mxc__conv_num_inputs(const void *param);
int mxc__conv_bwd_num_inputs(const void *param);
int mxc__conv_bwd_num_outputs(const void *param);
const char *mxc__conv_input_name(const void *param, int i);
const char *mxc__conv_bwd_input_name(const void *param, int i);

/* Convolution's shape inference and forward kernel (half precision
 * through float32 copies), for the fused operators (fused.c): in holds
 * data, weight and, unless p->no_bias, bias; one output. */
int mxc__conv_infer_shape(const mxc__op *op, const mxc__conv_param *p,
                          mxc__shape *in, int n_in, mxc__shape *out);
int mxc__conv_forward(const mxc__op *op, const mxc__opctx *ctx,
                      const mxc__conv_param *p, const mxc__blob *in, int n_in,
                      const mxc__blob *out, const mxc__req *req);

/* ---- fully connected ---- */

/* mxc__fc_param: linalg_params.h. */

/* FullyConnected's parameter table entries, shape inference and forward
 * kernel, as for Convolution above. */
#define MXC__FC_PARAM_DEFS                                                   \
  MXC__PARAM_RANGE(mxc__fc_param, num_hidden, MXC__P_INT, NULL, 1, 1e15,     \
                   "Number of hidden units (output features)."),             \
      MXC__PARAM(mxc__fc_param, no_bias, MXC__P_BOOL, "false",               \
                 "Omit the bias input."),                                    \
      MXC__PARAM(mxc__fc_param, flatten, MXC__P_BOOL, "true",                \
                 "Flatten all axes but the first into the input features; " \
                 "when false only the last axis is the feature axis.")
int mxc__fc_infer_shape(const mxc__op *op, const mxc__fc_param *p,
                        mxc__shape *in, int n_in, mxc__shape *out);
int mxc__fc_forward(const mxc__op *op, const mxc__opctx *ctx,
                    const mxc__fc_param *p, const mxc__blob *in, int n_in,
                    const mxc__blob *out, const mxc__req *req);

/* ---- fused inference operators (fused.c) ----
 *
 * What the inference passes of core/exec make of Convolution or
 * FullyConnected followed by an activation, and of a convolution whose
 * result is added to another value (a residual connection) before the
 * activation. Forward only, hidden (internal) operators:
 *   _FusedConvolution: every Convolution parameter plus act_type and
 *     with_sum; inputs data, weight[, bias][, sum];
 *     out = act(conv(data) + sum), sum shaped like the output.
 *   _FusedFullyConnected: every FullyConnected parameter plus act_type;
 *     out = act(fc(data)).
 * act_type indexes mxc__fused_act_types. Backends attach faster kernels
 * (oneDNN post-ops) to these names; the ones here are the reference. */
enum {
  MXC__FUSED_ACT_NONE,
  MXC__FUSED_ACT_RELU,
  MXC__FUSED_ACT_SIGMOID,
  MXC__FUSED_ACT_TANH,
  MXC__FUSED_ACT_SOFTRELU
};
extern const char *const mxc__fused_act_types[];

typedef struct {
  mxc__conv_param conv; /* first: Convolution's table applies as is */
  int act_type;
  int with_sum;
} mxc__fused_conv_param;

typedef struct {
  mxc__fc_param fc; /* first, likewise */
  int act_type;
} mxc__fused_fc_param;

int mxc__linalg_register_fused(mxc__registry *r);

/* ---- convolution geometry ----
 *
 * A convolution maps an "image" (N, img_c, img spatial) to "columns"
 * (N, col_c, col spatial): column position q of the column side sees the
 * kernel window of the image starting at q*stride - pad. Convolution's
 * image is its data and its columns its output; Deconvolution is the
 * transpose, so its output is the image and its data the column side.
 * Spatial extents are padded to 3-D with leading 1s (kernel 1, stride 1,
 * pad 0, dilate 1), so one loop nest serves 1-D, 2-D and 3-D. */
typedef struct mxc__conv_geom {
  int nsp;       /* spatial dims as given, 1..3 */
  int64_t batch; /* N */
  int64_t img_c, col_c, groups;
  int64_t img[3], col[3], k[3], s[3], p[3], d[3];
  int64_t img_n, col_n, k_n; /* products of img, col, k */
} mxc__conv_geom;

/* Fills g from parameters (kernel, stride, dilate; pad given separately
 * because Deconvolution may derive it from target_shape) and the spatial
 * extents of both sides (p->kernel.ndim of them). Shape inference calls
 * it, so it also checks that the sizes kernels derive from g (products of
 * extents, the column matrix of one sample) fit in int64: MXC_ERR_SHAPE
 * naming op_name otherwise. */
int mxc__conv_geom_fill(const char *op_name, const mxc__conv_param *p,
                        const int64_t *pad, int64_t batch, int64_t img_c,
                        int64_t col_c, const int64_t *img, const int64_t *col,
                        mxc__conv_geom *g);

/* Batch samples processed per GEMM (a "chunk"): enough column positions
 * for an efficient GEMM while the chunk's buffers stay in cache. `rows`
 * counts the buffer rows per column position, es the element size. */
int64_t mxc__conv_chunk(const mxc__conv_geom *g, int64_t rows, size_t es);

/* im2col of nb images starting at img (each img_c x img_n) into col, a
 * (img_c * k_n) x (nb * col_n) matrix; out-of-image taps are 0. */
void mxc__im2col(int dtype, const mxc__conv_geom *g, const void *img,
                 int64_t nb, void *col);
/* The adjoint: adds col back into the nb images (callers clear them
 * first unless accumulating). */
void mxc__col2im(int dtype, const mxc__conv_geom *g, const void *col,
                 int64_t nb, void *img);

/* (nb, c, n) -> (c, nb * n): gathers a chunk so that one GEMM covers it. */
void mxc__pack_chunk(int dtype, const void *src, int64_t nb, int64_t c,
                     int64_t n, void *dst);
/* (c, nb * n) -> (nb, c, n) with req (WRITE or ADD) and an optional
 * per-channel bias added. */
void mxc__unpack_chunk(int dtype, const void *src, int64_t nb, int64_t c,
                       int64_t n, const void *bias, mxc__req req, void *dst);
/* dst[nb, c, n] += bias[c]. */
void mxc__add_bias(int dtype, void *dst, int64_t nb, int64_t c, int64_t n,
                   const void *bias);
/* db[c] (req) = sum over nb and n of src (nb, c, n). */
void mxc__sum_bias(int dtype, const void *src, int64_t nb, int64_t c, int64_t n,
                   mxc__req req, void *db);
/* Clears nbytes unless req is ADD. */
void mxc__clear_unless_add(void *p, size_t nbytes, mxc__req req);

/* ---- per-file registration ---- */

int mxc__linalg_register_dot(mxc__registry *r);
int mxc__linalg_register_fc(mxc__registry *r);
int mxc__linalg_register_convolution(mxc__registry *r);
int mxc__linalg_register_deconvolution(mxc__registry *r);
int mxc__linalg_register_pooling(mxc__registry *r);
int mxc__linalg_register_rnn(mxc__registry *r);

#endif /* MXC_OPS_LINALG_LINALG_H_ */
