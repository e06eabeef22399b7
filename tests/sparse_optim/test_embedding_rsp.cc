// Row-sparse Embedding paths (ops/sparse/embedding.c): the row_sparse
// weight gradient against the dense _backward_Embedding (row set = the
// distinct clipped indices, repeated indices summed), forward with a
// row_sparse weight against the dense forward, storage-type rules, an
// imperative end-to-end step (forward, row_sparse backward, lazy sgd)
// against the dense step, and an allocation-failure walk over every new
// path.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "mxc/mxc.h"
#include "tests/testutil/fault_walk.h"
#include "tests/sparse_optim/optim_util.h"
#include "tests/sparse_util/sparse_util.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
#include "core/op/op.h"
}

namespace {

using namespace sparse_test;
using namespace optim_test;
using Params = std::vector<std::pair<std::string, std::string>>;

// Indices with repeats, out-of-range values (clipped), negatives and
// fractions (truncated).
std::vector<double> indices(int64_t n, int64_t input_dim, unsigned seed) {
  std::vector<double> v = random_dense({n}, seed, -3.0, (double)input_dim + 3).v;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % 3 == 0) v[i] = std::floor(v[i]);
  }
  if (n > 4) v[1] = v[3] = v[4];  // a repeated index for sure
  return v;
}

int64_t clipped(double v, int64_t n) {
  if (!(v > 0)) return 0;
  if (v >= (double)(n - 1)) return n - 1;
  return (int64_t)v;
}

Params emb_params(int64_t in_dim, int64_t out_dim, int dtype) {
  return {{"input_dim", std::to_string(in_dim)},
          {"output_dim", std::to_string(out_dim)},
          {"dtype", dtype == MXC_DTYPE_FLOAT32 ? "float32" : "float64"}};
}

// Row indices of a row_sparse array.
std::vector<int64_t> rows_of(mxc_ndarray a) {
  Arr idx;
  EXPECT_EQ(mxc_ndarray_aux(a, MXC_ROW_SPARSE_INDICES, idx.out()), MXC_OK);
  Dense d = read(idx.get());
  return std::vector<int64_t>(d.v.begin(), d.v.end());
}

class EmbeddingRsp
    : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(EmbeddingRsp, BackwardMatchesDenseGradient) {
  int dtype = std::get<0>(GetParam()), data_dtype = std::get<1>(GetParam());
  for (int64_t n : {0, 1, 12, 3000}) {
    const int64_t in_dim = n > 100 ? 500 : 9, out_dim = 5;
    Dense data{{n / 3 > 0 ? 3 : 1, n / 3 > 0 ? n / 3 : n}, {}};
    data.v = indices(n, in_dim, 3);
    Dense og = random_dense({data.shape[0], data.shape[1], out_dim}, 4);
    Arr d = make_dense(data, data_dtype), g = make_dense(og, dtype);
    Params p = emb_params(in_dim, out_dim, dtype);
    std::vector<Arr> dense, sparse;
    ASSERT_EQ(invoke("_backward_Embedding", p, {g.get(), d.get()}, &dense),
              MXC_OK)
        << mxc_last_error();
    sparse.push_back(empty_rsp({in_dim, out_dim}, dtype));
    ASSERT_EQ(invoke("_backward_Embedding", p, {g.get(), d.get()}, &sparse),
              MXC_OK)
        << mxc_last_error();
    EXPECT_EQ(stype_of(dense[0].get()), MXC_STYPE_DEFAULT);
    ASSERT_EQ(stype_of(sparse[0].get()), MXC_STYPE_ROW_SPARSE);
    std::set<int64_t> want;
    for (double v : data.v) want.insert(clipped(v, in_dim));
    EXPECT_EQ(rows_of(sparse[0].get()),
              std::vector<int64_t>(want.begin(), want.end()));
    // Same sums in the same order: equal values (unstored rows are zero in
    // the dense gradient too).
    Dense a = read(sparse[0].get()), b = read(dense[0].get());
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.v, b.v) << "n = " << n;
  }
}

