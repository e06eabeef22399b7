/* The kernel table's rows of the element-wise math kernels and the
 * strided copies (one line of plugin.c's table): the unary operators and
 * their gradients (unary.h), the binary operators' scalar and same-shape
 * forms (scalar.h), the copies (copy.h), where (index.h). */
#ifndef MXC_BACKENDS_CUDA_MATH_ROWS_H_
#define MXC_BACKENDS_CUDA_MATH_ROWS_H_

#include "backends/cuda/copy.h"
#include "backends/cuda/index.h"
#include "backends/cuda/scalar.h"
#include "backends/cuda/unary.h"

#define MXC__CUDA_MATH_ROWS \
  MXC__CUDA_UNARY_ROWS      \
  MXC__CUDA_SCALAR_ROWS     \
  MXC__CUDA_COPY_ROWS       \
  MXC__CUDA_INDEX_ROWS

#endif /* MXC_BACKENDS_CUDA_MATH_ROWS_H_ */
