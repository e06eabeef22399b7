/* The C side of test_backend.cc: test backends registered from a
 * constructor, and probes of the internal kernel tables. */
#ifndef MXC_TESTS_BACKEND_TEST_BACKENDS_H_
#define MXC_TESTS_BACKEND_TEST_BACKENDS_H_

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

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_BACKEND_TEST_BACKENDS_H_ */
