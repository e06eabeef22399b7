// Allocation failure injection across the public API, SQLite faultsim
// style: make the N-th allocation of a scenario fail, for N = 1, 2, ...
// until the scenario completes without an injected failure. Every failing
// run must end in a clean MXC_ERR_OOM, leave the library usable, and leak
// nothing (live allocator blocks and live handles return to baseline).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mxc/mxc.h"

extern "C" {
#include "core/base/alloc.h"
#include "core/base/handle.h"
}

namespace {

std::string tmp_path(const std::string &name) {
  const char *d = getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

// Frees whatever a scenario made, whether or not it finished.
struct Bag {
  std::vector<mxc_ndarray> arrays;
  std::vector<mxc_ndarray_list> lists;
  ~Bag() {
    for (auto a : arrays) mxc_ndarray_free(a);
    for (auto l : lists) mxc_ndarray_list_free(l);
  }
};

int add_one(void *, mxc_opctx ctx) {
  void *p;
  size_t n;
  int rc = mxc_opctx_data(ctx, 0, &p, &n);
  if (rc != MXC_OK) return rc;
  for (size_t i = 0; i < n / sizeof(float); ++i) ((float *)p)[i] += 1;
  return MXC_OK;
}

#define STEP(call)                  \
  do {                              \
    int rc_ = (call);               \
    if (rc_ != MXC_OK) return rc_;  \
  } while (0)

// The scenario: create (eager and delayed), copy in/out, views, async copy,
// user push, save and load.
int scenario(Bag &bag) {
  int64_t shape[2] = {4, 8};
  mxc_ndarray a, b, v, r, x;
  STEP(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                          &a));
  bag.arrays.push_back(a);
  STEP(mxc_ndarray_create(shape, 2, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 1,
                          &b));
  bag.arrays.push_back(b);
  std::vector<float> in(32, 1.0f), out(32);
  STEP(mxc_ndarray_copy_from_host(a, in.data(), 128));
  STEP(mxc_ndarray_copy(a, b));
  STEP(mxc_ndarray_slice(b, 1, 3, &v));
  bag.arrays.push_back(v);
  int64_t rs[1] = {-1};
  STEP(mxc_ndarray_reshape(v, rs, 1, &r));
  bag.arrays.push_back(r);
  STEP(mxc_ndarray_at(a, 2, &x));
  bag.arrays.push_back(x);
  STEP(mxc_engine_push(add_one, nullptr, nullptr, nullptr, 0, &r, 1, 0,
                       "add_one"));
  STEP(mxc_ndarray_copy_to_host(b, out.data(), 128));
  if (out[8] != 2.0f || out[0] != 1.0f) return -1;  // wrong result
  std::string p = tmp_path("fault.mxc");
  mxc_ndarray both[2] = {a, b};
  const char *names[2] = {"a", "b"};
  STEP(mxc_ndarray_save(p.c_str(), both, names, 2));
  mxc_ndarray_list l;
  STEP(mxc_ndarray_load(p.c_str(), &l));
  bag.lists.push_back(l);
  mxc_ndarray g;
  STEP(mxc_ndarray_list_get(l, 1, &g));
  bag.arrays.push_back(g);
  STEP(mxc_ndarray_copy_to_host(g, out.data(), 128));
  if (out[8] != 2.0f) return -1;
  return MXC_OK;
}

void settle() {
  mxc_wait_all();
  mxc_storage_release_cached(MXC_DEVICE_CPU, 0);
}

// Variadic operators wider than the stack buffers of invoke (16 arrays)
// and than the engine's lock-all pushes (32 variables): Concat, add_n and
// split with 40 arrays, whose arrays then live on the heap.
int wide_scenario(Bag &bag) {
  const int n = 40;
  int64_t shape[1] = {2};
  std::vector<mxc_ndarray> parts;
  std::vector<float> two = {1.0f, 2.0f};
  for (int i = 0; i < n; ++i) {
    mxc_ndarray a;
    STEP(mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                            &a));
    bag.arrays.push_back(a);
    STEP(mxc_ndarray_copy_from_host(a, two.data(), 8));
    parts.push_back(a);
  }
  std::string ns = std::to_string(n);
  const char *k[] = {"num_args", "dim"}, *v[] = {ns.c_str(), "0"};
  mxc_op cat, add_n, split;
  STEP(mxc_op_find("Concat", &cat));
  STEP(mxc_op_find("add_n", &add_n));
  STEP(mxc_op_find("split", &split));
  mxc_ndarray whole = nullptr, sum = nullptr;
  STEP(mxc_op_invoke(cat, k, v, 2, parts.data(), n, &whole, 1, nullptr));
  bag.arrays.push_back(whole);
  STEP(mxc_op_invoke(add_n, k, v, 1, parts.data(), n, &sum, 1, nullptr));
  bag.arrays.push_back(sum);
  const char *sk[] = {"num_outputs", "axis"};
  std::vector<mxc_ndarray> back((size_t)n, nullptr);
  STEP(mxc_op_invoke(split, sk, v, 2, &whole, 1, back.data(), n, nullptr));
  for (auto a : back) bag.arrays.push_back(a);
  std::vector<float> out(2);
  STEP(mxc_ndarray_copy_to_host(back[(size_t)n - 1], out.data(), 8));
  if (out[0] != 1.0f || out[1] != 2.0f) return -1;  // wrong result
  STEP(mxc_ndarray_copy_to_host(sum, out.data(), 8));
  if (out[0] != (float)n || out[1] != 2.0f * n) return -1;
  return MXC_OK;
}

