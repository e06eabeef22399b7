/* sort, argsort and topk along one axis (axis None: the flattened input).
 *
 * Each row along the axis is ordered stably (insertion-sorted runs merged
 * bottom-up; for topk with a small k, a selection that keeps the best k),
 * so equal values keep their original order in both directions: topk and
 * argsort always give a valid, deterministic permutation. NaN orders as
 * the largest value: last when ascending, first when descending (NumPy's
 * ascending order); -0 and +0 are equal.
 *
 * topk (MXNet): the k largest (is_ascend=false, the default) or smallest
 * values; k < 1 selects the whole axis. ret_typ "value" gives the values,
 * "indices" their positions, "mask" an input-shaped 0/1 array, "both"
 * values then indices. Indices come in the `dtype` parameter's type
 * (float32 by default, as in MXNet).
 *
 * Gradients: sort and topk values scatter the output gradient back to the
 * positions the values came from (the backward operator sorts again, which
 * the stable order makes reproduce the forward permutation); indices and
 * masks have none. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/reduce/reduce_impl.h"
#include "ops/reduce/sort_params.h"

enum {
  K_SORT = MXC__SORT_SORT,
  K_ARGSORT = MXC__SORT_ARGSORT,
  K_TOPK = MXC__SORT_TOPK
};
enum {
  RET_VALUE = MXC__SORT_RET_VALUE,
  RET_INDICES = MXC__SORT_RET_INDICES,
  RET_MASK = MXC__SORT_RET_MASK,
  RET_BOTH = MXC__SORT_RET_BOTH
};

typedef mxc__sort_param sort_param;

static const mxc__op k_fwd[3];
static const mxc__op k_bwd[2];

static int kind_of(const mxc__op *op) {
  if (op >= k_fwd && op < k_fwd + 3) return (int)(op - k_fwd);
  return op == &k_bwd[0] ? K_SORT : K_TOPK;
}

/* ---- ordering ---- */

/* Rows are sorted as (key, position) pairs: keys move with their
 * positions instead of being looked up at random, and the key is an
 * int64 whose plain `<` is the requested order, so that comparisons are
 * cheap and branch-free whatever the dtype and direction. */
typedef struct kv {
  int64_t key;
  int64_t pos;
} kv;

/* The keys (sort_params.h, shared with the CUDA plug-in). */
static int64_t key_of_double(double v) { return mxc__sort_key_of_double(v); }

static int64_t directed(int64_t key, int asc) {
  return mxc__sort_directed(key, asc);
}

#define RUN 16          /* runs sorted by insertion before merging */
#define SELECT_MAX_K 64 /* topk with k this small selects instead */

/* Stable insertion sort of a[lo, hi). */
static void isort(kv *a, int64_t lo, int64_t hi) {
  for (int64_t i = lo + 1; i < hi; ++i) {
    kv x = a[i];
    int64_t j = i;
    for (; j > lo && x.key < a[j - 1].key; --j) a[j] = a[j - 1];
    a[j] = x;
  }
}

/* Stable merge sort of a[0, n) (tmp: n slots): insertion-sorted runs,
 * then bottom-up merges in which a right element passes a left one only
 * when strictly smaller. */
static void msort(kv *a, kv *tmp, int64_t n) {
  for (int64_t lo = 0; lo < n; lo += RUN)
    isort(a, lo, lo + RUN < n ? lo + RUN : n);
  kv *src = a, *dst = tmp;
  for (int64_t w = RUN; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n;
      int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        int right = src[j].key < src[i].key;
        dst[k++] = right ? src[j] : src[i];
        j += right;
        i += !right;
      }
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    kv *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* The first k of the stable order into a[0, k), O(n k) in the worst case
 * but about O(n) usually: the best k so far stay sorted, and a newcomer
 * enters only when strictly smaller than the current k-th (among equals
 * the earlier position ranks first). */
static void select_k(kv *a, int64_t n, int64_t k) {
  int64_t m = 0; /* kept so far; while m < k, m == i */
  for (int64_t i = 0; i < n; ++i) {
    kv x = a[i];
    if (m == k && !(x.key < a[k - 1].key)) continue;
    int64_t j = m < k ? m++ : k - 1; /* when full, the k-th drops out */
    for (; j > 0 && x.key < a[j - 1].key; --j) a[j] = a[j - 1];
    a[j] = x;
  }
}

/* Rows along the axis, and how many positions the output keeps. */
typedef struct geom {
  int64_t outer, len, inner, k;
} geom;

static int make_geom(const mxc__op *op, int kind, const sort_param *sp,
                     const mxc__shape *s, geom *g) {
  char b[160];
  int axis = -1;
  if (!sp->axis.has) {
    g->outer = g->inner = 1;
    g->len = mxc__shape_size(s);
  } else {
    MXC_FORWARD_IF_ERROR(
        mxc__red_axis(op->name, "axis", sp->axis.v, s->ndim, &axis));
    mxc__red_split(s, axis, &g->outer, &g->len, &g->inner);
  }
  g->k = g->len;
  if (kind == K_TOPK && sp->k >= 1) {
    if (sp->k > g->len && axis >= 0) {
      return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                            "operator '%s': k = %lld is larger than the %lld "
                            "elements along axis %d (input shape %s)",
                            op->name, (long long)sp->k, (long long)g->len, axis,
                            mxc__shape_str(s, b, sizeof b));
    }
    MXC_RETURN_ERROR_IF(sp->k > g->len, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': k = %lld is larger than the %lld "
                        "elements of the flattened input (shape %s)",
                        op->name, (long long)sp->k, (long long)g->len,
                        mxc__shape_str(s, b, sizeof b));
    g->k = sp->k;
  }
  return MXC_OK;
}

