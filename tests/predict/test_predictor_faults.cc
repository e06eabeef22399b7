// Allocation failures in the predictor API (the walk of tests/fault): the
// N-th allocation of a scenario fails, for N = 1, 2, ... until the
// scenario completes. Every failing run must end in MXC_ERR_OOM, leave the
// library usable and leak nothing (live allocator blocks and handles
// return to their baseline). The scenario: create from bytes, clone,
// reshape, set input (buffer and array), forward, outputs, free.
#include <gtest/gtest.h>

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}
#include "tests/predict/predict_util.h"

using namespace pred_test;

namespace {

#define STEP(call)                 \
  do {                             \
    int rc_ = (call);              \
    if (rc_ != MXC_OK) return rc_; \
  } while (0)

// Frees whatever the scenario made, whether or not it finished.
struct Bag {
  std::vector<mxc_predictor> preds;
  std::vector<mxc_ndarray> arrays;
  ~Bag() {
    for (auto p : preds) mxc_predictor_free(p);
    for (auto a : arrays) mxc_ndarray_free(a);
  }
};

int scenario(const Model &m, Bag &bag) {
  mxc_predictor p = nullptr, c = nullptr, r = nullptr;
  STEP(create(m, m.batch, &p));
  bag.preds.push_back(p);
  STEP(mxc_predictor_clone(p, &c));
  bag.preds.push_back(c);
  const char *names[] = {"data"};
  int ndims[] = {4};
  int64_t one[] = {1, m.c, m.h, m.w}, all[] = {m.batch, m.c, m.h, m.w};
  STEP(mxc_predictor_reshape(p, 1, names, ndims, one, &r));
  bag.preds.push_back(r);
  mxc_ndarray x = nullptr, y = nullptr;
  STEP(mxc_ndarray_create(all, 4, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                          &x));
  bag.arrays.push_back(x);
  STEP(mxc_ndarray_copy_from_host(x, m.input.data(), m.input.size() * 4));
  STEP(mxc_predictor_set_input_array(c, "data", x));
  STEP(mxc_predictor_forward(c));
  STEP(mxc_predictor_output(c, 0, &y));
  bag.arrays.push_back(y);
  std::vector<float> out(m.expected.size()), first(m.classes);
  STEP(mxc_ndarray_copy_to_host(y, out.data(), out.size() * 4));
  STEP(mxc_predictor_set_input(r, "data", m.input.data(), m.image() * 4));
  STEP(mxc_predictor_forward(r));
  STEP(mxc_predictor_get_output(r, 0, first.data(), first.size() * 4));
  if (max_diff(out.data(), m.expected.data(), out.size()) > 2e-5 ||
      max_diff(first.data(), m.expected.data(), first.size()) > 2e-5) {
    return -1;  // a wrong result, not an error
  }
  return MXC_OK;
}

void settle() {
  mxc_wait_all();
  mxc_storage_release_cached(MXC_DEVICE_CPU, 0);
}

TEST(PredictorFaults, EveryAllocationFailsCleanly) {
  Model m = load_model();
  ASSERT_EQ(m.batch, 4) << "model files missing";
  // Warm-up: lazily built process-wide state. Twice: the second run still
  // adds a few long-lived blocks (measured: 6, then none in later runs).
  for (int k = 0; k < 2; ++k) {
    Bag bag;
    ASSERT_EQ(scenario(m, bag), MXC_OK) << err();
  }
  settle();
  const int64_t live0 = mxc__alloc_live(), handles0 = mxc__handle_live();
  int failures = 0;
  for (int64_t n = 1; n < 100000; ++n) {
    int rc, fired;
    {
      Bag bag;
      mxc__fault_alloc_arm(n, 0);
      rc = scenario(m, bag);
      fired = mxc__fault_alloc_fired();
      mxc__fault_alloc_arm(0, 0);
      if (fired && rc != MXC_OK) {
        EXPECT_EQ(rc, MXC_ERR_OOM) << "allocation " << n << ": " << err();
      }
    }
    settle();  // an asynchronous failure surfaces at a wait: clear it
    ASSERT_EQ(mxc_wait_all(), MXC_OK);
    EXPECT_EQ(mxc__alloc_live(), live0) << "leak after failing allocation "
                                        << n;
    EXPECT_EQ(mxc__handle_live(), handles0) << "handle leak at " << n;
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      break;
    }
    ++failures;
    Bag again;  // the library stays usable
    ASSERT_EQ(scenario(m, again), MXC_OK) << "after failing allocation " << n
                                          << ": " << err();
  }
  EXPECT_GT(failures, 50);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace
