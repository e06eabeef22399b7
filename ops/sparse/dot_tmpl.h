/* Template of the sparse dot kernels for one value type T and index type
 * I; ops/sparse/dot_kernels.c includes it once per pair with SFX(name)
 * giving the pair's names (hence no include guard). See ops/sparse/dot.h
 * for the job and what each range covers.
 *
 * Speed notes. The output width n (columns of the dense operand) is the
 * contiguous inner dimension everywhere. The hot loops (csr x dense and
 * the transposed product) work on 64-byte vectors (GCC vector extensions,
 * lowered to whatever the CPU clone has) in blocks of 4 vectors, then 1,
 * then a scalar tail. csr x dense keeps a 4-vector block of the output row
 * in named accumulators (registers) over the row's stored entries, two
 * entries per step so that consecutive additions to one accumulator do not
 * form a single dependency chain. Values accumulate in T (float32 stays
 * float32, like the dense GEMM). */

typedef T SFX(vec) __attribute__((vector_size(64)));
/* VL consecutive T at any address, as GCC's own intrinsics headers read
 * unaligned vectors: aligned like T, and may alias T. */
typedef T SFX(uvec)
    __attribute__((vector_size(64), aligned(sizeof(T)), may_alias));
#define VL ((int64_t)(64 / sizeof(T))) /* elements per vector */
/* Loads and stores are expressions, not helpers: GCC notes (-Wpsabi) that
 * a 64-byte vector argument or result is passed differently with and
 * without AVX-512, for every function that has one, inlined or not. */
#define VLOAD(p) (*(const SFX(uvec) *)(p))
#define VSTORE(p) (*(SFX(uvec) *)(p))

/* o[0..VL) = *v, or += when add. */
static inline __attribute__((always_inline)) void SFX(vput)(T *o,
                                                            const SFX(vec) *v,
                                                            int add) {
  if (add) {
    VSTORE(o) = VLOAD(o) + *v;
  } else {
    VSTORE(o) = *v;
  }
}

/* Columns [c0, c0 + 4 VL) of one output row of csr x dense: the sum over
 * the stored entries j in [lo, hi) of val[j] * b[idx[j], c0 ..]. */
static inline __attribute__((always_inline)) void SFX(row_block4)(
    const I *restrict idx, const T *restrict val, int64_t lo, int64_t hi,
    const T *restrict b, int64_t n, int64_t c0, T *restrict o, int add) {
  SFX(vec) a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
  int64_t j = lo;
  for (; j + 2 <= hi; j += 2) {
    const T v0 = val[j], v1 = val[j + 1];
    const T *b0 = b + (int64_t)idx[j] * n + c0;
    const T *b1 = b + (int64_t)idx[j + 1] * n + c0;
    a0 += v0 * VLOAD(b0) + v1 * VLOAD(b1);
    a1 += v0 * VLOAD(b0 + VL) + v1 * VLOAD(b1 + VL);
    a2 += v0 * VLOAD(b0 + 2 * VL) + v1 * VLOAD(b1 + 2 * VL);
    a3 += v0 * VLOAD(b0 + 3 * VL) + v1 * VLOAD(b1 + 3 * VL);
  }
  if (j < hi) {
    const T v0 = val[j];
    const T *b0 = b + (int64_t)idx[j] * n + c0;
    a0 += v0 * VLOAD(b0);
    a1 += v0 * VLOAD(b0 + VL);
    a2 += v0 * VLOAD(b0 + 2 * VL);
    a3 += v0 * VLOAD(b0 + 3 * VL);
  }
  SFX(vput)(o + c0, &a0, add);
  SFX(vput)(o + c0 + VL, &a1, add);
  SFX(vput)(o + c0 + 2 * VL, &a2, add);
  SFX(vput)(o + c0 + 3 * VL, &a3, add);
}

/* Columns [c0, c0 + VL). */
static inline __attribute__((always_inline)) void SFX(row_block1)(
    const I *restrict idx, const T *restrict val, int64_t lo, int64_t hi,
    const T *restrict b, int64_t n, int64_t c0, T *restrict o, int add) {
  SFX(vec) a0 = {0}, a1 = {0};
  int64_t j = lo;
  for (; j + 2 <= hi; j += 2) {
    a0 += val[j] * VLOAD(b + (int64_t)idx[j] * n + c0);
    a1 += val[j + 1] * VLOAD(b + (int64_t)idx[j + 1] * n + c0);
  }
  if (j < hi) a0 += val[j] * VLOAD(b + (int64_t)idx[j] * n + c0);
  a0 += a1;
  SFX(vput)(o + c0, &a0, add);
}

/* Columns [c0, c0 + w), w < VL. */
static inline void SFX(row_tail)(const I *restrict idx, const T *restrict val,
                                 int64_t lo, int64_t hi, const T *restrict b,
                                 int64_t n, int64_t c0, int64_t w,
                                 T *restrict o, int add) {
  T acc[64 / sizeof(T)] = {0};
  for (int64_t j = lo; j < hi; ++j) {
    const T v = val[j], *br = b + (int64_t)idx[j] * n + c0;
    for (int64_t q = 0; q < w; ++q) acc[q] += v * br[q];
  }
  for (int64_t q = 0; q < w; ++q) o[c0 + q] = add ? o[c0 + q] + acc[q] : acc[q];
}

/* Rows [r0, r1) of csr x dense. */
static MXC__CPU_CLONES void SFX(csr_dense_rows)(
    const I *restrict ptr, const I *restrict idx, const T *restrict val,
    const T *restrict b, T *restrict out, int64_t n, int64_t r0, int64_t r1,
    int add) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t lo = ptr[r], hi = ptr[r + 1];
    T *restrict o = out + r * n;
    int64_t c0 = 0;
    for (; c0 + 4 * VL <= n; c0 += 4 * VL) {
      SFX(row_block4)(idx, val, lo, hi, b, n, c0, o, add);
    }
    for (; c0 + VL <= n; c0 += VL) {
      SFX(row_block1)(idx, val, lo, hi, b, n, c0, o, add);
    }
    if (c0 < n) SFX(row_tail)(idx, val, lo, hi, b, n, c0, n - c0, o, add);
  }
}

/* o[0..n) += v * x[0..n). */
static inline __attribute__((always_inline)) void SFX(axpy)(T *restrict o, T v,
                                                            const T *restrict x,
                                                            int64_t n) {
  int64_t c = 0;
  for (; c + 4 * VL <= n; c += 4 * VL) {
    VSTORE(o + c) = VLOAD(o + c) + v * VLOAD(x + c);
    VSTORE(o + c + VL) = VLOAD(o + c + VL) + v * VLOAD(x + c + VL);
    VSTORE(o + c + 2 * VL) =
        VLOAD(o + c + 2 * VL) + v * VLOAD(x + c + 2 * VL);
    VSTORE(o + c + 3 * VL) =
        VLOAD(o + c + 3 * VL) + v * VLOAD(x + c + 3 * VL);
  }
  for (; c + VL <= n; c += VL) {
    VSTORE(o + c) = VLOAD(o + c) + v * VLOAD(x + c);
  }
  for (; c < n; ++c) o[c] += v * x[c];
}

/* transpose(csr) x dense, slice s of the csr rows: every stored (r, c)
 * adds val * b[r, :] to row c (or out_row[c]) of slice s's output. Slice
 * 0 writes the output itself, the others private partial outputs that
 * reduce_rows adds in afterwards: each row of b (the large operand) is
 * read once, and slices never write the same memory. */
static MXC__CPU_CLONES void SFX(csrT_slice)(const mxc__sdot_job *jb,
                                            int64_t s) {
  const I *restrict ptr = jb->ptr, *restrict idx = jb->idx;
  const T *restrict val = jb->val, *restrict b = jb->dense;
  T *restrict out = jb->slices[s];
  const int64_t *map = jb->out_row, n = jb->n;
  const int64_t r0 = jb->rows * s / jb->n_slices,
                r1 = jb->rows * (s + 1) / jb->n_slices;
  if ((s > 0 || !jb->add) && jb->out_rows * n > 0) {
    memset(out, 0, sizeof(T) * (size_t)(jb->out_rows * n));
  }
  for (int64_t r = r0; r < r1; ++r) {
    const T *restrict br = b + r * n;
    for (int64_t j = ptr[r]; j < ptr[r + 1]; ++j) {
      int64_t c = idx[j];
      SFX(axpy)(out + (map ? map[c] : c) * n, val[j], br, n);
    }
  }
}

/* Output rows [i0, i1) of the transposed product: the partial outputs of
 * slices 1.. added into slice 0's (the output). */
static MXC__CPU_CLONES void SFX(reduce_rows)(const mxc__sdot_job *jb,
                                             int64_t i0, int64_t i1) {
  T *restrict out = jb->slices[0];
  const int64_t n = jb->n;
  for (int s = 1; s < jb->n_slices; ++s) {
    const T *restrict part = jb->slices[s];
    for (int64_t i = i0; i < i1; ++i) {
      SFX(axpy)(out + i * n, (T)1, part + i * n, n);
    }
  }
}

/* Position of row c among the row_sparse operand's stored rows, searching
 * from `from` on (callers look rows up in increasing order); -1 if it is
 * not stored. *next is where the next search may start. */
static inline int64_t SFX(rsp_find)(const mxc__sdot_job *jb, int64_t from,
                                    int64_t c, int64_t *next) {
  int64_t lo = from, hi = jb->rnnz;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int64_t x = jb->ridx64 ? ((const int64_t *)jb->ridx)[mid]
                           : ((const int32_t *)jb->ridx)[mid];
    if (x < c) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *next = lo;
  if (lo == jb->rnnz) return -1;
  int64_t x = jb->ridx64 ? ((const int64_t *)jb->ridx)[lo]
                         : ((const int32_t *)jb->ridx)[lo];
  return x == c ? lo : -1;
}

/* Rows [r0, r1) of csr x row_sparse: rows of rhs that are not stored are
 * zero and contribute nothing. */