/* Shape of the values/indices outputs: the axis shortened to k, or (k,)
 * for the flattened input. */
static void values_shape(const sort_param *sp, const mxc__shape *s,
                         const geom *g, mxc__shape *out) {
  if (!sp->axis.has) {
    out->ndim = 1;
    out->dims[0] = g->k;
    return;
  }
  *out = *s;
  int axis = (int)(sp->axis.v < 0 ? sp->axis.v + s->ndim : sp->axis.v);
  out->dims[axis] = g->k;
}

/* ---- forward ---- */

static int num_outputs(const void *param) {
  return ((const sort_param *)param)->ret_typ == RET_BOTH ? 2 : 1;
}

static int sort_shape(const mxc__op *op, const void *param, mxc__shape *in,
                      int n_in, mxc__shape *out, int n_out) {
  (void)n_in;
  const sort_param *sp = param;
  if (in[0].ndim < 0) return MXC_OK;
  int kind = kind_of(op);
  geom g;
  MXC_FORWARD_IF_ERROR(make_geom(op, kind, sp, &in[0], &g));
  mxc__shape v;
  values_shape(sp, &in[0], &g, &v);
  if (kind == K_TOPK && sp->ret_typ == RET_MASK) v = in[0];
  for (int i = 0; i < n_out; ++i) {
    char what[32];
    snprintf(what, sizeof what, "output %d", i);
    MXC_FORWARD_IF_ERROR(mxc__red_set_shape(op->name, what, &out[i], &v));
  }
  return MXC_OK;
}

static int sortable(int dt) {
  return mxc__dtype_is_float(dt) || dt == MXC_DTYPE_INT8 ||
         dt == MXC_DTYPE_UINT8 || dt == MXC_DTYPE_INT32 ||
         dt == MXC_DTYPE_INT64;
}

static int sort_type(const mxc__op *op, const void *param, int *in, int n_in,
                     int *out, int n_out) {
  (void)n_in;
  const sort_param *sp = param;
  if (in[0] < 0) return MXC_OK;
  if (!sortable(in[0])) {
    return mxc__unsupported_dtype(op->name, in[0],
                                  "expected float32, float64, float16, "
                                  "bfloat16, int8, uint8, int32 or int64");
  }
  int kind = kind_of(op);
  for (int i = 0; i < n_out; ++i) {
    int is_index = kind == K_ARGSORT ||
                   (kind == K_TOPK && (sp->ret_typ == RET_INDICES ||
                                       (sp->ret_typ == RET_BOTH && i == 1)));
    int want = is_index ? sp->dtype : in[0];
    if (out[i] < 0) out[i] = want;
    MXC_RETURN_ERROR_IF(out[i] != want, MXC_ERR_DTYPE,
                        "operator '%s': output %d is %s; expected %s", op->name,
                        i, mxc__dtype_name(out[i]), mxc__dtype_name(want));
  }
  return MXC_OK;
}

static int index_dtype_check(const char *op_name, void *param) {
  int dt = ((const sort_param *)param)->dtype;
  MXC_RETURN_ERROR_IF(!sortable(dt) || dt == MXC_DTYPE_BFLOAT16,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'dtype' = %s is not "
                      "supported for indices; expected float32, float64, "
                      "float16, int8, uint8, int32 or int64",
                      op_name, dt < 0 ? "None" : mxc__dtype_name(dt));
  return MXC_OK;
}

