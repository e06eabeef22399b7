#include "tests/autograd/ag_util.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>

namespace agt {

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Shape Arr::shape() const {
  int nd = 0;
  const int64_t *d = nullptr;
  EXPECT_EQ(mxc_ndarray_shape(h, &nd, &d), MXC_OK) << err();
  return Shape(d, d + nd);
}

int Arr::dtype() const {
  int t = -1;
  mxc_ndarray_dtype(h, &t);
  return t;
}

static std::vector<unsigned char> encode(const std::vector<double> &v,
                                         int dtype) {
  size_t es = (size_t)mxc_dtype_size(dtype);
  std::vector<unsigned char> b(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char *p = b.data() + i * es;
    switch (dtype) {
      case MXC_DTYPE_FLOAT32: {
        float x = (float)v[i];
        memcpy(p, &x, es);
        break;
      }
      case MXC_DTYPE_FLOAT64:
        memcpy(p, &v[i], es);
        break;
      case MXC_DTYPE_INT32: {
        int32_t x = (int32_t)v[i];
        memcpy(p, &x, es);
        break;
      }
      case MXC_DTYPE_INT64: {
        int64_t x = (int64_t)v[i];
        memcpy(p, &x, es);
        break;
      }
      default:
        ADD_FAILURE() << "encode: unsupported dtype " << dtype;
    }
  }
  return b;
}

static std::vector<double> decode(const std::vector<unsigned char> &b,
                                  int dtype) {
  size_t es = (size_t)mxc_dtype_size(dtype);
  std::vector<double> v(es ? b.size() / es : 0);
  for (size_t i = 0; i < v.size(); ++i) {
    const unsigned char *p = b.data() + i * es;
    switch (dtype) {
      case MXC_DTYPE_FLOAT32: {
        float x;
        memcpy(&x, p, es);
        v[i] = x;
        break;
      }
      case MXC_DTYPE_FLOAT64:
        memcpy(&v[i], p, es);
        break;
      case MXC_DTYPE_INT32: {
        int32_t x;
        memcpy(&x, p, es);
        v[i] = x;
        break;
      }
      case MXC_DTYPE_INT64: {
        int64_t x;
        memcpy(&x, p, es);
        v[i] = (double)x;
        break;
      }
      default:
        ADD_FAILURE() << "decode: unsupported dtype " << dtype;
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
  EXPECT_EQ(mxc_ndarray_copy_from_host(h, b.data(), b.size()), MXC_OK) << err();
  return Arr(h);
}

Arr zeros(const Shape &s, int dtype) {
  return make(s, std::vector<double>((size_t)numel(s), 0.0), dtype);
}

std::vector<double> read(mxc_ndarray a) {
  int dt = -1;
  int64_t n = 0;
  EXPECT_EQ(mxc_ndarray_dtype(a, &dt), MXC_OK) << err();
  EXPECT_EQ(mxc_ndarray_size(a, &n), MXC_OK) << err();
  std::vector<unsigned char> b((size_t)n * (size_t)mxc_dtype_size(dt));
  EXPECT_EQ(mxc_ndarray_copy_to_host(a, b.data(), b.size()), MXC_OK) << err();
  return decode(b, dt);
}

std::vector<Arr> invoke(const std::string &name,
                        const std::vector<mxc_ndarray> &in, const Params &p,
                        int *rc_out, int n_out) {
  std::vector<Arr> res;
  mxc_op op = nullptr;
  int rc = mxc_op_find(name.c_str(), &op);
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first.c_str());
    v.push_back(kv.second.c_str());
  }
  int n = n_out;
  if (rc == MXC_OK && n < 0) {
    rc = mxc_op_num_outputs(op, k.data(), v.data(), (int)k.size(), &n);
  }
  std::vector<mxc_ndarray> outs(n > 0 ? (size_t)n : 0, nullptr);
  if (rc == MXC_OK) {
    rc = mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), in.data(),
                       (int)in.size(), outs.data(), n, nullptr);
  }
  if (rc_out) {
    *rc_out = rc;
  } else {
    EXPECT_EQ(rc, MXC_OK) << name << ": " << err();
  }
  if (rc != MXC_OK) return res;
  for (auto h : outs) res.emplace_back(h);
  return res;
}

