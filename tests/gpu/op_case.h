// What the GPU kernels' case lists (blas_cases.h, la_cases.h) and their
// host tests share: a case's printable name, its parameters parsed as
// libmxc parses them for the plug-in, and a host buffer described as a
// plug-in array. A case is any struct with `op` (the operator's name),
// `params` (key/value strings) and `in` (input shapes).
#ifndef MXC_TESTS_GPU_OP_CASE_H_
#define MXC_TESTS_GPU_OP_CASE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "core/base/gpu_plugin.h"
#include "core/op/op.h"
}
#include "mxc/mxc.h"

namespace mxct {

// "op k=v ... (d0,d1,)..." for test names and failure messages.
template <class Case>
std::string CaseName(const Case &c) {
  std::string s = c.op;
  for (const auto &p : c.params) s += " " + p.first + "=" + p.second;
  for (const auto &x : c.in) {
    s += " (";
    for (int64_t d : x) s += std::to_string(d) + ",";
    s += ")";
  }
  return s;
}

// The case's parameter struct (the caller's: mxc__free), or NULL after a
// failed expectation.
template <class Case>
void *ParseCase(const Case &c) {
  std::vector<const char *> keys, vals;
  for (const auto &p : c.params) {
    keys.push_back(p.first.c_str());
    vals.push_back(p.second.c_str());
  }
  const mxc__op *op = mxc__op_find(c.op.c_str());
  void *param = nullptr;
  EXPECT_NE(op, nullptr) << c.op;
  EXPECT_EQ(mxc__op_parse_params(op, keys.data(), vals.data(), (int)keys.size(),
                                 &param),
            MXC_OK)
      << mxc_last_error();
  return param;
}

// An array of shape s and dtype over the bytes of *v (the host stand-ins
// of the libraries read and write them).
inline mxc__gpu_array HostArray(const std::vector<int64_t> &s,
                                std::vector<uint8_t> *v, int dtype) {
  mxc__gpu_array a = {};
  a.ptr = v->data();
  a.size = 1;
  a.ndim = (int)s.size();
  for (size_t i = 0; i < s.size(); ++i) a.dims[i] = s[i], a.size *= s[i];
  a.dtype = dtype;
  return a;
}

}  // namespace mxct

#endif  // MXC_TESTS_GPU_OP_CASE_H_
