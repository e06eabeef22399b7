/* Symbols, strings and string lists: handle checks and conversion; the
 * work is in core/graph (symbol.c, symbol_query.c, json.c, dot.c). */
#include <stdio.h>

#include "api_internal.h"
#include "core/base/alloc.h"
#include "core/graph/infer.h"
#include "core/graph/symbol.h"
#include "core/op/op.h"

/* ---- strings and string lists ---- */

void mxc_string_free(char *s) { mxc__free(s); }

static int api_str_list(mxc_str_list h, const char *what,
                        mxc__str_list **out) {
  API_GUARD();
  void *p = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__handle_get((uintptr_t)h, MXC__HANDLE_STR_LIST, what, &p));
  *out = p;
  return MXC_OK;
}

/* For the handle table: destroys the object once no call uses it. */
static void dtor_str_list(void *p) { mxc__str_list_free(p); }

/* Gives a new list a public handle; frees it on failure. */
static int wrap_list(mxc__str_list *l, mxc_str_list *out) {
  uintptr_t h;
  int rc = mxc__handle_new_owned(MXC__HANDLE_STR_LIST, l, dtor_str_list, 0, &h);
  if (rc != MXC_OK) {
    mxc__str_list_free(l);
    return rc;
  }
  *out = (mxc_str_list)h;
  return MXC_OK;
}

void mxc_str_list_free(mxc_str_list list) {
  API_GUARD();
  if (!list) return;
  (void)mxc__handle_free((uintptr_t)list, MXC__HANDLE_STR_LIST,
                         "mxc_str_list_free: list", dtor_str_list);
}

int mxc_str_list_size(mxc_str_list list, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_str_list_size", "out");
  mxc__str_list *l = NULL;
  MXC_FORWARD_IF_ERROR(api_str_list(list, "mxc_str_list_size: list", &l));
  *out = l->n;
  return MXC_OK;
}

int mxc_str_list_get(mxc_str_list list, int index, const char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_str_list_get", "out");
  mxc__str_list *l = NULL;
  MXC_FORWARD_IF_ERROR(api_str_list(list, "mxc_str_list_get: list", &l));
  MXC_RETURN_ERROR_IF(index < 0 || index >= l->n, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_str_list_get: index %d is out of range; the list "
                      "has %d strings",
                      index, l->n);
  *out = l->items[index];
  return MXC_OK;
}

/* ---- symbol handles ---- */

/* The internal symbols of n handles, as a new array (mxc__free it). */
static int api_symbols(const mxc_symbol *hs, int n, const char *fn,
                       const char *arg, mxc__symbol ***out) {
  MXC_RETURN_ERROR_IF(n < 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: the count of %s is %d; expected >= 0", fn, arg, n);
  MXC_RETURN_ERROR_IF(n > 0 && !hs, MXC_ERR_INVALID_ARGUMENT,
                      "%s: %s is NULL but its count is %d", fn, arg, n);
  mxc__symbol **s = mxc__calloc((size_t)(n > 0 ? n : 1), sizeof *s);
  MXC_RETURN_ERROR_IF(!s, MXC_ERR_OOM, "%s: out of memory", fn);
  for (int i = 0; i < n; ++i) {
    char what[96];
    snprintf(what, sizeof what, "%s: %s[%d]", fn, arg, i);
    int rc = api_symbol(hs[i], what, &s[i]);
    if (rc != MXC_OK) {
      mxc__free(s);
      return rc;
    }
  }
  *out = s;
  return MXC_OK;
}

int mxc_symbol_variable(const char *name, mxc_symbol *out) {
  API_GUARD();
  return mxc_symbol_variable_ex(name, NULL, NULL, 0, out);
}

int mxc_symbol_variable_ex(const char *name, const char *const *keys,
                           const char *const *vals, int n_attrs,
                           mxc_symbol *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_variable", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_variable(name, keys, vals, n_attrs, &s));
  return api_wrap_symbol(s, out);
}

int mxc_symbol_create(mxc_op op, const char *const *keys,
                      const char *const *vals, int n_params, const char *name,
                      const char *const *input_names, const mxc_symbol *inputs,
                      int n_inputs, mxc_symbol *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_create", "out");
  const mxc__op *o = (const mxc__op *)op;
  MXC_RETURN_ERROR_IF(!o, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_create: op is NULL");
  MXC_RETURN_ERROR_IF(!mxc__op_is_registered(o), MXC_ERR_INVALID_HANDLE,
                      "mxc_symbol_create: op is not an operator handle from "
                      "mxc_op_find or mxc_op_at");
  mxc__symbol **in = NULL;
  MXC_FORWARD_IF_ERROR(
      api_symbols(inputs, n_inputs, "mxc_symbol_create", "inputs", &in));
  mxc__symbol *s = NULL;
  int rc = mxc__symbol_create(o, keys, vals, n_params, name, input_names, in,
                              n_inputs, &s);
  mxc__free(in);
  MXC_FORWARD_IF_ERROR(rc);
  return api_wrap_symbol(s, out);
}

int mxc_symbol_compose(mxc_symbol sym, const char *const *names,
                       const mxc_symbol *args, int n_args, mxc_symbol *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_compose", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_compose: sym", &s));
  mxc__symbol **a = NULL;
  MXC_FORWARD_IF_ERROR(
      api_symbols(args, n_args, "mxc_symbol_compose", "args", &a));
  mxc__symbol *r = NULL;
  int rc = mxc__symbol_compose(s, names, a, n_args, &r);
  mxc__free(a);
  MXC_FORWARD_IF_ERROR(rc);
  return api_wrap_symbol(r, out);
}