// Walks every allocation failure of run (see the top of the file).
void walk_faults(int (*run)(Bag &), int min_failures) {
  {  // Warm-up: lazily built process-wide state (engine, pools, tables).
    Bag bag;
    ASSERT_EQ(run(bag), MXC_OK) << mxc_last_error();
  }
  settle();
  const int64_t live0 = mxc__alloc_live();
  const int64_t handles0 = mxc__handle_live();
  int failures = 0;
  for (int64_t n = 1; n < 100000; ++n) {
    int rc, fired;
    {
      Bag bag;
      mxc__fault_alloc_arm(n, 0);
      rc = run(bag);
      fired = mxc__fault_alloc_fired();
      mxc__fault_alloc_arm(0, 0);
      if (fired && rc != MXC_OK) {
        EXPECT_EQ(rc, MXC_ERR_OOM)
            << "allocation " << n << ": " << mxc_last_error();
        EXPECT_NE(std::string(mxc_last_error()).find("out of memory"),
                  std::string::npos)
            << "allocation " << n << ": " << mxc_last_error();
      }
    }
    // An allocation failure inside asynchronous work surfaces at a wait;
    // clear it so the next run starts clean.
    settle();
    ASSERT_EQ(mxc_wait_all(), MXC_OK);
    EXPECT_EQ(mxc__alloc_live(), live0) << "leak after failing allocation "
                                        << n;
    EXPECT_EQ(mxc__handle_live(), handles0) << "handle leak at " << n;
    if (!fired) {
      ASSERT_EQ(rc, MXC_OK) << mxc_last_error();
      break;
    }
    ++failures;
    // The library stays usable: the scenario passes right after.
    Bag again;
    ASSERT_EQ(run(again), MXC_OK)
        << "after failing allocation " << n << ": " << mxc_last_error();
  }
  EXPECT_GT(failures, min_failures);
  printf("walked %d injected allocation failures\n", failures);
}

TEST(AllocFaults, EveryAllocationOfTheScenario) { walk_faults(scenario, 10); }

TEST(AllocFaults, EveryAllocationOfWideVariadicCalls) {
  walk_faults(wide_scenario, 40);
}

}  // namespace