/* Orders row (a, b) of x: perm[0..k) gets the positions along the axis
 * of the first k elements of the order. pairs and tmp: len slots of 16
 * bytes each; perm may be tmp (it is written last). */
static void order_row(const mxc__blob *x, const sort_param *sp, const geom *g,
                      int64_t a, int64_t b, kv *pairs, kv *tmp, int64_t *perm) {
  int64_t base = a * g->len * g->inner + b, n = g->len, k = g->k;
  int asc = sp->is_ascend;
  if (x->dtype == MXC_DTYPE_INT64) { /* exact beyond 2^53 */
    const int64_t *src = (const int64_t *)x->ptr + base;
    for (int64_t j = 0; j < n; ++j)
      pairs[j].key = directed(src[j * g->inner], asc);
  } else { /* int8..int32 and every float type are exact in double */
    double *v = (double *)tmp;
    mxc__red_load_row(x, base, g->inner, n, v);
    for (int64_t j = 0; j < n; ++j)
      pairs[j].key = directed(key_of_double(v[j]), asc);
  }
  for (int64_t j = 0; j < n; ++j) pairs[j].pos = j;
  if (k < n && k <= SELECT_MAX_K && k * 16 <= n) {
    select_k(pairs, n, k);
  } else {
    msort(pairs, tmp, n);
  }
  for (int64_t j = 0; j < k; ++j) perm[j] = pairs[j].pos;
}

/* dst[di] = (or +=) src[si], same dtype. */
static void put_value(const mxc__blob *dst, int64_t di, const mxc__blob *src,
                      int64_t si, mxc__req req) {
  size_t es = mxc__dtype_size(dst->dtype);
  if (req != MXC__REQ_ADD) {
    memcpy((char *)dst->ptr + (size_t)di * es,
           (const char *)src->ptr + (size_t)si * es, es);
  } else if (!mxc__dtype_is_float(dst->dtype)) { /* exact, wrapping */
    mxc__blob_set_i64(dst, di, mxc__wrap_add(mxc__blob_get_i64(dst, di),
                                             mxc__blob_get_i64(src, si)));
  } else {
    mxc__blob_set(dst, di, mxc__blob_get(dst, di) + mxc__blob_get(src, si));
  }
}

static void put_number(const mxc__blob *dst, int64_t di, double v,
                       mxc__req req) {
  if (req == MXC__REQ_ADD) v += mxc__blob_get(dst, di);
  mxc__blob_set(dst, di, v);
}

/* Writes the outputs of row (a, b) from its permutation. */
static void emit_row(int kind, const sort_param *sp, const geom *g, int64_t a,
                     int64_t b, const int64_t *perm, const mxc__blob *x,
                     const mxc__blob *out, const mxc__req *req) {
  int ret = kind == K_SORT      ? RET_VALUE
            : kind == K_ARGSORT ? RET_INDICES
                                : sp->ret_typ;
  int64_t base = a * g->len * g->inner + b; /* row start in the input */
  int64_t obase = a * g->k * g->inner + b;  /* row start in values/indices */
  if (ret == RET_MASK) {
    if (req[0] == MXC__REQ_NULL) return;
    if (req[0] != MXC__REQ_ADD) {
      for (int64_t j = 0; j < g->len; ++j)
        mxc__blob_set(&out[0], base + j * g->inner, 0);
    }
    for (int64_t j = 0; j < g->k; ++j)
      put_number(&out[0], base + perm[j] * g->inner, 1, req[0]);
    return;
  }
  const mxc__blob *vals = ret == RET_VALUE || ret == RET_BOTH ? &out[0] : NULL;
  const mxc__blob *idx = ret == RET_INDICES ? &out[0]
                         : ret == RET_BOTH  ? &out[1]
                                            : NULL;
  mxc__req vreq = vals ? req[0] : MXC__REQ_NULL;
  mxc__req ireq = idx ? req[ret == RET_BOTH ? 1 : 0] : MXC__REQ_NULL;
  for (int64_t j = 0; j < g->k; ++j) {
    int64_t o = obase + j * g->inner;
    if (vreq != MXC__REQ_NULL)
      put_value(vals, o, x, base + perm[j] * g->inner, vreq);
    if (ireq != MXC__REQ_NULL) put_number(idx, o, (double)perm[j], ireq);
  }
}

