// Sparse arrays in symbolic graphs: storage-type inference over graphs
// (sparse kernel, dense, fallback; attributes; errors naming the node or
// variable), executors with csr arguments and row_sparse gradients against
// the same graph run on dense arrays, simple_bind with __storage_type__ /
// __grad_stype__, cast_storage forward and backward (write and add) in
// graphs against naive loops, memory plan on/off, fusion left out for
// sparse graphs, the monitor on sparse outputs, bad bindings, and an
// allocation-failure walk.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/testutil/fault_walk.h"
#include "tests/sparse_util/sparse_util.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}

namespace {

using sparse_test::Arr;
using sparse_test::Dense;
using sparse_test::max_rel_err;
using sparse_test::read;
using sparse_test::stype_of;

std::string err() { return mxc_last_error(); }

// Owns a symbol handle.
struct Sym {
  mxc_symbol s = nullptr;
  Sym() = default;
  explicit Sym(mxc_symbol h) : s(h) {}
  Sym(Sym &&o) noexcept : s(o.s) { o.s = nullptr; }
  Sym &operator=(Sym &&o) noexcept {
    std::swap(s, o.s);
    return *this;
  }
  Sym(const Sym &) = delete;
  ~Sym() { mxc_symbol_free(s); }
};

using KV = std::vector<std::pair<std::string, std::string>>;

Sym var(const char *name, const KV &attrs = {}) {
  std::vector<const char *> k, v;
  for (auto &p : attrs) {
    k.push_back(p.first.c_str());
    v.push_back(p.second.c_str());
  }
  mxc_symbol s = nullptr;
  EXPECT_EQ(mxc_symbol_variable_ex(name, k.data(), v.data(), (int)k.size(), &s),
            MXC_OK)
      << err();
  return Sym(s);
}

Sym op(const char *op_name, const KV &params, const char *name,
       const std::vector<mxc_symbol> &inputs) {
  mxc_op o = nullptr;
  EXPECT_EQ(mxc_op_find(op_name, &o), MXC_OK) << err();
  std::vector<const char *> k, v;
  for (auto &p : params) {
    k.push_back(p.first.c_str());
    v.push_back(p.second.c_str());
  }
  mxc_symbol s = nullptr;
  EXPECT_EQ(mxc_symbol_create(o, k.data(), v.data(), (int)k.size(), name,
                              nullptr, inputs.data(), (int)inputs.size(), &s),
            MXC_OK)
      << err();
  return Sym(s);
}

std::vector<std::string> arguments(mxc_symbol s) {
  mxc_str_list l = nullptr;
  EXPECT_EQ(mxc_symbol_list_arguments(s, &l), MXC_OK) << err();
  int n = 0;
  mxc_str_list_size(l, &n);
  std::vector<std::string> r;
  for (int i = 0; i < n; ++i) {
    const char *x = nullptr;
    mxc_str_list_get(l, i, &x);
    r.push_back(x);
  }
  mxc_str_list_free(l);
  return r;
}

// h = dot(data, W); a = relu(h); out = FullyConnected(a, 3) named fc.
Sym sparse_mlp(const KV &data_attrs = {}, const KV &w_attrs = {}) {
  Sym data = var("data", data_attrs), w = var("W", w_attrs);
  Sym h = op("dot", {}, "h", {data.s, w.s});
  Sym a = op("Activation", {{"act_type", "relu"}}, "act", {h.s});
  return op("FullyConnected", {{"num_hidden", "3"}}, "fc", {a.s});
}

// Values: data (6 x 10) with about 30% nonzeros, columns 2 and 7 and row 4
// empty (so rows 2 and 7 of W get no gradient); the weights dense.
std::map<std::string, Dense> mlp_values() {
  Dense data = sparse_test::random_sparse({6, 10}, 0.3, 11);
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < 10; ++c) {
      if (c == 2 || c == 7 || r == 4) data.v[(size_t)(r * 10 + c)] = 0;
    }
  }
  return {{"data", data},
          {"W", sparse_test::random_dense({10, 5}, 12)},
          {"fc_weight", sparse_test::random_dense({3, 5}, 13)},
          {"fc_bias", sparse_test::random_dense({3}, 14)}};
}

// One bound run: forward (train) and backward with ones.
struct Result {
  std::vector<Dense> outs;
  std::map<std::string, Dense> grads;
  std::map<std::string, int> grad_stypes;
  std::string debug;
};

struct Binding {
  std::map<std::string, int> arg_stype;   // default: dense
  std::map<std::string, int> grad_stype;  // absent: no gradient
  std::map<std::string, int> grad_req;    // absent: write
  int flags = MXC_BIND_DEFAULT;
  int backward_passes = 1;
};

