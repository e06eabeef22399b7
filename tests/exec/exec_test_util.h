// Helpers for executor tests: building symbols through the public API,
// host <-> array copies, and an independent imperative reference that
// evaluates a symbol node by node with mxc__op_invoke and differentiates it
// with each operator's own imperative gradient (mxc__grad_eval), summing
// the contributions of shared inputs on the host. The reference shares
// nothing with the executor beyond the operators themselves.
#ifndef MXC_TESTS_EXEC_EXEC_TEST_UTIL_H_
#define MXC_TESTS_EXEC_EXEC_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/exec/exec_shim.h"

namespace exectest {

using Vec = std::vector<double>;
using Shape = std::vector<int64_t>;
using KV = std::vector<std::pair<std::string, std::string>>;

inline std::string err() { return mxc_last_error(); }

inline mxc_symbol var(const std::string &name) {
  mxc_symbol s = nullptr;
  EXPECT_EQ(mxc_symbol_variable(name.c_str(), &s), MXC_OK) << err();
  return s;
}

// Applies op to inputs (positionally); the inputs stay owned by the caller.
inline mxc_symbol op(const std::string &op_name, const KV &params,
                     const std::string &name,
                     const std::vector<mxc_symbol> &inputs) {
  mxc_op o = nullptr;
  EXPECT_EQ(mxc_op_find(op_name.c_str(), &o), MXC_OK) << err();
  std::vector<const char *> k, v;
  for (const auto &p : params) {
    k.push_back(p.first.c_str());
    v.push_back(p.second.c_str());
  }
  mxc_symbol s = nullptr;
  EXPECT_EQ(
      mxc_symbol_create(o, k.data(), v.data(), (int)k.size(), name.c_str(),
                        nullptr, inputs.data(), (int)inputs.size(), &s),
      MXC_OK)
      << op_name << ": " << err();
  return s;
}

inline std::vector<std::string> str_list(mxc_str_list l) {
  int n = 0;
  EXPECT_EQ(mxc_str_list_size(l, &n), MXC_OK);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    const char *s = nullptr;
    EXPECT_EQ(mxc_str_list_get(l, i, &s), MXC_OK);
    out.push_back(s);
  }
  mxc_str_list_free(l);
  return out;
}

inline std::vector<std::string> arguments(mxc_symbol s) {
  mxc_str_list l = nullptr;
  EXPECT_EQ(mxc_symbol_list_arguments(s, &l), MXC_OK) << err();
  return str_list(l);
}

inline std::vector<std::string> aux_states(mxc_symbol s) {
  mxc_str_list l = nullptr;
  EXPECT_EQ(mxc_symbol_list_auxiliary_states(s, &l), MXC_OK) << err();
  return str_list(l);
}

inline int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline mxc_ndarray make(const Shape &shape, const Vec &vals,
                        int dtype = MXC_DTYPE_FLOAT32) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_ndarray_create(shape.data(), (int)shape.size(), dtype,
                               MXC_DEVICE_CPU, 0, 0, &a),
            MXC_OK)
      << err();
  if (dtype == MXC_DTYPE_FLOAT64) {
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, vals.data(), vals.size() * 8),
              MXC_OK)
        << err();
  } else {
    std::vector<float> f(vals.begin(), vals.end());
    EXPECT_EQ(mxc_ndarray_copy_from_host(a, f.data(), f.size() * 4), MXC_OK)
        << err();
  }
  return a;
}

inline void set(mxc_ndarray a, const Vec &vals) {
  int dt = 0;
  ASSERT_EQ(mxc_ndarray_dtype(a, &dt), MXC_OK);
  if (dt == MXC_DTYPE_FLOAT64) {
    ASSERT_EQ(mxc_ndarray_copy_from_host(a, vals.data(), vals.size() * 8),
              MXC_OK)
        << err();
  } else {
    std::vector<float> f(vals.begin(), vals.end());
    ASSERT_EQ(mxc_ndarray_copy_from_host(a, f.data(), f.size() * 4), MXC_OK)
        << err();
  }
}

inline Shape shape_of(mxc_ndarray a) {
  int nd = 0;
  const int64_t *d = nullptr;
  EXPECT_EQ(mxc_ndarray_shape(a, &nd, &d), MXC_OK);
  return Shape(d, d + nd);
}

inline Vec get(mxc_ndarray a) {
  int dt = 0;
  EXPECT_EQ(mxc_ndarray_dtype(a, &dt), MXC_OK);
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK);
  if (dt == MXC_DTYPE_FLOAT64) {
    Vec v((size_t)n);
    EXPECT_EQ(mxc_ndarray_copy_to_host(a, v.data(), v.size() * 8), MXC_OK)
        << err();
    return v;
  }
  std::vector<float> f((size_t)n);
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, f.data(), f.size() * 4), MXC_OK)
      << err();
  return Vec(f.begin(), f.end());
}

inline Vec random_vec(int64_t n, std::mt19937 &rng, double lo = -1,
                      double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  Vec v((size_t)n);
  for (auto &x : v) x = d(rng);
  return v;
}

inline void expect_close(const Vec &a, const Vec &b, double tol,
                         const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], b[i], tol * (1 + std::abs(b[i])))
        << what << " element " << i;
  }
}

