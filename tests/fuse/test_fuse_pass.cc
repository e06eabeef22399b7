// The fusion pass (core/fuse): which nodes it fuses and which it must
// not, the structure of the rewritten DAG, and its values: every rewritten
// DAG is evaluated operator by operator (tests/fuse/fuse_shim.c) and
// compared with the original DAG evaluated the same way; forward and
// backward graphs, float32 and float64; allocation failures.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/fuse/fuse_shim.h"
#include "tests/fuse/fuse_test_util.h"

namespace {

using fuset::Arr;
using fuset::close;
using fuset::err;
using fuset::make1;
using fuset::read;
using fuset::uniform;

const char *kFused = "_fused_elemwise";

mxct_entry E(mxct_node *n, int i = 0) { return mxct_entry{n, i}; }

// Builds nodes and releases them all at the end of a test.
struct Dag {
  std::vector<mxct_node *> owned;
  ~Dag() {
    for (auto *n : owned) mxct_release(n);
  }
  mxct_node *var(const std::string &name) {
    mxct_node *n = mxct_var(name.c_str());
    EXPECT_NE(n, nullptr) << err();
    owned.push_back(n);
    return n;
  }
  mxct_node *op(const std::string &op, std::vector<mxct_entry> in,
                const fuset::Params &p = {}, const std::string &name = "") {
    std::vector<const char *> k, v;
    for (auto &kv : p) {
      k.push_back(kv.first.c_str());
      v.push_back(kv.second.c_str());
    }
    std::string nm = name.empty() ? op + std::to_string(owned.size()) : name;
    mxct_node *n = mxct_op(op.c_str(), k.data(), v.data(), (int)k.size(),
                           in.data(), (int)in.size(), nm.c_str());
    EXPECT_NE(n, nullptr) << op << ": " << err();
    owned.push_back(n);
    return n;
  }
  mxct_node *sc(const std::string &op, mxct_node *in, const char *s) {
    return this->op(op, {E(in)}, {{"scalar", s}});
  }
};

// The rewritten heads, released at scope exit.
struct Fused {
  std::vector<mxct_entry> heads;
  int n_fused = -1;
  explicit Fused(const std::vector<mxct_entry> &h) : heads(h.size()) {
    EXPECT_EQ(mxct_fuse(h.data(), (int)h.size(), heads.data(), &n_fused),
              MXC_OK)
        << err();
  }
  ~Fused() { mxct_release_entries(heads.data(), (int)heads.size()); }
};

std::vector<mxct_node *> nodes_of(const std::vector<mxct_entry> &heads) {
  std::vector<mxct_node *> out(4096);
  int n = mxct_nodes(heads.data(), (int)heads.size(), out.data(), 4096);
  EXPECT_GE(n, 0) << err();
  out.resize(n < 0 ? 0 : n);
  return out;
}

int count_op(const std::vector<mxct_entry> &heads, const char *op) {
  int c = 0;
  for (auto *n : nodes_of(heads)) {
    const char *o = mxct_node_op(n);
    c += op ? (o && std::string(o) == op) : 1;
  }
  return c;
}

// Evaluates heads with variables bound to the given arrays.
std::vector<std::vector<double>> eval(
    const std::vector<mxct_entry> &heads,
    const std::vector<std::pair<mxct_node *, const Arr *>> &bind) {
  std::vector<mxct_node *> vars;
  std::vector<mxc_ndarray> vals;
  for (auto &b : bind) {
    vars.push_back(b.first);
    vals.push_back(b.second->h);
  }
  std::vector<mxc_ndarray> outs(heads.size(), nullptr);
  EXPECT_EQ(mxct_eval(heads.data(), (int)heads.size(), vars.data(),
                      vals.data(), (int)vars.size(), outs.data()),
            MXC_OK)
      << err();
  std::vector<std::vector<double>> r;
  for (auto h : outs) {
    Arr a(h);
    r.push_back(a.h ? read(a) : std::vector<double>());
  }
  return r;
}

// Original and fused DAG give the same values (to a few ulp: fused exp and
// sigmoid are vectorized).
void expect_same_values(
    const std::vector<mxct_entry> &orig, const std::vector<mxct_entry> &fused,
    const std::vector<std::pair<mxct_node *, const Arr *>> &bind,
    double rtol) {
  auto a = eval(orig, bind), b = eval(fused, bind);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(close(b[i], a[i], rtol, rtol)) << "head " << i;
  }
}

