/* Storage fallback: how mxc__op_invoke runs an operator on sparse arrays
 * it has no kernel for (see core/op/invoke.h for the contract). Sparse
 * inputs are cast to dense temporaries, the dense kernel runs into dense
 * arrays, and results meant for sparse given outputs (and sparse inputs
 * the operator updates in place) are cast back. Everything is pushed,
 * nothing waited for: temporaries are freed at once and live until their
 * work is done. Each distinct case (operator, input and output storage
 * types) is logged once; MXC_STORAGE_FALLBACK_LOG=0 silences the log. */
#ifndef MXC_CORE_OP_FALLBACK_H_
#define MXC_CORE_OP_FALLBACK_H_

#include "core/ndarray/ndarray.h"
#include "core/op/op.h"

/* 1 when an input or a given output (given[i] may be NULL) is sparse. */
int mxc__op_has_sparse(mxc__ndarray *const *in, int n_in,
                       mxc__ndarray *const *given, int n_total);

/* The fallback for a call whose shapes and dtypes invoke has checked;
 * arguments as for mxc__op_invoke. Outputs it creates are dense. On
 * failure, out is untouched; given outputs may have been written when a
 * cast back failed after the kernel was pushed (allocation failure
 * only). */
int mxc__op_fallback(const mxc__op *op, const void *param,
                     mxc__ndarray *const *in, int n_in, mxc__ndarray **out,
                     int n_out, const mxc__req *req);

/* For tests: forgets the fallback cases already logged (both
 * fallbacks') and reads MXC_STORAGE_FALLBACK_LOG, MXC_DEVICE_FALLBACK_LOG
 * and MXC_DEVICE_FALLBACK again at their next use. */
void mxc__fallback_log_reset(void);

/* ---- device fallback (core/op/device_fallback.c) ----
 * A dense call on a GPU whose operator has no kernel there runs on the
 * CPU: each input is copied to a host array, the CPU kernel runs on those
 * (mxc__op_invoke on the CPU), and each written output (and each input
 * the operator updates) is copied back; for req add the output's values
 * are copied to the host first and the CPU kernel adds to them. All of it
 * is pushed through the engine's ordered copies (mxc__ndarray_copy), none
 * waited for; host code never touches device memory. */

/* 0 when the environment variable MXC_DEVICE_FALLBACK is "0": such calls
 * are then refused as before the fallback existed (for comparisons and
 * for the conformance suite, which must test GPU kernels). Read once. */
int mxc__device_fallback_enabled(void);

/* Runs the call through the CPU as above (why: the reason the device's
 * kernel declined it, for the log; NULL or "" when it has none).
 * Arguments as for mxc__op_invoke,
 * after invoke checked counts, devices (every array on dev) and inferred
 * itype[0..n_in) and otype[0..n_total); outputs it creates are on dev.
 * On failure out is untouched (arrays it made are freed); given outputs
 * may have been written when a copy back failed to be pushed (allocation
 * failure only). Failures while the work runs (a copy, the CPU kernel)
 * surface at the next wait, naming the operator. */
int mxc__op_device_fallback(const mxc__op *op, const void *param,
                            mxc__ndarray *const *in, int n_in,
                            mxc__ndarray **out, int n_out,
                            const mxc__req *req, mxc__device dev,
                            const int *itype, const int *otype, int n_total,
                            const char *why);

/* One MXC_LOG_WARNING line per distinct case (operator, input and output
 * dtypes, device, and why: the reason the device's kernel declined the
 * call, NULL or "" when it has none), unless MXC_DEVICE_FALLBACK_LOG=0;
 * the storage fallback's bounded table of logged cases. */
void mxc__device_fallback_log(const mxc__op *op, const void *param,
                              const int *itype, int n_in, const int *otype,
                              int n_out, mxc__device dev, const char *why);

#endif /* MXC_CORE_OP_FALLBACK_H_ */
