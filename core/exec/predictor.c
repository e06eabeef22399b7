/* Predictors: shared weights and per-predictor inference executors (see
 * predictor.h for the binding rules). */
#include "core/exec/predictor.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/graph/checkpoint.h"
#include "core/graph/infer.h"

struct mxc__pred_weights {
  atomic_int refs;
  mxc__device dev;
  mxc__symbol *sym;              /* the chosen outputs */
  mxc__ndarray_list *args, *aux; /* names without prefixes, on dev */
  mxc__str_list *arg_names, *aux_names; /* of sym */
  /* Per argument / auxiliary state of sym: its parameter (borrowed from
   * args / aux) or NULL. */
  const mxc__ndarray **arg_vals, **aux_vals;
};

/* ---- weights ------------------------------------------------------------ */

void mxc__pred_weights_release(mxc__pred_weights *w) {
  if (!w || atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1)
    return;
  mxc__symbol_free(w->sym);
  mxc__ndarray_list_free(w->args);
  mxc__ndarray_list_free(w->aux);
  mxc__str_list_free(w->arg_names);
  mxc__str_list_free(w->aux_names);
  mxc__free(w->arg_vals);
  mxc__free(w->aux_vals);
  mxc__free(w);
}

static int oom(const char *fn) {
  return mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
}

/* *out = the output named name of sym or of its inner nodes: the entry
 * name itself ("fc1_output"), else name + "_output" ("fc1"). */
static int find_output(const mxc__symbol *sym, const mxc__symbol *internals,
                       const char *name, const char *fn, mxc__symbol **out) {
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT,
                      "%s: an output name is NULL", fn);
  if (mxc__symbol_output_by_name(sym, name, out) == MXC_OK) return MXC_OK;
  if (mxc__symbol_output_by_name(internals, name, out) == MXC_OK) return MXC_OK;
  char buf[512];
  snprintf(buf, sizeof buf, "%s_output", name);
  if (mxc__symbol_output_by_name(internals, buf, out) == MXC_OK) return MXC_OK;
  return mxc__error_set(MXC_ERR_NOT_FOUND,
                        "%s: the graph has no output or inner node output "
                        "named '%s' (nor '%s')",
                        fn, name, buf);
}

/* Replaces *sym by the group of the n_out named outputs. */
static int choose_outputs(mxc__symbol **sym, int n_out,
                          const char *const *names, const char *fn) {
  if (n_out == 0) return MXC_OK;
  mxc__symbol *internals = NULL, *group = NULL;
  mxc__symbol **outs = mxc__calloc((size_t)n_out, sizeof *outs);
  int rc = outs ? mxc__symbol_internals(*sym, &internals) : oom(fn);
  for (int i = 0; rc == MXC_OK && i < n_out; ++i) {
    rc = find_output(*sym, internals, names[i], fn, &outs[i]);
  }
  if (rc == MXC_OK) rc = mxc__symbol_group(outs, n_out, &group);
  for (int i = 0; outs && i < n_out; ++i) mxc__symbol_free(outs[i]);
  mxc__free(outs);
  mxc__symbol_free(internals);
  MXC_FORWARD_IF_ERROR(rc);
  mxc__symbol_free(*sym);
  *sym = group;
  return MXC_OK;
}

static const mxc__ndarray *lookup(const mxc__ndarray_list *l,
                                  const char *name) {
  for (int i = 0; i < l->n; ++i) {
    if (strcmp(l->names[i], name) == 0) return l->arrays[i];
  }
  return NULL;
}

/* Copies every parameter to dev when it was loaded elsewhere (the readers
 * load on the CPU). */
static int move_to(mxc__ndarray_list *l, mxc__device dev) {
  for (int i = 0; i < l->n; ++i) {
    mxc__ndarray *a = l->arrays[i], *b = NULL;
    if (a->chunk->dev.type == dev.type && a->chunk->dev.id == dev.id) continue;
    MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&a->shape, a->dtype, dev, 0, &b));
    int rc = mxc__ndarray_copy(a, b);
    if (rc == MXC_OK) rc = mxc__ndarray_wait(b, 0);
    if (rc != MXC_OK) {
      mxc__ndarray_free(b);
      return rc;
    }
    mxc__ndarray_free(a);
    l->arrays[i] = b;
  }
  return MXC_OK;
}