int run_graph(mxc_symbol sym, const std::map<std::string, Dense> &vals,
              const Binding &b, Result *out) {
  std::vector<std::string> names = arguments(sym);
  std::vector<Arr> args, grads;
  std::vector<mxc_ndarray> ah, gh;
  std::vector<int> reqs;
  for (const auto &n : names) {
    auto st = b.arg_stype.count(n) ? b.arg_stype.at(n) : MXC_STYPE_DEFAULT;
    args.push_back(sparse_test::make(vals.at(n), st));
    ah.push_back(args.back().get());
    Arr g;
    int req = MXC_REQ_NULL;
    if (b.grad_stype.count(n)) {
      Dense zero = vals.at(n);
      for (auto &x : zero.v) x = 0;
      g = sparse_test::make(zero, b.grad_stype.at(n));
      req = b.grad_req.count(n) ? b.grad_req.at(n) : MXC_REQ_WRITE;
    }
    gh.push_back(g.get());
    grads.push_back(std::move(g));
    reqs.push_back(req);
  }
  mxc_executor ex = nullptr;
  int rc = mxc_executor_bind(sym, MXC_DEVICE_CPU, 0, (int)ah.size(), ah.data(),
                             gh.data(), reqs.data(), 0, nullptr, b.flags, &ex);
  if (rc != MXC_OK) return rc;
  for (int p = 0; rc == MXC_OK && p < b.backward_passes; ++p) {
    rc = mxc_executor_forward(ex, 1);
    if (rc == MXC_OK) rc = mxc_executor_backward(ex, 0, nullptr);
  }
  int n_out = 0;
  if (rc == MXC_OK) rc = mxc_executor_num_outputs(ex, &n_out);
  for (int j = 0; rc == MXC_OK && j < n_out; ++j) {
    Arr o;
    rc = mxc_executor_output(ex, j, o.out());
    if (rc == MXC_OK) out->outs.push_back(read(o.get()));
  }
  for (const auto &kv : b.grad_stype) {
    Arr g;
    if (rc == MXC_OK) rc = mxc_executor_grad(ex, kv.first.c_str(), g.out());
    if (rc != MXC_OK) break;
    out->grads[kv.first] = read(g.get());
    out->grad_stypes[kv.first] = stype_of(g.get());
  }
  char *dbg = nullptr;
  if (rc == MXC_OK && mxc_executor_debug_str(ex, &dbg) == MXC_OK) {
    out->debug = dbg;
    mxc_string_free(dbg);
  }
  mxc_executor_free(ex);
  return rc;
}

void expect_same(const Result &a, const Result &b) {
  ASSERT_EQ(a.outs.size(), b.outs.size());
  for (size_t j = 0; j < a.outs.size(); ++j) {
    EXPECT_LT(max_rel_err(a.outs[j], b.outs[j]), 1e-5) << "output " << j;
  }
  for (const auto &kv : b.grads) {
    ASSERT_TRUE(a.grads.count(kv.first)) << kv.first;
    EXPECT_LT(max_rel_err(a.grads.at(kv.first), kv.second), 1e-5) << kv.first;
  }
}

// Stored row indices of a row_sparse array.
std::vector<int64_t> stored_rows(mxc_ndarray a) {
  Arr idx;
  EXPECT_EQ(mxc_ndarray_aux(a, MXC_ROW_SPARSE_INDICES, idx.out()), MXC_OK)
      << err();
  Dense d = read(idx.get());
  std::vector<int64_t> r;
  for (double x : d.v) r.push_back((int64_t)x);
  return r;
}

// ---- storage-type inference over symbols ----

// Storage types inferred for sym: args by name, then outputs.
int infer(mxc_symbol sym, const std::map<std::string, int> &given,
          std::map<std::string, int> *args, std::vector<int> *outs) {
  std::vector<const char *> names;
  std::vector<int> st;
  for (const auto &kv : given) {
    names.push_back(kv.first.c_str());
    st.push_back(kv.second);
  }
  mxc_infer inf = nullptr;
  int rc = mxc_symbol_infer_storage_type(sym, (int)names.size(), names.data(),
                                         st.data(), &inf);
  if (rc != MXC_OK) return rc;
  std::vector<std::string> an = arguments(sym);
  for (size_t i = 0; i < an.size(); ++i) {
    int v = -2;
    EXPECT_EQ(mxc_infer_stype(inf, MXC_INFER_ARGS, (int)i, &v), MXC_OK);
    (*args)[an[i]] = v;
  }
  int n = 0;
  EXPECT_EQ(mxc_infer_count(inf, MXC_INFER_OUTPUTS, &n), MXC_OK);
  for (int j = 0; j < n; ++j) {
    int v = -2;
    EXPECT_EQ(mxc_infer_stype(inf, MXC_INFER_OUTPUTS, j, &v), MXC_OK);
    outs->push_back(v);
  }
  mxc_infer_free(inf);
  return rc;
}

