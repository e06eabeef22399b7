/* Typed operator parameters, parsed from string key/value pairs.
 *
 * Each operator describes its parameters with a table of mxc__param_def
 * (name, type, default, range, doc, and the offset of the field in the
 * operator's own parameter struct). mxc__param_parse fills such a struct
 * from the strings every language can pass, applying defaults and checking
 * types and ranges; errors name the operator, the key, and what is
 * accepted. The same table answers introspection (mxc_op_param_info). */
#ifndef MXC_CORE_OP_PARAM_H_
#define MXC_CORE_OP_PARAM_H_

#include <stddef.h>
#include <stdint.h>

#define MXC__TUPLE_MAX 16

typedef enum mxc__param_type {
  MXC__P_INT,     /* int64_t */
  MXC__P_FLOAT,   /* double; accepts inf, -inf, nan */
  MXC__P_BOOL,    /* int: "true"/"false"/"1"/"0" (any case) */
  MXC__P_ENUM,    /* int: index into choices */
  MXC__P_TUPLE,   /* mxc__tuple: "(3,3)", "[3,3]", "3", "()", "None";
                     entries may be None (MXC__TUPLE_NONE) */
  MXC__P_DTYPE,   /* int: MXC_DTYPE_* from "float32", ...; "None" -> -1 */
  MXC__P_OPT_INT, /* mxc__opt_int: an int or "None" */
  MXC__P_OPT_FLOAT, /* double: a float, or "None" stored as NaN */
  MXC__P_STRING,  /* char[MXC__PARAM_STR_MAX]: the text as given */
  MXC__P_PARAM_TYPE_COUNT
} mxc__param_type;

/* Capacity of a MXC__P_STRING field, terminating NUL included. The text
 * lives inside the parameter struct because kernels get a flat copy of it
 * (core/op/invoke.c copies param_size bytes); longer values are rejected. */
#define MXC__PARAM_STR_MAX 4096

/* A "None" entry inside a tuple, e.g. slice's begin=(None, 1). */
#define MXC__TUPLE_NONE INT64_MIN

typedef struct mxc__tuple {
  int ndim; /* -1: None (absent) */
  int64_t d[MXC__TUPLE_MAX];
} mxc__tuple;

typedef struct mxc__opt_int {
  int has;
  int64_t v;
} mxc__opt_int;

typedef struct mxc__param_def {
  const char *name;
  mxc__param_type type;
  size_t offset;       /* of the field in the parameter struct */
  const char *def;     /* default as a string; NULL: required */
  const char *doc;
  double lo, hi;       /* inclusive range for INT/FLOAT when lo <= hi */
  const char *const *choices; /* ENUM: NULL-terminated list */
} mxc__param_def;

/* Convenience initializers for parameter tables. */
#define MXC__PARAM(st, field, ty, dflt, doc_)                            \
  {#field, ty, offsetof(st, field), dflt, doc_, 1, 0, NULL}
#define MXC__PARAM_RANGE(st, field, ty, dflt, lo_, hi_, doc_)            \
  {#field, ty, offsetof(st, field), dflt, doc_, lo_, hi_, NULL}
#define MXC__PARAM_ENUM(st, field, dflt, choices_, doc_)                 \
  {#field, MXC__P_ENUM, offsetof(st, field), dflt, doc_, 1, 0, choices_}

/* Fills `out` (a struct of the table's layout) from n key/value strings.
 * Unknown keys, missing required keys, malformed or out-of-range values
 * are MXC_ERR_INVALID_ARGUMENT, naming op_name, the key and what is
 * accepted. Keys starting with "__" (graph attributes such as
 * "__shape__") are ignored. */
int mxc__param_parse(const char *op_name, const mxc__param_def *defs,
                     int n_defs, const char *const *keys,
                     const char *const *vals, int n, void *out);

/* Human-readable type of a parameter for documentation:
 * "int", "float", "boolean", "{'max', 'avg', 'sum'}", "Shape(tuple)",
 * "dtype", "int or None". Writes into buf (always NUL-terminated). */
const char *mxc__param_type_str(const mxc__param_def *d, char *buf,
                                size_t len);

/* The same as a string that lives for the whole process (enum types are
 * built once and kept), for catalogs that promise static strings;
 * MXC_ERR_OOM possible on the first call for an enum parameter.
 * Thread-safe. */
int mxc__param_type_name(const mxc__param_def *d, const char **out);

/* Parses a single tuple string; exposed for operators that read tuples
 * themselves and for tests. */
int mxc__tuple_parse(const char *s, mxc__tuple *out);

#endif /* MXC_CORE_OP_PARAM_H_ */
