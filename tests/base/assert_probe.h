/* Probes of MXC__ASSERT compiled both ways: each evaluates `cond`
 * through the macro, counting evaluations in *evaluated. */
#ifndef MXC_TESTS_BASE_ASSERT_PROBE_H_
#define MXC_TESTS_BASE_ASSERT_PROBE_H_

#ifdef __cplusplus
extern "C" {
#endif

void mxct_assert_on(int cond, int *evaluated);
void mxct_assert_off(int cond, int *evaluated);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_BASE_ASSERT_PROBE_H_ */