TEST(SparseInfer, KernelDenseAndFallbackChoices) {
  Sym x = var("x");
  Sym to_csr = op("cast_storage", {{"stype", "csr"}}, "to_csr", {x.s});
  Sym back = op("cast_storage", {{"stype", "default"}}, "back", {to_csr.s});
  std::map<std::string, int> a;
  std::vector<int> o;
  // Dense in, sparse kernel out.
  ASSERT_EQ(infer(to_csr.s, {}, &a, &o), MXC_OK) << err();
  EXPECT_EQ(a["x"], MXC_STYPE_DEFAULT);
  EXPECT_EQ(o, std::vector<int>{MXC_STYPE_CSR});
  o.clear();
  ASSERT_EQ(infer(back.s, {}, &a, &o), MXC_OK) << err();
  EXPECT_EQ(o, std::vector<int>{MXC_STYPE_DEFAULT});
  // A csr input to a dense-only operator falls back: dense output.
  Sym fc = op("FullyConnected", {{"num_hidden", "4"}}, "fc", {x.s});
  o.clear();
  ASSERT_EQ(infer(fc.s, {{"x", MXC_STYPE_CSR}}, &a, &o), MXC_OK) << err();
  EXPECT_EQ(a["x"], MXC_STYPE_CSR);
  EXPECT_EQ(a["fc_weight"], MXC_STYPE_DEFAULT);
  EXPECT_EQ(o, std::vector<int>{MXC_STYPE_DEFAULT});
  // Sparse flowing through a chain: csr -> row_sparse -> dense.
  Sym rsp = op("cast_storage", {{"stype", "row_sparse"}}, "rsp", {x.s});
  Sym fc2 = op("FullyConnected", {{"num_hidden", "4"}}, "fc2", {rsp.s});
  mxc_symbol both[2] = {rsp.s, fc2.s};
  Sym grp;
  ASSERT_EQ(mxc_symbol_group(both, 2, &grp.s), MXC_OK) << err();
  o.clear();
  ASSERT_EQ(infer(grp.s, {{"x", MXC_STYPE_CSR}}, &a, &o), MXC_OK) << err();
  EXPECT_EQ(o, (std::vector<int>{MXC_STYPE_ROW_SPARSE, MXC_STYPE_DEFAULT}));
}

TEST(SparseInfer, AttributesAndCallerValues) {
  Sym d = var("d", {{"__storage_type__", "csr"}});
  Sym w = var("w", {{"__storage_type__", "0"}});
  Sym h = op("dot", {}, "h", {d.s, w.s});
  std::map<std::string, int> a;
  std::vector<int> o;
  ASSERT_EQ(infer(h.s, {}, &a, &o), MXC_OK) << err();
  EXPECT_EQ(a["d"], MXC_STYPE_CSR);
  EXPECT_EQ(a["w"], MXC_STYPE_DEFAULT);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0], MXC_STYPE_DEFAULT);  // csr x dense -> dense (either path)
  // The caller's value wins over the attribute.
  o.clear();
  ASSERT_EQ(infer(h.s, {{"d", MXC_STYPE_DEFAULT}}, &a, &o), MXC_OK) << err();
  EXPECT_EQ(a["d"], MXC_STYPE_DEFAULT);
  EXPECT_EQ(o, std::vector<int>{MXC_STYPE_DEFAULT});
  // An all-dense graph stays dense.
  Sym mlp = sparse_mlp();
  o.clear();
  ASSERT_EQ(infer(mlp.s, {}, &a, &o), MXC_OK) << err();
  for (const auto &kv : a) EXPECT_EQ(kv.second, MXC_STYPE_DEFAULT) << kv.first;
}

TEST(SparseInfer, ErrorsNameTheVariable) {
  Sym d = var("feat", {{"__storage_type__", "compressed"}});
  Sym h = op("cast_storage", {{"stype", "default"}}, "h", {d.s});
  std::map<std::string, int> a;
  std::vector<int> o;
  EXPECT_EQ(infer(h.s, {}, &a, &o), MXC_ERR_STYPE);
  EXPECT_NE(err().find("feat"), std::string::npos) << err();
  EXPECT_NE(err().find("compressed"), std::string::npos) << err();
  // A csr cast of a 3-d array is refused by shape inference at bind time.
  Dense x3 = sparse_test::random_dense({2, 2, 2}, 3);
  Sym c = op("cast_storage", {{"stype", "csr"}}, "c3", {var("x").s});
  Result r;
  EXPECT_NE(run_graph(c.s, {{"x", x3}}, {}, &r), MXC_OK);
  EXPECT_NE(err().find("c3"), std::string::npos) << err();
}

// ---- executors ----

TEST(SparseExec, CsrDataMatchesDenseGraph) {
  Sym net = sparse_mlp();
  auto vals = mlp_values();
  Binding dense, sparse;
  for (const char *n : {"W", "fc_weight", "fc_bias"}) {
    dense.grad_stype[n] = sparse.grad_stype[n] = MXC_STYPE_DEFAULT;
  }
  sparse.arg_stype["data"] = MXC_STYPE_CSR;
  Result rd, rs;
  ASSERT_EQ(run_graph(net.s, vals, dense, &rd), MXC_OK) << err();
  ASSERT_EQ(run_graph(net.s, vals, sparse, &rs), MXC_OK) << err();
  expect_same(rs, rd);
  // Sparse graphs are not fused; the dense one is planned as before.
  EXPECT_NE(rs.debug.find("0 fused nodes"), std::string::npos) << rs.debug;
  EXPECT_EQ(rs.debug.find("_fused"), std::string::npos) << rs.debug;
}

