/* The fake plug-in's stand-ins for train2.h's kernels (train2_host.h). */
#include "tests/gpu/train2_host.h"

#include <stdio.h>
#include <string.h>

#include "backends/cuda/bgrad_plan.h"
#include "backends/cuda/optim_plan.h"
#include "backends/cuda/red_plan.h"

/* The call with every array's pointer mapped to the host; MXC_ERR_INTERNAL
 * when one is not device memory of the call's device. */
static int map_call(const mxc__gpu_call *c, mxct_train2_host_fn host,
                    mxc__gpu_array *in, mxc__gpu_array *out, mxc__gpu_call *h,
                    char *why, size_t why_len) {
  *h = *c;
  for (int i = 0; i < c->n_in + c->n_out; ++i) {
    int is_in = i < c->n_in;
    const mxc__gpu_array *a = is_in ? &c->in[i] : &c->out[i - c->n_in];
    mxc__gpu_array *m = is_in ? &in[i] : &out[i - c->n_in];
    *m = *a;
    m->ptr = host(a, c->dev);
    if (!m->ptr && a->size > 0) {
      snprintf(why, why_len, "fake GPU: an array is not on gpu(%d)", c->dev);
      return MXC_ERR_INTERNAL;
    }
  }
  h->in = in, h->out = out;
  return MXC_OK;
}

static float *f32(const mxc__gpu_array *a) { return (float *)a->ptr; }

static void store(float *o, int64_t i, float v, int req) {
  o[i] = req == MXC__GPU_REQ_ADD ? o[i] + v : v;
}

static int bgrad(int op, const mxc__gpu_call *c, char *why, size_t len) {
  mxc__bgrad_plan p;
  int rc = mxc__bgrad_plan_make(c, &p, why, len);
  for (int x = 0; rc == MXC_OK && x < 2; ++x) {
    if (c->req[x] == MXC__GPU_REQ_NULL) continue;
    const mxc__sum_plan *s = &p.red[x];
    float *g = f32(&c->out[x]);
    for (int64_t o = 0; o < s->n_out; ++o) {
      int64_t base = mxc__sum_base(s, o);
      double acc = 0;
      for (int64_t k = 0; k < s->n_red; ++k) {
        acc += mxc__bgrad_partial(&p, op, x, f32(&c->in[0]), f32(&c->in[1]),
                                  f32(&c->in[2]), base + mxc__sum_step(s, k));
      }
      int add = c->req[x] == MXC__GPU_REQ_ADD;
      g[o] = mxc__bgrad_final(acc, add, add ? g[o] : 0.f);
    }
  }
  return rc;
}

static int red_fwd(int kind, const mxc__gpu_call *c, char *why, size_t len) {
  mxc__gred_fwd_plan p;
  int rc = mxc__gred_fwd_plan_make(kind, c, &p, why, len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL) return rc;
  const float *x = f32(&c->in[0]);
  for (int64_t o = 0; o < p.s.n_out; ++o) {
    int64_t base = mxc__sum_base(&p.s, o);
    double acc = mxc__gred_init(p.kind);
    for (int64_t k = 0; k < p.s.n_red; ++k) {
      acc = mxc__gred_step(p.kind, acc, x[base + mxc__sum_step(&p.s, k)]);
    }
    store(f32(&c->out[0]), o, mxc__gred_final(p.kind, acc, p.s.n_red),
          c->req[0]);
  }
  return MXC_OK;
}

static int red_bwd(int kind, const mxc__gpu_call *c, char *why, size_t len) {
  mxc__gred_bwd_plan p;
  int rc = mxc__gred_bwd_plan_make(kind, c, &p, why, len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL) return rc;
  const float *og = f32(&c->in[0]), *x = f32(&c->in[1]);
  const float *y = mxc__gred_grad_uses_y(p.kind) ? f32(&c->in[2]) : NULL;
  for (int64_t i = 0; i < c->out[0].size; ++i) {
    int64_t io, unused;
    mxc__bcast_offsets(&p.map, i, &io, &unused);
    double d = mxc__gred_grad(&p, og[io], x[i], y ? y[io] : 0.f);
    store(f32(&c->out[0]), i, (float)d, c->req[0]);
  }
  return MXC_OK;
}

