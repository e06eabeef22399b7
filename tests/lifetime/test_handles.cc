// Every public function that takes a handle, called with NULL, with a
// freed handle of the right kind and with a live handle of another kind:
// each must fail cleanly (MXC_ERR_INVALID_HANDLE naming the problem; NULL:
// MXC_ERR_INVALID_ARGUMENT or MXC_ERR_INVALID_HANDLE) without touching
// freed memory (this test runs under ASan and TSan too). The table of
// functions is checked against the header, so a new function taking a
// handle cannot be forgotten. Then: a handle freed by one thread while
// others use it (an error or a whole result, never a use-after-free).
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "core/base/handle.h"
}
#include "mxc/mxc.h"
#include "tests/lifetime/lifetime_util.h"

namespace {

enum Kind {
  ND, LIST, ITER, SYM, EXEC, STRS, INFER, CTX, PRED, REC, KV, SCOPE, BLOCK,
  OPT, FIT, N_KINDS
};

struct Entry {
  const char *name;
  Kind kind;                           // kind of the handle substituted
  std::function<int(uintptr_t)> call;  // returns the status (void: -1)
};

// Live objects of every kind, for the arguments that are not under test,
// and a freed handle of every kind.
struct World {
  mxc_ndarray arr = nullptr, arr2 = nullptr, label = nullptr;
  mxc_ndarray_list list = nullptr;
  mxc_data_iter it = nullptr;
  mxc_symbol sym = nullptr;
  mxc_executor ex = nullptr;
  mxc_str_list strs = nullptr;
  mxc_infer inf = nullptr;
  mxc_predictor pred = nullptr;
  mxc_recordio rec = nullptr;
  mxc_kvstore kv = nullptr;
  mxc_scope scope = nullptr;
  mxc_block block = nullptr;
  mxc_optimizer opt = nullptr;
  mxc_block loss = nullptr;
  mxc_fit fit = nullptr;
  mxc_op relu = nullptr;
  uintptr_t freed[N_KINDS] = {};
  std::string params = tmp_path("params.mxc"), csv = tmp_path("d.csv");
  std::string ckpt = tmp_path("relu");
  std::string rec_path = tmp_path("r.rec");
};

int push_noop(void *, mxc_opctx) { return MXC_OK; }
void push_noop_async(void *, mxc_opctx ctx) {
  mxc_opctx_complete(ctx, MXC_OK, nullptr);
}
int keep_ctx(void *ud, mxc_opctx ctx) {
  *static_cast<uintptr_t *>(ud) = reinterpret_cast<uintptr_t>(ctx);
  return MXC_OK;
}

void make_symbol_things(World *w) {
  mxc_symbol x = nullptr;
  ASSERT_EQ(mxc_symbol_variable("x", &x), MXC_OK);
  ASSERT_EQ(mxc_symbol_create(w->relu, nullptr, nullptr, 0, "r", nullptr, &x,
                              1, &w->sym),
            MXC_OK);
  mxc_symbol_free(x);
  const char *names[] = {"x"};
  int ndims[] = {1};
  int64_t dims[] = {4};
  ASSERT_EQ(mxc_executor_simple_bind(w->sym, MXC_DEVICE_CPU, 0, 1, names,
                                     ndims, dims, nullptr, MXC_REQ_WRITE, 0,
                                     nullptr, nullptr, 0, &w->ex),
            MXC_OK);
  ASSERT_EQ(mxc_executor_save_params(w->ex, w->params.c_str(), 0, nullptr),
            MXC_OK);
  ASSERT_EQ(mxc_symbol_list_arguments(w->sym, &w->strs), MXC_OK);
  ASSERT_EQ(mxc_symbol_infer_shape(w->sym, 1, names, ndims, dims, 0, &w->inf),
            MXC_OK);
  ASSERT_EQ(mxc_checkpoint_save(w->ckpt.c_str(), 0, w->sym, 0, nullptr,
                                nullptr, 0, nullptr, nullptr),
            MXC_OK);
  ASSERT_EQ(mxc_predictor_create_from_checkpoint(
                w->ckpt.c_str(), 0, MXC_DEVICE_CPU, 0, 1, names, ndims, dims,
                nullptr, 0, nullptr, &w->pred),
            MXC_OK);
}

void make_world(World *w) {
  ASSERT_EQ(mxc_op_find("relu", &w->relu), MXC_OK);
  w->arr = make_array(1.0f);
  w->arr2 = make_array(2.0f);
  w->label = make_array(0.0f);
  ASSERT_TRUE(w->arr && w->arr2 && w->label);
  ASSERT_EQ(mxc_ndarray_save(w->params.c_str(), &w->arr, nullptr, 1), MXC_OK);
  ASSERT_EQ(mxc_ndarray_load(w->params.c_str(), &w->list), MXC_OK);
  std::ofstream(w->csv) << "1,2\n3,4\n";
  ASSERT_EQ(mxc_data_iter_csv_create(w->csv.c_str(), nullptr, 0, 1, 0, -1,
                                     MXC_LAST_BATCH_PAD, &w->it),
            MXC_OK);
  make_symbol_things(w);
  ASSERT_EQ(mxc_recordio_open(w->rec_path.c_str(), nullptr, "w", &w->rec),
            MXC_OK);
  ASSERT_EQ(mxc_recordio_write(w->rec, "abcd", 4), MXC_OK);
  mxc_recordio_free(w->rec);
  ASSERT_EQ(mxc_recordio_open(w->rec_path.c_str(), nullptr, "r", &w->rec),
            MXC_OK);
  ASSERT_EQ(mxc_kvstore_create("local", &w->kv), MXC_OK);
  const int64_t key = 0;
  ASSERT_EQ(mxc_kvstore_init(w->kv, 1, &key, nullptr, &w->arr), MXC_OK);
  const char *k[] = {"units"}, *v[] = {"2"};
  ASSERT_EQ(mxc_block_create("dense", "hb", k, v, 1, &w->block), MXC_OK);
  ASSERT_EQ(mxc_block_initialize(w->block, "ones", nullptr, nullptr, 0, 0),
            MXC_OK);
  ASSERT_EQ(mxc_optimizer_create(w->block, "sgd_update", nullptr, nullptr, 0,
                                 &w->opt),
            MXC_OK);
  ASSERT_EQ(mxc_block_create("l2_loss", nullptr, nullptr, nullptr, 0, &w->loss),
            MXC_OK);
  ASSERT_EQ(mxc_fit_create(w->block, w->loss, w->opt, nullptr, nullptr, 0,
                           &w->fit),
            MXC_OK);
}

// One handle of every kind, made and freed.
void make_freed(World *w) {
  mxc_ndarray a = make_array(0.0f);
  w->freed[ND] = reinterpret_cast<uintptr_t>(a);
  mxc_ndarray_free(a);
  mxc_ndarray_list l = nullptr;
  ASSERT_EQ(mxc_ndarray_load(w->params.c_str(), &l), MXC_OK);
  w->freed[LIST] = reinterpret_cast<uintptr_t>(l);
  mxc_ndarray_list_free(l);
  mxc_data_iter it = nullptr;
  ASSERT_EQ(mxc_data_iter_csv_create(w->csv.c_str(), nullptr, 0, 1, 0, -1,
                                     MXC_LAST_BATCH_PAD, &it),
            MXC_OK);
  w->freed[ITER] = reinterpret_cast<uintptr_t>(it);
  mxc_data_iter_free(it);
  mxc_symbol s = nullptr;
  ASSERT_EQ(mxc_symbol_copy(w->sym, &s), MXC_OK);
  w->freed[SYM] = reinterpret_cast<uintptr_t>(s);
  mxc_symbol_free(s);
  mxc_executor e = nullptr;
  ASSERT_EQ(mxc_executor_reshape(w->ex, 0, nullptr, nullptr, nullptr, &e),
            MXC_OK);
  w->freed[EXEC] = reinterpret_cast<uintptr_t>(e);
  mxc_executor_free(e);
  mxc_str_list sl = nullptr;
  ASSERT_EQ(mxc_symbol_list_outputs(w->sym, &sl), MXC_OK);
  w->freed[STRS] = reinterpret_cast<uintptr_t>(sl);
  mxc_str_list_free(sl);
  mxc_infer inf = nullptr;
  ASSERT_EQ(mxc_symbol_infer_type(w->sym, 0, nullptr, nullptr, 1, &inf),
            MXC_OK);
  w->freed[INFER] = reinterpret_cast<uintptr_t>(inf);
  mxc_infer_free(inf);
  // A context kept after its function ended.
  ASSERT_EQ(mxc_engine_push(keep_ctx, &w->freed[CTX], nullptr, nullptr, 0,
                            &w->arr2, 1, 0, "keep_ctx"),
            MXC_OK);
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  ASSERT_NE(w->freed[CTX], 0u);
  mxc_predictor p = nullptr;
  ASSERT_EQ(mxc_predictor_clone(w->pred, &p), MXC_OK);
  w->freed[PRED] = reinterpret_cast<uintptr_t>(p);
  mxc_predictor_free(p);
  mxc_recordio rec = nullptr;
  ASSERT_EQ(mxc_recordio_open(w->rec_path.c_str(), nullptr, "r", &rec),
            MXC_OK);
  w->freed[REC] = reinterpret_cast<uintptr_t>(rec);
  mxc_recordio_free(rec);
  mxc_kvstore kv = nullptr;
  ASSERT_EQ(mxc_kvstore_create("local", &kv), MXC_OK);
  w->freed[KV] = reinterpret_cast<uintptr_t>(kv);
  mxc_kvstore_free(kv);
  mxc_scope sc = nullptr;
  ASSERT_EQ(mxc_scope_begin(&sc), MXC_OK);
  w->freed[SCOPE] = reinterpret_cast<uintptr_t>(sc);
  ASSERT_EQ(mxc_scope_end(sc), MXC_OK);
  mxc_block b = nullptr;
  ASSERT_EQ(mxc_block_create("flatten", nullptr, nullptr, nullptr, 0, &b),
            MXC_OK);
  w->freed[BLOCK] = reinterpret_cast<uintptr_t>(b);
  mxc_block_free(b);
  mxc_optimizer o = nullptr;
  ASSERT_EQ(mxc_optimizer_create(w->block, "sgd_update", nullptr, nullptr, 0,
                                 &o),
            MXC_OK);
  w->freed[OPT] = reinterpret_cast<uintptr_t>(o);
  mxc_optimizer_free(o);
  mxc_fit f = nullptr;
  ASSERT_EQ(mxc_fit_create(w->block, w->loss, w->opt, nullptr, nullptr, 0, &f),
            MXC_OK);
  w->freed[FIT] = reinterpret_cast<uintptr_t>(f);
  mxc_fit_free(f);
}

int kv_updater(const char *, int64_t, mxc_ndarray, mxc_ndarray, void *) {
  return MXC_OK;
}

template <class T>
T as(uintptr_t h) {
  return reinterpret_cast<T>(h);
}

// The table: each entry passes `h` as its first handle argument (the
// first element for arrays of handles) and valid values elsewhere.
std::vector<Entry> table(World *w) {
  static float buf[4];
  static int64_t i64, i64b;
  static int i32;
  static double dbl;
  static const char *cs;
  static char *str;
  static void *ptr;
  static struct DLManagedTensor *dl;
  static int64_t dims[MXC_MAX_NDIM];
  auto o = [] { return static_cast<mxc_ndarray>(nullptr); };
  std::string params = w->params, tmp = tmp_path("out.file");
  return {
      {"mxc_ndarray_free", ND, [](uintptr_t h) { mxc_ndarray_free(as<mxc_ndarray>(h)); return -1; }},
      {"mxc_ndarray_shape", ND, [](uintptr_t h) { const int64_t *s; return mxc_ndarray_shape(as<mxc_ndarray>(h), &i32, &s); }},
      {"mxc_ndarray_size", ND, [](uintptr_t h) { return mxc_ndarray_size(as<mxc_ndarray>(h), &i64); }},
      {"mxc_ndarray_dtype", ND, [](uintptr_t h) { return mxc_ndarray_dtype(as<mxc_ndarray>(h), &i32); }},
      {"mxc_ndarray_stype", ND, [](uintptr_t h) { return mxc_ndarray_stype(as<mxc_ndarray>(h), &i32); }},
      {"mxc_ndarray_device", ND, [](uintptr_t h) { int d; return mxc_ndarray_device(as<mxc_ndarray>(h), &i32, &d); }},
      {"mxc_ndarray_copy_from_host", ND, [](uintptr_t h) { return mxc_ndarray_copy_from_host(as<mxc_ndarray>(h), buf, sizeof buf); }},
      {"mxc_ndarray_copy_to_host", ND, [](uintptr_t h) { return mxc_ndarray_copy_to_host(as<mxc_ndarray>(h), buf, sizeof buf); }},
      {"mxc_ndarray_copy", ND, [w](uintptr_t h) { return mxc_ndarray_copy(as<mxc_ndarray>(h), w->arr2); }},
      {"mxc_ndarray_slice", ND, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_ndarray_slice(as<mxc_ndarray>(h), 0, 1, &r); }},
      {"mxc_ndarray_at", ND, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_ndarray_at(as<mxc_ndarray>(h), 0, &r); }},
      {"mxc_ndarray_reshape", ND, [o](uintptr_t h) { int64_t s[2] = {2, 2}; mxc_ndarray r = o(); return mxc_ndarray_reshape(as<mxc_ndarray>(h), s, 2, &r); }},
      {"mxc_ndarray_wait_to_read", ND, [](uintptr_t h) { return mxc_ndarray_wait_to_read(as<mxc_ndarray>(h)); }},
      {"mxc_ndarray_wait_to_write", ND, [](uintptr_t h) { return mxc_ndarray_wait_to_write(as<mxc_ndarray>(h)); }},
      {"mxc_ndarray_save", ND, [tmp](uintptr_t h) { mxc_ndarray a = as<mxc_ndarray>(h); return mxc_ndarray_save(tmp.c_str(), &a, nullptr, 1); }},
      {"mxc_ndarray_save_format", ND, [tmp](uintptr_t h) { mxc_ndarray a = as<mxc_ndarray>(h); return mxc_ndarray_save_format(tmp.c_str(), &a, nullptr, 1, MXC_FILE_FORMAT_MXNET); }},
      {"mxc_checkpoint_save", SYM, [tmp](uintptr_t h) { return mxc_checkpoint_save(tmp.c_str(), 0, as<mxc_symbol>(h), 0, nullptr, nullptr, 0, nullptr, nullptr); }},
      {"mxc_ndarray_list_free", LIST, [](uintptr_t h) { mxc_ndarray_list_free(as<mxc_ndarray_list>(h)); return -1; }},
      {"mxc_ndarray_list_size", LIST, [](uintptr_t h) { return mxc_ndarray_list_size(as<mxc_ndarray_list>(h), &i32); }},
      {"mxc_ndarray_list_get", LIST, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_ndarray_list_get(as<mxc_ndarray_list>(h), 0, &r); }},
      {"mxc_ndarray_list_name", LIST, [](uintptr_t h) { return mxc_ndarray_list_name(as<mxc_ndarray_list>(h), 0, &cs); }},
      {"mxc_ndarray_to_dlpack", ND, [](uintptr_t h) { return mxc_ndarray_to_dlpack(as<mxc_ndarray>(h), &dl); }},
      {"mxc_engine_push", ND, [](uintptr_t h) { mxc_ndarray a = as<mxc_ndarray>(h); return mxc_engine_push(push_noop, nullptr, nullptr, &a, 1, nullptr, 0, 0, "t"); }},
      {"mxc_engine_push_async", ND, [](uintptr_t h) { mxc_ndarray a = as<mxc_ndarray>(h); return mxc_engine_push_async(push_noop_async, nullptr, nullptr, &a, 1, nullptr, 0, 0, "t"); }},
      {"mxc_opctx_data", CTX, [](uintptr_t h) { return mxc_opctx_data(as<mxc_opctx>(h), 0, &ptr, nullptr); }},
      {"mxc_opctx_set_error", CTX, [](uintptr_t h) { return mxc_opctx_set_error(as<mxc_opctx>(h), "m"); }},
      {"mxc_opctx_complete", CTX, [](uintptr_t h) { return mxc_opctx_complete(as<mxc_opctx>(h), MXC_OK, nullptr); }},
      {"mxc_op_invoke", ND, [w, o](uintptr_t h) { mxc_ndarray a = as<mxc_ndarray>(h), r = o(); return mxc_op_invoke(w->relu, nullptr, nullptr, 0, &a, 1, &r, 1, nullptr); }},
      {"mxc_data_iter_free", ITER, [](uintptr_t h) { mxc_data_iter_free(as<mxc_data_iter>(h)); return -1; }},
      {"mxc_data_iter_next", ITER, [](uintptr_t h) { return mxc_data_iter_next(as<mxc_data_iter>(h), &i32); }},
      {"mxc_data_iter_data", ITER, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_data_iter_data(as<mxc_data_iter>(h), &r); }},
      {"mxc_data_iter_label", ITER, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_data_iter_label(as<mxc_data_iter>(h), &r); }},
      {"mxc_data_iter_pad", ITER, [](uintptr_t h) { return mxc_data_iter_pad(as<mxc_data_iter>(h), &i64); }},
      {"mxc_data_iter_reset", ITER, [](uintptr_t h) { return mxc_data_iter_reset(as<mxc_data_iter>(h)); }},
      {"mxc_data_iter_num_examples", ITER, [](uintptr_t h) { return mxc_data_iter_num_examples(as<mxc_data_iter>(h), &i64); }},
      {"mxc_data_iter_set_parts", ITER, [](uintptr_t h) { return mxc_data_iter_set_parts(as<mxc_data_iter>(h), 1, 0); }},
      {"mxc_init_array", ND, [](uintptr_t h) { return mxc_init_array(as<mxc_ndarray>(h), "zeros", nullptr, nullptr, 0); }},
      {"mxc_metric_accuracy", ND, [w](uintptr_t h) { return mxc_metric_accuracy(as<mxc_ndarray>(h), w->label, &i64, &i64b); }},
      {"mxc_metric_cross_entropy", ND, [w](uintptr_t h) { return mxc_metric_cross_entropy(as<mxc_ndarray>(h), w->label, 1e-9, &dbl, &i64); }},
      {"mxc_ndarray_nnz", ND, [](uintptr_t h) { return mxc_ndarray_nnz(as<mxc_ndarray>(h), &i64); }},
      {"mxc_ndarray_sparse_data", ND, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_ndarray_sparse_data(as<mxc_ndarray>(h), &r); }},
      {"mxc_ndarray_aux", ND, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_ndarray_aux(as<mxc_ndarray>(h), 0, &r); }},
      {"mxc_ndarray_check_format", ND, [](uintptr_t h) { return mxc_ndarray_check_format(as<mxc_ndarray>(h), 1); }},
      {"mxc_ndarray_cast_storage", ND, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_ndarray_cast_storage(as<mxc_ndarray>(h), MXC_STYPE_DEFAULT, &r); }},
      {"mxc_str_list_free", STRS, [](uintptr_t h) { mxc_str_list_free(as<mxc_str_list>(h)); return -1; }},
      {"mxc_str_list_size", STRS, [](uintptr_t h) { return mxc_str_list_size(as<mxc_str_list>(h), &i32); }},
      {"mxc_str_list_get", STRS, [](uintptr_t h) { return mxc_str_list_get(as<mxc_str_list>(h), 0, &cs); }},
      {"mxc_symbol_create", SYM, [w](uintptr_t h) { mxc_symbol in = as<mxc_symbol>(h), r = nullptr; return mxc_symbol_create(w->relu, nullptr, nullptr, 0, nullptr, nullptr, &in, 1, &r); }},
      {"mxc_symbol_compose", SYM, [w](uintptr_t h) { mxc_symbol r = nullptr; return mxc_symbol_compose(as<mxc_symbol>(h), nullptr, &w->sym, 1, &r); }},
      {"mxc_symbol_free", SYM, [](uintptr_t h) { mxc_symbol_free(as<mxc_symbol>(h)); return -1; }},
      {"mxc_symbol_copy", SYM, [](uintptr_t h) { mxc_symbol r = nullptr; return mxc_symbol_copy(as<mxc_symbol>(h), &r); }},
      {"mxc_symbol_group", SYM, [](uintptr_t h) { mxc_symbol s = as<mxc_symbol>(h), r = nullptr; return mxc_symbol_group(&s, 1, &r); }},
      {"mxc_symbol_num_outputs", SYM, [](uintptr_t h) { return mxc_symbol_num_outputs(as<mxc_symbol>(h), &i32); }},
      {"mxc_symbol_output", SYM, [](uintptr_t h) { mxc_symbol r = nullptr; return mxc_symbol_output(as<mxc_symbol>(h), 0, &r); }},
      {"mxc_symbol_internals", SYM, [](uintptr_t h) { mxc_symbol r = nullptr; return mxc_symbol_internals(as<mxc_symbol>(h), &r); }},
      {"mxc_symbol_output_by_name", SYM, [](uintptr_t h) { mxc_symbol r = nullptr; return mxc_symbol_output_by_name(as<mxc_symbol>(h), "r_output", &r); }},
      {"mxc_symbol_name", SYM, [](uintptr_t h) { return mxc_symbol_name(as<mxc_symbol>(h), &str); }},
      {"mxc_symbol_list_arguments", SYM, [](uintptr_t h) { mxc_str_list r = nullptr; return mxc_symbol_list_arguments(as<mxc_symbol>(h), &r); }},
      {"mxc_symbol_list_outputs", SYM, [](uintptr_t h) { mxc_str_list r = nullptr; return mxc_symbol_list_outputs(as<mxc_symbol>(h), &r); }},
      {"mxc_symbol_list_auxiliary_states", SYM, [](uintptr_t h) { mxc_str_list r = nullptr; return mxc_symbol_list_auxiliary_states(as<mxc_symbol>(h), &r); }},
      {"mxc_symbol_set_attr", SYM, [](uintptr_t h) { return mxc_symbol_set_attr(as<mxc_symbol>(h), "k", "v"); }},
      {"mxc_symbol_get_attr", SYM, [](uintptr_t h) { return mxc_symbol_get_attr(as<mxc_symbol>(h), "k", &i32, &str); }},
      {"mxc_symbol_attr_keys", SYM, [](uintptr_t h) { mxc_str_list r = nullptr; return mxc_symbol_attr_keys(as<mxc_symbol>(h), &r); }},
      {"mxc_symbol_to_json", SYM, [](uintptr_t h) { return mxc_symbol_to_json(as<mxc_symbol>(h), &str); }},
      {"mxc_symbol_save", SYM, [tmp](uintptr_t h) { return mxc_symbol_save(as<mxc_symbol>(h), tmp.c_str()); }},
      {"mxc_symbol_to_dot", SYM, [](uintptr_t h) { return mxc_symbol_to_dot(as<mxc_symbol>(h), 0, nullptr, nullptr, nullptr, &str); }},
      {"mxc_symbol_infer_shape", SYM, [](uintptr_t h) { mxc_infer r = nullptr; return mxc_symbol_infer_shape(as<mxc_symbol>(h), 0, nullptr, nullptr, nullptr, 1, &r); }},
      {"mxc_symbol_infer_type", SYM, [](uintptr_t h) { mxc_infer r = nullptr; return mxc_symbol_infer_type(as<mxc_symbol>(h), 0, nullptr, nullptr, 1, &r); }},
      {"mxc_symbol_infer_storage_type", SYM, [](uintptr_t h) { mxc_infer r = nullptr; return mxc_symbol_infer_storage_type(as<mxc_symbol>(h), 0, nullptr, nullptr, &r); }},
      {"mxc_infer_free", INFER, [](uintptr_t h) { mxc_infer_free(as<mxc_infer>(h)); return -1; }},
      {"mxc_infer_count", INFER, [](uintptr_t h) { return mxc_infer_count(as<mxc_infer>(h), MXC_INFER_ARGS, &i32); }},
      {"mxc_infer_shape", INFER, [](uintptr_t h) { return mxc_infer_shape(as<mxc_infer>(h), MXC_INFER_ARGS, 0, &i32, dims); }},
      {"mxc_infer_dtype", INFER, [](uintptr_t h) { return mxc_infer_dtype(as<mxc_infer>(h), MXC_INFER_ARGS, 0, &i32); }},
      {"mxc_infer_stype", INFER, [](uintptr_t h) { return mxc_infer_stype(as<mxc_infer>(h), MXC_INFER_ARGS, 0, &i32); }},
      {"mxc_executor_bind", SYM, [w](uintptr_t h) { mxc_executor r = nullptr; return mxc_executor_bind(as<mxc_symbol>(h), MXC_DEVICE_CPU, 0, 1, &w->arr, nullptr, nullptr, 0, nullptr, 0, &r); }},
      {"mxc_executor_simple_bind", SYM, [](uintptr_t h) { mxc_executor r = nullptr; return mxc_executor_simple_bind(as<mxc_symbol>(h), MXC_DEVICE_CPU, 0, 0, nullptr, nullptr, nullptr, nullptr, MXC_REQ_NULL, 0, nullptr, nullptr, 0, &r); }},
      {"mxc_executor_free", EXEC, [](uintptr_t h) { mxc_executor_free(as<mxc_executor>(h)); return -1; }},
      {"mxc_executor_forward", EXEC, [](uintptr_t h) { return mxc_executor_forward(as<mxc_executor>(h), 0); }},
      {"mxc_executor_backward", EXEC, [](uintptr_t h) { return mxc_executor_backward(as<mxc_executor>(h), 0, nullptr); }},
      {"mxc_executor_num_outputs", EXEC, [](uintptr_t h) { return mxc_executor_num_outputs(as<mxc_executor>(h), &i32); }},
      {"mxc_executor_output", EXEC, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_executor_output(as<mxc_executor>(h), 0, &r); }},
      {"mxc_executor_arg", EXEC, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_executor_arg(as<mxc_executor>(h), "x", &r); }},
      {"mxc_executor_grad", EXEC, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_executor_grad(as<mxc_executor>(h), "x", &r); }},
      {"mxc_executor_aux", EXEC, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_executor_aux(as<mxc_executor>(h), "x", &r); }},
      {"mxc_executor_reshape", EXEC, [](uintptr_t h) { mxc_executor r = nullptr; return mxc_executor_reshape(as<mxc_executor>(h), 0, nullptr, nullptr, nullptr, &r); }},
      {"mxc_executor_set_monitor", EXEC, [](uintptr_t h) { return mxc_executor_set_monitor(as<mxc_executor>(h), nullptr, nullptr); }},
      {"mxc_executor_memory", EXEC, [](uintptr_t h) { return mxc_executor_memory(as<mxc_executor>(h), &i64, &i64b); }},
      {"mxc_executor_debug_str", EXEC, [](uintptr_t h) { return mxc_executor_debug_str(as<mxc_executor>(h), &str); }},
      {"mxc_executor_save_params", EXEC, [tmp](uintptr_t h) { return mxc_executor_save_params(as<mxc_executor>(h), tmp.c_str(), 0, nullptr); }},
      {"mxc_executor_load_params", EXEC, [params](uintptr_t h) { return mxc_executor_load_params(as<mxc_executor>(h), params.c_str(), 1); }},
      {"mxc_autograd_mark_variables", ND, [w](uintptr_t h) { mxc_ndarray v = as<mxc_ndarray>(h); return mxc_autograd_mark_variables(1, &v, nullptr, &w->arr2); }},
      {"mxc_autograd_backward", ND, [](uintptr_t h) { mxc_ndarray a = as<mxc_ndarray>(h); return mxc_autograd_backward(1, &a, nullptr, 0); }},
      {"mxc_autograd_get_grad", ND, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_autograd_get_grad(as<mxc_ndarray>(h), &r); }},
      {"mxc_predictor_clone", PRED, [](uintptr_t h) { mxc_predictor r = nullptr; return mxc_predictor_clone(as<mxc_predictor>(h), &r); }},
      {"mxc_predictor_reshape", PRED, [](uintptr_t h) { mxc_predictor r = nullptr; return mxc_predictor_reshape(as<mxc_predictor>(h), 0, nullptr, nullptr, nullptr, &r); }},
      {"mxc_predictor_free", PRED, [](uintptr_t h) { mxc_predictor_free(as<mxc_predictor>(h)); return -1; }},
      {"mxc_predictor_set_input", PRED, [](uintptr_t h) { return mxc_predictor_set_input(as<mxc_predictor>(h), "x", buf, sizeof buf); }},
      {"mxc_predictor_set_input_array", PRED, [w](uintptr_t h) { return mxc_predictor_set_input_array(as<mxc_predictor>(h), "x", w->arr); }},
      {"mxc_predictor_forward", PRED, [](uintptr_t h) { return mxc_predictor_forward(as<mxc_predictor>(h)); }},
      {"mxc_predictor_num_outputs", PRED, [](uintptr_t h) { return mxc_predictor_num_outputs(as<mxc_predictor>(h), &i32); }},
      {"mxc_predictor_output_shape", PRED, [](uintptr_t h) { return mxc_predictor_output_shape(as<mxc_predictor>(h), 0, &i32, dims, nullptr); }},
      {"mxc_predictor_get_output", PRED, [](uintptr_t h) { return mxc_predictor_get_output(as<mxc_predictor>(h), 0, buf, sizeof buf); }},
      // NULL is a valid scope for these two (the whole process): the
      // NULL case reports "accepted" (-1) like the free functions.
      {"mxc_scope_stats", SCOPE, [](uintptr_t h) { return h ? mxc_scope_stats(as<mxc_scope>(h), &i64, &i64b) : -1; }},
      {"mxc_handle_dump", SCOPE, [](uintptr_t h) { if (!h) return -1; int rc = mxc_handle_dump(as<mxc_scope>(h), &str); if (rc == MXC_OK) mxc_string_free(str); return rc; }},
      {"mxc_scope_end", SCOPE, [](uintptr_t h) { return mxc_scope_end(as<mxc_scope>(h)); }},
      {"mxc_recordio_free", REC, [](uintptr_t h) { mxc_recordio_free(as<mxc_recordio>(h)); return -1; }},
      {"mxc_recordio_read", REC, [](uintptr_t h) { return mxc_recordio_read(as<mxc_recordio>(h), &i64); }},
      {"mxc_recordio_read_key", REC, [](uintptr_t h) { return mxc_recordio_read_key(as<mxc_recordio>(h), 0, &i64); }},
      {"mxc_recordio_data", REC, [](uintptr_t h) { const void *d; return mxc_recordio_data(as<mxc_recordio>(h), &d, &i64); }},
      {"mxc_recordio_copy", REC, [](uintptr_t h) { return mxc_recordio_copy(as<mxc_recordio>(h), buf, sizeof buf); }},
      {"mxc_recordio_write", REC, [](uintptr_t h) { return mxc_recordio_write(as<mxc_recordio>(h), buf, sizeof buf); }},
      {"mxc_recordio_write_key", REC, [](uintptr_t h) { return mxc_recordio_write_key(as<mxc_recordio>(h), 1, buf, sizeof buf); }},
      {"mxc_recordio_flush", REC, [](uintptr_t h) { return mxc_recordio_flush(as<mxc_recordio>(h)); }},
      {"mxc_recordio_num_keys", REC, [](uintptr_t h) { return mxc_recordio_num_keys(as<mxc_recordio>(h), &i64); }},
      {"mxc_recordio_key", REC, [](uintptr_t h) { return mxc_recordio_key(as<mxc_recordio>(h), 0, &i64); }},
      {"mxc_recordio_tell", REC, [](uintptr_t h) { return mxc_recordio_tell(as<mxc_recordio>(h), &i64); }},
      {"mxc_recordio_seek", REC, [](uintptr_t h) { return mxc_recordio_seek(as<mxc_recordio>(h), 0); }},
      {"mxc_predictor_output", PRED, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_predictor_output(as<mxc_predictor>(h), 0, &r); }},
      {"mxc_kvstore_free", KV, [](uintptr_t h) { mxc_kvstore_free(as<mxc_kvstore>(h)); return -1; }},
      {"mxc_kvstore_type", KV, [](uintptr_t h) { return mxc_kvstore_type(as<mxc_kvstore>(h), &cs); }},
      {"mxc_kvstore_rank", KV, [](uintptr_t h) { return mxc_kvstore_rank(as<mxc_kvstore>(h), &i32); }},
      {"mxc_kvstore_num_workers", KV, [](uintptr_t h) { return mxc_kvstore_num_workers(as<mxc_kvstore>(h), &i32); }},
      {"mxc_kvstore_barrier", KV, [](uintptr_t h) { return mxc_kvstore_barrier(as<mxc_kvstore>(h)); }},
      {"mxc_kvstore_init", KV, [w](uintptr_t h) { const int64_t k = 1; return mxc_kvstore_init(as<mxc_kvstore>(h), 1, &k, nullptr, &w->arr); }},
      {"mxc_kvstore_push", KV, [w](uintptr_t h) { const int64_t k = 0; return mxc_kvstore_push(as<mxc_kvstore>(h), 1, &k, nullptr, &w->arr, 0); }},
      {"mxc_kvstore_pull", KV, [w](uintptr_t h) { const int64_t k = 0; return mxc_kvstore_pull(as<mxc_kvstore>(h), 1, &k, nullptr, &w->arr2, 0); }},
      {"mxc_kvstore_pushpull", KV, [w](uintptr_t h) { const int64_t k = 0; return mxc_kvstore_pushpull(as<mxc_kvstore>(h), 1, &k, nullptr, &w->arr, &w->arr2, 0); }},
      {"mxc_kvstore_set_optimizer", KV, [](uintptr_t h) { const char *k[] = {"lr"}, *v[] = {"0.1"}; return mxc_kvstore_set_optimizer(as<mxc_kvstore>(h), "sgd_update", k, v, 1); }},
      {"mxc_kvstore_set_updater", KV, [](uintptr_t h) { return mxc_kvstore_set_updater(as<mxc_kvstore>(h), kv_updater, nullptr); }},
      {"mxc_kvstore_set_updater_ex", KV, [](uintptr_t h) { return mxc_kvstore_set_updater_ex(as<mxc_kvstore>(h), kv_updater, nullptr, nullptr); }},
      {"mxc_ndarray_detach", ND, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_ndarray_detach(as<mxc_ndarray>(h), &r); }},
      {"mxc_block_free", BLOCK, [](uintptr_t h) { mxc_block_free(as<mxc_block>(h)); return -1; }},
      {"mxc_block_add", BLOCK, [w](uintptr_t h) { return mxc_block_add(as<mxc_block>(h), w->block); }},
      {"mxc_block_num_children", BLOCK, [](uintptr_t h) { return mxc_block_num_children(as<mxc_block>(h), &i32); }},
      {"mxc_block_child", BLOCK, [](uintptr_t h) { mxc_block r = nullptr; return mxc_block_child(as<mxc_block>(h), 0, &r); }},
      {"mxc_block_name", BLOCK, [](uintptr_t h) { return mxc_block_name(as<mxc_block>(h), &cs); }},
      {"mxc_block_initialize", BLOCK, [](uintptr_t h) { return mxc_block_initialize(as<mxc_block>(h), "zeros", nullptr, nullptr, 0, 0); }},
      {"mxc_block_forward", BLOCK, [w, o](uintptr_t h) { mxc_ndarray r = o(); return mxc_block_forward(as<mxc_block>(h), 1, &w->arr, &r); }},
      {"mxc_block_num_params", BLOCK, [](uintptr_t h) { return mxc_block_num_params(as<mxc_block>(h), &i32); }},
      {"mxc_block_param_name", BLOCK, [](uintptr_t h) { return mxc_block_param_name(as<mxc_block>(h), 0, &cs); }},
      {"mxc_block_param", BLOCK, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_block_param(as<mxc_block>(h), 0, &r); }},
      {"mxc_block_param_grad", BLOCK, [o](uintptr_t h) { mxc_ndarray r = o(); return mxc_block_param_grad(as<mxc_block>(h), 0, &r); }},
      {"mxc_block_save_params", BLOCK, [tmp](uintptr_t h) { return mxc_block_save_params(as<mxc_block>(h), tmp.c_str()); }},
      {"mxc_block_load_params", BLOCK, [params](uintptr_t h) { return mxc_block_load_params(as<mxc_block>(h), params.c_str()); }},
      {"mxc_block_hybridize", BLOCK, [](uintptr_t h) { return mxc_block_hybridize(as<mxc_block>(h), 1); }},
      {"mxc_block_export", BLOCK, [tmp](uintptr_t h) { return mxc_block_export(as<mxc_block>(h), tmp.c_str(), 0); }},
      {"mxc_optimizer_create", BLOCK, [](uintptr_t h) { mxc_optimizer r = nullptr; return mxc_optimizer_create(as<mxc_block>(h), "sgd_update", nullptr, nullptr, 0, &r); }},
      {"mxc_optimizer_free", OPT, [](uintptr_t h) { mxc_optimizer_free(as<mxc_optimizer>(h)); return -1; }},
      {"mxc_optimizer_step", OPT, [](uintptr_t h) { return mxc_optimizer_step(as<mxc_optimizer>(h), 1); }},
      {"mxc_optimizer_set_lr", OPT, [](uintptr_t h) { return mxc_optimizer_set_lr(as<mxc_optimizer>(h), 0.1); }},
      {"mxc_fit_create", BLOCK, [w](uintptr_t h) { mxc_fit r = nullptr; return mxc_fit_create(as<mxc_block>(h), w->loss, w->opt, nullptr, nullptr, 0, &r); }},
      {"mxc_fit_free", FIT, [](uintptr_t h) { mxc_fit_free(as<mxc_fit>(h)); return -1; }},
      {"mxc_fit_add_listener", FIT, [](uintptr_t h) { return mxc_fit_add_listener(as<mxc_fit>(h), [](void *, int, mxc_fit) { return MXC_OK; }, nullptr, nullptr); }},
      {"mxc_fit_run", FIT, [w](uintptr_t h) { return mxc_fit_run(as<mxc_fit>(h), w->it, nullptr); }},
      {"mxc_fit_value", FIT, [](uintptr_t h) { return mxc_fit_value(as<mxc_fit>(h), "lr", &dbl); }},
      {"mxc_fit_stop", FIT, [](uintptr_t h) { return mxc_fit_stop(as<mxc_fit>(h)); }},
      {"mxc_fit_set_kvstore", FIT, [w](uintptr_t h) { return mxc_fit_set_kvstore(as<mxc_fit>(h), w->kv); }},
      {"mxc_fit_save_checkpoint", FIT, [tmp](uintptr_t h) { return mxc_fit_save_checkpoint(as<mxc_fit>(h), tmp.c_str()); }},
      {"mxc_fit_load_checkpoint", FIT, [params](uintptr_t h) { return mxc_fit_load_checkpoint(as<mxc_fit>(h), params.c_str()); }},
      {"mxc_optimizer_get_lr", OPT, [](uintptr_t h) { return mxc_optimizer_get_lr(as<mxc_optimizer>(h), &dbl); }},
  };
}

