/* Programs of _fused_elemwise: which operators may appear in them, and
 * the parser that turns the program string into instructions with
 * scratch-buffer assignments (see fused.h for the syntax). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "ops/fused/fused_internal.h"

/* ---- fusible operators ---- */

/* The operators fused programs call by name for their own purposes. */
static struct {
  pthread_once_t once;
  const mxc__op *exp_op, *sigmoid_op, *activation_op;
} g_fusible = {PTHREAD_ONCE_INIT, NULL, NULL, NULL};

static void fusible_init(void) {
  g_fusible.exp_op = mxc__op_find("exp");
  g_fusible.sigmoid_op = mxc__op_find("sigmoid");
  g_fusible.activation_op = mxc__op_find("Activation");
}

/* Element-wise operators (the families mark them, mxc__op.elementwise)
 * that are plain one-output maps of one to three fixed inputs without
 * state, randomness or sparse forms. */
int mxc__fused_is_fusible(const mxc__op *op) {
  if (!op || !op->compute) return 0;
  return op->elementwise && op->n_outputs == 1 && !op->num_outputs &&
         !op->num_inputs && op->n_inputs >= 1 && op->n_inputs <= 3 &&
         op->n_aux == 0 && op->mutate_inputs == 0 && op->resources == 0 &&
         !op->compute_sparse && op->param_size <= MXC__FUSED_PARAM_BYTES &&
         op->infer_shape == mxc__infer_shape_same;
}

/* ---- parsing ---- */

/* One instruction's text, split: the operator name, positional
 * arguments and key=value pairs, as NUL-terminated pieces of buf. */
#define MAX_KV 4
typedef struct split_instr {
  char buf[512];
  const char *name;
  const char *args[4];
  int n_args;
  const char *keys[MAX_KV], *vals[MAX_KV];
  int n_kv;
} split_instr;

static char *trim(char *s) {
  while (*s == ' ') ++s;
  size_t n = strlen(s);
  while (n && s[n - 1] == ' ') s[--n] = '\0';
  return s;
}

/* Splits text[0..len) ("name(a,b,k=v)"). Returns NULL or a description
 * of what is wrong. */
static const char *split(const char *text, size_t len, split_instr *si) {
  if (len >= sizeof si->buf) return "it is too long";
  memcpy(si->buf, text, len);
  si->buf[len] = '\0';
  char *open = strchr(si->buf, '(');
  char *close = strrchr(si->buf, ')');
  if (!open || !close || close < open) {
    return "expected <operator>(<arguments>)";
  }
  if (*trim(close + 1)) return "text follows the closing ')'";
  *open = *close = '\0';
  si->name = trim(si->buf);
  si->n_args = si->n_kv = 0;
  char *p = open + 1;
  if (!*trim(p)) return NULL; /* no arguments */
  for (;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    char *item = trim(p);
    char *eq = strchr(item, '=');
    if (eq) {
      if (si->n_kv == MAX_KV) return "it has too many parameters";
      *eq = '\0';
      si->keys[si->n_kv] = trim(item);
      si->vals[si->n_kv++] = trim(eq + 1);
    } else {
      if (si->n_args == 4) return "it has too many arguments";
      si->args[si->n_args++] = item;
    }
    if (!comma) return NULL;
    p = comma + 1;
  }
}

/* Register of an argument "i<k>" / "r<k>", or -1 with *why set. */
static int parse_reg(const char *a, int num_inputs, int k, const char **why) {
  if ((a[0] != 'i' && a[0] != 'r') || a[1] < '0' || a[1] > '9') {
    *why = "an argument is not i<k> (input) or r<k> (earlier result)";
    return -1;
  }
  long v = 0;
  const char *c = a + 1;
  while (*c >= '0' && *c <= '9' && v < 100000) v = v * 10 + (*c++ - '0');
  if (*c) {
    *why = "an argument is not i<k> (input) or r<k> (earlier result)";
    return -1;
  }
  if (a[0] == 'i') {
    if (v >= num_inputs) {
      *why = "it reads an input beyond num_inputs";
      return -1;
    }
    return (int)v;
  }
  if (v >= k) {
    *why = "it reads a result that is not computed before it";
    return -1;
  }
  return num_inputs + (int)v;
}

static int instr_error(const char *op_name, int k, const char *text,
                       size_t len, const char *why) {
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': program instruction %d ('%.*s'): %s",
                        op_name, k, (int)(len > 200 ? 200 : len), text, why);
}

static void classify(mxc__fused_instr *in, const split_instr *si);

