/* Channels-last conversions and the plain fallback (format.h). */
#include "core/op/format.h"

#include <string.h>

#include "core/base/alloc.h"
#include "core/base/assert.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/op/backend.h"

/* An array (N, C, spatial...) as n outer items of c channels by s
 * spatial positions. */
typedef struct ncs {
  int64_t n, c, s;
  size_t esz;
} ncs;

static ncs ncs_of(const mxc__blob *b) {
  ncs g = {b->shape.dims[0], b->shape.dims[1], 1, mxc__dtype_size(b->dtype)};
  for (int i = 2; i < b->shape.ndim; ++i) g.s *= b->shape.dims[i];
  return g;
}

int mxc__fmt_differs(const mxc__blob *b) {
  if (b->fmt == MXC__FMT_PLAIN) return 0;
  MXC__ASSERT(b->shape.ndim >= 3 && b->shape.ndim <= 5);
  MXC__ASSERT(b->fmt != MXC__FMT_CHANNELS_LAST_BF16 ||
              b->dtype == MXC_DTYPE_FLOAT32);
  if (b->fmt == MXC__FMT_CHANNELS_LAST_BF16) return 1; /* other elements */
  ncs g = ncs_of(b);
  return g.c > 1 && g.s > 1;
}

/* bfloat16 is float32's upper half; rounding to nearest even (NaN kept a
 * quiet NaN). */
static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

/* Between plain float32 (n, c, s) and channels-last bfloat16 (n, s, c). */
static void bf16_to_plain(const ncs *g, const uint16_t *src, float *dst) {
  for (int64_t i = 0; i < g->n; ++i) {
    for (int64_t c = 0; c < g->c; ++c) {
      for (int64_t s = 0; s < g->s; ++s) {
        dst[(i * g->c + c) * g->s + s] =
            bf16_to_f32(src[(i * g->s + s) * g->c + c]);
      }
    }
  }
}

static void bf16_from_plain(const ncs *g, const float *src, uint16_t *dst) {
  for (int64_t i = 0; i < g->n; ++i) {
    for (int64_t c = 0; c < g->c; ++c) {
      for (int64_t s = 0; s < g->s; ++s) {
        dst[(i * g->s + s) * g->c + c] =
            f32_to_bf16(src[(i * g->c + c) * g->s + s]);
      }
    }
  }
}

/* Moves elements between plain (n, c, s) and channels-last (n, s, c);
 * to_plain says which way. */
static void transpose(const ncs *g, const char *src, char *dst, int to_plain) {
  for (int64_t i = 0; i < g->n; ++i) {
    size_t base = (size_t)(i * g->c * g->s) * g->esz;
    for (int64_t c = 0; c < g->c; ++c) {
      for (int64_t s = 0; s < g->s; ++s) {
        size_t p = base + (size_t)(c * g->s + s) * g->esz;
        size_t l = base + (size_t)(s * g->c + c) * g->esz;
        memcpy(dst + (to_plain ? p : l), src + (to_plain ? l : p), g->esz);
      }
    }
  }
}

static size_t blob_bytes(const mxc__blob *b) {
  return (size_t)mxc__shape_size(&b->shape) * mxc__dtype_size(b->dtype);
}

void mxc__fmt_to_plain(const mxc__blob *b, void *dst) {
  if (!mxc__fmt_differs(b)) {
    if (dst != b->ptr) memcpy(dst, b->ptr, blob_bytes(b));
    return;
  }
  ncs g = ncs_of(b);
  if (b->fmt == MXC__FMT_CHANNELS_LAST_BF16) {
    bf16_to_plain(&g, b->ptr, dst);
  } else {
    transpose(&g, b->ptr, dst, 1);
  }
}

void mxc__fmt_from_plain(const void *src, const mxc__blob *b) {
  if (!mxc__fmt_differs(b)) {
    if (src != b->ptr) memcpy(b->ptr, src, blob_bytes(b));
    return;
  }
  ncs g = ncs_of(b);
  if (b->fmt == MXC__FMT_CHANNELS_LAST_BF16) {
    bf16_from_plain(&g, src, b->ptr);
  } else {
    transpose(&g, src, b->ptr, 0);
  }
}

