// The predictor API on the model of scripts/make_predictor_model.py: every
// output is compared with the script's numpy forward (float64), never
// with another mxc code path. Then the real Fashion-MNIST model of the
// shared directory, which must classify the test set at its known
// accuracy.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/predict/predict_util.h"

using namespace pred_test;

namespace {

const double kTol = 2e-5;  // float32 forward against float64 numpy

class Predictor : public ::testing::Test {
 protected:
  void SetUp() override {
    m_ = load_model();
    ASSERT_EQ(m_.batch, 4) << "model files missing: " << kDir;
    ASSERT_EQ(m_.expected.size(), (size_t)m_.batch * m_.classes);
  }
  void expect_rows(const std::vector<float> &y, int first, int batch) {
    ASSERT_EQ(y.size(), (size_t)batch * m_.classes) << err();
    EXPECT_LT(max_diff(y.data(), m_.expected.data() + first * m_.classes,
                       y.size()),
              kTol);
  }
  Model m_;
};

TEST_F(Predictor, FromBytesMatchesNumpyForward) {
  mxc_predictor p = nullptr;
  ASSERT_EQ(create(m_, m_.batch, &p), MXC_OK) << err();
  expect_rows(run(p, m_, 0, m_.batch), 0, m_.batch);
  // Inputs are replaced, not accumulated: zeros give other outputs, and
  // the images again give the same ones.
  std::vector<float> zeros(m_.input.size(), 0.0f), y(m_.expected.size());
  ASSERT_EQ(mxc_predictor_set_input(p, "data", zeros.data(), zeros.size() * 4),
            MXC_OK);
  ASSERT_EQ(mxc_predictor_forward(p), MXC_OK);
  ASSERT_EQ(mxc_predictor_get_output(p, 0, y.data(), y.size() * 4), MXC_OK);
  EXPECT_GT(max_diff(y.data(), m_.expected.data(), y.size()), 1e-3);
  expect_rows(run(p, m_, 0, m_.batch), 0, m_.batch);
  mxc_predictor_free(p);
}

TEST_F(Predictor, FromCheckpointMatchesNumpyForward) {
  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t dims[] = {m_.batch, m_.c, m_.h, m_.w};
  mxc_predictor p = nullptr;
  ASSERT_EQ(mxc_predictor_create_from_checkpoint(
                kPrefix.c_str(), 0, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                nullptr, 0, nullptr, &p),
            MXC_OK)
      << err();
  expect_rows(run(p, m_, 0, m_.batch), 0, m_.batch);
  mxc_predictor_free(p);
}

TEST_F(Predictor, OutputShapeIsKnownBeforeForward) {
  mxc_predictor p = nullptr;
  ASSERT_EQ(create(m_, 3, &p), MXC_OK) << err();
  int n = 0, ndim = 0, dtype = -1;
  int64_t dims[MXC_MAX_NDIM];
  ASSERT_EQ(mxc_predictor_num_outputs(p, &n), MXC_OK);
  EXPECT_EQ(n, 1);
  ASSERT_EQ(mxc_predictor_output_shape(p, 0, &ndim, dims, &dtype), MXC_OK);
  ASSERT_EQ(ndim, 2);
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], m_.classes);
  EXPECT_EQ(dtype, MXC_DTYPE_FLOAT32);
  mxc_predictor_free(p);
}

// Reshape shares the weights: a batch of 1 and of 2 give the script's
// rows, and the original predictor still works after its reshapes are
// freed (and the reshapes after it is freed).
TEST_F(Predictor, ReshapeToOtherBatchSizes) {
  mxc_predictor p = nullptr, one = nullptr, two = nullptr;
  ASSERT_EQ(create(m_, m_.batch, &p), MXC_OK) << err();
  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t d1[] = {1, m_.c, m_.h, m_.w}, d2[] = {2, m_.c, m_.h, m_.w};
  ASSERT_EQ(mxc_predictor_reshape(p, 1, names, ndims, d1, &one), MXC_OK)
      << err();
  ASSERT_EQ(mxc_predictor_reshape(p, 1, names, ndims, d2, &two), MXC_OK)
      << err();
  for (int i = 0; i < m_.batch; ++i) expect_rows(run(one, m_, i, 1), i, 1);
  expect_rows(run(two, m_, 2, 2), 2, 2);
  mxc_predictor_free(one);
  expect_rows(run(p, m_, 0, m_.batch), 0, m_.batch);
  mxc_predictor_free(p);
  expect_rows(run(two, m_, 0, 2), 0, 2);
  mxc_predictor_free(two);
}

