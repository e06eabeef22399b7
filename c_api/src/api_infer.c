/* Shape, dtype and storage-type inference over symbols: argument checks
 * and result handles; the passes are in core/graph/infer*.c. */
#include <stdio.h>

#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/graph/infer.h"

/* For the handle table: destroys the object once no call uses it. */
static void dtor_infer(void *p) { mxc__infer_result_free(p); }

/* Gives a new result a public handle; frees it on failure. */
static int wrap_result(mxc__infer_result *r, mxc_infer *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_INFER, r, dtor_infer, 0, &h);
  if (rc != MXC_OK) {
    mxc__infer_result_free(r);
    return rc;
  }
  *out = (mxc_infer)h;
  return MXC_OK;
}

int mxc_symbol_infer_shape(mxc_symbol sym, int n, const char *const *names,
                           const int *ndims, const int64_t *dims, int partial,
                           mxc_infer *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_infer_shape", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_infer_shape: sym", &s));
  mxc__shape *shapes = NULL;
  MXC_FORWARD_IF_ERROR(mxc__shapes_from_dims("mxc_symbol_infer_shape", n,
                                             ndims, dims, &shapes));
  mxc__infer_result *r = NULL;
  int rc = mxc__symbol_infer_shape(s, n, names, shapes, partial, &r);
  mxc__free(shapes);
  MXC_FORWARD_IF_ERROR(rc);
  return wrap_result(r, out);
}

/* Validates n codes: dtypes (known to mxc__dtype_name) or storage types. */
static int check_codes(const char *fn, int n, const int *codes, int stype) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d; expected >= 0", fn, n);
  MXC_RETURN_ERROR_IF(n > 0 && !codes, MXC_ERR_INVALID_ARGUMENT,
                      "%s: the %s are NULL but n is %d", fn,
                      stype ? "storage types" : "dtypes", n);
  for (int i = 0; i < n; ++i) {
    if (stype) {
      MXC_RETURN_ERROR_IF(codes[i] < MXC_STYPE_DEFAULT ||
                              codes[i] > MXC_STYPE_CSR,
                          MXC_ERR_STYPE,
                          "%s: storage type %d (value %d) is not one of "
                          "MXC_STYPE_DEFAULT, MXC_STYPE_ROW_SPARSE, "
                          "MXC_STYPE_CSR",
                          fn, i, codes[i]);
    } else {
      char what[96];
      snprintf(what, sizeof what, "%s: dtypes[%d]", fn, i);
      MXC_FORWARD_IF_ERROR(mxc__dtype_check(codes[i], what));
    }
  }
  return MXC_OK;
}

int mxc_symbol_infer_type(mxc_symbol sym, int n, const char *const *names,
                          const int *dtypes, int partial, mxc_infer *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_infer_type", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_infer_type: sym", &s));
  MXC_FORWARD_IF_ERROR(check_codes("mxc_symbol_infer_type", n, dtypes, 0));
  mxc__infer_result *r = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__symbol_infer_type(s, n, names, dtypes, partial, &r));
  return wrap_result(r, out);
}

int mxc_symbol_infer_storage_type(mxc_symbol sym, int n,
                                  const char *const *names, const int *stypes,
                                  mxc_infer *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_infer_storage_type", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(
      api_symbol(sym, "mxc_symbol_infer_storage_type: sym", &s));
  MXC_FORWARD_IF_ERROR(
      check_codes("mxc_symbol_infer_storage_type", n, stypes, 1));
  mxc__infer_result *r = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_infer_stype(s, n, names, stypes, &r));
  return wrap_result(r, out);
}

void mxc_infer_free(mxc_infer inf) {
  API_GUARD();
  if (!inf) return;
  (void)mxc__handle_free((uintptr_t)inf, MXC__HANDLE_INFER,
                         "mxc_infer_free: inf", dtor_infer);
}

static int api_result(mxc_infer h, const char *what,
                      mxc__infer_result **out) {
  void *p = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_INFER, what, &p));
  *out = p;
  return MXC_OK;
}

static int check_group(const char *fn, int group) {
  MXC_RETURN_ERROR_IF(group < 0 || group >= MXC__INFER_GROUPS,
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: group %d is not MXC_INFER_ARGS, MXC_INFER_OUTPUTS "
                      "or MXC_INFER_AUX",
                      fn, group);
  return MXC_OK;
}

int mxc_infer_count(mxc_infer inf, int group, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_infer_count", "out");
  mxc__infer_result *r = NULL;
  MXC_FORWARD_IF_ERROR(api_result(inf, "mxc_infer_count: inf", &r));
  MXC_FORWARD_IF_ERROR(check_group("mxc_infer_count", group));
  *out = r->n[group];
  return MXC_OK;
}

/* Result r, checked group and index. */
static int entry_of(mxc_infer inf, int group, int index, const char *fn,
                    mxc__infer_result **out) {
  char what[64];
  snprintf(what, sizeof what, "%s: inf", fn);
  MXC_FORWARD_IF_ERROR(api_result(inf, what, out));
  MXC_FORWARD_IF_ERROR(check_group(fn, group));
  MXC_RETURN_ERROR_IF(index < 0 || index >= (*out)->n[group],
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: index %d is out of range; the group has %d "
                      "entries",
                      fn, index, (*out)->n[group]);
  return MXC_OK;
}

int mxc_infer_shape(mxc_infer inf, int group, int index, int *out_ndim,
                    int64_t *out_dims) {
  API_GUARD();
  API_CHECK_OUT(out_ndim, "mxc_infer_shape", "out_ndim");
  API_CHECK_OUT(out_dims, "mxc_infer_shape", "out_dims");
  mxc__infer_result *r = NULL;
  MXC_FORWARD_IF_ERROR(entry_of(inf, group, index, "mxc_infer_shape", &r));
  if (!r->shapes[group]) {
    *out_ndim = -1;
    return MXC_OK;
  }
  const mxc__shape *s = &r->shapes[group][index];
  for (int i = 0; i < s->ndim; ++i) out_dims[i] = s->dims[i];
  *out_ndim = s->ndim;
  return MXC_OK;
}

/* dtype or storage type of an entry, per the kind of result. */
static int code_of(mxc_infer inf, int group, int index, const char *fn,
                   mxc__infer_kind kind, int *out) {
  API_CHECK_OUT(out, fn, "out");
  mxc__infer_result *r = NULL;
  MXC_FORWARD_IF_ERROR(entry_of(inf, group, index, fn, &r));
  *out = r->kind == kind ? r->vals[group][index] : -1;
  return MXC_OK;
}

int mxc_infer_dtype(mxc_infer inf, int group, int index, int *out) {
  API_GUARD();
  return code_of(inf, group, index, "mxc_infer_dtype", MXC__INFER_TYPE, out);
}

int mxc_infer_stype(mxc_infer inf, int group, int index, int *out) {
  API_GUARD();
  return code_of(inf, group, index, "mxc_infer_stype", MXC__INFER_STYPE, out);
}
