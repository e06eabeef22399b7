#include "core/op/invoke.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/log.h"
#include "core/op/alias.h"
#include "core/op/arity.h"
#include "core/op/backend.h"
#include "core/op/fallback.h"
#include "core/op/fusion.h"
#include "core/profiler/profiler.h"
#include "core/resource/temp_pool.h"
#include "core/resource/training.h"

int mxc__opctx_temp(const mxc__opctx *ctx, size_t nbytes, void **out) {
  MXC_RETURN_ERROR_IF(!ctx->temp, MXC_ERR_INTERNAL,
                      "operator asked for temp space it did not declare");
  return mxc__temp_space_request(ctx->temp, nbytes, out);
}

/* ---- the pushed record ---- */

typedef struct invoke_rec {
  const mxc__op *op;
  void *param;
  int n_in, n_out;
  mxc__blob *in, *out;
  mxc__req *req;
  /* Sparse dispatch: copies of the input then output view structs (the
   * engine keeps their chunks alive while this record is pending); NULL
   * for dense dispatch. */
  mxc__ndarray *arrs;
  /* Dense dispatch: the kernel a backend attached, or NULL for the
   * descriptor's own compute. */
  const mxc__kernel *kernel;
  /* Dense dispatch with no element in any array: nothing to compute.
   * Skipping matters beyond speed: a zero-size array may have huge other
   * extents ((2^60, 0)), and a kernel looping over them would run for
   * ages without touching an element. */
  int empty;
  mxc__opctx ctx;
  uint64_t *versions; /* ctx.in_versions: n_in entries */
  /* Profiling (prof_tag): the category to record the run under (0: not
   * recorded) and the executor node's name (owned), if any. */
  unsigned char prof_cat;
  char *prof_node;
} invoke_rec;

static int run_rec_now(invoke_rec *r, mxc__exec *ex) {
  int rc;
  if (r->arrs && r->kernel) {
    /* A device backend's sparse kernel (a GPU's: sparse arrays there). */
    const mxc__kernel *k = r->kernel;
    rc = k->backend->ctx_prepare ? k->backend->ctx_prepare(&r->ctx) : MXC_OK;
    if (rc == MXC_OK) {
      rc = k->compute_sparse(r->op, &r->ctx, r->param, r->arrs, r->n_in,
                             r->arrs + r->n_in, r->n_out, r->req);
    }
  } else if (r->arrs) {
    rc = mxc__op_compute_sparse(r->op)(r->op, &r->ctx, r->param, r->arrs,
                                       r->n_in, r->arrs + r->n_in, r->n_out,
                                       r->req);
  } else if (r->empty) {
    rc = MXC_OK;
  } else {
    const mxc__kernel *k = r->kernel;
    mxc__compute_fn compute = k ? k->compute : r->op->compute;
    rc = k && k->backend->ctx_prepare ? k->backend->ctx_prepare(&r->ctx)
                                      : MXC_OK;
    if (rc == MXC_OK) {
      rc = compute(r->op, &r->ctx, r->param, r->in, r->n_in, r->out,
                   r->n_out, r->req);
    }
  }
  if (rc != MXC_OK) mxc__exec_set_error(ex, mxc__error_msg());
  return rc;
}

/* "(2,3) (3) -> (2,3)": the shapes of a call's arrays, as room allows. */
static void shapes_str(const invoke_rec *r, char *buf, size_t len) {
  size_t pos = 0;
  buf[0] = '\0';
  for (int i = 0; i < r->n_in + r->n_out && pos + 1 < len; ++i) {
    const mxc__shape *sh = r->arrs ? &r->arrs[i].shape
                           : i < r->n_in ? &r->in[i].shape
                                         : &r->out[i - r->n_in].shape;
    const char *sep = i == 0 ? "" : i == r->n_in ? " -> " : " ";
    int n = snprintf(buf + pos, len - pos, "%s", sep);
    if (n < 0) return;
    pos += (size_t)n;
    if (pos + 1 < len) mxc__shape_str(sh, buf + pos, len - pos);
    pos += strlen(buf + pos);
  }
}

/* The run as a span of the running thread's track: the operator's name,
 * its node (executor runs) and its arrays' shapes. */
