/* Recording: the per-thread flag, recorded operator calls, marked
 * variables, gradient buffers and detaching. */
#include <pthread.h>
#include <string.h>

#include "core/autograd/autograd.h"
#include "core/autograd/internal.h"
#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/op/arity.h"
#include "core/op/invoke.h"
#include "core/resource/training.h"
#include "core/op/node.h"

/* A static thread-local: an extern one would appear in the shared
 * library's dynamic symbol table (as a local TLS symbol). */
static _Thread_local int tls_recording;

int mxc__autograd_is_recording(void) { return tls_recording; }

int mxc__autograd_set_recording(int recording) {
  int prev = tls_recording;
  tls_recording = recording ? 1 : 0;
  return prev;
}

/* ---- the release hook: registered before the first link is set ---- */

static void release_link(void *ag) {
  mxc__ag_link *l = ag;
  mxc__ag_node_unref(l->owner);
}

static pthread_once_t g_hook_once = PTHREAD_ONCE_INIT;

static void register_hook(void) { mxc__ndarray_set_ag_release(release_link); }

static void ensure_hook(void) { pthread_once(&g_hook_once, register_hook); }

/* A new unmarked variable history node whose value is a (a constant input
 * of a recorded call, or a variable about to be marked). */
static int var_node(const mxc__ndarray *a, const char *name,
                    mxc__ag_node **out) {
  mxc__ag_node *n = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ag_node_new(1, 0, &n));
  int rc = mxc__node_variable(name, &n->node);
  if (rc != MXC_OK) {
    mxc__ag_node_unref(n);
    return rc;
  }
  mxc__ag_save(&n->vals[0], a);
  *out = n;
  return MXC_OK;
}

/* ---- recording a call ---- */

/* Under the lock: whether the call is to be recorded (some input has a
 * history) and, if so, the checks on outputs and a new history node with
 * references to the inputs' history nodes (NULL for inputs without one).
 * *rec stays NULL when nothing is to be recorded. */
static int begin_record(const mxc__op *op, mxc__ndarray *const *in, int n_in,
                        mxc__ndarray *const *out, int n_out,
                        const mxc__req *req, int n_total, mxc__ag_node **rec,
                        int *idx) {
  int any = 0;
  for (int i = 0; i < n_in && !any; ++i) any = in[i] && in[i]->ag != NULL;
  if (!any) return MXC_OK;
  for (int j = 0; j < n_out; ++j) {
    MXC_RETURN_ERROR_IF(req && req[j] == MXC__REQ_ADD, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': output %d has request MXC_REQ_ADD; "
                        "accumulating into an output cannot be recorded "
                        "(write a new array instead)",
                        op->name, j);
    MXC_RETURN_ERROR_IF(out[j] && out[j]->ag != NULL, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': output %d has a recorded history (a "
                        "marked variable or a recorded result); writing it "
                        "in place while recording would corrupt gradients",
                        op->name, j);
  }
  mxc__ag_node *n = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ag_node_new(n_total, n_in, &n));
  for (int i = 0; i < n_in; ++i) {
    mxc__ag_link *l = in[i] ? mxc__ag_link_of(in[i]) : NULL;
    idx[i] = 0;
    if (!l) continue;
    mxc__ag_node_ref(l->owner);
    n->inputs[i] = l->owner;
    idx[i] = l->index;
  }
  *rec = n;
  return MXC_OK;
}

/* Before invoking: variable nodes for constant inputs and the operator
 * node over the inputs' entries. */
static int build_record(mxc__ag_node *rec, const mxc__op *op,
                        const void *param, const char *const *keys, const char *const *vals,
                        int n_params, mxc__ndarray *const *in, int n_in,
                        const int *idx) {
  mxc__entry small[16];
  mxc__entry *ents =
      n_in <= 16 ? small : mxc__malloc(sizeof *ents * (size_t)n_in);
  MXC_RETURN_ERROR_IF(!ents, MXC_ERR_OOM,
                      "autograd: out of memory recording operator '%s'",
                      op->name);
  int rc = MXC_OK;
  for (int i = 0; i < n_in && rc == MXC_OK; ++i) {
    if (!in[i]) {
      rc = mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s': input %d is NULL", op->name, i);
    } else if (!rec->inputs[i]) {
      rc = var_node(in[i], "const", &rec->inputs[i]);
    }
    if (rc == MXC_OK) {
      ents[i].node = rec->inputs[i]->node;
      ents[i].index = idx[i];
    }
  }
  if (rc == MXC_OK) {
    rc = mxc__node_op_parsed(op, param, keys, vals, n_params, ents, n_in,
                             op->name, &rec->node);
  }
  if (ents != small) mxc__free(ents);
  return rc;
}

/* After a successful invoke: saves every output, links the visible ones
 * to the record and drops the hidden ones. Cannot fail. */
/* The outputs of a recorded call, hidden ones included; old: scratch
 * for commit_record. */
typedef struct rec_outs {
  mxc__ndarray **outs;
  mxc__ag_node **old;
  mxc__req *reqs;
  int *created;
} rec_outs;

