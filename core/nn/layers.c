/* The built-in layers: each kind checks its configuration once (setup),
 * turning it into the parameter strings of one registry operator, and its
 * forward pass makes the parameters ready for the input's shape and calls
 * that operator (then the activation, if any). Names and keys follow
 * Gluon's (units, channels, kernel_size, strides, ...); parameters are
 * named "<block>_weight", "<block>_bias", "<block>_gamma", ... */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/base/strbuf.h"
#include "core/nn/internal.h"
#include "core/op/param.h"

/* Parameter strings being built for a layer's operator. */
typedef struct nn_kv {
  int n;
  const char *k[16];
  char v[16][96];
  const char *vp[16];
} nn_kv;

static void kv_add(nn_kv *kv, const char *k, const char *fmt, ...)
    MXC__PRINTF(3, 4);
static void kv_add(nn_kv *kv, const char *k, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(kv->v[kv->n], sizeof kv->v[kv->n], fmt, ap);
  va_end(ap);
  kv->k[kv->n] = k;
  kv->vp[kv->n] = kv->v[kv->n];
  kv->n++;
}

static int kv_set_op(mxc__block *b, const char *op, const nn_kv *kv) {
  return mxc__nn_set_op(b, op, kv->n, kv->k, kv->vp);
}

int mxc__nn_set_op(mxc__block *b, const char *op, int n,
                   const char *const *keys, const char *const *vals) {
  MXC_FORWARD_IF_ERROR(mxc__op_lookup(op, &b->op));
  void *param = NULL;
  int rc = mxc__op_parse_params(b->op, keys, vals, n, &param);
  mxc__free(param);
  if (rc != MXC_OK) {
    mxc__error_prefix(b->name);
    return rc;
  }
  b->op_keys = mxc__calloc(n ? (size_t)n : 1, sizeof *b->op_keys);
  b->op_vals = mxc__calloc(n ? (size_t)n : 1, sizeof *b->op_vals);
  MXC_RETURN_ERROR_IF(!b->op_keys || !b->op_vals, MXC_ERR_OOM,
                      "block '%s': out of memory", b->name);
  for (int i = 0; i < n; ++i, b->n_op = i) {
    b->op_keys[i] = mxc__strdup(keys[i]);
    b->op_vals[i] = mxc__strdup(vals[i]);
    if (!b->op_keys[i] || !b->op_vals[i]) {
      b->n_op = i + 1; /* both freed with the block */
      return mxc__error_set(MXC_ERR_OOM, "block '%s': out of memory", b->name);
    }
  }
  b->n_op = n;
  return MXC_OK;
}

