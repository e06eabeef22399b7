/* Parameter initializers (see init.h). A call parses its parameters into a
 * fill_spec (constant, uniform or normal with concrete bounds), reserves
 * random counters in the calling thread and pushes one engine function that
 * writes the array from (spec, slice) alone. */
#include "core/train/init.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/resource/random.h"

enum { FILL_CONST, FILL_UNIFORM, FILL_NORMAL };

/* What the engine function writes: CONST: a; UNIFORM: U(a, b);
 * NORMAL: N(mean a, stddev b). */
typedef struct fill_spec {
  int kind;
  double a, b;
} fill_spec;

/* Parameter ids, index into k_param_names; methods accept a bitmask. */
enum { P_VALUE, P_SCALE, P_SIGMA, P_RND_TYPE, P_FACTOR_TYPE, P_MAGNITUDE,
       P_SLOPE, P_COUNT };
static const char *const k_param_names[P_COUNT] = {
    "value", "scale", "sigma", "rnd_type", "factor_type", "magnitude",
    "slope"};

enum { FACTOR_AVG, FACTOR_IN, FACTOR_OUT };

/* Parsed parameters, defaults filled in by the method's builder. */
typedef struct init_params {
  unsigned seen; /* bit P_* set when the caller gave that key */
  double num[P_COUNT];
  int gaussian; /* rnd_type */
  int factor;   /* factor_type */
} init_params;

typedef struct method_desc method_desc;
typedef int (*build_fn)(const method_desc *m, const init_params *p,
                        const mxc__ndarray *a, fill_spec *out);
struct method_desc {
  const char *name;
  const char *op_name; /* engine function name: static, outlives the push */
  unsigned accepts;    /* bitmask of P_* */
  const char *accepted; /* for messages */
  build_fn build;
};

/* ---- parameter parsing ---- */

static int parse_number(const method_desc *m, const char *key,
                        const char *val, double *out) {
  char *end = NULL;
  double v = strtod(val, &end);
  MXC_RETURN_ERROR_IF(end == val || *end != '\0' || !isfinite(v),
                      MXC_ERR_INVALID_ARGUMENT,
                      "init '%s': parameter '%s' = '%s' is not a finite "
                      "number", m->name, key, val);
  *out = v;
  return MXC_OK;
}

