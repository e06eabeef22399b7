// CTCLoss against torch.nn.functional.ctc_loss (make_golden.py): losses,
// the hidden gradient output against torch's autograd, the gradient by
// finite differences, and bad input.
#include "tests/ops/vision/golden.h"

using mxct::Arr;
using mxct::make;
using mxct::Params;

namespace {

const char *const kFile = "tests/ops/ctc/ctc_golden.txt";

TEST(CTCLoss, GoldenLosses) {
  for (const auto &c : vist::cases_of("CTCLoss", kFile)) {
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-10, 1e-10);
    vist::run_case(c, MXC_DTYPE_FLOAT32, 1e-5, 1e-5);
  }
}

TEST(CTCLoss, Aliases) {
  auto c = vist::cases_of("CTCLoss", kFile).at(0);
  for (const char *alias :
       {"ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"}) {
    c.op = alias;
    vist::run_case(c, MXC_DTYPE_FLOAT64, 1e-10, 1e-10);
  }
}

// The hidden second output is d(loss_n)/d(data) for each sequence, so
// that summed over sequences it is torch's gradient of the summed loss.
TEST(CTCLoss, GradientOutputMatchesTorch) {
  for (const auto &c : vist::cases_of("CTCLoss:grad", kFile)) {
    SCOPED_TRACE(c.name);
    std::vector<Arr> ins;
    for (const auto &t : c.in)
      ins.push_back(make(t.shape, t.v, MXC_DTYPE_FLOAT64));
    std::vector<const Arr *> ptrs;
    for (const auto &a : ins) ptrs.push_back(&a);
    int rc = -1;
    auto outs = mxct::invoke_count("CTCLoss", ptrs, c.params, 2, &rc);
    ASSERT_EQ(rc, MXC_OK) << mxct::err();
    auto got = mxct::read(outs.at(1));
    ASSERT_EQ(got.size(), c.out[0].v.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], c.out[0].v[i], 1e-9) << "element " << i;
  }
}

TEST(CTCLoss, GradientByFiniteDifferences) {
  auto cases = vist::cases_of("CTCLoss", kFile);
  for (const auto &c : cases) {
    if (c.name == "impossible") continue;  // +inf losses
    SCOPED_TRACE(c.name);
    std::vector<mxct::Shape> shapes;
    std::vector<std::vector<double>> values;
    std::vector<int> skip;
    for (size_t i = 0; i < c.in.size(); ++i) {
      shapes.push_back(c.in[i].shape);
      values.push_back(c.in[i].v);
      if (i > 0) skip.push_back(static_cast<int>(i));  // labels, lengths
    }
    mxct::grad_check("CTCLoss", shapes, values, c.params, 1e-6, 1e-5, 1e-6,
                     skip);
  }
}

int rc_of(const std::vector<const Arr *> &in, const Params &p) {
  int rc = MXC_OK;
  auto out = mxct::invoke("CTCLoss", in, p, &rc);
  if (rc == MXC_OK) rc = mxc_ndarray_wait_to_read(out.at(0).h);
  return rc;
}

TEST(CTCLoss, BadInput) {
  Arr data = make({4, 2, 3}, mxct::uniform(24, -1, 1, 3));
  Arr label = make({2, 2}, {1, 2, 2, 0});
  EXPECT_EQ(rc_of({&data, &label}, {}), MXC_OK) << mxct::err();
  Arr big = make({2, 2}, {1, 3, 2, 0});  // class 3 of 3
  EXPECT_EQ(rc_of({&data, &big}, {}), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxct::err().find("label"), std::string::npos) << mxct::err();
  Arr frac = make({2, 2}, {1, 1.5, 2, 0});
  EXPECT_EQ(rc_of({&data, &frac}, {}), MXC_ERR_INVALID_ARGUMENT);
  // With blank last, class 2 is the blank and may not be a label.
  EXPECT_EQ(rc_of({&data, &label}, {{"blank_label", "last"}}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(mxct::err().find("blank"), std::string::npos) << mxct::err();
  Arr lens = make({2}, {4, 5});  // 5 frames of 4
  EXPECT_EQ(rc_of({&data, &label, &lens}, {{"use_data_lengths", "true"}}),
            MXC_ERR_INVALID_ARGUMENT);
  Arr llens = make({2}, {1, 3});  // 3 labels of 2
  EXPECT_EQ(rc_of({&data, &label, &llens}, {{"use_label_lengths", "true"}}),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(rc_of({&data, &label}, {{"use_label_lengths", "true"}}),
            MXC_ERR_INVALID_ARGUMENT);  // the input is missing
  Arr label3 = make({3, 2}, std::vector<double>(6, 1));
  EXPECT_EQ(rc_of({&data, &label3}, {}), MXC_ERR_SHAPE);
  Arr data2 = make({4, 6}, mxct::uniform(24, -1, 1, 3));
  EXPECT_EQ(rc_of({&data2, &label}, {}), MXC_ERR_SHAPE);
  EXPECT_EQ(rc_of({&data, &label}, {{"blank_label", "middle"}}),
            MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace
