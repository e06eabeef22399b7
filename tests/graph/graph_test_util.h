// Helpers shared by the graph tests: RAII symbol handles, building
// operator nodes through the public API, reading string lists, and the
// allocation-failure walk.
#ifndef MXC_TESTS_GRAPH_GRAPH_TEST_UTIL_H_
#define MXC_TESTS_GRAPH_GRAPH_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"
#include "tests/testutil/fault_walk.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}

namespace gt {

inline std::string err() { return mxc_last_error(); }

// Owns one symbol handle.
class Sym {
 public:
  Sym() = default;
  explicit Sym(mxc_symbol s) : s_(s) {}
  Sym(Sym &&o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  Sym &operator=(Sym &&o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  Sym(const Sym &) = delete;
  Sym &operator=(const Sym &) = delete;
  ~Sym() { mxc_symbol_free(s_); }
  mxc_symbol get() const { return s_; }
  mxc_symbol *out() {
    mxc_symbol_free(s_);
    s_ = nullptr;
    return &s_;
  }
  explicit operator bool() const { return s_ != nullptr; }

 private:
  mxc_symbol s_ = nullptr;
};

using KV = std::vector<std::pair<const char *, const char *>>;

inline mxc_op op(const char *name) {
  mxc_op o = nullptr;
  EXPECT_EQ(mxc_op_find(name, &o), MXC_OK) << err();
  return o;
}

inline Sym var(const char *name, const KV &attrs = {}) {
  std::vector<const char *> k, v;
  for (auto &p : attrs) {
    k.push_back(p.first);
    v.push_back(p.second);
  }
  Sym s;
  EXPECT_EQ(mxc_symbol_variable_ex(name, k.data(), v.data(), (int)k.size(),
                                   s.out()),
            MXC_OK)
      << err();
  return s;
}

// Creates an operator node; returns the status, *out the symbol.
inline int try_create(const char *op_name, const KV &params, const char *name,
                      const std::vector<mxc_symbol> &inputs,
                      const std::vector<const char *> &input_names, Sym *out) {
  std::vector<const char *> k, v;
  for (auto &p : params) {
    k.push_back(p.first);
    v.push_back(p.second);
  }
  return mxc_symbol_create(op(op_name), k.data(), v.data(), (int)k.size(),
                           name, input_names.empty() ? nullptr
                                                     : input_names.data(),
                           inputs.data(), (int)inputs.size(), out->out());
}

inline Sym create(const char *op_name, const KV &params, const char *name,
                  const std::vector<mxc_symbol> &inputs = {},
                  const std::vector<const char *> &input_names = {}) {
  Sym s;
  EXPECT_EQ(try_create(op_name, params, name, inputs, input_names, &s),
            MXC_OK)
      << err();
  return s;
}

// Reads and frees a string list.
inline std::vector<std::string> strs(mxc_str_list l) {
  std::vector<std::string> r;
  int n = 0;
  EXPECT_EQ(mxc_str_list_size(l, &n), MXC_OK) << err();
  for (int i = 0; i < n; ++i) {
    const char *s = nullptr;
    EXPECT_EQ(mxc_str_list_get(l, i, &s), MXC_OK) << err();
    r.push_back(s);
  }
  mxc_str_list_free(l);
  return r;
}

inline std::vector<std::string> arguments(mxc_symbol s) {
  mxc_str_list l = nullptr;
  EXPECT_EQ(mxc_symbol_list_arguments(s, &l), MXC_OK) << err();
  return strs(l);
}
inline std::vector<std::string> outputs(mxc_symbol s) {
  mxc_str_list l = nullptr;
  EXPECT_EQ(mxc_symbol_list_outputs(s, &l), MXC_OK) << err();
  return strs(l);
}
inline std::vector<std::string> auxiliary(mxc_symbol s) {
  mxc_str_list l = nullptr;
  EXPECT_EQ(mxc_symbol_list_auxiliary_states(s, &l), MXC_OK) << err();
  return strs(l);
}

// data -> fc1 (10) -> relu -> fc2 (3) -> SoftmaxOutput.
inline Sym mlp() {
  Sym data = var("data");
  Sym fc1 = create("FullyConnected", {{"num_hidden", "10"}}, "fc1",
                   {data.get()});
  Sym act = create("Activation", {{"act_type", "relu"}}, "relu1", {fc1.get()});
  Sym fc2 = create("FullyConnected", {{"num_hidden", "3"}}, "fc2",
                   {act.get()});
  return create("SoftmaxOutput", {}, "softmax", {fc2.get()});
}

// data (N,1,28,28) -> conv (4 filters, 5x5) -> bn -> relu -> max pool 2x2
// -> flatten -> fc (10) -> SoftmaxOutput.
inline Sym convnet() {
  Sym data = var("data");
  Sym conv = create("Convolution", {{"kernel", "(5, 5)"}, {"num_filter", "4"}},
                    "conv1", {data.get()});
  Sym bn = create("BatchNorm", {{"fix_gamma", "False"}}, "bn1", {conv.get()});
  Sym act = create("Activation", {{"act_type", "relu"}}, "relu1", {bn.get()});
  Sym pool = create("Pooling",
                    {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"},
                     {"pool_type", "max"}},
                    "pool1", {act.get()});
  Sym flat = create("Flatten", {}, "flatten1", {pool.get()});
  Sym fc = create("FullyConnected", {{"num_hidden", "10"}}, "fc1",
                  {flat.get()});
  return create("SoftmaxOutput", {}, "softmax", {fc.get()});
}

// The shared allocation-failure walk (tests/testutil/fault_walk.h).
inline void alloc_failure_walk(const std::function<int()> &scenario) {
  mxct::alloc_failure_walk(scenario);
}

}  // namespace gt

#endif  // MXC_TESTS_GRAPH_GRAPH_TEST_UTIL_H_