void mxc_symbol_free(mxc_symbol sym) {
  API_GUARD();
  if (!sym) return;
  (void)mxc__handle_free((uintptr_t)sym, MXC__HANDLE_SYMBOL,
                         "mxc_symbol_free: sym", api_dtor_symbol);
}

/* The shape shared by functions taking one symbol and returning another. */
typedef int (*sym_to_sym_fn)(const mxc__symbol *s, mxc__symbol **out);

static int sym_to_sym(mxc_symbol sym, const char *fn, sym_to_sym_fn f,
                      mxc_symbol *out) {
  API_CHECK_OUT(out, fn, "out");
  mxc__symbol *s = NULL, *r = NULL;
  char what[64];
  snprintf(what, sizeof what, "%s: sym", fn);
  MXC_FORWARD_IF_ERROR(api_symbol(sym, what, &s));
  MXC_FORWARD_IF_ERROR(f(s, &r));
  return api_wrap_symbol(r, out);
}

int mxc_symbol_copy(mxc_symbol sym, mxc_symbol *out) {
  API_GUARD();
  return sym_to_sym(sym, "mxc_symbol_copy", mxc__symbol_copy, out);
}

int mxc_symbol_internals(mxc_symbol sym, mxc_symbol *out) {
  API_GUARD();
  return sym_to_sym(sym, "mxc_symbol_internals", mxc__symbol_internals, out);
}

int mxc_symbol_group(const mxc_symbol *syms, int n, mxc_symbol *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_group", "out");
  MXC_RETURN_ERROR_IF(n < 1, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_group: n is %d; expected >= 1", n);
  mxc__symbol **s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbols(syms, n, "mxc_symbol_group", "syms", &s));
  mxc__symbol *r = NULL;
  int rc = mxc__symbol_group(s, n, &r);
  mxc__free(s);
  MXC_FORWARD_IF_ERROR(rc);
  return api_wrap_symbol(r, out);
}

int mxc_symbol_num_outputs(mxc_symbol sym, int *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_num_outputs", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_num_outputs: sym", &s));
  *out = s->n_outputs;
  return MXC_OK;
}

int mxc_symbol_output(mxc_symbol sym, int index, mxc_symbol *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_output", "out");
  mxc__symbol *s = NULL, *r = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_output: sym", &s));
  MXC_FORWARD_IF_ERROR(mxc__symbol_output(s, index, &r));
  return api_wrap_symbol(r, out);
}

int mxc_symbol_output_by_name(mxc_symbol sym, const char *name,
                              mxc_symbol *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_output_by_name", "out");
  mxc__symbol *s = NULL, *r = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_output_by_name: sym", &s));
  MXC_FORWARD_IF_ERROR(mxc__symbol_output_by_name(s, name, &r));
  return api_wrap_symbol(r, out);
}

