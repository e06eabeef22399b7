/* Parameter initializers: fill an array with constants or random values.
 *
 * Random methods reserve their slice of the global Philox stream in the
 * calling thread, at call time, and push one engine function that writes
 * the array. So the values depend only on the seed and the order of calls,
 * never on the engine kind or the number of workers, and the call returns
 * without waiting.
 *
 * Methods and keys (see mxc.h for the meaning of each): zeros, ones,
 * constant (value), uniform (scale), normal (sigma), xavier (rnd_type,
 * factor_type, magnitude), msra (factor_type, slope).
 *
 * Thread-safety: may be called from any thread. */
#ifndef MXC_CORE_TRAIN_INIT_H_
#define MXC_CORE_TRAIN_INIT_H_

#include "core/ndarray/ndarray.h"

/* Validates method and parameters against a's shape and dtype (float32 or
 * float64, dense), then schedules the fill. Errors name the method and, for
 * an unknown key, list the accepted ones. Nothing is scheduled and no
 * random numbers are consumed on failure. */
int mxc__init_array(const mxc__ndarray *a, const char *method,
                    const char *const *keys, const char *const *vals,
                    int n_params);

#endif /* MXC_CORE_TRAIN_INIT_H_ */
