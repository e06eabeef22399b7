/* Backends: which code runs an operator on which device.
 *
 * A backend is one implementation of operators for one device type: the
 * reference CPU kernels (every descriptor's own `compute` and the sparse
 * kernels attached to it), later oneDNN on the CPU and CUDA on NVIDIA
 * GPUs. It is a struct of function pointers plus kernels attached to
 * operators by name, the way the sparse family attaches storage kernels:
 * an operator family never needs to know which backends exist, and a
 * backend never edits a family's files.
 *
 * Choosing a kernel (mxc__op_kernel): for a call on device type D with
 * given input/output dtypes and storage types, the attached kernels of D
 * are asked in order of their backend's priority (highest first) whether
 * they support the call; on the CPU the descriptor's reference kernel
 * closes the list and takes every call (sparse ones through their storage
 * kernels or the storage fallback). A CPU kernel of another backend that
 * declines leaves the call to the next one, the reference kernel last.
 * No kernel of D at all: the device does not support the operator for
 * these types (mxc__op_supported answers 0). Invoke then fails with
 * MXC_ERR_UNSUPPORTED naming the operator: this build has no arrays off
 * the CPU, so a call there cannot happen yet. Running such calls on the
 * CPU through copies, logged once per case like the storage fallback,
 * comes with device storage (the CUDA backend), in pick_kernel
 * (core/op/invoke.c).
 *
 * What a backend gets, designed with the two planned ones in mind:
 *  - a GPU kernel needs its device's stream: the backend's ctx_prepare
 *    fills mxc__opctx.stream for the call's device before the kernel
 *    runs (on the engine's worker for that device);
 *  - a oneDNN kernel may keep its own memory layout between consecutive
 *    nodes: that is a graph-level decision (the executor asks each
 *    node's kernel at bind time which arguments may be channels-last,
 *    fmt_ok below, and core/exec/format.c chooses), not the operator's;
 *    every other kernel sees plain row-major blobs.
 *
 * Registration: mxc__backend_register, from a constructor of the
 * backend's library (like the family table, ops/families.c), before the
 * registry is first used; the backend's attach function then runs once,
 * after every family, when the registry is built.
 *
 * Thread-safety: registration before first use only; lookups from any
 * thread (the registry never changes after it is built). */
#ifndef MXC_CORE_OP_BACKEND_H_
#define MXC_CORE_OP_BACKEND_H_

#include "core/op/op.h"

/* What a caller knows of a call beyond its types, for kernels that
 * decide by more (the GPU plug-in's rows, by parameters and shapes). */
typedef struct mxc__call_info {
  const mxc__shape *in_shapes;  /* NULL: not known */
  const mxc__shape *out_shapes; /* NULL: not known */
  const mxc__req *req;          /* per output; NULL: write */
  int dev_id;                   /* the device's id; -1: not known */
  int is_train;
  /* Where a kernel that declines the call writes why (NUL-terminated,
   * at most why_len bytes); NULL: nobody asks. */
  char *why;
  size_t why_len;
} mxc__call_info;

/* The dtypes and storage types of one call, as a supports query sees
 * them. Output arrays may be -1 (not decided yet). */
typedef struct mxc__call_types {
  const int *in_dtypes;
  const int *in_stypes; /* NULL: all dense */
  int n_in;
  const int *out_dtypes;
  const int *out_stypes; /* NULL: all dense */
  int n_out;
  const mxc__call_info *info; /* NULL: types only */
} mxc__call_types;

typedef struct mxc__backend mxc__backend;

/* 1 when the kernel handles op with these parameters and types. */
typedef int (*mxc__supports_fn)(const mxc__op *op, const void *param,
                                const mxc__call_types *t);

/* One implementation of one operator. */
typedef struct mxc__kernel {
  const mxc__backend *backend;
  mxc__supports_fn supports; /* NULL: every dense call */
  mxc__compute_fn compute;   /* on blobs of the backend's device */
  /* The formats besides PLAIN (op.h, MXC__FMT_*) argument i (an input,
   * or an output when is_out) may have in calls this kernel supports, as
   * a mask of 1u << fmt; NULL or 0: PLAIN only. A kernel that accepts a
   * format takes it in every call, including those it hands to a fallback
   * (mxc__fmt_compute runs any kernel on plain copies). With
   * MXC__FMT_TIED in the mask, the argument may have those formats only
   * when every tied argument of the call has the same format and shape:
   * what element-wise kernels need, which never look at positions. */
  unsigned (*fmt_ok)(const mxc__op *op, const void *param, int is_out,
                     int i);
  /* Storage functions (core/op/op.h, "Storage types and dispatch"): set
   * on the reference CPU kernel from the descriptor or by
   * mxc__registry_attach_stype; NULL elsewhere today. */
  mxc__infer_stype_fn infer_stype;
  mxc__compute_sparse_fn compute_sparse;
} mxc__kernel;

#define MXC__FMT_TIED (1u << 31)

struct mxc__backend {
  const char *name; /* unique: "cpu", "onednn", "cuda" */
  int dev_type;     /* MXC_DEVICE_CPU or MXC_DEVICE_GPU */
  /* Order among the backends of one device type: higher is asked first.
   * The reference CPU kernels have 0. */
  int priority;
  /* Attaches the backend's kernels (mxc__registry_attach_kernel); runs
   * once, after every family registered. */
  int (*attach)(mxc__registry *r);
  /* Fills what a kernel of this backend needs in ctx for ctx->dev (a
   * GPU backend: the device's stream) before it runs; NULL when nothing
   * is needed. Runs on the thread that runs the kernel. */
  int (*ctx_prepare)(mxc__opctx *ctx);
};

/* The backend of the descriptors' own kernels. */
extern const mxc__backend mxc__backend_cpu_ref;

/* Adds a backend (a static struct living for the whole process). Call
 * before the registry's first use (from a constructor); MXC_ERR_INTERNAL
 * when the table is full, the name is taken, or it is too late. */
int mxc__backend_register(const mxc__backend *b);

/* Attaches kernel k (copied) of backend k->backend to the operator named
 * name, registered earlier. MXC_ERR_INTERNAL for an unknown operator, a
 * second kernel of the same backend, or a full kernel table. */
int mxc__registry_attach_kernel(mxc__registry *r, const char *name,
                                const mxc__kernel *k);

/* The kernel that runs op on device type dev_type for these types, or
 * NULL when none of that device supports the call (borrowed, valid for
 * the process). param: parsed parameters. */
const mxc__kernel *mxc__op_kernel(const mxc__op *op, int dev_type,
                                  const void *param,
                                  const mxc__call_types *t);

/* 1 when device type dev_type has a kernel for the call. */
int mxc__op_supported(const mxc__op *op, int dev_type, const void *param,
                      const mxc__call_types *t);

/* op's kernels, all devices, in the order they are asked (i from 0;
 * NULL past the last): how tests compare every backend's kernels with
 * the reference ones. */
const mxc__kernel *mxc__op_kernel_at(const mxc__op *op, int i);

/* While set on the calling thread, calls it picks kernels for on the CPU
 * run the reference kernels (the descriptors' own) whatever other
 * backends attached: an executor bound with MXC_BIND_NO_ONEDNN sets it
 * while it pushes its nodes. Returns the previous setting, for the
 * caller to restore. Thread-local; never fails. */
int mxc__op_set_reference_only(int on);
int mxc__op_reference_only(void);

/* Kernels of backends other than the CPU reference, all operators: set
 * while the registry is built, read-only afterwards. Invoke's fast path
 * reads it first (inline), so that a build with reference kernels only
 * pays nothing for kernel selection. */
extern int mxc__op_n_backend_kernels;
static inline int mxc__op_have_backend_kernels(void) {
  return mxc__op_n_backend_kernels > 0;
}

#endif /* MXC_CORE_OP_BACKEND_H_ */