int mxc_symbol_name(mxc_symbol sym, char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_name", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_name: sym", &s));
  return mxc__symbol_name(s, out);
}

/* ---- lists and attributes ---- */

typedef int (*sym_list_fn)(const mxc__symbol *s, mxc__str_list **out);

static int sym_list(mxc_symbol sym, const char *fn, sym_list_fn f,
                    mxc_str_list *out) {
  API_CHECK_OUT(out, fn, "out");
  mxc__symbol *s = NULL;
  char what[64];
  snprintf(what, sizeof what, "%s: sym", fn);
  MXC_FORWARD_IF_ERROR(api_symbol(sym, what, &s));
  mxc__str_list *l = NULL;
  MXC_FORWARD_IF_ERROR(f(s, &l));
  return wrap_list(l, out);
}

int mxc_symbol_list_arguments(mxc_symbol sym, mxc_str_list *out) {
  API_GUARD();
  return sym_list(sym, "mxc_symbol_list_arguments", mxc__symbol_list_arguments,
                  out);
}

int mxc_symbol_list_outputs(mxc_symbol sym, mxc_str_list *out) {
  API_GUARD();
  return sym_list(sym, "mxc_symbol_list_outputs", mxc__symbol_list_outputs,
                  out);
}

int mxc_symbol_list_auxiliary_states(mxc_symbol sym, mxc_str_list *out) {
  API_GUARD();
  return sym_list(sym, "mxc_symbol_list_auxiliary_states",
                  mxc__symbol_list_aux, out);
}

int mxc_symbol_attr_keys(mxc_symbol sym, mxc_str_list *out) {
  API_GUARD();
  return sym_list(sym, "mxc_symbol_attr_keys", mxc__symbol_attr_keys, out);
}

int mxc_symbol_set_attr(mxc_symbol sym, const char *key, const char *val) {
  API_GUARD();
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_set_attr: sym", &s));
  return mxc__symbol_set_attr(s, key, val);
}

int mxc_symbol_get_attr(mxc_symbol sym, const char *key, int *out_found,
                        char **out) {
  API_GUARD();
  API_CHECK_OUT(out_found, "mxc_symbol_get_attr", "out_found");
  API_CHECK_OUT(out, "mxc_symbol_get_attr", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_get_attr: sym", &s));
  char *v = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_get_attr(s, key, &v));
  *out_found = v != NULL;
  *out = v;
  return MXC_OK;
}

/* ---- JSON, files, DOT ---- */

int mxc_symbol_to_json(mxc_symbol sym, char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_to_json", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_to_json: sym", &s));
  return mxc__symbol_to_json(s, out);
}

int mxc_symbol_from_json(const char *json, mxc_symbol *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_from_json", "out");
  MXC_RETURN_ERROR_IF(!json, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_from_json: json is NULL");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_from_json(json, &s));
  return api_wrap_symbol(s, out);
}

int mxc_symbol_save(mxc_symbol sym, const char *path) {
  API_GUARD();
  MXC_RETURN_ERROR_IF(!path, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_save: path is NULL");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_save: sym", &s));
  return mxc__symbol_save(s, path);
}

int mxc_symbol_load(const char *path, mxc_symbol *out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_load", "out");
  MXC_RETURN_ERROR_IF(!path, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_symbol_load: path is NULL");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_load(path, &s));
  return api_wrap_symbol(s, out);
}

int mxc_symbol_to_dot(mxc_symbol sym, int n_shapes, const char *const *names,
                      const int *ndims, const int64_t *dims, char **out) {
  API_GUARD();
  API_CHECK_OUT(out, "mxc_symbol_to_dot", "out");
  mxc__symbol *s = NULL;
  MXC_FORWARD_IF_ERROR(api_symbol(sym, "mxc_symbol_to_dot: sym", &s));
  mxc__shape *shapes = NULL;
  MXC_FORWARD_IF_ERROR(mxc__shapes_from_dims("mxc_symbol_to_dot", n_shapes,
                                             ndims, dims, &shapes));
  int rc = mxc__symbol_to_dot(s, n_shapes, names,
                              n_shapes > 0 ? shapes : NULL, out);
  mxc__free(shapes);
  return rc;
}
