#include "tests/ops/nn/nn_test_util.h"

namespace nnt {

using mxct::err;
using mxct::make;
using mxct::numel;
using mxct::read;
using mxct::uniform;

namespace {

struct Kv {
  std::vector<const char *> k, v;
  explicit Kv(const Params &p) {
    for (auto &kv : p) {
      k.push_back(kv.first.c_str());
      v.push_back(kv.second.c_str());
    }
  }
};

}  // namespace

std::vector<Arr> invoke_n(const std::string &name,
                          const std::vector<const Arr *> &in, const Params &p,
                          int n_out, int *rc_out) {
  std::vector<Arr> res;
  mxc_op op = nullptr;
  int rc = mxc_op_find(name.c_str(), &op);
  if (rc == MXC_OK) {
    Kv kv(p);
    std::vector<mxc_ndarray> ins, outs((size_t)n_out, nullptr);
    for (auto *a : in) ins.push_back(a->h);
    rc =
        mxc_op_invoke(op, kv.k.data(), kv.v.data(), (int)kv.k.size(),
                      ins.data(), (int)ins.size(), outs.data(), n_out, nullptr);
    if (rc == MXC_OK)
      for (auto h : outs) res.emplace_back(h);
  }
  if (rc_out)
    *rc_out = rc;
  else
    EXPECT_EQ(rc, MXC_OK) << name << ": " << err();
  return res;
}

std::vector<Arr> eval_grad(const std::string &name,
                           const std::vector<const Arr *> &in,
                           const std::vector<const Arr *> &out,
                           const std::vector<const Arr *> &ograd,
                           const Params &p, int *rc_out) {
  Kv kv(p);
  std::vector<mxc_ndarray> iin, iout, iog, ig(in.size(), nullptr);
  for (auto *a : in) iin.push_back(a->h);
  for (auto *a : out) iout.push_back(a->h);
  for (auto *a : ograd) iog.push_back(a->h);
  // The shim takes one head gradient per output; hidden outputs get
  // zeros, which the gradient function never reads.
  std::vector<Arr> pad;
  for (size_t k = ograd.size(); k < out.size(); ++k) {
    auto s = out[k]->shape();
    pad.push_back(
        make(s, std::vector<double>((size_t)numel(s), 0.0), out[k]->dtype()));
    iog.push_back(pad.back().h);
  }
  int rc = mxct_grad_eval(name.c_str(), kv.k.data(), kv.v.data(),
                          (int)kv.k.size(), iin.data(), (int)iin.size(),
                          iout.data(), (int)iout.size(), iog.data(), ig.data());
  if (rc_out)
    *rc_out = rc;
  else
    EXPECT_EQ(rc, MXC_OK) << "gradient of " << name << ": " << err();
  std::vector<Arr> res;
  for (auto h : ig) res.emplace_back(rc == MXC_OK ? h : nullptr);
  return res;
}

namespace {

double loss(const std::string &name, const std::vector<Shape> &shapes,
            const std::vector<std::vector<double>> &values, const Params &p,
            int n_vis, const std::vector<std::vector<double>> &ograds,
            uint64_t seed) {
  std::vector<Arr> in;
  std::vector<const Arr *> ptrs;
  for (size_t i = 0; i < shapes.size(); ++i)
    in.push_back(make(shapes[i], values[i], MXC_DTYPE_FLOAT64));
  for (auto &a : in) ptrs.push_back(&a);
  if (seed) mxc_random_seed(seed);
  auto out = invoke_n(name, ptrs, p, n_vis);
  double l = 0;
  for (int k = 0; k < n_vis && k < (int)out.size(); ++k) {
    auto o = read(out[k]);
    for (size_t j = 0; j < o.size(); ++j) l += o[j] * ograds[k][j];
  }
  return l;
}

}  // namespace

void grad_check_hidden(const std::string &name,
                       const std::vector<Shape> &shapes,
                       const std::vector<std::vector<double>> &values,
                       const Params &p, int n_total, int n_vis, double eps,
                       double rtol, double atol, std::vector<int> skip,
                       uint64_t seed) {
  SCOPED_TRACE("gradient of " + name);
  std::vector<Arr> in;
  std::vector<const Arr *> ptrs;
  for (size_t i = 0; i < shapes.size(); ++i)
    in.push_back(make(shapes[i], values[i], MXC_DTYPE_FLOAT64));
  for (auto &a : in) ptrs.push_back(&a);
  if (seed) mxc_random_seed(seed);
  auto out = invoke_n(name, ptrs, p, n_total);
  ASSERT_EQ((int)out.size(), n_total);
  std::vector<std::vector<double>> ograds;
  std::vector<Arr> og;
  std::vector<const Arr *> outp, ogp;
  for (int k = 0; k < n_vis; ++k) {
    auto s = out[k].shape();
    ograds.push_back(uniform(numel(s), -1, 1, 100 + (unsigned)k));
    og.push_back(make(s, ograds.back(), MXC_DTYPE_FLOAT64));
  }
  for (auto &a : out) outp.push_back(&a);
  for (auto &a : og) ogp.push_back(&a);
  auto ig = eval_grad(name, ptrs, outp, ogp, p);
  ASSERT_EQ(ig.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    bool skipped = false;
    for (int s : skip) skipped |= (size_t)s == i;
    if (skipped || !ig[i].h) continue;
    auto analytic = read(ig[i]);
    ASSERT_EQ(analytic.size(), values[i].size()) << "input " << i;
    for (size_t j = 0; j < values[i].size(); ++j) {
      auto plus = values, minus = values;
      plus[i][j] += eps;
      minus[i][j] -= eps;
      double num = (loss(name, shapes, plus, p, n_vis, ograds, seed) -
                    loss(name, shapes, minus, p, n_vis, ograds, seed)) /
                   (2 * eps);
      EXPECT_NEAR(analytic[j], num, atol + rtol * std::fabs(num))
          << "input " << i << " element " << j;
    }
  }
}

void expect_near(const std::vector<double> &got,
                 const std::vector<double> &want, double rtol, double atol,
                 const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i]))
        << what << " element " << i;
  }
}

}  // namespace nnt
