/* C shim for the C++ graph tests: internal graph passes on public symbol
 * handles (the internal headers are C11 and not usable from C++). Each
 * function returns MXC_OK or the failing call's code; `report` receives a
 * description of anything found wrong ("" when nothing). */
#ifndef MXC_TESTS_GRAPH_GRAPH_SHIM_H_
#define MXC_TESTS_GRAPH_GRAPH_SHIM_H_

#include <stddef.h>
#include <stdint.h>

#include "mxc/mxc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mxc__parse_shape_attr: 1 and the shape, or 0. */
int mxct_parse_shape_attr(const char *s, int *ndim, int64_t *dims);

/* Infers the shapes of sym's graph with only its first output's shape
 * known (ndim/dims); reports entries left unknown or not equal to it
 * (for element-wise graphs where every entry shares the output's shape). */
int mxct_infer_from_output(mxc_symbol sym, int ndim, const int64_t *dims,
                           char *report, size_t len);

/* Builds sym's outputs plus the gradients of all its arguments (head
 * gradients: variables), infers shapes from argument `data` (ndim/dims),
 * dtypes from float32 data, and storage types; reports entries left
 * unknown and gradients whose shape differs from their argument's. */
int mxct_check_full_graph(mxc_symbol sym, const char *data, int ndim,
                          const int64_t *dims, char *report, size_t len);

/* Lists public operators without infer_shape, and hidden
 * "_backward_<name>" operators without infer_shape; *checked = how many
 * backward operators were found. */
void mxct_backward_ops_without_infer(char *report, size_t len, int *checked);

#ifdef __cplusplus
}
#endif

#endif /* MXC_TESTS_GRAPH_GRAPH_SHIM_H_ */