TEST(FusePass, ChainBecomesOneNode) {
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Dag d;
    mxct_node *x = d.var("x");
    mxct_node *a = d.sc("_mul_scalar", x, "0.5");
    mxct_node *b = d.sc("_plus_scalar", a, "0.25");
    mxct_node *c = d.op("negative", {E(b)});
    mxct_node *e = d.op("exp", {E(c)});
    mxct_node *f = d.sc("_plus_scalar", e, "1");
    mxct_node *y = d.sc("_rdiv_scalar", f, "1");
    Fused fz({E(y)});
    EXPECT_EQ(fz.n_fused, 1);
    std::vector<mxct_node *> ns = nodes_of(fz.heads);
    ASSERT_EQ(ns.size(), 2u);
    EXPECT_EQ(ns[0], x);  // variables are shared, never copied
    mxct_node *fn = ns[1];
    EXPECT_STREQ(mxct_node_op(fn), kFused);
    EXPECT_EQ(std::string(mxct_node_name(fn)),
              std::string("fused_") + mxct_node_name(a) + "_" +
                  mxct_node_name(y));
    const char *members = mxct_node_uattr(fn, mxct_fuse_attr());
    ASSERT_NE(members, nullptr);
    std::string want;
    for (mxct_node *m : {a, b, c, e, f, y}) {
      want += (want.empty() ? "" : ",") + std::string(mxct_node_name(m));
    }
    EXPECT_EQ(std::string(members), want);
    EXPECT_STREQ(mxct_node_param(fn, "num_inputs"), "1");
    EXPECT_STREQ(mxct_node_param(fn, "program"),
                 "_mul_scalar(i0,scalar=0.5);_plus_scalar(r0,scalar=0.25);"
                 "negative(r1);exp(r2);_plus_scalar(r3,scalar=1);"
                 "_rdiv_scalar(r4,scalar=1)");
    Arr xv = make1(uniform(10007, -9, 9, 1), dt);
    expect_same_values({E(y)}, fz.heads, {{x, &xv}},
                       dt == MXC_DTYPE_FLOAT32 ? 1e-6 : 1e-15);
  }
}

// For another device the pass asks that device's fused kernel (its row's
// accepts, core/op/fusion.h): this binary has no GPU plug-in, so a GPU
// graph fuses nothing (its nodes run on their own kernels), while the
// same chain fuses for the CPU.
TEST(FusePass, ADeviceWithoutAFusedKernelFusesNothing) {
  Dag d;
  mxct_node *x = d.var("x");
  mxct_node *a = d.sc("_mul_scalar", x, "0.5");
  mxct_node *b = d.op("exp", {E(a)});
  mxct_node *y = d.sc("_plus_scalar", b, "1");
  for (int dev : {MXC_DEVICE_GPU, MXC_DEVICE_CPU}) {
    std::vector<mxct_entry> h = {E(y)}, out(1);
    int n_fused = -1;
    ASSERT_EQ(mxct_fuse_for(h.data(), 1, dev, out.data(), &n_fused), MXC_OK)
        << err();
    EXPECT_EQ(n_fused, dev == MXC_DEVICE_CPU ? 1 : 0);
    EXPECT_EQ(count_op(out, kFused), dev == MXC_DEVICE_CPU ? 1 : 0);
    mxct_release_entries(out.data(), 1);
  }
}

TEST(FusePass, SharedIntermediateIsNotFusedAway) {
  // s = exp(x) feeds sin and cos: it has two consumers, so it stays a
  // node of its own; sin, cos and their sum fuse around it.
  Dag d;
  mxct_node *x = d.var("x");
  mxct_node *s = d.op("exp", {E(x)});
  mxct_node *p = d.op("sin", {E(s)});
  mxct_node *q = d.op("cos", {E(s)});
  mxct_node *y = d.op("elemwise_add", {E(p), E(q)});
  Fused fz({E(y)});
  EXPECT_EQ(fz.n_fused, 1);
  std::vector<mxct_node *> ns = nodes_of(fz.heads);
  ASSERT_EQ(ns.size(), 3u);
  EXPECT_EQ(ns[1], s);  // untouched and shared
  EXPECT_STREQ(mxct_node_op(ns[2]), kFused);
  ASSERT_EQ(mxct_node_n_inputs(ns[2]), 1);
  EXPECT_EQ(mxct_node_input(ns[2], 0).node, s);
  EXPECT_STREQ(mxct_node_param(ns[2], "program"), "sin(i0);cos(i0);add(r0,r1)");
  Arr xv = make1(uniform(3001, -2, 2, 2));
  expect_same_values({E(y)}, fz.heads, {{x, &xv}}, 1e-6);
}

