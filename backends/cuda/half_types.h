/* Which calls the plug-in's half-aware kernels take (the kernel rows'
 * `supports`, core/base/gpu_plugin.h), and the dtype slot their .cu
 * dispatch tables are indexed by. Plain C with no CUDA header, built and
 * host-tested on every machine (tests/gpu:test_cuda_bcast_plan).
 *
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_HALF_TYPES_H_
#define MXC_BACKENDS_CUDA_HALF_TYPES_H_

#ifdef __cplusplus
extern "C" {
#endif

/* The slots of the dtype-dispatched launch tables. */
enum { MXC__HALF_SLOT_F32, MXC__HALF_SLOT_F16, MXC__HALF_SLOT_BF16 };

/* The slot of dtype dt (float32, float16, bfloat16), or -1 for another. */
int mxc__half_slot(int dt);

/* A kernel row's supports: 1 when every input and output whose dtype is
 * decided (not -1) has one and the same dtype, float32, float16 or
 * bfloat16, as the CPU operators' type inference asks of these operators
 * (mxc__infer_type_float_or_half, the element-wise operators' same-dtype
 * rule); 0 otherwise (the call then stays off this kernel). dtypes holds
 * n_in inputs, then n_out outputs. */
int mxc__half_supports_same(const int *dtypes, int n_in, int n_out);

/* The Cast rows' supports (cast.h): the input to convert (input 0) and
 * the output are each float32, float64, float16 or bfloat16 (or not
 * decided yet); _backward_Cast's second input (data, which lends its
 * dtype) is not read. */
int mxc__half_supports_cast(const int *dtypes, int n_in, int n_out);

/* The slot of the Cast kernels' tables (cast.cu): 0 float32, 1 float16,
 * 2 bfloat16 (as mxc__half_slot), 3 float64; -1 for another dtype. */
int mxc__cast_slot(int dt);

#ifdef __cplusplus
}
#endif

#endif /* MXC_BACKENDS_CUDA_HALF_TYPES_H_ */
