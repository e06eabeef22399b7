// Embedding and UpSampling against loop references, their gradients, and
// bad input.
#include "tests/ops/nn/nn_test_util.h"

using namespace mxct;
using nnt::expect_near;

namespace {

TEST(Embedding, LooksUpRowsAndClipsIndices) {
  const int64_t vocab = 5, dim = 3;
  auto wv = uniform(vocab * dim, -1, 1, 61);
  // Out-of-range indices are clipped (-2 -> 0, 7 -> 4); 2.7 truncates.
  std::vector<double> idx = {0, 4, 2, 1, -2, 7, 2.7, 3};
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    for (int idt : {MXC_DTYPE_FLOAT32, MXC_DTYPE_INT32, MXC_DTYPE_INT64}) {
      if (idt != MXC_DTYPE_FLOAT32 && idx[6] != 2) idx[6] = 2;  // integers
      Arr data = make({2, 4}, idx, idt);
      Arr w = make({vocab, dim}, wv, dt);
      const char *dts = dt == MXC_DTYPE_FLOAT64 ? "float64" : "float32";
      auto out =
          invoke("Embedding", {&data, &w},
                 {{"input_dim", "5"}, {"output_dim", "3"}, {"dtype", dts}});
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].shape(), Shape({2, 4, 3}));
      EXPECT_EQ(out[0].dtype(), dt);
      auto ws = read(w);
      std::vector<double> want;
      for (double v : idx) {
        int64_t r = v < 0 ? 0 : v > vocab - 1 ? vocab - 1 : (int64_t)v;
        for (int64_t j = 0; j < dim; ++j) want.push_back(ws[r * dim + j]);
      }
      EXPECT_EQ(read(out[0]), want);
    }
  }
}

TEST(Embedding, GradientScatterAddsIntoWeightOnly) {
  const int64_t vocab = 4, dim = 2;
  std::vector<double> idx = {1, 3, 1, 0, 1};
  Arr data = make({5}, idx, MXC_DTYPE_FLOAT64);
  Arr w =
      make({vocab, dim}, uniform(vocab * dim, -1, 1, 62), MXC_DTYPE_FLOAT64);
  Params p = {{"input_dim", "4"}, {"output_dim", "2"}, {"dtype", "float64"}};
  auto out = invoke("Embedding", {&data, &w}, p);
  auto ogv = uniform(10, -1, 1, 63);
  Arr og = make({5, 2}, ogv, MXC_DTYPE_FLOAT64);
  auto ig = nnt::eval_grad("Embedding", {&data, &w}, {&out[0]}, {&og}, p);
  ASSERT_EQ(ig.size(), 2u);
  EXPECT_EQ(ig[0].h, nullptr);  // indices get no gradient
  std::vector<double> want(vocab * dim, 0);
  for (size_t r = 0; r < idx.size(); ++r)
    for (int64_t j = 0; j < dim; ++j)
      want[(int64_t)idx[r] * dim + j] += ogv[r * dim + j];
  expect_near(read(ig[1]), want, 1e-15, 0, "dweight");
  grad_check_except("Embedding", {{2, 3}, {4, 2}},
             {{0, 3, 3, 1, 2, 0}, uniform(8, -1, 1, 64)}, p, {0});
}

TEST(EmbeddingBad, WeightShapeDtypeAndParams) {
  Arr data = make({3}, {0, 1, 2});
  Arr w = make({4, 3}, uniform(12, -1, 1));
  int rc = 0;
  invoke("Embedding", {&data, &w}, {{"input_dim", "5"}, {"output_dim", "3"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("'weight') has shape (4,3); expected (5,3)"),
            std::string::npos)
      << err();
  invoke("Embedding", {&data, &w}, {{"input_dim", "4"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("output_dim"), std::string::npos) << err();
  invoke("Embedding", {&data, &w},
         {{"input_dim", "4"}, {"output_dim", "3"}, {"dtype", "float64"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  EXPECT_NE(err().find("is float32 but parameter dtype is float64"),
            std::string::npos)
      << err();
  invoke("Embedding", {&data, &w},
         {{"input_dim", "4"}, {"output_dim", "3"}, {"dtype", "int32"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  invoke("Embedding", {&data}, {{"input_dim", "4"}, {"output_dim", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("Embedding", {&data, &w}, {{"input_dim", "0"}, {"output_dim", "3"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

// ---- UpSampling ----

TEST(UpSampling, NearestRepeatsPixels) {
  auto xv = uniform(2 * 3 * 2 * 3, -1, 1, 65);
  for (int dt : {MXC_DTYPE_FLOAT64, MXC_DTYPE_FLOAT32}) {
    Arr x = make({2, 3, 2, 3}, xv, dt);
    auto out =
        invoke("UpSampling", {&x},
               {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), Shape({2, 3, 4, 6}));
    auto xs = read(x);
    std::vector<double> want;
    for (int pl = 0; pl < 6; ++pl)
      for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 6; ++w)
          want.push_back(xs[pl * 6 + (h / 2) * 3 + w / 2]);
    EXPECT_EQ(read(out[0]), want);
  }
}

TEST(UpSampling, GradientSumsBlocks) {
  grad_check("UpSampling", {{1, 2, 2, 2}}, {uniform(8, -1, 1, 66)},
             {{"scale", "3"}, {"sample_type", "nearest"}});
  Arr x = make({1, 1, 1, 1}, {5}, MXC_DTYPE_FLOAT64);
  auto out = invoke("UpSampling", {&x}, {{"scale", "2"}});
  Arr og = make({1, 1, 2, 2}, {1, 2, 3, 4}, MXC_DTYPE_FLOAT64);
  auto ig =
      nnt::eval_grad("UpSampling", {&x}, {&out[0]}, {&og}, {{"scale", "2"}});
  EXPECT_EQ(read(ig[0]), std::vector<double>({10}));
}

// Several nearest inputs: arg i is repeated by (output extent / its
// extent) and the parts are concatenated along the channels or summed.
TEST(UpSampling, NearestSeveralInputs) {
  auto av = uniform(1 * 2 * 2 * 2, -1, 1, 67), bv = uniform(1 * 2 * 4 * 4, -1, 1, 68);
  Arr a = make({1, 2, 2, 2}, av, MXC_DTYPE_FLOAT64);
  Arr b = make({1, 2, 4, 4}, bv, MXC_DTYPE_FLOAT64);
  Params p = {{"scale", "4"}, {"num_args", "2"}};
  auto cat = invoke("UpSampling", {&a, &b}, p);
  EXPECT_EQ(cat[0].shape(), Shape({1, 4, 8, 8}));
  std::vector<double> want_cat, want_sum;
  for (int c = 0; c < 4; ++c)
    for (int h = 0; h < 8; ++h)
      for (int w = 0; w < 8; ++w)
        want_cat.push_back(c < 2 ? av[c * 4 + (h / 4) * 2 + w / 4]
                                 : bv[(c - 2) * 16 + (h / 2) * 4 + w / 2]);
  EXPECT_EQ(read(cat[0]), want_cat);
  p.push_back({"multi_input_mode", "sum"});
  auto sum = invoke("UpSampling", {&a, &b}, p);
  EXPECT_EQ(sum[0].shape(), Shape({1, 2, 8, 8}));
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 8; ++h)
      for (int w = 0; w < 8; ++w)
        want_sum.push_back(want_cat[(c * 8 + h) * 8 + w] +
                           want_cat[((c + 2) * 8 + h) * 8 + w]);
  EXPECT_EQ(read(sum[0]), want_sum);
  grad_check("UpSampling", {{1, 2, 1, 2}, {1, 1, 2, 4}},
             {uniform(4, -1, 1, 69), uniform(8, -1, 1, 70)},
             {{"scale", "2"}, {"num_args", "2"}});
  grad_check("UpSampling", {{1, 2, 1, 2}, {1, 2, 2, 4}},
             {uniform(4, -1, 1, 71), uniform(16, -1, 1, 72)},
             {{"scale", "2"}, {"num_args", "2"}, {"multi_input_mode", "sum"}});
}

TEST(UpSampling, BilinearGradient) {
  // scale 2: kernel 4, weight (C, 1, 4, 4)
  grad_check("UpSampling", {{1, 2, 2, 3}, {2, 1, 4, 4}},
             {uniform(12, -1, 1, 73), uniform(32, -1, 1, 74)},
             {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_args", "2"}});
}

TEST(UpSamplingBad, ShapesAndParameters) {
  Arr x = make({1, 1, 2, 2}, {1, 2, 3, 4});
  int rc = 0;
  Arr w3 = make({1, 1, 3, 3}, uniform(9, 0, 1));
  invoke("UpSampling", {&x, &w3}, {{"scale", "2"}, {"sample_type", "bilinear"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("weight"), std::string::npos) << err();
  Arr w4 = make({1, 1, 4, 4}, uniform(16, 0, 1));
  invoke("UpSampling", {&x, &w4},
         {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "3"}},
         &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  invoke("UpSampling", {&x, &w4},
         {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_args", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr odd = make({1, 1, 3, 3}, uniform(9, 0, 1));
  invoke("UpSampling", {&x, &odd}, {{"scale", "2"}, {"num_args", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);  // 3 does not divide the output's 4
  Arr other_c = make({1, 2, 4, 4}, uniform(32, 0, 1));
  invoke("UpSampling", {&x, &other_c},
         {{"scale", "2"}, {"num_args", "2"}, {"multi_input_mode", "sum"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  invoke("UpSampling", {&x, &x}, {{"scale", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  Arr v = make({2, 2}, {1, 2, 3, 4});
  invoke("UpSampling", {&v}, {{"scale", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("4-D"), std::string::npos) << err();
  invoke("UpSampling", {&x}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("scale"), std::string::npos) << err();
}

}  // namespace
