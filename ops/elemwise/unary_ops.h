/* The element-wise unary operators' one list, shared by the CPU kernels
 * (ops/elemwise/unary.c, which includes <tgmath.h> before this header so
 * that a float x calls the float functions) and the CUDA plug-in's kernels
 * (backends/cuda/unary.cu, whose C++ overloads do the same on the device):
 * the per-element code of each operator is written once for both devices.
 *
 *   X(name, forward(x), derivative(x, y), integer types allowed, doc)
 *
 * x is the input, y the output f(x), both of the computation type (float
 * or double). The list is cut in three so that a device without the
 * special functions of core/op/vmath.h (erfinv, digamma) and lgamma_r can
 * take MXC__UNARY_OPS_MAIN and MXC__UNARY_OPS_LAST alone; UNARY_OPS is
 * every operator in registration order. The expressions name SGN and PI
 * below, and rint_mxnet (each file defines it), lgamma_local,
 * mxc__erfinv and mxc__digamma (the special ones only).
 *
 * Plain macros, no code: thread-safety does not apply. */
#ifndef MXC_OPS_ELEMWISE_UNARY_OPS_H_
#define MXC_OPS_ELEMWISE_UNARY_OPS_H_

#define PI 3.14159265358979323846

/* sign as a value of x's type */
#define SGN(x) (((x) > 0) - ((x) < 0))

#define MXC__UNARY_OPS_MAIN(X)                                                 \
  X(abs, fabs(x), SGN(x), 1, "Absolute value |x|.")                            \
  X(sign, SGN(x), 0, 1, "Sign of x: -1, 0 or 1.")                              \
  X(negative, -x, -1, 1, "Negation -x.")                                       \
  X(relu, (x > 0 || x != x ? x : 0), (x != x ? x : x > 0), 1,                  \
    "Rectified linear unit max(x, 0); NaN stays NaN, as in MXNet.")            \
  X(sigmoid, 1 / (1 + exp(-x)), y * (1 - y), 0, "Logistic 1/(1+e^-x).")        \
  X(tanh, tanh(x), 1 - y * y, 0, "Hyperbolic tangent.")                        \
  X(softsign, x / (1 + fabs(x)), 1 / ((1 + fabs(x)) * (1 + fabs(x))), 0,       \
    "x / (1 + |x|).")                                                          \
  X(softrelu, (x > 20 ? x : log1p(exp(x))), 1 / (1 + exp(-x)), 0,              \
    "Softplus log(1 + e^x).")                                                  \
  X(exp, exp(x), y, 0, "e^x.")                                                 \
  X(expm1, expm1(x), y + 1, 0, "e^x - 1, accurate near 0.")                    \
  X(log, log(x), 1 / x, 0, "Natural logarithm.")                               \
  X(log1p, log1p(x), 1 / (1 + x), 0, "log(1 + x), accurate near 0.")           \
  X(log2, log2(x), 1 / (x * 0.69314718055994530942), 0, "Base-2 log.")         \
  X(log10, log10(x), 1 / (x * 2.30258509299404568402), 0, "Base-10 log.")      \
  X(sqrt, sqrt(x), 0.5 / y, 0, "Square root.")                                 \
  X(rsqrt, 1 / sqrt(x), -0.5 * y * y * y, 0, "1 / sqrt(x).")                   \
  X(cbrt, cbrt(x), 1 / (3 * y * y), 0, "Cube root.")                           \
  X(square, x * x, 2 * x, 1, "x^2.")                                           \
  X(reciprocal, 1 / x, -y * y, 0, "1 / x.")                                    \
  X(sin, sin(x), cos(x), 0, "Sine.")                                           \
  X(cos, cos(x), -sin(x), 0, "Cosine.")                                        \
  X(tan, tan(x), 1 + y * y, 0, "Tangent.")                                     \
  X(arcsin, asin(x), 1 / sqrt(1 - x * x), 0, "Inverse sine.")                  \
  X(arccos, acos(x), -1 / sqrt(1 - x * x), 0, "Inverse cosine.")               \
  X(arctan, atan(x), 1 / (1 + x * x), 0, "Inverse tangent.")                   \
  X(sinh, sinh(x), cosh(x), 0, "Hyperbolic sine.")                             \
  X(cosh, cosh(x), sinh(x), 0, "Hyperbolic cosine.")                           \
  X(arcsinh, asinh(x), 1 / sqrt(x * x + 1), 0, "Inverse hyperbolic sine.")     \
  X(arccosh, acosh(x), 1 / sqrt(x * x - 1), 0, "Inverse hyperbolic cosine.")   \
  X(arctanh, atanh(x), 1 / (1 - x * x), 0, "Inverse hyperbolic tangent.")      \
  X(degrees, x * (180 / PI), (180 / PI), 0, "Radians to degrees.")             \
  X(radians, x * (PI / 180), (PI / 180), 0, "Degrees to radians.")             \
  X(floor, floor(x), 0, 0, "Largest integer <= x.")                            \
  X(ceil, ceil(x), 0, 0, "Smallest integer >= x.")                             \
  X(round, round(x), 0, 0, "Nearest integer, halves away from zero.")          \
  X(rint, rint_mxnet(x), 0, 0,                                                 \
    "Nearest integer; a half goes down (MXNet's rule: 1.5 -> 1, -1.5 -> -2).") \
  X(trunc, trunc(x), 0, 0, "Integer part, toward zero.")                       \
  X(fix, trunc(x), 0, 0, "Round toward zero (same as trunc).")                 \
  X(erf, erf(x), 1.12837916709551257390 * exp(-x * x), 0, "Error function.")

/* Special functions (mxc__erfinv, mxc__digamma, lgamma_r): CPU only. */
#define MXC__UNARY_OPS_SPECIAL(X)                                    \
  X(erfinv, mxc__erfinv(x), 0.88622692545275801365 * exp(y * y), 0,  \
    "Inverse error function.")                                       \
  X(gamma, tgamma(x), y * mxc__digamma(x), 0, "Gamma function.")     \
  X(gammaln, lgamma_local(x), mxc__digamma(x), 0, "log |Gamma(x)|.")

#define MXC__UNARY_OPS_LAST(X)                              \
  X(logical_not, (x == 0), 0, 1, "1 where x is 0, else 0.")

#define UNARY_OPS(X)       \
  MXC__UNARY_OPS_MAIN(X)    \
  MXC__UNARY_OPS_SPECIAL(X) \
  MXC__UNARY_OPS_LAST(X)

#endif /* MXC_OPS_ELEMWISE_UNARY_OPS_H_ */
