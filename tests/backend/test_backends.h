/* The C side of test_backend.cc: test backends registered from a
 * constructor, and probes of the internal kernel tables. */
#ifndef MXC_TESTS_BACKEND_TEST_BACKENDS_H_
#define MXC_TESTS_BACKEND_TEST_BACKENDS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int tb_register_rc(void);
int tb_add_calls(void);
int tb_relu_calls(void);
int tb_register_late(void);
const char *tb_kernel_backend(const char *name, int i);
int tb_supported(const char *name, int dev_type, int dtype, int stype);
int tb_compare_all(double *worst);

/* Channels-last conversions (core/op/format.h) of a float32 array of
 * these dims filled with its plain indices, against index arithmetic
 * written here: the number of misplaced elements (0 when right). */
int tb_fmt_mismatches(int ndim, const int64_t *dims);
/* mxc__fmt_compute around a plain kernel computing out = 2 * in + out
 * (req add) on channels-last (N, C, H, W) blobs: misplaced elements. */
int tb_fmt_compute_mismatches(void);
/* bfloat16 channels-last: integers (exact in bfloat16) placed and read
 * back, and three roundings (ties to even, up, down) checked: failures. */
int tb_fmt_bf16_mismatches(void);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_BACKEND_TEST_BACKENDS_H_ */
