/* Evaluation metrics over whole arrays, computed synchronously in the
 * calling thread on host copies (so pending writes are waited for, and
 * failures of the work that produced the inputs are reported here).
 *
 * Thread-safety: may be called from any thread. */
#ifndef MXC_CORE_TRAIN_METRIC_H_
#define MXC_CORE_TRAIN_METRIC_H_

#include <stdint.h>

#include "core/ndarray/ndarray.h"

/* pred (N, K) scores (argmax per row, first maximum on ties) or (N) class
 * ids, label (N); both rounded to the nearest integer before comparing.
 * *correct = matching rows, *count = N. Outputs untouched on failure. */
int mxc__metric_accuracy(const mxc__ndarray *pred, const mxc__ndarray *label,
                         int64_t *correct, int64_t *count);

/* prob (N, K), label (N) with rounded values in [0, K); eps >= 0.
 * *sum = sum over rows of -log(max(prob[i, label_i], eps)), *count = N.
 * Outputs untouched on failure. */
int mxc__metric_cross_entropy(const mxc__ndarray *prob,
                              const mxc__ndarray *label, double eps,
                              double *sum, int64_t *count);

#endif /* MXC_CORE_TRAIN_METRIC_H_ */
