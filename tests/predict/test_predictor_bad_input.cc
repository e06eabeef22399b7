// Bad input to the predictor API: every case is a clean error code with a
// message naming what was wrong, leaves the out-parameter untouched and
// leaks no handle (ASan's leak checker covers memory under --config=asan).
#include <gtest/gtest.h>

extern "C" {
#include "core/base/handle.h"
}
#include "tests/predict/predict_util.h"

using namespace pred_test;

namespace {

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    m_ = load_model();
    ASSERT_EQ(m_.batch, 4) << "model files missing";
    live_ = mxc__handle_live();
  }
  void TearDown() override {
    mxc_wait_all();
    EXPECT_EQ(mxc__handle_live(), live_) << "a handle leaked";
  }
  // Creates with the given pieces; expects failure `code` whose message
  // contains `needle`, and *out untouched.
  void expect_create_fails(const std::string &json, const std::string &params,
                           const char *name, std::vector<int64_t> dims,
                           int code, const char *needle) {
    const char *names[] = {name};
    int ndims[] = {(int)dims.size()};
    mxc_predictor p = reinterpret_cast<mxc_predictor>(0x1);
    int rc = mxc_predictor_create(json.c_str(), params.data(), params.size(),
                                  MXC_DEVICE_CPU, 0, 1, names, ndims,
                                  dims.data(), nullptr, 0, nullptr, &p);
    EXPECT_EQ(rc, code) << err();
    EXPECT_NE(err().find(needle), std::string::npos) << err();
    EXPECT_EQ(p, reinterpret_cast<mxc_predictor>(0x1));
  }
  std::vector<int64_t> dims() const { return {m_.batch, m_.c, m_.h, m_.w}; }
  Model m_;
  int64_t live_ = 0;
};

TEST_F(BadInput, WrongInputNameOrShape) {
  expect_create_fails(m_.json, m_.params, "image", dims(), MXC_ERR_NOT_FOUND,
                      "'image' is not an argument");
  // Two channels where the convolution's weights have three.
  expect_create_fails(m_.json, m_.params, "data", {4, 2, 6, 6}, MXC_ERR_SHAPE,
                      "conv");
  expect_create_fails(m_.json, m_.params, "data", {4, 3, 6}, MXC_ERR_SHAPE,
                      "conv");
  expect_create_fails(m_.json, m_.params, "data", {-1, 3, 6, 6},
                      MXC_ERR_INVALID_ARGUMENT, "");
}

TEST_F(BadInput, NullsAndCounts) {
  const char *names[] = {"data"};
  int ndims[] = {4};
  std::vector<int64_t> d = dims();
  mxc_predictor p = nullptr;
  EXPECT_EQ(mxc_predictor_create(nullptr, m_.params.data(), m_.params.size(),
                                 MXC_DEVICE_CPU, 0, 1, names, ndims, d.data(),
                                 nullptr, 0, nullptr, &p),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("symbol_json"), std::string::npos) << err();
  EXPECT_EQ(mxc_predictor_create(m_.json.c_str(), nullptr, 100, MXC_DEVICE_CPU,
                                 0, 1, names, ndims, d.data(), nullptr, 0,
                                 nullptr, &p),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("params is NULL"), std::string::npos) << err();
  EXPECT_EQ(mxc_predictor_create(m_.json.c_str(), m_.params.data(),
                                 m_.params.size(), MXC_DEVICE_CPU, 0, 0, names,
                                 ndims, d.data(), nullptr, 0, nullptr, &p),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_predictor_create(m_.json.c_str(), m_.params.data(),
                                 m_.params.size(), MXC_DEVICE_CPU, 0, 1, names,
                                 ndims, d.data(), nullptr, 0, nullptr,
                                 nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_predictor_create(m_.json.c_str(), m_.params.data(),
                                 m_.params.size(), 7, 0, 1, names, ndims,
                                 d.data(), nullptr, 0, nullptr, &p),
            MXC_ERR_INVALID_ARGUMENT);
  const char *two[] = {"data", "data"};
  int nd2[] = {4, 4};
  int64_t d2[8] = {4, 3, 6, 6, 4, 3, 6, 6};
  EXPECT_EQ(mxc_predictor_create(m_.json.c_str(), m_.params.data(),
                                 m_.params.size(), MXC_DEVICE_CPU, 0, 2, two,
                                 nd2, d2, nullptr, 0, nullptr, &p),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("given twice"), std::string::npos) << err();
  int bad_dtype[] = {99};
  EXPECT_EQ(mxc_predictor_create(m_.json.c_str(), m_.params.data(),
                                 m_.params.size(), MXC_DEVICE_CPU, 0, 1, names,
                                 ndims, d.data(), bad_dtype, 0, nullptr, &p),
            MXC_ERR_DTYPE);
  EXPECT_EQ(mxc_predictor_create(m_.json.c_str(), m_.params.data(),
                                 m_.params.size(), MXC_DEVICE_CPU, 0, 1, names,
                                 ndims, d.data(), nullptr, 1, nullptr, &p),
            MXC_ERR_INVALID_ARGUMENT);
  const char *no_such[] = {"nothing"};
  EXPECT_EQ(mxc_predictor_create(m_.json.c_str(), m_.params.data(),
                                 m_.params.size(), MXC_DEVICE_CPU, 0, 1, names,
                                 ndims, d.data(), nullptr, 1, no_such, &p),
            MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("'nothing'"), std::string::npos) << err();
  EXPECT_EQ(p, nullptr);
}

TEST_F(BadInput, MalformedJson) {
  expect_create_fails("{\"nodes\": [", m_.params, "data", dims(),
                      MXC_ERR_INVALID_ARGUMENT, "");
  std::string unknown = m_.json;
  unknown.replace(unknown.find("\"Flatten\""), 9, "\"NoSuchOp\"");
  expect_create_fails(unknown, m_.params, "data", dims(), MXC_ERR_NOT_FOUND,
                      "NoSuchOp");
}

// Every truncation of the params bytes is MXC_ERR_IO naming the offset.
TEST_F(BadInput, TruncatedParams) {
  for (size_t n = 0; n < m_.params.size(); n += (n < 64 ? 1 : 7)) {
    SCOPED_TRACE(n);
    std::string cut = m_.params.substr(0, n);
    const char *names[] = {"data"};
    int ndims[] = {4};
    std::vector<int64_t> d = dims();
    mxc_predictor p = nullptr;
    int rc = mxc_predictor_create(m_.json.c_str(), cut.data(), cut.size(),
                                  MXC_DEVICE_CPU, 0, 1, names, ndims, d.data(),
                                  nullptr, 0, nullptr, &p);
    ASSERT_EQ(rc, MXC_ERR_IO) << err();
    EXPECT_NE(err().find("offset"), std::string::npos) << err();
    ASSERT_EQ(p, nullptr);
  }
}

// A parameter missing from the params is named: epoch 0 lacks the
// argument fc_bias, epoch 1 also the auxiliary state bn_moving_var (the
// checkpoints are written by mxc_checkpoint_save from the script's model).
TEST_F(BadInput, MissingParameterIsNamed) {
  mxc_symbol sym = nullptr;
  mxc_ndarray_list args = nullptr, aux = nullptr;
  ASSERT_EQ(mxc_checkpoint_load(kPrefix.c_str(), 0, &sym, &args, &aux),
            MXC_OK);
  const char *d = getenv("TEST_TMPDIR");
  std::string prefix = std::string(d ? d : "/tmp") + "/missing";
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<mxc_ndarray> arrs[2];
    std::vector<const char *> names[2];
    mxc_ndarray_list lists[2] = {args, aux};
    for (int g = 0; g < 2; ++g) {
      int n = 0;
      ASSERT_EQ(mxc_ndarray_list_size(lists[g], &n), MXC_OK);
      for (int i = 0; i < n; ++i) {
        const char *nm;
        mxc_ndarray v;
        ASSERT_EQ(mxc_ndarray_list_name(lists[g], i, &nm), MXC_OK);
        std::string s = nm;
        if (s == "fc_bias" || (epoch == 1 && s == "bn_moving_var")) continue;
        ASSERT_EQ(mxc_ndarray_list_get(lists[g], i, &v), MXC_OK);
        arrs[g].push_back(v);
        names[g].push_back(nm);
      }
    }
    ASSERT_EQ(mxc_checkpoint_save(prefix.c_str(), epoch, sym,
                                  (int)arrs[0].size(), names[0].data(),
                                  arrs[0].data(), (int)arrs[1].size(),
                                  names[1].data(), arrs[1].data()),
              MXC_OK)
        << err();
    for (auto &g : arrs) {
      for (auto v : g) mxc_ndarray_free(v);
    }
  }
  mxc_ndarray_list_free(args);
  mxc_ndarray_list_free(aux);
  mxc_symbol_free(sym);
  const char *names[] = {"data"};
  int ndims[] = {4};
  std::vector<int64_t> dd = dims();
  mxc_predictor p = nullptr;
  for (int epoch = 0; epoch < 2; ++epoch) {
    EXPECT_EQ(mxc_predictor_create_from_checkpoint(
                  prefix.c_str(), epoch, MXC_DEVICE_CPU, 0, 1, names, ndims,
                  dd.data(), nullptr, 0, nullptr, &p),
              MXC_ERR_NOT_FOUND);
    const char *want = epoch == 0 ? "argument 'fc_bias' is neither an input"
                                  : "auxiliary state 'bn_moving_var'";
    EXPECT_NE(err().find(want), std::string::npos) << err();
  }
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(mxc_predictor_create_from_checkpoint(
                (prefix + "_absent").c_str(), 0, MXC_DEVICE_CPU, 0, 1, names,
                ndims, dd.data(), nullptr, 0, nullptr, &p),
            MXC_ERR_IO);
  EXPECT_NE(err().find("_absent"), std::string::npos) << err();
}

TEST_F(BadInput, SetInputAndGetOutputMisuse) {
  mxc_predictor p = nullptr;
  ASSERT_EQ(create(m_, m_.batch, &p), MXC_OK) << err();
  size_t nb = m_.input.size() * sizeof(float);
  EXPECT_EQ(mxc_predictor_set_input(p, "dat", m_.input.data(), nb),
            MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("its inputs are 'data'"), std::string::npos) << err();
  EXPECT_EQ(mxc_predictor_set_input(p, nullptr, m_.input.data(), nb),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_predictor_set_input(p, "data", nullptr, nb),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_predictor_set_input(p, "data", m_.input.data(), nb - 4),
            MXC_ERR_SHAPE);
  EXPECT_NE(err().find("takes " + std::to_string(nb) + " bytes"),
            std::string::npos)
      << err();
  // A label is not an input: it cannot be set.
  EXPECT_EQ(mxc_predictor_set_input(p, "softmax_label", m_.input.data(), 16),
            MXC_ERR_NOT_FOUND);
  int64_t wrong[] = {m_.batch, m_.c, m_.h, m_.w + 1};
  mxc_ndarray a = nullptr;
  ASSERT_EQ(mxc_ndarray_create(wrong, 4, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                               0, &a),
            MXC_OK);
  EXPECT_EQ(mxc_predictor_set_input_array(p, "data", a), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("input 'data' has shape (4,3,6,6)"), std::string::npos)
      << err();
  mxc_ndarray_free(a);
  wrong[3] = m_.w;
  mxc_ndarray b = nullptr;
  ASSERT_EQ(mxc_ndarray_create(wrong, 4, MXC_DTYPE_FLOAT64, MXC_DEVICE_CPU, 0,
                               0, &b),
            MXC_OK);
  EXPECT_EQ(mxc_predictor_set_input_array(p, "data", b), MXC_ERR_DTYPE);
  EXPECT_NE(err().find("dtype float32"), std::string::npos) << err();
  EXPECT_EQ(mxc_predictor_set_input_array(p, "nope", b), MXC_ERR_NOT_FOUND);
  EXPECT_EQ(mxc_predictor_set_input_array(p, "data", nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  mxc_ndarray_free(b);
  ASSERT_EQ(mxc_predictor_forward(p), MXC_OK);
  std::vector<float> y(m_.expected.size());
  EXPECT_EQ(mxc_predictor_get_output(p, 0, y.data(), y.size() * 4 + 4),
            MXC_ERR_SHAPE);
  EXPECT_EQ(mxc_predictor_get_output(p, 1, y.data(), y.size() * 4),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_predictor_get_output(p, -1, y.data(), y.size() * 4),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_predictor_get_output(p, 0, nullptr, y.size() * 4),
            MXC_ERR_INVALID_ARGUMENT);
  int ndim;
  int64_t dd[MXC_MAX_NDIM];
  EXPECT_EQ(mxc_predictor_output_shape(p, 0, &ndim, nullptr, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_predictor_output_shape(p, 5, &ndim, dd, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  // Reshape: unknown input, negative count, a batch a parameter rejects.
  const char *names[] = {"nope"}, *data[] = {"data"};
  int nd[] = {4};
  int64_t ok[] = {1, m_.c, m_.h, m_.w}, bad[] = {1, m_.c, m_.h + 2, m_.w};
  mxc_predictor r = nullptr;
  EXPECT_EQ(mxc_predictor_reshape(p, 1, names, nd, ok, &r), MXC_ERR_NOT_FOUND);
  EXPECT_EQ(mxc_predictor_reshape(p, -1, data, nd, ok, &r),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_predictor_reshape(p, 1, data, nd, bad, &r), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("fc"), std::string::npos) << err();
  EXPECT_EQ(r, nullptr);
  mxc_predictor_free(p);
  // A freed predictor is refused, not dereferenced.
  EXPECT_EQ(mxc_predictor_forward(p), MXC_ERR_INVALID_HANDLE);
}

}  // namespace
