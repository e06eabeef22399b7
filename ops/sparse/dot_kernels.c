/* The sparse dot kernels, instantiated from ops/sparse/dot_tmpl.h for
 * float32 / float64 values and int32 / int64 indices. */
#include <string.h>

#include "core/op/common.h"
#include "ops/sparse/dot.h"

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)

#define T float
#define I int32_t
#define SFX(name) CAT(name, f32_i32)
#include "ops/sparse/dot_tmpl.h"
#undef T
#undef I
#undef SFX

#define T float
#define I int64_t
#define SFX(name) CAT(name, f32_i64)
#include "ops/sparse/dot_tmpl.h"
#undef T
#undef I
#undef SFX

#define T double
#define I int32_t
#define SFX(name) CAT(name, f64_i32)
#include "ops/sparse/dot_tmpl.h"
#undef T
#undef I
#undef SFX

#define T double
#define I int64_t
#define SFX(name) CAT(name, f64_i64)
#include "ops/sparse/dot_tmpl.h"
#undef T
#undef I
#undef SFX

#define ENTRY(s)                                                         \
  {                                                                      \
    k_csr_dense_##s, k_csr_rsp_##s, k_csrT_dense_##s, k_csrT_reduce_##s, \
        k_dense_csr_##s, k_dense_csrT_##s, k_sampled_##s                 \
  }

const mxc__sdot_kernels mxc__sdot_table[2][2] = {
    {ENTRY(f32_i32), ENTRY(f32_i64)},
    {ENTRY(f64_i32), ENTRY(f64_i64)},
};