/* Fills the name lists and per-variable parameter tables of w. */
static int index_params(mxc__pred_weights *w, const char *fn) {
  MXC_FORWARD_IF_ERROR(mxc__symbol_list_arguments(w->sym, &w->arg_names));
  MXC_FORWARD_IF_ERROR(mxc__symbol_list_aux(w->sym, &w->aux_names));
  w->arg_vals = mxc__calloc((size_t)w->arg_names->n + 1, sizeof *w->arg_vals);
  w->aux_vals = mxc__calloc((size_t)w->aux_names->n + 1, sizeof *w->aux_vals);
  if (!w->arg_vals || !w->aux_vals) return oom(fn);
  for (int i = 0; i < w->arg_names->n; ++i) {
    w->arg_vals[i] = lookup(w->args, w->arg_names->items[i]);
  }
  for (int i = 0; i < w->aux_names->n; ++i) {
    w->aux_vals[i] = lookup(w->aux, w->aux_names->items[i]);
    MXC_RETURN_ERROR_IF(!w->aux_vals[i], MXC_ERR_NOT_FOUND,
                        "%s: the auxiliary state '%s' is not in the params "
                        "(looked for 'aux:%s')",
                        fn, w->aux_names->items[i], w->aux_names->items[i]);
  }
  return MXC_OK;
}

/* Takes sym, args and aux (freed on failure too). */
static int weights_make(mxc__symbol *sym, mxc__ndarray_list *args,
                        mxc__ndarray_list *aux, mxc__device dev, int n_out,
                        const char *const *out_names, const char *fn,
                        mxc__pred_weights **out) {
  mxc__pred_weights *w = mxc__calloc(1, sizeof *w);
  if (!w) {
    mxc__symbol_free(sym);
    mxc__ndarray_list_free(args);
    mxc__ndarray_list_free(aux);
    return oom(fn);
  }
  atomic_init(&w->refs, 1);
  w->dev = dev;
  w->sym = sym;
  w->args = args;
  w->aux = aux;
  int rc = choose_outputs(&w->sym, n_out, out_names, fn);
  if (rc == MXC_OK) rc = move_to(w->args, dev);
  if (rc == MXC_OK) rc = move_to(w->aux, dev);
  if (rc == MXC_OK) rc = index_params(w, fn);
  if (rc != MXC_OK) {
    mxc__pred_weights_release(w);
    return rc;
  }
  *out = w;
  return MXC_OK;
}

static int check_outputs(int n_out, const char *const *out_names,
                         const char *fn) {
  MXC_RETURN_ERROR_IF(n_out < 0 || (n_out > 0 && !out_names),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: n_outputs is %d with output_names %s; expected "
                      "n_outputs >= 0 and output_names non-NULL when positive",
                      fn, n_out, out_names ? "non-NULL" : "NULL");
  return MXC_OK;
}

int mxc__pred_weights_from_bytes(const char *json, const void *params,
                                 size_t n_params, mxc__device dev, int n_out,
                                 const char *const *out_names,
                                 mxc__pred_weights **out) {
  const char *fn = "mxc_predictor_create";
  MXC_FORWARD_IF_ERROR(check_outputs(n_out, out_names, fn));
  mxc__symbol *sym = NULL;
  mxc__ndarray_list *all = NULL, *args = NULL, *aux = NULL;
  MXC_FORWARD_IF_ERROR(mxc__symbol_from_json(json, &sym));
  int rc = mxc__ndarray_load_mem(params, n_params, "<params bytes>", &all);
  if (rc == MXC_OK) rc = mxc__checkpoint_split(all, &args, &aux);
  mxc__ndarray_list_free(all);
  if (rc != MXC_OK) {
    mxc__symbol_free(sym);
    return rc;
  }
  return weights_make(sym, args, aux, dev, n_out, out_names, fn, out);
}

int mxc__pred_weights_from_checkpoint(const char *prefix, int epoch,
                                      mxc__device dev, int n_out,
                                      const char *const *out_names,
                                      mxc__pred_weights **out) {
  const char *fn = "mxc_predictor_create_from_checkpoint";
  MXC_FORWARD_IF_ERROR(check_outputs(n_out, out_names, fn));
  mxc__symbol *sym = NULL;
  mxc__ndarray_list *args = NULL, *aux = NULL;
  MXC_FORWARD_IF_ERROR(mxc__checkpoint_load(prefix, epoch, &sym, &args, &aux));
  return weights_make(sym, args, aux, dev, n_out, out_names, fn, out);
}

/* ---- binding -------------------------------------------------------------- */

static int input_index(const mxc__predictor *p, const char *name) {
  for (int j = 0; j < p->n_inputs; ++j) {
    if (strcmp(p->input_names[j], name) == 0) return j;
  }
  return -1;
}

