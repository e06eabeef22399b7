// Allocation failure injection over mark + record + backward: the N-th
// allocation fails for N = 1, 2, ... until the scenario completes. Every
// failing run must end in a clean MXC_ERR_OOM and leave live allocations
// and handles at their baseline.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}

namespace {

std::string err() { return mxc_last_error(); }

// Frees whatever a scenario made, whether or not it finished.
struct Bag {
  std::vector<mxc_ndarray> a;
  ~Bag() {
    for (auto h : a) mxc_ndarray_free(h);
  }
  mxc_ndarray *slot() {
    a.push_back(nullptr);
    return &a.back();
  }
};

#define STEP(call)                 \
  do {                             \
    int rc_ = (call);              \
    if (rc_ != MXC_OK) return rc_; \
  } while (0)

int call(Bag &bag, const char *name, std::vector<mxc_ndarray> in,
         const std::vector<std::pair<const char *, const char *>> &p,
         mxc_ndarray *out, int n_out = 1) {
  mxc_op op = nullptr;
  STEP(mxc_op_find(name, &op));
  std::vector<const char *> k, v;
  for (auto &kv : p) {
    k.push_back(kv.first);
    v.push_back(kv.second);
  }
  std::vector<mxc_ndarray> outs((size_t)n_out, nullptr);
  STEP(mxc_op_invoke(op, k.data(), v.data(), (int)k.size(), in.data(),
                     (int)in.size(), outs.data(), n_out, nullptr));
  for (int i = 0; i < n_out; ++i) bag.a.push_back(outs[(size_t)i]);
  *out = outs[0];
  return MXC_OK;
}

int array(Bag &bag, const std::vector<int64_t> &s, const std::vector<double> &v,
          mxc_ndarray *out) {
  mxc_ndarray *h = bag.slot();
  STEP(mxc_ndarray_create(s.data(), (int)s.size(), MXC_DTYPE_FLOAT64,
                          MXC_DEVICE_CPU, 0, 1, h));
  STEP(mxc_ndarray_copy_from_host(*h, v.data(), v.size() * sizeof(double)));
  *out = *h;
  return MXC_OK;
}

// FullyConnected -> BatchNorm (training, hidden outputs kept) -> sigmoid ->
// sum, differentiated twice (retain, then free), gradients read back.
int scenario(double *out_g0) {
  Bag bag;
  mxc_ndarray x, w, b, gam, bet, mm, mv, gw, gb, gx;
  STEP(array(bag, {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 4}, &x));
  STEP(array(bag, {2, 3}, {0.1, -0.2, 0.3, 0.2, 0.1, -0.1}, &w));
  STEP(array(bag, {2}, {0.5, -0.5}, &b));
  STEP(array(bag, {2}, {1, 1.5}, &gam));
  STEP(array(bag, {2}, {0, 0.1}, &bet));
  STEP(array(bag, {2}, {0, 0}, &mm));
  STEP(array(bag, {2}, {1, 1}, &mv));
  STEP(array(bag, {2, 3}, std::vector<double>(6, 0), &gw));
  STEP(array(bag, {2}, {0, 0}, &gb));
  STEP(array(bag, {4, 3}, std::vector<double>(12, 0), &gx));
  mxc_ndarray vars[3] = {w, b, x}, grads[3] = {gw, gb, gx};
  int reqs[3] = {MXC_REQ_WRITE, MXC_REQ_ADD, MXC_REQ_WRITE};
  STEP(mxc_autograd_mark_variables(3, vars, reqs, grads));
  mxc_ndarray h, n, s, y;
  int prev_t = 0, prev_r = 0;
  mxc_set_training(1, &prev_t);
  mxc_autograd_set_recording(1, &prev_r);
  int rc = call(bag, "FullyConnected", {x, w, b}, {{"num_hidden", "2"}}, &h);
  if (rc == MXC_OK) {
    rc = call(bag, "BatchNorm", {h, gam, bet, mm, mv}, {{"fix_gamma", "false"}},
              &n);
  }
  if (rc == MXC_OK) rc = call(bag, "sigmoid", {n}, {}, &s);
  if (rc == MXC_OK) rc = call(bag, "sum", {s}, {}, &y);
  mxc_autograd_set_recording(prev_r, nullptr);
  mxc_set_training(prev_t, nullptr);
  STEP(rc);
  STEP(mxc_autograd_backward(1, &y, nullptr, 1));
  STEP(mxc_autograd_backward(1, &y, nullptr, 0));
  mxc_ndarray *g = bag.slot();
  STEP(mxc_autograd_get_grad(w, g));
  double gv[6];
  STEP(mxc_ndarray_copy_to_host(*g, gv, sizeof gv));
  *out_g0 = gv[0];
  return MXC_OK;
}

void settle() {
  mxc_wait_all();
  mxc_storage_release_cached(MXC_DEVICE_CPU, 0);
}

TEST(AutogradFaults, EveryAllocationFails) {
  double want = 0;
  // Warm-up, several times: operators with temporary space take one of a
  // few process-wide spaces in turn, each created on first use.
  for (int i = 0; i < 8; ++i) ASSERT_EQ(scenario(&want), MXC_OK) << err();
  ASSERT_TRUE(std::isfinite(want));
  settle();
  const int64_t live0 = mxc__alloc_live(), handles0 = mxc__handle_live();
  int failures = 0;
  for (int64_t n = 1; n < 100000; ++n) {
    double got = 0;
    mxc__fault_alloc_arm(n, 0);
    int rc = scenario(&got);
    int fired = mxc__fault_alloc_fired();
    mxc__fault_alloc_arm(0, 0);
    if (fired && rc != MXC_OK) {
      EXPECT_EQ(rc, MXC_ERR_OOM) << "allocation " << n << ": " << err();
    }
    settle();
    mxc_wait_all();
    EXPECT_EQ(mxc__alloc_live(), live0)
        << "leak after failing allocation " << n;
    EXPECT_EQ(mxc__handle_live(), handles0) << "handle leak at " << n;
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << err();
      EXPECT_EQ(got, want);
      break;
    }
    ++failures;
  }
  EXPECT_GT(failures, 50);
  printf("walked %d injected allocation failures\n", failures);
}

}  // namespace
