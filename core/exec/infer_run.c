/* Executors rewritten by the inference passes (passes.h), at run time:
 *
 * Folded BatchNorm weights follow the bound arrays. Each fold remembers
 * the write versions (mxc__ndarray_version) of its source arrays
 * when it was last computed; an inference forward recomputes it, as one
 * engine operation reading the sources and writing the folded arrays,
 * whenever a version moved: after mxc_executor_load_params, a copy into
 * an argument array, an optimizer update of a shared weight. A forward
 * with nothing changed costs one atomic load per source. The user's
 * arrays are only read.
 *
 * A training forward (is_train != 0) must see the graph as written
 * (Dropout active, BatchNorm on batch statistics and updating its moving
 * ones), so it runs on a twin: the same symbol bound without the passes
 * to the same arrays, made on first use, writing into the same output
 * arrays, so handles the caller holds on outputs stay valid. */
#include <math.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/exec/executor.h"
#include "core/op/common.h"

/* ---- folds ---- */

/* The bound array of forward-graph variable node v (an argument or an
 * auxiliary state). */
static const mxc__ndarray *bound_of(const mxc__executor *ex,
                                    const mxc__graph *gf, int v) {
  for (int i = 0; i < gf->n_args; ++i) {
    if (gf->args[i] == v) return ex->bound[i];
  }
  for (int i = 0; i < gf->n_aux; ++i) {
    if (gf->aux[i] == v) return ex->bound[gf->n_args + i];
  }
  return NULL;
}

static int fold_bind(const mxc__executor *ex, const mxc__graph *gf,
                     mxc__bn_fold *f, const char *fn) {
  for (int r = 0; r < MXC__FOLD_N_SRC; ++r) {
    f->in[r] = f->src[r] < 0 ? NULL : bound_of(ex, gf, f->src[r]);
    MXC_RETURN_ERROR_IF(f->src[r] >= 0 && !f->in[r], MXC_ERR_INTERNAL,
                        "%s: a folded BatchNorm reads a variable that is not "
                        "bound",
                        fn);
  }
  const mxc__ndarray *w = f->in[MXC__FOLD_WEIGHT];
  const mxc__ndarray *gamma = f->in[MXC__FOLD_GAMMA];
  MXC_FORWARD_IF_ERROR(
      mxc__ndarray_create(&w->shape, w->dtype, ex->dev, 1, &f->out_w));
  return mxc__ndarray_create(&gamma->shape, w->dtype, ex->dev, 1, &f->out_b);
}

int mxc__exec_folds_bind(mxc__executor *ex, const mxc__graph *gf,
                         const char *fn) {
  for (int i = 0; i < ex->passes.n_folds; ++i) {
    MXC_FORWARD_IF_ERROR(fold_bind(ex, gf, &ex->passes.folds[i], fn));
  }
  return MXC_OK;
}

int mxc__exec_fold_entry(const mxc__executor *ex, int i, int bias) {
  const mxc__bn_fold *f = &ex->passes.folds[i];
  mxc__entry e = {bias ? f->bias : f->weight, 0};
  return mxc__graph_entry_id(ex->g, e);
}

/* What one fold computation reads and writes (pointers taken at push
 * time: storage never moves while the arrays live, and the operation
 * holds views of them). */
typedef struct fold_op {
  mxc__ndarray *views[MXC__FOLD_N_SRC + 2]; /* sources, then out_w, out_b */
  int64_t channels, per_channel;
  int dtype, fix_gamma;
  double eps;
} fold_op;

static const void *view_ptr(const fold_op *op, int r) {
  return op->views[r] ? mxc__ndarray_ptr(op->views[r]) : NULL;
}

static int fold_fn(void *arg, mxc__exec *exn) {
  (void)exn;
  const fold_op *op = arg;
  const void *w = view_ptr(op, MXC__FOLD_WEIGHT), *b = view_ptr(op, 1);
  const void *gam = view_ptr(op, 2), *bet = view_ptr(op, 3);
  const void *mean = view_ptr(op, 4), *var = view_ptr(op, 5);
  void *ow = mxc__ndarray_ptr(op->views[MXC__FOLD_N_SRC]);
  void *ob = mxc__ndarray_ptr(op->views[MXC__FOLD_N_SRC + 1]);
  int64_t K = op->per_channel;
  MXC__FLOAT_TYPED(op->dtype, {
    const T *tw = w, *tb = b, *tg = gam, *tbe = bet, *tm = mean, *tv = var;
    T *tow = ow, *tob = ob;
    for (int64_t c = 0; c < op->channels; ++c) {
      double g = op->fix_gamma ? 1.0 : (double)tg[c];
      double sc = g / sqrt((double)tv[c] + op->eps);
      for (int64_t k = 0; k < K; ++k) {
        tow[c * K + k] = (T)((double)tw[c * K + k] * sc);
      }
      double bias = tb ? (double)tb[c] : 0.0;
      tob[c] = (T)((bias - (double)tm[c]) * sc + (double)tbe[c]);
    }
  });
  return MXC_OK;
}

static void fold_op_free(void *arg) {
  fold_op *op = arg;
  for (int r = 0; r < MXC__FOLD_N_SRC + 2; ++r) mxc__ndarray_free(op->views[r]);
  mxc__free(op);
}