// The header without comments, whitespace runs folded to one space.
std::string header_text() {
  std::ifstream f("c_api/include/mxc/mxc.h");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string in = ss.str(), out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in.compare(i, 2, "/*") == 0) {
      size_t e = in.find("*/", i + 2);
      i = e == std::string::npos ? in.size() : e + 1;
      out += ' ';
    } else if (std::isspace((unsigned char)in[i])) {
      if (out.empty() || out.back() != ' ') out += ' ';
    } else {
      out += in[i];
    }
  }
  return out;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// A parameter through which the function reads a handle: a handle by
// value ("mxc_symbol sym") or an input array of them ("const mxc_ndarray
// *args"). Out-parameters ("mxc_ndarray *out") do not count.
bool reads_handle(const std::string &param) {
  static const char *kinds[] = {"mxc_ndarray_list", "mxc_ndarray",
                                "mxc_symbol",       "mxc_executor",
                                "mxc_data_iter",    "mxc_str_list",
                                "mxc_infer",        "mxc_opctx",
                                "mxc_predictor",    "mxc_recordio",
                                "mxc_kvstore",      "mxc_scope",
                                "mxc_block",        "mxc_optimizer",
                                "mxc_fit"};
  std::string p = trim(param);
  for (const char *k : kinds) {
    std::string by_value = std::string(k) + " ";
    if (p.compare(0, by_value.size(), by_value) == 0 &&
        p.find('*') == std::string::npos) {
      return true;
    }
    std::string array = std::string("const ") + k + " *";
    if (p.compare(0, array.size(), array) == 0) return true;
  }
  return false;
}

