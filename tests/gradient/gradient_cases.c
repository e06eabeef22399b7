/* Tests of the indexed graph and the gradient pass (core/graph), in C
 * because the internal headers are C11. Each case builds a small DAG of
 * nodes, builds its gradient with mxc__gradient_build, evaluates both with
 * a plain evaluator (operators invoked one by one in topological order)
 * and compares the gradient with central finite differences of
 * L = sum(head_grad * output) in float64.
 *
 * Every case returns the number of failed checks and prints what failed. */
#include "tests/gradient/gradient_cases.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/gradient.h"
#include "core/graph/graph.h"
#include "core/ndarray/ndarray.h"
#include "core/op/invoke.h"
#include "core/resource/training.h"
#include "core/op/node.h"

#define CHECK(cond, ...)                              \
  do {                                                \
    if (!(cond)) {                                    \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                   \
      fprintf(stderr, "\n");                          \
      ++fails;                                        \
    }                                                 \
  } while (0)

#define MAXV 8

/* A variable with its value (float64 host data). */
typedef struct var {
  mxc__node *node;
  mxc__shape shape;
  double data[256];
} var;

static int64_t numel(const mxc__shape *s) { return mxc__shape_size(s); }

static mxc__shape shp(int nd, int64_t a, int64_t b, int64_t c, int64_t d) {
  mxc__shape s;
  memset(&s, 0, sizeof s);
  s.ndim = nd;
  s.dims[0] = a;
  s.dims[1] = b;
  s.dims[2] = c;
  s.dims[3] = d;
  return s;
}

static void var_init(var *v, const char *name, mxc__shape s, unsigned seed) {
  mxc__node_variable(name, &v->node);
  v->shape = s;
  unsigned x = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < numel(&s); ++i) {
    x = x * 1103515245u + 12345u;
    v->data[i] = ((double)((x >> 8) & 0xffff) / 65536.0) * 2.0 - 1.0;
  }
}

static mxc__node *op(const char *name, const char *k, const char *val,
                     mxc__entry *ins, int n_in) {
  mxc__node *n = NULL;
  const char *keys[1] = {k}, *vals[1] = {val};
  if (mxc__node_op(name, keys, vals, k ? 1 : 0, ins, n_in, name, &n) !=
      MXC_OK) {
    fprintf(stderr, "node %s: %s\n", name, mxc__error_msg());
  }
  return n;
}

static mxc__entry ent(mxc__node *n, int i) {
  mxc__entry e = {n, i};
  return e;
}

/* Evaluates entries outs[0..n_out) given variable values; writes each
 * output's values (float64) to res[i] (up to 256 each). */
static int eval(const mxc__entry *outs, int n_out, var *vars, int n_vars,
                double (*res)[256]) {
  mxc__graph *g = NULL;
  int rc = mxc__graph_build(outs, n_out, &g);
  if (rc != MXC_OK) return rc;
  mxc__ndarray **vals = mxc__calloc((size_t)g->n_entries, sizeof *vals);
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  for (int i = 0; rc == MXC_OK && i < g->n_nodes; ++i) {
    mxc__node *n = g->nodes[i];
    int e0 = g->entry_ptr[i];
    if (!n->op) {
      rc = MXC_ERR_NOT_FOUND;
      for (int v = 0; v < n_vars; ++v) {
        if (vars[v].node != n) continue;
        rc = mxc__ndarray_create(&vars[v].shape, MXC_DTYPE_FLOAT64, cpu, 0,
                                 &vals[e0]);
        if (rc == MXC_OK) {
          rc = mxc__ndarray_copy_from_host(vals[e0], vars[v].data,
                                           sizeof(double) *
                                               (size_t)numel(&vars[v].shape));
        }
      }
      if (rc == MXC_ERR_NOT_FOUND) fprintf(stderr, "unbound %s\n", n->name);
      continue;
    }
    mxc__ndarray *ins[16];
    for (int k = 0; k < n->n_inputs; ++k) {
      ins[k] = vals[g->in_entries[g->in_ptr[i] + k]];
    }
    int n_o = g->entry_ptr[i + 1] - e0;
    rc = mxc__op_invoke(n->op, n->param, ins, n->n_inputs, &vals[e0], n_o,
                        NULL);
    if (rc != MXC_OK) fprintf(stderr, "%s: %s\n", n->name, mxc__error_msg());
  }
  for (int i = 0; rc == MXC_OK && i < n_out; ++i) {
    mxc__ndarray *a = vals[g->heads[i]];
    rc = mxc__ndarray_copy_to_host(a, res[i],
                                   sizeof(double) * (size_t)numel(&a->shape));
  }
  for (int e = 0; e < g->n_entries; ++e) mxc__ndarray_free(vals[e]);
  mxc__free(vals);
  mxc__graph_free(g);
  return rc;
}

