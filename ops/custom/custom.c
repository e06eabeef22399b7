/* Custom: the operator that runs callbacks registered with
 * mxc_custom_op_register (core/op/custom.h), named by op_type, as MXNet's
 * Custom operator. Every other parameter is kept, as given, for the
 * callbacks.
 *
 * Parameters are parsed here (parse_params), because their keys are
 * free-form. The parameter struct is flat (kernels get a byte copy), so
 * it holds the op_type and the other pairs packed as "key\0value\0", and
 * the input/output counts the registration had when the call was made.
 * Each use (shape inference, kernel, gradient) looks the registration up
 * again by name and holds a reference while it runs: an operator
 * unregistered since is an error naming it, never a dangling pointer; one
 * re-registered with other counts is refused.
 *
 * The gradient is one node _backward_Custom with inputs (ograds, inputs,
 * outputs) and the input gradients as outputs; the callbacks get them as
 * MXNet's custom backward does. */
#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/op/common.h"
#include "core/op/custom.h"
#include "core/op/node.h"
#include "ops/families.h"

#define MAX_ARITY MXC__CUSTOM_MAX_ARITY
/* Free-form parameters per call, besides op_type. */
#define MAX_KW 64

typedef struct custom_param {
  char op_type[MXC__PARAM_STR_MAX];
  int n_in, n_out, n_kw;
  char kw[MXC__PARAM_STR_MAX]; /* n_kw pairs "key\0value\0" */
} custom_param;

/* Documentation only: parsing is custom_parse. */
static const mxc__param_def k_params[] = {
    MXC__PARAM(custom_param, op_type, MXC__P_STRING, NULL,
               "Name of the custom operator (mxc_custom_op_register); every "
               "other parameter is passed to its callbacks."),
};

/* Appends "key\0value\0" to p->kw. */
static int kw_add(const mxc__op *op, custom_param *p, size_t *used,
                  const char *k, const char *v) {
  size_t lk = strlen(k) + 1, lv = strlen(v) + 1;
  MXC_RETURN_ERROR_IF(p->n_kw == MAX_KW || lk + lv > sizeof p->kw - *used,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': too many parameters for the callbacks "
                      "(at most %d pairs, %zu bytes)",
                      op->name, MAX_KW, sizeof p->kw);
  memcpy(p->kw + *used, k, lk);
  memcpy(p->kw + *used + lk, v, lv);
  *used += lk + lv;
  p->n_kw++;
  return MXC_OK;
}

/* op_type must name a registered operator: its counts go in the struct. */
static int set_type(const mxc__op *op, custom_param *p, const char *type) {
  MXC_RETURN_ERROR_IF(!type, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter 'op_type' is required (the "
                      "name given to mxc_custom_op_register)",
                      op->name);
  MXC_RETURN_ERROR_IF(strlen(type) >= MXC__CUSTOM_NAME_MAX,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': op_type is longer than %d bytes",
                      op->name, MXC__CUSTOM_NAME_MAX - 1);
  mxc__custom *c = NULL;
  MXC_FORWARD_IF_ERROR(mxc__custom_acquire(type, "operator 'Custom'", &c));
  p->n_in = mxc__custom_def(c)->num_inputs;
  p->n_out = mxc__custom_def(c)->num_outputs;
  mxc__custom_release(c);
  memcpy(p->op_type, type, strlen(type) + 1);
  return MXC_OK;
}

static int custom_parse(const mxc__op *op, const char *const *keys,
                        const char *const *vals, int n, void *out) {
  custom_param *p = out;
  const char *type = NULL;
  size_t used = 0;
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!keys || !vals || !keys[i] || !vals[i],
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter %d has a NULL key or value",
                        op->name, i);
    if (strncmp(keys[i], "__", 2) == 0) continue;
    if (strcmp(keys[i], "op_type") == 0) {
      type = vals[i];
    } else {
      MXC_FORWARD_IF_ERROR(kw_add(op, p, &used, keys[i], vals[i]));
    }
  }
  return set_type(op, p, type);
}

