#include "core/op/alias.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/arity.h"
#include "core/op/invoke.h"

/* Byte ranges [offset, offset + nbytes) of two dense views of one chunk
 * intersect. Views of different chunks never share memory. */
static int overlap(const mxc__ndarray *a, const mxc__ndarray *b) {
  if (a->chunk != b->chunk) return 0;
  size_t na = mxc__ndarray_nbytes(a), nb = mxc__ndarray_nbytes(b);
  if (na == 0 || nb == 0) return 0;
  return a->offset < b->offset + nb && b->offset < a->offset + na;
}

static int declared_inplace(const mxc__op *op, const void *param, int i,
                            int o) {
  for (int k = 0; k < op->n_inplace; ++k) {
    if (op->inplace[k][0] == i && op->inplace[k][1] == o) return 1;
  }
  return op->inplace_input && op->inplace_input(param, o) == i;
}

/* Output o may share in's memory: not at all, or exactly, as declared. */
static int safe_pair(const mxc__op *op, const void *param,
                     const mxc__ndarray *in, int i, const mxc__ndarray *out,
                     int o) {
  if (!overlap(in, out)) return 1;
  return in->offset == out->offset &&
         mxc__ndarray_nbytes(in) == mxc__ndarray_nbytes(out) &&
         declared_inplace(op, param, i, o);
}

static int dense(const mxc__ndarray *a) {
  return a && a->stype == MXC_STYPE_DEFAULT;
}

/* The bytes of given output o, for finding outputs that share memory by
 * sorting instead of comparing every pair (variadic operators may have
 * many given outputs). */
typedef struct span {
  uintptr_t chunk;
  size_t lo, hi;
  int o;
} span;

static int span_cmp(const void *a, const void *b) {
  const span *x = a, *y = b;
  if (x->chunk != y->chunk) return x->chunk < y->chunk ? -1 : 1;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* *o1, *o2: two given dense outputs sharing bytes, or -1. Returns
 * MXC_ERR_OOM (with a message) when the sort has no memory. */
static int find_shared_outputs(const mxc__op *op, mxc__ndarray *const *out,
                               int n_out, int *o1, int *o2) {
  span small[16];
  span *s = mxc__scratch(small, sizeof small, (size_t)n_out, sizeof *s);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM,
                      "operator '%s': out of memory checking %d outputs",
                      op->name, n_out);
  int n = 0;
  for (int o = 0; o < n_out; ++o) {
    size_t nb = dense(out[o]) ? mxc__ndarray_nbytes(out[o]) : 0;
    if (nb == 0) continue;
    span e = {(uintptr_t)out[o]->chunk, out[o]->offset,
              out[o]->offset + nb, o};
    s[n++] = e;
  }
  if (n > 1) qsort(s, (size_t)n, sizeof *s, span_cmp);
  *o1 = *o2 = -1;
  for (int k = 1; k < n && *o1 < 0; ++k) {
    if (s[k].chunk == s[k - 1].chunk && s[k].lo < s[k - 1].hi) {
      *o1 = s[k - 1].o < s[k].o ? s[k - 1].o : s[k].o;
      *o2 = s[k - 1].o < s[k].o ? s[k].o : s[k - 1].o;
    }
  }
  mxc__scratch_free(s, small);
  return MXC_OK;
}

static int given_outputs(mxc__ndarray *const *out, int n_out) {
  int n = 0;
  for (int o = 0; o < n_out && n < 2; ++o) n += dense(out[o]);
  return n;
}

int mxc__op_alias_hazard(const mxc__op *op, const void *param,
                         mxc__ndarray *const *in, int n_in,
                         mxc__ndarray *const *out, int n_out) {
  for (int o = 0; o < n_out; ++o) {
    if (!dense(out[o])) continue;
    for (int i = 0; i < n_in; ++i) {
      if (dense(in[i]) && !safe_pair(op, param, in[i], i, out[o], o)) {
        return 1;
      }
    }
  }
  if (given_outputs(out, n_out) < 2) return 0;
  int o1 = -1, o2 = -1;
  /* Without memory for the check, the careful path reports it. */
  if (find_shared_outputs(op, out, n_out, &o1, &o2) != MXC_OK) return 1;
  return o1 >= 0;
}