inline Vec get_named(mxc_executor ex, const std::string &name, int grad) {
  mxc_ndarray a = nullptr;
  int rc = grad ? mxc_executor_grad(ex, name.c_str(), &a)
                : mxc_executor_arg(ex, name.c_str(), &a);
  EXPECT_EQ(rc, MXC_OK) << name << ": " << err();
  if (rc != MXC_OK) return Vec();
  Vec v = get(a);
  mxc_ndarray_free(a);
  return v;
}

inline Vec output(mxc_executor ex, int i) {
  mxc_ndarray a = nullptr;
  EXPECT_EQ(mxc_executor_output(ex, i, &a), MXC_OK) << err();
  Vec v = get(a);
  mxc_ndarray_free(a);
  return v;
}

// ---- the imperative reference ----

struct RefResult {
  std::vector<Vec> outputs;
  std::map<std::string, Vec> grads;  // per variable
};

class Reference {
 public:
  // values/shapes: every variable's contents by name, as arrays of dtype.
  Reference(mxc_symbol sym, const std::map<std::string, Shape> &shapes,
            const std::map<std::string, Vec> &values, int dtype)
      : shapes_(shapes), values_(values), dtype_(dtype) {
    EXPECT_EQ(mxct_walk_new(sym, &w_), MXC_OK) << err();
  }
  ~Reference() {
    for (auto &v : vals_) {
      for (auto a : v) mxc_ndarray_free(a);
    }
    mxct_walk_free(w_);
  }

  // Forward and backward in training mode; head_grads empty means ones.
  RefResult run(const std::vector<Vec> &head_grads) {
    RefResult r;
    int n = mxct_walk_size(w_);
    vals_.assign((size_t)n, {});
    for (int i = 0; i < n; ++i) forward(i);
    for (int j = 0; j < mxct_walk_n_heads(w_); ++j) {
      int node = 0, idx = 0;
      mxct_walk_head(w_, j, &node, &idx);
      Vec out = get(vals_[node][idx]);
      r.outputs.push_back(out);
      accumulate(node, idx,
                 head_grads.empty() ? Vec(out.size(), 1.0) : head_grads[j]);
    }
    for (int i = n - 1; i >= 0; --i) backward(i);
    for (int i = 0; i < n; ++i) {
      if (mxct_walk_op(w_, i)) continue;
      std::string name = mxct_walk_name(w_, i);
      auto key = std::make_pair(i, 0);
      r.grads[name] = ograd_.count(key)
                          ? ograd_[key]
                          : Vec((size_t)numel(shapes_.at(name)), 0.0);
    }
    return r;
  }

 private:
  void forward(int i) {
    if (!mxct_walk_op(w_, i)) {
      std::string name = mxct_walk_name(w_, i);
      vals_[i].push_back(make(shapes_.at(name), values_.at(name), dtype_));
      return;
    }
    std::vector<mxc_ndarray> ins = inputs(i);
    vals_[i].assign((size_t)mxct_walk_n_outputs(w_, i), nullptr);
    ASSERT_EQ(mxct_walk_invoke(w_, i, ins.data(), vals_[i].data(), 1), MXC_OK)
        << mxct_walk_name(w_, i) << ": " << err();
  }

  std::vector<mxc_ndarray> inputs(int i) {
    std::vector<mxc_ndarray> ins;
    for (int k = 0; k < mxct_walk_n_inputs(w_, i); ++k) {
      int node = 0, idx = 0;
      mxct_walk_input(w_, i, k, &node, &idx);
      ins.push_back(vals_[node][idx]);
    }
    return ins;
  }

  void accumulate(int node, int idx, const Vec &g) {
    Vec &acc = ograd_[std::make_pair(node, idx)];
    if (acc.empty()) acc.assign(g.size(), 0.0);
    for (size_t k = 0; k < g.size(); ++k) acc[k] += g[k];
  }

  void backward(int i) {
    if (!mxct_walk_differentiable(w_, i)) return;
    int n_vis = mxct_walk_n_visible(w_, i);
    bool any = false;
    for (int j = 0; j < n_vis; ++j) any |= ograd_.count({i, j}) > 0;
    if (!any) return;
    std::vector<mxc_ndarray> og;
    for (int j = 0; j < n_vis; ++j) {
      Shape s = shape_of(vals_[i][j]);
      auto key = std::make_pair(i, j);
      og.push_back(
          make(s, ograd_.count(key) ? ograd_[key] : Vec((size_t)numel(s), 0.0),
               dtype_));
    }
    std::vector<mxc_ndarray> ins = inputs(i), ig(ins.size(), nullptr);
    ASSERT_EQ(mxct_walk_grad(w_, i, ins.data(), vals_[i].data(), og.data(),
                             ig.data(), 1),
              MXC_OK)
        << mxct_walk_name(w_, i) << ": " << err();
    for (size_t k = 0; k < ins.size(); ++k) {
      if (!ig[k]) continue;
      int node = 0, idx = 0;
      mxct_walk_input(w_, i, (int)k, &node, &idx);
      accumulate(node, idx, get(ig[k]));
      mxc_ndarray_free(ig[k]);
    }
    for (auto a : og) mxc_ndarray_free(a);
  }

  mxct_walk *w_ = nullptr;
  std::map<std::string, Shape> shapes_;
  std::map<std::string, Vec> values_;
  int dtype_;
  std::vector<std::vector<mxc_ndarray>> vals_;
  std::map<std::pair<int, int>, Vec> ograd_;
};

}  // namespace exectest

#endif  // MXC_TESTS_EXEC_EXEC_TEST_UTIL_H_
