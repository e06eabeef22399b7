/* Initializer pieces for operator descriptors (core/op/op.h).
 *
 * Families describe their operators as static const mxc__op data, often
 * through macros that build a forward operator and its hidden backward
 * operator from one row of a table. These are the parts those macros all
 * repeated: counts taken from the arrays they count (a count written by
 * hand goes stale when a parameter or an in-place pair is added) and the
 * naming of backward operators. Each expands to designated initializers,
 * for use inside the braces of an mxc__op; everything stays constant data
 * built at compile time. */
#ifndef MXC_CORE_OP_DESCRIBE_H_
#define MXC_CORE_OP_DESCRIBE_H_

#include "core/op/op.h"

/* Number of elements of an array (an array, not a pointer), as an int
 * constant expression. */
#define MXC__COUNT(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))

/* A parameter table and its length. */
#define MXC__PARAMS(table) .params = (table), .n_params = MXC__COUNT(table)

/* A parameter table, its length and the struct it fills. */
#define MXC__PARAMS_OF(st, table) \
  MXC__PARAMS(table), .param_size = sizeof(st)

/* In-place pairs ({input, output} rows) and their count. */
#define MXC__INPLACE(pairs) .inplace = (pairs), .n_inplace = MXC__COUNT(pairs)

/* The hidden backward operator of the forward operator called fwd_name
 * (a string literal): "_backward_<fwd_name>", documented by doc_. */
#define MXC__BACKWARD_DOC(fwd_name, doc_) \
  .name = "_backward_" fwd_name, .doc = doc_, .hidden = 1

/* The same with the usual doc, "Gradient of <fwd_name>.". */
#define MXC__BACKWARD(fwd_name) \
  MXC__BACKWARD_DOC(fwd_name, "Gradient of " fwd_name ".")

#endif /* MXC_CORE_OP_DESCRIBE_H_ */
