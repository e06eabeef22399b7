// Concat, stack and split against index arithmetic written here, on every
// dtype (bitwise), with gradients and bad input.
#include "tests/ops/shape/shape_test_util.h"

using namespace mxct;
using namespace shpt;

namespace {

Params num_args(size_t n, const char *axis_key, int axis) {
  return {{"num_args", std::to_string(n)}, {axis_key, std::to_string(axis)}};
}

// Random inputs of the given shapes and dtype, with their bytes.
struct Inputs {
  std::vector<Arr> arrs;
  std::vector<Bytes> bytes;
  std::vector<const Arr *> ptrs() const {
    std::vector<const Arr *> p;
    for (auto &a : arrs) p.push_back(&a);
    return p;
  }
};

Inputs random_inputs(const std::vector<Shape> &shapes, int dt) {
  Inputs in;
  for (size_t i = 0; i < shapes.size(); ++i) {
    in.bytes.push_back(random_bytes(numel(shapes[i]), dt, 5u + (unsigned)i));
    in.arrs.push_back(make_raw(shapes[i], dt, in.bytes.back()));
  }
  return in;
}

// Reference concat along axis (normalized): output index o comes from the
// input whose range along the axis holds o[axis].
void check_concat(const std::vector<Shape> &shapes, int axis) {
  int nd = (int)shapes[0].size(), ax = axis < 0 ? axis + nd : axis;
  Shape out = shapes[0];
  out[(size_t)ax] = 0;
  for (auto &s : shapes) out[(size_t)ax] += s[(size_t)ax];
  for (int dt : all_dtypes()) {
    SCOPED_TRACE("Concat dtype " + std::to_string(dt) + " axis " +
                 std::to_string(axis));
    Inputs in = random_inputs(shapes, dt);
    auto r = invoke("Concat", in.ptrs(), num_args(shapes.size(), "dim", axis));
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(r[0].shape(), out);
    Bytes ob = raw(r[0]);
    size_t es = esize(dt);
    for (int64_t f = 0; f < numel(out); ++f) {
      Index o = unravel(f, out);
      size_t j = 0;
      while (o[(size_t)ax] >= shapes[j][(size_t)ax])
        o[(size_t)ax] -= shapes[j++][(size_t)ax];
      int64_t src = ravel(o, shapes[j]);
      ASSERT_EQ(memcmp(&ob[(size_t)f * es], &in.bytes[j][(size_t)src * es], es),
                0)
          << "element " << f;
    }
  }
}

TEST(Concat, AxesAndDtypes) {
  check_concat({{2, 3}, {2, 1}, {2, 4}}, 1);
  check_concat({{2, 3}, {4, 3}}, 0);
  check_concat({{2, 3, 4}, {2, 3, 1}}, -1);
  check_concat({{2, 3, 4}, {2, 2, 4}, {2, 0, 4}, {2, 1, 4}}, -2);
  check_concat({{5}}, 0);
  check_concat({{1, 2}, {1, 2}, {1, 2}}, 0);
}

TEST(Concat, AliasGradientAndManyInputs) {
  Arr a = make({1, 2}, {1, 2}), b = make({1, 1}, {3});
  auto r = invoke("concat", {&a, &b}, {{"num_args", "2"}});
  EXPECT_EQ(read(r[0]), std::vector<double>({1, 2, 3}));
  check_grad("Concat", {{2, 3}, {2, 1}, {2, 2}},
             {uniform(6, -1, 1, 1), uniform(2, -1, 1, 2), uniform(4, -1, 1, 3)},
             num_args(3, "dim", 1));
  check_grad("Concat", {{1, 2}, {3, 2}}, {uniform(2, -1, 1), uniform(6, -1, 1)},
             num_args(2, "dim", -2));
  // More inputs than the masks of op.h have bits (32) and than the old
  // arrays held (64), with finite-difference gradients (1000 are checked
  // through autograd in tests/c_api/test_arity.cc).
  std::vector<Shape> shapes(100, Shape{1, 2});
  check_concat(shapes, 0);
  std::vector<std::vector<double>> vals;
  for (unsigned i = 0; i < 100; ++i) vals.push_back(uniform(2, -1, 1, i));
  check_grad("Concat", shapes, vals, num_args(100, "dim", 0));
}

// Unrolled sequence models concatenate hundreds of steps: no cap but
// memory (MXNet has none), here 1000 parts of different extents.
TEST(Concat, ThousandInputs) {
  std::vector<Shape> shapes;
  for (int i = 0; i < 1000; ++i) shapes.push_back(Shape{2, 1 + i % 3});
  check_concat(shapes, 1);
  check_concat(std::vector<Shape>(1000, Shape{1}), 0);
}

// Counts beyond MXC__OP_MAX_ARITY (1 << 20), negative or zero: a clear
// error naming the parameter and the range, before anything else.
TEST(Concat, AbsurdCountsAreRejected) {
  Arr a = make({1, 2}, {1, 2});
  for (const char *n : {"0", "-1", "1048576", "4294967297", "1e9"}) {
    int rc = 0;
    invoke("Concat", {&a}, {{"num_args", n}}, &rc);
    EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT) << n;
    EXPECT_NE(err().find("'num_args'"), std::string::npos) << err();
  }
  int rc = 0;
  invoke("Concat", {&a}, {{"num_args", "1048576"}}, &rc);
  EXPECT_NE(err().find("1..1048575"), std::string::npos) << err();
  invoke("Concat", {&a}, {{"num_args", "2000"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 1 inputs; expected 2000"), std::string::npos)
      << err();
  invoke("stack", {&a}, {{"num_args", "1048577"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("1..1048576"), std::string::npos) << err();
  invoke("split", {&a}, {{"num_outputs", "-3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'num_outputs'"), std::string::npos) << err();
}

TEST(Concat, BadInput) {
  Arr a = make({2, 3}, iota(6)), b = make({3, 3}, iota(9));
  int rc = 0;
  invoke("Concat", {&a, &b}, {{"num_args", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("got 2 inputs; expected 3"), std::string::npos) << err();
  invoke("Concat", {&a, &b}, {{"num_args", "2"}, {"dim", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("(3,3)"), std::string::npos) << err();
  EXPECT_NE(err().find("(2,3)"), std::string::npos) << err();
  EXPECT_NE(err().find("except along dim 1"), std::string::npos) << err();
  invoke("Concat", {&a, &b}, {{"num_args", "2"}, {"dim", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'dim'"), std::string::npos) << err();
  Arr c = make({2, 3, 1}, iota(6));
  invoke("Concat", {&a, &c}, {{"num_args", "2"}, {"dim", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  Arr d = make({2, 3}, iota(6), MXC_DTYPE_INT32);
  invoke("Concat", {&a, &d}, {{"num_args", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_DTYPE);
  invoke("Concat", {&a}, {{"num_args", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

// ---- stack ----

void check_stack(const Shape &part, size_t n, int axis) {
  int nd = (int)part.size() + 1, ax = axis < 0 ? axis + nd : axis;
  Shape out = part;
  out.insert(out.begin() + ax, (int64_t)n);
  for (int dt : all_dtypes()) {
    SCOPED_TRACE("stack dtype " + std::to_string(dt) + " axis " +
                 std::to_string(axis));
    Inputs in = random_inputs(std::vector<Shape>(n, part), dt);
    auto r = invoke("stack", in.ptrs(), num_args(n, "axis", axis));
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(r[0].shape(), out);
    Bytes ob = raw(r[0]);
    size_t es = esize(dt);
    for (int64_t f = 0; f < numel(out); ++f) {
      Index o = unravel(f, out);
      size_t j = (size_t)o[(size_t)ax];
      o.erase(o.begin() + ax);
      int64_t src = ravel(o, part);
      ASSERT_EQ(memcmp(&ob[(size_t)f * es], &in.bytes[j][(size_t)src * es], es),
                0);
    }
  }
}

TEST(Stack, ThousandInputs) {
  check_stack({2, 3}, 1000, 1);
  check_stack({}, 1000, 0);
}

TEST(Stack, AxesAndDtypes) {
  check_stack({2, 3}, 3, 0);
  check_stack({2, 3}, 2, 1);
  check_stack({2, 3}, 2, 2);
  check_stack({2, 3}, 4, -1);
  check_stack({2, 3}, 2, -3);
  check_stack({}, 3, 0);
  check_grad("stack", {{2, 3}, {2, 3}},
             {uniform(6, -1, 1, 1), uniform(6, -1, 1, 2)},
             num_args(2, "axis", 1));
}

TEST(Stack, BadInput) {
  Arr a = make({2, 3}, iota(6)), b = make({3, 2}, iota(6));
  int rc = 0;
  invoke("stack", {&a, &b}, {{"num_args", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("same shape"), std::string::npos) << err();
  invoke("stack", {&a, &a}, {{"num_args", "2"}, {"axis", "3"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  invoke("stack", {&a, &a}, {{"num_args", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("expected 1"), std::string::npos) << err();
}

// ---- split ----

void check_split(const Shape &in, int n, int axis, bool squeeze) {
  int nd = (int)in.size(), ax = axis < 0 ? axis + nd : axis;
  int64_t part = in[(size_t)ax] / n;
  Shape out = in;
  out[(size_t)ax] = part;
  if (squeeze) out.erase(out.begin() + ax);
  Params p = {{"num_outputs", std::to_string(n)},
              {"axis", std::to_string(axis)},
              {"squeeze_axis", squeeze ? "true" : "false"}};
  for (int dt : all_dtypes()) {
    SCOPED_TRACE("split dtype " + std::to_string(dt) + " axis " +
                 std::to_string(axis));
    Bytes ib = random_bytes(numel(in), dt, 3);
    Arr a = make_raw(in, dt, ib);
    auto r = invoke("split", {&a}, p);
    ASSERT_EQ(r.size(), (size_t)n);
    size_t es = esize(dt);
    for (int j = 0; j < n; ++j) {
      ASSERT_EQ(r[(size_t)j].shape(), out);
      Bytes ob = raw(r[(size_t)j]);
      for (int64_t f = 0; f < numel(out); ++f) {
        Index o = unravel(f, out);
        if (squeeze) o.insert(o.begin() + ax, 0);
        o[(size_t)ax] += j * part;
        int64_t src = ravel(o, in);
        ASSERT_EQ(memcmp(&ob[(size_t)f * es], &ib[(size_t)src * es], es), 0);
      }
    }
  }
}

TEST(Split, AxesSqueezeAndDtypes) {
  check_split({2, 6}, 3, 1, false);
  check_split({4, 3}, 2, 0, false);
  check_split({2, 3, 4}, 2, -1, false);
  check_split({2, 3, 4}, 3, 1, true);
  check_split({2, 3, 4}, 2, -3, true);
  check_split({5}, 1, 0, false);
  Arr a = make({2, 2}, {1, 2, 3, 4});
  auto r = invoke("SliceChannel", {&a}, {{"num_outputs", "2"}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(read(r[1]), std::vector<double>({2, 4}));
}

TEST(Split, ThousandOutputs) {
  check_split({2, 3000}, 1000, 1, false);
  check_split({1000, 2}, 1000, 0, true);
  Arr a = make({1000}, iota(1000));
  auto r = invoke("SliceChannel", {&a},
                  {{"num_outputs", "1000"}, {"axis", "0"}});
  ASSERT_EQ(r.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(read(r[(size_t)i]), std::vector<double>({(double)i})) << i;
  }
}

TEST(Split, Gradient) {
  check_grad("split", {{2, 6}}, {uniform(12, -1, 1)},
             {{"num_outputs", "3"}, {"axis", "1"}});
  check_grad("split", {{100, 2}}, {uniform(200, -1, 1)},
             {{"num_outputs", "100"}, {"axis", "0"}});
  check_grad("split", {{3, 2, 2}}, {uniform(12, -1, 1)},
             {{"num_outputs", "3"}, {"axis", "0"}, {"squeeze_axis", "1"}});
}

TEST(Split, BadInput) {
  Arr a = make({2, 5}, iota(10));
  int rc = 0;
  invoke("split", {&a}, {{"num_outputs", "2"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("extent 5"), std::string::npos) << err();
  EXPECT_NE(err().find("num_outputs=2"), std::string::npos) << err();
  EXPECT_NE(err().find("(2,5)"), std::string::npos) << err();
  invoke("split", {&a}, {{"num_outputs", "5"}, {"squeeze_axis", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_OK) << err();
  invoke("split", {&a},
         {{"num_outputs", "2"}, {"axis", "0"}, {"squeeze_axis", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_OK) << err();
  invoke("split", {&a},
         {{"num_outputs", "1"}, {"axis", "0"}, {"squeeze_axis", "1"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_SHAPE);
  EXPECT_NE(err().find("squeeze_axis"), std::string::npos) << err();
  invoke("split", {&a}, {{"num_outputs", "0"}}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(err().find("'num_outputs'"), std::string::npos) << err();
  invoke("split", {&a}, {}, &rc);
  EXPECT_EQ(rc, MXC_ERR_INVALID_ARGUMENT);
}

}  // namespace

namespace {

// Variadic inputs are described once and named arg0, arg1, ... as MXNet.
TEST(Concat, IntrospectionOfVariadicInputs) {
  for (const char *name : {"Concat", "stack"}) {
    mxc_op op;
    ASSERT_EQ(mxc_op_find(name, &op), MXC_OK);
    int n = 0, variadic = 0;
    ASSERT_EQ(mxc_op_inputs(op, &n, &variadic), MXC_OK);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(variadic, 1);
    const char *in = nullptr;
    ASSERT_EQ(mxc_op_input_name(op, 0, &in), MXC_OK);
    EXPECT_STREQ(in, "arg0");
    const char *k[] = {"num_args"}, *v[] = {"5"};
    ASSERT_EQ(mxc_op_num_inputs(op, k, v, 1, &n), MXC_OK);
    EXPECT_EQ(n, 5);
  }
  mxc_op op;
  ASSERT_EQ(mxc_op_find("split", &op), MXC_OK);
  const char *k[] = {"num_outputs"}, *v[] = {"4"};
  int n = 0;
  ASSERT_EQ(mxc_op_num_outputs(op, k, v, 1, &n), MXC_OK);
  EXPECT_EQ(n, 4);
}

}  // namespace