static int run_rec_profiled(invoke_rec *r, mxc__exec *ex) {
  int64_t t0 = mxc__prof_now();
  int rc = run_rec_now(r, ex);
  mxc__prof_event ev;
  mxc__prof_event_init(&ev, r->prof_cat, 'X', r->op->name, t0);
  ev.value = mxc__prof_now() - t0;
  if (r->prof_node) mxc__prof_detail_add(&ev, "node", r->prof_node);
  char shapes[MXC__PROF_DETAIL_MAX];
  shapes_str(r, shapes, sizeof shapes);
  mxc__prof_detail_add(&ev, "shapes", shapes);
  mxc__prof_record(&ev);
  return rc;
}

static int run_rec(void *arg, mxc__exec *ex) {
  invoke_rec *r = arg;
  if (MXC__UNLIKELY(r->prof_cat != 0)) return run_rec_profiled(r, ex);
  return run_rec_now(r, ex);
}

static void free_rec(void *arg) {
  invoke_rec *r = arg;
  if (MXC__UNLIKELY(r->prof_node != NULL)) mxc__free(r->prof_node);
  mxc__free(r);
}

/* Marks r to be recorded when it runs: as an executor node inside
 * mxc__exec's node runs, else as an imperative operator, if that category
 * is on. Without memory for the node's name the run is still recorded. */
static void prof_tag(invoke_rec *r) {
  const char *node = mxc__prof_node();
  unsigned cat = node ? MXC__PROF_EXECUTOR : MXC__PROF_OPERATOR;
  if (!mxc__prof_on(cat)) return;
  r->prof_cat = (unsigned char)cat;
  if (node) r->prof_node = mxc__strdup(node);
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

static int rec_new(const mxc__op *op, const void *param, int n_in, int n_out,
                   int sparse, invoke_rec **out) {
  size_t psz = align8(op->param_size);
  size_t asz = sparse ? sizeof(mxc__ndarray) * (size_t)(n_in + n_out) : 0;
  size_t vsz = align8(sizeof(uint64_t) * (size_t)n_in);
  size_t sz = align8(sizeof(invoke_rec)) + psz + vsz +
              sizeof(mxc__blob) * (size_t)(n_in + n_out) + asz +
              sizeof(mxc__req) * (size_t)n_out;
  char *m = mxc__malloc(sz);
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM, "operator '%s': out of memory",
                      op->name);
  invoke_rec *r = (invoke_rec *)m;
  memset(r, 0, sizeof *r);
  m += align8(sizeof(invoke_rec));
  r->param = m;
  if (op->param_size) memcpy(r->param, param, op->param_size);
  m += psz;
  r->versions = (uint64_t *)m;
  r->ctx.in_versions = r->versions;
  m += vsz;
  r->in = (mxc__blob *)m;
  r->out = r->in + n_in;
  r->arrs = sparse ? (mxc__ndarray *)(r->out + n_out) : NULL;
  r->req = (mxc__req *)((char *)(r->out + n_out) + asz);
  r->op = op;
  r->n_in = n_in;
  r->n_out = n_out;
  *out = r;
  return MXC_OK;
}

/* ---- validation and inference ---- */

static int check_counts(const mxc__op *op, const void *param, int n_in,
                        int n_out, int *n_total_out) {
  int want_in = mxc__op_num_inputs(op, param);
  int want_out = mxc__op_num_outputs(op, param);
  int visible = mxc__op_num_visible_outputs(op, param);
  MXC_RETURN_ERROR_IF(want_in < 0 || want_in > MXC__OP_MAX_ARITY ||
                          want_out < 0 || want_out > MXC__OP_MAX_ARITY,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': these parameters ask for %d inputs and "
                      "%d outputs; each count must be in 0..%d "
                      "(MXC__OP_MAX_ARITY)",
                      op->name, want_in, want_out, MXC__OP_MAX_ARITY);
  MXC_RETURN_ERROR_IF(n_in != want_in, MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': got %d inputs; expected %d", op->name,
                      n_in, want_in);
  MXC_RETURN_ERROR_IF(n_out != want_out && n_out != visible,
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': got %d outputs; expected %d", op->name,
                      n_out, visible);
  *n_total_out = want_out;
  return MXC_OK;
}

/* The arrays of one call, one entry per input or output (writes: one
 * per input and output, plus the temp space). */
typedef struct call_bufs {
  mxc__shape *ishape, *oshape;
  mxc__ndarray **given; /* the caller's output i, or NULL */
  mxc__ndarray **outs;  /* given or created */
  mxc__var **reads, **writes;
  int *itype, *otype, *ist, *ostype, *created;
  int n_reads, n_writes;
} call_bufs;