/* *out = index of val in names[0..n), or an error listing the choices. */
static int parse_choice(const method_desc *m, const char *key,
                        const char *val, const char *const *names, int n,
                        const char *choices, int *out) {
  for (int i = 0; i < n; ++i) {
    if (strcmp(val, names[i]) == 0) {
      *out = i;
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "init '%s': parameter '%s' = '%s' is not one of %s",
                        m->name, key, val, choices);
}

static int find_param(const method_desc *m, const char *key, int *out) {
  for (int i = 0; i < P_COUNT; ++i) {
    if ((m->accepts & (1u << i)) && strcmp(key, k_param_names[i]) == 0) {
      *out = i;
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "init '%s': unknown parameter '%s'; accepted: %s",
                        m->name, key, m->accepted);
}

/* Range checks that hold whatever the array: a negative scale would flip
 * the interval, a non-positive magnitude makes sqrt meaningless. */
static int check_range(const method_desc *m, int id, double v) {
  int bad = ((id == P_SCALE || id == P_SIGMA) && v < 0) ||
            (id == P_MAGNITUDE && v <= 0);
  MXC_RETURN_ERROR_IF(bad, MXC_ERR_INVALID_ARGUMENT,
                      "init '%s': parameter '%s' = %g must be %s", m->name,
                      k_param_names[id], v,
                      id == P_MAGNITUDE ? "> 0" : ">= 0");
  return MXC_OK;
}

static int parse_one(const method_desc *m, const char *key, const char *val,
                     init_params *p) {
  static const char *const rnd[] = {"uniform", "gaussian"};
  static const char *const fac[] = {"avg", "in", "out"};
  int id = 0;
  MXC_FORWARD_IF_ERROR(find_param(m, key, &id));
  MXC_RETURN_ERROR_IF(p->seen & (1u << id), MXC_ERR_INVALID_ARGUMENT,
                      "init '%s': parameter '%s' given twice", m->name, key);
  p->seen |= 1u << id;
  if (id == P_RND_TYPE) {
    return parse_choice(m, key, val, rnd, 2, "'uniform', 'gaussian'",
                        &p->gaussian);
  }
  if (id == P_FACTOR_TYPE) {
    return parse_choice(m, key, val, fac, 3, "'avg', 'in', 'out'",
                        &p->factor);
  }
  MXC_FORWARD_IF_ERROR(parse_number(m, key, val, &p->num[id]));
  return check_range(m, id, p->num[id]);
}

static int parse_params(const method_desc *m, const char *const *keys,
                        const char *const *vals, int n, init_params *p) {
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "init '%s': n_params is %d with keys %s and vals %s",
                      m->name, n, keys ? "set" : "NULL",
                      vals ? "set" : "NULL");
  for (int i = 0; i < n; ++i) {
    MXC_RETURN_ERROR_IF(!keys[i] || !vals[i], MXC_ERR_INVALID_ARGUMENT,
                        "init '%s': parameter %d has a NULL %s", m->name, i,
                        keys[i] ? "value" : "key");
    MXC_FORWARD_IF_ERROR(parse_one(m, keys[i], vals[i], p));
  }
  return MXC_OK;
}

static double param_or(const init_params *p, int id, double dflt) {
  return (p->seen & (1u << id)) ? p->num[id] : dflt;
}

/* ---- methods ---- */

static int build_zeros(const method_desc *m, const init_params *p,
                       const mxc__ndarray *a, fill_spec *out) {
  *out = (fill_spec){FILL_CONST, 0.0, 0.0};
  return MXC_OK;
}

static int build_ones(const method_desc *m, const init_params *p,
                      const mxc__ndarray *a, fill_spec *out) {
  *out = (fill_spec){FILL_CONST, 1.0, 0.0};
  return MXC_OK;
}

/* No default: a "constant" without a value is almost surely a mistake. */
static int build_constant(const method_desc *m, const init_params *p,
                          const mxc__ndarray *a, fill_spec *out) {
  MXC_RETURN_ERROR_IF(!(p->seen & (1u << P_VALUE)), MXC_ERR_INVALID_ARGUMENT,
                      "init 'constant': parameter 'value' is required");
  *out = (fill_spec){FILL_CONST, p->num[P_VALUE], 0.0};
  return MXC_OK;
}

static int build_uniform(const method_desc *m, const init_params *p,
                         const mxc__ndarray *a, fill_spec *out) {
  double s = param_or(p, P_SCALE, 0.07);
  *out = (fill_spec){FILL_UNIFORM, -s, s};
  return MXC_OK;
}

static int build_normal(const method_desc *m, const init_params *p,
                        const mxc__ndarray *a, fill_spec *out) {
  *out = (fill_spec){FILL_NORMAL, 0.0, param_or(p, P_SIGMA, 0.01)};
  return MXC_OK;
}

/* MXNet's fans: fan_in = shape[1] * receptive field, fan_out = shape[0] *
 * receptive field, where the receptive field is prod(shape[2:]). Doubles:
 * the products only feed a sqrt, and cannot overflow for valid shapes. */
static int xavier_spec(const method_desc *m, const mxc__ndarray *a,
                       int gaussian, int factor_type, double magnitude,
                       fill_spec *out) {
  char buf[160];
  MXC_RETURN_ERROR_IF(a->shape.ndim < 2, MXC_ERR_SHAPE,
                      "init '%s': needs an array of at least 2 dimensions "
                      "(fan_out = shape[0], fan_in = shape[1]); got shape %s",
                      m->name, mxc__shape_str(&a->shape, buf, sizeof buf));
  double field = 1.0;
  for (int i = 2; i < a->shape.ndim; ++i) field *= (double)a->shape.dims[i];
  double fan_in = (double)a->shape.dims[1] * field;
  double fan_out = (double)a->shape.dims[0] * field;
  double factor = factor_type == FACTOR_IN    ? fan_in
                  : factor_type == FACTOR_OUT ? fan_out
                                              : (fan_in + fan_out) / 2.0;
  /* factor is 0 only for an empty array, which gets no values at all. */
  double scale = factor > 0 ? sqrt(magnitude / factor) : 0.0;
  *out = gaussian ? (fill_spec){FILL_NORMAL, 0.0, scale}
                  : (fill_spec){FILL_UNIFORM, -scale, scale};
  return MXC_OK;
}

static int build_xavier(const method_desc *m, const init_params *p,
                        const mxc__ndarray *a, fill_spec *out) {
  return xavier_spec(m, a, p->gaussian, p->factor,
                     param_or(p, P_MAGNITUDE, 3.0), out);
}

/* MXNet's MSRAPrelu: Xavier gaussian with magnitude 2 / (1 + slope^2);
 * slope defaults to 0 here (plain ReLU, magnitude 2). */
static int build_msra(const method_desc *m, const init_params *p,
                      const mxc__ndarray *a, fill_spec *out) {
  double slope = param_or(p, P_SLOPE, 0.0);
  return xavier_spec(m, a, 1, p->factor, 2.0 / (1.0 + slope * slope), out);
}

#define BIT(p) (1u << (p))
static const method_desc k_methods[] = {
    {"zeros", "init:zeros", 0, "none", build_zeros},
    {"ones", "init:ones", 0, "none", build_ones},
    {"constant", "init:constant", BIT(P_VALUE), "value", build_constant},
    {"uniform", "init:uniform", BIT(P_SCALE), "scale", build_uniform},
    {"normal", "init:normal", BIT(P_SIGMA), "sigma", build_normal},
    {"xavier", "init:xavier", BIT(P_RND_TYPE) | BIT(P_FACTOR_TYPE) |
     BIT(P_MAGNITUDE), "rnd_type, factor_type, magnitude", build_xavier},
    {"msra", "init:msra", BIT(P_FACTOR_TYPE) | BIT(P_SLOPE),
     "factor_type, slope", build_msra},
};
#undef BIT
#define N_METHODS ((int)(sizeof k_methods / sizeof k_methods[0]))

static int find_method(const char *method, const method_desc **out) {
  MXC_RETURN_ERROR_IF(!method, MXC_ERR_INVALID_ARGUMENT,
                      "init: method is NULL");
  for (int i = 0; i < N_METHODS; ++i) {
    if (strcmp(method, k_methods[i].name) == 0) {
      *out = &k_methods[i];
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_NOT_FOUND,
                        "init: unknown method '%s'; known: zeros, ones, "
                        "constant, uniform, normal, xavier, msra", method);
}

/* ---- the engine function ---- */

typedef struct fill_args {
  void *ptr;
  int64_t n;
  int dtype;
  fill_spec spec;
  mxc__rng_slice slice;
} fill_args;

static void fill_f32(const fill_args *f, float *out) {
  const fill_spec *s = &f->spec;
  if (s->kind == FILL_UNIFORM) {
    mxc__rng_uniform_f32(&f->slice, 0, f->n, (float)s->a, (float)s->b, out);
  } else if (s->kind == FILL_NORMAL) {
    mxc__rng_normal_f32(&f->slice, 0, f->n, (float)s->a, (float)s->b, out);
  } else {
    for (int64_t i = 0; i < f->n; ++i) out[i] = (float)s->a;
  }
}

static void fill_f64(const fill_args *f, double *out) {
  const fill_spec *s = &f->spec;
  if (s->kind == FILL_UNIFORM) {
    mxc__rng_uniform_f64(&f->slice, 0, f->n, s->a, s->b, out);
  } else if (s->kind == FILL_NORMAL) {
    mxc__rng_normal_f64(&f->slice, 0, f->n, s->a, s->b, out);
  } else {
    for (int64_t i = 0; i < f->n; ++i) out[i] = s->a;
  }
}

static int fill_fn(void *arg, mxc__exec *ex) {
  (void)ex;
  const fill_args *f = arg;
  if (f->dtype == MXC_DTYPE_FLOAT32) {
    fill_f32(f, f->ptr);
  } else {
    fill_f64(f, f->ptr);
  }
  return MXC_OK;
}

static void free_fill(void *arg) { mxc__free(arg); }

/* ---- entry point ---- */

static int check_array(const method_desc *m, const mxc__ndarray *a) {
  MXC_RETURN_ERROR_IF(a->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "init '%s': only dense arrays can be initialized",
                      m->name);
  MXC_RETURN_ERROR_IF(a->dtype != MXC_DTYPE_FLOAT32 &&
                          a->dtype != MXC_DTYPE_FLOAT64,
                      MXC_ERR_DTYPE,
                      "init '%s': dtype %s is not supported; expected "
                      "float32 or float64", m->name,
                      mxc__dtype_name(a->dtype));
  return MXC_OK;
}

/* Random counters are reserved here, in the caller's thread and order, so
 * the values never depend on when or where the engine runs the fill. */
static int push_fill(const method_desc *m, const mxc__ndarray *a,
                     const fill_spec *spec) {
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(a));
  fill_args *f = mxc__malloc(sizeof *f);
  MXC_RETURN_ERROR_IF(!f, MXC_ERR_OOM, "init '%s': out of memory", m->name);
  memset(f, 0, sizeof *f);
  f->ptr = mxc__ndarray_ptr(a);
  f->n = mxc__ndarray_size(a);
  f->dtype = a->dtype;
  f->spec = *spec;
  if (spec->kind != FILL_CONST) {
    int words = (spec->kind == FILL_NORMAL || a->dtype == MXC_DTYPE_FLOAT64)
                    ? 2 : 1;
    f->slice = mxc__random_reserve(f->n, words);
  }
  int rc = mxc__ndarray_push(fill_fn, f, free_fill, NULL, a, 0, m->op_name);
  if (rc != MXC_OK) mxc__free(f);
  return rc;
}

int mxc__init_array(const mxc__ndarray *a, const char *method,
                    const char *const *keys, const char *const *vals,
                    int n_params) {
  const method_desc *m = NULL;
  MXC_FORWARD_IF_ERROR(find_method(method, &m));
  init_params p;
  memset(&p, 0, sizeof p);
  MXC_FORWARD_IF_ERROR(parse_params(m, keys, vals, n_params, &p));
  MXC_FORWARD_IF_ERROR(check_array(m, a));
  fill_spec spec = {FILL_CONST, 0.0, 0.0};
  MXC_FORWARD_IF_ERROR(m->build(m, &p, a, &spec));
  if (mxc__ndarray_size(a) == 0) return MXC_OK; /* nothing to write */
  return push_fill(m, a, &spec);
}
