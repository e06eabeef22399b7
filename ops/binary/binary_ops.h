/* The element-wise binary operators' one list (MXC__BINARY_OPS), their
 * flags and the scalar forms' parameter: shared by the CPU's kernels
 * (ops/binary, through binary.h) and the CUDA plug-in's
 * (backends/cuda/scalar_hd.h, which expands the list with the float
 * helpers it names), so the per-element code of each operator is written
 * once for both devices. A leaf header: macros and one struct.
 *
 * Thread-safety: no code. */
#ifndef MXC_OPS_BINARY_BINARY_OPS_H_
#define MXC_OPS_BINARY_BINARY_OPS_H_

/* Operator flags. */
enum {
  MXC__BIN_INT = 1,  /* integer and bool inputs allowed */
  MXC__BIN_GRAD = 2, /* differentiable: has _backward_ operators */
  MXC__BIN_REV = 4   /* not commutative: has a _r<stem>_scalar form */
};

/* The operators, each declared once:
 *   X(name, stem, f(a, b), df/da, df/db, flags, doc, aliases...)
 * `stem` is MXNet's name in the scalar forms (_plus_scalar) and, where it
 * differs from `name`, an alias of the broadcast form (broadcast_plus).
 * Expressions see a and b of the computation type T: float (float32 and
 * the half types), double, or int64_t (integer types, forward only).
 * MXC__ADD, MXC__SUB, MXC__MUL, MXC__DIV, MXC__MOD, MXC__POW, MXC__MAX
 * and MXC__MIN pick
 * per-type helpers (kernels.c) where integer semantics differ: integers
 * wrap on overflow (core/base/dtype.h), never undefined behaviour. Comparisons and logical operators give 1 or 0
 * in the input dtype, as MXNet does; their derivatives are unused.
 * (& and | rather than && and || keep those loops branch-free, so they
 * vectorize.) */
#define MXC__BINARY_OPS(X)                                                   \
  X(add, plus, MXC__ADD(a, b), 1, 1, MXC__BIN_INT | MXC__BIN_GRAD, "a + b.",          \
    "elemwise_add", "_plus", "_add")                                         \
  X(sub, minus, MXC__SUB(a, b), 1, -1,                                                \
    MXC__BIN_INT | MXC__BIN_GRAD | MXC__BIN_REV, "a - b.", "elemwise_sub",   \
    "_minus", "_sub")                                                        \
  X(mul, mul, MXC__MUL(a, b), b, a, MXC__BIN_INT | MXC__BIN_GRAD, "a * b.",           \
    "elemwise_mul", "_mul")                                                  \
  X(div, div, MXC__DIV(a, b), 1 / b, -a / (b * b),                           \
    MXC__BIN_INT | MXC__BIN_GRAD | MXC__BIN_REV,                             \
    "a / b; integers truncate toward zero and give 0 for b = 0.",            \
    "elemwise_div", "_div")                                                  \
  X(mod, mod, MXC__MOD(a, b), 1, -floor(a / b),                              \
    MXC__BIN_INT | MXC__BIN_GRAD | MXC__BIN_REV,                             \
    "a mod b with the sign of b (Python's %); 0 where b = 0.", "_mod")       \
  X(power, power, MXC__POW(a, b), b * pow(a, b - 1), pow(a, b) * log(a),     \
    MXC__BIN_INT | MXC__BIN_GRAD | MXC__BIN_REV, "a raised to b.", "_power", \
    "pow")                                                                   \
  X(maximum, maximum, MXC__MAX(a, b), (a >= b), (a < b),                    \
    MXC__BIN_INT | MXC__BIN_GRAD,                                            \
    "max(a, b), NaN if either is NaN; a tie sends the gradient to a.", "_maximum")                 \
  X(minimum, minimum, MXC__MIN(a, b), (a <= b), (a > b),                    \
    MXC__BIN_INT | MXC__BIN_GRAD,                                            \
    "min(a, b), NaN if either is NaN; a tie sends the gradient to a.", "_minimum")                 \
  X(hypot, hypot, hypot(a, b), a / hypot(a, b), b / hypot(a, b),             \
    MXC__BIN_GRAD, "sqrt(a^2 + b^2) without overflow.", "_hypot")            \
  X(equal, equal, (a == b), 0, 0, MXC__BIN_INT, "1 where a == b, else 0.",   \
    "_equal")                                                                \
  X(not_equal, not_equal, (a != b), 0, 0, MXC__BIN_INT,                      \
    "1 where a != b, else 0.", "_not_equal")                                 \
  X(greater, greater, (a > b), 0, 0, MXC__BIN_INT, "1 where a > b, else 0.", \
    "_greater")                                                              \
  X(greater_equal, greater_equal, (a >= b), 0, 0, MXC__BIN_INT,              \
    "1 where a >= b, else 0.", "_greater_equal")                             \
  X(lesser, lesser, (a < b), 0, 0, MXC__BIN_INT, "1 where a < b, else 0.",   \
    "_lesser")                                                               \
  X(lesser_equal, lesser_equal, (a <= b), 0, 0, MXC__BIN_INT,                \
    "1 where a <= b, else 0.", "_lesser_equal")                              \
  X(logical_and, logical_and, ((a != 0) & (b != 0)), 0, 0, MXC__BIN_INT,    \
    "1 where a and b are both nonzero, else 0.", "_logical_and")             \
  X(logical_or, logical_or, ((a != 0) | (b != 0)), 0, 0, MXC__BIN_INT,      \
    "1 where a or b is nonzero, else 0.", "_logical_or")                     \
  X(logical_xor, logical_xor, ((a != 0) != (b != 0)), 0, 0, MXC__BIN_INT,    \
    "1 where exactly one of a and b is nonzero, else 0.", "_logical_xor")

/* The `scalar` parameter of the scalar forms. */
typedef struct mxc__bin_scalar_param {
  double scalar;
} mxc__bin_scalar_param;

#endif /* MXC_OPS_BINARY_BINARY_OPS_H_ */