static int arg_index(const mxc__pred_weights *w, const char *name) {
  for (int i = 0; i < w->arg_names->n; ++i) {
    if (strcmp(w->arg_names->items[i], name) == 0) return i;
  }
  return -1;
}

/* Checks the inputs against the graph and copies them into p. */
static int take_inputs(mxc__predictor *p, const mxc__pred_inputs *in,
                       const char *fn) {
  MXC_RETURN_ERROR_IF(in->n < 1 || !in->names || !in->shapes,
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: %d inputs with names %s; expected at least one "
                      "named input with its shape",
                      fn, in->n, in->names ? "non-NULL" : "NULL");
  p->input_names = mxc__calloc((size_t)in->n, sizeof *p->input_names);
  p->input_shapes = mxc__calloc((size_t)in->n, sizeof *p->input_shapes);
  p->input_dtypes = mxc__calloc((size_t)in->n, sizeof *p->input_dtypes);
  p->inputs = mxc__calloc((size_t)in->n, sizeof *p->inputs);
  if (!p->input_names || !p->input_shapes || !p->input_dtypes || !p->inputs)
    return oom(fn);
  for (int j = 0; j < in->n; ++j) {
    const char *nm = in->names[j];
    MXC_RETURN_ERROR_IF(!nm, MXC_ERR_INVALID_ARGUMENT,
                        "%s: input name %d is NULL", fn, j);
    MXC_RETURN_ERROR_IF(arg_index(p->w, nm) < 0, MXC_ERR_NOT_FOUND,
                        "%s: input '%s' is not an argument of the graph", fn,
                        nm);
    MXC_RETURN_ERROR_IF(input_index(p, nm) >= 0, MXC_ERR_INVALID_ARGUMENT,
                        "%s: input '%s' is given twice", fn, nm);
    int dt = in->dtypes ? in->dtypes[j] : MXC_DTYPE_FLOAT32;
    MXC_RETURN_ERROR_IF(mxc__dtype_size(dt) == 0, MXC_ERR_DTYPE,
                        "%s: input '%s' has dtype %d, which is not a known "
                        "dtype",
                        fn, nm, dt);
    MXC_FORWARD_IF_ERROR(
        mxc__shape_check(&in->shapes[j], mxc__dtype_size(dt), nm));
    p->input_names[j] = mxc__strdup(nm);
    if (!p->input_names[j]) return oom(fn);
    p->input_shapes[j] = in->shapes[j];
    p->input_dtypes[j] = dt;
    p->n_inputs = j + 1;
  }
  return MXC_OK;
}

/* Infers every shape from the inputs' and the parameters' shapes. */
static int infer_shapes(const mxc__predictor *p, mxc__infer_result **out) {
  const mxc__pred_weights *w = p->w;
  int cap = p->n_inputs + w->arg_names->n + w->aux_names->n, n = 0;
  const char **names = mxc__calloc((size_t)cap, sizeof *names);
  mxc__shape *shapes = mxc__calloc((size_t)cap, sizeof *shapes);
  int rc = (names && shapes) ? MXC_OK : oom("mxc_predictor");
  for (int j = 0; rc == MXC_OK && j < p->n_inputs; ++j, ++n) {
    names[n] = p->input_names[j];
    shapes[n] = p->input_shapes[j];
  }
  for (int i = 0; rc == MXC_OK && i < w->arg_names->n; ++i) {
    if (!w->arg_vals[i] || input_index(p, w->arg_names->items[i]) >= 0)
      continue;
    names[n] = w->arg_names->items[i];
    shapes[n++] = w->arg_vals[i]->shape;
  }
  for (int i = 0; rc == MXC_OK && i < w->aux_names->n; ++i, ++n) {
    names[n] = w->aux_names->items[i];
    shapes[n] = w->aux_vals[i]->shape;
  }
  if (rc == MXC_OK)
    rc = mxc__symbol_infer_shape(w->sym, n, names, shapes, 0, out);
  mxc__free(names);
  mxc__free(shapes);
  return rc;
}

/* A new zero array (inputs and labels start defined). */
static int zeros(const mxc__shape *s, int dtype, mxc__device dev,
                 mxc__ndarray **out) {
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(s, dtype, dev, 0, out));
  int rc = mxc__exec_fill(*out, 0.0, "predictor: zero input");
  if (rc != MXC_OK) {
    mxc__ndarray_free(*out);
    *out = NULL;
  }
  return rc;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* args[i] = the array bound to argument i: an input (also kept in
 * p->inputs), the shared parameter, or zeros for a label. */