/* Bytes of a rec_outs for n outputs. */
static size_t rec_outs_bytes(int n) {
  return (size_t)n * (sizeof(mxc__ndarray *) + sizeof(mxc__ag_node *) +
                      sizeof(mxc__req) + sizeof(int));
}

static void rec_outs_carve(char *m, int n, rec_outs *o) {
  o->outs = (mxc__ndarray **)m;
  o->old = (mxc__ag_node **)(o->outs + n);
  o->reqs = (mxc__req *)(o->old + n);
  o->created = (int *)(o->reqs + n);
}

static void commit_record(mxc__ag_node *rec, mxc__ndarray **outs, int n_total,
                          int n_out, const int *created, mxc__ag_node **old) {
  rec->is_train = mxc__is_training();
  for (int j = 0; j < n_total; ++j) mxc__ag_save(&rec->vals[j], outs[j]);
  ensure_hook();
  /* Given outputs had no history when checked; a link another thread set
   * since (a racing mark) is replaced and released. */
  mxc__ag_lock();
  for (int j = 0; j < n_out; ++j) {
    mxc__ag_link *l = mxc__ag_link_of(outs[j]);
    old[j] = l ? l->owner : NULL;
    mxc__ag_node_ref(rec);
    outs[j]->ag = &rec->links[j];
  }
  mxc__ag_unlock();
  for (int j = 0; j < n_out; ++j) mxc__ag_node_unref(old[j]);
  for (int j = n_out; j < n_total; ++j) {
    if (created[j]) mxc__ndarray_free(outs[j]);
  }
  mxc__ag_node_unref(rec); /* the links and consumers hold it now */
}

/* Invokes op for the record rec (built when rc is MXC_OK) with every
 * output, hidden ones included, so that the record can keep them. */
static int invoke_recorded(mxc__ag_node *rec, int rc, const mxc__op *op,
                           const void *param, mxc__ndarray *const *in,
                           int n_in, mxc__ndarray **out, int n_out,
                           const mxc__req *req, int n_total) {
  _Alignas(16) char small[512]; /* 16 outputs; wider calls use the heap */
  char *m = NULL;
  if (rc == MXC_OK) {
    m = mxc__scratch(small, sizeof small, rec_outs_bytes(n_total), 1);
    if (!m) {
      rc = mxc__error_set(MXC_ERR_OOM,
                          "autograd: out of memory recording operator '%s' "
                          "with %d outputs",
                          op->name, n_total);
    }
  }
  if (rc != MXC_OK) {
    mxc__ag_node_unref(rec);
    return rc;
  }
  rec_outs o;
  rec_outs_carve(m, n_total, &o);
  for (int j = 0; j < n_total; ++j) {
    o.outs[j] = j < n_out ? out[j] : NULL;
    o.created[j] = o.outs[j] == NULL;
    o.reqs[j] = req && j < n_out ? req[j] : MXC__REQ_WRITE;
  }
  rc = mxc__op_invoke(op, param, in, n_in, o.outs, n_total, o.reqs);
  if (rc == MXC_OK) {
    commit_record(rec, o.outs, n_total, n_out, o.created, o.old);
    for (int j = 0; j < n_out; ++j) out[j] = o.outs[j];
  } else {
    mxc__ag_node_unref(rec);
  }
  mxc__scratch_free(m, small);
  return rc;
}

int mxc__autograd_invoke(const mxc__op *op, const void *param,
                         const char *const *keys, const char *const *vals,
                         int n_params, mxc__ndarray *const *in, int n_in,
                         mxc__ndarray **out, int n_out, const mxc__req *req) {
  int n_total = mxc__op_num_outputs(op, param);
  int n_vis = mxc__op_num_visible_outputs(op, param);
  if (!tls_recording || !op->gradient || n_total < 0 ||
      n_total > MXC__OP_MAX_ARITY || n_in < 0 ||
      (n_out != n_total && n_out != n_vis)) {
    /* Nothing to record, or an arity error mxc__op_invoke reports. */
    return mxc__op_invoke(op, param, in, n_in, out, n_out, req);
  }
  int idx_small[16];
  int *idx = n_in <= 16 ? idx_small : mxc__malloc(sizeof *idx * (size_t)n_in);
  MXC_RETURN_ERROR_IF(!idx, MXC_ERR_OOM,
                      "autograd: out of memory recording operator '%s'",
                      op->name);
  mxc__ag_node *rec = NULL;
  mxc__ag_lock();
  int rc = begin_record(op, in, n_in, out, n_out, req, n_total, &rec, idx);
  mxc__ag_unlock();
  if (rc == MXC_OK && !rec) {
    if (idx != idx_small) mxc__free(idx);
    return mxc__op_invoke(op, param, in, n_in, out, n_out, req);
  }
  if (rc == MXC_OK) {
    rc = build_record(rec, op, param, keys, vals, n_params, in, n_in, idx);
  }
  if (idx != idx_small) mxc__free(idx);
  return invoke_recorded(rec, rc, op, param, in, n_in, out, n_out, req,
                         n_total);
}