TEST(FusePass, HeadsInsideAChainSplitIt) {
  // mid is an output too: the chain splits there, and both heads keep
  // their values.
  Dag d;
  mxct_node *x = d.var("x");
  mxct_node *a = d.op("tanh", {E(x)});
  mxct_node *mid = d.op("square", {E(a)});
  mxct_node *b = d.op("sqrt", {E(mid)});
  mxct_node *y = d.op("relu", {E(b)});
  Fused fz({E(y), E(mid)});
  EXPECT_EQ(fz.n_fused, 2);
  EXPECT_EQ(count_op(fz.heads, kFused), 2);
  EXPECT_EQ(count_op(fz.heads, nullptr), 3);
  EXPECT_STREQ(mxct_node_op(fz.heads[1].node), kFused);
  EXPECT_STREQ(mxct_node_param(fz.heads[1].node, "program"),
               "tanh(i0);square(r0)");
  Arr xv = make1(uniform(999, -2, 2, 3), MXC_DTYPE_FLOAT64);
  expect_same_values({E(y), E(mid)}, fz.heads, {{x, &xv}}, 0);
}

TEST(FusePass, BarriersAndRebuiltConsumers) {
  // broadcast_add and sum are not fusible; sum sits after a fused region,
  // so it is re-created with the fused node as input (same name and
  // parameters); the single exp before broadcast_add stays as it was.
  Dag d;
  mxct_node *x = d.var("x"), *w = d.var("w");
  mxct_node *e = d.op("exp", {E(x)});
  mxct_node *bc = d.op("broadcast_add", {E(e), E(w)});
  mxct_node *s1 = d.op("sigmoid", {E(bc)});
  mxct_node *s2 = d.op("Activation", {E(s1)}, {{"act_type", "tanh"}});
  mxct_node *sum = d.op("sum", {E(s2)}, {{"axis", "1"}}, "total");
  Fused fz({E(sum)});
  EXPECT_EQ(fz.n_fused, 1);
  std::vector<mxct_node *> ns = nodes_of(fz.heads);
  ASSERT_EQ(ns.size(), 6u);  // x, e, w, bc, fused, sum
  EXPECT_EQ(ns[1], e);
  EXPECT_EQ(ns[3], bc);
  EXPECT_STREQ(mxct_node_op(ns[4]), kFused);
  EXPECT_NE(ns[5], sum);
  EXPECT_STREQ(mxct_node_op(ns[5]), "sum");
  EXPECT_STREQ(mxct_node_name(ns[5]), "total");
  EXPECT_STREQ(mxct_node_param(ns[5], "axis"), "1");
  EXPECT_STREQ(mxct_node_param(ns[4], "program"),
               "sigmoid(i0);Activation(r0,act_type=tanh)");
  Arr xv = fuset::make({3, 5}, uniform(15, -2, 2, 4));
  Arr wv = fuset::make({1, 5}, uniform(5, -1, 1, 5));
  expect_same_values({E(sum)}, fz.heads, {{x, &xv}, {w, &wv}}, 1e-6);
}

TEST(FusePass, NothingToFuseSharesEverything) {
  Dag d;
  mxct_node *x = d.var("x");
  mxct_node *a = d.op("exp", {E(x)});
  mxct_node *b = d.op("broadcast_mul", {E(a), E(x)});
  Fused fz({E(b), E(a)});
  EXPECT_EQ(fz.n_fused, 0);
  EXPECT_EQ(fz.heads[0].node, b);
  EXPECT_EQ(fz.heads[1].node, a);
  Fused none(std::vector<mxct_entry>{});
  EXPECT_EQ(none.n_fused, 0);
}