static int make_arg(mxc__predictor *p, const mxc__infer_result *inf, int i,
                    const char *fn, mxc__ndarray **arg) {
  const mxc__pred_weights *w = p->w;
  const char *nm = w->arg_names->items[i];
  int j = input_index(p, nm);
  if (j >= 0) {
    MXC_FORWARD_IF_ERROR(
        zeros(&p->input_shapes[j], p->input_dtypes[j], w->dev, arg));
    return mxc__ndarray_clone_view(*arg, &p->inputs[j]);
  }
  if (w->arg_vals[i]) return mxc__ndarray_clone_view(w->arg_vals[i], arg);
  MXC_RETURN_ERROR_IF(!ends_with(nm, "label"), MXC_ERR_NOT_FOUND,
                      "%s: the argument '%s' is neither an input nor in the "
                      "params (looked for 'arg:%s')",
                      fn, nm, nm);
  return zeros(&inf->shapes[MXC_INFER_ARGS][i], MXC_DTYPE_FLOAT32, w->dev,
               arg);
}

static void free_arrays(mxc__ndarray **a, int n) {
  for (int i = 0; a && i < n; ++i) mxc__ndarray_free(a[i]);
  mxc__free(a);
}

static int bind(mxc__predictor *p, const char *fn) {
  const mxc__pred_weights *w = p->w;
  int n_args = w->arg_names->n, n_aux = w->aux_names->n;
  mxc__infer_result *inf = NULL;
  MXC_FORWARD_IF_ERROR(infer_shapes(p, &inf));
  mxc__ndarray **args = mxc__calloc((size_t)n_args + 1, sizeof *args);
  mxc__ndarray **aux = mxc__calloc((size_t)n_aux + 1, sizeof *aux);
  int rc = (args && aux) ? MXC_OK : oom(fn);
  for (int i = 0; rc == MXC_OK && i < n_args; ++i) {
    rc = make_arg(p, inf, i, fn, &args[i]);
  }
  for (int i = 0; rc == MXC_OK && i < n_aux; ++i) {
    rc = mxc__ndarray_clone_view(w->aux_vals[i], &aux[i]);
  }
  if (rc == MXC_OK) {
    rc = mxc__executor_bind(w->sym, w->dev, args, n_args, NULL, NULL, aux,
                            n_aux, MXC_BIND_DEFAULT, fn, &p->ex);
  }
  free_arrays(args, n_args);
  free_arrays(aux, n_aux);
  mxc__infer_result_free(inf);
  return rc;
}

void mxc__predictor_free(mxc__predictor *p) {
  if (!p) return;
  mxc__executor_free(p->ex);
  for (int j = 0; j < p->n_inputs; ++j) {
    mxc__free(p->input_names[j]);
    mxc__ndarray_free(p->inputs[j]);
  }
  mxc__free(p->input_names);
  mxc__free(p->input_shapes);
  mxc__free(p->input_dtypes);
  mxc__free(p->inputs);
  mxc__pred_weights_release(p->w);
  mxc__free(p);
}

int mxc__predictor_new(mxc__pred_weights *w, const mxc__pred_inputs *in,
                       const char *fn, mxc__predictor **out) {
  mxc__predictor *p = mxc__calloc(1, sizeof *p);
  if (!p) return oom(fn);
  atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
  p->w = w;
  int rc = take_inputs(p, in, fn);
  if (rc == MXC_OK) rc = bind(p, fn);
  if (rc != MXC_OK) {
    mxc__predictor_free(p);
    return rc;
  }
  *out = p;
  return MXC_OK;
}

int mxc__predictor_reshape(const mxc__predictor *p, int n,
                           const char *const *names, const mxc__shape *shapes,
                           mxc__predictor **out) {
  const char *fn = "mxc_predictor_reshape";
  mxc__shape *s = mxc__calloc((size_t)p->n_inputs, sizeof *s);
  if (!s) return oom(fn);
  memcpy(s, p->input_shapes, (size_t)p->n_inputs * sizeof *s);
  for (int i = 0; i < n; ++i) {
    int j = names[i] ? input_index(p, names[i]) : -1;
    if (j < 0) {
      mxc__free(s);
      return mxc__error_set(MXC_ERR_NOT_FOUND,
                            "%s: '%s' is not an input of the predictor", fn,
                            names[i] ? names[i] : "(NULL)");
    }
    s[j] = shapes[i];
  }
  mxc__pred_inputs in = {p->n_inputs, (const char *const *)p->input_names, s,
                         p->input_dtypes};
  int rc = mxc__predictor_new(p->w, &in, fn, out);
  mxc__free(s);
  return rc;
}

/* ---- running -------------------------------------------------------------- */

static int find_input(const mxc__predictor *p, const char *name,
                      const char *fn, int *out) {
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT, "%s: name is NULL", fn);
  *out = input_index(p, name);
  if (*out >= 0) return MXC_OK;
  char known[256] = "";
  for (int j = 0; j < p->n_inputs; ++j) {
    size_t k = strlen(known);
    snprintf(known + k, sizeof known - k, "%s'%s'", j ? ", " : "",
             p->input_names[j]);
  }
  return mxc__error_set(MXC_ERR_NOT_FOUND,
                        "%s: '%s' is not an input of the predictor; its "
                        "inputs are %s",
                        fn, name, known);
}

int mxc__predictor_set_input(mxc__predictor *p, const char *name,
                             const void *data, size_t nbytes) {
  const char *fn = "mxc_predictor_set_input";
  int j;
  MXC_FORWARD_IF_ERROR(find_input(p, name, fn, &j));
  size_t want = mxc__ndarray_nbytes(p->inputs[j]);
  MXC_RETURN_ERROR_IF(!data && nbytes > 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: data is NULL", fn);
  MXC_RETURN_ERROR_IF(nbytes != want, MXC_ERR_SHAPE,
                      "%s: input '%s' takes %zu bytes (%lld %s values); got "
                      "%zu bytes",
                      fn, name, want, (long long)mxc__ndarray_size(p->inputs[j]),
                      mxc__dtype_name(p->input_dtypes[j]), nbytes);
  return mxc__ndarray_copy_from_host(p->inputs[j], data, nbytes);
}

int mxc__predictor_set_input_array(mxc__predictor *p, const char *name,
                                   const mxc__ndarray *arr) {
  const char *fn = "mxc_predictor_set_input_array";
  int j;
  MXC_FORWARD_IF_ERROR(find_input(p, name, fn, &j));
  const mxc__ndarray *in = p->inputs[j];
  char want[160], got[160];
  MXC_RETURN_ERROR_IF(arr->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "%s: input '%s' takes a dense array; got a sparse one",
                      fn, name);
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(&arr->shape, &in->shape),
                      MXC_ERR_SHAPE,
                      "%s: input '%s' has shape %s; got an array of shape %s",
                      fn, name, mxc__shape_str(&in->shape, want, sizeof want),
                      mxc__shape_str(&arr->shape, got, sizeof got));
  MXC_RETURN_ERROR_IF(arr->dtype != in->dtype, MXC_ERR_DTYPE,
                      "%s: input '%s' has dtype %s; got an array of dtype %s",
                      fn, name, mxc__dtype_name(in->dtype),
                      mxc__dtype_name(arr->dtype));
  return mxc__ndarray_copy(arr, in);
}

int mxc__predictor_forward(mxc__predictor *p) {
  return mxc__executor_forward(p->ex, 0);
}

int mxc__predictor_output(const mxc__predictor *p, int index, const char *fn,
                          const mxc__ndarray **out) {
  MXC_RETURN_ERROR_IF(index < 0 || index >= p->ex->n_outputs,
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: output index %d is out of range; the predictor "
                      "has %d outputs",
                      fn, index, p->ex->n_outputs);
  *out = mxc__executor_output(p->ex, index);
  return MXC_OK;
}

int mxc__predictor_get_output(const mxc__predictor *p, int index, void *data,
                              size_t nbytes) {
  const char *fn = "mxc_predictor_get_output";
  const mxc__ndarray *o;
  MXC_FORWARD_IF_ERROR(mxc__predictor_output(p, index, fn, &o));
  size_t want = mxc__ndarray_nbytes(o);
  MXC_RETURN_ERROR_IF(!data && nbytes > 0, MXC_ERR_INVALID_ARGUMENT,
                      "%s: data is NULL", fn);
  MXC_RETURN_ERROR_IF(nbytes != want, MXC_ERR_SHAPE,
                      "%s: output %d has %zu bytes (%lld %s values); got a "
                      "buffer of %zu bytes",
                      fn, index, want, (long long)mxc__ndarray_size(o),
                      mxc__dtype_name(o->dtype), nbytes);
  return mxc__ndarray_copy_to_host(o, data, nbytes);
}
