// Helpers for autograd tests: owned array handles, host conversion,
// invoking operators by name through the public API, and a gradient check
// that compares mxc_autograd_backward against central finite differences
// of the same forward computation run without recording.
#ifndef MXC_TESTS_AUTOGRAD_AG_UTIL_H_
#define MXC_TESTS_AUTOGRAD_AG_UTIL_H_

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mxc/mxc.h"

namespace agt {

using Shape = std::vector<int64_t>;
using Params = std::vector<std::pair<std::string, std::string>>;

inline std::string err() { return mxc_last_error(); }

int64_t numel(const Shape &s);

// An owned array handle.
struct Arr {
  mxc_ndarray h = nullptr;
  Arr() = default;
  explicit Arr(mxc_ndarray x) : h(x) {}
  Arr(const Arr &) = delete;
  Arr &operator=(const Arr &) = delete;
  Arr(Arr &&o) noexcept : h(o.h) { o.h = nullptr; }
  Arr &operator=(Arr &&o) noexcept {
    std::swap(h, o.h);
    return *this;
  }
  ~Arr() { mxc_ndarray_free(h); }
  Shape shape() const;
  int dtype() const;
};

// A new array with values v (converted with plain casts).
Arr make(const Shape &s, const std::vector<double> &v,
         int dtype = MXC_DTYPE_FLOAT64);
Arr zeros(const Shape &s, int dtype = MXC_DTYPE_FLOAT64);
// Values as doubles (float32/float64/int32/int64 arrays).
std::vector<double> read(mxc_ndarray a);
inline std::vector<double> read(const Arr &a) { return read(a.h); }

// Invokes op `name`; the visible outputs are created by the call (n_out
// -1) or n_out slots are passed. rc_out: where to put a failure instead of
// failing the test.
std::vector<Arr> invoke(const std::string &name,
                        const std::vector<mxc_ndarray> &in,
                        const Params &p = {}, int *rc_out = nullptr,
                        int n_out = -1);
Arr invoke1(const std::string &name, const std::vector<mxc_ndarray> &in,
            const Params &p = {});

// Uniform values in [lo, hi) from a fixed seed.
std::vector<double> uniform(int64_t n, double lo, double hi, unsigned seed);

// Scoped recording / training mode.
struct Recording {
  int prev = 0;
  explicit Recording(int on = 1) { mxc_autograd_set_recording(on, &prev); }
  ~Recording() { mxc_autograd_set_recording(prev, nullptr); }
};
struct Training {
  int prev = 0;
  explicit Training(int on = 1) { mxc_set_training(on, &prev); }
  ~Training() { mxc_set_training(prev, nullptr); }
};

// A computation from input arrays to output arrays (through mxc_op_invoke;
// recording is decided by the caller).
using Program =
    std::function<std::vector<Arr>(const std::vector<mxc_ndarray> &)>;

struct Input {
  Shape shape;
  std::vector<double> values;
  int dtype = MXC_DTYPE_FLOAT64;
  bool wrt = true;  // differentiate (and perturb) this input
};

// Runs prog under recording on marked float64 inputs, backward with random
// head gradients hg (or ones when ones_heads), then compares each wrt
// input's gradient with central differences of L = sum_k hg_k . out_k.
// Returns the number of mismatches (each also reported with ADD_FAILURE
// prefixed by `what`); *ran = false (if given) when the forward failed
// with an error instead (reported only when ran is NULL).
int check_gradients(const std::string &what, const Program &prog,
                    const std::vector<Input> &inputs, double eps = 1e-6,
                    double rtol = 1e-5, double atol = 1e-7, bool *ran = nullptr,
                    bool ones_heads = false);

// Reads the gradient buffer of a marked variable.
std::vector<double> grad_of(mxc_ndarray var);

}  // namespace agt

#endif  // MXC_TESTS_AUTOGRAD_AG_UTIL_H_