TEST(SparseExec, RowSparseWeightGradient) {
  Sym net = sparse_mlp();
  auto vals = mlp_values();
  Binding dense, sparse;
  dense.grad_stype["W"] = MXC_STYPE_DEFAULT;
  sparse.grad_stype["W"] = MXC_STYPE_ROW_SPARSE;
  sparse.arg_stype["data"] = MXC_STYPE_CSR;
  Result rd, rs;
  ASSERT_EQ(run_graph(net.s, vals, dense, &rd), MXC_OK) << err();
  ASSERT_EQ(run_graph(net.s, vals, sparse, &rs), MXC_OK) << err();
  expect_same(rs, rd);
  EXPECT_EQ(rs.grad_stypes["W"], MXC_STYPE_ROW_SPARSE);
  // Rows of W that no stored feature touches are absent, the others kept:
  // a second binding reads the stored rows.
  std::vector<std::string> names = arguments(net.s);
  std::vector<Arr> args;
  std::vector<mxc_ndarray> ah, gh(names.size(), nullptr);
  for (const auto &n : names) {
    args.push_back(sparse_test::make(
        vals.at(n), n == "data" ? MXC_STYPE_CSR : MXC_STYPE_DEFAULT));
    ah.push_back(args.back().get());
  }
  Dense zero = vals.at("W");
  for (auto &x : zero.v) x = 0;
  Arr gw = sparse_test::make(zero, MXC_STYPE_ROW_SPARSE);
  gh[1] = gw.get();
  std::vector<int> reqs(names.size(), MXC_REQ_NULL);
  reqs[1] = MXC_REQ_WRITE;
  ASSERT_EQ(names[1], "W");
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(net.s, MXC_DEVICE_CPU, 0, (int)ah.size(),
                              ah.data(), gh.data(), reqs.data(), 0, nullptr, 0,
                              &ex),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(ex, 0, nullptr), MXC_OK) << err();
  std::vector<int64_t> rows = stored_rows(gw.get());
  mxc_executor_free(ex);
  std::set<int64_t> used;
  const Dense &d = vals.at("data");
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < 10; ++c) {
      if (d.v[(size_t)(r * 10 + c)] != 0) used.insert(c);
    }
  }
  EXPECT_EQ(std::set<int64_t>(rows.begin(), rows.end()), used);
  EXPECT_EQ(used.count(2), 0u);
  EXPECT_EQ(used.count(7), 0u);
}

TEST(SparseExec, EmbeddingRowSparseGradient) {
  Sym data = var("data"), w = var("emb_weight");
  Sym emb = op("Embedding", {{"input_dim", "8"}, {"output_dim", "4"}}, "emb",
               {data.s, w.s});
  Dense idx{{5}, {1, 5, 1, 6, 0}};
  std::map<std::string, Dense> vals = {
      {"data", idx}, {"emb_weight", sparse_test::random_dense({8, 4}, 5)}};
  Binding dense, sparse;
  dense.grad_stype["emb_weight"] = MXC_STYPE_DEFAULT;
  sparse.grad_stype["emb_weight"] = MXC_STYPE_ROW_SPARSE;
  Result rd, rs;
  ASSERT_EQ(run_graph(emb.s, vals, dense, &rd), MXC_OK) << err();
  ASSERT_EQ(run_graph(emb.s, vals, sparse, &rs), MXC_OK) << err();
  expect_same(rs, rd);
  EXPECT_EQ(rs.grad_stypes["emb_weight"], MXC_STYPE_ROW_SPARSE);
  // Dense reference by a naive loop: each index adds a row of ones.
  Dense want{{8, 4}, std::vector<double>(32, 0)};
  for (double i : idx.v) {
    for (int k = 0; k < 4; ++k) want.v[(size_t)i * 4 + (size_t)k] += 1;
  }
  EXPECT_LT(max_rel_err(rs.grads["emb_weight"], want), 1e-6);
}

TEST(SparseExec, MemoryPlanOnOffIdentical) {
  Sym net = sparse_mlp();
  auto vals = mlp_values();
  Binding on, off;
  for (Binding *b : {&on, &off}) {
    b->arg_stype["data"] = MXC_STYPE_CSR;
    b->grad_stype["W"] = MXC_STYPE_ROW_SPARSE;
    b->grad_stype["fc_weight"] = MXC_STYPE_DEFAULT;
  }
  off.flags = MXC_BIND_NO_MEMORY_PLAN;
  Result a, b;
  ASSERT_EQ(run_graph(net.s, vals, on, &a), MXC_OK) << err();
  ASSERT_EQ(run_graph(net.s, vals, off, &b), MXC_OK) << err();
  ASSERT_EQ(a.outs.size(), b.outs.size());
  for (size_t j = 0; j < a.outs.size(); ++j) EXPECT_EQ(a.outs[j].v, b.outs[j].v);
  for (const auto &kv : a.grads) EXPECT_EQ(kv.second.v, b.grads[kv.first].v);
}