static int sort_forward(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_in, (void)n_out;
  const sort_param *sp = param;
  int kind = kind_of(op);
  geom g;
  MXC_FORWARD_IF_ERROR(make_geom(op, kind, sp, &in[0].shape, &g));
  void *t = NULL;
  MXC_FORWARD_IF_ERROR(mxc__red_temp(op, ctx, (size_t)g.len * 32, &t));
  kv *pairs = t, *tmp = pairs + g.len;
  int64_t *perm = (int64_t *)tmp;
  for (int64_t a = 0; a < g.outer; ++a) {
    for (int64_t b = 0; b < g.inner; ++b) {
      order_row(&in[0], sp, &g, a, b, pairs, tmp, perm);
      emit_row(kind, sp, &g, a, b, perm, &in[0], out, req);
    }
  }
  return MXC_OK;
}

/* ---- backward ---- */

/* _backward_sort: (ograd, data); _backward_topk: (ograd[, ograd_indices],
 * data) with ograd_indices present for ret_typ "both" and ignored. */
static int bwd_num_inputs(const void *param) { return num_outputs(param) + 1; }

static const char *bwd_input_name(const void *param, int i) {
  if (i == bwd_num_inputs(param) - 1) return "data";
  return i == 0 ? "ograd" : "ograd_indices";
}

static int bwd_shape(const mxc__op *op, const void *param, mxc__shape *in,
                     int n_in, mxc__shape *out, int n_out) {
  (void)n_out;
  const sort_param *sp = param;
  const mxc__shape *x = &in[n_in - 1];
  if (x->ndim < 0) return MXC_OK;
  geom g;
  MXC_FORWARD_IF_ERROR(make_geom(op, kind_of(op), sp, x, &g));
  mxc__shape v;
  values_shape(sp, x, &g, &v);
  for (int i = 0; i < n_in - 1; ++i) {
    char what[48];
    snprintf(what, sizeof what, "input %d (%s)", i,
             i ? "ograd_indices" : "ograd");
    MXC_FORWARD_IF_ERROR(mxc__red_set_shape(op->name, what, &in[i], &v));
  }
  return mxc__red_set_shape(op->name, "output 0", &out[0], x);
}

static int bwd_type(const mxc__op *op, const void *param, int *in, int n_in,
                    int *out, int n_out) {
  (void)param, (void)n_out;
  int dt = in[n_in - 1];
  if (dt < 0) return MXC_OK;
  MXC_RETURN_ERROR_IF(in[0] >= 0 && in[0] != dt, MXC_ERR_DTYPE,
                      "operator '%s': input 0 (ograd) is %s but data is %s",
                      op->name, mxc__dtype_name(in[0]), mxc__dtype_name(dt));
  if (!mxc__dtype_is_float(dt)) {
    return mxc__unsupported_dtype(op->name, dt,
                                  "gradients are computed for float32, "
                                  "float64, float16 and bfloat16");
  }
  if (out[0] < 0) out[0] = dt;
  MXC_RETURN_ERROR_IF(out[0] != dt, MXC_ERR_DTYPE,
                      "operator '%s': output 0 is %s; expected %s", op->name,
                      mxc__dtype_name(out[0]), mxc__dtype_name(dt));
  return MXC_OK;
}

static int sort_backward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)n_out;
  const sort_param *sp = param;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  const mxc__blob *x = &in[n_in - 1];
  geom g;
  MXC_FORWARD_IF_ERROR(make_geom(op, kind_of(op), sp, &x->shape, &g));
  void *t = NULL;
  MXC_FORWARD_IF_ERROR(mxc__red_temp(op, ctx, (size_t)g.len * 48, &t));
  kv *pairs = t, *tmp = pairs + g.len;
  int64_t *perm = (int64_t *)tmp;
  double *d = (double *)(tmp + g.len), *gb = d + g.len;
  for (int64_t a = 0; a < g.outer; ++a) {
    for (int64_t b = 0; b < g.inner; ++b) {
      order_row(x, sp, &g, a, b, pairs, tmp, perm);
      mxc__red_load_row(&in[0], a * g.k * g.inner + b, g.inner, g.k, gb);
      for (int64_t j = 0; j < g.len; ++j) d[j] = 0;
      for (int64_t j = 0; j < g.k; ++j) d[perm[j]] = gb[j];
      mxc__red_store_row(&out[0], a * g.len * g.inner + b, g.inner, g.len, d,
                         req[0]);
    }
  }
  return MXC_OK;
}

static int topk_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                         mxc__entry *igrad) {
  const sort_param *sp = fwd->param;
  if (sp->ret_typ == RET_VALUE || sp->ret_typ == RET_BOTH) {
    return mxc__grad_use_in(fwd, ograd, igrad);
  }
  return mxc__grad_none(fwd, ograd, igrad);
}

