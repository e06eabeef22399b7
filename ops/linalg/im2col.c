/* Data movement for convolution-like operators: im2col / col2im over a
 * chunk of the batch, chunk packing, bias add and bias gradient.
 *
 * The column matrix of a chunk of nb samples has one row per (image
 * channel, kernel tap) and one column per (sample, output position):
 * col[(c * k_n + tap) * (nb * col_n) + n * col_n + q]. Rows of one group
 * of channels are contiguous, so a group's GEMM reads a plain sub-matrix,
 * and putting the samples side by side gives small images (LeNet's 8x8
 * maps) a GEMM wide enough to run efficiently. */
#include <string.h>

#include "ops/linalg/linalg.h"
#include "core/op/parallel.h"

/* The output positions q in [0, n_out) of one kernel row that read inside
 * an image row of `n_in` elements: q*s + off in [0, n_in). */
static inline void valid_range(int64_t off, int64_t s, int64_t n_in,
                               int64_t n_out, int64_t *lo, int64_t *hi) {
  int64_t a, b;
  if (s == 1) { /* the common case, without the divisions */
    a = off >= 0 ? 0 : -off;
    b = n_in - off;
  } else { /* ceil(x / s) as x / s + (x % s != 0): s may be huge */
    a = off >= 0 ? 0 : -off / s + (-off % s != 0);
    b = n_in - off <= 0 ? 0 : (n_in - off) / s + ((n_in - off) % s != 0);
  }
  if (b > n_out) b = n_out;
  if (b < 0) b = 0;
  if (a > b) a = b;
  *lo = a;
  *hi = b;
}

/* Walks every (channel, tap, sample, outer output position) and runs the
 * body with: TC *row, the col[2] column entries of one innermost output
 * row; TI *irow, the image row it reads (NULL when that row falls in the
 * padding); off = kw*d2 - p2, so entry q reads irow[q*s2 + off]; and
 * [lo, hi), the entries whose reads fall inside the row. lo/hi depend on
 * the tap only, so they are computed once per tap, not per row: rows are
 * short (24 floats in LeNet) and two divisions per row showed up as a
 * third of im2col's time. */