int mxc__imperative_invoke(const mxc__op *op, const char *const *keys,
                           const char *const *vals, int n_params,
                           mxc__ndarray *const *in, int n_in,
                           mxc__ndarray **out, int n_out,
                           const mxc__req *req) {
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(
      mxc__op_parse_params(op, keys, vals, n_params, &param));
  /* One thread-local check when recording is off. */
  int rc = tls_recording ? mxc__autograd_invoke(op, param, keys, vals,
                                                n_params, in, n_in, out,
                                                n_out, req)
                         : mxc__op_invoke(op, param, in, n_in, out, n_out,
                                          req);
  mxc__free(param);
  return rc;
}

/* ---- marking variables ---- */

static int check_mark(int i, const mxc__ndarray *v, const mxc__ndarray *g,
                      int req) {
  char b1[160], b2[160];
  MXC_RETURN_ERROR_IF(
      req != MXC__REQ_NULL && req != MXC__REQ_WRITE && req != MXC__REQ_ADD,
      MXC_ERR_INVALID_ARGUMENT,
      "reqs[%d] is %d; expected MXC_REQ_NULL, MXC_REQ_WRITE "
      "or MXC_REQ_ADD",
      i, req);
  /* Variables may have any storage type (operators without a sparse
   * kernel run through dense temporaries); a gradient buffer is dense or
   * row_sparse (the gradient of an embedding weight, of a dot with a csr
   * input). */
  MXC_RETURN_ERROR_IF(g->stype == MXC_STYPE_CSR, MXC_ERR_STYPE,
                      "grads[%d] is a csr array; gradient buffers are dense "
                      "or row_sparse",
                      i);
  MXC_RETURN_ERROR_IF(!mxc__shape_equal(&v->shape, &g->shape), MXC_ERR_SHAPE,
                      "grads[%d] has shape %s; vars[%d] has shape %s (they "
                      "must match)",
                      i, mxc__shape_str(&g->shape, b1, sizeof b1), i,
                      mxc__shape_str(&v->shape, b2, sizeof b2));
  MXC_RETURN_ERROR_IF(v->dtype != g->dtype, MXC_ERR_DTYPE,
                      "grads[%d] is %s; vars[%d] is %s (they must match)", i,
                      mxc__dtype_name(g->dtype), i, mxc__dtype_name(v->dtype));
  return MXC_OK;
}

/* Under the lock: gives var a marked node (fresh, or its existing one
 * updated). *spare receives what the caller unrefs after unlocking. */
static void apply_mark(mxc__ndarray *var, const mxc__ndarray *grad, int req,
                       mxc__ag_node *fresh, mxc__ag_node **spare) {
  mxc__ag_link *l = mxc__ag_link_of(var);
  mxc__ag_node *target = fresh;
  if (l && l->owner->marked && !l->owner->node->op) {
    target = l->owner;
    *spare = fresh;
  } else {
    *spare = l ? l->owner : NULL;
    var->ag = &fresh->links[0]; /* the fresh node's reference moves here */
  }
  mxc__ag_unsave(&target->grad);
  mxc__ag_save(&target->grad, grad);
  target->req = req;
  target->marked = 1;
}

int mxc__autograd_mark(int n, mxc__ndarray *const *vars, const mxc__req *reqs,
                       mxc__ndarray *const *grads) {
  for (int i = 0; i < n; ++i) {
    MXC_FORWARD_IF_ERROR(
        check_mark(i, vars[i], grads[i], reqs ? (int)reqs[i] : MXC__REQ_WRITE));
  }
  mxc__ag_node **fresh = mxc__calloc((size_t)(n > 0 ? n : 1), sizeof *fresh);
  MXC_RETURN_ERROR_IF(!fresh, MXC_ERR_OOM,
                      "autograd: out of memory marking variables");
  int rc = MXC_OK;
  for (int i = 0; i < n && rc == MXC_OK; ++i) {
    rc = var_node(vars[i], "var", &fresh[i]);
  }
  if (rc == MXC_OK) {
    ensure_hook();
    mxc__ag_lock();
    for (int i = 0; i < n; ++i) {
      mxc__ag_node *spare = NULL;
      apply_mark(vars[i], grads[i], reqs ? (int)reqs[i] : MXC__REQ_WRITE,
                 fresh[i], &spare);
      fresh[i] = spare;
    }
    mxc__ag_unlock();
  }
  for (int i = 0; i < n; ++i) mxc__ag_node_unref(fresh[i]);
  mxc__free(fresh);
  return rc;
}

int mxc__autograd_get_grad(const mxc__ndarray *a, mxc__ndarray **out) {
  mxc__ag_lock();
  mxc__ag_link *l = mxc__ag_link_of(a);
  int rc = MXC_OK;
  if (!l || !l->owner->marked) {
    rc = mxc__error_set(MXC_ERR_NOT_FOUND,
                        "the array is not a marked variable (mark it with "
                        "mxc_autograd_mark_variables first)");
  } else {
    rc = mxc__ndarray_clone_view(&l->owner->grad, out);
  }
  mxc__ag_unlock();
  return rc;
}

int mxc__autograd_detach(const mxc__ndarray *a, mxc__ndarray **out) {
  /* New views never carry history. */
  return mxc__ndarray_clone_view(a, out);
}
