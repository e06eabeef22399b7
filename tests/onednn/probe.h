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

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_ONEDNN_PROBE_H_ */
