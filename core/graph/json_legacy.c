/* MXNet's upgrades of old graph JSON (see json_legacy.h). Written from
 * MXNet's documented behaviour (its legacy JSON loader and the
 * test_load_000800 expectations), not from its code. */
#include "core/graph/json_legacy.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"

/* MXNet's hidden attribute keys and their upgraded names. */
static const char *const k_hidden[][2] = {
    {"ctx_group", "__ctx_group__"},
    {"lr_mult", "__lr_mult__"},
    {"wd_mult", "__wd_mult__"},
    {"force_mirroring", "__force_mirroring__"},
    {"mirror_stage", "__mirror_stage__"},
    {"profiler_scope", "__profiler_scope__"},
};
#define N_HIDDEN ((int)(sizeof k_hidden / sizeof k_hidden[0]))

/* Initializers MXNet's operators attach to their parameter inputs when
 * composed: {operator, input slot, "__init__" value}. */
static const struct {
  const char *op;
  int slot;
  const char *init;
} k_inits[] = {
    {"BatchNorm", 3, "[\"zero\", {}]"},
    {"BatchNorm", 4, "[\"one\", {}]"},
    {"LeakyReLU", 1, "[\"Constant\", {\"value\": 0.25}]"},
    {"UpSampling", 1, "[\"bilinear\", {}]"},
};
#define N_INITS ((int)(sizeof k_inits / sizeof k_inits[0]))

int mxc__json_mxnet_version(const mxc__json *j) {
  const mxc__jval *attrs = mxc__json_get(j, &j->v[0], "attrs");
  const mxc__jval *v = mxc__json_get(j, attrs, "mxnet_version");
  if (!v || v->type != MXC__J_ARR || v->n != 2) return 800;
  const mxc__jval *num = mxc__json_next(j, v, mxc__json_next(j, v, NULL));
  if (!num || num->type != MXC__J_NUM || num->num < 0 || num->num > 1e8) {
    return 800;
  }
  return (int)num->num;
}

const char *mxc__legacy_hidden_key(const char *key, size_t *prefix_len) {
  size_t n = strlen(key);
  for (int i = 0; i < N_HIDDEN; ++i) {
    size_t m = strlen(k_hidden[i][0]);
    if (n < m || strcmp(key + n - m, k_hidden[i][0]) != 0) continue;
    if (n == m) {
      *prefix_len = 0;
      return k_hidden[i][1];
    }
    if (n > m + 1 && key[n - m - 1] == '_') {
      *prefix_len = n - m - 1;
      return k_hidden[i][1];
    }
  }
  return NULL;
}

int mxc__legacy_drops_param(const char *op_name, const char *key,
                            const char *val, int version) {
  return version < MXC__MXNET_V0_9_5 &&
         (!strcmp(op_name, "argmax") || !strcmp(op_name, "argmin")) &&
         !strcmp(key, "axis") && !strcmp(val, "-1");
}

/* The variable feeding input `prefix` (prefix_len bytes) of n, or NULL
 * when n has no such input or it is an operator's output. */
static mxc__node *named_input_variable(const mxc__node *n, const char *prefix,
                                       size_t prefix_len) {
  for (int k = 0; k < n->n_inputs; ++k) {
    const char *in = mxc__op_input_name(n->op, n->param, k);
    if (in && strlen(in) == prefix_len && !strncmp(in, prefix, prefix_len)) {
      return n->inputs[k].node->op ? NULL : n->inputs[k].node;
    }
  }
  return NULL;
}

/* "__init__" of the variable inputs of n that MXNet 0.9.4 gives one. */
static int set_inits(mxc__node *n) {
  for (int i = 0; i < N_INITS; ++i) {
    if (strcmp(n->op->name, k_inits[i].op) || k_inits[i].slot >= n->n_inputs) {
      continue;
    }
    mxc__node *v = n->inputs[k_inits[i].slot].node;
    if (v->op || mxc__node_get_uattr(v, "__init__")) continue;
    MXC_FORWARD_IF_ERROR(mxc__node_set_uattr(v, "__init__", k_inits[i].init));
  }
  return MXC_OK;
}

int mxc__legacy_set_uattrs(mxc__node *n, const char *const *uk,
                           const char *const *uv, int nu, int version) {
  for (int i = 0; i < nu; ++i) {
    size_t plen = 0;
    const char *up = mxc__legacy_hidden_key(uk[i], &plen);
    mxc__node *target = n;
    const char *key = uk[i];
    if (up && plen == 0) key = up;
    if (up && plen > 0) {
      mxc__node *v = named_input_variable(n, uk[i], plen);
      if (v) target = v, key = up;
    }
    MXC_FORWARD_IF_ERROR(mxc__node_set_uattr(target, key, uv[i]));
  }
  return n->op && version < MXC__MXNET_V0_9_4 ? set_inits(n) : MXC_OK;
}

/* A variable "<name>_<input>" with the "__...__" attributes of uk/uv. */
static int legacy_variable(const char *name, const char *input,
                           const char *const *uk, const char *const *uv,
                           int nu, mxc__node **out) {
  size_t len = strlen(name) + strlen(input) + 2;
  char *vn = mxc__malloc(len);
  MXC_RETURN_ERROR_IF(!vn, MXC_ERR_OOM, "out of memory loading a symbol");
  snprintf(vn, len, "%s_%s", name, input);
  int rc = mxc__node_variable(vn, out);
  mxc__free(vn);
  for (int i = 0; rc == MXC_OK && i < nu; ++i) {
    if (strncmp(uk[i], "__", 2) == 0) {
      rc = mxc__node_set_uattr(*out, uk[i], uv[i]);
    }
  }
  return rc;
}

int mxc__legacy_missing_inputs(const mxc__op *op, const void *param,
                               const char *name, const char *const *uk,
                               const char *const *uv, int nu, int n_given,
                               int n_want, mxc__entry *ins,
                               mxc__node **made) {
  for (int k = n_given; k < n_want; ++k) {
    const char *in = mxc__op_input_name(op, param, k);
    MXC_FORWARD_IF_ERROR(
        legacy_variable(name, in ? in : "input", uk, uv, nu, &made[k]));
    ins[k].node = made[k];
    ins[k].index = 0;
  }
  return MXC_OK;
}
