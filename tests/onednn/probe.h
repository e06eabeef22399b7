/* The C side of test_onednn.cc: what the test reads of the oneDNN
 * backend's internals. */
#ifndef MXC_TESTS_ONEDNN_PROBE_H_
#define MXC_TESTS_ONEDNN_PROBE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Calls picked on this thread use reference kernels only (1) or any. */
void od_reference_only(int on);
/* Primitive cache lookups so far (hits + misses): grows when a oneDNN
 * kernel ran. */
int64_t od_lookups(void);
void od_cache_stats(int *entries, int *capacity, int64_t *hits,
                    int64_t *misses);
void od_cache_set_capacity(int capacity);
/* Name of the i-th operator (registry order) with a oneDNN kernel, or
 * NULL past the last. */
const char *od_attached(int i);
/* 1 when the backend is on (MXC_ONEDNN is not 0). */
int od_enabled(void);
/* The reordered-weights cache: entries, hits, misses. */
void od_weights_stats(int *entries, int64_t *hits, int64_t *misses);
/* The kept max-pooling workspaces: entries, backward hits, misses. */
void od_pool_ws_stats(int *entries, int64_t *hits, int64_t *misses);

/* The fused operators' builders with post-ops: `act` an Activation name
 * or NULL, `sum` NULL or an array of the output's shape. od_conv_post
 * runs Convolution (parameters as keys/vals; b NULL with no_bias) of x
 * (shape xs, xnd axes) and w (ws) into y (ys); od_fc_post the inner
 * product of x (rows, k) and w (h, k) into y (rows, h). MXC_OK or the
 * error (mxc_last_error has its message). */
int od_conv_post(const char *const *keys, const char *const *vals, int n,
                 const float *x, const int64_t *xs, const float *w,
                 const int64_t *ws, const float *b, const float *sum,
                 const char *act, float *y, const int64_t *ys, int nd);
int od_fc_post(const float *x, const float *w, const float *b,
               const float *sum, const char *act, int64_t rows, int64_t k,
               int64_t h, float *y);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_ONEDNN_PROBE_H_ */
