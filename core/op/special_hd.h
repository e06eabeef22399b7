/* The special functions libm lacks, inverse error function and digamma,
 * as one text for the CPU (core/op/vmath.c's mxc__erfinv, mxc__digamma,
 * which the erfinv, gamma and gammaln operators call) and the CUDA
 * plug-in's kernels (backends/cuda/unary_hd.h, compiled by nvcc for the
 * device too). Header-only because the plug-in cannot call libmxc's
 * hidden functions; one text keeps the two devices' algorithms equal, so
 * they differ only by their libm's erf, exp, log and tan (a few double
 * ulps). An includer may define MXC__SP_HD (e.g. __host__ __device__)
 * first; the includer provides <math.h>. Thread-safety: pure. */
#ifndef MXC_CORE_OP_SPECIAL_HD_H_
#define MXC_CORE_OP_SPECIAL_HD_H_

#ifndef MXC__SP_HD
#define MXC__SP_HD static inline
#endif

/* pi, spelled out: M_PI is not standard C nor visible to nvcc's device
 * code everywhere. */
#define MXC__SP_PI 3.14159265358979323846

/* Giles' single-precision approximation of erfinv: the initial guess. */
MXC__SP_HD double mxc__sp_erfinv_guess(double x) {
  double w = -log((1.0 - x) * (1.0 + x));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  return p * x;
}

/* Inverse error function on (-1, 1); +-inf at +-1, NaN outside: the
 * guess, then two Newton steps on erf(y) - x, which bring it to double
 * precision. */
MXC__SP_HD double mxc__sp_erfinv(double x) {
  if (isnan(x) || x < -1 || x > 1) return NAN;
  if (x == 1) return INFINITY;
  if (x == -1) return -INFINITY;
  double y = mxc__sp_erfinv_guess(x);
  for (int i = 0; i < 2; ++i) {
    double err = erf(y) - x;
    y -= err / (1.12837916709551257390 * exp(-y * y));
  }
  return y;
}

/* Digamma (psi), the derivative of lgamma: reflection below 0, the
 * recurrence up to 6, then the asymptotic series. */
MXC__SP_HD double mxc__sp_digamma(double x) {
  if (isnan(x) || isinf(x)) return x == INFINITY ? INFINITY : NAN;
  double result = 0;
  if (x <= 0) {
    if (x == floor(x)) return NAN; /* poles */
    /* Reflection: psi(1 - x) - psi(x) = pi cot(pi x). */
    result = -MXC__SP_PI / tan(MXC__SP_PI * x);
    x = 1 - x;
  }
  while (x < 6) { /* recurrence psi(x) = psi(x + 1) - 1/x */
    result -= 1 / x;
    x += 1;
  }
  double f = 1 / (x * x);
  double t = f * (-1.0 / 12 +
                  f * (1.0 / 120 +
                       f * (-1.0 / 252 +
                            f * (1.0 / 240 + f * (-1.0 / 132)))));
  return result + log(x) - 0.5 / x + t;
}

#endif /* MXC_CORE_OP_SPECIAL_HD_H_ */