static int prod_bwd(int kind, const mxc__gpu_call *c, char *why, size_t len) {
  mxc__gred_prod_plan p;
  int rc = mxc__gred_prod_plan_make(kind, c, &p, why, len);
  if (rc != MXC_OK || c->req[0] == MXC__GPU_REQ_NULL) return rc;
  const float *og = f32(&c->in[0]), *x = f32(&c->in[1]);
  for (int64_t o = 0; o < p.s.n_out; ++o) {
    int64_t base = mxc__sum_base(&p.s, o);
    mxc__gred_pstat st = mxc__gred_pstat_init();
    for (int64_t k = 0; k < p.s.n_red; ++k) {
      mxc__gred_pstat_step(p.kind, &st, x[base + mxc__sum_step(&p.s, k)]);
    }
    for (int64_t k = 0; k < p.s.n_red; ++k) {
      int64_t i = base + mxc__sum_step(&p.s, k);
      store(f32(&c->out[0]), i,
            (float)mxc__gred_prod_grad(p.kind, og[o], x[i], &st), c->req[0]);
    }
  }
  return MXC_OK;
}

static int optim(int kind, const mxc__gpu_call *c, char *why, size_t len) {
  if (c->n_in != 2 + mxc__opt2_states(kind)) {
    snprintf(why, len, "fake GPU: %d inputs for an update", c->n_in);
    return MXC_ERR_INTERNAL;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL) return MXC_OK;
  float *s[3] = {NULL, NULL, NULL};
  for (int k = 2; k < c->n_in; ++k) s[k - 2] = f32(&c->in[k]);
  for (int64_t i = 0; i < c->out[0].size; ++i) {
    mxc__opt2_elem(kind, c->param, f32(&c->in[0]), f32(&c->in[1]), s,
                   f32(&c->out[0]), c->req[0] == MXC__GPU_REQ_ADD, i);
  }
  return MXC_OK;
}

static int optim_ext(int kind, const mxc__gpu_call *c, char *why, size_t len) {
  if (c->n_in != (kind == MXC__OPT3_FTML ? 5 : 4)) {
    snprintf(why, len, "fake GPU: %d inputs for an update", c->n_in);
    return MXC_ERR_INTERNAL;
  }
  if (c->req[0] == MXC__GPU_REQ_NULL) return MXC_OK;
  mxc__opt3_plan q = mxc__opt3_plan_make(kind, c->param);
  float *a[5] = {NULL, NULL, NULL, NULL, NULL}, *o = f32(&c->out[0]);
  for (int k = 0; k < c->n_in; ++k) a[k] = f32(&c->in[k]);
  int add = c->req[0] == MXC__GPU_REQ_ADD;
  for (int64_t i = 0; i < c->out[0].size; ++i) {
    if (kind == MXC__OPT3_FTML) {
      mxc__opt3_ftml(&q, a[0], a[1], a[2], a[3], a[4], o, add, i);
    } else if (kind == MXC__OPT3_LAMB1) {
      mxc__opt3_lamb1(&q, a[0], a[1], a[2], a[3], o, add, i);
    } else {
      mxc__opt3_lamb2(&q, a[0], a[1], a[2], a[3], o, add, i);
    }
  }
  return MXC_OK;
}

static const int k_red_kinds[] = {MXC__GR_MAX,     MXC__GR_MIN,
                                  MXC__GR_PROD,    MXC__GR_NANSUM,
                                  MXC__GR_NANPROD, MXC__GR_NORM};
static const int k_bwd_kinds[] = {MXC__GR_SUM, MXC__GR_MEAN,   MXC__GR_MAX,
                                  MXC__GR_MIN, MXC__GR_NANSUM, MXC__GR_NORM};

int mxct_train2_fake_run(int which, const mxc__gpu_call *c,
                         mxct_train2_host_fn host, char *why, size_t why_len) {
  mxc__gpu_array in[8], out[4];
  mxc__gpu_call h;
  if (c->n_in > 8 || c->n_out > 4) {
    snprintf(why, why_len, "fake GPU: too many arrays");
    return MXC_ERR_INTERNAL;
  }
  int rc = map_call(c, host, in, out, &h, why, why_len);
  if (rc != MXC_OK) return rc;
  if (which < 4) return bgrad(which, &h, why, why_len);
  if (which < 10) return red_fwd(k_red_kinds[which - 4], &h, why, why_len);
  if (which < 16) return red_bwd(k_bwd_kinds[which - 10], &h, why, why_len);
  if (which < 18) {
    return prod_bwd(which == 16 ? MXC__GR_PROD : MXC__GR_NANPROD, &h, why,
                    why_len);
  }
  if (which < 25) {
    return optim(which - 18 + MXC__OPT2_NAG_MOM, &h, why, why_len);
  }
  return optim_ext(which - 25 + MXC__OPT3_FTML, &h, why, why_len);
}