/* Views, variables and sizes of fold f's computation. */
static int fold_op_make(const mxc__bn_fold *f, fold_op *op, mxc__var **reads,
                        int *n_reads, mxc__var **writes) {
  const mxc__ndarray *all[MXC__FOLD_N_SRC + 2];
  memcpy(all, f->in, sizeof f->in);
  all[MXC__FOLD_N_SRC] = f->out_w;
  all[MXC__FOLD_N_SRC + 1] = f->out_b;
  *n_reads = 0;
  for (int r = 0; r < MXC__FOLD_N_SRC + 2; ++r) {
    if (!all[r]) continue;
    MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(all[r]));
    MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(all[r], &op->views[r]));
    if (r < MXC__FOLD_N_SRC) reads[(*n_reads)++] = mxc__ndarray_var(all[r]);
  }
  writes[0] = mxc__ndarray_var(f->out_w);
  writes[1] = mxc__ndarray_var(f->out_b);
  const mxc__ndarray *w = f->in[MXC__FOLD_WEIGHT];
  op->channels = w->shape.dims[0];
  op->per_channel =
      op->channels ? mxc__shape_size(&w->shape) / op->channels : 0;
  op->dtype = w->dtype;
  op->fix_gamma = f->fix_gamma;
  op->eps = f->eps;
  return MXC_OK;
}

static int fold_push(const mxc__executor *ex, const mxc__bn_fold *f) {
  fold_op *op = mxc__calloc(1, sizeof *op);
  MXC_RETURN_ERROR_IF(!op, MXC_ERR_OOM,
                      "mxc_executor_forward: out of memory folding a "
                      "BatchNorm");
  mxc__var *reads[MXC__FOLD_N_SRC], *writes[2];
  int n_reads = 0;
  int rc = fold_op_make(f, op, reads, &n_reads, writes);
  if (rc == MXC_OK) {
    mxc__push_args a;
    memset(&a, 0, sizeof a);
    a.sync_fn = fold_fn;
    a.arg = op;
    a.free_fn = fold_op_free;
    a.reads = reads;
    a.n_reads = n_reads;
    a.writes = writes;
    a.n_writes = 2;
    a.name = "bn_fold";
    a.dev = ex->dev;
    rc = mxc__engine_push(mxc__ndarray_engine(f->out_w), &a);
  }
  if (rc != MXC_OK) fold_op_free(op);
  return rc;
}

/* Recomputes fold f when a source was written since it last ran. The
 * versions are read before the push: a write pushed later moves them
 * again and is seen by the next forward. */
static int fold_update(const mxc__executor *ex, mxc__bn_fold *f) {
  uint64_t now[MXC__FOLD_N_SRC];
  int stale = !f->done;
  for (int r = 0; r < MXC__FOLD_N_SRC; ++r) {
    now[r] = f->in[r] ? mxc__ndarray_version(f->in[r]) : 0;
    /* 0: memory written behind the engine's back (DLPack): always stale. */
    stale |= now[r] != f->seen[r] || (f->in[r] && now[r] == 0);
  }
  if (!stale) return MXC_OK;
  MXC_FORWARD_IF_ERROR(fold_push(ex, f));
  memcpy(f->seen, now, sizeof now);
  f->done = 1;
  return MXC_OK;
}

int mxc__exec_folds_update(mxc__executor *ex) {
  for (int i = 0; i < ex->passes.n_folds; ++i) {
    MXC_FORWARD_IF_ERROR(fold_update(ex, &ex->passes.folds[i]));
  }
  return MXC_OK;
}

/* ---- the training twin ---- */

/* The twin writes into ex's output arrays (operator outputs only: an
 * output that is a variable is that variable's bound array in both). */
static int share_outputs(const mxc__executor *ex, mxc__executor *t) {
  for (int j = 0; j < ex->n_outputs; ++j) {
    int eo = ex->g->heads[j], et = t->g->heads[j];
    if (!ex->g->nodes[mxc__graph_entry_node(ex->g, eo)]->op ||
        !t->g->nodes[mxc__graph_entry_node(t->g, et)]->op) {
      continue;
    }
    mxc__ndarray *v = NULL;
    MXC_FORWARD_IF_ERROR(mxc__ndarray_clone_view(ex->vals[eo], &v));
    mxc__ndarray_free(t->vals[et]);
    t->vals[et] = v;
  }
  return MXC_OK;
}

int mxc__exec_twin(mxc__executor *ex, mxc__executor **out) {
  if (!ex->twin) {
    mxc__executor *t = NULL;
    int rc = mxc__executor_bind(ex->sym, ex->dev, ex->bound, ex->n_args, NULL,
                                NULL, ex->bound + ex->n_args, ex->n_aux,
                                ex->flags | MXC_BIND_NO_INFER_PASSES,
                                "mxc_executor_forward", &t);
    if (rc == MXC_OK) rc = share_outputs(ex, t);
    if (rc != MXC_OK) {
      mxc__executor_free(t);
      return rc;
    }
    ex->twin = t;
  }
  ex->twin->monitor = ex->monitor;
  ex->twin->monitor_data = ex->monitor_data;
  *out = ex->twin;
  return MXC_OK;
}