int mxc__nn_activation(mxc__block *b, const char **out) {
  static const char *const acts[] = {"relu", "sigmoid", "tanh", "softrelu",
                                     "softsign"};
  const char *a = mxc__nn_cfg(b, "activation", NULL);
  *out = NULL;
  if (!a || !*a || !strcmp(a, "None")) return MXC_OK;
  for (size_t i = 0; i < sizeof acts / sizeof *acts; ++i) {
    if (!strcmp(a, acts[i])) {
      *out = acts[i];
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "block '%s': activation '%s'; expected relu, sigmoid, "
                        "tanh, softrelu or softsign",
                        b->name, a);
}

/* key as a tuple of nd extents in [lo, 2^31): "3" means (3, 3, ...). */
static int cfg_tuple(mxc__block *b, const char *key, const char *dflt, int nd,
                     int64_t lo, int64_t *out) {
  const char *s = mxc__nn_cfg(b, key, dflt);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': %s is required", b->name, key);
  mxc__tuple t;
  int ok = mxc__tuple_parse(s, &t) == 1 && (t.ndim == 1 || t.ndim == nd);
  for (int i = 0; ok && i < t.ndim; ++i) {
    ok = t.d[i] >= lo && t.d[i] < ((int64_t)1 << 31);
  }
  MXC_RETURN_ERROR_IF(!ok, MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': %s is '%s'; expected one integer >= %lld "
                      "or %d of them",
                      b->name, key, s, (long long)lo, nd);
  for (int i = 0; i < nd; ++i) out[i] = t.d[t.ndim == 1 ? 0 : i];
  return MXC_OK;
}

/* "(a,b,...)" of d[0..nd) into kv under key. */
static void kv_tuple(nn_kv *kv, const char *key, const int64_t *d, int nd) {
  char buf[96];
  int at = snprintf(buf, sizeof buf, "(");
  for (int i = 0; i < nd; ++i) {
    at += snprintf(buf + at, sizeof buf - (size_t)at, "%s%lld", i ? "," : "",
                   (long long)d[i]);
  }
  snprintf(buf + at, sizeof buf - (size_t)at, ")");
  kv_add(kv, key, "%s", buf);
}

static int cfg_init(mxc__block *b, const char *key, const char *dflt,
                    const char **out) {
  *out = mxc__nn_cfg(b, key, dflt);
  return MXC_OK;
}

/* ---- dense ---- */

static int dense_setup(mxc__block *b) {
  int64_t units, in_units;
  int bias, flatten;
  const char *wi, *bi;
  MXC_FORWARD_IF_ERROR(
      mxc__nn_cfg_int(b, "units", 0, 1, INT32_MAX, &units));
  MXC_RETURN_ERROR_IF(!mxc__nn_cfg(b, "units", NULL), MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': units is required", b->name);
  MXC_FORWARD_IF_ERROR(
      mxc__nn_cfg_int(b, "in_units", 0, 0, INT32_MAX, &in_units));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "use_bias", 1, &bias));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "flatten", 1, &flatten));
  MXC_FORWARD_IF_ERROR(mxc__nn_activation(b, &b->act));
  cfg_init(b, "weight_initializer", NULL, &wi);
  cfg_init(b, "bias_initializer", "zeros", &bi);
  int64_t wd[2] = {units, in_units};
  MXC_FORWARD_IF_ERROR(mxc__nn_param_declare(b, "weight", 2, wd, 0, wi));
  if (bias) MXC_FORWARD_IF_ERROR(mxc__nn_param_declare(b, "bias", 1, wd, 0, bi));
  nn_kv kv = {0};
  kv_add(&kv, "num_hidden", "%lld", (long long)units);
  kv_add(&kv, "no_bias", "%d", !bias);
  kv_add(&kv, "flatten", "%d", flatten);
  return kv_set_op(b, "FullyConnected", &kv);
}

/* Input features of a dense layer: everything after axis 0 (flatten) or
 * the last axis. */
static int dense_in_units(const mxc__block *b, const mxc__ndarray *x,
                          int64_t *out) {
  const mxc__shape *s = &x->shape;
  MXC_RETURN_ERROR_IF(s->ndim < 2, MXC_ERR_SHAPE,
                      "forward '%s': the input has %d axes; expected >= 2",
                      b->name, s->ndim);
  int flatten = strcmp(b->op_vals[2], "0") != 0;
  int64_t n = flatten ? 1 : s->dims[s->ndim - 1];
  for (int i = 1; flatten && i < s->ndim; ++i) {
    MXC_RETURN_ERROR_IF(!mxc__mul_i64(n, s->dims[i], &n), MXC_ERR_SHAPE,
                        "forward '%s': input features overflow", b->name);
  }
  *out = n;
  return MXC_OK;
}

static int dense_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                         mxc__ndarray **out) {
  (void)n_in;
  int64_t units = b->params[0].shape.dims[0], k = 0;
  MXC_FORWARD_IF_ERROR(dense_in_units(b, in[0], &k));
  mxc__shape ws = {2, {units, k}}, bs = {1, {units}};
  MXC_FORWARD_IF_ERROR(mxc__nn_param_ready(b, 0, &ws, in[0]));
  if (b->n_params > 1) MXC_FORWARD_IF_ERROR(mxc__nn_param_ready(b, 1, &bs, in[0]));
  mxc__ndarray *args[3] = {in[0], b->params[0].data,
                           b->n_params > 1 ? b->params[1].data : NULL};
  return mxc__nn_run_op(b, 1 + b->n_params, args, out);
}

/* ---- convolution ---- */

/* Spatial axes of a convolution or pooling kind: 1 or 2 from its name. */
static int kind_nd(const mxc__block *b) {
  return strstr(b->kind->name, "1d") ? 1 : 2;
}