/* Lays the arrays of a call with n_in inputs and n_total outputs out in
 * the cap bytes at m, as far as they fit; returns the bytes they take
 * (the caller checks it against cap before using b). */
static size_t bufs_layout(char *m, size_t cap, int n_in, int n_total,
                          call_bufs *b) {
  size_t off = 0;
#define TAKE(field, n)                                      \
  do {                                                      \
    size_t sz_ = align8(sizeof *b->field * (size_t)(n));    \
    if (off + sz_ <= cap) b->field = (void *)(m + off);     \
    off += sz_;                                             \
  } while (0)
  TAKE(ishape, n_in);
  TAKE(oshape, n_total);
  TAKE(given, n_total);
  TAKE(outs, n_total);
  TAKE(reads, n_in);
  TAKE(writes, n_in + n_total + 1);
  TAKE(itype, n_in);
  TAKE(otype, n_total);
  TAKE(ist, n_in);
  TAKE(ostype, n_total);
  TAKE(created, n_total);
#undef TAKE
  return off;
}

/* Runs shape and type inference; all outputs must end up known. */
static int infer(const mxc__op *op, const void *param,
                 mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                 int n_out, mxc__shape *oshape, int *otype,
                 mxc__shape *ishape, int *itype) {
  for (int i = 0; i < n_in; ++i) {
    ishape[i] = in[i]->shape;
    itype[i] = in[i]->dtype;
  }
  for (int i = 0; i < n_out; ++i) {
    oshape[i].ndim = -1;
    otype[i] = -1;
    if (out[i]) {
      oshape[i] = out[i]->shape;
      otype[i] = out[i]->dtype;
    }
  }
  MXC_FORWARD_IF_ERROR(
      mxc__op_infer_shape(op, param, ishape, n_in, oshape, n_out));
  if (op->infer_type) {
    MXC_FORWARD_IF_ERROR(op->infer_type(op, param, itype, n_in, otype, n_out));
  } else {
    for (int i = 0; i < n_out; ++i) {
      if (otype[i] < 0 && n_in > 0) otype[i] = itype[0];
    }
    for (int i = 1; i < n_in; ++i) {
      MXC_RETURN_ERROR_IF(itype[i] != itype[0], MXC_ERR_DTYPE,
                          "operator '%s': input %d ('%s') is %s but input 0 "
                          "is %s; inputs must share a dtype",
                          op->name, i, mxc__op_input_name(op, param, i),
                          mxc__dtype_name(itype[i]), mxc__dtype_name(itype[0]));
    }
  }
  char b1[160], b2[160];
  for (int i = 0; i < n_out; ++i) {
    MXC_RETURN_ERROR_IF(oshape[i].ndim < 0 || otype[i] < 0, MXC_ERR_INTERNAL,
                        "operator '%s': could not infer output %d", op->name,
                        i);
    if (!out[i]) continue;
    MXC_RETURN_ERROR_IF(!mxc__shape_equal(&oshape[i], &out[i]->shape),
                        MXC_ERR_SHAPE,
                        "operator '%s': output %d has shape %s; expected %s",
                        op->name, i,
                        mxc__shape_str(&out[i]->shape, b1, sizeof b1),
                        mxc__shape_str(&oshape[i], b2, sizeof b2));
    MXC_RETURN_ERROR_IF(otype[i] != out[i]->dtype, MXC_ERR_DTYPE,
                        "operator '%s': output %d is %s; expected %s",
                        op->name, i, mxc__dtype_name(out[i]->dtype),
                        mxc__dtype_name(otype[i]));
  }
  return MXC_OK;
}

/* Sparse arrays have no dense data: their blob pointer is NULL (sparse
 * kernels use the arrays). */
static void blob_of(const mxc__ndarray *a, mxc__blob *b) {
  b->ptr = a->stype == MXC_STYPE_DEFAULT ? mxc__ndarray_ptr(a) : NULL;
  b->shape = a->shape;
  b->dtype = a->dtype;
  b->dev = a->chunk->dev;
  b->fmt = a->fmt;
}

/* Storage types of the outputs and the kernel to run (see op.h). given[i]
 * is the caller's output i or NULL; req as passed to mxc__op_invoke. */
