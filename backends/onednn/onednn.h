/* Internal header of the oneDNN CPU backend (backends/onednn).
 *
 * The backend ("onednn", priority 10, CPU) attaches kernels to operators
 * of the families by name (core/op/backend.h); the descriptors' own
 * kernels stay the reference and run every call a `supports` function
 * here declines: any dtype but float32, layouts other than channel-first,
 * parameters oneDNN does not compute exactly like the reference, and
 * every call while the backend is off (MXC_ONEDNN=0 in the environment,
 * read once when the registry is built). Kernels see plain row-major
 * blobs, except where an executor keeps values channels-last between
 * oneDNN nodes (core/exec/format.c; the kernels' fmt_ok say which
 * arguments); inside a call, primitives may pick blocked layouts (format
 * tag any) and the kernel reorders at its edges. A call oneDNN turns
 * down runs the reference through mxc__fmt_compute (plain copies).
 *
 * Pieces shared by the kernel files:
 *  - one dnnl engine for the process and one stream per calling thread
 *    (mxc__dnnl_stream);
 *  - error mapping: every dnnl_status_t other than success becomes an mxc
 *    error naming the operator and the oneDNN call (MXC__DNNL_CALL);
 *  - the primitive cache (cache.c): primitives by operator, shapes,
 *    parameters and thread count, bounded, thread-safe;
 *  - the thread budget: a call runs oneDNN's OpenMP team on as many
 *    threads as the kernel pool grants it (core/op/parallel.h), one when
 *    the pool is busy, so engine workers, the pool and OpenMP never
 *    oversubscribe the machine (docs/threads.md);
 *  - run.c: execution of a cached primitive on plain user arrays, with
 *    reorders to and from the layouts the primitive chose and MXC__REQ_ADD
 *    through a reorder with a sum post-op;
 *  - parameters read through the descriptors' parameter tables by name
 *    (params.c), so a family's parameter struct can stay private. */
#ifndef MXC_BACKENDS_ONEDNN_ONEDNN_H_
#define MXC_BACKENDS_ONEDNN_ONEDNN_H_

#include <oneapi/dnnl/dnnl.h>
#include <stddef.h>
#include <stdint.h>

#include "core/op/backend.h"
#include "core/op/op.h"
#include "core/storage/storage.h"

extern const mxc__backend mxc__backend_onednn;

/* 1 unless MXC_ONEDNN=0 (read once, at the first call). */
int mxc__dnnl_enabled(void);

/* MXC_OK for dnnl_success; otherwise an mxc error naming the operator
 * (op may be NULL) and the oneDNN call: MXC_ERR_OOM for
 * dnnl_out_of_memory, MXC_ERR_UNSUPPORTED for dnnl_unimplemented,
 * MXC_ERR_INTERNAL for the rest (supports functions accept only calls
 * oneDNN takes, so any other failure is a bug). */
int mxc__dnnl_check(dnnl_status_t st, const mxc__op *op, const char *call);

/* Evaluates a oneDNN call, storing its mapped status in rc (an int the
 * caller declared) and jumping to `fail` on error: kernels release what
 * they hold in one place. */