static int conv_setup(mxc__block *b) {
  int nd = kind_nd(b), bias;
  int64_t ch, groups, in_ch, k[2], s[2], p[2], d[2];
  const char *wi, *bi;
  MXC_RETURN_ERROR_IF(!mxc__nn_cfg(b, "channels", NULL),
                      MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': channels is required", b->name);
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_int(b, "channels", 0, 1, INT32_MAX, &ch));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_int(b, "groups", 1, 1, INT32_MAX, &groups));
  MXC_FORWARD_IF_ERROR(
      mxc__nn_cfg_int(b, "in_channels", 0, 0, INT32_MAX, &in_ch));
  MXC_FORWARD_IF_ERROR(cfg_tuple(b, "kernel_size", NULL, nd, 1, k));
  MXC_FORWARD_IF_ERROR(cfg_tuple(b, "strides", "1", nd, 1, s));
  MXC_FORWARD_IF_ERROR(cfg_tuple(b, "padding", "0", nd, 0, p));
  MXC_FORWARD_IF_ERROR(cfg_tuple(b, "dilation", "1", nd, 1, d));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "use_bias", 1, &bias));
  MXC_FORWARD_IF_ERROR(mxc__nn_activation(b, &b->act));
  MXC_RETURN_ERROR_IF(ch % groups || in_ch % groups, MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': channels %lld and in_channels %lld must "
                      "be multiples of groups %lld",
                      b->name, (long long)ch, (long long)in_ch,
                      (long long)groups);
  cfg_init(b, "weight_initializer", NULL, &wi);
  cfg_init(b, "bias_initializer", "zeros", &bi);
  int64_t wd[4] = {ch, in_ch / groups, k[0], k[1]};
  MXC_FORWARD_IF_ERROR(mxc__nn_param_declare(b, "weight", 2 + nd, wd, 0, wi));
  if (bias) MXC_FORWARD_IF_ERROR(mxc__nn_param_declare(b, "bias", 1, wd, 0, bi));
  nn_kv kv = {0};
  kv_tuple(&kv, "kernel", k, nd);
  kv_tuple(&kv, "stride", s, nd);
  kv_tuple(&kv, "pad", p, nd);
  kv_tuple(&kv, "dilate", d, nd);
  kv_add(&kv, "num_filter", "%lld", (long long)ch);
  kv_add(&kv, "num_group", "%lld", (long long)groups);
  kv_add(&kv, "no_bias", "%d", !bias);
  return kv_set_op(b, "Convolution", &kv);
}

static int conv_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                        mxc__ndarray **out) {
  (void)n_in;
  int nd = kind_nd(b);
  const mxc__shape *x = &in[0]->shape;
  MXC_RETURN_ERROR_IF(x->ndim != nd + 2, MXC_ERR_SHAPE,
                      "forward '%s': the input has %d axes; expected %d "
                      "(batch, channels, %s)",
                      b->name, x->ndim, nd + 2, nd == 1 ? "width" : "height, width");
  mxc__shape ws = b->params[0].shape;
  int64_t groups = 1;
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_int(b, "groups", 1, 1, INT32_MAX, &groups));
  MXC_RETURN_ERROR_IF(x->dims[1] % groups, MXC_ERR_SHAPE,
                      "forward '%s': %lld input channels are not a multiple "
                      "of groups %lld",
                      b->name, (long long)x->dims[1], (long long)groups);
  ws.dims[1] = x->dims[1] / groups;
  mxc__shape bs = {1, {ws.dims[0]}};
  MXC_FORWARD_IF_ERROR(mxc__nn_param_ready(b, 0, &ws, in[0]));
  if (b->n_params > 1) MXC_FORWARD_IF_ERROR(mxc__nn_param_ready(b, 1, &bs, in[0]));
  mxc__ndarray *args[3] = {in[0], b->params[0].data,
                           b->n_params > 1 ? b->params[1].data : NULL};
  return mxc__nn_run_op(b, 1 + b->n_params, args, out);
}

/* ---- pooling ---- */