static int infer_stypes(const mxc__op *op, const void *param,
                        mxc__ndarray *const *in, int n_in,
                        mxc__ndarray *const *given, int n_total,
                        const mxc__req *req, int n_out, int *ist,
                        int *ostype, int *dispatch) {
  *dispatch = MXC__DISPATCH_DENSE;
  if (!op->infer_stype) {
    /* Kernels attached by the sparse family serve sparse arrays only, so
     * an all-dense call skips the registry lookup and storage inference:
     * the hot path of small dense operators stays as it was. */
    int any = 0; /* MXC_STYPE_DEFAULT is 0 */
    for (int i = 0; i < n_in; ++i) any |= in[i]->stype;
    for (int i = 0; i < n_total; ++i) any |= given[i] ? given[i]->stype : 0;
    if (MXC__LIKELY(!any)) {
      for (int i = 0; i < n_total; ++i) ostype[i] = MXC_STYPE_DEFAULT;
      return MXC_OK;
    }
  }
  mxc__infer_stype_fn infer_st = mxc__op_infer_stype(op);
  if (!infer_st) {
    for (int i = 0; i < n_in; ++i) {
      MXC_RETURN_ERROR_IF(in[i]->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                          "operator '%s': input %d is sparse; this operator "
                          "takes dense arrays",
                          op->name, i);
    }
    for (int i = 0; i < n_total; ++i) {
      MXC_RETURN_ERROR_IF(given[i] && given[i]->stype != MXC_STYPE_DEFAULT,
                          MXC_ERR_STYPE,
                          "operator '%s': output %d is sparse; this "
                          "operator produces dense arrays",
                          op->name, i);
      ostype[i] = MXC_STYPE_DEFAULT;
    }
    return MXC_OK;
  }
  /* Runs on every call of an operator with its own storage functions,
   * dense ones included, and on sparse calls of the others: one pass each
   * way, and dense outputs skip the checks. */
  int any_sparse = 0; /* MXC_STYPE_DEFAULT is 0 */
  for (int i = 0; i < n_in; ++i) any_sparse |= ist[i] = in[i]->stype;
  for (int i = 0; i < n_total; ++i) ostype[i] = given[i] ? given[i]->stype : -1;
  MXC_FORWARD_IF_ERROR(
      infer_st(op, param, ist, n_in, ostype, n_total, dispatch));
  for (int i = 0; i < n_total; ++i) {
    int st = ostype[i];
    int gst = given[i] ? given[i]->stype : st;
    if (MXC__LIKELY(st == MXC_STYPE_DEFAULT && gst == st)) continue;
    MXC_RETURN_ERROR_IF(st < MXC_STYPE_DEFAULT || st > MXC_STYPE_CSR ||
                            gst != st,
                        MXC_ERR_STYPE,
                        "operator '%s': output %d has storage type %d; "
                        "expected %d",
                        op->name, i, given[i] ? given[i]->stype : -1, st);
    any_sparse = 1;
    int rq = req && i < n_out ? (int)req[i] : MXC__REQ_WRITE;
    MXC_RETURN_ERROR_IF(rq != MXC__REQ_WRITE && rq != MXC__REQ_NULL,
                        MXC_ERR_STYPE,
                        "operator '%s': output %d is sparse; its write mode "
                        "must be write or null (got %d)",
                        op->name, i, rq);
  }
  MXC_RETURN_ERROR_IF(*dispatch == MXC__DISPATCH_DENSE && any_sparse,
                      MXC_ERR_INTERNAL,
                      "operator '%s': storage inference chose the dense "
                      "kernel for sparse arrays",
                      op->name);
  return MXC_OK;
}

/* ---- invoke ---- */

static void plan_drop_created(call_bufs *p, int n_out) {
  for (int i = 0; i < n_out; ++i) {
    if (p->created[i]) mxc__ndarray_free(p->outs[i]);
  }
}

static int make_outputs(const mxc__op *op, mxc__ndarray **out, int n_out,
                        int n_total, const mxc__shape *oshape,
                        const int *otype, const int *ostype, mxc__device dev,
                        call_bufs *p) {
  for (int i = 0; i < n_total; ++i) {
    mxc__ndarray *given = i < n_out ? out[i] : NULL;
    if (given) {
      p->outs[i] = given;
      continue;
    }
    int rc = ostype[i] == MXC_STYPE_DEFAULT
                 ? mxc__ndarray_create(&oshape[i], otype[i], dev, 1,
                                       &p->outs[i])
                 : mxc__ndarray_create_sparse(ostype[i], &oshape[i],
                                              otype[i], MXC_DTYPE_INT64, dev,
                                              &p->outs[i]);
    if (rc != MXC_OK) return rc;
    p->created[i] = 1;
  }
  for (int i = 0; i < n_total; ++i) {
    MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(p->outs[i]));
  }
  (void)op;
  return MXC_OK;
}

