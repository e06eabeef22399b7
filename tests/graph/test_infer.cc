// Shape, dtype and storage-type inference: through the public API on an
// MLP and a small conv net (expected shapes computed here by hand from the
// layer formulas), partial inference, "__shape__"/"__dtype__" attributes,
// conflicts (messages name node, operator, input and both values), the
// graph-level passes on forward+backward graphs from the gradient pass,
// argument errors, and allocation failures.
#include <map>

#include "graph_test_util.h"

#include "graph_shim.h"

namespace {

using gt::err;
using gt::Sym;
using Shape = std::vector<int64_t>;
const Shape kUnknown = {-1};

struct Given {
  std::vector<const char *> names;
  std::vector<int> ndims;
  std::vector<int64_t> dims;
  void add(const char *name, const Shape &s) {
    names.push_back(name);
    ndims.push_back((int)s.size());
    dims.insert(dims.end(), s.begin(), s.end());
  }
};

// Name -> shape for each group of an inference result.
struct Shapes {
  std::map<std::string, Shape> args, outs, aux;
};

Shape shape_at(mxc_infer inf, int group, int i) {
  int ndim = -2;
  int64_t d[MXC_MAX_NDIM];
  EXPECT_EQ(mxc_infer_shape(inf, group, i, &ndim, d), MXC_OK) << err();
  if (ndim < 0) return kUnknown;
  return Shape(d, d + ndim);
}

int infer_shapes(mxc_symbol s, const Given &g, int partial, Shapes *out) {
  mxc_infer inf = nullptr;
  int rc = mxc_symbol_infer_shape(s, (int)g.names.size(), g.names.data(),
                                  g.ndims.data(), g.dims.data(), partial,
                                  &inf);
  if (rc != MXC_OK) {
    EXPECT_EQ(inf, nullptr);  // untouched
    return rc;
  }
  auto a = gt::arguments(s), o = gt::outputs(s), x = gt::auxiliary(s);
  int n = -1;
  EXPECT_EQ(mxc_infer_count(inf, MXC_INFER_ARGS, &n), MXC_OK);
  EXPECT_EQ(n, (int)a.size());
  for (int i = 0; i < n; ++i) out->args[a[i]] = shape_at(inf, MXC_INFER_ARGS, i);
  EXPECT_EQ(mxc_infer_count(inf, MXC_INFER_OUTPUTS, &n), MXC_OK);
  EXPECT_EQ(n, (int)o.size());
  for (int i = 0; i < n; ++i) {
    out->outs[o[i]] = shape_at(inf, MXC_INFER_OUTPUTS, i);
  }
  EXPECT_EQ(mxc_infer_count(inf, MXC_INFER_AUX, &n), MXC_OK);
  EXPECT_EQ(n, (int)x.size());
  for (int i = 0; i < n; ++i) out->aux[x[i]] = shape_at(inf, MXC_INFER_AUX, i);
  mxc_infer_free(inf);
  return MXC_OK;
}

TEST(InferShape, MlpFromDataShape) {
  Sym net = gt::mlp();
  Given g;
  g.add("data", {4, 784});
  Shapes s;
  ASSERT_EQ(infer_shapes(net.get(), g, 0, &s), MXC_OK) << err();
  EXPECT_EQ(s.args["data"], Shape({4, 784}));
  EXPECT_EQ(s.args["fc1_weight"], Shape({10, 784}));
  EXPECT_EQ(s.args["fc1_bias"], Shape({10}));
  EXPECT_EQ(s.args["fc2_weight"], Shape({3, 10}));
  EXPECT_EQ(s.args["fc2_bias"], Shape({3}));
  EXPECT_EQ(s.args["softmax_label"], Shape({4}));
  EXPECT_EQ(s.outs["softmax_output"], Shape({4, 3}));
  EXPECT_TRUE(s.aux.empty());
}

TEST(InferShape, ConvNetWithAuxStates) {
  Sym net = gt::convnet();
  Given g;
  g.add("data", {2, 1, 28, 28});
  Shapes s;
  ASSERT_EQ(infer_shapes(net.get(), g, 0, &s), MXC_OK) << err();
  // conv 5x5 valid: 28 - 5 + 1 = 24; pool 2x2/2: 12; flatten: 4*12*12.
  EXPECT_EQ(s.args["conv1_weight"], Shape({4, 1, 5, 5}));
  EXPECT_EQ(s.args["conv1_bias"], Shape({4}));
  EXPECT_EQ(s.args["bn1_gamma"], Shape({4}));
  EXPECT_EQ(s.args["bn1_beta"], Shape({4}));
  EXPECT_EQ(s.aux["bn1_moving_mean"], Shape({4}));
  EXPECT_EQ(s.aux["bn1_moving_var"], Shape({4}));
  EXPECT_EQ(s.args["fc1_weight"], Shape({10, 4 * 12 * 12}));
  EXPECT_EQ(s.outs["softmax_output"], Shape({2, 10}));
}

TEST(InferShape, MatchesImperativeExecution) {
  // The conv layer's inferred output against what mxc_op_invoke produces
  // for arrays of the inferred input shapes.
  Sym data = gt::var("data");
  Sym conv = gt::create("Convolution",
                        {{"kernel", "(3, 2)"}, {"num_filter", "5"},
                         {"stride", "(2, 1)"}, {"pad", "(1, 0)"}},
                        "c", {data.get()});
  Given g;
  g.add("data", {3, 2, 9, 7});
  Shapes s;
  ASSERT_EQ(infer_shapes(conv.get(), g, 0, &s), MXC_OK) << err();
  std::vector<mxc_ndarray> in;
  for (const char *n : {"data", "c_weight", "c_bias"}) {
    mxc_ndarray a = nullptr;
    const Shape &sh = s.args[n];
    ASSERT_EQ(mxc_ndarray_create(sh.data(), (int)sh.size(), MXC_DTYPE_FLOAT32,
                                 MXC_DEVICE_CPU, 0, 0, &a),
              MXC_OK)
        << err();
    in.push_back(a);
  }
  const char *k[] = {"kernel", "num_filter", "stride", "pad"};
  const char *v[] = {"(3, 2)", "5", "(2, 1)", "(1, 0)"};
  mxc_ndarray out = nullptr;
  ASSERT_EQ(mxc_op_invoke(gt::op("Convolution"), k, v, 4, in.data(), 3, &out,
                          1, nullptr),
            MXC_OK)
      << err();
  int ndim = 0;
  const int64_t *dims = nullptr;
  ASSERT_EQ(mxc_ndarray_shape(out, &ndim, &dims), MXC_OK) << err();
  EXPECT_EQ(Shape(dims, dims + ndim), s.outs["c_output"]);
  mxc_ndarray_free(out);
  for (mxc_ndarray a : in) mxc_ndarray_free(a);
}

TEST(InferShape, PositionalArguments) {
  Sym net = gt::mlp();
  mxc_infer inf = nullptr;
  int ndims[] = {2, 2};
  int64_t dims[] = {5, 20, 10, 20};  // data, fc1_weight
  ASSERT_EQ(mxc_symbol_infer_shape(net.get(), 2, nullptr, ndims, dims, 0, &inf),
            MXC_OK)
      << err();
  EXPECT_EQ(shape_at(inf, MXC_INFER_ARGS, 2), Shape({10}));  // fc1_bias
  EXPECT_EQ(shape_at(inf, MXC_INFER_OUTPUTS, 0), Shape({5, 3}));
  mxc_infer_free(inf);
}

TEST(InferShape, PartialAndIncomplete) {
  Sym net = gt::mlp();
  Shapes s;
  ASSERT_EQ(infer_shapes(net.get(), Given(), 1, &s), MXC_OK) << err();
  EXPECT_EQ(s.args["data"], kUnknown);
  EXPECT_EQ(s.args["fc1_weight"], kUnknown);
  EXPECT_EQ(s.outs["softmax_output"], kUnknown);
  EXPECT_EQ(infer_shapes(net.get(), Given(), 0, &s), MXC_ERR_SHAPE);
  EXPECT_NE(err().find("'data'"), std::string::npos) << err();

  // Knowing only fc2's weight fixes fc2's bias but not the batch size.
  Given g;
  g.add("fc2_weight", {3, 10});
  Shapes p;
  ASSERT_EQ(infer_shapes(net.get(), g, 1, &p), MXC_OK) << err();
  EXPECT_EQ(p.args["fc2_bias"], kUnknown);  // FC infers only from data
  EXPECT_EQ(p.args["data"], kUnknown);
}

TEST(InferShape, BackwardFromOutputs) {
  // relu(x) + y with the output known: both inputs get its shape, which
  // only the backward sweep can deliver.
  Sym x = gt::var("x"), y = gt::var("y");
  Sym r = gt::create("relu", {}, "r", {x.get()});
  Sym sum = gt::create("elemwise_add", {}, "sum", {r.get(), y.get()});
  int64_t dims[] = {6, 7};
  char report[1024];
  ASSERT_EQ(mxct_infer_from_output(sum.get(), 2, dims, report, sizeof report),
            MXC_OK)
      << err();
  EXPECT_STREQ(report, "");
}

TEST(InferShape, ShapeAttribute) {
  Sym data = gt::var("data", {{"__shape__", "(8, 784)"}});
  Sym fc = gt::create("FullyConnected", {{"num_hidden", "16"}}, "fc",
                      {data.get()});
  Shapes s;
  ASSERT_EQ(infer_shapes(fc.get(), Given(), 0, &s), MXC_OK) << err();
  EXPECT_EQ(s.args["fc_weight"], Shape({16, 784}));
  EXPECT_EQ(s.outs["fc_output"], Shape({8, 16}));

  // A given shape wins over the attribute.
  Given g;
  g.add("data", {2, 784});
  ASSERT_EQ(infer_shapes(fc.get(), g, 0, &s), MXC_OK) << err();
  EXPECT_EQ(s.outs["fc_output"], Shape({2, 16}));

  // 0 marks an unknown extent: the attribute is then ignored.
  Sym d0 = gt::var("d0", {{"__shape__", "(0, 784)"}});
  Sym fc0 = gt::create("FullyConnected", {{"num_hidden", "16"}}, "fc0",
                       {d0.get()});
  Shapes p;
  ASSERT_EQ(infer_shapes(fc0.get(), Given(), 1, &p), MXC_OK) << err();
  EXPECT_EQ(p.args["d0"], kUnknown);
}

TEST(InferShape, ParseShapeAttr) {
  int nd = -1;
  int64_t d[MXC_MAX_NDIM];
  ASSERT_EQ(mxct_parse_shape_attr("(128,784)", &nd, d), 1);
  EXPECT_EQ(Shape(d, d + nd), Shape({128, 784}));
  ASSERT_EQ(mxct_parse_shape_attr("[3]", &nd, d), 1);
  EXPECT_EQ(Shape(d, d + nd), Shape({3}));
  ASSERT_EQ(mxct_parse_shape_attr("()", &nd, d), 1);
  EXPECT_EQ(nd, 0);
  EXPECT_EQ(mxct_parse_shape_attr("(2, 0)", &nd, d), 0);
  EXPECT_EQ(mxct_parse_shape_attr("(2, -1)", &nd, d), 0);
  EXPECT_EQ(mxct_parse_shape_attr("(1,1,1,1,1,1,1,1,1)", &nd, d), 0);
  EXPECT_EQ(mxct_parse_shape_attr("abc", &nd, d), 0);
  EXPECT_EQ(mxct_parse_shape_attr(nullptr, &nd, d), 0);
}

TEST(InferShape, ConflictNamesNodeInputAndShapes) {
  Sym net = gt::mlp();
  Given g;
  g.add("data", {4, 784});
  g.add("fc1_weight", {10, 5});
  Shapes s;
  ASSERT_EQ(infer_shapes(net.get(), g, 1, &s), MXC_ERR_SHAPE);
  std::string m = err();
  EXPECT_NE(m.find("node 'fc1'"), std::string::npos) << m;
  EXPECT_NE(m.find("FullyConnected"), std::string::npos) << m;
  EXPECT_NE(m.find("'weight'"), std::string::npos) << m;
  EXPECT_NE(m.find("(10,5)"), std::string::npos) << m;
  EXPECT_NE(m.find("(10,784)"), std::string::npos) << m;

  // Element-wise operands that disagree.
  Sym a = gt::var("a"), b = gt::var("b");
  Sym add = gt::create("elemwise_add", {}, "add1", {a.get(), b.get()});
  Given h;
  h.add("a", {2, 3});
  h.add("b", {2, 4});
  ASSERT_EQ(infer_shapes(add.get(), h, 1, &s), MXC_ERR_SHAPE);
  m = err();
  EXPECT_NE(m.find("add1"), std::string::npos) << m;
  const char *canonical = nullptr;  // elemwise_add is an alias
  ASSERT_EQ(mxc_op_name(gt::op("elemwise_add"), &canonical), MXC_OK);
  EXPECT_NE(m.find(std::string("(") + canonical + ")"), std::string::npos)
      << m;
  EXPECT_NE(m.find("(2,3)"), std::string::npos) << m;
  EXPECT_NE(m.find("(2,4)"), std::string::npos) << m;
}

TEST(InferShape, BadArguments) {
  Sym net = gt::mlp();
  mxc_infer inf = nullptr;
  const char *names[] = {"nope"};
  int nd[] = {1};
  int64_t dims[] = {3};
  EXPECT_EQ(mxc_symbol_infer_shape(net.get(), 1, names, nd, dims, 1, &inf),
            MXC_ERR_NOT_FOUND);
  EXPECT_NE(err().find("nope"), std::string::npos);
  EXPECT_EQ(mxc_symbol_infer_shape(net.get(), 1, names, nd, dims, 1, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_infer_shape(nullptr, 0, nullptr, nullptr, nullptr, 1,
                                   &inf),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_infer_shape(net.get(), -1, nullptr, nullptr, nullptr, 1,
                                   &inf),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_symbol_infer_shape(net.get(), 1, names, nullptr, dims, 1,
                                   &inf),
            MXC_ERR_INVALID_ARGUMENT);
  int bad_nd[] = {MXC_MAX_NDIM + 1};
  EXPECT_EQ(mxc_symbol_infer_shape(net.get(), 1, names, bad_nd, dims, 1, &inf),
            MXC_ERR_INVALID_ARGUMENT);
  int64_t neg[] = {-3};
  EXPECT_EQ(mxc_symbol_infer_shape(net.get(), 1, names, nd, neg, 1, &inf),
            MXC_ERR_INVALID_ARGUMENT);
  const char *null_name[] = {nullptr};
  EXPECT_EQ(mxc_symbol_infer_shape(net.get(), 1, null_name, nd, dims, 1, &inf),
            MXC_ERR_INVALID_ARGUMENT);
  // More positional shapes than arguments.
  int nd7[7] = {1, 1, 1, 1, 1, 1, 1};
  int64_t d7[7] = {1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(mxc_symbol_infer_shape(net.get(), 7, nullptr, nd7, d7, 1, &inf),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(inf, nullptr);

  // A freed symbol handle, and a handle of another kind.
  mxc_symbol freed = nullptr;
  ASSERT_EQ(mxc_symbol_variable("v", &freed), MXC_OK);
  mxc_symbol_free(freed);
  EXPECT_EQ(mxc_symbol_infer_shape(freed, 0, nullptr, nullptr, nullptr, 1,
                                   &inf),
            MXC_ERR_INVALID_HANDLE);
  mxc_ndarray arr = nullptr;
  int64_t one = 1;
  ASSERT_EQ(mxc_ndarray_create(&one, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0,
                               0, &arr),
            MXC_OK);
  EXPECT_EQ(mxc_symbol_infer_shape((mxc_symbol)arr, 0, nullptr, nullptr,
                                   nullptr, 1, &inf),
            MXC_ERR_INVALID_HANDLE);
  mxc_ndarray_free(arr);
}

TEST(InferResult, Accessors) {
  Sym net = gt::mlp();
  mxc_infer inf = nullptr;
  const char *names[] = {"data"};
  int nd[] = {2};
  int64_t dims[] = {4, 784};
  ASSERT_EQ(mxc_symbol_infer_shape(net.get(), 1, names, nd, dims, 0, &inf),
            MXC_OK);
  int n = 0, ndim = 0, dt = 0;
  int64_t d[MXC_MAX_NDIM];
  EXPECT_EQ(mxc_infer_count(inf, 3, &n), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_infer_count(inf, -1, &n), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_infer_count(inf, MXC_INFER_ARGS, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, 6, &ndim, d),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, -1, &ndim, d),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, 0, nullptr, d),
            MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, 0, &ndim, nullptr),
            MXC_ERR_INVALID_ARGUMENT);
  // A shape result has no dtypes or storage types.
  ASSERT_EQ(mxc_infer_dtype(inf, MXC_INFER_ARGS, 0, &dt), MXC_OK);
  EXPECT_EQ(dt, -1);
  ASSERT_EQ(mxc_infer_stype(inf, MXC_INFER_ARGS, 0, &dt), MXC_OK);
  EXPECT_EQ(dt, -1);
  mxc_infer_free(inf);
  EXPECT_EQ(mxc_infer_count(inf, MXC_INFER_ARGS, &n), MXC_ERR_INVALID_HANDLE);
  mxc_infer_free(nullptr);
  mxc_infer_free(inf);  // a freed handle is reported, not freed twice
}

// ---- dtypes ----

int infer_types(mxc_symbol s, const std::vector<const char *> &names,
                const std::vector<int> &types, int partial,
                std::map<std::string, int> *args, int *out0) {
  mxc_infer inf = nullptr;
  int rc = mxc_symbol_infer_type(s, (int)names.size(),
                                 names.empty() ? nullptr : names.data(),
                                 types.data(), partial, &inf);
  if (rc != MXC_OK) return rc;
  auto a = gt::arguments(s);
  for (size_t i = 0; i < a.size(); ++i) {
    int t = -2;
    EXPECT_EQ(mxc_infer_dtype(inf, MXC_INFER_ARGS, (int)i, &t), MXC_OK);
    (*args)[a[i]] = t;
  }
  EXPECT_EQ(mxc_infer_dtype(inf, MXC_INFER_OUTPUTS, 0, out0), MXC_OK);
  int ndim = 0;
  int64_t d[MXC_MAX_NDIM];
  EXPECT_EQ(mxc_infer_shape(inf, MXC_INFER_ARGS, 0, &ndim, d), MXC_OK);
  EXPECT_EQ(ndim, -1);  // a type result has no shapes
  mxc_infer_free(inf);
  return MXC_OK;
}

TEST(InferType, PropagatesAndConflicts) {
  Sym net = gt::mlp();
  std::map<std::string, int> a;
  int out = -2;
  ASSERT_EQ(infer_types(net.get(), {"data"}, {MXC_DTYPE_FLOAT64}, 0, &a, &out),
            MXC_OK)
      << err();
  EXPECT_EQ(a["fc1_weight"], MXC_DTYPE_FLOAT64);
  EXPECT_EQ(a["fc2_bias"], MXC_DTYPE_FLOAT64);
  EXPECT_EQ(out, MXC_DTYPE_FLOAT64);

  ASSERT_EQ(infer_types(net.get(), {}, {}, 1, &a, &out), MXC_OK) << err();
  EXPECT_EQ(a["data"], -1);
  EXPECT_EQ(infer_types(net.get(), {}, {}, 0, &a, &out), MXC_ERR_DTYPE);
  EXPECT_NE(err().find("'data'"), std::string::npos) << err();

  ASSERT_EQ(infer_types(net.get(), {"data", "fc1_weight"},
                        {MXC_DTYPE_FLOAT32, MXC_DTYPE_FLOAT64}, 1, &a, &out),
            MXC_ERR_DTYPE);
  std::string m = err();
  EXPECT_NE(m.find("fc1"), std::string::npos) << m;
  EXPECT_NE(m.find("FullyConnected"), std::string::npos) << m;
  EXPECT_NE(m.find("float32"), std::string::npos) << m;
  EXPECT_NE(m.find("float64"), std::string::npos) << m;

  EXPECT_EQ(infer_types(net.get(), {"data"}, {99}, 1, &a, &out),
            MXC_ERR_DTYPE);
}

TEST(InferType, DtypeAttributeAndDefaultRule) {
  // elemwise_mul has no infer_type: inputs and outputs share one dtype.
  Sym x = gt::var("x", {{"__dtype__", "1"}}), y = gt::var("y");
  Sym m = gt::create("elemwise_mul", {}, "m", {x.get(), y.get()});
  std::map<std::string, int> a;
  int out = -2;
  ASSERT_EQ(infer_types(m.get(), {}, {}, 0, &a, &out), MXC_OK) << err();
  EXPECT_EQ(a["y"], MXC_DTYPE_FLOAT64);
  EXPECT_EQ(out, MXC_DTYPE_FLOAT64);
  Sym z = gt::var("z", {{"__dtype__", "float16"}});
  Sym n = gt::create("elemwise_mul", {}, "n", {z.get(), y.get()});
  ASSERT_EQ(infer_types(n.get(), {}, {}, 0, &a, &out), MXC_OK) << err();
  EXPECT_EQ(out, MXC_DTYPE_FLOAT16);
}

// ---- storage types ----

TEST(InferStorageType, DenseAndSparseRejected) {
  Sym net = gt::mlp();
  mxc_infer inf = nullptr;
  ASSERT_EQ(mxc_symbol_infer_storage_type(net.get(), 0, nullptr, nullptr, &inf),
            MXC_OK)
      << err();
  int n = 0, st = -2;
  ASSERT_EQ(mxc_infer_count(inf, MXC_INFER_ARGS, &n), MXC_OK);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(mxc_infer_stype(inf, MXC_INFER_ARGS, i, &st), MXC_OK);
    EXPECT_EQ(st, MXC_STYPE_DEFAULT);
  }
  ASSERT_EQ(mxc_infer_stype(inf, MXC_INFER_OUTPUTS, 0, &st), MXC_OK);
  EXPECT_EQ(st, MXC_STYPE_DEFAULT);
  ASSERT_EQ(mxc_infer_dtype(inf, MXC_INFER_OUTPUTS, 0, &st), MXC_OK);
  EXPECT_EQ(st, -1);
  mxc_infer_free(inf);