TEST_P(EmbeddingRsp, ForwardWithRowSparseWeight) {
  int dtype = std::get<0>(GetParam()), data_dtype = std::get<1>(GetParam());
  const int64_t in_dim = 40, out_dim = 3;
  Dense w = random_sparse({in_dim, out_dim}, 0.5, 6, 10);
  Dense data{{4, 25}, indices(100, in_dim, 8)};
  Arr d = make_dense(data, data_dtype);
  Arr wd = make_dense(w, dtype), wr = make_row_sparse(w, dtype);
  Params p = emb_params(in_dim, out_dim, dtype);
  std::vector<Arr> dense, sparse;
  ASSERT_EQ(invoke("Embedding", p, {d.get(), wd.get()}, &dense), MXC_OK);
  ASSERT_EQ(invoke("Embedding", p, {d.get(), wr.get()}, &sparse), MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(stype_of(sparse[0].get()), MXC_STYPE_DEFAULT);
  Dense a = read(sparse[0].get()), b = read(dense[0].get());
  EXPECT_EQ(a.v, b.v);
  // req add: out += lookup.
  ASSERT_EQ(invoke("Embedding", p, {d.get(), wr.get()}, &sparse, 1,
                   {MXC_REQ_ADD}),
            MXC_OK);
  Dense twice = read(sparse[0].get());
  for (double &x : b.v) x *= 2;
  EXPECT_EQ(twice.v, b.v);
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, EmbeddingRsp,
    ::testing::Combine(::testing::Values(MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64),
                       ::testing::Values(MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32)));

// Repeated indices: the row is the sum of its output-gradient rows
// (computed here by a naive loop).
TEST(EmbeddingRspSum, RepeatedIndicesSummed) {
  Dense data{{5}, {2, 2, 7, 2, 0}};
  Dense og = random_dense({5, 4}, 12);
  Arr d = make_dense(data), g = make_dense(og, MXC_DTYPE_FLOAT64);
  std::vector<Arr> out;
  out.push_back(empty_rsp({8, 4}, MXC_DTYPE_FLOAT64));
  ASSERT_EQ(invoke("_backward_Embedding",
                   emb_params(8, 4, MXC_DTYPE_FLOAT64), {g.get(), d.get()},
                   &out),
            MXC_OK)
      << mxc_last_error();
  EXPECT_EQ(rows_of(out[0].get()), (std::vector<int64_t>{0, 2, 7}));
  Dense got = read(out[0].get());
  std::vector<double> want(32, 0.0);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 4; ++j) {
      want[(size_t)data.v[(size_t)i] * 4 + (size_t)j] += og.v[(size_t)(i * 4 + j)];
    }
  }
  EXPECT_EQ(got.v, want);
}

int infer(const char *name, std::vector<int> in, int out_given, int *out,
          int *dispatch) {
  mxc_op h = nullptr;
  EXPECT_EQ(mxc_op_find(name, &h), MXC_OK);
  const mxc__op *op = mxc__op_find(name);
  const char *k[] = {"input_dim", "output_dim", "sparse_grad"};
  const char *v[] = {"10", "4", "true"};
  void *param = nullptr;
  EXPECT_EQ(mxc__op_parse_params(op, k, v, 3, &param), MXC_OK);
  *out = out_given;
  int rc = mxc__op_infer_stype(op)(op, param, in.data(), 2, out, 1, dispatch);
  mxc__free(param);
  return rc;
}

TEST(EmbeddingRspStype, Rules) {
  const int D = MXC_STYPE_DEFAULT, R = MXC_STYPE_ROW_SPARSE,
            C = MXC_STYPE_CSR;
  int out, dispatch;
  // Backward: the given output decides; none given stays dense (even with
  // sparse_grad=true, so calls without an output behave as before).
  ASSERT_EQ(infer("_backward_Embedding", {D, D}, -1, &out, &dispatch), MXC_OK);
  EXPECT_EQ(out, D);
  EXPECT_EQ(dispatch, MXC__DISPATCH_DENSE);
  ASSERT_EQ(infer("_backward_Embedding", {D, D}, D, &out, &dispatch), MXC_OK);
  EXPECT_EQ(dispatch, MXC__DISPATCH_DENSE);
  ASSERT_EQ(infer("_backward_Embedding", {D, D}, R, &out, &dispatch), MXC_OK);
  EXPECT_EQ(out, R);
  EXPECT_EQ(dispatch, MXC__DISPATCH_SPARSE);
  for (auto c : std::vector<std::pair<std::vector<int>, int>>{
           {{D, D}, C}, {{R, D}, R}, {{D, C}, -1}}) {
    EXPECT_EQ(infer("_backward_Embedding", c.first, c.second, &out, &dispatch),
              MXC_ERR_STYPE);
    EXPECT_NE(std::string(mxc_last_error()).find("_backward_Embedding"),
              std::string::npos);
  }
  // Forward: dense data; dense weight -> dense kernel, row_sparse weight
  // -> sparse kernel; dense output either way.
  ASSERT_EQ(infer("Embedding", {D, D}, -1, &out, &dispatch), MXC_OK);
  EXPECT_EQ(dispatch, MXC__DISPATCH_DENSE);
  ASSERT_EQ(infer("Embedding", {D, R}, -1, &out, &dispatch), MXC_OK);
  EXPECT_EQ(out, D);
  EXPECT_EQ(dispatch, MXC__DISPATCH_SPARSE);
  for (auto c : std::vector<std::pair<std::vector<int>, int>>{
           {{D, C}, -1}, {{R, R}, -1}, {{D, R}, R}}) {
    EXPECT_EQ(infer("Embedding", c.first, c.second, &out, &dispatch),
              MXC_ERR_STYPE);
  }
}

