/* The _fused_elemwise operator (see fused.h): inference and the kernel.
 *
 * float32 programs that are chains of operators with a micro-op (scalar
 * and same-shape arithmetic, maximum/minimum, negative, abs, square, relu,
 * exp, sigmoid; see fused_internal.h) run entirely in vector registers
 * (fast.c): one load per input and one store per output element.
 *
 * Everything else walks the arrays tile by tile. For each tile, every
 * instruction runs as one tight loop over the tile, reading external
 * inputs in place and earlier results from scratch buffers small enough to
 * stay in L1/L2, and the last one writes the output; so the whole chain
 * makes one pass over memory. Instructions run either a vectorized kernel
 * of this family (fast.c, float32 exp/sigmoid) or the operator's own
 * compute function on the tile (blobs are just pointers and shapes, and
 * element-wise kernels only look at the element count), which keeps the
 * numerics, dtype rules and write modes of the unfused operators. While a
 * tile computes, the next tile of the inputs is prefetched; large outputs
 * are staged in a buffer and written with streaming stores. Tiles are
 * split over the kernel thread pool (core/op/parallel.h). */
#include <stdio.h>
#include <string.h>

#include "ops/families.h"
#include "ops/fused/fused_internal.h"
#include "core/op/parallel.h"

/* Scratch space per thread (on its stack). Each buffer holds one tile of
 * TILE_BYTES while they all fit, fewer elements otherwise; buffers are
 * SLOT_PAD bytes apart beyond their size, so that consecutive buffers do
 * not sit at the same offset modulo 4 KiB (loads from one and stores to
 * the next would then falsely alias in the core's store buffer). */
#define SCRATCH_BYTES (64 * 1024)
#define TILE_BYTES (8 * 1024)
#define SLOT_PAD 256
/* Elements per parallel chunk; smaller arrays run on the calling thread
 * (waking a helper costs more than a few tiles of work): the pool's
 * threshold (core/op/parallel.h), as one chunk since a chain of
 * instructions per element is more work than one operator's. */
#define GRAIN_ELEMS MXC__PAR_MIN_ELEMS
/* Outputs at least this large are written with non-temporal stores: they
 * cannot stay in cache anyway, and streaming stores skip reading each
 * output line before overwriting it. */
#define STREAM_BYTES (8 * 1024 * 1024)

/* ---- inference ---- */

/* One dtype for inputs and output; each instruction's own type inference
 * then checks that its operator takes that dtype (sigmoid rejects
 * integers as it does unfused) and keeps it. */
static int fused_type(const mxc__op *op, const void *param, int *in,
                      int n_in, int *out, int n_out) {
  MXC_FORWARD_IF_ERROR(mxc__infer_type_same(op, param, in, n_in, out, n_out));
  int t = out[0];
  if (t < 0) return MXC_OK;
  const mxc__fused_param *p = param;
  for (int k = 0; k < p->n_instr; ++k) {
    const mxc__fused_instr *ins = &p->instr[k];
    int it[3] = {t, t, t}, ot = -1;
    int rc = MXC_OK;
    if (ins->op->infer_type) {
      rc = ins->op->infer_type(ins->op, ins->param.bytes, it, ins->n_args,
                               &ot, 1);
    } else {
      ot = t;
    }
    if (rc == MXC_OK && ot != t) {
      rc = mxc__error_set(MXC_ERR_DTYPE,
                          "operator '%s' gives %s for %s inputs; fused "
                          "programs keep one dtype",
                          ins->op->name, mxc__dtype_name(ot),
                          mxc__dtype_name(t));
    }
    if (rc != MXC_OK) {
      char where[96];
      snprintf(where, sizeof where, "operator '%s': program instruction %d",
               op->name, k);
      mxc__error_prefix(where);
      return rc;
    }
  }
  return MXC_OK;
}

static int fused_num_inputs(const void *param) {
  return (int)((const mxc__fused_param *)param)->num_inputs;
}

static const char *fused_input_name(const void *param, int i) {
  (void)param, (void)i;
  return "data";
}

/* ---- the kernel ---- */