static int check_outputs_distinct(const mxc__op *op, mxc__ndarray *const *out,
                                  int n_out) {
  int o1 = -1, o2 = -1;
  MXC_FORWARD_IF_ERROR(find_shared_outputs(op, out, n_out, &o1, &o2));
  MXC_RETURN_ERROR_IF(o1 >= 0, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': outputs %d and %d share memory; give "
                      "each output its own array",
                      op->name, o1, o2);
  return MXC_OK;
}

static int needs_temp(const mxc__op *op, const void *param,
                      mxc__ndarray *const *in, int n_in,
                      const mxc__ndarray *out, int o) {
  for (int i = 0; i < n_in; ++i) {
    if (dense(in[i]) && !safe_pair(op, param, in[i], i, out, o)) return 1;
  }
  return 0;
}

/* tmp[o]: a new array like out[o] where it needs one (a copy of it for
 * req add, which accumulates onto the caller's values), else out[o]. */
static int make_temps(const mxc__op *op, const void *param,
                      mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                      int n_out, const mxc__req *req, mxc__ndarray **tmp,
                      int *made) {
  for (int o = 0; o < n_out; ++o) {
    tmp[o] = out[o];
    if (!dense(out[o]) || !needs_temp(op, param, in, n_in, out[o], o)) {
      continue;
    }
    MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&out[o]->shape, out[o]->dtype,
                                             out[o]->chunk->dev, 1, &tmp[o]));
    /* The same layout (an executor's channels-last value): the result is
     * copied back byte for byte. */
    tmp[o]->fmt = out[o]->fmt;
    made[o] = 1;
    if (req && req[o] == MXC__REQ_ADD) {
      MXC_FORWARD_IF_ERROR(mxc__ndarray_copy(out[o], tmp[o]));
    }
  }
  return MXC_OK;
}

static int copy_back(mxc__ndarray **out, int n_out, const mxc__req *req,
                     mxc__ndarray **tmp, const int *made) {
  for (int o = 0; o < n_out; ++o) {
    if (!made[o] || (req && req[o] == MXC__REQ_NULL)) continue;
    MXC_FORWARD_IF_ERROR(mxc__ndarray_copy(tmp[o], out[o]));
  }
  return MXC_OK;
}

int mxc__op_invoke_via_temps(const mxc__op *op, const void *param,
                             mxc__ndarray *const *in, int n_in,
                             mxc__ndarray **out, int n_out,
                             const mxc__req *req) {
  MXC_FORWARD_IF_ERROR(check_outputs_distinct(op, out, n_out));
  mxc__ndarray **tmp = mxc__calloc((size_t)n_out, sizeof *tmp);
  int *made = mxc__calloc((size_t)n_out, sizeof *made);
  int rc = tmp && made ? MXC_OK
                       : mxc__error_set(MXC_ERR_OOM,
                                        "operator '%s': out of memory for "
                                        "%d temporary outputs",
                                        op->name, n_out);
  if (rc == MXC_OK) rc = make_temps(op, param, in, n_in, out, n_out, req, tmp, made);
  if (rc == MXC_OK) rc = mxc__op_invoke(op, param, in, n_in, tmp, n_out, req);
  /* Outputs the call created (NULL slots) belong to the caller. */
  for (int o = 0; rc == MXC_OK && o < n_out; ++o) {
    if (!made[o]) out[o] = tmp[o];
  }
  if (rc == MXC_OK) rc = copy_back(out, n_out, req, tmp, made);
  for (int o = 0; tmp && made && o < n_out; ++o) {
    if (made[o]) mxc__ndarray_free(tmp[o]);
  }
  mxc__free(tmp);
  mxc__free(made);
  return rc;
}
