/* Running an executor: forward, backward and the monitor.
 *
 * Each operator node becomes one mxc__op_invoke call with every output
 * (hidden ones included) given and its planned write mode, so the engine
 * sees exactly the node's reads and writes and runs independent nodes in
 * parallel. Calls return once the work is pushed; failures inside it
 * poison the written arrays and surface at the next wait. */
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/callback.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/handle.h"
#include "core/exec/executor.h"
#include "core/op/arity.h"
#include "core/op/common.h"
#include "core/op/format.h"
#include "core/op/backend.h"
#include "core/op/invoke.h"
#include "core/profiler/profiler.h"
#include "core/resource/training.h"

const char *mxc__executor_entry_name(const mxc__executor *ex, int entry,
                                     char *buf, size_t len) {
  const mxc__graph *g = ex->g;
  int nid = mxc__graph_entry_node(g, entry);
  int j = entry - g->entry_ptr[nid];
  const mxc__node *n = g->nodes[nid];
  if (!n->op) {
    snprintf(buf, len, "%s", n->name);
    return buf;
  }
  const char *base = n->name[0] ? n->name : n->op->name;
  /* Gradient nodes carry their forward node's name. */
  const char *role =
      strncmp(n->op->name, "_backward_", 10) == 0 ? "_backward" : "";
  int n_out = g->entry_ptr[nid + 1] - g->entry_ptr[nid];
  /* Output name lists are NULL-terminated and may be shorter than the
   * output count of every parameter setting. */
  const char *out_name = NULL;
  for (int k = 0; n->op->output_names && k <= j; ++k) {
    out_name = n->op->output_names[k];
    if (!out_name) break;
  }
  if (out_name) {
    snprintf(buf, len, "%s%s_%s", base, role, out_name);
  } else if (n_out == 1) {
    snprintf(buf, len, "%s%s_output", base, role);
  } else {
    snprintf(buf, len, "%s%s_output%d", base, role, j);
  }
  return buf;
}

/* ---- filling arrays (zero gradients, ones as head gradients) ---- */

typedef struct fill_args {
  mxc__blob blob;
  double value;
} fill_args;

static int fill_fn(void *arg, mxc__exec *ex) {
  (void)ex;
  const fill_args *f = arg;
  int64_t n = mxc__shape_size(&f->blob.shape);
  if (n == 0) return MXC_OK;
  if (f->value == 0) {
    memset(f->blob.ptr, 0, (size_t)n * mxc__dtype_size(f->blob.dtype));
  } else if (f->blob.dtype == MXC_DTYPE_FLOAT32) {
    float *p = f->blob.ptr;
    for (int64_t i = 0; i < n; ++i) p[i] = (float)f->value;
  } else {
    for (int64_t i = 0; i < n; ++i) mxc__blob_set(&f->blob, i, f->value);
  }
  return MXC_OK;
}

/* A GPU array is filled by a copy from a filled host array: host code
 * pushed over device memory is refused (mxc__ndarray_push), copies are
 * not. The host array is freed at once; the pending copy keeps its
 * storage alive. */
static int fill_on_gpu(const mxc__ndarray *a, double value, const char *name) {
  mxc__ndarray *h = NULL;
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&a->shape, a->dtype, cpu, 0, &h));
  int rc = mxc__exec_fill(h, value, name);
  if (rc == MXC_OK) rc = mxc__ndarray_copy(h, a);
  mxc__ndarray_free(h);
  return rc;
}

int mxc__exec_fill(const mxc__ndarray *a, double value, const char *name) {
  if (a->chunk->dev.type == MXC_DEVICE_GPU && a->fmt == MXC__FMT_PLAIN &&
      a->stype == MXC_STYPE_DEFAULT) {
    return fill_on_gpu(a, value, name);
  }
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(a));
  fill_args *f = mxc__malloc(sizeof *f);
  MXC_RETURN_ERROR_IF(!f, MXC_ERR_OOM, "%s: out of memory", name);
  f->blob.ptr = mxc__ndarray_ptr(a);
  f->blob.shape = a->shape;
  f->blob.dtype = a->dtype;
  f->blob.dev = a->chunk->dev;
  f->blob.fmt = a->fmt;
  f->value = value;
  int rc = mxc__ndarray_push(fill_fn, f, mxc__free, NULL, a, 0, name);
  if (rc != MXC_OK) mxc__free(f);
  return rc;
}

/* ---- nodes ---- */

static void free_view(void *view) { mxc__ndarray_free(view); }

/* What the monitor is shown of value a (computed, waited for): a view of
 * it, or a plain copy when it is channels-last (core/exec/format.c). */
static int monitor_view(const mxc__ndarray *a, mxc__ndarray **out) {
  if (a->fmt == MXC__FMT_PLAIN) return mxc__ndarray_clone_view(a, out);
  MXC_FORWARD_IF_ERROR(
      mxc__ndarray_create(&a->shape, a->dtype, a->chunk->dev, 0, out));
  mxc__blob b = {mxc__ndarray_ptr(a), a->shape, a->dtype, a->chunk->dev,
                 a->fmt};
  /* Nobody else holds the new array yet: writing it here is safe. */
  mxc__fmt_to_plain(&b, mxc__ndarray_ptr(*out));
  return MXC_OK;
}

/* Calls the monitor for each output of node nid once it is computed. */
static int monitor_node(const mxc__executor *ex, int nid) {
  const mxc__graph *g = ex->g;
  for (int e = g->entry_ptr[nid]; e < g->entry_ptr[nid + 1]; ++e) {
    if (ex->reqs[e] == MXC__REQ_NULL) continue; /* not computed */
    MXC_FORWARD_IF_ERROR(mxc__ndarray_wait(ex->vals[e], 0));
    mxc__ndarray *view = NULL;
    MXC_FORWARD_IF_ERROR(monitor_view(ex->vals[e], &view));
    uintptr_t h;
    int rc = mxc__handle_new(MXC__HANDLE_NDARRAY, view, &h);
    if (rc != MXC_OK) {
      mxc__ndarray_free(view);
      return rc;
    }
    char name[256];
    mxc__cb_frame f;
    mxc__cb_enter(&f, MXC__CB_MONITOR, ex);
    ex->monitor(ex->monitor_data,
                mxc__executor_entry_name(ex, e, name, sizeof name),
                (mxc_ndarray)h);
    mxc__cb_leave(&f);
    /* The handle was lent for the call only; the callback may have freed
     * it already (a caller error), in which case this reports it. Another
     * thread the callback gave it to may still be using it: retired. */
    (void)mxc__handle_free(h, MXC__HANDLE_NDARRAY, "monitor array",
                           free_view);
  }
  return MXC_OK;
}

/* Invokes node n's operator with the node's name known to the profiler,
 * which records its run as an executor node instead of an imperative
 * operator call. */
static int invoke_node_profiled(const mxc__node *n, mxc__ndarray **ins,
                                mxc__ndarray **outs, int n_out,
                                const mxc__req *req) {
  mxc__prof_set_node(n->name[0] ? n->name : n->op->name);
  int rc = mxc__op_invoke(n->op, n->param, ins, n->n_inputs, outs, n_out, req);
  mxc__prof_set_node(NULL);
  return rc;
}

static int push_node(const mxc__executor *ex, int nid, const char *fn) {
  const mxc__graph *g = ex->g;
  const mxc__node *n = g->nodes[nid];
  int n_out = g->entry_ptr[nid + 1] - g->entry_ptr[nid];
  /* 16 inputs and outputs on the stack; wider nodes (a Concat of many
   * steps) take a heap block. */
  _Alignas(16) char small[16 * (2 * sizeof(void *) + sizeof(mxc__req))];
  size_t n_arr = (size_t)n->n_inputs + (size_t)n_out;
  char *m = mxc__scratch(small, sizeof small, 1,
                         n_arr * sizeof(void *) + (size_t)n_out *
                                                      sizeof(mxc__req));
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM,
                      "%s: node '%s': out of memory for %d inputs and %d "
                      "outputs",
                      fn, n->name, n->n_inputs, n_out);
  mxc__ndarray **ins = (mxc__ndarray **)m, **outs = ins + n->n_inputs;
  mxc__req *req = (mxc__req *)(outs + n_out);
  for (int k = 0; k < n->n_inputs; ++k) {
    ins[k] = ex->vals[g->in_entries[g->in_ptr[nid] + k]];
  }
  for (int j = 0; j < n_out; ++j) {
    outs[j] = ex->vals[g->entry_ptr[nid] + j];
    req[j] = ex->reqs[g->entry_ptr[nid] + j];
  }
  int rc = mxc__prof_on(MXC__PROF_EXECUTOR)
               ? invoke_node_profiled(n, ins, outs, n_out, req)
               : mxc__op_invoke(n->op, n->param, ins, n->n_inputs, outs,
                                n_out, req);
  mxc__scratch_free(m, small);
  if (rc != MXC_OK) {
    char pre[320];
    snprintf(pre, sizeof pre, "%s: node '%s'", fn, n->name);
    mxc__error_prefix(pre);
  }
  return rc;
}

/* Pushes order[from, to) in training mode is_train, monitoring if set. */
static int push_range(const mxc__executor *ex, int from, int to, int is_train,
                      const char *fn) {
  int prev = mxc__set_training(is_train);
  /* Kernels are picked at push time on this thread (core/op/backend.h). */
  int was_ref = mxc__op_set_reference_only(
      mxc__op_reference_only() || (ex->flags & MXC_BIND_NO_ONEDNN));
  int rc = MXC_OK;
  for (int i = from; rc == MXC_OK && i < to; ++i) {
    rc = push_node(ex, ex->order[i], fn);
    if (rc == MXC_OK && ex->monitor) rc = monitor_node(ex, ex->order[i]);
  }
  mxc__op_set_reference_only(was_ref);
  mxc__set_training(prev);
  return rc;
}

/* The twin (core/exec/infer_run.c) runs an executor's training passes:
 * a monitor callback running there must be refused the outer executor
 * too. */
int mxc__executor_check_not_monitoring(const mxc__executor *ex,
                                       const char *fn) {
  static const char why[] =
      "the executor is running (forward or backward) and cannot be run, "
      "freed or have its monitor changed until the callback returns; "
      "reading its arrays is fine";
  MXC_FORWARD_IF_ERROR(mxc__cb_refuse(MXC__CB_MONITOR, ex, fn, why));
  return ex->twin ? mxc__cb_refuse(MXC__CB_MONITOR, ex->twin, fn, why)
                  : MXC_OK;
}

/* A training forward of an executor the inference passes rewrote runs on
 * its unoptimised twin (core/exec/infer_run.c). */
static int forward_twin(mxc__executor *ex) {
  mxc__executor *t = NULL;
  MXC_FORWARD_IF_ERROR(mxc__exec_twin(ex, &t));
  MXC_FORWARD_IF_ERROR(mxc__executor_forward(t, 1));
  ex->fwd_twin = 1;
  ex->fwd_train = 1;
  return MXC_OK;
}

int mxc__executor_forward(mxc__executor *ex, int is_train) {
  MXC_FORWARD_IF_ERROR(
      mxc__executor_check_not_monitoring(ex, "mxc_executor_forward"));
  ex->fwd_train = 0;
  ex->fwd_twin = 0;
  if (is_train && mxc__infer_passes_changed(&ex->passes)) {
    return forward_twin(ex);
  }
  MXC_FORWARD_IF_ERROR(mxc__exec_folds_update(ex));
  MXC_FORWARD_IF_ERROR(
      push_range(ex, 0, ex->n_fwd, is_train != 0, "mxc_executor_forward"));
  ex->fwd_train = is_train != 0;
  return MXC_OK;
}

/* ---- backward ---- */

static int check_head_grads(const mxc__executor *ex, int n,
                            mxc__ndarray *const *hg, const char *fn) {
  MXC_RETURN_ERROR_IF(!ex->fwd_train, MXC_ERR_INVALID_ARGUMENT,
                      "%s: no training forward to differentiate; call "
                      "mxc_executor_forward with is_train != 0 first",
                      fn);
  MXC_RETURN_ERROR_IF(n != 0 && n != ex->n_outputs, MXC_ERR_INVALID_ARGUMENT,
                      "%s: got %d head gradients; expected 0 (ones) or %d "
                      "(one per output)",
                      fn, n, ex->n_outputs);
  MXC_RETURN_ERROR_IF(n > 0 && !hg, MXC_ERR_INVALID_ARGUMENT,
                      "%s: head_grads is NULL but n is %d", fn, n);
  char b1[160], b2[160];
  for (int j = 0; j < n; ++j) {
    const mxc__ndarray *out = ex->vals[ex->g->heads[j]];
    MXC_RETURN_ERROR_IF(!hg[j], MXC_ERR_INVALID_ARGUMENT,
                        "%s: head_grads[%d] is NULL", fn, j);
    MXC_RETURN_ERROR_IF(hg[j]->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                        "%s: head_grads[%d] is sparse; head gradients are "
                        "dense arrays",
                        fn, j);
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(&hg[j]->shape, &out->shape),
                        MXC_ERR_SHAPE,
                        "%s: head_grads[%d] has shape %s; output %d has "
                        "shape %s",
                        fn, j, mxc__shape_str(&hg[j]->shape, b1, sizeof b1), j,
                        mxc__shape_str(&out->shape, b2, sizeof b2));
    MXC_RETURN_ERROR_IF(hg[j]->dtype != out->dtype, MXC_ERR_DTYPE,
                        "%s: head_grads[%d] is %s; output %d is %s", fn, j,
                        mxc__dtype_name(hg[j]->dtype), j,
                        mxc__dtype_name(out->dtype));
  }
  return MXC_OK;
}

/* Gradients that were not written in place by their producer: copied or
 * added from their entry (cast when a storage type differs), or zeros
 * (MXC_REQ_WRITE) when none reached. */
static int deliver_grads(const mxc__executor *ex, const char *fn) {
  const mxc__op *copy = NULL;
  for (int i = 0; i < ex->n_args; ++i) {
    int req = ex->grad_req[i];
    if (req == MXC_REQ_NULL || ex->grad_direct[i]) continue;
    int e = ex->grad_entry[i];
    if (e < 0) {
      if (req == MXC_REQ_WRITE) {
        MXC_FORWARD_IF_ERROR(mxc__exec_zero(ex->grads[i], "zero_grad"));
      }
      continue;
    }
    mxc__ndarray *src = ex->vals[e], *dst = ex->grads[i];
    mxc__req r = (mxc__req)req;
    int rc;
    if (src->stype != MXC_STYPE_DEFAULT || dst->stype != MXC_STYPE_DEFAULT) {
      rc = mxc__exec_deliver_sparse(src, dst, r);
    } else {
      if (!copy) MXC_FORWARD_IF_ERROR(mxc__op_lookup("_copy", &copy));
      rc = mxc__op_invoke(copy, NULL, &src, 1, &dst, 1, &r);
    }
    if (rc != MXC_OK) {
      char pre[320];
      snprintf(pre, sizeof pre, "%s: gradient of '%s'", fn, ex->arg_names[i]);
      mxc__error_prefix(pre);
      return rc;
    }
  }
  return MXC_OK;
}

int mxc__executor_backward(mxc__executor *ex, int n,
                           mxc__ndarray *const *head_grads) {
  const char *fn = "mxc_executor_backward";
  MXC_FORWARD_IF_ERROR(mxc__executor_check_not_monitoring(ex, fn));
  MXC_FORWARD_IF_ERROR(check_head_grads(ex, n, head_grads, fn));
  if (ex->fwd_twin) return mxc__executor_backward(ex->twin, n, head_grads);
  for (int j = 0; j < ex->n_outputs; ++j) {
    int e = ex->hgrad_entry[j];
    if (e < 0) continue;
    if (n > 0) {
      MXC_FORWARD_IF_ERROR(mxc__ndarray_copy(head_grads[j], ex->vals[e]));
    } else {
      MXC_FORWARD_IF_ERROR(mxc__exec_fill(ex->vals[e], 1, "head_grad_ones"));
    }
  }
  MXC_FORWARD_IF_ERROR(push_range(ex, ex->n_fwd, ex->n_fwd + ex->n_bwd, 1, fn));
  return deliver_grads(ex, fn);
}

int mxc__executor_set_monitor(mxc__executor *ex, mxc_monitor_fn fn,
                              void *user_data) {
  MXC_FORWARD_IF_ERROR(
      mxc__executor_check_not_monitoring(ex, "mxc_executor_set_monitor"));
  ex->monitor = fn;
  ex->monitor_data = fn ? user_data : NULL;
  if (ex->twin) {
    ex->twin->monitor = ex->monitor;
    ex->twin->monitor_data = ex->monitor_data;
  }
  return MXC_OK;
}