TEST(FusePass, BackwardGraphFusesAndKeepsGradients) {
  // y = tanh(sigmoid(a x + b) * x2); gradients wrt x and x2. The forward
  // values that backward nodes read have consumers outside any chain, so
  // fusion keeps them; the backward chains fuse.
  for (int dt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}) {
    Dag d;
    mxct_node *x = d.var("x"), *x2 = d.var("x2"), *hg = d.var("hg");
    mxct_node *a = d.sc("_mul_scalar", x, "1.5");
    mxct_node *b = d.sc("_plus_scalar", a, "-0.5");
    mxct_node *s = d.op("sigmoid", {E(b)});
    mxct_node *m = d.op("elemwise_mul", {E(s), E(x2)});
    mxct_node *y = d.op("tanh", {E(m)});
    mxct_entry heads[] = {E(y)}, hgs[] = {E(hg)}, wrt[] = {E(x), E(x2)};
    mxct_entry g[2];
    ASSERT_EQ(mxct_gradient(heads, hgs, 1, wrt, 2, g), MXC_OK) << err();
    std::vector<mxct_entry> all = {E(y), g[0], g[1]};
    Fused fz(all);
    // Every forward value is read by a backward node too, so the forward
    // chain stays; _backward_mul has two outputs, so the backward chain
    // fuses below it: d sigmoid, d plus, d mul (x's gradient).
    EXPECT_EQ(fz.n_fused, 1);
    EXPECT_EQ(count_op(fz.heads, nullptr), count_op(all, nullptr) - 2);
    mxct_node *fn = fz.heads[1].node;
    ASSERT_STREQ(mxct_node_op(fn), kFused);
    EXPECT_STREQ(mxct_node_param(fn, "program"),
                 "_backward_sigmoid(i0,i1,i2);"
                 "_backward__plus_scalar(r0,i3,scalar=-0.5);"
                 "_backward__mul_scalar(r1,i4,scalar=1.5)");
    int64_t n = 4099;
    Arr xv = make1(uniform(n, -3, 3, 6), dt), x2v = make1(uniform(n, -2, 2, 7), dt);
    Arr hv = make1(uniform(n, -1, 1, 8), dt);
    expect_same_values(all, fz.heads, {{x, &xv}, {x2, &x2v}, {hg, &hv}},
                       dt == MXC_DTYPE_FLOAT32 ? 2e-6 : 1e-14);
    mxct_release_entries(g, 2);
  }
}

TEST(FusePass, RegionsRespectInstructionAndInputLimits) {
  // A chain of 100 unary nodes: 64 + 36.
  {
    Dag d;
    mxct_node *x = d.var("x");
    mxct_node *c = x;
    for (int i = 0; i < 100; ++i) c = d.op(i % 2 ? "negative" : "sin", {E(c)});
    Fused fz({E(c)});
    EXPECT_EQ(fz.n_fused, 2);
    EXPECT_EQ(count_op(fz.heads, nullptr), 3);
    Arr xv = make1(uniform(100, -1, 1, 9), MXC_DTYPE_FLOAT64);
    expect_same_values({E(c)}, fz.heads, {{x, &xv}}, 0);
  }
  // A sum of 80 variables by a chain of adds: no region reads more than
  // 32 external inputs (31 adds each: 31 + 31 + 17).
  {
    Dag d;
    std::vector<mxct_node *> vars;
    std::vector<Arr> vals;
    std::vector<std::pair<mxct_node *, const Arr *>> bind;
    for (int i = 0; i < 80; ++i) {
      vars.push_back(d.var("v" + std::to_string(i)));
      vals.push_back(make1(uniform(33, -1, 1, 20 + i), MXC_DTYPE_FLOAT64));
    }
    for (int i = 0; i < 80; ++i) bind.push_back({vars[i], &vals[i]});
    mxct_node *acc = d.op("elemwise_add", {E(vars[0]), E(vars[1])});
    for (int i = 2; i < 80; ++i) acc = d.op("elemwise_add", {E(acc), E(vars[i])});
    Fused fz({E(acc)});
    EXPECT_EQ(fz.n_fused, 3);
    for (auto *n : nodes_of(fz.heads)) {
      if (mxct_node_op(n)) {
        EXPECT_LE(mxct_node_n_inputs(n), 32);
      }
    }
    expect_same_values({E(acc)}, fz.heads, bind, 0);
  }
}

TEST(FusePass, RepeatedInputsAndDiamondsAreRightOnce) {
  // x feeds a region twice (one external input); t = sin(x) is read twice
  // by one node (two consumers), so t is not absorbed.
  Dag d;
  mxct_node *x = d.var("x");
  mxct_node *a = d.op("exp", {E(x)});
  mxct_node *b = d.op("elemwise_mul", {E(a), E(x)});
  mxct_node *t = d.op("sin", {E(b)});
  mxct_node *u = d.op("elemwise_mul", {E(t), E(t)});
  mxct_node *v = d.op("cos", {E(u)});
  Fused fz({E(v)});
  EXPECT_EQ(fz.n_fused, 2);
  std::vector<mxct_node *> ns = nodes_of(fz.heads);
  ASSERT_EQ(ns.size(), 3u);
  EXPECT_STREQ(mxct_node_param(ns[1], "program"), "exp(i0);mul(r0,i0);sin(r1)");
  EXPECT_STREQ(mxct_node_param(ns[1], "num_inputs"), "1");
  EXPECT_STREQ(mxct_node_param(ns[2], "program"), "mul(i0,i0);cos(r0)");
  Arr xv = make1(uniform(77, -1, 1, 10), MXC_DTYPE_FLOAT64);
  expect_same_values({E(v)}, fz.heads, {{x, &xv}}, 0);
}

