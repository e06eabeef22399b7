// Memory scopes (mxc_scope_*) and handle introspection: a scope frees
// what its thread made in it and nothing else; handles freed by hand or
// moved out are not freed twice; scopes nest and are per thread; misuse
// is an error code. Live counts come from the handle table itself
// (mxc__handle_live) and are compared with the public statistics; bytes
// with the sizes the test asked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "core/base/handle.h"
}
#include "mxc/mxc.h"
#include "tests/lifetime/lifetime_util.h"

namespace {

int64_t live_total() {
  int64_t n = -1;
  EXPECT_EQ(mxc_scope_stats(nullptr, &n, nullptr), MXC_OK);
  EXPECT_EQ(n, mxc__handle_live());  // the public count is the table's
  return n;
}

void scope_counts(mxc_scope s, int64_t want_handles, int64_t want_bytes) {
  int64_t n = -1, b = -1;
  ASSERT_EQ(mxc_scope_stats(s, &n, &b), MXC_OK) << mxc_last_error();
  EXPECT_EQ(n, want_handles);
  EXPECT_EQ(b, want_bytes);
}

bool is_freed(mxc_ndarray a) {
  int64_t n;
  return mxc_ndarray_size(a, &n) == MXC_ERR_INVALID_HANDLE &&
         std::string(mxc_last_error()).find("freed") != std::string::npos;
}

std::string dump(mxc_scope s) {
  char *text = nullptr;
  EXPECT_EQ(mxc_handle_dump(s, &text), MXC_OK) << mxc_last_error();
  std::string out = text ? text : "";
  mxc_string_free(text);
  return out;
}

TEST(Scopes, EndFreesEveryKindMadeInside) {
  int64_t live0 = live_total();
  mxc_scope s = nullptr;
  ASSERT_EQ(mxc_scope_begin(&s), MXC_OK);
  mxc_ndarray a = make_array(1.0f, 10), b = make_array(2.0f, 6);
  mxc_ndarray v = nullptr;
  ASSERT_EQ(mxc_ndarray_slice(a, 2, 5, &v), MXC_OK);  // a view: 3 floats
  mxc_op add = nullptr;
  ASSERT_EQ(mxc_op_find("elemwise_add", &add), MXC_OK);
  mxc_ndarray ins[2] = {b, b}, out = nullptr;
  ASSERT_EQ(mxc_op_invoke(add, nullptr, nullptr, 0, ins, 2, &out, 1, nullptr),
            MXC_OK);
  mxc_symbol x = nullptr;
  ASSERT_EQ(mxc_symbol_variable("x", &x), MXC_OK);
  mxc_str_list args = nullptr;
  ASSERT_EQ(mxc_symbol_list_arguments(x, &args), MXC_OK);
  std::string path = tmp_path("scope.params");
  ASSERT_EQ(mxc_ndarray_save(path.c_str(), &a, nullptr, 1), MXC_OK);
  mxc_ndarray_list list = nullptr;
  ASSERT_EQ(mxc_ndarray_load(path.c_str(), &list), MXC_OK);
  // 7 handles; arrays count 4 bytes per element of their own extent.
  scope_counts(s, 7, 4 * (10 + 6 + 3 + 6));
  EXPECT_EQ(live_total(), live0 + 8);  // the scope's own handle too
  ASSERT_EQ(mxc_scope_end(s), MXC_OK) << mxc_last_error();
  EXPECT_EQ(live_total(), live0);
  EXPECT_TRUE(is_freed(a) && is_freed(b) && is_freed(v) && is_freed(out));
  int n;
  EXPECT_EQ(mxc_symbol_num_outputs(x, &n), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_str_list_size(args, &n), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_ndarray_list_size(list, &n), MXC_ERR_INVALID_HANDLE);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(mxc__handle_deferred(), 0);
}

// The kinds the first test does not make: executors, iterators,
// inference results, predictors, RecordIO files (and a data batch).
TEST(Scopes, EndFreesExecutorsIteratorsPredictorsAndFiles) {
  std::string csv = tmp_path("scope.csv"), rec = tmp_path("scope.rec");
  std::string ckpt = tmp_path("scope_relu");
  std::ofstream(csv) << "1,2\n3,4\n";
  mxc_op relu = nullptr;
  ASSERT_EQ(mxc_op_find("relu", &relu), MXC_OK);
  mxc_symbol x = nullptr, r = nullptr;
  ASSERT_EQ(mxc_symbol_variable("x", &x), MXC_OK);
  ASSERT_EQ(mxc_symbol_create(relu, nullptr, nullptr, 0, "r", nullptr, &x, 1,
                              &r),
            MXC_OK);
  ASSERT_EQ(mxc_checkpoint_save(ckpt.c_str(), 0, r, 0, nullptr, nullptr, 0,
                                nullptr, nullptr),
            MXC_OK);
  int64_t live0 = live_total();
  mxc_scope s = nullptr;
  ASSERT_EQ(mxc_scope_begin(&s), MXC_OK);
  const char *names[] = {"x"};
  int ndims[] = {1};
  int64_t dims[] = {4};
  mxc_executor ex = nullptr;
  ASSERT_EQ(mxc_executor_simple_bind(r, MXC_DEVICE_CPU, 0, 1, names, ndims,
                                     dims, nullptr, MXC_REQ_WRITE, 0, nullptr,
                                     nullptr, 0, &ex),
            MXC_OK);
  mxc_infer inf = nullptr;
  ASSERT_EQ(mxc_symbol_infer_shape(r, 1, names, ndims, dims, 0, &inf),
            MXC_OK);
  mxc_data_iter it = nullptr;
  ASSERT_EQ(mxc_data_iter_csv_create(csv.c_str(), nullptr, 0, 1, 0, -1,
                                     MXC_LAST_BATCH_PAD, &it),
            MXC_OK);
  int more = 0;
  ASSERT_EQ(mxc_data_iter_next(it, &more), MXC_OK);
  mxc_ndarray batch = nullptr;
  ASSERT_EQ(mxc_data_iter_data(it, &batch), MXC_OK);
  mxc_predictor pred = nullptr;
  ASSERT_EQ(mxc_predictor_create_from_checkpoint(
                ckpt.c_str(), 0, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                nullptr, 0, nullptr, &pred),
            MXC_OK);
  mxc_recordio file = nullptr;
  ASSERT_EQ(mxc_recordio_open(rec.c_str(), nullptr, "w", &file), MXC_OK);
  ASSERT_EQ(mxc_recordio_write(file, "abcd", 4), MXC_OK);
  int64_t n = 0;
  ASSERT_EQ(mxc_scope_stats(s, &n, nullptr), MXC_OK);
  EXPECT_EQ(n, 6);
  ASSERT_EQ(mxc_scope_end(s), MXC_OK);
  EXPECT_EQ(live_total(), live0);
  EXPECT_EQ(mxc_executor_forward(ex, 0), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_data_iter_reset(it), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_predictor_forward(pred), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_recordio_flush(file), MXC_ERR_INVALID_HANDLE);
  EXPECT_TRUE(is_freed(batch));
  // The writer was closed by its free: the record reached the file.
  mxc_recordio back = nullptr;
  ASSERT_EQ(mxc_recordio_open(rec.c_str(), nullptr, "r", &back), MXC_OK);
  int64_t size = 0;
  ASSERT_EQ(mxc_recordio_read(back, &size), MXC_OK);
  EXPECT_EQ(size, 4);
  mxc_recordio_free(back);
  mxc_symbol_free(r);
  mxc_symbol_free(x);
}

TEST(Scopes, HandsFreedByHandAreNotFreedTwice) {
  int64_t live0 = live_total();
  mxc_scope s = nullptr;
  ASSERT_EQ(mxc_scope_begin(&s), MXC_OK);
  mxc_ndarray keep = make_array(0.0f, 5);
  // Many made and freed by hand: the scope's list is reused, and its
  // counts follow the frees at once.
  for (int i = 0; i < 5000; ++i) mxc_ndarray_free(make_array(1.0f, 3));
  scope_counts(s, 1, 20);
  mxc_ndarray gone = make_array(0.0f, 2);
  mxc_ndarray_free(gone);
  scope_counts(s, 1, 20);
  // A slot freed by hand and reused by a handle made outside the scope
  // (another thread) is not freed by the scope's end.
  mxc_ndarray other = nullptr;
  std::thread([&] { other = make_array(3.0f); }).join();
  ASSERT_EQ(mxc_scope_end(s), MXC_OK);
  EXPECT_TRUE(is_freed(keep) && is_freed(gone));
  float got[4];
  ASSERT_EQ(mxc_ndarray_copy_to_host(other, got, sizeof got), MXC_OK);
  EXPECT_EQ(got[0], 3.0f);
  mxc_ndarray_free(other);
  EXPECT_EQ(live_total(), live0);
}

TEST(Scopes, NestedScopesAndMovingOut) {
  int64_t live0 = live_total();
  mxc_scope outer = nullptr, inner = nullptr;
  ASSERT_EQ(mxc_scope_begin(&outer), MXC_OK);
  mxc_ndarray a1 = make_array(1.0f, 1);
  ASSERT_EQ(mxc_scope_begin(&inner), MXC_OK);
  mxc_ndarray a2 = make_array(2.0f, 2), a3 = make_array(3.0f, 3);
  mxc_ndarray a4 = make_array(4.0f, 4);
  scope_counts(outer, 1, 4);
  scope_counts(inner, 3, 4 * 9);
  ASSERT_EQ(mxc_scope_keep(a3), MXC_OK);    // the inner scope's result
  ASSERT_EQ(mxc_scope_detach(a4), MXC_OK);  // owned by the caller now
  scope_counts(outer, 2, 4 * 4);
  scope_counts(inner, 1, 4 * 2);
  mxc_scope in = nullptr;
  ASSERT_EQ(mxc_handle_scope(a3, &in), MXC_OK);
  EXPECT_EQ(in, outer);
  ASSERT_EQ(mxc_handle_scope(a2, &in), MXC_OK);
  EXPECT_EQ(in, inner);
  ASSERT_EQ(mxc_handle_scope(a4, &in), MXC_OK);
  EXPECT_EQ(in, nullptr);
  // The outer scope cannot end before the inner one; nothing is freed.
  EXPECT_EQ(mxc_scope_end(outer), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mxc_last_error()).find("innermost"),
            std::string::npos)
      << mxc_last_error();
  ASSERT_EQ(mxc_scope_end(inner), MXC_OK);
  EXPECT_TRUE(is_freed(a2));
  EXPECT_FALSE(is_freed(a1) || is_freed(a3));
  // Kept again from the outermost scope: in no scope.
  ASSERT_EQ(mxc_scope_keep(a1), MXC_OK);
  scope_counts(outer, 1, 12);
  ASSERT_EQ(mxc_scope_end(outer), MXC_OK);
  EXPECT_TRUE(is_freed(a3));
  EXPECT_FALSE(is_freed(a1) || is_freed(a4));
  EXPECT_EQ(mxc_scope_keep(a4), MXC_OK);  // in no scope: stays so
  mxc_ndarray_free(a1);
  mxc_ndarray_free(a4);
  EXPECT_EQ(live_total(), live0);
}

