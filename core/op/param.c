#include "core/op/param.h"

#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"

static const char *skip_ws(const char *s) {
  while (*s && isspace((unsigned char)*s)) ++s;
  return s;
}

/* Whole string (ignoring surrounding spaces) is an integer. */
static int parse_int(const char *s, int64_t *out) {
  s = skip_ws(s);
  if (!*s) return 0;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s) return 0;
  /* Accept "3.0"-style integral floats, as Python front ends often send. */
  if (*end == '.') {
    char *fend;
    double d = strtod(s, &fend);
    /* Range first: converting a double beyond int64 ("1e30.0",
     * "9223372036854775807.0" rounds to 2^63) is undefined. */
    if (*skip_ws(fend) || !(d >= -9223372036854775808.0 &&
                            d < 9223372036854775808.0)) {
      return 0;
    }
    if (d != (double)(int64_t)d) return 0;
    *out = (int64_t)d;
    return 1;
  }
  if (*skip_ws(end)) return 0;
  *out = (int64_t)v;
  return 1;
}

static int parse_float(const char *s, double *out) {
  s = skip_ws(s);
  if (!*s) return 0;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *skip_ws(end)) return 0;
  if (errno == ERANGE && isinf(v)) return 0;
  *out = v;
  return 1;
}

static int parse_bool(const char *s, int *out) {
  s = skip_ws(s);
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) --n;
  if ((n == 4 && !strncasecmp(s, "true", 4)) || (n == 1 && *s == '1')) {
    *out = 1;
    return 1;
  }
  if ((n == 5 && !strncasecmp(s, "false", 5)) || (n == 1 && *s == '0')) {
    *out = 0;
    return 1;
  }
  return 0;
}

static int is_none(const char *s) {
  s = skip_ws(s);
  return !strncmp(s, "None", 4) && !*skip_ws(s + 4);
}

int mxc__tuple_parse(const char *s, mxc__tuple *out) {
  mxc__tuple t;
  memset(&t, 0, sizeof t);
  if (is_none(s)) {
    t.ndim = -1;
    *out = t;
    return 1;
  }
  s = skip_ws(s);
  char close = 0;
  if (*s == '(') close = ')';
  if (*s == '[') close = ']';
  if (close) s = skip_ws(s + 1);
  for (;;) {
    if (close && *s == close) break;
    if (!close && !*s) break;
    char *end;
    errno = 0;
    long long v;
    if (!strncmp(s, "None", 4)) { /* an absent entry, as in slice begins */
      v = MXC__TUPLE_NONE;
      end = (char *)s + 4;
    } else {
      v = strtoll(s, &end, 10);
      if (end == s || errno) return 0;
    }
    if (t.ndim == MXC__TUPLE_MAX) return 0;
    t.d[t.ndim++] = v;
    s = skip_ws(end);
    if (*s == ',') {
      s = skip_ws(s + 1);
    } else if (!(close && *s == close) && *s) {
      return 0;
    }
    /* Python's single-element "(3,)" ends in ", )" -> loop sees close. */
  }
  if (close) s = skip_ws(s + 1);
  if (*s) return 0;
  *out = t;
  return 1;
}

static int parse_dtype(const char *s, int *out) {
  if (is_none(s)) {
    *out = -1;
    return 1;
  }
  s = skip_ws(s);
  for (int code = 0; code < 32; ++code) {
    const char *name = mxc__dtype_name(code);
    if (name && !strcmp(name, s)) {
      *out = code;
      return 1;
    }
  }
  return 0;
}

static int parse_enum(const mxc__param_def *d, const char *s, int *out) {
  s = skip_ws(s);
  for (int i = 0; d->choices && d->choices[i]; ++i) {
    if (!strcmp(d->choices[i], s)) {
      *out = i;
      return 1;
    }
  }
  return 0;
}