/* Calls whose arrays hold at most this many elements in all run in the
 * calling thread when their arrays are free (run_here): their kernel takes
 * about as long as handing the work to an engine worker and waking it
 * (~1 us), so running them in place is several times faster (a tiny
 * elemwise_add: ~1.1 us -> ~0.4 us per call) and they stay ordered by the
 * engine like any other call. Bigger calls stay asynchronous, so that the
 * caller can go on pushing while they run. */
#define SMALL_CALL_ELEMS 4096

/* Elements of all the call's arrays, saturating at `cap`: each count fits
 * in int64 (the shape invariant) but a sum of several need not. */
static int64_t call_elems(mxc__ndarray *const *in, int n_in,
                          const mxc__shape *oshape, int n_total, int64_t cap) {
  int64_t n = 0;
  for (int i = 0; i < n_in + n_total && n < cap; ++i) {
    int64_t k = mxc__shape_size(i < n_in ? &in[i]->shape : &oshape[i - n_in]);
    n = k > cap - n ? cap : n + k;
  }
  return n;
}

/* What pick_kernel hands a kernel's supports beyond the types: the
 * inferred shapes and the write modes (n_total outputs; NULL: write). */
typedef struct call_shapes {
  const mxc__shape *ishape, *oshape;
  const mxc__req *req;
} call_shapes;

/* The dense kernel for a call on dev (core/op/backend.h). With only the
 * reference CPU kernels in the build, or while this thread asked for them
 * (mxc__op_set_reference_only), the descriptor's own: no lookup on the
 * hot path of small operators. On a GPU without a kernel for the call,
 * MXC_OK with *out NULL and, when a row declined the call by its
 * parameters or shapes, the reason in why: the caller runs the program of
 * a fused node unfused or falls back to the CPU. */
static int pick_kernel(const mxc__op *op, const void *param,
                       const int *itype, int n_in, const int *otype,
                       int n_total, mxc__device dev, const call_shapes *cs,
                       const mxc__kernel **out, char *why, size_t why_len) {
  if (MXC__LIKELY(dev.type == MXC_DEVICE_CPU &&
                  (!mxc__op_have_backend_kernels() ||
                   mxc__op_reference_only()))) {
    *out = NULL;
    return MXC_OK;
  }
  /* Dense dispatch: every array is dense (NULL storage types). Shapes and
   * write modes let a GPU row decline by more than the dtypes (the CPU's
   * backends decide by types: nothing more is gathered for them). */
  int gpu = dev.type == MXC_DEVICE_GPU;
  mxc__call_info info = {cs->ishape, cs->oshape, cs->req,       dev.id,
                         gpu ? mxc__is_training() : 0, why, why_len};
  mxc__call_types t = {itype, NULL, n_in,         otype,
                       NULL,  n_total, gpu ? &info : NULL};
  why[0] = '\0';
  *out = mxc__op_kernel(op, dev.type, param, &t);
  if (*out) return MXC_OK;
  /* On a GPU the caller runs the call through the CPU
   * (mxc__op_device_fallback) unless MXC_DEVICE_FALLBACK=0; a fused
   * node's program runs unfused there in any case. */
  if (gpu && (mxc__device_fallback_enabled() || mxc__op_has_unfused(op))) {
    return MXC_OK;
  }
  if (gpu && why[0]) {
    return mxc__error_set(MXC_ERR_UNSUPPORTED,
                          "operator '%s': the kernel of gpu(%d) declines the "
                          "call (%s), and the CPU fallback is off "
                          "(MXC_DEVICE_FALLBACK=0)",
                          op->name, dev.id, why);
  }
  return mxc__error_set(MXC_ERR_UNSUPPORTED,
                        "operator '%s': no kernel for %s(%d) and these input "
                        "dtypes%s",
                        op->name, gpu ? "gpu" : "cpu", dev.id,
                        gpu ? ", and the CPU fallback is off "
                              "(MXC_DEVICE_FALLBACK=0)"
                            : "");
}

/* The kernel for a call with sparse arrays on a device other than the
 * CPU, whose sparse kernels (the storage functions') read host memory: a
 * backend's kernel with compute_sparse that supports these storage types
 * and dtypes, or MXC_ERR_UNSUPPORTED naming them (nothing falls back: the
 * arrays are in device memory). */