/* L = sum(hg * f(vars)) for head y (one output). */
static double loss(mxc__entry y, var *vars, int n_vars, const double *hg,
                   int64_t n) {
  static double out[1][256];
  if (eval(&y, 1, vars, n_vars, out) != MXC_OK) return NAN;
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += hg[i] * out[0][i];
  return s;
}

/* Checks the gradient of y w.r.t. vars[0..n_wrt) by finite differences.
 * hg_var is the head-gradient variable (already in vars, last). */
static int check_grads(mxc__entry y, var *vars, int n_vars, int n_wrt,
                       int64_t n_y, const char *what) {
  int fails = 0;
  var *hg = &vars[n_vars - 1];
  mxc__entry head_grad = ent(hg->node, 0);
  mxc__entry wrt[MAXV] = {{NULL, 0}}, grads[MAXV] = {{NULL, 0}};
  for (int i = 0; i < n_wrt; ++i) wrt[i] = ent(vars[i].node, 0);
  int rc = mxc__gradient_build(&y, &head_grad, 1, wrt, n_wrt, grads);
  CHECK(rc == MXC_OK, "%s: gradient_build: %s", what, mxc__error_msg());
  if (rc != MXC_OK) return fails;
  static double got[MAXV][256];
  for (int i = 0; i < n_wrt; ++i) {
    CHECK(grads[i].node != NULL, "%s: no gradient for %s", what,
          vars[i].node->name);
  }
  rc = eval(grads, n_wrt, vars, n_vars, got);
  CHECK(rc == MXC_OK, "%s: eval of gradient: %s", what, mxc__error_msg());
  const double eps = 1e-6;
  for (int i = 0; rc == MXC_OK && i < n_wrt; ++i) {
    for (int64_t j = 0; j < numel(&vars[i].shape); ++j) {
      double keepv = vars[i].data[j];
      vars[i].data[j] = keepv + eps;
      double lp = loss(y, vars, n_vars, hg->data, n_y);
      vars[i].data[j] = keepv - eps;
      double lm = loss(y, vars, n_vars, hg->data, n_y);
      vars[i].data[j] = keepv;
      double fd = (lp - lm) / (2 * eps);
      CHECK(fabs(fd - got[i][j]) <= 1e-5 + 1e-4 * fabs(fd),
            "%s: d/d%s[%lld]: gradient %.8g, finite difference %.8g", what,
            vars[i].node->name, (long long)j, got[i][j], fd);
    }
  }
  for (int i = 0; i < n_wrt; ++i) mxc__node_release(grads[i].node);
  return fails;
}

static void release_vars(var *v, int n) {
  for (int i = 0; i < n; ++i) mxc__node_release(v[i].node);
}

/* y = sigmoid(x * w) + x: x is used twice, so its gradient is a sum. */
int mxct_case_shared_input(void) {
  var v[3];
  var_init(&v[0], "x", shp(2, 3, 4, 0, 0), 1);
  var_init(&v[1], "w", shp(2, 3, 4, 0, 0), 2);
  var_init(&v[2], "hg", shp(2, 3, 4, 0, 0), 3);
  mxc__entry xw[2] = {ent(v[0].node, 0), ent(v[1].node, 0)};
  mxc__node *mul = op("elemwise_mul", NULL, NULL, xw, 2);
  mxc__entry m = ent(mul, 0);
  mxc__node *sig = op("sigmoid", NULL, NULL, &m, 1);
  mxc__entry sx[2] = {ent(sig, 0), ent(v[0].node, 0)};
  mxc__node *add = op("elemwise_add", NULL, NULL, sx, 2);
  int fails = check_grads(ent(add, 0), v, 3, 2, 12, "shared_input");
  mxc__node_release(mul);
  mxc__node_release(sig);
  mxc__node_release(add);
  release_vars(v, 3);
  return fails;
}

