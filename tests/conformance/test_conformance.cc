// Operator conformance with Apache MXNet 1.9: every case written by
// scripts/make_conformance.py (numpy with MXNet's documented rules, not
// mxc's kernels) runs through the public C API: inputs from the file, the
// operator by name, outputs (or the input passed as out=, or mutated
// states, or autograd gradients) compared with the file's expectation.
// docs/conformance.md describes the suite and how to add a case.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "mxc/mxc.h"

namespace {

// One array of the file: dtype, shape and values kept as text so that
// int64 values stay exact.
struct Tensor {
  int dtype = MXC_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  std::vector<std::string> vals;
};

struct Case {
  std::string name, op;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::vector<Tensor> ins, outs, ograds;
  std::vector<std::pair<int, int>> aliases;        // output, input
  std::vector<std::pair<int, Tensor>> states, igrads;  // input, expected
  bool train = false;
  double rtol = -1, atol = -1;
};

int dtype_of(const std::string &s) {
  static const std::map<std::string, int> k = {
      {"float32", MXC_DTYPE_FLOAT32}, {"float64", MXC_DTYPE_FLOAT64},
      {"int64", MXC_DTYPE_INT64},     {"int32", MXC_DTYPE_INT32},
      {"uint8", MXC_DTYPE_UINT8},     {"int8", MXC_DTYPE_INT8}};
  auto it = k.find(s);
  return it == k.end() ? -1 : it->second;
}

std::vector<int64_t> parse_shape(const std::string &s) {
  std::vector<int64_t> d;
  std::string t = s.substr(1, s.size() - 2);  // strip ( )
  std::stringstream ss(t);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) d.push_back(std::stoll(item));
  }
  return d;
}

// "DTYPE SHAPE V..." from a stream.
Tensor parse_tensor(std::istream &is) {
  Tensor t;
  std::string dt, sh, v;
  is >> dt >> sh;
  t.dtype = dtype_of(dt);
  t.shape = parse_shape(sh);
  while (is >> v) t.vals.push_back(v);
  return t;
}

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  std::ifstream f("tests/conformance/cases.txt");
  std::string line;
  Case c;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "case") {
      c = Case();
      ls >> c.name;
    } else if (tag == "op") {
      ls >> c.op;
    } else if (tag == "attr") {
      std::string k, v;
      ls >> k;
      std::getline(ls, v);
      c.attrs.push_back({k, v.substr(v.find_first_not_of(' '))});
    } else if (tag == "in") {
      c.ins.push_back(parse_tensor(ls));
    } else if (tag == "out") {
      c.outs.push_back(parse_tensor(ls));
    } else if (tag == "ograd") {
      c.ograds.push_back(parse_tensor(ls));
    } else if (tag == "alias") {
      int o, i;
      ls >> o >> i;
      c.aliases.push_back({o, i});
    } else if (tag == "state" || tag == "igrad") {
      int i;
      ls >> i;
      (tag == "state" ? c.states : c.igrads).push_back({i, parse_tensor(ls)});
    } else if (tag == "train") {
      c.train = true;
    } else if (tag == "tol") {
      ls >> c.rtol >> c.atol;
    } else if (tag == "end") {
      cases.push_back(c);
    }
  }
  return cases;
}

const std::vector<Case> &all_cases() {
  static const std::vector<Case> k = load_cases();
  return k;
}

struct Handle {
  mxc_ndarray h = nullptr;
  ~Handle() { mxc_ndarray_free(h); }
};

size_t elem_size(int dtype) {
  return dtype == MXC_DTYPE_FLOAT64 || dtype == MXC_DTYPE_INT64 ? 8
         : dtype == MXC_DTYPE_UINT8 || dtype == MXC_DTYPE_INT8  ? 1
                                                                : 4;
}