/* "csr, default -> default": a call's storage types, as room allows. */
static void stypes_str(const int *ist, int n_in, const int *ostype,
                       int n_total, char *buf, size_t len) {
  size_t pos = 0;
  buf[0] = '\0';
  for (int i = 0; i < n_in + n_total && pos + 1 < len; ++i) {
    int s = i < n_in ? ist[i] : ostype[i - n_in];
    int n = snprintf(buf + pos, len - pos, "%s%s",
                     i == 0 ? "" : i == n_in ? " -> " : ", ",
                     mxc__stype_name(s));
    if (n < 0) return;
    pos += (size_t)n;
  }
}

static int pick_sparse_kernel(const mxc__op *op, const void *param,
                              const int *itype, const int *ist, int n_in,
                              const int *otype, const int *ostype,
                              int n_total, mxc__device dev,
                              const mxc__kernel **out) {
  mxc__call_types t = {itype, ist, n_in, otype, ostype, n_total, NULL};
  *out = mxc__op_kernel(op, dev.type, param, &t);
  if (*out && (*out)->compute_sparse) return MXC_OK;
  char st[160];
  stypes_str(ist, n_in, ostype, n_total, st, sizeof st);
  return mxc__error_set(MXC_ERR_UNSUPPORTED,
                        "operator '%s': no kernel for storage types (%s) "
                        "on %s(%d); copy the arrays to the CPU "
                        "(mxc_ndarray_copy) to run it there",
                        op->name, st,
                        dev.type == MXC_DEVICE_GPU ? "gpu" : "cpu", dev.id);
}

/* 1 when a and b name the same memory: one GPU, or the CPU (all of
 * whose ids share its memory). */
static int same_memory(mxc__device a, mxc__device b) {
  return a.type == b.type && (a.type == MXC_DEVICE_CPU || a.id == b.id);
}

/* The call's device: its first array's. Every array must be there: a
 * kernel reads all of them in one memory (copies between devices are
 * explicit, as in MXNet). */
static int call_device(const mxc__op *op, mxc__ndarray *const *in, int n_in,
                       mxc__ndarray *const *out, int n_out,
                       mxc__device *dev) {
  mxc__device d = {MXC_DEVICE_CPU, 0};
  if (n_in > 0) d = in[0]->chunk->dev;
  else if (n_out > 0 && out[0]) d = out[0]->chunk->dev;
  for (int i = 0; i < n_in + n_out; ++i) {
    const mxc__ndarray *a = i < n_in ? in[i] : out[i - n_in];
    if (!a || same_memory(a->chunk->dev, d)) continue;
    return mxc__error_set(
        MXC_ERR_INVALID_ARGUMENT,
        "operator '%s': %s %d is on %s(%d) but the call runs on %s(%d); "
        "copy it there first (mxc_ndarray_copy)",
        op->name, i < n_in ? "input" : "output", i < n_in ? i : i - n_in,
        a->chunk->dev.type == MXC_DEVICE_GPU ? "gpu" : "cpu",
        a->chunk->dev.id, d.type == MXC_DEVICE_GPU ? "gpu" : "cpu", d.id);
  }
  *dev = d;
  return MXC_OK;
}

/* The storage fallback's refusal off the CPU, after the storage
 * functions' own message (kept: it names what they support). */
static int no_fallback_here(mxc__device dev) {
  char msg[MXC__ERROR_MAX];
  snprintf(msg, sizeof msg, "%s", mxc__error_msg());
  return mxc__error_set(MXC_ERR_UNSUPPORTED,
                        "%s; on gpu(%d) there is no storage fallback: copy "
                        "the arrays to the CPU to run it there",
                        msg, dev.id);
}

/* A dense call on a GPU without a kernel there (none, or its row
 * declined: why): a fused node's program runs instruction by instruction,
 * each with its own kernel choice (core/op/fusion.h); any other call runs
 * on the CPU through copies. */
static __attribute__((cold, noinline)) int no_kernel_here(
    const mxc__op *op, const void *param, mxc__ndarray *const *in, int n_in,
    mxc__ndarray **out, int n_out, const mxc__req *req, mxc__device dev,
    const call_bufs *b, int n_total, const char *why) {
  if (mxc__op_has_unfused(op)) {
    return mxc__op_run_unfused(op, param, in, n_in, out, n_out, req, dev,
                               why);
  }
  return mxc__op_device_fallback(op, param, in, n_in, out, n_out, req, dev,
                                 b->itype, b->otype, n_total, why);
}