/* ---- calling the registration ---- */

/* A call in progress: the reference, the unpacked parameters, the
 * callback's message buffer. */
typedef struct custom_ctx {
  mxc__custom *c;
  const mxc_custom_op_def *def;
  const custom_param *p;
  mxc_custom_call call;
  const char *keys[MAX_KW], *vals[MAX_KW];
  char msg[512];
} custom_ctx;

static int ctx_open(const custom_param *p, int is_train, custom_ctx *x) {
  memset(x, 0, sizeof *x);
  x->p = p;
  MXC_FORWARD_IF_ERROR(
      mxc__custom_acquire(p->op_type, "operator 'Custom'", &x->c));
  x->def = mxc__custom_def(x->c);
  if (x->def->num_inputs != p->n_in || x->def->num_outputs != p->n_out) {
    mxc__custom_release(x->c);
    return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "operator 'Custom': '%s' was registered again with "
                          "other counts (%d inputs, %d outputs; this call "
                          "was made for %d and %d)",
                          p->op_type, x->def->num_inputs,
                          x->def->num_outputs, p->n_in, p->n_out);
  }
  const char *s = p->kw;
  for (int i = 0; i < p->n_kw; ++i) {
    x->keys[i] = s;
    s += strlen(s) + 1;
    x->vals[i] = s;
    s += strlen(s) + 1;
  }
  mxc_custom_call call = {x->def->user_data, p->n_kw, x->keys, x->vals,
                          is_train, x->msg, sizeof x->msg};
  x->call = call;
  return MXC_OK;
}

/* Closes the call; a nonzero callback result becomes an operator error
 * naming the custom operator and quoting its message. */
static int ctx_close(custom_ctx *x, const char *what, int code, int rc) {
  mxc__custom_release(x->c);
  if (rc == 0) return MXC_OK;
  x->msg[sizeof x->msg - 1] = '\0';
  return mxc__error_set(code,
                        "operator 'Custom' (op_type '%s'): the %s callback "
                        "failed (returned %d)%s%s",
                        x->p->op_type, what, rc, x->msg[0] ? ": " : "",
                        x->msg);
}

static void tensors_of(const mxc__blob *b, int n, mxc_custom_tensor *t) {
  for (int i = 0; i < n; ++i) {
    mxc_custom_tensor v = {b[i].ptr, b[i].shape.ndim, b[i].shape.dims,
                           b[i].dtype};
    t[i] = v;
  }
}

static void reqs_of(const mxc__req *req, int n, int *out) {
  for (int i = 0; i < n; ++i) {
    out[i] = req[i] == MXC__REQ_ADD    ? MXC_REQ_ADD
             : req[i] == MXC__REQ_NULL ? MXC_REQ_NULL
                                       : MXC_REQ_WRITE;
  }
}

/* ---- descriptor functions ---- */

static int custom_num_inputs(const void *param) {
  return ((const custom_param *)param)->n_in;
}
static int custom_num_outputs(const void *param) {
  return ((const custom_param *)param)->n_out;
}
static int custom_bwd_num_inputs(const void *param) {
  const custom_param *p = param;
  return 2 * p->n_out + p->n_in;
}

static char g_in_names[MAX_ARITY][8]; /* "data", "in1", ... (registration) */
static const char *custom_input_name(const void *param, int i) {
  (void)param;
  return i >= 0 && i < MAX_ARITY ? g_in_names[i] : "?";
}
static const char *custom_bwd_input_name(const void *param, int i) {
  const custom_param *p = param;
  if (i < p->n_out) return "ograd";
  return i < p->n_out + p->n_in ? custom_input_name(p, i - p->n_out)
                                : "output";
}