/* ---- the plain fallback ---- */

/* A plain copy of b in t (t->ptr a new block), or b itself when it is
 * plain already; copies b's contents when fill. */
static int plain_twin(const mxc__op *op, const mxc__blob *b, int fill,
                      mxc__blob *t) {
  *t = *b;
  t->fmt = MXC__FMT_PLAIN;
  if (!mxc__fmt_differs(b)) return MXC_OK;
  size_t n = blob_bytes(b);
  t->ptr = mxc__malloc(n ? n : 1);
  MXC_RETURN_ERROR_IF(!t->ptr, MXC_ERR_OOM,
                      "operator '%s': out of memory for a %zu-byte plain copy "
                      "of a channels-last array",
                      op->name, n);
  if (fill) mxc__fmt_to_plain(b, t->ptr);
  return MXC_OK;
}

static void drop_twins(const mxc__blob *orig, mxc__blob *t, int n) {
  for (int i = 0; i < n; ++i) {
    if (t[i].ptr != orig[i].ptr) mxc__free(t[i].ptr);
  }
}

static int any_differs(const mxc__blob *b, int n) {
  for (int i = 0; i < n; ++i) {
    if (mxc__fmt_differs(&b[i])) return 1;
  }
  return 0;
}

int mxc__fmt_compute(mxc__compute_fn compute, const mxc__op *op,
                     const mxc__opctx *ctx, const void *param,
                     const mxc__blob *in, int n_in, const mxc__blob *out,
                     int n_out, const mxc__req *req) {
  /* The common case, every blob plain: no copies, no allocation. */
  if (!any_differs(in, n_in) && !any_differs(out, n_out)) {
    return compute(op, ctx, param, in, n_in, out, n_out, req);
  }
  int n = n_in + n_out;
  mxc__blob *t = mxc__calloc((size_t)(n ? n : 1), sizeof *t);
  mxc__req *r = mxc__calloc((size_t)(n_out ? n_out : 1), sizeof *r);
  int rc = t && r ? MXC_OK : MXC_ERR_OOM;
  if (rc != MXC_OK) {
    mxc__error_set(rc, "operator '%s': out of memory", op->name);
  }
  int made = 0;
  for (; rc == MXC_OK && made < n; ++made) {
    const mxc__blob *b = made < n_in ? &in[made] : &out[made - n_in];
    int fill = made < n_in || req[made - n_in] == MXC__REQ_ADD;
    rc = plain_twin(op, b, fill, &t[made]);
  }
  for (int j = 0; rc == MXC_OK && j < n_out; ++j) {
    /* A copy shares no memory with the inputs' copies. */
    r[j] = req[j] == MXC__REQ_INPLACE && t[n_in + j].ptr != out[j].ptr
               ? MXC__REQ_WRITE
               : req[j];
  }
  if (rc == MXC_OK) rc = compute(op, ctx, param, t, n_in, t + n_in, n_out, r);
  for (int j = 0; rc == MXC_OK && j < n_out; ++j) {
    if (req[j] != MXC__REQ_NULL && t[n_in + j].ptr != out[j].ptr) {
      mxc__fmt_from_plain(t[n_in + j].ptr, &out[j]);
    }
  }
  /* Entries never made are zero: freeing their NULL is harmless. */
  if (t) {
    drop_twins(in, t, n_in);
    drop_twins(out, t + n_in, n_out);
  }
  mxc__free(t);
  mxc__free(r);
  return rc;
}

unsigned mxc__fmt_elementwise_ok(const mxc__op *op, const void *param,
                                 int is_out, int i) {
  (void)op;
  (void)param;
  (void)is_out;
  (void)i;
  return MXC__FMT_TIED | (1u << MXC__FMT_CHANNELS_LAST);
}