#define CONV_WALK(TI, TC, g, img, col, nb, n_lo, n_hi, ...)                    \
  do {                                                                         \
    const int64_t ncols = (nb) * (g).col_n;                                    \
    for (int64_t c = 0; c < (g).img_c; ++c) {                                  \
      for (int64_t kd = 0; kd < (g).k[0]; ++kd) {                              \
        for (int64_t kh = 0; kh < (g).k[1]; ++kh) {                            \
          for (int64_t kw = 0; kw < (g).k[2]; ++kw) {                          \
            int64_t r = ((c * (g).k[0] + kd) * (g).k[1] + kh) * (g).k[2] + kw; \
            int64_t off = kw * (g).d[2] - (g).p[2];                            \
            int64_t lo = 0, hi = 0;                                            \
            valid_range(off, (g).s[2], (g).img[2], (g).col[2], &lo, &hi);      \
            for (int64_t n = (n_lo); n < (n_hi); ++n) {                        \
              TI *ibase = (img) + (n * (g).img_c + c) * (g).img_n;             \
              TC *rbase = (col) + r * ncols + n * (g).col_n;                   \
              for (int64_t od = 0; od < (g).col[0]; ++od) {                    \
                int64_t id = od * (g).s[0] - (g).p[0] + kd * (g).d[0];         \
                for (int64_t oh = 0; oh < (g).col[1]; ++oh) {                  \
                  int64_t ih = oh * (g).s[1] - (g).p[1] + kh * (g).d[1];       \
                  TI *irow = NULL;                                             \
                  if (id >= 0 && id < (g).img[0] && ih >= 0 &&                 \
                      ih < (g).img[1]) {                                       \
                    irow = ibase + (id * (g).img[1] + ih) * (g).img[2];        \
                  }                                                            \
                  TC *row = rbase + (od * (g).col[1] + oh) * (g).col[2];       \
                  __VA_ARGS__                                                  \
                }                                                              \
              }                                                                \
            }                                                                  \
          }                                                                    \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* Sum of n elements with four independent lanes (a vector the compiler
 * keeps in registers), so the bias gradient is not bound by the latency
 * of one serial chain of additions. The order differs from a left-to-
 * right sum by rounding only. */
typedef float mxc__sv4f __attribute__((vector_size(16)));
typedef double mxc__sv4d __attribute__((vector_size(32)));
#define DEF_SUM_ROW(T, V, sfx)                                                \
  static inline T sum_row_##sfx(const T *s, int64_t n) {                      \
    V acc = {0, 0, 0, 0};                                                     \
    int64_t i = 0;                                                            \
    for (; i + 4 <= n; i += 4) {                                              \
      V v;                                                                    \
      memcpy(&v, s + i, sizeof v);                                            \
      acc += v;                                                               \
    }                                                                         \
    T t = (acc[0] + acc[1]) + (acc[2] + acc[3]);                              \
    for (; i < n; ++i) t += s[i];                                             \
    return t;                                                                 \
  }
DEF_SUM_ROW(float, mxc__sv4f, f32)
DEF_SUM_ROW(double, mxc__sv4d, f64)

#define DEF_MOVERS(T, sfx)                                                    \
  static void im2col_##sfx(const mxc__conv_geom *g, const T *img, int64_t nb, \
                           int64_t n_lo, int64_t n_hi, T *col) {              \
    const mxc__conv_geom gl = *g; /* not clobbered by stores to col */        \
    const int64_t s2 = gl.s[2], w_out = gl.col[2];                            \
    CONV_WALK(const T, T, gl, img, col, nb, n_lo, n_hi, {                     \
      if (!irow) {                                                            \
        memset(row, 0, sizeof(T) * (size_t)w_out);                            \
      } else {                                                                \
        for (int64_t q = 0; q < lo; ++q) row[q] = 0;                          \
        if (s2 == 1 && hi - lo <= 32) { /* short rows: a call costs more */   \
          const T *src_ = irow + off;                                         \
          for (int64_t q = lo; q < hi; ++q) row[q] = src_[q];                 \
        } else if (s2 == 1) {                                                 \
          memcpy(row + lo, irow + lo + off, sizeof(T) * (size_t)(hi - lo));   \
        } else {                                                              \
          for (int64_t q = lo; q < hi; ++q) row[q] = irow[q * s2 + off];      \
        }                                                                     \
        for (int64_t q = hi; q < w_out; ++q) row[q] = 0;                      \
      }                                                                       \
    });                                                                       \
  }                                                                           \
  static void col2im_##sfx(const mxc__conv_geom *g, const T *col, int64_t nb, \
                           int64_t n_lo, int64_t n_hi, T *img) {              \
    const mxc__conv_geom gl = *g;                                             \
    const int64_t s2 = gl.s[2];                                               \
    CONV_WALK(T, const T, gl, img, col, nb, n_lo, n_hi, {                     \
      if (irow && s2 == 1) { /* contiguous: lets the loop vectorize */        \
        T *dst_ = irow + off;                                                 \
        for (int64_t q = lo; q < hi; ++q) dst_[q] += row[q];                  \
      } else if (irow) {                                                      \
        for (int64_t q = lo; q < hi; ++q) irow[q * s2 + off] += row[q];       \
      }                                                                       \
    });                                                                       \
  }                                                                           \
  static void pack_##sfx(const T *src, int64_t nb, int64_t c, int64_t n,      \
                         T *dst) {                                            \
    for (int64_t b = 0; b < nb; ++b) {                                        \
      for (int64_t ch = 0; ch < c; ++ch) {                                    \
        memcpy(dst + ch * nb * n + b * n, src + (b * c + ch) * n,             \
               sizeof(T) * (size_t)n);                                        \
      }                                                                       \
    }                                                                         \
  }                                                                           \
  static void unpack_##sfx(const T *src, int64_t nb, int64_t c, int64_t n,    \
                           const T *bias, mxc__req req, T *dst) {             \
    for (int64_t b = 0; b < nb; ++b) {                                        \
      for (int64_t ch = 0; ch < c; ++ch) {                                    \
        const T *s = src + ch * nb * n + b * n;                               \
        T *d = dst + (b * c + ch) * n;                                        \
        T bv = bias ? bias[ch] : 0;                                           \
        if (req == MXC__REQ_ADD) {                                            \
          for (int64_t i = 0; i < n; ++i) d[i] += s[i] + bv;                  \
        } else {                                                              \
          for (int64_t i = 0; i < n; ++i) d[i] = s[i] + bv;                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }                                                                           \
  static void add_bias_##sfx(T *dst, int64_t nb, int64_t c, int64_t n,        \
                             const T *bias) {                                 \
    for (int64_t b = 0; b < nb; ++b) {                                        \
      for (int64_t ch = 0; ch < c; ++ch) {                                    \
        T *d = dst + (b * c + ch) * n;                                        \
        T bv = bias[ch];                                                      \
        for (int64_t i = 0; i < n; ++i) d[i] += bv;                           \
      }                                                                       \
    }                                                                         \
  }                                                                           \
  static void sum_bias_##sfx(const T *src, int64_t nb, int64_t c, int64_t n,  \
                             mxc__req req, T *db) {                           \
    if (req != MXC__REQ_ADD) {                                                \
      for (int64_t ch = 0; ch < c; ++ch) db[ch] = 0;                          \
    }                                                                         \
    for (int64_t b = 0; b < nb; ++b) {                                        \
      for (int64_t ch = 0; ch < c; ++ch) {                                    \
        db[ch] += sum_row_##sfx(src + (b * c + ch) * n, n);                   \
      }                                                                       \
    }                                                                         \
  }
DEF_MOVERS(float, f32)
DEF_MOVERS(double, f64)

/* The common 1-D/2-D case without padding, with stride and dilation 1:
 * every column row is a plain shifted window of the image, so the walk
 * reduces to short contiguous copies. The general walk above spends most
 * of its time on per-row bookkeeping when rows are short (8 floats for
 * LeNet's second layer); this path made im2col/col2im about 3x faster
 * there. */
static int is_plain_window(const mxc__conv_geom *g) {
  if (g->k[0] != 1 || g->img[0] != 1 || g->col[0] != 1) return 0;
  for (int i = 1; i < 3; ++i) {
    if (g->s[i] != 1 || g->d[i] != 1 || g->p[i] != 0) return 0;
  }
  return 1;
}

/* Short row copies and adds in 16-byte steps: fixed-size memcpy compiles
 * to single vector moves, where the plain loops stayed scalar at -O2 with
 * the trip count unknown (8 floats per row in LeNet). */
typedef float mxc__v4f __attribute__((vector_size(16)));
typedef double mxc__v2d __attribute__((vector_size(16)));

#define DEF_ROW_OPS(T, V, sfx)                                                \
  static inline void copy_row_##sfx(T *restrict d, const T *restrict s,      \
                                    int64_t n) {                              \
    const int64_t w = (int64_t)(sizeof(V) / sizeof(T));                       \
    int64_t q = 0;                                                            \
    for (; q + w <= n; q += w) memcpy(d + q, s + q, sizeof(V));               \
    for (; q < n; ++q) d[q] = s[q];                                           \
  }                                                                           \
  static inline void add_row_##sfx(T *restrict d, const T *restrict s,       \
                                   int64_t n) {                               \
    const int64_t w = (int64_t)(sizeof(V) / sizeof(T));                       \
    int64_t q = 0;                                                            \
    for (; q + w <= n; q += w) {                                              \
      V a, b;                                                                 \
      memcpy(&a, d + q, sizeof a);                                            \
      memcpy(&b, s + q, sizeof b);                                            \
      a += b;                                                                 \
      memcpy(d + q, &a, sizeof a);                                            \
    }                                                                         \
    for (; q < n; ++q) d[q] += s[q];                                          \
  }