/* Fills p->instr[k] from text[0..len). */
static int parse_instr(const char *op_name, mxc__fused_param *p, int k,
                       const char *text, size_t len) {
  split_instr si;
  const char *why = split(text, len, &si);
  if (why) return instr_error(op_name, k, text, len, why);
  mxc__fused_instr *in = &p->instr[k];
  memset(in, 0, sizeof *in);
  in->op = mxc__op_find(si.name);
  if (!in->op) return instr_error(op_name, k, text, len, "unknown operator");
  if (!mxc__fused_is_fusible(in->op)) {
    return instr_error(op_name, k, text, len,
                       "the operator is not a fusible element-wise one");
  }
  if (si.n_args != in->op->n_inputs) {
    return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                          "operator '%s': program instruction %d ('%.*s'): "
                          "%d arguments; '%s' takes %d",
                          op_name, k, (int)(len > 200 ? 200 : len), text,
                          si.n_args, in->op->name, in->op->n_inputs);
  }
  in->n_args = si.n_args;
  for (int j = 0; j < si.n_args; ++j) {
    in->args[j] = parse_reg(si.args[j], (int)p->num_inputs, k, &why);
    if (in->args[j] < 0) return instr_error(op_name, k, text, len, why);
  }
  void *pp = NULL;
  int rc = mxc__op_parse_params(in->op, si.keys, si.vals, si.n_kv, &pp);
  if (rc != MXC_OK) {
    char where[128];
    snprintf(where, sizeof where, "operator '%s': program instruction %d",
             op_name, k);
    mxc__error_prefix(where);
    return rc;
  }
  memcpy(in->param.bytes, pp, in->op->param_size);
  mxc__free(pp);
  pthread_once(&g_fusible.once, fusible_init);
  if (in->op == g_fusible.exp_op) in->fast = MXC__FAST_EXP;
  if (in->op == g_fusible.sigmoid_op) in->fast = MXC__FAST_SIGMOID;
  for (int j = 0; j < si.n_kv && in->op == g_fusible.activation_op; ++j) {
    if (!strcmp(si.keys[j], "act_type") && !strcmp(si.vals[j], "sigmoid")) {
      in->fast = MXC__FAST_SIGMOID;
    }
  }
  classify(in, &si);
  return MXC_OK;
}

/* ---- float32 chains ---- */

/* Operators with a micro-op (fast.c), by canonical name: binary forms
 * take their other operand from the scalar (scalar = 1) or an input. */
static const struct {
  const char *name;
  int kind, scalar;
} k_uops[] = {
    {"_plus_scalar", MXC__UOP_ADD, 1},
    {"_minus_scalar", MXC__UOP_SUB, 1},
    {"_rminus_scalar", MXC__UOP_RSUB, 1},
    {"_mul_scalar", MXC__UOP_MUL, 1},
    {"_div_scalar", MXC__UOP_DIV, 1},
    {"_rdiv_scalar", MXC__UOP_RDIV, 1},
    {"_maximum_scalar", MXC__UOP_MAX, 1},
    {"_minimum_scalar", MXC__UOP_MIN, 1},
    {"add", MXC__UOP_ADD, 0},
    {"sub", MXC__UOP_SUB, 0},
    {"mul", MXC__UOP_MUL, 0},
    {"div", MXC__UOP_DIV, 0},
    {"maximum", MXC__UOP_MAX, 0},
    {"minimum", MXC__UOP_MIN, 0},
    {"_copy", MXC__UOP_COPY, 0},
    {"BlockGrad", MXC__UOP_COPY, 0},
    {"negative", MXC__UOP_NEG, 0},
    {"abs", MXC__UOP_ABS, 0},
    {"square", MXC__UOP_SQUARE, 0},
    {"relu", MXC__UOP_RELU, 0},
    {"exp", MXC__UOP_EXP, 0},
    {"sigmoid", MXC__UOP_SIGMOID, 0},
};

typedef struct scalar_param {
  double scalar;
} scalar_param;

/* Sets in->uop from the operator and its parameter strings (already
 * validated by the operator's own parser). */
static void classify(mxc__fused_instr *in, const split_instr *si) {
  mxc__fused_uop *u = &in->uop;
  u->kind = MXC__UOP_NONE;
  u->src = -1;
  u->s = 0;
  if (in->op == g_fusible.activation_op) {
    for (int j = 0; j < si->n_kv; ++j) {
      if (strcmp(si->keys[j], "act_type")) continue;
      if (!strcmp(si->vals[j], "relu")) u->kind = MXC__UOP_RELU;
      if (!strcmp(si->vals[j], "sigmoid")) u->kind = MXC__UOP_SIGMOID;
    }
    return;
  }
  for (size_t i = 0; i < sizeof k_uops / sizeof k_uops[0]; ++i) {
    if (strcmp(in->op->name, k_uops[i].name)) continue;
    if (k_uops[i].scalar) {
      /* The same parser and table entry type as the scalar operators, so
       * the same double; rounded to float as they do for float32. */
      static const mxc__param_def def =
          MXC__PARAM(scalar_param, scalar, MXC__P_FLOAT, NULL, "");
      scalar_param sp = {0};
      if (mxc__param_parse(in->op->name, &def, 1, si->keys, si->vals,
                           si->n_kv, &sp) != MXC_OK) {
        return; /* unreachable: the operator parsed the same strings */
      }
      u->s = (float)sp.scalar;
    }
    u->kind = k_uops[i].kind;
    return;
  }
}