TEST(SparseExec, DenseGraphStillFused) {
  // The same chain with a dense argument is fused; with csr it is not.
  Sym x = var("x"), w = var("w");
  Sym h = op("dot", {}, "h", {x.s, w.s});
  Sym e1 = op("exp", {}, "e1", {h.s});
  Sym e2 = op("sigmoid", {}, "e2", {e1.s});
  std::map<std::string, Dense> vals = {
      {"x", sparse_test::random_sparse({4, 6}, 0.4, 2)},
      {"w", sparse_test::random_dense({6, 3}, 3, -0.3, 0.3)}};
  Binding dense, sparse;
  sparse.arg_stype["x"] = MXC_STYPE_CSR;
  Result rd, rs;
  ASSERT_EQ(run_graph(e2.s, vals, dense, &rd), MXC_OK) << err();
  ASSERT_EQ(run_graph(e2.s, vals, sparse, &rs), MXC_OK) << err();
  expect_same(rs, rd);
  EXPECT_EQ(rd.debug.find(" 0 fused nodes"), std::string::npos) << rd.debug;
  EXPECT_NE(rs.debug.find(" 0 fused nodes"), std::string::npos) << rs.debug;
}

// ---- simple_bind ----

TEST(SparseExec, SimpleBindStorageAttributes) {
  Sym net = sparse_mlp({{"__storage_type__", "csr"}},
                       {{"__grad_stype__", "row_sparse"}});
  auto vals = mlp_values();
  const char *names[] = {"data", "W"};
  int nd[] = {2, 2};
  int64_t dims[] = {6, 10, 10, 5};
  const char *no_grad[] = {"data"};
  int null_req[] = {MXC_REQ_NULL};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_simple_bind(net.s, MXC_DEVICE_CPU, 0, 2, names, nd,
                                     dims, nullptr, MXC_REQ_WRITE, 1, no_grad,
                                     null_req, 0, &ex),
            MXC_OK)
      << err();
  Arr data, gw, gfc;
  ASSERT_EQ(mxc_executor_arg(ex, "data", data.out()), MXC_OK) << err();
  EXPECT_EQ(stype_of(data.get()), MXC_STYPE_CSR);
  ASSERT_EQ(mxc_executor_grad(ex, "W", gw.out()), MXC_OK) << err();
  EXPECT_EQ(stype_of(gw.get()), MXC_STYPE_ROW_SPARSE);
  ASSERT_EQ(mxc_executor_grad(ex, "fc_weight", gfc.out()), MXC_OK) << err();
  EXPECT_EQ(stype_of(gfc.get()), MXC_STYPE_DEFAULT);
  // Arrays start as zeros; then the values of the dense run.
  EXPECT_EQ(sparse_test::nnz_of(data.get()), 0);
  for (const auto &kv : vals) {
    Arr a, src = sparse_test::make(kv.second, kv.first == "data"
                                                  ? MXC_STYPE_CSR
                                                  : MXC_STYPE_DEFAULT);
    ASSERT_EQ(mxc_executor_arg(ex, kv.first.c_str(), a.out()), MXC_OK);
    ASSERT_EQ(mxc_ndarray_copy(src.get(), a.get()), MXC_OK) << err();
  }
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(ex, 0, nullptr), MXC_OK) << err();
  Arr out;
  ASSERT_EQ(mxc_executor_output(ex, 0, out.out()), MXC_OK);
  Result rs;
  rs.outs.push_back(read(out.get()));
  rs.grads["W"] = read(gw.get());
  rs.grads["fc_weight"] = read(gfc.get());
  mxc_executor_free(ex);
  Binding dense;
  dense.grad_stype["W"] = dense.grad_stype["fc_weight"] = MXC_STYPE_DEFAULT;
  Sym plain = sparse_mlp();
  Result rd;
  ASSERT_EQ(run_graph(plain.s, vals, dense, &rd), MXC_OK) << err();
  expect_same(rs, rd);
}

// ---- cast_storage in graphs ----

// out = cast_storage(cast_storage(x, mid), default) * w.
Sym cast_chain(const char *mid) {
  Sym x = var("x"), w = var("w");
  Sym a = op("cast_storage", {{"stype", mid}}, "a", {x.s});
  Sym b = op("cast_storage", {{"stype", "default"}}, "b", {a.s});
  return op("elemwise_mul", {}, "m", {b.s, w.s});
}