TEST(Scopes, MisuseIsAnError) {
  mxc_scope s = nullptr;
  EXPECT_EQ(mxc_scope_begin(nullptr), MXC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(mxc_scope_end(nullptr), MXC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mxc_scope_begin(&s), MXC_OK);
  mxc_ndarray a = make_array(1.0f);
  // Another thread can neither end the scope nor move its handles.
  int end_rc = 0, keep_rc = 0;
  std::string end_msg;
  std::thread([&] {
    end_rc = mxc_scope_end(s);
    end_msg = mxc_last_error();
    keep_rc = mxc_scope_keep(a);
  }).join();
  EXPECT_EQ(end_rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(end_msg.find("another thread"), std::string::npos) << end_msg;
  EXPECT_EQ(keep_rc, MXC_ERR_INVALID_ARGUMENT);
  EXPECT_FALSE(is_freed(a));
  ASSERT_EQ(mxc_scope_end(s), MXC_OK);
  // Ended twice, or used after its end: a freed handle.
  EXPECT_EQ(mxc_scope_end(s), MXC_ERR_INVALID_HANDLE);
  EXPECT_NE(std::string(mxc_last_error()).find("freed"), std::string::npos);
  int64_t n;
  EXPECT_EQ(mxc_scope_stats(s, &n, nullptr), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_scope_keep(a), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_scope_keep(nullptr), MXC_ERR_INVALID_ARGUMENT);
  mxc_scope in = nullptr;
  EXPECT_EQ(mxc_handle_scope(a, &in), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_handle_tag(a, "late"), MXC_ERR_INVALID_HANDLE);
  EXPECT_EQ(mxc_handle_scope(nullptr, &in), MXC_ERR_INVALID_ARGUMENT);
  // A scope handle is not an array and an array is not a scope.
  mxc_ndarray b = make_array(1.0f);
  EXPECT_EQ(mxc_scope_end(reinterpret_cast<mxc_scope>(b)),
            MXC_ERR_INVALID_HANDLE);
  mxc_ndarray_free(b);
}

TEST(Scopes, ScopesArePerThread) {
  Watchdog dog("ScopesArePerThread", 120);
  int64_t live0 = live_total();
  mxc_scope mine = nullptr;
  ASSERT_EQ(mxc_scope_begin(&mine), MXC_OK);
  const int threads = 6, rounds = 40, per = 25;
  std::atomic<int> bad{0};
  std::vector<mxc_ndarray> unscoped(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      // Made with no scope open on this thread: in no scope at all.
      unscoped[t] = make_array((float)t);
      for (int r = 0; r < rounds; ++r) {
        mxc_scope s = nullptr;
        if (mxc_scope_begin(&s) != MXC_OK) { bad++; continue; }
        for (int i = 0; i < per; ++i) make_array((float)i, 2);
        int64_t n = 0, b = 0;
        if (mxc_scope_stats(s, &n, &b) != MXC_OK || n != per ||
            b != per * 8) {
          bad++;
        }
        if (mxc_scope_end(s) != MXC_OK) bad++;
      }
      // Left open: ended as the thread exits.
      mxc_scope s = nullptr;
      if (mxc_scope_begin(&s) != MXC_OK) bad++;
      make_array(9.0f, 3);
    });
  }
  for (auto &t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  scope_counts(mine, 0, 0);  // nothing of theirs landed in this scope
  ASSERT_EQ(mxc_scope_end(mine), MXC_OK);
  for (mxc_ndarray a : unscoped) EXPECT_FALSE(is_freed(a));
  EXPECT_EQ(live_total(), live0 + threads);
  for (mxc_ndarray a : unscoped) mxc_ndarray_free(a);
  EXPECT_EQ(live_total(), live0);
}

TEST(Scopes, EndWhileWorkIsPending) {
  int64_t live0 = live_total();
  mxc_op add = nullptr;
  ASSERT_EQ(mxc_op_find("elemwise_add", &add), MXC_OK);
  mxc_ndarray keep = make_array(1.0f, 1 << 16);
  mxc_scope s = nullptr;
  ASSERT_EQ(mxc_scope_begin(&s), MXC_OK);
  mxc_ndarray t = make_array(2.0f, 1 << 16);
  for (int i = 0; i < 20; ++i) {
    mxc_ndarray ins[2] = {keep, t};
    ASSERT_EQ(mxc_op_invoke(add, nullptr, nullptr, 0, ins, 2, &keep, 1,
                            nullptr),
              MXC_OK);
  }
  ASSERT_EQ(mxc_scope_end(s), MXC_OK);  // t freed with work still queued
  std::vector<float> got(1 << 16);
  ASSERT_EQ(mxc_ndarray_copy_to_host(keep, got.data(), got.size() * 4),
            MXC_OK);
  EXPECT_EQ(got[0], 41.0f);
  EXPECT_EQ(got.back(), 41.0f);
  mxc_ndarray_free(keep);
  EXPECT_EQ(live_total(), live0);
}

TEST(Scopes, DumpNamesWhereHandlesWereMade) {
  int was = -1;
  ASSERT_EQ(mxc_handle_debug_enabled(&was), MXC_OK);
  ASSERT_EQ(mxc_handle_debug_set(1), MXC_OK);
  int on = 0;
  ASSERT_EQ(mxc_handle_debug_enabled(&on), MXC_OK);
  EXPECT_EQ(on, 1);
  mxc_scope s = nullptr;
  ASSERT_EQ(mxc_scope_begin(&s), MXC_OK);
  ASSERT_EQ(mxc_handle_tag_set("Train.java:42"), MXC_OK);
  mxc_ndarray a = make_array(1.0f, 4), v = nullptr;
  ASSERT_EQ(mxc_handle_tag_set(nullptr), MXC_OK);
  const int64_t two_by_two[2] = {2, 2};
  ASSERT_EQ(mxc_ndarray_reshape(a, two_by_two, 2, &v), MXC_OK);
  std::string d = dump(s);
  EXPECT_NE(d.find("mxc_ndarray 0x"), std::string::npos) << d;
  EXPECT_NE(d.find("16 bytes, made by mxc_ndarray_create at Train.java:42, "
                   "in a scope of depth 1"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("made by mxc_ndarray_reshape, in a scope"),
            std::string::npos)
      << d;
  EXPECT_EQ(std::count(d.begin(), d.end(), '\n'), 2) << d;
  // A handle tagged after it was made (what a binding's wrapper does).
  ASSERT_EQ(mxc_handle_tag(v, "Model.java:7"), MXC_OK);
  EXPECT_NE(dump(s).find("made by mxc_ndarray_reshape at Model.java:7"),
            std::string::npos);
  ASSERT_EQ(mxc_handle_tag(v, nullptr), MXC_OK);
  EXPECT_NE(dump(s).find("made by mxc_ndarray_reshape, in a scope"),
            std::string::npos);
  EXPECT_EQ(mxc_handle_tag(nullptr, "x"), MXC_ERR_INVALID_ARGUMENT);
  // The whole process's dump lists them too, and a handle in no scope.
  mxc_ndarray loose = nullptr;
  std::thread([&] { loose = make_array(0.0f, 1); }).join();
  std::string all = dump(nullptr);
  EXPECT_NE(all.find("made by mxc_ndarray_reshape, in a scope of depth 1"),
            std::string::npos);
  EXPECT_NE(all.find("4 bytes, made by mxc_ndarray_create, in no scope"),
            std::string::npos)
      << all;
  ASSERT_EQ(mxc_scope_end(s), MXC_OK);
  mxc_ndarray_free(loose);
  // With debugging off, no tag is recorded.
  ASSERT_EQ(mxc_handle_debug_set(0), MXC_OK);
  ASSERT_EQ(mxc_scope_begin(&s), MXC_OK);
  ASSERT_EQ(mxc_handle_tag_set("Hidden.java:1"), MXC_OK);
  make_array(1.0f);
  EXPECT_EQ(dump(s).find("Hidden"), std::string::npos);
  ASSERT_EQ(mxc_handle_tag_set(nullptr), MXC_OK);
  ASSERT_EQ(mxc_scope_end(s), MXC_OK);
  char *text = nullptr;
  EXPECT_EQ(mxc_handle_dump(s, &text), MXC_ERR_INVALID_HANDLE);
  ASSERT_EQ(mxc_handle_debug_set(was), MXC_OK);
}

}  // namespace