// Public functions with a handle they read, from the header.
std::set<std::string> header_functions() {
  std::string s = header_text();
  std::set<std::string> out;
  for (size_t at = s.find("MXC_API "); at != std::string::npos;
       at = s.find("MXC_API ", at + 1)) {
    size_t open = s.find('(', at), close = s.find(')', open);
    if (open == std::string::npos || close == std::string::npos) break;
    if (s.compare(at, 16, "MXC_API int mxc_") != 0 &&
        s.compare(at, 17, "MXC_API void mxc_") != 0 &&
        s.compare(at, 24, "MXC_API const char *mxc_") != 0) {
      continue;  // the #define of MXC_API itself
    }
    size_t name_end = open;
    while (name_end > at && s[name_end - 1] == ' ') --name_end;
    size_t name_begin = s.rfind(' ', name_end - 1) + 1;
    if (s[name_begin] == '*') ++name_begin;
    std::string name = s.substr(name_begin, name_end - name_begin);
    std::stringstream params(s.substr(open + 1, close - open - 1));
    std::string p;
    bool reads = false;
    while (std::getline(params, p, ',')) reads = reads || reads_handle(p);
    if (reads) out.insert(name);
  }
  return out;
}

class Handles : public ::testing::Test {
 protected:
  void SetUp() override {
    make_world(&w_);
    make_freed(&w_);
    ASSERT_EQ(mxc_scope_begin(&w_.scope), MXC_OK);
  }
  void TearDown() override {
    mxc_wait_all();
    mxc_ndarray_free(w_.arr);
    mxc_ndarray_free(w_.arr2);
    mxc_ndarray_free(w_.label);
    mxc_ndarray_list_free(w_.list);
    mxc_data_iter_free(w_.it);
    mxc_executor_free(w_.ex);
    mxc_symbol_free(w_.sym);
    mxc_str_list_free(w_.strs);
    mxc_infer_free(w_.inf);
    mxc_predictor_free(w_.pred);
    mxc_recordio_free(w_.rec);
    mxc_kvstore_free(w_.kv);
    EXPECT_EQ(mxc_scope_end(w_.scope), MXC_OK) << mxc_last_error();
    mxc_fit_free(w_.fit);
    mxc_block_free(w_.loss);
    mxc_optimizer_free(w_.opt);
    mxc_block_free(w_.block);
  }
  World w_;
};