static int pool_setup(mxc__block *b) {
  const char *name = b->kind->name;
  int nd = kind_nd(b), global = !strncmp(name, "global_", 7), ceil, incl;
  int64_t k[2] = {1, 1}, s[2] = {1, 1}, p[2] = {0, 0};
  if (!global) {
    MXC_FORWARD_IF_ERROR(cfg_tuple(b, "pool_size", "2", nd, 1, k));
    const char *sd = mxc__nn_cfg(b, "strides", NULL);
    MXC_FORWARD_IF_ERROR(sd ? cfg_tuple(b, "strides", NULL, nd, 1, s)
                            : cfg_tuple(b, "pool_size", "2", nd, 1, s));
    MXC_FORWARD_IF_ERROR(cfg_tuple(b, "padding", "0", nd, 0, p));
  }
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "ceil_mode", 0, &ceil));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "count_include_pad", 1, &incl));
  nn_kv kv = {0};
  kv_tuple(&kv, "kernel", k, nd);
  kv_tuple(&kv, "stride", s, nd);
  kv_tuple(&kv, "pad", p, nd);
  kv_add(&kv, "pool_type", "%s", strstr(name, "max") ? "max" : "avg");
  kv_add(&kv, "global_pool", "%d", global);
  kv_add(&kv, "pooling_convention", "%s", ceil ? "full" : "valid");
  kv_add(&kv, "count_include_pad", "%d", incl);
  return kv_set_op(b, "Pooling", &kv);
}

static int pool_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                        mxc__ndarray **out) {
  int nd = kind_nd(b);
  MXC_RETURN_ERROR_IF(in[0]->shape.ndim != nd + 2, MXC_ERR_SHAPE,
                      "forward '%s': the input has %d axes; expected %d",
                      b->name, in[0]->shape.ndim, nd + 2);
  return mxc__nn_run_op(b, n_in, in, out);
}

/* ---- normalization ---- */

/* gamma, beta (and BatchNorm's running statistics) over `channels`. */
static int norm_params(mxc__block *b, int running) {
  int64_t ch;
  int scale, center;
  MXC_FORWARD_IF_ERROR(
      mxc__nn_cfg_int(b, "in_channels", 0, 0, INT32_MAX, &ch));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "scale", 1, &scale));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "center", 1, &center));
  MXC_RETURN_ERROR_IF(!center, MXC_ERR_UNSUPPORTED,
                      "block '%s': center=0 is not supported yet", b->name);
  const char *gi = mxc__nn_cfg(b, "gamma_initializer", "ones");
  const char *bi = mxc__nn_cfg(b, "beta_initializer", "zeros");
  MXC_FORWARD_IF_ERROR(mxc__nn_param_declare(b, "gamma", 1, &ch, 0, gi));
  MXC_FORWARD_IF_ERROR(mxc__nn_param_declare(b, "beta", 1, &ch, 0, bi));
  if (!running) return MXC_OK;
  const char *mi = mxc__nn_cfg(b, "running_mean_initializer", "zeros");
  const char *vi = mxc__nn_cfg(b, "running_variance_initializer", "ones");
  MXC_FORWARD_IF_ERROR(mxc__nn_param_declare(b, "running_mean", 1, &ch, 1, mi));
  return mxc__nn_param_declare(b, "running_var", 1, &ch, 1, vi);
}

static int batchnorm_setup(mxc__block *b) {
  int64_t axis;
  int scale, global;
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_int(b, "axis", 1, -MXC_MAX_NDIM,
                                       MXC_MAX_NDIM - 1, &axis));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "scale", 1, &scale));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "use_global_stats", 0, &global));
  MXC_FORWARD_IF_ERROR(norm_params(b, 1));
  nn_kv kv = {0};
  kv_add(&kv, "axis", "%lld", (long long)axis);
  kv_add(&kv, "eps", "%s", mxc__nn_cfg(b, "epsilon", "1e-5"));
  kv_add(&kv, "momentum", "%s", mxc__nn_cfg(b, "momentum", "0.9"));
  kv_add(&kv, "fix_gamma", "%d", !scale);
  kv_add(&kv, "use_global_stats", "%d", global);
  return kv_set_op(b, "BatchNorm", &kv);
}

static int layernorm_setup(mxc__block *b) {
  int64_t axis;
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_int(b, "axis", -1, -MXC_MAX_NDIM,
                                       MXC_MAX_NDIM - 1, &axis));
  MXC_FORWARD_IF_ERROR(norm_params(b, 0));
  nn_kv kv = {0};
  kv_add(&kv, "axis", "%lld", (long long)axis);
  kv_add(&kv, "eps", "%s", mxc__nn_cfg(b, "epsilon", "1e-5"));
  return kv_set_op(b, "LayerNorm", &kv);
}