TEST(EmbeddingRspBadInput, ShapesAndFormat) {
  Dense data{{6}, {0, 1, 2, 3, 4, 5}};
  Arr d = make_dense(data);
  Arr g = make_dense(random_dense({6, 3}, 1));
  std::vector<Arr> out;
  out.push_back(empty_rsp({9, 3}, MXC_DTYPE_FLOAT32));  // input_dim is 8
  EXPECT_EQ(invoke("_backward_Embedding", emb_params(8, 3, MXC_DTYPE_FLOAT32),
                   {g.get(), d.get()}, &out),
            MXC_ERR_SHAPE);
  // A malformed row_sparse weight: an error naming the operator at the
  // next wait, never an out-of-bounds read.
  std::vector<double> vals(6, 1.0);
  Arr w = make_rsp_rows({8, 3}, {4, 1}, vals, MXC_DTYPE_FLOAT32);
  std::vector<Arr> y;
  ASSERT_EQ(invoke("Embedding", emb_params(8, 3, MXC_DTYPE_FLOAT32),
                   {d.get(), w.get()}, &y),
            MXC_OK);
  EXPECT_EQ(mxc_ndarray_wait_to_read(y[0].get()), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("Embedding"), std::string::npos)
      << mxc_last_error();
  mxc_wait_all();
}

// One training step by hand: forward, row_sparse weight gradient, lazy
// sgd; against the same step with the dense gradient restricted to the
// looked-up rows (the lazy rule) computed by the dense operators.
// (Autograd does not take row_sparse gradient buffers yet.)
TEST(EmbeddingRspEndToEnd, ForwardBackwardLazySgd) {
  const int64_t in_dim = 50, out_dim = 4;
  Params p = emb_params(in_dim, out_dim, MXC_DTYPE_FLOAT32);
  Dense w0 = random_dense({in_dim, out_dim}, 21);
  Dense data{{2, 6}, indices(12, in_dim, 22)};
  Arr d = make_dense(data), w = make_dense(w0), wref = make_dense(w0);
  std::vector<Arr> y;
  ASSERT_EQ(invoke("Embedding", p, {d.get(), w.get()}, &y), MXC_OK);
  // loss = sum(y^2) / 2: the output gradient is y itself.
  std::vector<Arr> gs, gd;
  gs.push_back(empty_rsp({in_dim, out_dim}, MXC_DTYPE_FLOAT32));
  ASSERT_EQ(invoke("_backward_Embedding", p, {y[0].get(), d.get()}, &gs),
            MXC_OK);
  ASSERT_EQ(invoke("_backward_Embedding", p, {y[0].get(), d.get()}, &gd),
            MXC_OK);
  Params sgd = {{"lr", "0.5"}, {"wd", "0.1"}};
  std::vector<Arr> o1, o2;
  o1.emplace_back(w.get());
  ASSERT_EQ(invoke("sgd_update", sgd, {w.get(), gs[0].get()}, &o1), MXC_OK);
  o1[0].release();
  o2.emplace_back(wref.get());
  ASSERT_EQ(invoke("sgd_update", sgd, {wref.get(), gd[0].get()}, &o2),
            MXC_OK);
  o2[0].release();
  Dense got = read(w.get()), dense = read(wref.get());
  std::set<int64_t> touched;
  for (double v : data.v) touched.insert(clipped(v, in_dim));
  for (int64_t r = 0; r < in_dim; ++r) {
    for (int64_t j = 0; j < out_dim; ++j) {
      size_t i = (size_t)(r * out_dim + j);
      double want = touched.count(r) ? dense.v[i] : (double)(float)w0.v[i];
      EXPECT_EQ(got.v[i], want)
          << "row " << r;
    }
  }
}

