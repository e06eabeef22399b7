// Walking the public operator registry: every operator, its parameters
// and plausible values for the required ones, so hostile-input tests can
// reach every entry point through the C API alone (no per-operator lists
// to keep up to date: an operator added later is walked too).
#ifndef MXC_TESTS_HOSTILE_OP_WALK_H_
#define MXC_TESTS_HOSTILE_OP_WALK_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"

namespace hostile {

struct Param {
  std::string name, type;
  bool required = false;
};

struct OpInfo {
  mxc_op op = nullptr;
  std::string name;
  std::vector<Param> params;
  bool variadic = false;
};

using Params = std::vector<std::pair<std::string, std::string>>;

// Every public operator, sorted by name (as mxc_op_at lists them).
std::vector<OpInfo> AllOps();

// Values for the required parameters (a plausible one per type; variadic
// operators get num_args = 2) so that an operator can be called at all.
Params BaseParams(const OpInfo &op);

// params with key set to value (replaced or appended).
Params With(Params params, const std::string &key, const std::string &value);

// Shapes of the shape invariant (independent of core/base/shape.c):
// extents >= 0 and the product of the non-zero extents times elem_size
// fits in int64.
bool ShapeFits(const std::vector<int64_t> &dims, int64_t elem_size);

std::string ShapeStr(const std::vector<int64_t> &dims);
std::string ParamsStr(const Params &params);

// Symbolic inference of op over fresh variables: the first `n_given`
// arguments (list_arguments order) get `shape`, the others are inferred.
// Returns the C API code; on MXC_OK *args and *outs hold the shapes
// (ndim -1 entries become an empty vector and *complete = false).
struct Inferred {
  std::vector<std::vector<int64_t>> args, outs;
  bool complete = true;
};
int InferOp(const OpInfo &op, const Params &params,
            const std::vector<int64_t> &shape, int n_given, Inferred *out);

// Number of inputs op takes with these parameters, or -1.
int NumInputs(const OpInfo &op, const Params &params);
int NumOutputs(const OpInfo &op, const Params &params);

}  // namespace hostile

#endif  // MXC_TESTS_HOSTILE_OP_WALK_H_