/* ---- descriptors ---- */

#define P_AXIS                                       \
  MXC__PARAM(sort_param, axis, MXC__P_OPT_INT, "-1", \
             "Axis to sort along; None sorts the flattened input.")
#define P_ASCEND(dflt)                                 \
  MXC__PARAM(sort_param, is_ascend, MXC__P_BOOL, dflt, \
             "Ascending (true) or descending (false) order.")
#define P_DTYPE                                                           \
  MXC__PARAM(sort_param, dtype, MXC__P_DTYPE, "float32",                  \
             "dtype of the indices: float32, float64, float16, int32 or " \
             "int64.")

static const char *const k_ret_choices[] = {"value", "indices", "mask", "both",
                                            NULL};
static const mxc__param_def k_sort_params[] = {P_AXIS, P_ASCEND("true")};
static const mxc__param_def k_argsort_params[] = {P_AXIS, P_ASCEND("true"),
                                                  P_DTYPE};
static const mxc__param_def k_topk_params[] = {
    P_AXIS,
    MXC__PARAM(sort_param, k, MXC__P_INT, "1",
               "How many elements to select; k < 1 selects all."),
    MXC__PARAM_ENUM(sort_param, ret_typ, "indices", k_ret_choices,
                    "What to return: the values, their indices, a 0/1 mask "
                    "of the input's shape, or both values and indices."),
    P_ASCEND("false"),
    P_DTYPE,
};
static const char *const k_in_names[] = {"data", NULL};
static const char *const k_bwd_sort_in[] = {"ograd", "data", NULL};

static const mxc__op k_fwd[3] = {
    [K_SORT] =
        {
            .name = "sort",
            .doc = "Sorted copy of the input along axis (flattened for None).",
            MXC__PARAMS_OF(sort_param, k_sort_params),
            .n_inputs = 1,
            .input_names = k_in_names,
            .n_outputs = 1,
            .infer_shape = sort_shape,
            .infer_type = sort_type,
            .compute = sort_forward,
            .gradient = mxc__grad_use_in,
            .backward_uses_inputs = 1,
            .resources = MXC__RES_TEMP,
        },
    [K_ARGSORT] =
        {
            .name = "argsort",
            .doc = "Positions that sort the input along axis (stable), in "
                   "dtype.",
            MXC__PARAMS_OF(sort_param, k_argsort_params),
            .param_check = index_dtype_check,
            .n_inputs = 1,
            .input_names = k_in_names,
            .n_outputs = 1,
            .infer_shape = sort_shape,
            .infer_type = sort_type,
            .compute = sort_forward,
            .gradient = mxc__grad_none,
            .resources = MXC__RES_TEMP,
        },
    [K_TOPK] =
        {
            .name = "topk",
            .doc = "The k largest (or smallest) elements along axis: values, "
                   "indices, a mask, or values and indices.",
            MXC__PARAMS_OF(sort_param, k_topk_params),
            .param_check = index_dtype_check,
            .n_inputs = 1,
            .input_names = k_in_names,
            .num_outputs = num_outputs,
            .infer_shape = sort_shape,
            .infer_type = sort_type,
            .compute = sort_forward,
            .gradient = topk_gradient,
            .backward_uses_inputs = 1,
            .resources = MXC__RES_TEMP,
        },
};

static const mxc__op k_bwd[2] = {
    {
        .name = "_backward_sort",
        .doc = "Gradient of sort.",
        MXC__PARAMS_OF(sort_param, k_sort_params),
        .n_inputs = 2,
        .input_names = k_bwd_sort_in,
        .n_outputs = 1,
        .infer_shape = bwd_shape,
        .infer_type = bwd_type,
        .compute = sort_backward,
        .resources = MXC__RES_TEMP,
        .hidden = 1,
    },
    {
        .name = "_backward_topk",
        .doc = "Gradient of topk (values).",
        MXC__PARAMS_OF(sort_param, k_topk_params),
        .param_check = index_dtype_check,
        .num_inputs = bwd_num_inputs,
        .input_name = bwd_input_name,
        .n_outputs = 1,
        .infer_shape = bwd_shape,
        .infer_type = bwd_type,
        .compute = sort_backward,
        .resources = MXC__RES_TEMP,
        .hidden = 1,
    },
};

int mxc__reduce_register_sort(mxc__registry *r) {
  for (int i = 0; i < 3; ++i)
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fwd[i]));
  for (int i = 0; i < 2; ++i)
    MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_bwd[i]));
  return MXC_OK;
}