static void SFX(csr_rsp_rows)(const mxc__sdot_job *jb, int64_t r0, int64_t r1) {
  const I *restrict ptr = jb->ptr, *restrict idx = jb->idx;
  const T *restrict val = jb->val, *restrict rv = jb->rval;
  T *restrict out = jb->out;
  const int64_t n = jb->n;
  for (int64_t r = r0; r < r1; ++r) {
    T *restrict o = out + r * n;
    if (!jb->add && n > 0) memset(o, 0, sizeof(T) * (size_t)n);
    int64_t from = 0;
    for (int64_t j = ptr[r]; j < ptr[r + 1]; ++j) {
      int64_t pos = SFX(rsp_find)(jb, from, idx[j], &from);
      if (pos >= 0) SFX(axpy)(o, val[j], rv + pos * n, n);
    }
  }
}

/* Rows [i0, i1) of dense x csr: out[i, :] = sum_kk lhs[i, kk] * csr[kk, :],
 * scattered into the output row. Zeros of lhs are not skipped, so NaN and
 * infinity propagate as in the dense product. */
static void SFX(dense_csr_rows)(const mxc__sdot_job *jb, int64_t i0,
                                int64_t i1) {
  const I *restrict ptr = jb->ptr, *restrict idx = jb->idx;
  const T *restrict val = jb->val, *restrict a = jb->dense;
  T *restrict out = jb->out;
  const int64_t n = jb->n, k = jb->rows;
  for (int64_t i = i0; i < i1; ++i) {
    T *restrict o = out + i * n;
    if (!jb->add && n > 0) memset(o, 0, sizeof(T) * (size_t)n);
    const T *restrict ar = a + i * k;
    for (int64_t kk = 0; kk < k; ++kk) {
      const T av = ar[kk];
      for (int64_t j = ptr[kk]; j < ptr[kk + 1]; ++j) o[idx[j]] += av * val[j];
    }
  }
}

/* Rows [i0, i1) of dense x transpose(csr): out[i, r] = lhs[i, :] . csr[r, :],
 * a gather over each stored row. */
static void SFX(dense_csrT_rows)(const mxc__sdot_job *jb, int64_t i0,
                                 int64_t i1) {
  const I *restrict ptr = jb->ptr, *restrict idx = jb->idx;
  const T *restrict val = jb->val, *restrict a = jb->dense;
  T *restrict out = jb->out;
  const int64_t n = jb->n, k = jb->cols;
  for (int64_t i = i0; i < i1; ++i) {
    const T *restrict ar = a + i * k;
    T *restrict o = out + i * n;
    for (int64_t r = 0; r < n; ++r) {
      T s = 0;
      for (int64_t j = ptr[r]; j < ptr[r + 1]; ++j) s += ar[idx[j]] * val[j];
      o[r] = jb->add ? o[r] + s : s;
    }
  }
}

/* Rows [r0, r1) of the sampled product (the gradient of a csr operand,
 * kept to its stored entries): out[j] = x[r, :] . y[c, :]. */
static void SFX(sampled_rows)(const mxc__sdot_job *jb, int64_t r0, int64_t r1) {
  const I *restrict ptr = jb->ptr, *restrict idx = jb->idx;
  const T *restrict x = jb->dense, *restrict y = jb->dense2;
  T *restrict out = jb->out;
  const int64_t n = jb->n;
  for (int64_t r = r0; r < r1; ++r) {
    const T *restrict xr = x + r * n;
    for (int64_t j = ptr[r]; j < ptr[r + 1]; ++j) {
      const T *restrict yc = y + (int64_t)idx[j] * n;
      T s = 0;
      for (int64_t q = 0; q < n; ++q) s += xr[q] * yc[q];
      out[j] = s;
    }
  }
}

/* Range functions (mxc__parallel_fn); the kernels cannot fail. */
static int SFX(k_csr_dense)(void *arg, int64_t b, int64_t e) {
  const mxc__sdot_job *j = arg;
  SFX(csr_dense_rows)
  (j->ptr, j->idx, j->val, j->dense, j->out, j->n, b, e, j->add);
  return MXC_OK;
}

static int SFX(k_csr_rsp)(void *arg, int64_t b, int64_t e) {
  SFX(csr_rsp_rows)(arg, b, e);
  return MXC_OK;
}

static int SFX(k_csrT_dense)(void *arg, int64_t b, int64_t e) {
  for (int64_t s = b; s < e; ++s) SFX(csrT_slice)(arg, s);
  return MXC_OK;
}

static int SFX(k_csrT_reduce)(void *arg, int64_t b, int64_t e) {
  SFX(reduce_rows)(arg, b, e);
  return MXC_OK;
}

static int SFX(k_dense_csr)(void *arg, int64_t b, int64_t e) {
  SFX(dense_csr_rows)(arg, b, e);
  return MXC_OK;
}

static int SFX(k_dense_csrT)(void *arg, int64_t b, int64_t e) {
  SFX(dense_csrT_rows)(arg, b, e);
  return MXC_OK;
}

static int SFX(k_sampled)(void *arg, int64_t b, int64_t e) {
  SFX(sampled_rows)(arg, b, e);
  return MXC_OK;
}

#undef VL
#undef VLOAD
#undef VSTORE
