/* Cases of tests/gradient (C, since internal headers are C11); each
 * returns the number of failed checks after printing them. */
#ifndef MXC_TESTS_GRADIENT_GRADIENT_CASES_H_
#define MXC_TESTS_GRADIENT_GRADIENT_CASES_H_

#ifdef __cplusplus
extern "C" {
#endif

int mxct_case_shared_input(void);
int mxct_case_mlp_slice(void);
int mxct_case_batchnorm_aux(void);
int mxct_case_graph_index(void);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GRADIENT_GRADIENT_CASES_H_ */