typedef struct run_ctx {
  const mxc__fused_param *p;
  mxc__opctx ctx; /* for the instructions: one thread each */
  const mxc__blob *in;
  const mxc__blob *out;
  mxc__req req;
  int64_t tile;  /* elements per tile */
  size_t esz;
  size_t stride; /* bytes from one scratch buffer to the next */
  int stream;    /* last result goes to buffer n_slots, then streams out */
  const float *fin[MXC__FUSED_MAX_INPUTS]; /* inputs of float32 chains */
} run_ctx;

/* The blob of elements [off, off + len) of b. */
static mxc__blob sub_blob(const mxc__blob *b, int64_t off, int64_t len,
                          size_t esz) {
  mxc__blob s = *b;
  s.ptr = (char *)b->ptr + (size_t)off * esz;
  s.shape.ndim = 1;
  s.shape.dims[0] = len;
  return s;
}

/* Register reg of the current tile: an external input or a buffer. */
static mxc__blob reg_blob(const run_ctx *r, unsigned char *scratch, int reg,
                          int64_t off, int64_t len) {
  int n_in = (int)r->p->num_inputs;
  if (reg < n_in) return sub_blob(&r->in[reg], off, len, r->esz);
  mxc__blob b = sub_blob(&r->out[0], 0, len, r->esz);
  b.ptr = scratch + (size_t)r->p->instr[reg - n_in].slot * r->stride;
  return b;
}

static int run_tile(const run_ctx *r, unsigned char *scratch, int64_t off,
                    int64_t len) {
  const mxc__fused_param *p = r->p;
  for (int k = 0; k < p->n_instr; ++k) {
    const mxc__fused_instr *ins = &p->instr[k];
    mxc__blob a[3];
    for (int j = 0; j < ins->n_args; ++j) {
      a[j] = reg_blob(r, scratch, ins->args[j], off, len);
    }
    mxc__blob o = sub_blob(&r->out[0], off, len, r->esz);
    mxc__req q = r->req;
    if (ins->slot >= 0 || r->stream) {
      int slot = ins->slot >= 0 ? ins->slot : p->n_slots;
      o.ptr = scratch + (size_t)slot * r->stride;
      q = MXC__REQ_WRITE;
    }
    if (ins->fast && o.dtype == MXC_DTYPE_FLOAT32) {
      int add = q == MXC__REQ_ADD;
      if (ins->fast == MXC__FAST_EXP) {
        mxc__fused_exp_f32(a[0].ptr, o.ptr, len, add);
      } else {
        mxc__fused_sigmoid_f32(a[0].ptr, o.ptr, len, add);
      }
      continue;
    }
    MXC_FORWARD_IF_ERROR(ins->op->compute(ins->op, &r->ctx, ins->param.bytes,
                                          a, ins->n_args, &o, 1, &q));
  }
  if (r->stream) {
    mxc__fused_stream_copy((char *)r->out[0].ptr + (size_t)off * r->esz,
                           scratch + (size_t)p->n_slots * r->stride,
                           (size_t)len * r->esz);
  }
  return MXC_OK;
}

/* Asks for elements [off, off + len) of every external input to be
 * brought into L2. The hardware prefetchers follow a stream only while it
 * is being read; between two tiles the kernel computes without touching
 * memory, so without this every tile starts with a cold stream and the
 * loop ends up bound by memory latency rather than bandwidth. */
static void prefetch_inputs(const run_ctx *r, int64_t off, int64_t len) {
  for (int i = 0; i < (int)r->p->num_inputs; ++i) {
    const char *b = (const char *)r->in[i].ptr + (size_t)off * r->esz;
    for (size_t o = 0; o < (size_t)len * r->esz; o += 64) {
      __builtin_prefetch(b + o, 0, 2);
    }
  }
}

static int run_range(void *arg, int64_t begin, int64_t end) {
  const run_ctx *r = arg;
  _Alignas(64) unsigned char scratch[SCRATCH_BYTES];
  int rc = MXC_OK;
  for (int64_t off = begin; rc == MXC_OK && off < end; off += r->tile) {
    int64_t len = end - off < r->tile ? end - off : r->tile;
    int64_t next = off + len;
    if (next < end) {
      prefetch_inputs(r, next, end - next < r->tile ? end - next : r->tile);
    }
    rc = run_tile(r, scratch, off, len);
  }
  /* Streaming stores are weakly ordered: make them visible before this
   * chunk counts as done (the pool's handshake then publishes them). */
  if (r->stream) mxc__fused_stream_fence();
  return rc;
}

/* A float32 chain over [begin, end): everything in registers. */
static int run_chain(void *arg, int64_t begin, int64_t end) {
  const run_ctx *r = arg;
  mxc__fused_chain_f32(r->p, r->fin, r->out[0].ptr, begin, end,
                       r->req == MXC__REQ_ADD);
  return MXC_OK;
}

static int fused_forward(const mxc__op *op, const mxc__opctx *ctx,
                         const void *param, const mxc__blob *in, int n_in,
                         const mxc__blob *out, int n_out,
                         const mxc__req *req) {
  (void)op, (void)n_in, (void)n_out;
  if (req[0] == MXC__REQ_NULL) return MXC_OK;
  run_ctx r;
  r.p = param;
  r.ctx = *ctx;
  r.ctx.num_threads = 1;
  r.in = in;
  r.out = out;
  r.req = req[0];
  r.esz = mxc__dtype_size(out[0].dtype);
  int64_t n = mxc__shape_size(&out[0].shape);
  if (r.p->chain && out[0].dtype == MXC_DTYPE_FLOAT32) {
    for (int i = 0; i < (int)r.p->num_inputs; ++i) r.fin[i] = in[i].ptr;
    int threads = n > GRAIN_ELEMS ? mxc__parallel_threads() : 1;
    return mxc__parallel_for(n, GRAIN_ELEMS, threads, run_chain, &r);
  }
  r.stream = req[0] != MXC__REQ_ADD &&
             n * (int64_t)r.esz >= (int64_t)STREAM_BYTES;
  /* Tiles of TILE_BYTES while the buffers fit in the scratch space; a
   * multiple of 64 elements keeps every tile start aligned for vector
   * loops. With 64 buffers of 8-byte elements this still leaves 64. */
  int64_t bufs = r.p->n_slots + r.stream;
  int64_t per_buf = TILE_BYTES;
  if (bufs > 0 && bufs * (per_buf + SLOT_PAD) > SCRATCH_BYTES) {
    per_buf = SCRATCH_BYTES / bufs - SLOT_PAD;
  }
  r.tile = per_buf / (int64_t)r.esz / 64 * 64;
  r.stride = (size_t)r.tile * r.esz + SLOT_PAD;
  int64_t grain = (GRAIN_ELEMS + r.tile - 1) / r.tile * r.tile;
  int threads = n > grain ? mxc__parallel_threads() : 1;
  return mxc__parallel_for(n, grain, threads, run_range, &r);
}

/* ---- descriptor ---- */

static const mxc__param_def k_params[] = {
    MXC__PARAM_RANGE(mxc__fused_param, num_inputs, MXC__P_INT, NULL, 1,
                     MXC__FUSED_MAX_INPUTS, "Number of external inputs."),
    MXC__PARAM(mxc__fused_param, program, MXC__P_STRING, NULL,
               "Instructions separated by ';': <operator>(<args>[,key=value"
               "...]), args i<k> (input k) or r<k> (result of instruction "
               "k); the last result is the output."),
};
static const int k_inplace[][2] = {{0, 0}};

static const mxc__op k_fused = {
    .name = MXC__FUSED_OP_NAME,
    .doc = "A chain or tree of element-wise operators evaluated tile by "
           "tile in one pass over memory (made by graph fusion).",
    MXC__PARAMS_OF(mxc__fused_param, k_params),
    .param_check = mxc__fused_compile,
    .num_inputs = fused_num_inputs,
    .input_name = fused_input_name,
    .n_outputs = 1,
    .infer_shape = mxc__infer_shape_same,
    .infer_type = fused_type,
    .compute = fused_forward,
    .elementwise = 1,
    /* Gradients come from the unfused graph (fusion runs after the
     * gradient pass), so none here. */
    MXC__INPLACE(k_inplace),
    .hidden = 1,
};

int mxc__ops_register_fused(mxc__registry *r) {
  MXC_FORWARD_IF_ERROR(mxc__registry_add(r, &k_fused));
  MXC_FORWARD_IF_ERROR(mxc__registry_set_unfused(r, mxc__fused_run_unfused));
  return mxc__registry_set_fusible(r, mxc__fused_is_fusible);
}