// One operator applied to one symbol (through the public API), which is
// consumed.
mxc_symbol apply(const char *op_name, mxc_symbol in, const char *key = nullptr,
                 const char *val = nullptr) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(op_name, &op), MXC_OK) << err();
  const char *k[1] = {key}, *v[1] = {val};
  mxc_symbol out = nullptr;
  EXPECT_EQ(mxc_symbol_create(op, k, v, key ? 1 : 0, nullptr, nullptr, &in, 1,
                              &out),
            MXC_OK)
      << op_name << ": " << err();
  mxc_symbol_free(in);
  return out;
}

TEST(FusePass, ExecutorsWithAndWithoutFusionAgree) {
  // y = tanh(sigmoid(1.5 x - 0.5)) * 2 through executors: outputs and
  // gradients of a fused and an unfused binding of one symbol agree.
  mxc_symbol s = nullptr;
  ASSERT_EQ(mxc_symbol_variable("x", &s), MXC_OK);
  s = apply("_mul_scalar", s, "scalar", "1.5");
  s = apply("_plus_scalar", s, "scalar", "-0.5");
  s = apply("sigmoid", s);
  s = apply("tanh", s);
  s = apply("_mul_scalar", s, "scalar", "2");
  const int64_t n = 70001;
  std::vector<double> xv = uniform(n, -4, 4, 13), hv = uniform(n, -1, 1, 14);
  std::vector<std::vector<double>> outs, grads;
  for (int flags : {MXC_BIND_DEFAULT, MXC_BIND_NO_FUSION}) {
    Arr x = make1(xv), g = make1(std::vector<double>(n, 0.0));
    Arr h = make1(hv);
    mxc_executor ex = nullptr;
    ASSERT_EQ(mxc_executor_bind(s, MXC_DEVICE_CPU, 0, 1, &x.h, &g.h, nullptr,
                                0, nullptr, flags, &ex),
              MXC_OK)
        << err();
    ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
    ASSERT_EQ(mxc_executor_backward(ex, 1, &h.h), MXC_OK) << err();
    mxc_ndarray o = nullptr;
    ASSERT_EQ(mxc_executor_output(ex, 0, &o), MXC_OK) << err();
    Arr out(o);
    outs.push_back(read(out));
    grads.push_back(read(g));
    char *dbg = nullptr;
    ASSERT_EQ(mxc_executor_debug_str(ex, &dbg), MXC_OK) << err();
    std::string d = dbg;
    mxc_string_free(dbg);
    EXPECT_EQ(d.find(kFused) != std::string::npos, flags == MXC_BIND_DEFAULT)
        << d;
    mxc_executor_free(ex);
  }
  EXPECT_TRUE(close(outs[0], outs[1], 1e-6, 1e-6));
  EXPECT_TRUE(close(grads[0], grads[1], 1e-5, 1e-6));
  mxc_symbol_free(s);
}

TEST(FusePass, AllocationFailuresLeakNothing) {
  Dag d;
  mxct_node *x = d.var("x");
  mxct_node *a = d.op("exp", {E(x)});
  mxct_node *b = d.op("sin", {E(a)});
  mxct_node *c = d.op("broadcast_add", {E(b), E(x)});
  mxct_node *e = d.op("sigmoid", {E(c)});
  mxct_node *f = d.op("relu", {E(e)});
  mxct_node *g = d.op("sum", {E(f)});
  std::vector<mxct_entry> heads = {E(g), E(b)};
  const int64_t live0 = mxct_alloc_live();
  int failures = 0;
  for (int64_t n = 1; n < 10000; ++n) {
    mxct_entry out[2] = {{nullptr, -7}, {nullptr, -7}};
    int n_fused = -1;
    mxct_fault_arm(n);
    int rc = mxct_fuse(heads.data(), 2, out, &n_fused);
    int fired = mxct_fault_fired();
    mxct_fault_arm(0);
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(n_fused, 2);
      mxct_release_entries(out, 2);
      break;
    }
    ++failures;
    if (rc != MXC_OK) {
      EXPECT_EQ(rc, MXC_ERR_OOM) << err();
      EXPECT_EQ(out[0].node, nullptr);  // untouched
      EXPECT_EQ(out[0].index, -7);
      EXPECT_EQ(n_fused, -1);
    } else {
      mxct_release_entries(out, 2);
    }
    EXPECT_EQ(mxct_alloc_live(), live0) << "leak after failing allocation " << n;
  }
  EXPECT_GT(failures, 10);
}

}  // namespace