static int norm_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                        mxc__ndarray **out) {
  (void)n_in;
  const mxc__shape *x = &in[0]->shape;
  int64_t axis = 0;
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_int(b, "axis", b->n_params == 4 ? 1 : -1,
                                       -MXC_MAX_NDIM, MXC_MAX_NDIM - 1, &axis));
  if (axis < 0) axis += x->ndim;
  MXC_RETURN_ERROR_IF(axis < 0 || axis >= x->ndim, MXC_ERR_SHAPE,
                      "forward '%s': axis is out of range for an input of "
                      "%d axes",
                      b->name, x->ndim);
  mxc__shape cs = {1, {x->dims[axis]}};
  mxc__ndarray *args[5] = {in[0]};
  for (int i = 0; i < b->n_params; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__nn_param_ready(b, i, &cs, in[0]));
    args[1 + i] = b->params[i].data;
  }
  return mxc__nn_run_op(b, 1 + b->n_params, args, out);
}

/* ---- layers without parameters ---- */

static int dropout_setup(mxc__block *b) {
  nn_kv kv = {0};
  kv_add(&kv, "p", "%s", mxc__nn_cfg(b, "rate", "0.5"));
  kv_add(&kv, "axes", "%s", mxc__nn_cfg(b, "axes", "()"));
  return kv_set_op(b, "Dropout", &kv);
}

static int activation_setup(mxc__block *b) {
  const char *act = NULL;
  MXC_FORWARD_IF_ERROR(mxc__nn_activation(b, &act));
  MXC_RETURN_ERROR_IF(!act, MXC_ERR_INVALID_ARGUMENT,
                      "block '%s': activation is required", b->name);
  nn_kv kv = {0};
  kv_add(&kv, "act_type", "%s", act);
  return kv_set_op(b, "Activation", &kv);
}

static int flatten_setup(mxc__block *b) {
  nn_kv kv = {0};
  return kv_set_op(b, "Flatten", &kv);
}

static int plain_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                         mxc__ndarray **out) {
  return mxc__nn_run_op(b, n_in, in, out);
}

/* ---- embedding ---- */

static int embedding_setup(mxc__block *b) {
  int64_t dims[2];
  MXC_RETURN_ERROR_IF(
      !mxc__nn_cfg(b, "input_dim", NULL) || !mxc__nn_cfg(b, "output_dim", NULL),
      MXC_ERR_INVALID_ARGUMENT, "block '%s': input_dim and output_dim are "
      "required", b->name);
  MXC_FORWARD_IF_ERROR(
      mxc__nn_cfg_int(b, "input_dim", 0, 1, INT32_MAX, &dims[0]));
  MXC_FORWARD_IF_ERROR(
      mxc__nn_cfg_int(b, "output_dim", 0, 1, INT32_MAX, &dims[1]));
  const char *wi = mxc__nn_cfg(b, "weight_initializer", NULL);
  MXC_FORWARD_IF_ERROR(mxc__nn_param_declare(b, "weight", 2, dims, 0, wi));
  nn_kv kv = {0};
  kv_add(&kv, "input_dim", "%lld", (long long)dims[0]);
  kv_add(&kv, "output_dim", "%lld", (long long)dims[1]);
  return kv_set_op(b, "Embedding", &kv);
}

static int embedding_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                             mxc__ndarray **out) {
  (void)n_in;
  MXC_FORWARD_IF_ERROR(
      mxc__nn_param_ready(b, 0, &b->params[0].shape, in[0]));
  mxc__ndarray *args[2] = {in[0], b->params[0].data};
  return mxc__nn_run_op(b, 2, args, out);
}

/* ---- sequential ---- */

static int sequential_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                              mxc__ndarray **out) {
  MXC_RETURN_ERROR_IF(b->n_children == 0, MXC_ERR_INVALID_ARGUMENT,
                      "forward '%s': the sequential block is empty", b->name);
  mxc__ndarray *cur = NULL;
  MXC_FORWARD_IF_ERROR(mxc__block_forward(b->children[0], n_in, in, &cur));
  for (int i = 1; i < b->n_children; ++i) {
    mxc__ndarray *next = NULL;
    int rc = mxc__block_forward(b->children[i], 1, &cur, &next);
    mxc__ndarray_free(cur);
    MXC_FORWARD_IF_ERROR(rc);
    cur = next;
  }
  *out = cur;
  return MXC_OK;
}