TEST(SparseCastGraph, ForwardBackwardEveryStorageType) {
  Dense x = sparse_test::random_sparse({5, 4}, 0.5, 21);
  Dense w = sparse_test::random_dense({5, 4}, 22);
  for (const char *mid : {"default", "csr", "row_sparse"}) {
    Sym net = cast_chain(mid);
    for (int xst : {MXC_STYPE_DEFAULT, MXC_STYPE_CSR, MXC_STYPE_ROW_SPARSE}) {
      for (int gst : {MXC_STYPE_DEFAULT, MXC_STYPE_ROW_SPARSE, MXC_STYPE_CSR}) {
        SCOPED_TRACE(std::string(mid) + " x " + std::to_string(xst) +
                     " grad " + std::to_string(gst));
        Binding b;
        b.arg_stype["x"] = xst;
        b.grad_stype["x"] = gst;
        b.grad_stype["w"] = MXC_STYPE_DEFAULT;
        Result r;
        ASSERT_EQ(run_graph(net.s, {{"x", x}, {"w", w}}, b, &r), MXC_OK)
            << err();
        Dense prod = x;
        for (size_t i = 0; i < prod.v.size(); ++i) prod.v[i] *= w.v[i];
        EXPECT_LT(max_rel_err(r.outs[0], prod), 1e-6);
        // d/dx = w, d/dw = x (head gradient ones), in the array's type.
        EXPECT_LT(max_rel_err(r.grads["x"], w), 1e-6);
        EXPECT_LT(max_rel_err(r.grads["w"], x), 1e-6);
        EXPECT_EQ(r.grad_stypes["x"], gst);
      }
    }
  }
}

TEST(SparseCastGraph, GradReqAddIntoDense) {
  Dense x = sparse_test::random_sparse({4, 3}, 0.5, 31);
  Dense w = sparse_test::random_dense({4, 3}, 32);
  for (const char *mid : {"default", "csr", "row_sparse"}) {
    Sym net = cast_chain(mid);
    for (int xst : {MXC_STYPE_DEFAULT, MXC_STYPE_CSR}) {
      SCOPED_TRACE(std::string(mid) + " x " + std::to_string(xst));
      Binding b;
      b.arg_stype["x"] = xst;
      b.grad_stype["x"] = MXC_STYPE_DEFAULT;
      b.grad_req["x"] = MXC_REQ_ADD;
      b.backward_passes = 3;
      Result r;
      ASSERT_EQ(run_graph(net.s, {{"x", x}, {"w", w}}, b, &r), MXC_OK)
          << err();
      Dense want = w;
      for (auto &v : want.v) v *= 3;
      EXPECT_LT(max_rel_err(r.grads["x"], want), 1e-6);
    }
  }
}

TEST(SparseExec, GradientsDeliveredByCastOrZeros) {
  // The gradient of an argument that is itself the output is the head
  // gradient (ones): delivered by a cast into the sparse gradient array.
  Sym x = var("x");
  Dense xv = sparse_test::random_sparse({3, 4}, 0.5, 71);
  Dense ones{{3, 4}, std::vector<double>(12, 1.0)};
  for (int gst : {MXC_STYPE_CSR, MXC_STYPE_ROW_SPARSE}) {
    Binding b;
    b.grad_stype["x"] = gst;
    Result r;
    ASSERT_EQ(run_graph(x.s, {{"x", xv}}, b, &r), MXC_OK) << err();
    EXPECT_EQ(r.grad_stypes["x"], gst);
    EXPECT_EQ(r.grads["x"].v, ones.v);
  }
  // No gradient reaches Embedding's indices: a sparse gradient array
  // holding values is emptied (write means zeros).
  Sym data = var("data"), w = var("w");
  Sym emb = op("Embedding", {{"input_dim", "4"}, {"output_dim", "2"}}, "emb",
               {data.s, w.s});
  Dense idx{{3}, {0, 3, 3}};
  Arr da = sparse_test::make_dense(idx),
      wa = sparse_test::make_dense(sparse_test::random_dense({4, 2}, 72));
  Arr dg = sparse_test::make_row_sparse(Dense{{3}, {1, 0, 2}});
  mxc_ndarray args[] = {da.get(), wa.get()}, grads[] = {dg.get(), nullptr};
  int reqs[] = {MXC_REQ_WRITE, MXC_REQ_NULL};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(emb.s, MXC_DEVICE_CPU, 0, 2, args, grads, reqs,
                              0, nullptr, 0, &ex),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
  ASSERT_EQ(mxc_executor_backward(ex, 0, nullptr), MXC_OK) << err();
  EXPECT_EQ(sparse_test::nnz_of(dg.get()), 0);
  EXPECT_EQ(read(dg.get()).v, std::vector<double>(3, 0.0));
  mxc_executor_free(ex);
}

// ---- monitor ----

struct Seen {
  std::vector<std::string> names;
  std::vector<int> stypes;
};

void record(void *user, const char *name, mxc_ndarray a) {
  auto *s = static_cast<Seen *>(user);
  s->names.push_back(name);
  int st = -1;
  mxc_ndarray_stype(a, &st);
  s->stypes.push_back(st);
}

