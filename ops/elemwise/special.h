/* Special functions libm lacks. */
#ifndef MXC_OPS_ELEMWISE_SPECIAL_H_
#define MXC_OPS_ELEMWISE_SPECIAL_H_

/* Inverse error function on (-1, 1); +-inf at +-1, NaN outside. */
double mxc__erfinv(double x);

/* Digamma (psi), the derivative of lgamma. */
double mxc__digamma(double x);

#endif /* MXC_OPS_ELEMWISE_SPECIAL_H_ */
