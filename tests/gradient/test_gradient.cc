// The indexed graph and the gradient pass (cases in gradient_cases.c).
#include <gtest/gtest.h>

#include "tests/gradient/gradient_cases.h"

TEST(Graph, IndexingOrderConsumersAndDeepChains) {
  EXPECT_EQ(mxct_case_graph_index(), 0);
}

TEST(Gradient, SharedInputSumsContributions) {
  EXPECT_EQ(mxct_case_shared_input(), 0);
}

TEST(Gradient, MlpWithMultiOutputSliceAndAllocationFailures) {
  EXPECT_EQ(mxct_case_mlp_slice(), 0);
}

TEST(Gradient, BatchNormAuxStatesGetNoGradient) {
  EXPECT_EQ(mxct_case_batchnorm_aux(), 0);
}