DEF_ROW_OPS(float, mxc__v4f, f32)
DEF_ROW_OPS(double, mxc__v2d, f64)

#define DEF_FAST_MOVERS(T, sfx)                                               \
  static void im2col_fast_##sfx(const mxc__conv_geom *g, const T *img,        \
                                int64_t nb, int64_t n_lo, int64_t n_hi,       \
                                T *col) {                                     \
    const int64_t W = g->img[2], KH = g->k[1], KW = g->k[2];                  \
    const int64_t OH = g->col[1], OW = g->col[2], C = g->img_c;               \
    const int64_t ncols = nb * g->col_n;                                      \
    for (int64_t n = n_lo; n < n_hi; ++n) {                                   \
      for (int64_t c = 0; c < C; ++c) {                                       \
        const T *plane = img + (n * C + c) * g->img_n;                        \
        for (int64_t kh = 0; kh < KH; ++kh) {                                 \
          for (int64_t kw = 0; kw < KW; ++kw) {                               \
            T *restrict dst = col + ((c * KH + kh) * KW + kw) * ncols +       \
                              n * g->col_n;                                   \
            const T *restrict src = plane + kh * W + kw;                      \
            for (int64_t oh = 0; oh < OH; ++oh, dst += OW, src += W) {        \
              copy_row_##sfx(dst, src, OW);                                   \
            }                                                                 \
          }                                                                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }                                                                           \
  static void col2im_fast_##sfx(const mxc__conv_geom *g, const T *col,        \
                                int64_t nb, int64_t n_lo, int64_t n_hi,       \
                                T *img) {                                     \
    const int64_t W = g->img[2], KH = g->k[1], KW = g->k[2];                  \
    const int64_t OH = g->col[1], OW = g->col[2], C = g->img_c;               \
    const int64_t ncols = nb * g->col_n;                                      \
    for (int64_t n = n_lo; n < n_hi; ++n) {                                   \
      for (int64_t c = 0; c < C; ++c) {                                       \
        T *plane = img + (n * C + c) * g->img_n;                              \
        for (int64_t kh = 0; kh < KH; ++kh) {                                 \
          for (int64_t kw = 0; kw < KW; ++kw) {                               \
            const T *restrict src = col +                                     \
                                    ((c * KH + kh) * KW + kw) * ncols +       \
                                    n * g->col_n;                             \
            T *restrict dst = plane + kh * W + kw;                            \
            for (int64_t oh = 0; oh < OH; ++oh, dst += W, src += OW) {        \
              add_row_##sfx(dst, src, OW);                                    \
            }                                                                 \
          }                                                                   \
        }                                                                     \
      }                                                                       \
    }                                                                         \
  }
DEF_FAST_MOVERS(float, f32)
DEF_FAST_MOVERS(double, f64)

#define DISPATCH(dtype, call_f32, call_f64) \
  do {                                      \
    if ((dtype) == MXC_DTYPE_FLOAT32) {     \
      call_f32;                             \
    } else {                                \
      call_f64;                             \
    }                                       \
  } while (0)

/* im2col and col2im split the chunk's samples across the kernel pool:
 * sample n owns its columns [n*col_n, (n+1)*col_n) of every row and its
 * own image, so parts never write the same memory. On LeNet's second
 * layer this raised the forward bench (bench/ops conv, best of 5) from
 * ~43 to ~52 GFLOP/s on 2 cores. */
typedef struct mover_args {
  int dtype, to_col;
  const mxc__conv_geom *g;
  const void *src;
  int64_t nb;
  void *dst;
} mover_args;

static int mover_part(void *arg, int64_t lo, int64_t hi) {
  const mover_args *a = arg;
  if (is_plain_window(a->g) && a->to_col) {
    DISPATCH(a->dtype, im2col_fast_f32(a->g, a->src, a->nb, lo, hi, a->dst),
             im2col_fast_f64(a->g, a->src, a->nb, lo, hi, a->dst));
  } else if (is_plain_window(a->g)) {
    DISPATCH(a->dtype, col2im_fast_f32(a->g, a->src, a->nb, lo, hi, a->dst),
             col2im_fast_f64(a->g, a->src, a->nb, lo, hi, a->dst));
  } else if (a->to_col) {
    DISPATCH(a->dtype, im2col_f32(a->g, a->src, a->nb, lo, hi, a->dst),
             im2col_f64(a->g, a->src, a->nb, lo, hi, a->dst));
  } else {
    DISPATCH(a->dtype, col2im_f32(a->g, a->src, a->nb, lo, hi, a->dst),
             col2im_f64(a->g, a->src, a->nb, lo, hi, a->dst));
  }
  return MXC_OK;
}

/* Below this many column entries per chunk the copy runs in one thread
 * (LeNet's layers, 28-29k entries per chunk, are above it). */
#define MOVER_PAR_MIN ((int64_t)1 << 14)

static void run_mover(const mover_args *a) {
  int threads = mxc__parallel_threads();
  int64_t work = a->nb * a->g->img_c * a->g->k_n * a->g->col_n;
  if (threads < 2 || a->nb < 2 || work < MOVER_PAR_MIN) {
    mover_part((void *)a, 0, a->nb);
    return;
  }
  int64_t grain = (a->nb + threads - 1) / threads;
  /* mover_part cannot fail, so neither can the loop. */
  (void)mxc__parallel_for(a->nb, grain, threads, mover_part, (void *)a);
}

void mxc__im2col(int dtype, const mxc__conv_geom *g, const void *img,
                 int64_t nb, void *col) {
  mover_args a = {dtype, 1, g, img, nb, col};
  run_mover(&a);
}

void mxc__col2im(int dtype, const mxc__conv_geom *g, const void *col,
                 int64_t nb, void *img) {
  mover_args a = {dtype, 0, g, col, nb, img};
  run_mover(&a);
}

void mxc__pack_chunk(int dtype, const void *src, int64_t nb, int64_t c,
                     int64_t n, void *dst) {
  DISPATCH(dtype, pack_f32(src, nb, c, n, dst), pack_f64(src, nb, c, n, dst));
}

void mxc__unpack_chunk(int dtype, const void *src, int64_t nb, int64_t c,
                       int64_t n, const void *bias, mxc__req req, void *dst) {
  DISPATCH(dtype, unpack_f32(src, nb, c, n, bias, req, dst),
           unpack_f64(src, nb, c, n, bias, req, dst));
}

void mxc__add_bias(int dtype, void *dst, int64_t nb, int64_t c, int64_t n,
                   const void *bias) {
  DISPATCH(dtype, add_bias_f32(dst, nb, c, n, bias),
           add_bias_f64(dst, nb, c, n, bias));
}

void mxc__sum_bias(int dtype, const void *src, int64_t nb, int64_t c, int64_t n,
                   mxc__req req, void *db) {
  DISPATCH(dtype, sum_bias_f32(src, nb, c, n, req, db),
           sum_bias_f64(src, nb, c, n, req, db));
}

void mxc__clear_unless_add(void *p, size_t nbytes, mxc__req req) {
  if (req != MXC__REQ_ADD && nbytes) memset(p, 0, nbytes);
}

/* ---- geometry ---- */

/* *acc *= v, failing on overflow. */
static int mul_into(int64_t *acc, int64_t v) { return mxc__mul_i64(*acc, v, acc); }

/* The kernels size their buffers from the column matrix of one sample,
 * (img_c * k_n + col_c) rows of col_n entries (conv_work_plan,
 * deconv_sizes_of), and index images by img_c * img_n: these products
 * must fit in int64 bytes of the widest dtype, even for a batch of 0. */
static int geom_bounded(const mxc__conv_geom *g) {
  int64_t rows = g->img_c, c = g->col_c, bytes = 8;
  return mul_into(&rows, g->k_n) && mxc__add_i64(rows, g->col_c, &rows) &&
         mul_into(&bytes, rows) && mul_into(&bytes, g->col_n) &&
         mul_into(&c, g->col_n) && mul_into(&c, 8) &&
         mxc__mul_i64(g->img_c, g->img_n, &rows) && mul_into(&rows, 8);
}

int mxc__conv_geom_fill(const char *op_name, const mxc__conv_param *p,
                        const int64_t *pad, int64_t batch, int64_t img_c,
                        int64_t col_c, const int64_t *img, const int64_t *col,
                        mxc__conv_geom *g) {
  int nsp = p->kernel.ndim;
  int lead = 3 - nsp;
  int ok = 1;
  memset(g, 0, sizeof *g);
  g->nsp = nsp;
  g->batch = batch;
  g->img_c = img_c;
  g->col_c = col_c;
  g->groups = p->num_group;
  g->img_n = g->col_n = g->k_n = 1;
  for (int i = 0; i < 3; ++i) {
    int j = i - lead; /* index into the parameters, < 0 for padding dims */
    g->img[i] = j < 0 ? 1 : img[j];
    g->col[i] = j < 0 ? 1 : col[j];
    g->k[i] = j < 0 ? 1 : p->kernel.d[j];
    g->s[i] = j < 0 ? 1 : p->stride.d[j];
    g->d[i] = j < 0 ? 1 : p->dilate.d[j];
    g->p[i] = j < 0 ? 0 : pad[j];
    ok = ok && mul_into(&g->img_n, g->img[i]) &&
         mul_into(&g->col_n, g->col[i]) && mul_into(&g->k_n, g->k[i]);
  }
  MXC_RETURN_ERROR_IF(!ok || !geom_bounded(g), MXC_ERR_SHAPE,
                      "operator '%s': the kernel (%lld channels x %lld "
                      "taps) over %lld positions per sample needs a column "
                      "matrix too large for int64 sizes",
                      op_name, (long long)img_c, (long long)g->k_n,
                      (long long)g->col_n);
  return MXC_OK;
}

/* How many samples one GEMM covers. Samples side by side widen the GEMM
 * for small images (LeNet's second layer has 64 positions per sample),
 * but the gathered columns should stay cache-resident. Measured on LeNet's
 * layers (2-core EPYC, OpenBLAS 0.3.21): about a thousand columns within
 * ~2 MiB beat one sample per GEMM (layer 1 by ~30% single-threaded), while
 * whole-batch GEMMs (megabytes of columns, K = 25 for layer 1) were up to
 * 2x slower. One sample per chunk is always allowed whatever its size. */
#ifndef CHUNK_TARGET_COLS
#define CHUNK_TARGET_COLS 1024
#endif
#ifndef CHUNK_MAX_BYTES
#define CHUNK_MAX_BYTES ((int64_t)2 << 20)
#endif

int64_t mxc__conv_chunk(const mxc__conv_geom *g, int64_t rows, size_t es) {
  if (g->batch <= 1 || g->col_n <= 0) return g->batch > 0 ? 1 : 0;
  int64_t nb = (CHUNK_TARGET_COLS + g->col_n - 1) / g->col_n;
  if (nb > g->batch) nb = g->batch;
  int64_t per_sample = rows * g->col_n * (int64_t)es;
  if (per_sample > 0 && nb * per_sample > CHUNK_MAX_BYTES) {
    nb = CHUNK_MAX_BYTES / per_sample;
  }
  return nb < 1 ? 1 : nb;
}