Arr invoke1(const std::string &name, const std::vector<mxc_ndarray> &in,
            const Params &p) {
  auto r = invoke(name, in, p);
  if (r.empty()) return Arr();
  return std::move(r[0]);
}

std::vector<double> uniform(int64_t n, double lo, double hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v((size_t)n);
  for (auto &x : v) x = d(g);
  return v;
}

std::vector<double> grad_of(mxc_ndarray var) {
  mxc_ndarray g = nullptr;
  EXPECT_EQ(mxc_autograd_get_grad(var, &g), MXC_OK) << err();
  if (!g) return {};
  auto v = read(g);
  mxc_ndarray_free(g);
  return v;
}

// L = sum_k hg_k . out_k for inputs with the given values, not recorded.
static bool loss_of(const Program &prog, const std::vector<Input> &inputs,
                    const std::vector<std::vector<double>> &vals,
                    const std::vector<std::vector<double>> &hg, double *out) {
  std::vector<Arr> xs;
  std::vector<mxc_ndarray> hs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    xs.push_back(make(inputs[i].shape, vals[i], inputs[i].dtype));
    hs.push_back(xs.back().h);
  }
  auto outs = prog(hs);
  if (outs.size() != hg.size()) return false;
  double l = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    auto o = read(outs[k]);
    for (size_t j = 0; j < o.size(); ++j) l += o[j] * hg[k][j];
  }
  *out = l;
  return true;
}

int check_gradients(const std::string &what, const Program &prog,
                    const std::vector<Input> &inputs, double eps, double rtol,
                    double atol, bool *ran, bool ones_heads) {
  std::vector<Arr> xs, grads(inputs.size());
  std::vector<mxc_ndarray> hs, vars, gbufs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    xs.push_back(make(inputs[i].shape, inputs[i].values, inputs[i].dtype));
    hs.push_back(xs.back().h);
    if (!inputs[i].wrt) continue;
    grads[i] = zeros(inputs[i].shape, inputs[i].dtype);
    vars.push_back(xs[i].h);
    gbufs.push_back(grads[i].h);
  }
  EXPECT_EQ(mxc_autograd_mark_variables((int)vars.size(), vars.data(), nullptr,
                                        gbufs.data()),
            MXC_OK)
      << what << ": " << err();
  std::vector<Arr> outs;
  {
    Recording rec;
    outs = prog(hs);
  }
  if (ran) *ran = !outs.empty();
  if (outs.empty()) {
    if (!ran) ADD_FAILURE() << what << ": forward failed: " << err();
    return 0;
  }
  std::vector<std::vector<double>> hgv;
  std::vector<Arr> hga;
  std::vector<mxc_ndarray> heads, hgh;
  for (size_t k = 0; k < outs.size(); ++k) {
    Shape s = outs[k].shape();
    hgv.push_back(ones_heads ? std::vector<double>((size_t)numel(s), 1.0)
                             : uniform(numel(s), -1, 1, 100 + (unsigned)k));
    hga.push_back(make(s, hgv.back(), outs[k].dtype()));
    heads.push_back(outs[k].h);
    hgh.push_back(hga.back().h);
  }
  int rc =
      mxc_autograd_backward((int)heads.size(), heads.data(), hgh.data(), 0);
  if (rc != MXC_OK) {
    ADD_FAILURE() << what << ": backward failed: " << err();
    return 1;
  }
  int bad = 0;
  std::vector<std::vector<double>> vals;
  for (auto &in : inputs) vals.push_back(in.values);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].wrt) continue;
    auto g = read(grads[i]);
    for (size_t j = 0; j < g.size(); ++j) {
      double x0 = vals[i][j], lp = 0, lm = 0;
      vals[i][j] = x0 + eps;
      bool ok = loss_of(prog, inputs, vals, hgv, &lp);
      vals[i][j] = x0 - eps;
      ok = ok && loss_of(prog, inputs, vals, hgv, &lm);
      vals[i][j] = x0;
      double num = (lp - lm) / (2 * eps);
      if (!ok || !(std::fabs(g[j] - num) <= atol + rtol * std::fabs(num))) {
        if (++bad <= 5) {
          ADD_FAILURE() << what << ": input " << i << " element " << j
                        << ": autograd " << g[j] << ", finite difference "
                        << num;
        }
      }
    }
  }
  return bad;
}

}  // namespace agt