// Through autograd: the weight marked with a row_sparse gradient buffer
// receives the row_sparse gradient (autograd gives the buffer to
// _backward_Embedding as its output), then a lazy sgd step touches only
// the looked-up rows.
TEST(EmbeddingRspEndToEnd, AutogradRowSparseGradThenLazySgd) {
  const int64_t in_dim = 30, out_dim = 3;
  Params p = emb_params(in_dim, out_dim, MXC_DTYPE_FLOAT32);
  Dense w0 = random_dense({in_dim, out_dim}, 31);
  Dense data{{8}, indices(8, in_dim, 32)};
  Dense og = random_dense({8, out_dim}, 33);
  Arr d = make_dense(data), w = make_dense(w0), hg = make_dense(og);
  Arr wg = empty_rsp({in_dim, out_dim}, MXC_DTYPE_FLOAT32);
  mxc_ndarray wh = w.get(), gh = wg.get();
  ASSERT_EQ(mxc_autograd_mark_variables(1, &wh, nullptr, &gh), MXC_OK)
      << mxc_last_error();
  ASSERT_EQ(mxc_autograd_set_recording(1, nullptr), MXC_OK);
  std::vector<Arr> y;
  int rc = invoke("Embedding", p, {d.get(), w.get()}, &y);
  ASSERT_EQ(mxc_autograd_set_recording(0, nullptr), MXC_OK);
  ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
  mxc_ndarray yh = y[0].get(), hh = hg.get();
  ASSERT_EQ(mxc_autograd_backward(1, &yh, &hh, 0), MXC_OK) << mxc_last_error();
  ASSERT_EQ(stype_of(wg.get()), MXC_STYPE_ROW_SPARSE);
  std::set<int64_t> touched;
  for (double v : data.v) touched.insert(clipped(v, in_dim));
  EXPECT_EQ(rows_of(wg.get()),
            std::vector<int64_t>(touched.begin(), touched.end()));
  std::vector<Arr> dense;
  ASSERT_EQ(invoke("_backward_Embedding", p, {hg.get(), d.get()}, &dense),
            MXC_OK);
  EXPECT_EQ(read(wg.get()).v, read(dense[0].get()).v);
  std::vector<Arr> o;
  o.emplace_back(w.get());
  ASSERT_EQ(invoke("sgd_update", {{"lr", "0.5"}, {"wd", "0.1"}},
                   {w.get(), wg.get()}, &o),
            MXC_OK);
  o[0].release();
  Dense got = read(w.get());
  for (int64_t r = 0; r < in_dim; ++r) {
    for (int64_t j = 0; j < out_dim; ++j) {
      size_t i = (size_t)(r * out_dim + j);
      if (touched.count(r)) {
        EXPECT_NE(got.v[i], (double)(float)w0.v[i]) << "row " << r;
      } else {
        EXPECT_EQ(got.v[i], (double)(float)w0.v[i]) << "row " << r;
      }
    }
  }
}

// ---- allocation failures ----

int scenario() {
  const int64_t wshape[2] = {12, 3}, dshape[1] = {5};
  const float dvals[5] = {3, 1, 3, 11, 0};
  std::vector<float> ones(36, 0.5f);
  mxc_ndarray w = nullptr, d = nullptr, g = nullptr, y = nullptr,
              gr = nullptr, m = nullptr, v = nullptr;
  mxc_op emb = nullptr, bwd = nullptr, adam = nullptr;
  const char *ek[] = {"input_dim", "output_dim"}, *ev[] = {"12", "3"};
  const char *ak[] = {"lr", "lazy_update"}, *av[] = {"0.1", "false"};
  int rc = mxc_op_find("Embedding", &emb);
  if (rc == MXC_OK) rc = mxc_op_find("_backward_Embedding", &bwd);
  if (rc == MXC_OK) rc = mxc_op_find("adam_update", &adam);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(wshape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                            0, &w);
  }
  if (rc == MXC_OK) rc = mxc_ndarray_copy_from_host(w, ones.data(), 36 * 4);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create(dshape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                            0, &d);
  }
  if (rc == MXC_OK) rc = mxc_ndarray_copy_from_host(d, dvals, sizeof dvals);
  mxc_ndarray ein[2] = {d, w};
  if (rc == MXC_OK) rc = mxc_op_invoke(emb, ek, ev, 2, ein, 2, &y, 1, nullptr);
  if (rc == MXC_OK) {
    rc = mxc_ndarray_create_row_sparse(wshape, 2, MXC_DTYPE_FLOAT32,
                                       MXC_DTYPE_INT64, nullptr, nullptr, 0,
                                       MXC_DEVICE_CPU, 0, &g);
  }
  mxc_ndarray bin[2] = {y, d};
  if (rc == MXC_OK) rc = mxc_op_invoke(bwd, ek, ev, 2, bin, 2, &g, 1, nullptr);
  // Embedding forward with the row_sparse gradient as a weight.
  mxc_ndarray fin[2] = {d, g};
  if (rc == MXC_OK) rc = mxc_op_invoke(emb, ek, ev, 2, fin, 2, &gr, 1, nullptr);
  if (rc == MXC_OK) rc = mxc_ndarray_cast_storage(w, MXC_STYPE_DEFAULT, &m);
  if (rc == MXC_OK) rc = mxc_ndarray_cast_storage(w, MXC_STYPE_DEFAULT, &v);
  mxc_ndarray ain[4] = {w, g, m, v};
  if (rc == MXC_OK) rc = mxc_op_invoke(adam, ak, av, 2, ain, 4, &w, 1, nullptr);
  av[1] = "true";
  if (rc == MXC_OK) rc = mxc_op_invoke(adam, ak, av, 2, ain, 4, &w, 1, nullptr);
  // sgd with row_sparse weight and grad, in place.
  mxc_op sgd = nullptr;
  mxc_ndarray ws = nullptr;
  const char *sk[] = {"lr"}, *sv[] = {"0.1"};
  if (rc == MXC_OK) rc = mxc_op_find("sgd_update", &sgd);
  if (rc == MXC_OK) rc = mxc_ndarray_cast_storage(w, MXC_STYPE_ROW_SPARSE, &ws);
  mxc_ndarray sin[2] = {ws, g};
  if (rc == MXC_OK) rc = mxc_op_invoke(sgd, sk, sv, 1, sin, 2, &ws, 1, nullptr);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(w);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(gr);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(ws);
  for (mxc_ndarray x : {w, d, g, y, gr, m, v, ws}) mxc_ndarray_free(x);
  int wrc = mxc_wait_all();
  return rc != MXC_OK ? rc : wrc;
}

TEST(EmbeddingRspFaults, EveryAllocationFails) {
  int failures = mxct::alloc_failure_walk(scenario, 11);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace

namespace {

// Not a check: prints how long the row_sparse paths take against the
// dense ones on a large embedding (run with
// --gtest_also_run_disabled_tests --gtest_filter='*Timing*').
double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

TEST(EmbeddingRspTiming, DISABLED_LargeVocabulary) {
  const int64_t in_dim = 1000000, out_dim = 64, n = 32768;
  Params p = emb_params(in_dim, out_dim, MXC_DTYPE_FLOAT32);
  Dense data{{n}, random_dense({n}, 1, 0.0, (double)in_dim).v};
  Arr d = make_dense(data);
  Arr og = make_dense(random_dense({n, out_dim}, 2));
  Arr w;
  const int64_t ws[2] = {in_dim, out_dim};
  ASSERT_EQ(mxc_ndarray_create(ws, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                               w.out()),
            MXC_OK);
  auto time = [&](const char *what, const std::function<void()> &f) {
    f();  // warm-up
    mxc_wait_all();
    double best = 1e30;  // the minimum: the machine may be shared
    for (int i = 0; i < 10; ++i) {
      double t0 = now_ms();
      f();
      mxc_wait_all();
      best = std::min(best, now_ms() - t0);
    }
    printf("%-40s %8.3f ms (best of 10)\n", what, best);
  };
  std::vector<Arr> gd, gs;
  gs.push_back(empty_rsp({in_dim, out_dim}, MXC_DTYPE_FLOAT32));
  time("_backward_Embedding dense", [&] {
    ASSERT_EQ(invoke("_backward_Embedding", p, {og.get(), d.get()}, &gd),
              MXC_OK);
  });
  time("_backward_Embedding row_sparse", [&] {
    ASSERT_EQ(invoke("_backward_Embedding", p, {og.get(), d.get()}, &gs),
              MXC_OK);
  });
  printf("stored rows: %lld\n", (long long)nnz_of(gs[0].get()));
  Params sgd = {{"lr", "0.1"}, {"wd", "0.0001"}, {"momentum", "0.9"}};
  Arr mom;
  ASSERT_EQ(mxc_ndarray_create(ws, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                               mom.out()),
            MXC_OK);
  for (bool sparse : {false, true}) {
    time(sparse ? "sgd_mom_update lazy (row_sparse grad)"
                : "sgd_mom_update dense",
         [&] {
           std::vector<Arr> o;
           o.emplace_back(w.get());
           mxc_ndarray g = sparse ? gs[0].get() : gd[0].get();
           ASSERT_EQ(invoke("sgd_mom_update", sgd, {w.get(), g, mom.get()}, &o),
                     MXC_OK);
           o[0].release();
         });
  }
}

}  // namespace