/* mxc__op_invoke once the counts are checked, with the call's arrays in
 * b (sized for n_in inputs and n_total outputs). */
static int invoke_with(const mxc__op *op, const void *param,
                       mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                       int n_out, const mxc__req *req, int n_total,
                       call_bufs *b) {
  mxc__device dev;
  for (int i = 0; i < n_in; ++i) {
    MXC_RETURN_ERROR_IF(!in[i], MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': input %d is NULL", op->name, i);
  }
  MXC_FORWARD_IF_ERROR(call_device(op, in, n_in, out, n_out, &dev));
  mxc__shape *oshape = b->oshape;
  int *otype = b->otype, *ostype = b->ostype, dispatch;
  mxc__ndarray **given = b->given;
  for (int i = 0; i < n_total; ++i) given[i] = i < n_out ? out[i] : NULL;
  MXC_FORWARD_IF_ERROR(infer(op, param, in, n_in, given, n_total, oshape,
                             otype, b->ishape, b->itype));
  int st_rc = infer_stypes(op, param, in, n_in, given, n_total, req, n_out,
                           b->ist, ostype, &dispatch);
  if (MXC__UNLIKELY(st_rc != MXC_OK)) {
    /* No kernel for these storage types: run the dense one through dense
     * temporaries (dense-only calls never get here). Off the CPU the
     * temporaries would be made by host code from device memory. */
    if (st_rc == MXC_ERR_STYPE && op->compute &&
        mxc__op_has_sparse(in, n_in, given, n_total)) {
      if (dev.type != MXC_DEVICE_CPU) return no_fallback_here(dev);
      return mxc__op_fallback(op, param, in, n_in, out, n_out, req);
    }
    return st_rc;
  }
  const mxc__kernel *kern = NULL;
  if (dispatch == MXC__DISPATCH_DENSE) {
    char why[512];
    call_shapes cs = {b->ishape, oshape, n_total == n_out ? req : NULL};
    MXC_FORWARD_IF_ERROR(pick_kernel(op, param, b->itype, n_in, otype,
                                     n_total, dev, &cs, &kern, why,
                                     sizeof why));
    if (MXC__UNLIKELY(!kern && dev.type != MXC_DEVICE_CPU)) {
      return no_kernel_here(op, param, in, n_in, out, n_out, req, dev, b,
                            n_total, why);
    }
  } else if (dev.type != MXC_DEVICE_CPU) {
    MXC_FORWARD_IF_ERROR(pick_sparse_kernel(op, param, b->itype, b->ist,
                                            n_in, otype, ostype, n_total,
                                            dev, &kern));
  }
  b->n_reads = b->n_writes = 0;
  for (int i = 0; i < n_total; ++i) b->created[i] = 0;
  int rc = make_outputs(op, out, n_out, n_total, oshape, otype, ostype, dev,
                        b);
  invoke_rec *r = NULL;
  int sparse = dispatch == MXC__DISPATCH_SPARSE;
  if (rc == MXC_OK) rc = rec_new(op, param, n_in, n_total, sparse, &r);
  if (rc == MXC_OK) r->kernel = kern;
  if (mxc__prof_on(MXC__PROF_OPERATOR | MXC__PROF_EXECUTOR) && rc == MXC_OK) {
    prof_tag(r);
  }
  if (rc != MXC_OK) {
    plan_drop_created(b, n_total);
    return rc;
  }
  mxc__engine *eng = mxc__ndarray_engine(b->outs[0] ? b->outs[0] : in[0]);
  for (int i = 0; i < n_in; ++i) {
    if (rc == MXC_OK) rc = mxc__ndarray_ensure_alloc(in[i]);
    blob_of(in[i], &r->in[i]);
    r->versions[i] = mxc__ndarray_version(in[i]);
    if (sparse) {
      r->arrs[i] = *in[i];
      r->arrs[i].ag = NULL;
    }
    if (mxc__op_mutates_input(op, i)) {
      b->writes[b->n_writes++] = mxc__ndarray_var(in[i]);
    } else {
      b->reads[b->n_reads++] = mxc__ndarray_var(in[i]);
    }
  }
  for (int i = 0; i < n_total; ++i) {
    blob_of(b->outs[i], &r->out[i]);
    if (sparse) {
      r->arrs[n_in + i] = *b->outs[i];
      r->arrs[n_in + i].ag = NULL;
    }
    r->req[i] = req && i < n_out ? req[i] : MXC__REQ_WRITE;
    if (r->req[i] != MXC__REQ_NULL) {
      b->writes[b->n_writes++] = mxc__ndarray_var(b->outs[i]);
    }
  }
  r->ctx.is_train = mxc__is_training();
  r->ctx.dev = dev;
  r->ctx.num_threads = 1;
  if (op->resources & MXC__RES_RANDOM) {
    int64_t n = call_elems(in, n_in, oshape, n_total, INT64_MAX - 1);
    r->ctx.rng = mxc__random_reserve(n + 1, 4);
  }
  if (rc == MXC_OK && (op->resources & MXC__RES_TEMP)) {
    mxc__var *tv = NULL;
    rc = mxc__temp_pool_get(eng, dev, &r->ctx.temp, &tv);
    if (rc == MXC_OK) b->writes[b->n_writes++] = tv;
  }
  mxc__push_args a;
  memset(&a, 0, sizeof a);
  a.sync_fn = run_rec;
  a.arg = r;
  a.free_fn = free_rec;
  a.reads = b->reads;
  a.n_reads = b->n_reads;
  a.writes = b->writes;
  a.n_writes = b->n_writes;
  a.name = op->name;
  a.dev = dev;
  int64_t elems = call_elems(in, n_in, oshape, n_total, SMALL_CALL_ELEMS + 1);
  a.run_here = !sparse && elems <= SMALL_CALL_ELEMS;
  r->empty = !sparse && elems == 0;
  if (rc == MXC_OK) rc = mxc__engine_push(eng, &a);
  if (rc != MXC_OK) {
    mxc__free(r);
    plan_drop_created(b, n_total);
    return rc;
  }
  /* Hand out created visible outputs; drop created hidden ones (pending
   * work keeps their storage alive). */
  for (int i = 0; i < n_total; ++i) {
    if (i < n_out && !out[i]) {
      out[i] = b->outs[i];
    } else if (b->created[i]) {
      mxc__ndarray_free(b->outs[i]);
    }
  }
  return MXC_OK;
}

/* Room for the arrays of calls up to 16 inputs and 16 outputs on the
 * stack; wider calls take a heap block, so that small operators stay
 * allocation-free and variadic ones are limited by memory only. */
#define SMALL_CALL_BYTES 4096

static int invoke_plain(const mxc__op *op, const void *param,
                        mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                        int n_out, const mxc__req *req);

/* Charges the storage this call allocates (its outputs) to op in the
 * profiler's memory statistics. */
static int invoke_charged(const mxc__op *op, const void *param,
                          mxc__ndarray *const *in, int n_in,
                          mxc__ndarray **out, int n_out, const mxc__req *req) {
  const char *prev = mxc__prof_attrib();
  mxc__prof_set_attrib(op->name);
  int rc = invoke_plain(op, param, in, n_in, out, n_out, req);
  mxc__prof_set_attrib(prev);
  return rc;
}

int mxc__op_invoke(const mxc__op *op, const void *param,
                   mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                   int n_out, const mxc__req *req) {
  /* An output that is also an input (out=) and not a declared in-place
   * pair would be read after being written: compute it apart (alias.h). */
  if (MXC__UNLIKELY(out && mxc__op_alias_hazard(op, param, in, n_in, out, n_out))) {
    return mxc__op_invoke_via_temps(op, param, in, n_in, out, n_out, req);
  }
  if (mxc__prof_on(MXC__PROF_MEMORY)) {
    return invoke_charged(op, param, in, n_in, out, n_out, req);
  }
  return invoke_plain(op, param, in, n_in, out, n_out, req);
}

static int invoke_plain(const mxc__op *op, const void *param,
                        mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                        int n_out, const mxc__req *req) {
  int n_total = 0;
  MXC_FORWARD_IF_ERROR(check_counts(op, param, n_in, n_out, &n_total));
  _Alignas(16) char small[SMALL_CALL_BYTES];
  /* Laid out in the stack block first: one pass for the usual small
   * call, a second only when it needs a heap block. */
  call_bufs b;
  char *m = small;
  size_t need = bufs_layout(m, sizeof small, n_in, n_total, &b);
  if (need > sizeof small) {
    m = mxc__malloc(need);
    MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM,
                        "operator '%s': out of memory for a call with %d "
                        "inputs and %d outputs",
                        op->name, n_in, n_total);
    bufs_layout(m, need, n_in, n_total, &b);
  }
  int rc = invoke_with(op, param, in, n_in, out, n_out, req, n_total, &b);
  mxc__scratch_free(m, small);
  return rc;
}