const char *mxc__param_type_str(const mxc__param_def *d, char *buf,
                                size_t len) {
  static const char *const k_names[MXC__P_PARAM_TYPE_COUNT] = {
      [MXC__P_INT] = "int",
      [MXC__P_FLOAT] = "float",
      [MXC__P_BOOL] = "boolean",
      [MXC__P_ENUM] = "enum",
      [MXC__P_TUPLE] = "Shape(tuple)",
      [MXC__P_DTYPE] = "dtype",
      [MXC__P_OPT_INT] = "int or None",
      [MXC__P_OPT_FLOAT] = "float or None",
      [MXC__P_STRING] = "string",
  };
  if (d->type != MXC__P_ENUM) {
    snprintf(buf, len, "%s", k_names[d->type]);
    return buf;
  }
  size_t pos = (size_t)snprintf(buf, len, "{");
  for (int i = 0; d->choices && d->choices[i] && pos < len; ++i) {
    pos += (size_t)snprintf(buf + pos, len - pos, "%s'%s'", i ? ", " : "",
                            d->choices[i]);
  }
  if (pos < len) snprintf(buf + pos, len - pos, "}");
  return buf;
}

/* Parses one value into the struct field; returns 1 on success. */
static int parse_value(const mxc__param_def *d, const char *s, char *base) {
  void *field = base + d->offset;
  switch (d->type) {
    case MXC__P_INT: {
      int64_t v;
      if (!parse_int(s, &v)) return 0;
      memcpy(field, &v, sizeof v);
      return 1;
    }
    case MXC__P_FLOAT: {
      double v;
      if (!parse_float(s, &v)) return 0;
      memcpy(field, &v, sizeof v);
      return 1;
    }
    case MXC__P_BOOL:
      return parse_bool(s, (int *)field);
    case MXC__P_ENUM:
      return parse_enum(d, s, (int *)field);
    case MXC__P_TUPLE:
      return mxc__tuple_parse(s, (mxc__tuple *)field);
    case MXC__P_DTYPE:
      return parse_dtype(s, (int *)field);
    case MXC__P_OPT_FLOAT: {
      double v = NAN;
      if (!is_none(s) && !parse_float(s, &v)) return 0;
      memcpy(field, &v, sizeof v);
      return 1;
    }
    case MXC__P_OPT_INT: {
      mxc__opt_int v = {0, 0};
      if (!is_none(s)) {
        if (!parse_int(s, &v.v)) return 0;
        v.has = 1;
      }
      memcpy(field, &v, sizeof v);
      return 1;
    }
    case MXC__P_STRING: {
      size_t len = strlen(s);
      if (len >= MXC__PARAM_STR_MAX) return 0;
      memcpy(field, s, len + 1);
      return 1;
    }
    default:
      return 0;
  }
}

static int check_range(const char *op_name, const mxc__param_def *d,
                       const char *base) {
  if (!(d->lo <= d->hi)) return MXC_OK;
  double v;
  if (d->type == MXC__P_INT) {
    int64_t i;
    memcpy(&i, base + d->offset, sizeof i);
    v = (double)i;
  } else if (d->type == MXC__P_FLOAT || d->type == MXC__P_OPT_FLOAT) {
    memcpy(&v, base + d->offset, sizeof v);
    if (d->type == MXC__P_OPT_FLOAT && isnan(v)) return MXC_OK; /* None */
  } else {
    return MXC_OK;
  }
  /* %.15g: integer bounds such as MXC__OP_MAX_ARITY print in full
   * (1048576, not 1.04858e+06). */
  MXC_RETURN_ERROR_IF(!(v >= d->lo && v <= d->hi), MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter '%s' = %.15g is out of "
                      "range; expected %.15g..%.15g",
                      op_name, d->name, v, d->lo, d->hi);
  return MXC_OK;
}

static int bad_value(const char *op_name, const mxc__param_def *d,
                     const char *val) {
  char type[256];
  if (d->type == MXC__P_DTYPE) {
    return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s': parameter '%s' has invalid value "
                          "'%s'; expected a dtype name: float32, float64, "
                          "float16, bfloat16, uint8, int8, int32, int64, "
                          "bool",
                          op_name, d->name, val);
  }
  if (d->type == MXC__P_STRING) { /* only length can be wrong */
    return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s': parameter '%s' is %zu bytes long; "
                          "expected at most %d",
                          op_name, d->name, strlen(val),
                          MXC__PARAM_STR_MAX - 1);
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter '%s' has invalid value "
                        "'%s'; expected %s",
                        op_name, d->name, val,
                        mxc__param_type_str(d, type, sizeof type));
}

static int unknown_key(const char *op_name, const mxc__param_def *defs,
                       int n_defs, const char *key) {
  char list[512];
  size_t pos = 0;
  list[0] = '\0';
  for (int i = 0; i < n_defs && pos < sizeof list; ++i) {
    pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%s",
                            i ? ", " : "", defs[i].name);
  }
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': unknown parameter '%s'; accepted: "
                        "%s",
                        op_name, key, n_defs ? list : "(none)");
}

int mxc__param_parse(const char *op_name, const mxc__param_def *defs,
                     int n_defs, const char *const *keys,
                     const char *const *vals, int n, void *out) {
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!keys || !vals)),
                      MXC_ERR_INVALID_ARGUMENT,
                      "operator '%s': parameter keys/values are NULL for "
                      "count %d",
                      op_name, n);
  char *base = out;
  /* Defaults first, so that given values override them. */
  for (int i = 0; i < n_defs; ++i) {
    if (defs[i].def && !parse_value(&defs[i], defs[i].def, base)) {
      return mxc__error_set(MXC_ERR_INTERNAL,
                            "operator '%s': default '%s' of '%s' is invalid",
                            op_name, defs[i].def, defs[i].name);
    }
  }
  uint64_t seen = 0; /* bit per definition (tables have < 64 entries) */
  for (int k = 0; k < n; ++k) {
    MXC_RETURN_ERROR_IF(!keys[k] || !vals[k], MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': parameter %d has a NULL key or "
                        "value",
                        op_name, k);
    if (!strncmp(keys[k], "__", 2)) continue;
    int j = 0;
    while (j < n_defs && strcmp(defs[j].name, keys[k])) ++j;
    if (j == n_defs) return unknown_key(op_name, defs, n_defs, keys[k]);
    if (!parse_value(&defs[j], vals[k], base)) {
      return bad_value(op_name, &defs[j], vals[k]);
    }
    seen |= 1ull << j;
  }
  for (int i = 0; i < n_defs; ++i) {
    MXC_RETURN_ERROR_IF(!defs[i].def && !(seen >> i & 1),
                        MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': required parameter '%s' is missing "
                        "(%s)",
                        op_name, defs[i].name, defs[i].doc ? defs[i].doc : "");
    MXC_FORWARD_IF_ERROR(check_range(op_name, &defs[i], base));
  }
  return MXC_OK;
}

/* Type strings of enum parameters are built once and kept for the life of
 * the process (the API promises static strings). */
#define TYPE_CACHE_SLOTS 2048
static struct {
  const mxc__param_def *def;
  char *str;
} g_types[TYPE_CACHE_SLOTS];
static pthread_mutex_t g_types_lock = PTHREAD_MUTEX_INITIALIZER;

int mxc__param_type_name(const mxc__param_def *d, const char **out) {
  static const char *const k_static[MXC__P_PARAM_TYPE_COUNT] = {
      [MXC__P_INT] = "int",          [MXC__P_FLOAT] = "float",
      [MXC__P_BOOL] = "boolean",     [MXC__P_TUPLE] = "Shape(tuple)",
      [MXC__P_DTYPE] = "dtype",      [MXC__P_OPT_INT] = "int or None",
      [MXC__P_OPT_FLOAT] = "float or None", [MXC__P_STRING] = "string",
  };
  if (d->type != MXC__P_ENUM) {
    *out = k_static[d->type];
    return MXC_OK;
  }
  pthread_mutex_lock(&g_types_lock);
  int rc = MXC_OK;
  size_t i = ((uintptr_t)d >> 3) % TYPE_CACHE_SLOTS;
  size_t probes = 0;
  while (g_types[i].def && g_types[i].def != d && probes < TYPE_CACHE_SLOTS) {
    i = (i + 1) % TYPE_CACHE_SLOTS;
    probes++;
  }
  if (g_types[i].def != d) {
    char buf[512];
    mxc__param_type_str(d, buf, sizeof buf);
    char *s = probes < TYPE_CACHE_SLOTS
                  ? mxc__calloc_permanent(strlen(buf) + 1, 1)
                  : NULL;
    if (s) {
      memcpy(s, buf, strlen(buf) + 1);
      g_types[i].def = d;
      g_types[i].str = s;
    } else {
      rc = mxc__error_set(MXC_ERR_OOM, "parameter type names: out of memory");
    }
  }
  if (rc == MXC_OK) *out = g_types[i].str;
  pthread_mutex_unlock(&g_types_lock);
  return rc;
}