/* The micro-op computing y op x for one computing x op y. */
static int reversed(int kind) {
  switch (kind) {
    case MXC__UOP_SUB:
      return MXC__UOP_RSUB;
    case MXC__UOP_DIV:
      return MXC__UOP_RDIV;
    case MXC__UOP_MAX:
      return MXC__UOP_RMAX;
    case MXC__UOP_MIN:
      return MXC__UOP_RMIN;
    default: /* add, mul: IEEE addition and multiplication commute */
      return kind;
  }
}

/* Sets p->chain and p->chain_in, and the other operand of two-input
 * micro-ops (see fused_internal.h). */
static void plan_chain(mxc__fused_param *p) {
  int n_in = (int)p->num_inputs;
  p->chain = 0;
  p->chain_in = 0;
  for (int k = 0; k < p->n_instr; ++k) {
    mxc__fused_instr *in = &p->instr[k];
    if (in->uop.kind == MXC__UOP_NONE) return;
    int prev = k ? n_in + k - 1 : -1, pos = k ? -1 : 0;
    for (int j = 0; j < in->n_args; ++j) {
      if (in->args[j] != prev) continue;
      if (pos >= 0) return; /* the running value twice */
      pos = j;
    }
    if (pos < 0) return;
    for (int j = 0; j < in->n_args; ++j) {
      if (j != pos && in->args[j] >= n_in) return; /* an older result */
    }
    if (k == 0) p->chain_in = in->args[0];
    if (in->n_args == 2) {
      in->uop.src = in->args[1 - pos];
      if (pos == 1) in->uop.kind = reversed(in->uop.kind);
    }
  }
  p->chain = 1;
}

/* Scratch buffers by liveness: a result's buffer is free again after its
 * last reader. An instruction never writes the buffer of one of its own
 * arguments (its buffer is taken before theirs are released): in place
 * would be correct for element-wise loops, but kernels without `restrict`
 * then fail the vectorizer's run-time overlap check and run scalar, so a
 * chain alternates between two buffers instead. The last result goes to
 * the output. Also checks that everything is used. */
static int assign_slots(const char *op_name, mxc__fused_param *p) {
  int n_in = (int)p->num_inputs, n = p->n_instr;
  int last_use[MXC__FUSED_MAX_INPUTS + MXC__FUSED_MAX_INSTR];
  for (int r = 0; r < n_in + n; ++r) last_use[r] = -1;
  for (int k = 0; k < n; ++k) {
    for (int j = 0; j < p->instr[k].n_args; ++j) {
      last_use[p->instr[k].args[j]] = k;
    }
  }
  for (int r = 0; r < n_in + n - 1; ++r) {
    MXC_RETURN_ERROR_IF(last_use[r] < 0, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': program never uses %s%d; every "
                        "input and every result but the last must be used",
                        op_name, r < n_in ? "input i" : "result r",
                        r < n_in ? r : r - n_in);
  }
  int slot_busy[MXC__FUSED_MAX_INSTR + 1] = {0};
  p->n_slots = 0;
  for (int k = 0; k < n; ++k) {
    mxc__fused_instr *in = &p->instr[k];
    in->slot = -1;
    if (k < n - 1) {
      int s = 0;
      while (slot_busy[s]) ++s;
      slot_busy[s] = 1;
      in->slot = s;
      if (s + 1 > p->n_slots) p->n_slots = s + 1;
    }
    for (int j = 0; j < in->n_args; ++j) {
      int r = in->args[j];
      if (r >= n_in && last_use[r] == k) {
        slot_busy[p->instr[r - n_in].slot] = 0;
      }
    }
  }
  return MXC_OK;
}

int mxc__fused_compile(const char *op_name, void *param) {
  mxc__fused_param *p = param;
  p->n_instr = 0;
  const char *s = p->program;
  for (int k = 0;; ++k) {
    const char *end = strchr(s, ';');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    MXC_RETURN_ERROR_IF(k == MXC__FUSED_MAX_INSTR, MXC_ERR_INVALID_ARGUMENT,
                        "operator '%s': program has more than %d "
                        "instructions",
                        op_name, MXC__FUSED_MAX_INSTR);
    MXC_FORWARD_IF_ERROR(parse_instr(op_name, p, k, s, len));
    p->n_instr = k + 1;
    if (!end) break;
    s = end + 1;
  }
  plan_chain(p);
  return assign_slots(op_name, p);
}
