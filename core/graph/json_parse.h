/* A small JSON reader (RFC 8259) for graph files: parses a whole text into
 * a flat array of values. Strings are unescaped into one buffer as UTF-8
 * (\u escapes included, surrogate pairs combined); "\u0000" is rejected
 * since names are C strings. Nesting deeper than MXC__JSON_MAX_DEPTH is
 * rejected instead of exhausting the stack on hostile input.
 *
 * Errors are MXC_ERR_INVALID_ARGUMENT "malformed JSON at byte N: ...",
 * prefixed with the caller's name. */
#ifndef MXC_CORE_GRAPH_JSON_PARSE_H_
#define MXC_CORE_GRAPH_JSON_PARSE_H_

#include <stddef.h>

#define MXC__JSON_MAX_DEPTH 64

typedef enum mxc__jtype {
  MXC__J_NULL,
  MXC__J_BOOL,
  MXC__J_NUM,
  MXC__J_STR,
  MXC__J_ARR,
  MXC__J_OBJ
} mxc__jtype;

/* Values are linked by index: children of an array or object run from
 * `first` along `next` (-1 ends). */
typedef struct mxc__jval {
  mxc__jtype type;
  int n;           /* number of children */
  int first, next; /* indices, -1 for none */
  const char *key; /* member name when the parent is an object */
  const char *str; /* MXC__J_STR */
  double num;      /* MXC__J_NUM; MXC__J_BOOL: 0 or 1 */
  size_t pos;      /* byte offset of the value in the text */
} mxc__jval;

typedef struct mxc__json {
  mxc__jval *v; /* v[0] is the root */
  int n, cap;
  char *strs;   /* unescaped strings, NUL-terminated */
} mxc__json;

/* Parses text; on success *out owns its memory (mxc__json_free). */
int mxc__json_parse(const char *fn, const char *text, mxc__json *out);
void mxc__json_free(mxc__json *j);

/* Member `key` of object o, or NULL (also when o is not an object). */
const mxc__jval *mxc__json_get(const mxc__json *j, const mxc__jval *o,
                               const char *key);
/* The next child after c, or the first of parent when c is NULL; NULL at
 * the end. */
const mxc__jval *mxc__json_next(const mxc__json *j, const mxc__jval *parent,
                                const mxc__jval *c);

#endif /* MXC_CORE_GRAPH_JSON_PARSE_H_ */