// Host bytes of t's values in its dtype (plain casts, int64 from text).
std::vector<unsigned char> encode(const Tensor &t) {
  size_t es = elem_size(t.dtype);
  std::vector<unsigned char> b(t.vals.size() * es);
  for (size_t i = 0; i < t.vals.size(); ++i) {
    unsigned char *p = b.data() + i * es;
    if (t.dtype == MXC_DTYPE_FLOAT32) {
      float v = std::strtof(t.vals[i].c_str(), nullptr);
      std::memcpy(p, &v, 4);
    } else if (t.dtype == MXC_DTYPE_FLOAT64) {
      double v = std::strtod(t.vals[i].c_str(), nullptr);
      std::memcpy(p, &v, 8);
    } else if (t.dtype == MXC_DTYPE_INT64) {
      long long v = std::stoll(t.vals[i]);
      std::memcpy(p, &v, 8);
    } else if (t.dtype == MXC_DTYPE_INT32) {
      int32_t v = (int32_t)std::stoll(t.vals[i]);
      std::memcpy(p, &v, 4);
    } else {
      int8_t v = (int8_t)std::stoll(t.vals[i]);
      std::memcpy(p, &v, 1);
    }
  }
  return b;
}

mxc_ndarray make(const Tensor &t) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(t.shape.data(), (int)t.shape.size(), t.dtype,
                               MXC_DEVICE_CPU, 0, 0, &h),
            MXC_OK)
      << mxc_last_error();
  auto b = encode(t);
  EXPECT_EQ(mxc_ndarray_copy_from_host(h, b.data(), b.size()), MXC_OK)
      << mxc_last_error();
  return h;
}

// Compares arr with the expectation: dtype, shape, then each value
// (integers exactly, floats within tolerance, NaN matching NaN).
void expect_equal(mxc_ndarray arr, const Tensor &want, const Case &c,
                  const std::string &what) {
  SCOPED_TRACE(what);
  int dt = -1, nd = 0;
  const int64_t *d = nullptr;
  ASSERT_EQ(mxc_ndarray_dtype(arr, &dt), MXC_OK);
  ASSERT_EQ(mxc_ndarray_shape(arr, &nd, &d), MXC_OK);
  ASSERT_EQ(dt, want.dtype);
  ASSERT_EQ(std::vector<int64_t>(d, d + nd), want.shape);
  size_t es = elem_size(dt);
  std::vector<unsigned char> b(want.vals.size() * es);
  ASSERT_EQ(mxc_ndarray_copy_to_host(arr, b.data(), b.size()), MXC_OK)
      << mxc_last_error();
  bool f32 = dt == MXC_DTYPE_FLOAT32;
  double rtol = c.rtol >= 0 ? c.rtol : f32 ? 1e-5 : 1e-12;
  double atol = c.atol >= 0 ? c.atol : f32 ? 1e-6 : 1e-12;
  for (size_t i = 0; i < want.vals.size(); ++i) {
    const unsigned char *p = b.data() + i * es;
    if (dt == MXC_DTYPE_INT64) {
      long long got;
      std::memcpy(&got, p, 8);
      EXPECT_EQ(got, std::stoll(want.vals[i])) << "element " << i;
      continue;
    }
    double got;
    if (f32) {
      float v;
      std::memcpy(&v, p, 4);
      got = v;
    } else {
      std::memcpy(&got, p, 8);
    }
    double w = std::strtod(want.vals[i].c_str(), nullptr);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << ": got " << got;
    } else {
      EXPECT_NEAR(got, w, atol + rtol * std::fabs(w)) << "element " << i;
    }
  }
}

class Conformance : public ::testing::TestWithParam<size_t> {};

// Runs c's operator on ins into outs (NULL slots are created; aliased
// slots hold inputs). Returns the invoke status.
int run_op(const Case &c, std::vector<Handle> &ins,
           std::vector<mxc_ndarray> &outs) {
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_find(c.op.c_str(), &op), MXC_OK) << c.op;
  std::vector<const char *> keys, vals;
  for (auto &kv : c.attrs) {
    keys.push_back(kv.first.c_str());
    vals.push_back(kv.second.c_str());
  }
  std::vector<mxc_ndarray> in;
  for (auto &h : ins) in.push_back(h.h);
  // Gradient cases give head gradients instead of expected outputs.
  outs.assign(c.outs.empty() ? c.ograds.size() : c.outs.size(), nullptr);
  for (auto &a : c.aliases) outs[a.first] = ins[a.second].h;
  return mxc_op_invoke(op, keys.data(), vals.data(), (int)keys.size(),
                       in.data(), (int)in.size(), outs.data(),
                       (int)outs.size(), nullptr);
}

void check_forward(const Case &c, std::vector<Handle> &ins) {
  std::vector<mxc_ndarray> outs;
  ASSERT_EQ(run_op(c, ins, outs), MXC_OK) << mxc_last_error();
  for (size_t k = 0; k < outs.size(); ++k) {
    expect_equal(outs[k], c.outs[k], c, "output " + std::to_string(k));
  }
  for (auto &s : c.states) {
    expect_equal(ins[s.first].h, s.second, c,
                 "input " + std::to_string(s.first) + " afterwards");
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    bool aliased = false;
    for (auto &a : c.aliases) aliased |= a.first == (int)k;
    if (!aliased) mxc_ndarray_free(outs[k]);
  }
}

// Records the call with the inputs that have expected gradients marked,
// then backward from the case's head gradients.
void check_gradient(const Case &c, std::vector<Handle> &ins) {
  std::vector<Handle> grads(c.igrads.size());
  std::vector<mxc_ndarray> vars, gs;
  for (size_t k = 0; k < c.igrads.size(); ++k) {
    const Tensor &want = c.igrads[k].second;
    ASSERT_EQ(mxc_ndarray_create(want.shape.data(), (int)want.shape.size(),
                                 want.dtype, MXC_DEVICE_CPU, 0, 0,
                                 &grads[k].h),
              MXC_OK);
    vars.push_back(ins[c.igrads[k].first].h);
    gs.push_back(grads[k].h);
  }
  ASSERT_EQ(mxc_autograd_mark_variables((int)vars.size(), vars.data(),
                                        nullptr, gs.data()),
            MXC_OK)
      << mxc_last_error();
  std::vector<mxc_ndarray> outs;
  ASSERT_EQ(mxc_autograd_set_recording(1, nullptr), MXC_OK);
  int rc = run_op(c, ins, outs);
  mxc_autograd_set_recording(0, nullptr);
  ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
  std::vector<Handle> heads(outs.size()), hgrads(c.ograds.size());
  for (size_t k = 0; k < outs.size(); ++k) heads[k].h = outs[k];
  std::vector<mxc_ndarray> hg;
  for (size_t k = 0; k < c.ograds.size(); ++k) {
    hgrads[k].h = make(c.ograds[k]);
    hg.push_back(hgrads[k].h);
  }
  ASSERT_EQ(mxc_autograd_backward((int)outs.size(), outs.data(), hg.data(), 0),
            MXC_OK)
      << mxc_last_error();
  for (size_t k = 0; k < c.outs.size(); ++k) {
    expect_equal(outs[k], c.outs[k], c, "output " + std::to_string(k));
  }
  for (size_t k = 0; k < c.igrads.size(); ++k) {
    expect_equal(grads[k].h, c.igrads[k].second, c,
                 "gradient of input " + std::to_string(c.igrads[k].first));
  }
}

TEST_P(Conformance, MatchesMXNet) {
  const Case &c = all_cases()[GetParam()];
  SCOPED_TRACE(c.name + " (" + c.op + ")");
  int prev = 0;
  ASSERT_EQ(mxc_set_training(c.train ? 1 : 0, &prev), MXC_OK);
  std::vector<Handle> ins(c.ins.size());
  for (size_t k = 0; k < c.ins.size(); ++k) ins[k].h = make(c.ins[k]);
  if (c.ograds.empty()) {
    check_forward(c, ins);
  } else {
    check_gradient(c, ins);
  }
  mxc_set_training(prev, nullptr);
}

std::string case_name(const ::testing::TestParamInfo<size_t> &info) {
  return all_cases()[info.param].name;
}

std::vector<size_t> case_indices() {
  std::vector<size_t> v;
  for (size_t i = 0; i < all_cases().size(); ++i) v.push_back(i);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, Conformance,
                         ::testing::ValuesIn(case_indices()), case_name);

// The generator wrote cases, and this file read them all (a truncated or
// misplaced file would otherwise pass with no case run).
TEST(ConformanceFile, HasCases) { EXPECT_GE(all_cases().size(), 80u); }

}  // namespace