TEST(SparseExec, MonitorAndOutputsSparse) {
  Sym x = var("x");
  Sym c = op("cast_storage", {{"stype", "csr"}}, "tocsr", {x.s});
  Dense xv = sparse_test::random_sparse({3, 5}, 0.4, 41);
  Arr xa = sparse_test::make_dense(xv);
  mxc_ndarray args[] = {xa.get()};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_bind(c.s, MXC_DEVICE_CPU, 0, 1, args, nullptr,
                              nullptr, 0, nullptr, 0, &ex),
            MXC_OK)
      << err();
  Seen seen;
  ASSERT_EQ(mxc_executor_set_monitor(ex, record, &seen), MXC_OK);
  ASSERT_EQ(mxc_executor_forward(ex, 0), MXC_OK) << err();
  Arr out;
  ASSERT_EQ(mxc_executor_output(ex, 0, out.out()), MXC_OK);
  EXPECT_EQ(stype_of(out.get()), MXC_STYPE_CSR);
  EXPECT_EQ(read(out.get()).v, xv.v);
  ASSERT_EQ(seen.names.size(), 1u);
  EXPECT_EQ(seen.names[0], "tocsr_output");
  EXPECT_EQ(seen.stypes[0], MXC_STYPE_CSR);
  char *dbg = nullptr;
  ASSERT_EQ(mxc_executor_debug_str(ex, &dbg), MXC_OK);
  EXPECT_NE(std::string(dbg).find("[sparse kernel]"), std::string::npos)
      << dbg;
  mxc_string_free(dbg);
  mxc_executor_free(ex);
}

TEST(SparseExec, FallbackNodesMarked) {
  // FullyConnected has no sparse kernel: a csr input to it falls back.
  Sym d = var("d");
  Sym fc = op("FullyConnected", {{"num_hidden", "2"}}, "fcx", {d.s});
  std::map<std::string, Dense> v2 = {
      {"d", sparse_test::random_sparse({3, 4}, 0.5, 51)},
      {"fcx_weight", sparse_test::random_dense({2, 4}, 52)},
      {"fcx_bias", sparse_test::random_dense({2}, 53)}};
  Binding s2, d2;
  s2.arg_stype["d"] = MXC_STYPE_CSR;
  s2.grad_stype["fcx_weight"] = d2.grad_stype["fcx_weight"] = 0;
  Result rs, rd;
  ASSERT_EQ(run_graph(fc.s, v2, s2, &rs), MXC_OK) << err();
  ASSERT_EQ(run_graph(fc.s, v2, d2, &rd), MXC_OK) << err();
  expect_same(rs, rd);
  EXPECT_NE(rs.debug.find("fcx (FullyConnected) [dense fallback]"),
            std::string::npos)
      << rs.debug;
  EXPECT_EQ(rd.debug.find("[dense fallback]"), std::string::npos) << rd.debug;
}

// ---- bad bindings ----

TEST(SparseExec, BadBindingsNameTheArgument) {
  auto vals = mlp_values();
  // __storage_type__ says csr; a dense array is bound.
  Sym net = sparse_mlp({{"__storage_type__", "csr"}});
  Result r;
  EXPECT_EQ(run_graph(net.s, vals, {}, &r), MXC_ERR_STYPE);
  EXPECT_NE(err().find("'data'"), std::string::npos) << err();
  EXPECT_NE(err().find("csr"), std::string::npos) << err();
  // grad_req add into a row_sparse gradient.
  Sym plain = sparse_mlp();
  Binding add;
  add.grad_stype["W"] = MXC_STYPE_ROW_SPARSE;
  add.grad_req["W"] = MXC_REQ_ADD;
  EXPECT_EQ(run_graph(plain.s, vals, add, &r), MXC_ERR_STYPE);
  EXPECT_NE(err().find("'W'"), std::string::npos) << err();
  // A sparse auxiliary state.
  Sym x = var("x");
  Sym bn = op("BatchNorm", {}, "bn", {x.s});
  std::vector<std::string> an = arguments(bn.s);
  Dense xv = sparse_test::random_dense({4, 3}, 61);
  Dense c3 = sparse_test::random_dense({3}, 62);
  Arr xa = sparse_test::make_dense(xv), g = sparse_test::make_dense(c3),
      be = sparse_test::make_dense(c3);
  Arr mm = sparse_test::make(c3, MXC_STYPE_ROW_SPARSE),
      mv = sparse_test::make_dense(c3);
  mxc_ndarray args[] = {xa.get(), g.get(), be.get()};
  mxc_ndarray aux[] = {mm.get(), mv.get()};
  mxc_executor ex = nullptr;
  EXPECT_EQ(mxc_executor_bind(bn.s, MXC_DEVICE_CPU, 0, 3, args, nullptr,
                              nullptr, 2, aux, 0, &ex),
            MXC_ERR_STYPE);
  EXPECT_NE(err().find("bn_moving_mean"), std::string::npos) << err();
  EXPECT_EQ(ex, nullptr);
  // Sparse head gradients are refused.
  Sym c = op("cast_storage", {{"stype", "default"}}, "c", {var("y").s});
  Dense yv = sparse_test::random_sparse({2, 3}, 0.5, 63);
  Arr ya = sparse_test::make_dense(yv), gy = sparse_test::make_dense(yv);
  mxc_ndarray ya_h[] = {ya.get()}, gy_h[] = {gy.get()};
  ASSERT_EQ(mxc_executor_bind(c.s, MXC_DEVICE_CPU, 0, 1, ya_h, gy_h, nullptr, 0,
                              nullptr, 0, &ex),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_executor_forward(ex, 1), MXC_OK) << err();
  Arr hg = sparse_test::make_csr(yv);
  mxc_ndarray hgs[] = {hg.get()};
  EXPECT_EQ(mxc_executor_backward(ex, 1, hgs), MXC_ERR_STYPE);
  EXPECT_NE(err().find("head_grads[0]"), std::string::npos) << err();
  mxc_executor_free(ex);
}

