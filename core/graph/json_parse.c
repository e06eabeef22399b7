/* Recursive-descent JSON reader (see json_parse.h). Values live in one
 * growing array addressed by index, so growth never invalidates links. */
#include "core/graph/json_parse.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"

typedef struct parser {
  const char *fn;
  const char *text;
  size_t pos;
  mxc__json *j;
  char *out; /* next free byte of j->strs */
} parser;

static int fail(parser *p, const char *what) {
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "%s: malformed JSON at byte %zu: %s", p->fn, p->pos,
                        what);
}

static void skip_ws(parser *p) {
  for (;;) {
    char c = p->text[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
    p->pos++;
  }
}

/* A new value of type t at the current position; *out = its index. */
static int new_val(parser *p, mxc__jtype t, int *out) {
  mxc__json *j = p->j;
  if (j->n == j->cap) {
    int cap = j->cap ? 2 * j->cap : 64;
    mxc__jval *v = mxc__realloc(j->v, sizeof *v * (size_t)cap);
    MXC_RETURN_ERROR_IF(!v, MXC_ERR_OOM, "%s: out of memory parsing JSON",
                        p->fn);
    j->v = v;
    j->cap = cap;
  }
  mxc__jval *v = &j->v[j->n];
  memset(v, 0, sizeof *v);
  v->type = t;
  v->first = v->next = -1;
  v->pos = p->pos;
  *out = j->n++;
  return MXC_OK;
}

static int hex4(const char *s, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= (unsigned)(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= (unsigned)(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= (unsigned)(c - 'A' + 10);
    } else {
      return 0;
    }
  }
  *out = v;
  return 1;
}

static void put_utf8(parser *p, unsigned cp) {
  if (cp < 0x80) {
    *p->out++ = (char)cp;
  } else if (cp < 0x800) {
    *p->out++ = (char)(0xc0 | cp >> 6);
    *p->out++ = (char)(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *p->out++ = (char)(0xe0 | cp >> 12);
    *p->out++ = (char)(0x80 | (cp >> 6 & 0x3f));
    *p->out++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *p->out++ = (char)(0xf0 | cp >> 18);
    *p->out++ = (char)(0x80 | (cp >> 12 & 0x3f));
    *p->out++ = (char)(0x80 | (cp >> 6 & 0x3f));
    *p->out++ = (char)(0x80 | (cp & 0x3f));
  }
}

/* A \u escape at p->pos (after the backslash and 'u'). Output never
 * outgrows input: 6 escaped bytes give at most 3, a 12-byte pair 4. */
static int unicode_escape(parser *p) {
  unsigned cp;
  if (!hex4(p->text + p->pos, &cp)) return fail(p, "bad \\u escape");
  p->pos += 4;
  if (cp >= 0xd800 && cp < 0xdc00) {
    unsigned lo;
    if (p->text[p->pos] != '\\' || p->text[p->pos + 1] != 'u' ||
        !hex4(p->text + p->pos + 2, &lo) || lo < 0xdc00 || lo >= 0xe000) {
      return fail(p, "unpaired UTF-16 surrogate in \\u escape");
    }
    p->pos += 6;
    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
  } else if (cp >= 0xdc00 && cp < 0xe000) {
    return fail(p, "unpaired UTF-16 surrogate in \\u escape");
  }
  if (cp == 0) return fail(p, "\\u0000 is not allowed in names");
  put_utf8(p, cp);
  return MXC_OK;
}

/* A string at p->pos (the opening quote); *out points into j->strs. */
static int parse_string(parser *p, const char **out) {
  if (p->text[p->pos] != '"') return fail(p, "expected a string");
  p->pos++;
  *out = p->out;
  for (;;) {
    unsigned char c = (unsigned char)p->text[p->pos];
    if (c == '"') break;
    if (c == '\0') return fail(p, "unterminated string");
    if (c < 0x20) return fail(p, "control character in a string");
    p->pos++;
    if (c != '\\') {
      *p->out++ = (char)c;
      continue;
    }
    char e = p->text[p->pos++];
    static const char k_from[] = "\"\\/bfnrt";
    static const char k_to[] = "\"\\/\b\f\n\r\t";
    const char *hit = e ? strchr(k_from, e) : NULL;
    if (hit) {
      *p->out++ = k_to[hit - k_from];
    } else if (e == 'u') {
      MXC_FORWARD_IF_ERROR(unicode_escape(p));
    } else {
      p->pos--;
      return fail(p, "bad escape in a string");
    }
  }
  p->pos++;
  *p->out++ = '\0';
  return MXC_OK;
}

static size_t digits(const char *s) {
  size_t n = 0;
  while (s[n] >= '0' && s[n] <= '9') ++n;
  return n;
}

/* Checks the JSON number grammar, then converts with strtod. */
static int parse_number(parser *p, mxc__jval *v) {
  const char *s = p->text + p->pos;
  size_t i = s[0] == '-' ? 1 : 0;
  size_t d = digits(s + i);
  if (d == 0 || (s[i] == '0' && d > 1)) return fail(p, "bad number");
  i += d;
  if (s[i] == '.') {
    d = digits(s + i + 1);
    if (d == 0) return fail(p, "bad number");
    i += 1 + d;
  }
  if (s[i] == 'e' || s[i] == 'E') {
    ++i;
    if (s[i] == '+' || s[i] == '-') ++i;
    d = digits(s + i);
    if (d == 0) return fail(p, "bad number");
    i += d;
  }
  v->num = strtod(s, NULL);
  p->pos += i;
  return MXC_OK;
}

static int parse_value(parser *p, int depth, int *out);

/* Members or elements of an object / array after its opening bracket. */
static int parse_children(parser *p, int depth, int self, char close) {
  int prev = -1;
  skip_ws(p);
  if (p->text[p->pos] == close) {
    p->pos++;
    return MXC_OK;
  }
  for (;;) {
    skip_ws(p);
    const char *key = NULL;
    if (close == '}') {
      MXC_FORWARD_IF_ERROR(parse_string(p, &key));
      skip_ws(p);
      if (p->text[p->pos] != ':') return fail(p, "expected ':'");
      p->pos++;
    }
    int c;
    MXC_FORWARD_IF_ERROR(parse_value(p, depth + 1, &c));
    p->j->v[c].key = key;
    if (prev < 0) {
      p->j->v[self].first = c;
    } else {
      p->j->v[prev].next = c;
    }
    prev = c;
    p->j->v[self].n++;
    skip_ws(p);
    char ch = p->text[p->pos];
    if (ch == ',') {
      p->pos++;
      continue;
    }
    if (ch == close) {
      p->pos++;
      return MXC_OK;
    }
    return fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static int parse_literal(parser *p, const char *word, mxc__jtype t,
                         double num, int *out) {
  size_t n = strlen(word);
  if (strncmp(p->text + p->pos, word, n) != 0) {
    return fail(p, "expected a value");
  }
  MXC_FORWARD_IF_ERROR(new_val(p, t, out));
  p->j->v[*out].num = num;
  p->pos += n;
  return MXC_OK;
}

static int parse_value(parser *p, int depth, int *out) {
  if (depth > MXC__JSON_MAX_DEPTH) return fail(p, "nesting is too deep");
  skip_ws(p);
  char c = p->text[p->pos];
  if (c == '{' || c == '[') {
    MXC_FORWARD_IF_ERROR(new_val(p, c == '{' ? MXC__J_OBJ : MXC__J_ARR, out));
    p->pos++;
    return parse_children(p, depth, *out, c == '{' ? '}' : ']');
  }
  if (c == '"') {
    MXC_FORWARD_IF_ERROR(new_val(p, MXC__J_STR, out));
    const char *s = NULL;
    MXC_FORWARD_IF_ERROR(parse_string(p, &s));
    p->j->v[*out].str = s;
    return MXC_OK;
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    MXC_FORWARD_IF_ERROR(new_val(p, MXC__J_NUM, out));
    return parse_number(p, &p->j->v[*out]);
  }
  if (c == 't') return parse_literal(p, "true", MXC__J_BOOL, 1, out);
  if (c == 'f') return parse_literal(p, "false", MXC__J_BOOL, 0, out);
  if (c == 'n') return parse_literal(p, "null", MXC__J_NULL, 0, out);
  return fail(p, c ? "expected a value" : "unexpected end of text");
}

int mxc__json_parse(const char *fn, const char *text, mxc__json *out) {
  mxc__json j;
  memset(&j, 0, sizeof j);
  /* Unescaped strings plus their NULs never exceed the text's length:
   * each string loses at least its two quotes. */
  j.strs = mxc__malloc(strlen(text) + 1);
  MXC_RETURN_ERROR_IF(!j.strs, MXC_ERR_OOM, "%s: out of memory parsing JSON",
                      fn);
  parser p = {fn, text, 0, &j, j.strs};
  int root = 0;
  int rc = parse_value(&p, 0, &root);
  if (rc == MXC_OK) {
    skip_ws(&p);
    if (text[p.pos]) rc = fail(&p, "unexpected text after the JSON value");
  }
  if (rc != MXC_OK) {
    mxc__json_free(&j);
    return rc;
  }
  *out = j;
  return MXC_OK;
}

void mxc__json_free(mxc__json *j) {
  mxc__free(j->v);
  mxc__free(j->strs);
  memset(j, 0, sizeof *j);
}

const mxc__jval *mxc__json_get(const mxc__json *j, const mxc__jval *o,
                               const char *key) {
  if (!o || o->type != MXC__J_OBJ) return NULL;
  for (int c = o->first; c >= 0; c = j->v[c].next) {
    if (strcmp(j->v[c].key, key) == 0) return &j->v[c];
  }
  return NULL;
}

const mxc__jval *mxc__json_next(const mxc__json *j, const mxc__jval *parent,
                                const mxc__jval *c) {
  int i = c ? c->next : parent->first;
  return i >= 0 ? &j->v[i] : NULL;
}