  const char *names[] = {"data"};
  int csr[] = {MXC_STYPE_CSR};
  // Dense-only operators fall back to dense temporaries: outputs dense.
  ASSERT_EQ(mxc_symbol_infer_storage_type(net.get(), 1, names, csr, &inf),
            MXC_OK)
      << err();
  ASSERT_EQ(mxc_infer_stype(inf, MXC_INFER_OUTPUTS, 0, &st), MXC_OK);
  EXPECT_EQ(st, MXC_STYPE_DEFAULT);
  mxc_infer_free(inf);
  int bad[] = {7};
  EXPECT_EQ(mxc_symbol_infer_storage_type(net.get(), 1, names, bad, &inf),
            MXC_ERR_STYPE);
  EXPECT_EQ(mxc_symbol_infer_storage_type(net.get(), 1, names, nullptr, &inf),
            MXC_ERR_INVALID_ARGUMENT);
}

// ---- forward + backward graphs ----

// Outputs plus gradients of every argument, inferred from the data shape
// alone: every entry must be known and each gradient shaped like its
// argument (the executor binds such graphs).
void check_full_graph(mxc_symbol net, const char *data, const Shape &dshape) {
  char report[4096];
  ASSERT_EQ(mxct_check_full_graph(net, data, (int)dshape.size(), dshape.data(),
                                  report, sizeof report),
            MXC_OK)
      << err();
  EXPECT_STREQ(report, "");
}