/* FullyConnected -> tanh -> SliceChannel(3) -> out0 + out2: parameters
 * get gradients; the unused slice output gets a zero gradient. */
int mxct_case_mlp_slice(void) {
  var v[5];
  var_init(&v[0], "data", shp(2, 2, 5, 0, 0), 4);
  var_init(&v[1], "fc_weight", shp(2, 6, 5, 0, 0), 5);
  var_init(&v[2], "fc_bias", shp(1, 6, 0, 0, 0), 6);
  var_init(&v[3], "unused", shp(1, 3, 0, 0, 0), 7);
  var_init(&v[4], "hg", shp(2, 2, 2, 0, 0), 8);
  mxc__entry fin[3] = {ent(v[0].node, 0), ent(v[1].node, 0),
                       ent(v[2].node, 0)};
  mxc__node *fc = op("FullyConnected", "num_hidden", "6", fin, 3);
  mxc__entry f = ent(fc, 0);
  mxc__node *act = op("Activation", "act_type", "tanh", &f, 1);
  mxc__entry a = ent(act, 0);
  mxc__node *sl = op("SliceChannel", "num_outputs", "3", &a, 1);
  mxc__entry pick[2] = {ent(sl, 0), ent(sl, 2)};
  mxc__node *add = op("elemwise_add", NULL, NULL, pick, 2);
  int fails = check_grads(ent(add, 0), v, 5, 3, 4, "mlp_slice");

  /* A variable the heads do not depend on gets no gradient entry. */
  mxc__entry y = ent(add, 0), hg = ent(v[4].node, 0), wrt = ent(v[3].node, 0);
  mxc__entry g = {(mxc__node *)1, 7};
  int rc = mxc__gradient_build(&y, &hg, 1, &wrt, 1, &g);
  CHECK(rc == MXC_OK && g.node == NULL && g.index == 0,
        "unreachable variable: rc %d node %p", rc, (void *)g.node);

  /* Allocation failures at every step: an error or success, never a leak. */
  int64_t base = mxc__alloc_live();
  for (int64_t k = 1; k < 100000; ++k) {
    mxc__entry wr[3] = {ent(v[0].node, 0), ent(v[1].node, 0),
                        ent(v[2].node, 0)};
    mxc__entry out[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
    mxc__fault_alloc_arm(k, 0);
    rc = mxc__gradient_build(&y, &hg, 1, wr, 3, out);
    int fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    CHECK(rc == MXC_OK || rc == MXC_ERR_OOM, "fault %lld: rc %d",
          (long long)k, rc);
    if (rc != MXC_OK) {
      CHECK(out[0].node == NULL && out[1].node == NULL,
            "fault %lld: outputs touched on failure", (long long)k);
    }
    for (int i = 0; i < 3; ++i) mxc__node_release(out[i].node);
    CHECK(mxc__alloc_live() == base, "fault %lld: %lld blocks leaked",
          (long long)k, (long long)(mxc__alloc_live() - base));
    if (!fired) break;
  }
  mxc__node_release(fc);
  mxc__node_release(act);
  mxc__node_release(sl);
  mxc__node_release(add);
  release_vars(v, 5);
  return fails;
}

/* BatchNorm in training mode: data, gamma, beta get gradients; the
 * moving statistics (aux) are classified as such and get none. */
int mxct_case_batchnorm_aux(void) {
  var v[6];
  var_init(&v[0], "data", shp(4, 3, 2, 2, 2), 9);
  var_init(&v[1], "bn_gamma", shp(1, 2, 0, 0, 0), 10);
  var_init(&v[2], "bn_beta", shp(1, 2, 0, 0, 0), 11);
  var_init(&v[3], "bn_moving_mean", shp(1, 2, 0, 0, 0), 12);
  var_init(&v[4], "bn_moving_var", shp(1, 2, 0, 0, 0), 13);
  var_init(&v[5], "hg", shp(4, 3, 2, 2, 2), 14);
  for (int i = 0; i < 2; ++i) v[4].data[i] = 1.0 + 0.5 * i;
  mxc__entry in[5];
  for (int i = 0; i < 5; ++i) in[i] = ent(v[i].node, 0);
  mxc__node *bn = op("BatchNorm", "fix_gamma", "False", in, 5);
  mxc__entry y = ent(bn, 0);
  int fails = 0;
  mxc__graph *g = NULL;
  int rc = mxc__graph_build(&y, 1, &g);
  CHECK(rc == MXC_OK, "graph: %s", mxc__error_msg());
  if (rc == MXC_OK) {
    CHECK(g->n_args == 3 && g->n_aux == 2, "args %d aux %d", g->n_args,
          g->n_aux);
    CHECK(g->n_entries == 5 + 3, "entries %d (BatchNorm has 3 outputs)",
          g->n_entries);
    CHECK(g->n_aux == 2 && g->nodes[g->aux[0]] == v[3].node &&
              g->nodes[g->aux[1]] == v[4].node,
          "aux order");
    mxc__graph_free(g);
  }
  int prev = mxc__set_training(1);
  fails += check_grads(y, v, 6, 3, 24, "batchnorm");
  mxc__entry hg = ent(v[5].node, 0), wrt = ent(v[3].node, 0);
  mxc__entry gm = {NULL, 0};
  rc = mxc__gradient_build(&y, &hg, 1, &wrt, 1, &gm);
  CHECK(rc == MXC_OK && gm.node == NULL, "aux got a gradient");
  mxc__node_release(gm.node);
  mxc__set_training(prev);
  mxc__node_release(bn);
  release_vars(v, 6);
  return fails;
}

/* Graph indexing: post-order, entry ids, consumers, bad entries. */
int mxct_case_graph_index(void) {
  int fails = 0;
  var v[2];
  var_init(&v[0], "a", shp(1, 3, 0, 0, 0), 1);
  var_init(&v[1], "b", shp(1, 3, 0, 0, 0), 2);
  mxc__entry ab[2] = {ent(v[0].node, 0), ent(v[1].node, 0)};
  mxc__node *add = op("elemwise_add", NULL, NULL, ab, 2);
  mxc__entry aa[2] = {ent(add, 0), ent(v[0].node, 0)};
  mxc__node *mul = op("elemwise_mul", NULL, NULL, aa, 2);
  mxc__entry heads[2] = {ent(mul, 0), ent(add, 0)};
  mxc__graph *g = NULL;
  int rc = mxc__graph_build(heads, 2, &g);
  CHECK(rc == MXC_OK, "build: %s", mxc__error_msg());
  if (rc == MXC_OK) {
    CHECK(g->n_nodes == 4, "nodes %d", g->n_nodes);
    CHECK(g->nodes[0] == v[0].node && g->nodes[1] == v[1].node &&
              g->nodes[2] == add && g->nodes[3] == mul,
          "post-order");
    CHECK(g->n_args == 2 && g->args[0] == 0 && g->args[1] == 1, "args");
    CHECK(g->n_consumers[0] == 2 && g->n_consumers[2] == 2 &&
              g->n_consumers[3] == 1,
          "consumers %d %d %d", g->n_consumers[0], g->n_consumers[2],
          g->n_consumers[3]);
    CHECK(mxc__graph_entry_node(g, 3) == 3 && mxc__graph_entry_node(g, 0) == 0,
          "entry_node");
    CHECK(mxc__graph_node_id(g, NULL) == -1, "node_id(NULL)");
    mxc__graph_free(g);
  }
  mxc__entry bad = ent(add, 1);
  g = NULL;
  rc = mxc__graph_build(&bad, 1, &g);
  CHECK(rc == MXC_ERR_INVALID_ARGUMENT && g == NULL,
        "bad output index accepted");
  /* A deep chain does not recurse. */
  mxc__node *cur = v[0].node;
  mxc__node_retain(cur);
  for (int i = 0; i < 20000; ++i) {
    mxc__entry e = ent(cur, 0);
    mxc__node *n = NULL;
    mxc__node_op("negative", NULL, NULL, 0, &e, 1, "neg", &n);
    mxc__node_release(cur);
    cur = n;
  }
  mxc__entry deep = ent(cur, 0);
  rc = mxc__graph_build(&deep, 1, &g);
  CHECK(rc == MXC_OK && g->n_nodes == 20001, "deep chain");
  mxc__graph_free(g);
  mxc__node_release(cur);
  mxc__node_release(add);
  mxc__node_release(mul);
  release_vars(v, 2);
  return fails;
}
