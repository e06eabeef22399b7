#include "ops/elemwise/special.h"

#include <math.h>

double mxc__erfinv(double x) {
  if (isnan(x) || x < -1 || x > 1) return NAN;
  if (x == 1) return INFINITY;
  if (x == -1) return -INFINITY;
  /* Initial guess from Giles' single-precision approximation, then two
   * Newton steps on erf(y) - x, which bring it to double precision. */
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
  double y = p * x;
  for (int i = 0; i < 2; ++i) {
    double err = erf(y) - x;
    y -= err / (1.12837916709551257390 * exp(-y * y));
  }
  return y;
}

double mxc__digamma(double x) {
  if (isnan(x) || isinf(x)) return x == INFINITY ? INFINITY : NAN;
  double result = 0;
  if (x <= 0) {
    if (x == floor(x)) return NAN; /* poles */
    /* Reflection: psi(1 - x) - psi(x) = pi cot(pi x). */
    result = -M_PI / tan(M_PI * x);
    x = 1 - x;
  }
  while (x < 6) { /* recurrence psi(x) = psi(x + 1) - 1/x */
    result -= 1 / x;
    x += 1;
  }
  /* Asymptotic series. */
  double f = 1 / (x * x);
  double t = f * (-1.0 / 12 +
                  f * (1.0 / 120 +
                       f * (-1.0 / 252 +
                            f * (1.0 / 240 + f * (-1.0 / 132)))));
  return result + log(x) - 0.5 / x + t;
}