// ---- allocation failures ----

// Bind (csr data, row_sparse gradient of W), forward, backward and read
// back through the C API only: helpers that report through gtest would
// turn every injected failure into a test failure.
int scenario(mxc_symbol net) {
  const int64_t ds[2] = {3, 4}, ws[2] = {4, 2}, fs[2] = {3, 2}, bs[1] = {3};
  const float data[3] = {1, 2, 3};
  const int64_t ip[4] = {0, 1, 1, 3}, ix[3] = {2, 0, 2};
  const float w[8] = {1, -1, 2, 0.5f, -2, 1, 0.25f, 3};
  const float f[6] = {1, 2, 3, 4, 5, 6}, bias[3] = {0, 1, 2};
  mxc_ndarray a[4] = {nullptr, nullptr, nullptr, nullptr}, gw = nullptr,
              gf = nullptr, out = nullptr, rows = nullptr;
  int rc = mxc_ndarray_create_csr(ds, MXC_DTYPE_FLOAT32, MXC_DTYPE_INT64, data,
                                  ip, ix, 3, MXC_DEVICE_CPU, 0, &a[0]);
  const int64_t *shp[3] = {ws, fs, bs};
  const float *src[3] = {w, f, bias};
  const int nd[3] = {2, 2, 1};
  for (int i = 0; i < 3; ++i) {
    if (rc == MXC_OK) {
      rc = mxc_ndarray_create(shp[i], nd[i], MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU,
                              0, 0, &a[i + 1]);
    }
    int64_t n = i == 0 ? 8 : i == 1 ? 6 : 3;
    if (rc == MXC_OK) {
      rc = mxc_ndarray_copy_from_host(a[i + 1], src[i],
                                      (size_t)n * sizeof(float));
    }
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_row_sparse(ws, 2, MXC_DTYPE_FLOAT32,
                                       MXC_DTYPE_INT64, nullptr, nullptr, 0,
                                       MXC_DEVICE_CPU, 0, &gw);
  }
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(fs, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                            &gf);
  }
  mxc_executor ex = nullptr;
  if (rc == MXC_OK) {
    mxc_ndarray grads[4] = {nullptr, gw, gf, nullptr};
    int reqs[4] = {MXC_REQ_NULL, MXC_REQ_WRITE, MXC_REQ_WRITE, MXC_REQ_NULL};
    rc = mxc_executor_bind(net, MXC_DEVICE_CPU, 0, 4, a, grads, reqs, 0,
                           nullptr, 0, &ex);
  }
  if (rc == MXC_OK) rc = mxc_executor_forward(ex, 1);
  if (rc == MXC_OK) rc = mxc_executor_backward(ex, 0, nullptr);
  if (rc == MXC_OK) rc = mxc_executor_output(ex, 0, &out);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out);
  if (rc == MXC_OK) rc = mxc_ndarray_aux(gw, MXC_ROW_SPARSE_INDICES, &rows);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(gf);
  // Let work pushed before a failure finish before the executor goes: the
  // sparse _backward_dot kernel reads its csr data-gradient output even
  // when that output's write mode is null, and invoke does not make such
  // outputs dependencies, so freeing it early is a use after free there
  // (reported; not the executor's arrays' lifetime rule).
  int wrc0 = mxc_wait_all();
  mxc_executor_free(ex);
  for (mxc_ndarray x : {a[0], a[1], a[2], a[3], gw, gf, out, rows}) {
    mxc_ndarray_free(x);
  }
  int wrc = mxc_wait_all();
  if (wrc == MXC_OK) wrc = wrc0;
  return rc != MXC_OK ? rc : wrc;
}

TEST(SparseExecFaults, EveryAllocationFails) {
  Sym net = sparse_mlp();
  ASSERT_EQ(arguments(net.s),
            (std::vector<std::string>{"data", "W", "fc_weight", "fc_bias"}));
  int failures = mxct::alloc_failure_walk([&] { return scenario(net.s); }, 21);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace
