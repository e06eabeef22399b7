#include "op_walk.h"

#include <sstream>

namespace hostile {

std::vector<OpInfo> AllOps() {
  std::vector<OpInfo> ops;
  int n = 0;
  if (mxc_op_count(&n) != MXC_OK) return ops;
  for (int i = 0; i < n; ++i) {
    OpInfo info;
    const char *name = nullptr;
    int np = 0, ni = 0, variadic = 0;
    if (mxc_op_at(i, &info.op) != MXC_OK ||
        mxc_op_name(info.op, &name) != MXC_OK ||
        mxc_op_num_params(info.op, &np) != MXC_OK ||
        mxc_op_inputs(info.op, &ni, &variadic) != MXC_OK) {
      continue;
    }
    info.name = name;
    info.variadic = variadic != 0;
    for (int j = 0; j < np; ++j) {
      const char *pn = nullptr, *pt = nullptr, *pd = nullptr;
      if (mxc_op_param(info.op, j, &pn, &pt, &pd, nullptr) != MXC_OK) continue;
      info.params.push_back(Param{pn, pt, pd == nullptr});
    }
    ops.push_back(info);
  }
  return ops;
}

// A plausible value for a required parameter of this type.
static std::string PlausibleValue(const Param &p) {
  if (p.name == "num_args") return "2";
  if (p.type == "int" || p.type == "int or None") return "2";
  if (p.type == "float" || p.type == "float or None") return "1";
  if (p.type == "boolean") return "false";
  if (p.type == "dtype") return "float32";
  if (p.type == "Shape(tuple)") return "(1,1)";
  if (!p.type.empty() && p.type[0] == '{') {  // {'a', 'b'}: the first one
    size_t q = p.type.find('\'');
    size_t e = p.type.find('\'', q + 1);
    return p.type.substr(q + 1, e - q - 1);
  }
  return "1";
}

Params BaseParams(const OpInfo &op) {
  Params params;
  for (const Param &p : op.params) {
    if (p.required) params.emplace_back(p.name, PlausibleValue(p));
  }
  return params;
}

Params With(Params params, const std::string &key, const std::string &value) {
  for (auto &kv : params) {
    if (kv.first == key) {
      kv.second = value;
      return params;
    }
  }
  params.emplace_back(key, value);
  return params;
}

bool ShapeFits(const std::vector<int64_t> &dims, int64_t elem_size) {
  int64_t p = elem_size;
  for (int64_t d : dims) {
    if (d < 0) return false;
    if (d != 0 && __builtin_mul_overflow(p, d, &p)) return false;
  }
  return true;
}

std::string ShapeStr(const std::vector<int64_t> &dims) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? "," : "") << dims[i];
  os << ")";
  return os.str();
}

std::string ParamsStr(const Params &params) {
  std::string s;
  for (const auto &kv : params) s += kv.first + "=" + kv.second + " ";
  return s;
}

struct Keys {
  std::vector<const char *> k, v;
  explicit Keys(const Params &params) {
    for (const auto &kv : params) {
      k.push_back(kv.first.c_str());
      v.push_back(kv.second.c_str());
    }
  }
  int n() const { return static_cast<int>(k.size()); }
};

int NumInputs(const OpInfo &op, const Params &params) {
  Keys keys(params);
  int n = -1;
  if (mxc_op_num_inputs(op.op, keys.k.data(), keys.v.data(), keys.n(), &n) !=
      MXC_OK) {
    return -1;
  }
  return n;
}

int NumOutputs(const OpInfo &op, const Params &params) {
  Keys keys(params);
  int n = -1;
  if (mxc_op_num_outputs(op.op, keys.k.data(), keys.v.data(), keys.n(),
                         &n) != MXC_OK) {
    return -1;
  }
  return n;
}

static void ReadGroup(mxc_infer inf, int group,
                      std::vector<std::vector<int64_t>> *out,
                      bool *complete) {
  int n = 0;
  mxc_infer_count(inf, group, &n);
  for (int i = 0; i < n; ++i) {
    int ndim = -1;
    int64_t dims[MXC_MAX_NDIM];
    mxc_infer_shape(inf, group, i, &ndim, dims);
    if (ndim < 0) *complete = false;
    out->emplace_back(dims, dims + (ndim < 0 ? 0 : ndim));
  }
}

// A symbol applying op to fresh variables a0, a1, ... (nullptr on error).
static int MakeSymbol(const OpInfo &op, const Params &params,
                      mxc_symbol *out) {
  int n_in = NumInputs(op, params);
  if (n_in < 0 || n_in > 64) return MXC_ERR_INVALID_ARGUMENT;
  std::vector<mxc_symbol> vars(static_cast<size_t>(n_in));
  for (int i = 0; i < n_in; ++i) {
    mxc_symbol_variable(("a" + std::to_string(i)).c_str(), &vars[i]);
  }
  Keys keys(params);
  int rc = mxc_symbol_create(op.op, keys.k.data(), keys.v.data(), keys.n(),
                             "node", nullptr, vars.data(), n_in, out);
  for (mxc_symbol v : vars) mxc_symbol_free(v);
  return rc;
}

int InferOp(const OpInfo &op, const Params &params,
            const std::vector<int64_t> &shape, int n_given, Inferred *out) {
  mxc_symbol sym = nullptr;
  int rc = MakeSymbol(op, params, &sym);
  if (rc != MXC_OK) return rc;
  mxc_str_list args = nullptr;
  int n_args = 0;
  mxc_symbol_list_arguments(sym, &args);
  mxc_str_list_size(args, &n_args);
  mxc_str_list_free(args);
  int n = n_given < n_args ? n_given : n_args;
  std::vector<int> ndims(static_cast<size_t>(n), static_cast<int>(shape.size()));
  std::vector<int64_t> dims;
  for (int i = 0; i < n; ++i) dims.insert(dims.end(), shape.begin(), shape.end());
  mxc_infer inf = nullptr;
  rc = mxc_symbol_infer_shape(sym, n, nullptr, ndims.data(), dims.data(), 1,
                              &inf);
  mxc_symbol_free(sym);
  if (rc != MXC_OK) return rc;
  *out = Inferred();
  ReadGroup(inf, MXC_INFER_ARGS, &out->args, &out->complete);
  ReadGroup(inf, MXC_INFER_AUX, &out->args, &out->complete);
  ReadGroup(inf, MXC_INFER_OUTPUTS, &out->outs, &out->complete);
  mxc_infer_free(inf);
  return MXC_OK;
}

}  // namespace hostile