/* ---- the table ---- */

#define INITS "weight_initializer", "bias_initializer"
static const char *const k_dense[] = {"units", "activation", "use_bias",
                                      "flatten", "in_units", INITS, NULL};
static const char *const k_conv[] = {"channels", "kernel_size", "strides",
                                     "padding", "dilation", "groups",
                                     "activation", "use_bias", "in_channels",
                                     INITS, NULL};
static const char *const k_pool[] = {"pool_size", "strides", "padding",
                                     "ceil_mode", "count_include_pad", NULL};
static const char *const k_global[] = {NULL};
#define NORM_KEYS "axis", "epsilon", "center", "scale", "in_channels", \
                  "gamma_initializer", "beta_initializer"
static const char *const k_bn[] = {NORM_KEYS, "momentum", "use_global_stats",
                                   "running_mean_initializer",
                                   "running_variance_initializer", NULL};
static const char *const k_ln[] = {NORM_KEYS, NULL};
static const char *const k_dropout[] = {"rate", "axes", NULL};
static const char *const k_act[] = {"activation", NULL};
static const char *const k_emb[] = {"input_dim", "output_dim",
                                    "weight_initializer", NULL};

static const mxc__nn_kind k_layers[] = {
    {"dense", k_dense, 1, dense_setup, dense_forward, NULL},
    {"conv1d", k_conv, 1, conv_setup, conv_forward, NULL},
    {"conv2d", k_conv, 1, conv_setup, conv_forward, NULL},
    {"maxpool1d", k_pool, 1, pool_setup, pool_forward, NULL},
    {"maxpool2d", k_pool, 1, pool_setup, pool_forward, NULL},
    {"avgpool1d", k_pool, 1, pool_setup, pool_forward, NULL},
    {"avgpool2d", k_pool, 1, pool_setup, pool_forward, NULL},
    {"global_maxpool1d", k_global, 1, pool_setup, pool_forward, NULL},
    {"global_maxpool2d", k_global, 1, pool_setup, pool_forward, NULL},
    {"global_avgpool1d", k_global, 1, pool_setup, pool_forward, NULL},
    {"global_avgpool2d", k_global, 1, pool_setup, pool_forward, NULL},
    {"batchnorm", k_bn, 1, batchnorm_setup, norm_forward, NULL},
    {"layernorm", k_ln, 1, layernorm_setup, norm_forward, NULL},
    {"dropout", k_dropout, 1, dropout_setup, plain_forward, NULL},
    {"activation", k_act, 1, activation_setup, plain_forward, NULL},
    {"flatten", k_global, 1, flatten_setup, plain_forward, NULL},
    {"embedding", k_emb, 1, embedding_setup, embedding_forward, NULL},
    {"lstm", mxc__nn_rnn_keys, 1, mxc__nn_rnn_setup, mxc__nn_rnn_forward,
     mxc__nn_rnn_symbol},
    {"gru", mxc__nn_rnn_keys, 1, mxc__nn_rnn_setup, mxc__nn_rnn_forward,
     mxc__nn_rnn_symbol},
    {"sequential", k_global, -1, NULL, sequential_forward, NULL},
};

const mxc__nn_kind *mxc__nn_kind_find(const char *name) {
  for (size_t i = 0; i < sizeof k_layers / sizeof *k_layers; ++i) {
    if (!strcmp(k_layers[i].name, name)) return &k_layers[i];
  }
  for (int i = 0; i < mxc__nn_n_loss_kinds; ++i) {
    if (!strcmp(mxc__nn_loss_kinds[i].name, name)) {
      return &mxc__nn_loss_kinds[i];
    }
  }
  return NULL;
}

const char *mxc__nn_kind_names(void) {
  return "dense, conv1d, conv2d, maxpool1d, maxpool2d, avgpool1d, avgpool2d, "
         "global_maxpool1d, global_maxpool2d, global_avgpool1d, "
         "global_avgpool2d, batchnorm, layernorm, dropout, activation, "
         "flatten, embedding, lstm, gru, sequential, softmax_cross_entropy_loss, "
         "l2_loss, l1_loss, sigmoid_binary_cross_entropy_loss";
}
