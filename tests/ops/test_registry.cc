// Registry introspection and parameter parsing through the C API.
#include <set>

#include "tests/ops/op_test_util.h"

using namespace mxct;

TEST(Registry, ListsOperatorsSortedAndFindsThem) {
  int n = 0;
  ASSERT_EQ(mxc_op_count(&n), MXC_OK);
  ASSERT_GT(n, 40);
  std::string prev;
  std::set<std::string> names;
  for (int i = 0; i < n; ++i) {
    mxc_op op;
    ASSERT_EQ(mxc_op_at(i, &op), MXC_OK);
    const char *name, *doc;
    ASSERT_EQ(mxc_op_name(op, &name), MXC_OK);
    ASSERT_EQ(mxc_op_doc(op, &doc), MXC_OK);
    EXPECT_LT(prev, std::string(name));
    EXPECT_NE(std::string(name).rfind("_backward_", 0), 0u) << name;
    prev = name;
    names.insert(name);
    mxc_op again;
    ASSERT_EQ(mxc_op_find(name, &again), MXC_OK);
    EXPECT_EQ(again, op);
  }
  for (const char *must : {"relu", "sigmoid", "exp", "erfinv", "gammaln"})
    EXPECT_TRUE(names.count(must)) << must;
  mxc_op op = nullptr;
  EXPECT_EQ(mxc_op_at(n, &op), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_op_find("no_such_op", &op), MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("no_such_op"), std::string::npos);
  EXPECT_EQ(op, nullptr);
  EXPECT_EQ(mxc_op_find(nullptr, &op), MXC_ERR_INVALID_ARGUMENT);
}

TEST(Registry, BogusHandlesAreRejected) {
  const char *name;
  int x = 5;
  EXPECT_EQ(mxc_op_name((mxc_op)&x, &name), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_op_name(nullptr, &name), MXC_ERR_INVALID_ARGUMENT);
}

TEST(Registry, InputsOfAUnaryOp) {
  mxc_op op;
  ASSERT_EQ(mxc_op_find("relu", &op), MXC_OK);
  int n = -1, variadic = -1;
  ASSERT_EQ(mxc_op_inputs(op, &n, &variadic), MXC_OK);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(variadic, 0);
  const char *in;
  ASSERT_EQ(mxc_op_input_name(op, 0, &in), MXC_OK);
  EXPECT_STREQ(in, "data");
  EXPECT_EQ(mxc_op_input_name(op, 1, &in), MXC_ERR_INVALID_ARGUMENT);
  int nout = 0;
  ASSERT_EQ(mxc_op_num_outputs(op, nullptr, nullptr, 0, &nout), MXC_OK);
  EXPECT_EQ(nout, 1);
  const char *k[1] = {"bogus"}, *v[1] = {"1"};
  EXPECT_EQ(mxc_op_num_outputs(op, k, v, 1, &nout), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("unknown parameter 'bogus'"), std::string::npos)
      << err();
  EXPECT_NE(err().find("relu"), std::string::npos) << err();
}
