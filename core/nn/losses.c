/* Losses as blocks of two inputs (prediction, label) whose output is one
 * loss per example, shape (batch): the mean over every axis but the first,
 * as Gluon's losses. Built from registry operators, so autograd
 * differentiates them like any forward pass. */
#include <string.h>

#include "core/base/error.h"
#include "core/nn/internal.h"

/* Calls op on n_in inputs with up to two parameter strings; *out new. */
static int call2(const char *op, int n_in, mxc__ndarray *const *in,
                 const char *k0, const char *v0, const char *k1,
                 const char *v1, mxc__ndarray **out) {
  const char *k[2] = {k0, k1}, *v[2] = {v0, v1};
  int n = k1 ? 2 : k0 ? 1 : 0;
  return mxc__nn_call(op, n, k, v, n_in, in, out);
}

/* Calls op on (a) or (a, b) and frees a (and b); *out new. */
static int step(const char *op, mxc__ndarray *a, mxc__ndarray *b,
                const char *k, const char *v, mxc__ndarray **out) {
  mxc__ndarray *in[2] = {a, b};
  int rc = call2(op, b ? 2 : 1, in, k, v, NULL, NULL, out);
  mxc__ndarray_free(a);
  mxc__ndarray_free(b);
  return rc;
}

/* A new view of label shaped like pred (same element count required). */
static int label_like(const mxc__block *b, mxc__ndarray *pred,
                      mxc__ndarray *label, mxc__ndarray **out) {
  MXC_RETURN_ERROR_IF(mxc__ndarray_size(pred) != mxc__ndarray_size(label),
                      MXC_ERR_SHAPE,
                      "forward '%s': prediction and label have %lld and "
                      "%lld elements; expected as many",
                      b->name, (long long)mxc__ndarray_size(pred),
                      (long long)mxc__ndarray_size(label));
  mxc__ndarray *in[2] = {label, pred};
  return call2("reshape_like", 2, in, NULL, NULL, NULL, NULL, out);
}

/* The per-example mean of l (freed) times the "weight" key; *out new. */
static int per_example(const mxc__block *b, mxc__ndarray *l,
                       mxc__ndarray **out) {
  const char *w = mxc__nn_cfg(b, "weight", NULL);
  if (w) MXC_FORWARD_IF_ERROR(step("_mul_scalar", l, NULL, "scalar", w, &l));
  if (l->shape.ndim <= 1) {
    *out = l;
    return MXC_OK;
  }
  mxc__ndarray *in[1] = {l};
  int rc = call2("mean", 1, in, "axis", "0", "exclude", "1", out);
  mxc__ndarray_free(l);
  return rc;
}

/* 0.5 (pred - label)^2 (l2) or |pred - label| (l1), per example. */
static int distance_forward(mxc__block *b, mxc__ndarray *const *in, int l2,
                            mxc__ndarray **out) {
  mxc__ndarray *y = NULL, *d = NULL;
  MXC_FORWARD_IF_ERROR(label_like(b, in[0], in[1], &y));
  mxc__ndarray *sub[2] = {in[0], y};
  int rc = call2("elemwise_sub", 2, sub, NULL, NULL, NULL, NULL, &d);
  mxc__ndarray_free(y);
  MXC_FORWARD_IF_ERROR(rc);
  MXC_FORWARD_IF_ERROR(step(l2 ? "square" : "abs", d, NULL, NULL, NULL, &d));
  if (l2) MXC_FORWARD_IF_ERROR(step("_mul_scalar", d, NULL, "scalar", "0.5", &d));
  return per_example(b, d, out);
}

static int l2_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                      mxc__ndarray **out) {
  (void)n_in;
  return distance_forward(b, in, 1, out);
}

static int l1_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                      mxc__ndarray **out) {
  (void)n_in;
  return distance_forward(b, in, 0, out);
}

/* -log_softmax(pred)[label] (sparse labels) or -sum(label * log_softmax),
 * along "axis". */
static int softmax_ce_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                              mxc__ndarray **out) {
  (void)n_in;
  const char *axis = mxc__nn_cfg(b, "axis", "-1");
  int sparse = 1, logits = 0;
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "sparse_label", 1, &sparse));
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "from_logits", 0, &logits));
  mxc__ndarray *lp = NULL, *l = NULL;
  if (logits) {
    MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(in[0], &lp));
  } else {
    MXC_FORWARD_IF_ERROR(
        call2("log_softmax", 1, in, "axis", axis, NULL, NULL, &lp));
  }
  if (sparse) {
    mxc__ndarray *pk[2] = {lp, in[1]};
    int rc = call2("pick", 2, pk, "axis", axis, NULL, NULL, &l);
    mxc__ndarray_free(lp);
    MXC_FORWARD_IF_ERROR(rc);
  } else {
    mxc__ndarray *y = NULL;
    int rc = label_like(b, lp, in[1], &y);
    if (rc != MXC_OK) mxc__ndarray_free(lp);
    MXC_FORWARD_IF_ERROR(rc);
    MXC_FORWARD_IF_ERROR(step("elemwise_mul", lp, y, NULL, NULL, &l));
    MXC_FORWARD_IF_ERROR(step("sum", l, NULL, "axis", axis, &l));
  }
  MXC_FORWARD_IF_ERROR(step("negative", l, NULL, NULL, NULL, &l));
  return per_example(b, l, out);
}

/* From logits x and labels z: max(x, 0) - x z + log(1 + exp(-|x|)), the
 * form that neither overflows nor loses precision. */
static int sigmoid_bce_forward(mxc__block *b, int n_in,
                               mxc__ndarray *const *in, mxc__ndarray **out) {
  (void)n_in;
  mxc__ndarray *x = in[0], *z = NULL, *r = NULL, *xz = NULL, *t = NULL;
  MXC_FORWARD_IF_ERROR(label_like(b, x, in[1], &z));
  int rc = call2("relu", 1, &x, NULL, NULL, NULL, NULL, &r);
  mxc__ndarray *m[2] = {x, z};
  if (rc == MXC_OK) rc = call2("elemwise_mul", 2, m, NULL, NULL, NULL, NULL, &xz);
  mxc__ndarray_free(z);
  if (rc == MXC_OK) rc = call2("abs", 1, &x, NULL, NULL, NULL, NULL, &t);
  if (rc == MXC_OK) rc = step("negative", t, NULL, NULL, NULL, &t), t = rc ? NULL : t;
  if (rc == MXC_OK) rc = step("exp", t, NULL, NULL, NULL, &t), t = rc ? NULL : t;
  if (rc == MXC_OK) rc = step("log1p", t, NULL, NULL, NULL, &t), t = rc ? NULL : t;
  if (rc == MXC_OK) rc = step("elemwise_sub", r, xz, NULL, NULL, &r), xz = NULL, r = rc ? NULL : r;
  if (rc == MXC_OK) rc = step("elemwise_add", r, t, NULL, NULL, &r), t = NULL, r = rc ? NULL : r;
  if (rc != MXC_OK) {
    mxc__ndarray_free(r);
    mxc__ndarray_free(xz);
    mxc__ndarray_free(t);
    return rc;
  }
  return per_example(b, r, out);
}

static int sigmoid_bce_setup(mxc__block *b) {
  int from_sigmoid = 0;
  MXC_FORWARD_IF_ERROR(mxc__nn_cfg_bool(b, "from_sigmoid", 0, &from_sigmoid));
  MXC_RETURN_ERROR_IF(from_sigmoid, MXC_ERR_UNSUPPORTED,
                      "block '%s': from_sigmoid=1 is not supported; give "
                      "logits",
                      b->name);
  return MXC_OK;
}

static const char *const k_ce[] = {"axis", "sparse_label", "from_logits",
                                   "weight", NULL};
static const char *const k_dist[] = {"weight", NULL};
static const char *const k_bce[] = {"from_sigmoid", "weight", NULL};

const mxc__nn_kind mxc__nn_loss_kinds[] = {
    {"softmax_cross_entropy_loss", k_ce, 2, NULL, softmax_ce_forward, NULL},
    {"l2_loss", k_dist, 2, NULL, l2_forward, NULL},
    {"l1_loss", k_dist, 2, NULL, l1_forward, NULL},
    {"sigmoid_binary_cross_entropy_loss", k_bce, 2, sigmoid_bce_setup,
     sigmoid_bce_forward, NULL},
};
const int mxc__nn_n_loss_kinds =
    (int)(sizeof mxc__nn_loss_kinds / sizeof *mxc__nn_loss_kinds);
