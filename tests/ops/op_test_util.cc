#include "tests/ops/op_test_util.h"

#include <cstring>

namespace mxct {

namespace {

uint16_t f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// float16 through the compiler's _Float16 (independent of mxc's code).
uint16_t f32_to_f16(float f) {
  _Float16 h = (_Float16)f;
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}

float f16_to_f32(uint16_t u) {
  _Float16 h;
  memcpy(&h, &u, 2);
  return (float)h;
}

template <typename T>
void put(std::vector<unsigned char> &b, size_t i, T v) {
  memcpy(b.data() + i * sizeof(T), &v, sizeof(T));
}

template <typename T>
T get(const std::vector<unsigned char> &b, size_t i) {
  T v;
  memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

// A double stored into an integer dtype: through int64 and then wrapped
// to the width (two's complement), so a test value such as -3 for uint8
// is 253 as the library's own conversion gives, not the undefined
// behaviour of converting an out-of-range double directly.
template <typename T>
T wrap_int(double x) {
  return (T)(int64_t)x;
}

std::vector<unsigned char> encode(const std::vector<double> &v, int dtype) {
  std::vector<unsigned char> b(v.size() * mxc_dtype_size(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (dtype) {
      case MXC_DTYPE_FLOAT32: put<float>(b, i, (float)v[i]); break;
      case MXC_DTYPE_FLOAT64: put<double>(b, i, v[i]); break;
      case MXC_DTYPE_FLOAT16: put<uint16_t>(b, i, f32_to_f16((float)v[i])); break;
      case MXC_DTYPE_BFLOAT16: put<uint16_t>(b, i, f32_to_bf16((float)v[i])); break;
      case MXC_DTYPE_UINT8: put<uint8_t>(b, i, wrap_int<uint8_t>(v[i])); break;
      case MXC_DTYPE_INT8: put<int8_t>(b, i, wrap_int<int8_t>(v[i])); break;
      case MXC_DTYPE_INT32: put<int32_t>(b, i, wrap_int<int32_t>(v[i])); break;
      case MXC_DTYPE_INT64: put<int64_t>(b, i, (int64_t)v[i]); break;
      case MXC_DTYPE_BOOL: put<uint8_t>(b, i, v[i] != 0); break;
    }
  }
  return b;
}

std::vector<double> decode(const std::vector<unsigned char> &b, int dtype) {
  size_t n = b.size() / mxc_dtype_size(dtype);
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case MXC_DTYPE_FLOAT32: v[i] = get<float>(b, i); break;
      case MXC_DTYPE_FLOAT64: v[i] = get<double>(b, i); break;
      case MXC_DTYPE_FLOAT16: v[i] = f16_to_f32(get<uint16_t>(b, i)); break;
      case MXC_DTYPE_BFLOAT16: v[i] = bf16_to_f32(get<uint16_t>(b, i)); break;
      case MXC_DTYPE_UINT8: v[i] = get<uint8_t>(b, i); break;
      case MXC_DTYPE_INT8: v[i] = get<int8_t>(b, i); break;
      case MXC_DTYPE_INT32: v[i] = get<int32_t>(b, i); break;
      case MXC_DTYPE_INT64: v[i] = (double)get<int64_t>(b, i); break;
      case MXC_DTYPE_BOOL: v[i] = get<uint8_t>(b, i); break;
    }
  }
  return v;
}

Arr make(const Shape &s, const std::vector<double> &v, int dtype) {
  mxc_ndarray h = nullptr;
  EXPECT_EQ(mxc_ndarray_create(s.data(), (int)s.size(), dtype, MXC_DEVICE_CPU,
                               0, 0, &h),
            MXC_OK)
      << err();
  EXPECT_EQ((int64_t)v.size(), numel(s));
  auto b = encode(v, dtype);
  EXPECT_EQ(mxc_ndarray_copy_from_host(h, b.data(), b.size()), MXC_OK)
      << err();
  return Arr(h);
}

std::vector<double> read(const Arr &a) {
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_size(a.h, &n), MXC_OK);
  int dt = a.dtype();
  std::vector<unsigned char> b((size_t)n * mxc_dtype_size(dt));
  EXPECT_EQ(mxc_ndarray_copy_to_host(a.h, b.data(), b.size()), MXC_OK)
      << err();
  return decode(b, dt);
}

std::vector<Arr> invoke(const std::string &name,
                        const std::vector<const Arr *> &in, const Params &p,
                        int *rc_out) {
  return invoke_count(name, in, p, -1, rc_out);
}

std::vector<Arr> invoke_count(const std::string &name,
                          const std::vector<const Arr *> &in, const Params &p,
                          int n_out, int *rc_out) {
  mxc_op op = nullptr;
  int rc = mxc_op_find(name.c_str(), &op);
  std::vector<Arr> res;
  if (rc != MXC_OK) {
    if (rc_out) *rc_out = rc;
    else ADD_FAILURE() << name << ": " << err();
    return res;
  }
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  if (n_out < 0) {
    rc = mxc_op_num_outputs(op, k.data(), v.data(), (int)k.size(), &n_out);
    if (rc != MXC_OK) {
      if (rc_out) *rc_out = rc;
      else ADD_FAILURE() << name << ": " << err();
      return res;
    }
  }
  std::vector<mxc_ndarray> ins, outs(n_out, nullptr);
  for (auto *a : in) ins.push_back(a->h);
  rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), ins.data(),
                     (int)ins.size(), outs.data(), n_out, nullptr);
  if (rc_out) *rc_out = rc;
  else EXPECT_EQ(rc, MXC_OK) << name << ": " << err();
  if (rc == MXC_OK)
    for (auto h : outs) res.emplace_back(h);
  return res;
}

std::vector<double> uniform(int64_t n, double lo, double hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v((size_t)n);
  for (auto &x : v) x = d(g);
  return v;
}

namespace {

// L = sum_k ograd_k . out_k for the given inputs.
double loss(const std::string &name, const std::vector<Shape> &shapes,
            const std::vector<std::vector<double>> &values, const Params &p,
            const std::vector<std::vector<double>> &ograds) {
  std::vector<Arr> in;
  std::vector<const Arr *> ptrs;
  for (size_t i = 0; i < shapes.size(); ++i)
    in.push_back(make(shapes[i], values[i], MXC_DTYPE_FLOAT64));
  for (auto &a : in) ptrs.push_back(&a);
  auto out = invoke(name, ptrs, p);
  double l = 0;
  for (size_t k = 0; k < ograds.size() && k < out.size(); ++k) {
    auto o = read(out[k]);
    for (size_t j = 0; j < o.size(); ++j) l += o[j] * ograds[k][j];
  }
  return l;
}

}  // namespace

void grad_check(const std::string &name, const std::vector<Shape> &shapes,
                const std::vector<std::vector<double>> &values,
                const Params &p, double eps, double rtol, double atol,
                std::vector<int> skip) {
  SCOPED_TRACE("gradient of " + name);
  std::vector<Arr> in;
  std::vector<const Arr *> ptrs;
  for (size_t i = 0; i < shapes.size(); ++i)
    in.push_back(make(shapes[i], values[i], MXC_DTYPE_FLOAT64));
  for (auto &a : in) ptrs.push_back(&a);
  // All outputs (hidden ones included) for the gradient's forward node;
  // head gradients for the visible ones.
  std::vector<const char *> keys, vals;
  for (auto &kv : p) {
    keys.push_back(kv.first.c_str());
    vals.push_back(kv.second.c_str());
  }
  int n_all = mxct_num_all_outputs(name.c_str(), keys.data(), vals.data(),
                                   (int)keys.size());
  ASSERT_GT(n_all, 0) << err();
  mxc_op op;
  ASSERT_EQ(mxc_op_find(name.c_str(), &op), MXC_OK) << err();
  int n_vis = 0;
  ASSERT_EQ(mxc_op_num_outputs(op, keys.data(), vals.data(), (int)keys.size(),
                               &n_vis),
            MXC_OK);
  auto out = invoke_count(name, ptrs, p, n_all);
  ASSERT_EQ((int)out.size(), n_all);
  std::vector<std::vector<double>> ograds;
  std::vector<Arr> og;
  for (size_t k = 0; k < (size_t)n_vis; ++k) {
    auto s = out[k].shape();
    ograds.push_back(uniform(numel(s), -1, 1, 100 + (unsigned)k));
    og.push_back(make(s, ograds.back(), MXC_DTYPE_FLOAT64));
  }
  std::vector<mxc_ndarray> iin, iout, iog;
  for (auto &a : in) iin.push_back(a.h);
  for (auto &a : out) iout.push_back(a.h);
  for (auto &a : og) iog.push_back(a.h);
  std::vector<mxc_ndarray> ig(in.size(), nullptr);
  ASSERT_EQ(mxct_grad_eval(name.c_str(), keys.data(), vals.data(),
                           (int)keys.size(), iin.data(), (int)iin.size(),
                           iout.data(), (int)iout.size(), iog.data(),
                           ig.data()),
            MXC_OK)
      << err();
  for (size_t i = 0; i < in.size(); ++i) {
    Arr g(ig[i]);
    bool skipped = false;
    for (int s : skip) skipped |= (size_t)s == i;
    if (skipped) continue;
    // A missing gradient is a failure unless the test says the input has
    // none (labels, indices): a silently dropped gradient must not pass.
    if (!g.h) {
      ADD_FAILURE() << "no gradient for input " << i
                    << " (list it in `skip` if it has none by design)";
      continue;
    }
    EXPECT_EQ(g.shape(), shapes[i]) << "gradient shape of input " << i;
    auto analytic = read(g);
    ASSERT_EQ(analytic.size(), values[i].size()) << "input " << i;
    for (size_t j = 0; j < values[i].size(); ++j) {
      auto plus = values, minus = values;
      plus[i][j] += eps;
      minus[i][j] -= eps;
      double num = (loss(name, shapes, plus, p, ograds) -
                    loss(name, shapes, minus, p, ograds)) /
                   (2 * eps);
      EXPECT_NEAR(analytic[j], num, atol + rtol * std::fabs(num))
          << "input " << i << " element " << j;
    }
  }
}

void grad_check_except(const std::string &name,
                       const std::vector<Shape> &shapes,
                       const std::vector<std::vector<double>> &values,
                       const Params &p, std::vector<int> skip) {
  grad_check(name, shapes, values, p, 1e-6, 1e-4, 1e-6, std::move(skip));
}

}  // namespace mxct