TEST_F(Predictor, CloneRunsIndependently) {
  mxc_predictor p = nullptr, c = nullptr;
  ASSERT_EQ(create(m_, 1, &p), MXC_OK) << err();
  ASSERT_EQ(mxc_predictor_clone(p, &c), MXC_OK) << err();
  // Inputs are per predictor: setting p's does not change c's.
  expect_rows(run(p, m_, 0, 1), 0, 1);
  expect_rows(run(c, m_, 1, 1), 1, 1);
  std::vector<float> y(m_.classes);
  ASSERT_EQ(mxc_predictor_get_output(p, 0, y.data(), y.size() * 4), MXC_OK);
  expect_rows(y, 0, 1);
  mxc_predictor_free(p);
  mxc_predictor_free(c);
}

TEST_F(Predictor, InputFromArrayAndOutputAsArray) {
  mxc_predictor p = nullptr;
  ASSERT_EQ(create(m_, m_.batch, &p), MXC_OK) << err();
  int64_t dims[] = {m_.batch, m_.c, m_.h, m_.w};
  mxc_ndarray x = nullptr, y = nullptr;
  ASSERT_EQ(mxc_ndarray_create(dims, 4, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                               0, &x),
            MXC_OK);
  ASSERT_EQ(mxc_ndarray_copy_from_host(x, m_.input.data(),
                                       m_.input.size() * 4),
            MXC_OK);
  ASSERT_EQ(mxc_predictor_set_input_array(p, "data", x), MXC_OK) << err();
  mxc_ndarray_free(x);  // the predictor copied it
  ASSERT_EQ(mxc_predictor_forward(p), MXC_OK) << err();
  ASSERT_EQ(mxc_predictor_output(p, 0, &y), MXC_OK) << err();
  mxc_predictor_free(p);  // the output array outlives it
  std::vector<float> v(m_.expected.size());
  ASSERT_EQ(mxc_ndarray_copy_to_host(y, v.data(), v.size() * 4), MXC_OK)
      << err();
  expect_rows(v, 0, m_.batch);
  mxc_ndarray_free(y);
}

// Outputs chosen by name, inner nodes included: the scores before the
// softmax, whose softmax (computed here) is the script's output.
TEST_F(Predictor, ChosenOutputs) {
  const char *names[] = {"data"}, *outs[] = {"fc", "softmax_output"};
  int ndims[] = {4};
  int64_t dims[] = {m_.batch, m_.c, m_.h, m_.w};
  mxc_predictor p = nullptr;
  ASSERT_EQ(mxc_predictor_create(m_.json.c_str(), m_.params.data(),
                                 m_.params.size(), MXC_DEVICE_CPU, 0, 1,
                                 names, ndims, dims, nullptr, 2, outs, &p),
            MXC_OK)
      << err();
  int n = 0;
  ASSERT_EQ(mxc_predictor_num_outputs(p, &n), MXC_OK);
  ASSERT_EQ(n, 2);
  ASSERT_EQ(mxc_predictor_set_input(p, "data", m_.input.data(),
                                    m_.input.size() * 4),
            MXC_OK);
  ASSERT_EQ(mxc_predictor_forward(p), MXC_OK);
  std::vector<float> fc(m_.expected.size()), sm(m_.expected.size());
  ASSERT_EQ(mxc_predictor_get_output(p, 0, fc.data(), fc.size() * 4), MXC_OK);
  ASSERT_EQ(mxc_predictor_get_output(p, 1, sm.data(), sm.size() * 4), MXC_OK);
  expect_rows(sm, 0, m_.batch);
  for (int r = 0; r < m_.batch; ++r) {
    const float *row = fc.data() + r * m_.classes;
    double mx = *std::max_element(row, row + m_.classes), sum = 0;
    for (int k = 0; k < m_.classes; ++k) sum += std::exp(row[k] - mx);
    for (int k = 0; k < m_.classes; ++k) {
      EXPECT_NEAR(std::exp(row[k] - mx) / sum,
                  m_.expected[r * m_.classes + k], kTol);
    }
  }
  mxc_predictor_free(p);
}

// The params bytes may also be mxc's own array format.
TEST_F(Predictor, ParamsInMxcFormat) {
  mxc_symbol sym = nullptr;
  mxc_ndarray_list args = nullptr, aux = nullptr;
  ASSERT_EQ(mxc_checkpoint_load(kPrefix.c_str(), 0, &sym, &args, &aux),
            MXC_OK)
      << err();
  std::vector<mxc_ndarray> arrs;
  std::vector<std::string> names;
  for (auto [l, tag] : {std::make_pair(args, "arg:"), {aux, "aux:"}}) {
    int n = 0;
    ASSERT_EQ(mxc_ndarray_list_size(l, &n), MXC_OK);
    for (int i = 0; i < n; ++i) {
      const char *nm;
      mxc_ndarray a;
      ASSERT_EQ(mxc_ndarray_list_name(l, i, &nm), MXC_OK);
      ASSERT_EQ(mxc_ndarray_list_get(l, i, &a), MXC_OK);
      names.push_back(std::string(tag) + nm);
      arrs.push_back(a);
    }
  }
  std::vector<const char *> cn;
  for (auto &s : names) cn.push_back(s.c_str());
  const char *d = getenv("TEST_TMPDIR");
  std::string path = std::string(d ? d : "/tmp") + "/pred_mxc.params";
  ASSERT_EQ(mxc_ndarray_save(path.c_str(), arrs.data(), cn.data(),
                             (int)arrs.size()),
            MXC_OK)
      << err();
  for (auto a : arrs) mxc_ndarray_free(a);
  mxc_ndarray_list_free(args);
  mxc_ndarray_list_free(aux);
  mxc_symbol_free(sym);
  m_.params = read_text(path);
  ASSERT_EQ(m_.params.substr(0, 8), "MXCNDARR");
  mxc_predictor p = nullptr;
  ASSERT_EQ(create(m_, m_.batch, &p), MXC_OK) << err();
  expect_rows(run(p, m_, 0, m_.batch), 0, m_.batch);
  mxc_predictor_free(p);
}

// The real model: Fashion-MNIST classified by the predictor at the
// accuracy MXNet's model is known for (86.8%; preprocessing (pixel/255 -
// 0.2860) / 0.3530, see tests/io/test_checkpoint.cc).
TEST(RealMxnet, FashionMnistThroughPredictor) {
  std::string dir = models_dir(), data = fashion_mnist_dir();
  if (dir.empty()) GTEST_SKIP() << "shared mxnet-models directory not found";
  std::string img = data + "/t10k-images-idx3-ubyte.gz",
              lab = data + "/t10k-labels-idx1-ubyte.gz";
  if (!readable(img) || !readable(lab)) {
    GTEST_SKIP() << "Fashion-MNIST test set not found in " << data;
  }
  const int batch = 1000;
  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t dims[] = {batch, 1, 28, 28};
  mxc_predictor p = nullptr;
  ASSERT_EQ(mxc_predictor_create_from_checkpoint(
                (dir + "/mentalblood_fashion-mnist").c_str(), 39,
                MXC_DEVICE_CPU, 0, 1, names, ndims, dims, nullptr, 0, nullptr,
                &p),
            MXC_OK)
      << err();
  mxc_data_iter it = nullptr;
  ASSERT_EQ(mxc_data_iter_idx_create(img.c_str(), lab.c_str(), batch, 0, 0, 0,
                                     1, MXC_LAST_BATCH_PAD, &it),
            MXC_OK)
      << err();
  int has = 0, correct = 0, total = 0;
  std::vector<float> x((size_t)batch * 784), y((size_t)batch * 10),
      labels(batch);
  while (mxc_data_iter_next(it, &has) == MXC_OK && has) {
    mxc_ndarray xa, ya;
    ASSERT_EQ(mxc_data_iter_data(it, &xa), MXC_OK);
    ASSERT_EQ(mxc_data_iter_label(it, &ya), MXC_OK);
    ASSERT_EQ(mxc_ndarray_copy_to_host(xa, x.data(), x.size() * 4), MXC_OK);
    ASSERT_EQ(mxc_ndarray_copy_to_host(ya, labels.data(), labels.size() * 4),
              MXC_OK);
    mxc_ndarray_free(xa);
    mxc_ndarray_free(ya);
    for (float &v : x) v = (v - 0.2860f) / 0.3530f;
    ASSERT_EQ(mxc_predictor_set_input(p, "data", x.data(), x.size() * 4),
              MXC_OK);
    ASSERT_EQ(mxc_predictor_forward(p), MXC_OK);
    ASSERT_EQ(mxc_predictor_get_output(p, 0, y.data(), y.size() * 4), MXC_OK)
        << err();
    for (int r = 0; r < batch; ++r) {
      const float *row = y.data() + r * 10;
      correct += (int)(std::max_element(row, row + 10) - row) == (int)labels[r];
      ++total;
    }
  }
  EXPECT_EQ(total, 10000);
  EXPECT_NEAR((double)correct / total, 0.868, 0.005);
  mxc_data_iter_free(it);
  mxc_predictor_free(p);
}

}  // namespace
