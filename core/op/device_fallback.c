/* The device fallback of mxc__op_invoke (core/op/fallback.h): a dense
 * call on a GPU whose operator has no kernel there runs on the CPU
 * through host copies of its arrays.
 *
 * Why copies through the engine rather than a synchronous staging: the
 * copies, the CPU kernel and the copies back are ordinary engine work on
 * the arrays' variables, so the call is ordered with everything else on
 * those arrays (no device-wide sync, no wait here), its failures poison
 * the outputs like any operator's, and the host never reads device
 * memory (each byte moves through the plug-in's copies). The host arrays
 * are freed at once: pending work keeps their storage alive. */
#include "core/op/fallback.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/op/arity.h"
#include "core/op/invoke.h"

/* The host stand-ins of one call: hin/hout what the CPU kernel sees,
 * made[j] the GPU output created here for a NULL out[j]. */
typedef struct dfb_call {
  mxc__ndarray **hin, **hout, **made;
  mxc__req *hreq;
} dfb_call;

static int dfb_alloc(const mxc__op *op, dfb_call *c, int n_in, int n_out) {
  size_t ni = (size_t)n_in, no = (size_t)n_out;
  size_t bytes = sizeof(mxc__ndarray *) * (ni + 2 * no) +
                 sizeof(mxc__req) * no;
  char *m = mxc__calloc(1, bytes ? bytes : 1);
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_OOM,
                      "operator '%s': out of memory for the CPU fallback of "
                      "a call with %d inputs and %d outputs",
                      op->name, n_in, n_out);
  c->hin = (mxc__ndarray **)m;
  c->hout = c->hin + ni;
  c->made = c->hout + no;
  c->hreq = (mxc__req *)(c->made + no);
  return MXC_OK;
}

/* Frees every host array, and the created GPU outputs unless handed out
 * (keep). The block of pointers goes last. */
static void dfb_free(dfb_call *c, int n_in, int n_out, int keep) {
  for (int i = 0; i < n_in; ++i) mxc__ndarray_free(c->hin[i]);
  for (int j = 0; j < n_out; ++j) {
    mxc__ndarray_free(c->hout[j]);
    if (!keep) mxc__ndarray_free(c->made[j]);
  }
  mxc__free(c->hin);
}

/* A new host array of a's shape, dtype and layout (an executor's
 * channels-last value is copied byte for byte and stays so). */
static int host_like(const mxc__ndarray *a, mxc__ndarray **out) {
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  MXC_FORWARD_IF_ERROR(mxc__ndarray_create(&a->shape, a->dtype, cpu, 1, out));
  (*out)->fmt = a->fmt;
  return MXC_OK;
}

/* An engine copy named after the operator, so that a failing copy is
 * reported as the operator's at the wait. Empty arrays have no bytes to
 * move (and may have no device block): nothing is pushed. */
static int copy_for(const mxc__op *op, const mxc__ndarray *src,
                    const mxc__ndarray *dst, mxc__device dev, int to_host) {
  if (mxc__ndarray_nbytes(src) == 0) return MXC_OK;
  char name[160];
  snprintf(name, sizeof name, "%s (CPU fallback: copy %s gpu(%d))",
           op->name, to_host ? "from" : "to", dev.id);
  return mxc__ndarray_copy_named(src, dst, name);
}

/* Host copies of the inputs, and host outputs: for req add a copy of the
 * output's values (the CPU kernel adds to them); in place becomes write
 * (a fresh array shares nothing); a NULL output stays NULL (the CPU call
 * creates it). */
static int stage(const mxc__op *op, dfb_call *c, mxc__ndarray *const *in,
                 int n_in, mxc__ndarray **out, int n_out, const mxc__req *req,
                 mxc__device dev) {
  for (int i = 0; i < n_in; ++i) {
    MXC_FORWARD_IF_ERROR(host_like(in[i], &c->hin[i]));
    MXC_FORWARD_IF_ERROR(copy_for(op, in[i], c->hin[i], dev, 1));
  }
  for (int j = 0; j < n_out; ++j) {
    mxc__req r = req ? req[j] : MXC__REQ_WRITE;
    c->hreq[j] = r == MXC__REQ_INPLACE ? MXC__REQ_WRITE : r;
    if (!out[j]) continue;
    MXC_FORWARD_IF_ERROR(host_like(out[j], &c->hout[j]));
    if (r == MXC__REQ_ADD) {
      MXC_FORWARD_IF_ERROR(copy_for(op, out[j], c->hout[j], dev, 1));
    }
  }
  return MXC_OK;
}

/* Copies the results back: into given outputs written (req not null),
 * into new GPU outputs for NULL ones, and into inputs the operator
 * updates (optimizer states). */
static int unstage(const mxc__op *op, dfb_call *c, mxc__ndarray *const *in,
                   int n_in, mxc__ndarray **out, int n_out, mxc__device dev) {
  for (int j = 0; j < n_out; ++j) {
    if (c->hreq[j] == MXC__REQ_NULL && out[j]) continue;
    mxc__ndarray *dst = out[j];
    if (!dst) {
      MXC_FORWARD_IF_ERROR(mxc__ndarray_create(
          &c->hout[j]->shape, c->hout[j]->dtype, dev, 1, &c->made[j]));
      c->made[j]->fmt = c->hout[j]->fmt;
      dst = c->made[j];
    }
    MXC_FORWARD_IF_ERROR(copy_for(op, c->hout[j], dst, dev, 0));
  }
  for (int i = 0; i < n_in; ++i) {
    if (!mxc__op_mutates_input(op, i)) continue;
    MXC_FORWARD_IF_ERROR(copy_for(op, c->hin[i], in[i], dev, 0));
  }
  return MXC_OK;
}

__attribute__((cold, noinline)) int mxc__op_device_fallback(
    const mxc__op *op, const void *param, mxc__ndarray *const *in, int n_in,
    mxc__ndarray **out, int n_out, const mxc__req *req, mxc__device dev,
    const int *itype, const int *otype, int n_total, const char *why) {
  dfb_call c;
  memset(&c, 0, sizeof c);
  MXC_FORWARD_IF_ERROR(dfb_alloc(op, &c, n_in, n_out));
  int rc = stage(op, &c, in, n_in, out, n_out, req, dev);
  /* The CPU call: its own kernel choice, temp space, random stream and
   * hidden outputs (made and dropped there when out has only the visible
   * ones). */
  if (rc == MXC_OK) {
    rc = mxc__op_invoke(op, param, c.hin, n_in, c.hout, n_out, c.hreq);
  }
  if (rc == MXC_OK) rc = unstage(op, &c, in, n_in, out, n_out, dev);
  for (int j = 0; rc == MXC_OK && j < n_out; ++j) {
    if (!out[j]) out[j] = c.made[j];
  }
  dfb_free(&c, n_in, n_out, rc == MXC_OK);
  if (rc == MXC_OK) {
    mxc__device_fallback_log(op, param, itype, n_in, otype, n_total, dev,
                             why);
  }
  return rc;
}