#define MXC__DNNL_TRY(rc, op, call, fail)          \
  do {                                             \
    (rc) = mxc__dnnl_check((call), (op), #call);   \
    if (MXC__UNLIKELY((rc) != MXC_OK)) goto fail;  \
  } while (0)

/* The process's CPU engine, created at the first call (NULL and an error
 * when oneDNN cannot create it). */
int mxc__dnnl_engine(dnnl_engine_t *out);
/* The calling thread's stream on that engine, created at its first call
 * and destroyed when the thread exits. */
int mxc__dnnl_stream(dnnl_stream_t *out);

/* ---- thread budget ---- */

/* Threads for the next oneDNN call of this thread: what the kernel pool
 * grants (mxc__parallel_claim), 1 under ThreadSanitizer (which cannot
 * see libgomp's synchronisation). Sets the calling thread's OpenMP team
 * size to it; give it back with mxc__dnnl_threads_end. */
int mxc__dnnl_threads_begin(void);
void mxc__dnnl_threads_end(int nthr);
/* The team size the calling thread's current call runs with (1 outside
 * a call): part of every primitive's cache key, since oneDNN splits work
 * for the thread count it sees when it creates a primitive. */
int mxc__dnnl_threads_current(void);

/* ---- primitive cache (cache.c) ---- */

#define MXC__DNNL_KEY_MAX 2048

/* A cache key: bytes appended by the builders below. A key that would
 * overflow is marked and never cached (the primitive is built and
 * destroyed per call). */
typedef struct mxc__dnnl_key {
  size_t n;
  int overflow;
  unsigned char b[MXC__DNNL_KEY_MAX];
} mxc__dnnl_key;

void mxc__dnnl_key_init(mxc__dnnl_key *k, const char *what);
void mxc__dnnl_key_bytes(mxc__dnnl_key *k, const void *p, size_t n);
void mxc__dnnl_key_i64(mxc__dnnl_key *k, int64_t v);
void mxc__dnnl_key_shape(mxc__dnnl_key *k, const mxc__shape *s);
void mxc__dnnl_key_md(mxc__dnnl_key *k, const dnnl_memory_desc_t *md);

/* Builds a primitive for a missing key (MXC_OK and *out set, or an error
 * naming the operator). arg is the builder's own. */
typedef int (*mxc__dnnl_build_fn)(void *arg, dnnl_primitive_t *out);

/* A cached primitive, held by the caller between get and put. */
typedef struct mxc__dnnl_prim mxc__dnnl_prim;

/* The primitive for key k, built with build(arg) on a miss (outside the
 * cache's lock: two threads missing the same key both build, one result
 * is kept). Every successful get is paired with one put. A build that
 * fails other than for memory is MXC_ERR_UNSUPPORTED: oneDNN does not
 * take these shapes or parameters, and the kernels then run the
 * reference. */
int mxc__dnnl_cache_get(const mxc__dnnl_key *k, mxc__dnnl_build_fn build,
                        void *arg, mxc__dnnl_prim **out);
void mxc__dnnl_cache_put(mxc__dnnl_prim *p);
dnnl_primitive_t mxc__dnnl_prim_get(const mxc__dnnl_prim *p);
const_dnnl_primitive_desc_t mxc__dnnl_prim_pd(const mxc__dnnl_prim *p);

/* For tests: entries now, hits and misses so far, and the bound (entries
 * beyond it evict the least recently used idle one). */
typedef struct mxc__dnnl_cache_stats {
  int entries, capacity;
  int64_t hits, misses;
} mxc__dnnl_cache_stats;
void mxc__dnnl_cache_stats_get(mxc__dnnl_cache_stats *out);
/* Sets the bound (at least 1; evicts what no longer fits and is idle). */
void mxc__dnnl_cache_set_capacity(int capacity);

/* ---- running a primitive on plain arrays (run.c) ---- */

/* One argument of a primitive: its DNNL_ARG_*, the plain (row-major)
 * description of the user's array and its memory. Outputs carry their
 * write mode. */
typedef struct mxc__dnnl_arg {
  int arg;
  dnnl_memory_desc_t md;
  void *ptr;
  int is_out;
  mxc__req req;
  /* Outputs only: plain contents (md's layout) the output holds before
   * the primitive runs, for a sum post-op; NULL: none. May be ptr. */
  const void *init;
  /* Inputs only: the array's write version (mxc__dnnl_version), nonzero
   * to keep its reordered copy in the weights cache (weights.c). */
  uint64_t version;
} mxc__dnnl_arg;

/* Input i's write version from the call's context; 0 when unknown. */
uint64_t mxc__dnnl_version(const mxc__opctx *ctx, int i);

/* A temporary of `bytes` (0 allowed) for a call of op: a scratchpad or
 * an array in a primitive's layout, `what` naming it in the out-of-memory
 * message. From the CPU storage pool, released with mxc__storage_free:
 * ResNet-18's training step asked glibc for about 30 MB of such
 * temporaries above its mmap threshold, which came back each step as
 * fresh pages to fault in (7.6 thousand minor faults a step, none with
 * the pool). */
int mxc__dnnl_tmp(const mxc__op *op, size_t bytes, const char *what,
                  mxc__storage_block *out);

/* src (layout smd) into dst (dmd), or dst += src when add, through a
 * cached reorder primitive. */
int mxc__dnnl_reorder(const mxc__op *op, const dnnl_memory_desc_t *smd,
                      void *src, const dnnl_memory_desc_t *dmd, void *dst,
                      int add);

/* A primitive descriptor for the operation description desc (a
 * dnnl_*_desc_t), with attr (NULL: default) and the forward hint a
 * backward primitive needs (NULL otherwise); `what` names it in errors.
 * The caller destroys *out. */
int mxc__dnnl_pd_create(const mxc__op *op, const void *desc,
                        const_dnnl_primitive_attr_t attr,
                        const_dnnl_primitive_desc_t hint, const char *what,
                        dnnl_primitive_desc_t *out);
/* The same, then the primitive (the descriptor is released). */
/* Destroys a primitive (made by mxc__dnnl_prim_create or a reorder) under
 * the lock creation takes (run.c says why). */
void mxc__dnnl_prim_destroy(dnnl_primitive_t p);

int mxc__dnnl_prim_create(const mxc__op *op, const void *desc,
                          const_dnnl_primitive_attr_t attr,
                          const_dnnl_primitive_desc_t hint, const char *what,
                          dnnl_primitive_t *out);

/* ---- reordered weights (weights.c) ---- */

/* A hold on reordered weights: the memory (its data handle is the
 * copy) and the cache slot it belongs to, -1 for a copy of this call. */
typedef struct mxc__dnnl_wref {
  dnnl_memory_t mem;
  int slot;
} mxc__dnnl_wref;

/* The weights at ptr (plain layout `plain`, write version `version`,
 * nonzero) in layout `want`: from the cache, or reordered now (and
 * cached when room allows). Give the hold back with
 * mxc__dnnl_weights_put. */
int mxc__dnnl_weights_get(const mxc__op *op, const dnnl_memory_desc_t *plain,
                          const void *ptr, uint64_t version,
                          const dnnl_memory_desc_t *want,
                          mxc__dnnl_wref *ref);
void mxc__dnnl_weights_put(mxc__dnnl_wref *ref);
/* For tests: entries now, hits and misses so far. */
void mxc__dnnl_weights_stats(int *entries, int64_t *hits, int64_t *misses);

/* ---- max-pooling workspaces (pool_ws.c) ---- */

/* 0 when MXC_ONEDNN_POOL_WS=0 (read once): training forwards keep no
 * workspace. */
int mxc__dnnl_pool_ws_wanted(void);
/* A workspace of layout md, allocated by oneDNN (the caller's until it
 * is kept or destroyed with dnnl_memory_destroy). */
int mxc__dnnl_pool_ws_new(const mxc__op *op, const dnnl_memory_desc_t *md,
                          dnnl_memory_t *out);
/* Keeps mem, the workspace a training forward of geometry k wrote for
 * data at `data` of write version `version`, for the backward (takes
 * ownership: destroyed at once when version is 0 or there is no room).
 * Thread-safe. */
void mxc__dnnl_pool_ws_keep(const mxc__dnnl_key *k, const void *data,
                            uint64_t version, dnnl_memory_t mem);
/* The workspace kept for the same key, data and version and laid out as
 * `want`, handed to the caller (who destroys it), or NULL: the backward
 * then recomputes it. Thread-safe. */
dnnl_memory_t mxc__dnnl_pool_ws_take(const mxc__dnnl_key *k, const void *data,
                                     uint64_t version,
                                     const dnnl_memory_desc_t *want);
/* For tests: entries now, hits and misses of takes so far. */
void mxc__dnnl_pool_ws_stats(int *entries, int64_t *hits, int64_t *misses);

/* Plain float32 description of a shape (ndim 1..12), or of the shape
 * with its trailing axes from `from` on merged into one. */
int mxc__dnnl_md_plain(const mxc__op *op, const mxc__shape *s,
                       dnnl_memory_desc_t *md);
int mxc__dnnl_md_dims(const mxc__op *op, int ndims, const int64_t *dims,
                      dnnl_memory_desc_t *md);
/* Float32 description of an array of shape s in format fmt (MXC__FMT_*,
 * core/op/op.h). */
int mxc__dnnl_md_fmt(const mxc__op *op, const mxc__shape *s, int fmt,
                     dnnl_memory_desc_t *md);

/* The formats the forward kernels take for their data and output
 * (mxc__kernel.fmt_ok masks), and the fmt_ok of those whose input 0 and
 * output 0 may have them: convolution and pooling forward. */
#define MXC__DNNL_FMTS                  \
  ((1u << MXC__FMT_CHANNELS_LAST) |     \
   (1u << MXC__FMT_CHANNELS_LAST_BF16))
unsigned mxc__dnnl_fmt_data(const mxc__op *op, const void *param, int is_out,
                            int i);

/* Executes the primitive on args: inputs whose layout differs from the
 * one the primitive chose are reordered into temporaries first, outputs
 * written through temporaries when their layout differs or req is
 * MXC__REQ_ADD (a reorder with a sum post-op adds); an output with
 * MXC__REQ_NULL goes to a temporary that is dropped (ptr may be NULL).
 * The scratchpad is the library's. */
int mxc__dnnl_run(const mxc__op *op, const mxc__dnnl_prim *p,
                  const mxc__dnnl_arg *args, int n_args);

/* ---- post-ops of the fused operators ---- */

/* What the convolution and inner-product builders append after the
 * product: a sum of an extra array of the output's shape (added before
 * the activation: out = act(op(x) + sum)), then an activation. */
enum {
  MXC__DNNL_ACT_NONE,
  MXC__DNNL_ACT_RELU,
  MXC__DNNL_ACT_SIGMOID,
  MXC__DNNL_ACT_TANH,
  MXC__DNNL_ACT_SOFTRELU
};
typedef struct mxc__dnnl_post {
  int act;                /* MXC__DNNL_ACT_* */
  const mxc__blob *sum;   /* NULL: no sum */
} mxc__dnnl_post;

/* The oneDNN eltwise algorithm of an MXC__DNNL_ACT_* (not NONE), and of
 * an Activation act_type name ("relu", ...); -1 for others. */
int mxc__dnnl_act_alg(int act);
int mxc__dnnl_act_of_name(const char *name);

/* Builds an attribute carrying post (NULL or empty: no post-ops). The
 * caller destroys it. */
int mxc__dnnl_attr_post(const mxc__op *op, const mxc__dnnl_post *post,
                        dnnl_primitive_attr_t *out);

/* ---- parameters by name (params.c) ---- */

/* The field `name` of op's parameter struct param, of the given type
 * (MXC__P_*): NULL when op has no such parameter or it has another type. */
const void *mxc__dnnl_param(const mxc__op *op, const void *param,
                            const char *name, int type);
/* An enum parameter's choice as text ("max", "relu"), or NULL. */
const char *mxc__dnnl_param_enum(const mxc__op *op, const void *param,
                                 const char *name);
/* Typed readers: 1 when found (value in *out), 0 otherwise. */
int mxc__dnnl_param_int(const mxc__op *op, const void *param,
                        const char *name, int64_t *out);
int mxc__dnnl_param_bool(const mxc__op *op, const void *param,
                         const char *name, int *out);
int mxc__dnnl_param_float(const mxc__op *op, const void *param,
                          const char *name, double *out);

/* The descriptor's own kernel, for a call a oneDNN kernel turned down at
 * run time (shapes supports cannot see, a primitive oneDNN refuses): the
 * refusal's message cleared, channels-last arguments given as plain
 * copies (mxc__fmt_compute). */
int mxc__dnnl_reference(const mxc__op *op, const mxc__opctx *ctx,
                        const void *param, const mxc__blob *in, int n_in,
                        const mxc__blob *out, int n_out, const mxc__req *req);

/* ---- supports helpers ---- */

/* 1 when the backend is on, every input and given output is float32 and
 * dense. */
int mxc__dnnl_all_f32(const mxc__call_types *t);

/* ---- kernels, attached by backend.c ---- */

int mxc__dnnl_attach_conv(mxc__registry *r);
int mxc__dnnl_attach_fc(mxc__registry *r);
int mxc__dnnl_attach_pool(mxc__registry *r);
int mxc__dnnl_attach_softmax(mxc__registry *r);
int mxc__dnnl_attach_bn(mxc__registry *r);
int mxc__dnnl_attach_ln(mxc__registry *r);
int mxc__dnnl_attach_fused(mxc__registry *r);

/* Whether the Convolution / FullyConnected kernels take a call: also the
 * fused operators', whose parameters start with the layer's own. */
int mxc__dnnl_conv_supports(const mxc__op *op, const void *param,
                            const mxc__call_types *t);
int mxc__dnnl_fc_supports(const mxc__op *op, const void *param,
                          const mxc__call_types *t);

/* Convolution forward of in[0] (data), in[1] (weight), in[2] (bias when
 * !p->no_bias) into out with post-ops (NULL: none): what Convolution and
 * the fused operators run. ctx gives the weights' version (input 1) for
 * the weights cache. Calls oneDNN cannot take return MXC_ERR_UNSUPPORTED
 * and the caller runs its reference kernel. */
struct mxc__conv_param;
int mxc__dnnl_conv_forward(const mxc__op *op, const mxc__opctx *ctx,
                           const struct mxc__conv_param *p,
                           const mxc__blob *in, const mxc__blob *out,
                           mxc__req req, const mxc__dnnl_post *post);

/* Inner product out = act(x W^T + b (+ sum)) of x (batch, k) and W
 * (num_hidden, k) with post-ops: FullyConnected and its fused form. bias
 * may be NULL. */
int mxc__dnnl_inner_product(const mxc__op *op, const mxc__opctx *ctx,
                            const mxc__blob *x,
                            const mxc__blob *w, const mxc__blob *bias,
                            int64_t batch, int64_t k, const mxc__blob *out,
                            mxc__req req, const mxc__dnnl_post *post);

#endif /* MXC_BACKENDS_ONEDNN_ONEDNN_H_ */