TEST(InferGraph, ForwardBackwardMlp) {
  Sym net = gt::mlp();
  check_full_graph(net.get(), "data", {4, 20});
}

TEST(InferGraph, ForwardBackwardConvNet) {
  Sym net = gt::convnet();
  check_full_graph(net.get(), "data", {2, 1, 12, 12});
}

TEST(InferGraph, ForwardBackwardElementwise) {
  Sym x = gt::var("x"), y = gt::var("y");
  Sym a = gt::create("elemwise_mul", {}, "a", {x.get(), y.get()});
  Sym b = gt::create("tanh", {}, "b", {a.get()});
  Sym c = gt::create("broadcast_add", {}, "c", {b.get(), y.get()});
  Sym d = gt::create("sum", {{"axis", "1"}}, "d", {c.get()});
  check_full_graph(d.get(), "x", {3, 5});
}

// Every hidden backward operator of a public one can infer shapes (the
// executor infers forward+backward graphs).
TEST(InferGraph, BackwardOperatorsHaveShapeInference) {
  char report[4096];
  int checked = 0;
  mxct_backward_ops_without_infer(report, sizeof report, &checked);
  EXPECT_GT(checked, 20);
  EXPECT_STREQ(report, "") << "operators without infer_shape";
}

// ---- allocation failures ----

TEST(InferFaults, AllocationFailureWalk) {
  Sym net = gt::convnet();
  gt::alloc_failure_walk([&]() {
    const char *names[] = {"data"};
    int nd[] = {4};
    int64_t dims[] = {2, 1, 12, 12};
    mxc_infer a = nullptr, b = nullptr, c = nullptr;
    int rc = mxc_symbol_infer_shape(net.get(), 1, names, nd, dims, 0, &a);
    int t[] = {MXC_DTYPE_FLOAT32};
    if (rc == MXC_OK) rc = mxc_symbol_infer_type(net.get(), 1, names, t, 0, &b);
    if (rc == MXC_OK) {
      rc = mxc_symbol_infer_storage_type(net.get(), 0, nullptr, nullptr, &c);
    }
    mxc_infer_free(a);
    mxc_infer_free(b);
    mxc_infer_free(c);
    return rc;
  });
}

}  // namespace