/* Sets slot to want, or checks a known one against it. */
static int assign(const custom_param *p, mxc__shape *slot,
                  const mxc__shape *want, int i) {
  if (slot->ndim < 0) {
    *slot = *want;
    return MXC_OK;
  }
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(slot, want), MXC_ERR_SHAPE,
                      "operator 'Custom' (op_type '%s'): output %d has "
                      "another shape than the one inferred",
                      p->op_type, i);
  return MXC_OK;
}

/* Runs the callback's shape inference into out. */
static int call_infer(custom_ctx *x, const mxc__shape *in, mxc__shape *out) {
  const custom_param *p = x->p;
  int ind[MAX_ARITY], outd[MAX_ARITY];
  int64_t idims[MAX_ARITY * MXC_MAX_NDIM], odims[MAX_ARITY * MXC_MAX_NDIM];
  memset(odims, 0, sizeof odims);
  for (int i = 0; i < p->n_in; ++i) {
    ind[i] = in[i].ndim;
    memcpy(idims + i * MXC_MAX_NDIM, in[i].dims, sizeof in[i].dims);
  }
  for (int i = 0; i < p->n_out; ++i) outd[i] = out[i].ndim;
  int rc = x->def->infer_shape(&x->call, p->n_in, ind, idims, p->n_out, outd,
                               odims);
  if (rc != 0) return rc;
  for (int i = 0; i < p->n_out; ++i) {
    int bad = outd[i] < 0 || outd[i] > MXC_MAX_NDIM;
    for (int k = 0; !bad && k < outd[i]; ++k) bad = odims[i * MXC_MAX_NDIM + k] < 0;
    if (bad) {
      snprintf(x->msg, sizeof x->msg, "invalid shape for output %d", i);
      return -1;
    }
    out[i].ndim = outd[i];
    memcpy(out[i].dims, odims + i * MXC_MAX_NDIM, sizeof out[i].dims);
  }
  return 0;
}

/* Called once every input shape is known; without a callback every
 * output is shaped like input 0. */
static int custom_infer_shape(const mxc__op *op, const void *param,
                              mxc__shape *in, int n_in, mxc__shape *out,
                              int n_out) {
  (void)op;
  for (int i = 0; i < n_in; ++i) {
    if (in[i].ndim < 0) return MXC_OK;
  }
  custom_ctx x;
  MXC_FORWARD_IF_ERROR(ctx_open(param, 0, &x));
  mxc__shape got[MAX_ARITY];
  for (int i = 0; i < n_out; ++i) got[i] = x.def->infer_shape ? out[i] : in[0];
  int rc = x.def->infer_shape ? call_infer(&x, in, got) : 0;
  MXC_FORWARD_IF_ERROR(ctx_close(&x, "infer_shape", MXC_ERR_SHAPE, rc));
  for (int i = 0; i < n_out; ++i) {
    MXC_FORWARD_IF_ERROR(assign(param, &out[i], &got[i], i));
  }
  return MXC_OK;
}

static int custom_forward(const mxc__op *op, const mxc__opctx *ctx,
                          const void *param, const mxc__blob *in, int n_in,
                          const mxc__blob *out, int n_out, const mxc__req *req) {
  (void)op;
  custom_ctx x;
  MXC_FORWARD_IF_ERROR(ctx_open(param, ctx->is_train, &x));
  mxc_custom_tensor ti[MAX_ARITY], to[MAX_ARITY];
  int rq[MAX_ARITY];
  tensors_of(in, n_in, ti);
  tensors_of(out, n_out, to);
  reqs_of(req, n_out, rq);
  int rc = x.def->forward(&x.call, n_in, ti, n_out, to, rq);
  return ctx_close(&x, "forward", MXC_ERR_OPERATOR, rc);
}

/* _backward_Custom: inputs (ograds, inputs, outputs), outputs the input
 * gradients. */
static int custom_backward(const mxc__op *op, const mxc__opctx *ctx,
                           const void *param, const mxc__blob *in, int n_in,
                           const mxc__blob *out, int n_out,
                           const mxc__req *req) {
  (void)op, (void)n_in;
  const custom_param *p = param;
  custom_ctx x;
  MXC_FORWARD_IF_ERROR(ctx_open(p, ctx->is_train, &x));
  if (!x.def->backward) {
    snprintf(x.msg, sizeof x.msg, "the operator has no backward callback");
    return ctx_close(&x, "backward", MXC_ERR_UNSUPPORTED, -1);
  }
  mxc_custom_tensor t[3 * MAX_ARITY], tg[MAX_ARITY];
  int rq[MAX_ARITY];
  tensors_of(in, 2 * p->n_out + p->n_in, t);
  tensors_of(out, n_out, tg);
  reqs_of(req, n_out, rq);
  int rc = x.def->backward(&x.call, p->n_in, p->n_out, t, t + p->n_out,
                           t + p->n_out + p->n_in, tg, rq);
  return ctx_close(&x, "backward", MXC_ERR_OPERATOR, rc);
}

/* Backward shapes: each input gradient is shaped like its input. */
static int custom_bwd_infer_shape(const mxc__op *op, const void *param,
                                  mxc__shape *in, int n_in, mxc__shape *out,
                                  int n_out) {
  (void)op, (void)n_in;
  const custom_param *p = param;
  for (int i = 0; i < n_out; ++i) {
    if (in[p->n_out + i].ndim >= 0) {
      MXC_FORWARD_IF_ERROR(assign(p, &out[i], &in[p->n_out + i], i));
    }
  }
  return MXC_OK;
}

/* Refuses to build a gradient for an operator without backward, so that
 * autograd and executors say so before running anything. */
static int custom_gradient(const mxc__node *fwd, const mxc__entry *ograd,
                           mxc__entry *igrad) {
  const custom_param *p = fwd->param;
  custom_ctx x;
  MXC_FORWARD_IF_ERROR(ctx_open(p, 0, &x));
  int has = x.def->backward != NULL;
  if (!has) snprintf(x.msg, sizeof x.msg, "it has no backward callback");
  MXC_FORWARD_IF_ERROR(ctx_close(&x, "backward", MXC_ERR_UNSUPPORTED, !has));
  return mxc__grad_use_in_out(fwd, ograd, igrad);
}

#define CUSTOM_PARAMS                                  \
  MXC__PARAMS_OF(custom_param, k_params),              \
      .parse_params = custom_parse

static const mxc__op k_custom = {
    .name = "Custom",
    .doc = "Runs the callbacks registered with mxc_custom_op_register under "
           "op_type; other parameters are passed to them.",
    CUSTOM_PARAMS,
    .num_inputs = custom_num_inputs,
    .input_name = custom_input_name,
    .num_outputs = custom_num_outputs,
    .infer_shape = custom_infer_shape,
    .compute = custom_forward,
    .gradient = custom_gradient,
    .backward_uses_inputs = UINT32_MAX,
    .backward_uses_outputs = UINT32_MAX,
};

static const mxc__op k_custom_bwd = {
    .name = "_backward_Custom",
    .doc = "Gradient of Custom: the registered backward callback.",
    CUSTOM_PARAMS,
    .num_inputs = custom_bwd_num_inputs,
    .input_name = custom_bwd_input_name,
    .num_outputs = custom_num_inputs,
    .infer_shape = custom_bwd_infer_shape,
    .compute = custom_backward,
    .hidden = 1,
};

int mxc__ops_register_custom(mxc__registry *r) {
  for (int i = 0; i < MAX_ARITY; ++i) {
    if (i == 0) {
      snprintf(g_in_names[i], sizeof g_in_names[i], "data");
    } else {
      snprintf(g_in_names[i], sizeof g_in_names[i], "in%d", i);
    }
  }
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_custom));
  return mxc__registry_add(r, &k_custom_bwd);
}