TEST_F(Handles, TableCoversEveryFunctionOfTheHeader) {
  std::set<std::string> in_header = header_functions();
  ASSERT_GT(in_header.size(), 80u) << "header not found or not parsed";
  std::set<std::string> in_table;
  for (const Entry &e : table(&w_)) in_table.insert(e.name);
  for (const std::string &n : in_header) {
    EXPECT_TRUE(in_table.count(n)) << n << " takes a handle: add it to the "
                                         "table of test_handles.cc";
  }
  for (const std::string &n : in_table) {
    EXPECT_TRUE(in_header.count(n)) << n << " is not in the header";
  }
}

// rc of a table call (-1 for void functions: the thread's last error).
int status_of(int rc) { return rc == -1 ? mxc_last_error_code() : rc; }

TEST_F(Handles, FreedWrongKindAndNullAreRefused) {
  Watchdog dog("FreedWrongKindAndNullAreRefused", 120);
  int64_t unguarded0 = mxc__handle_unguarded_gets();
  for (const Entry &e : table(&w_)) {
    SCOPED_TRACE(e.name);
    uintptr_t other = e.kind == ND ? reinterpret_cast<uintptr_t>(w_.sym)
                                   : reinterpret_cast<uintptr_t>(w_.arr);
    int rc = status_of(e.call(w_.freed[e.kind]));
    EXPECT_EQ(rc, MXC_ERR_INVALID_HANDLE) << mxc_last_error();
    EXPECT_NE(std::string(mxc_last_error()).find("freed"), std::string::npos)
        << mxc_last_error();
    rc = status_of(e.call(other));
    EXPECT_EQ(rc, MXC_ERR_INVALID_HANDLE) << mxc_last_error();
    EXPECT_NE(std::string(mxc_last_error()).find("expected a"),
              std::string::npos)
        << mxc_last_error();
    rc = e.call(0);
    if (rc != -1) {  // free functions accept NULL
      EXPECT_TRUE(rc == MXC_ERR_INVALID_ARGUMENT ||
                  rc == MXC_ERR_INVALID_HANDLE)
          << rc << " " << mxc_last_error();
    }
  }
  // Every lookup above happened inside a guarded call.
  EXPECT_EQ(mxc__handle_unguarded_gets(), unguarded0);
  // The live objects passed as the wrong kind are intact.
  float out[4];
  ASSERT_EQ(mxc_ndarray_copy_to_host(w_.arr, out, sizeof out), MXC_OK);
  EXPECT_EQ(out[0], 1.0f);
  int n = 0;
  ASSERT_EQ(mxc_symbol_num_outputs(w_.sym, &n), MXC_OK);
  EXPECT_EQ(n, 1);
}

// One thread frees handles that others keep using: each call either
// fails with MXC_ERR_INVALID_HANDLE or works on the whole object (ASan
// and TSan check the "never freed memory" part).
TEST_F(Handles, FreeWhileOtherThreadsUseTheHandle) {
  Watchdog dog("FreeWhileOtherThreadsUseTheHandle", 120);
  const int rounds = 200;
  for (int r = 0; r < rounds; ++r) {
    mxc_ndarray a = make_array((float)r, 64);
    mxc_symbol s = nullptr;
    ASSERT_EQ(mxc_symbol_copy(w_.sym, &s), MXC_OK);
    std::atomic<int> go{0}, bad{0};
    std::vector<std::thread> users;
    for (int t = 0; t < 3; ++t) {
      users.emplace_back([&] {
        while (!go.load()) std::this_thread::yield();
        for (int k = 0; k < 20; ++k) {
          int64_t n = 0;
          int rc = mxc_ndarray_size(a, &n);
          if (!(rc == MXC_ERR_INVALID_HANDLE || (rc == MXC_OK && n == 64))) {
            bad++;
          }
          mxc_ndarray v = nullptr;
          rc = mxc_ndarray_slice(a, 1, 3, &v);
          if (rc == MXC_OK) mxc_ndarray_free(v);
          else if (rc != MXC_ERR_INVALID_HANDLE) bad++;
          char *json = nullptr;
          rc = mxc_symbol_to_json(s, &json);
          if (rc == MXC_OK) mxc_string_free(json);
          else if (rc != MXC_ERR_INVALID_HANDLE) bad++;
        }
      });
    }
    go = 1;
    mxc_ndarray_free(a);
    mxc_symbol_free(s);
    for (auto &u : users) u.join();
    EXPECT_EQ(bad.load(), 0) << "round " << r;
  }
  // Everything retired has been destroyed once no call is open.
  ASSERT_EQ(mxc_wait_all(), MXC_OK);
  EXPECT_EQ(mxc__handle_deferred(), 0);
}

}  // namespace
