/* The GPU's strided-copy kernels' plan (copy.cu): output element i (row-
 * major over the plan's extents) is input element src_off + sum_k
 * idx_k * stride[k], the CPU's view copies (ops/shape/shape_internal.h's
 * mxc__shp_iter) with a contiguous destination. transpose and swapaxes
 * permute the input's strides; flip starts an axis at its end with a
 * negative stride. Each operator is its own gradient's operator (the CPU's
 * gradient builders: transpose with the inverse axes, swapaxes and flip
 * themselves), so these three rows cover training too.
 *
 * The parameter structs are private to ops/shape/transpose.c: the
 * mirrors below must keep their layout, which tests/gpu:
 * test_cuda_bcast_plan checks through the operators' own parser (a
 * mirror that drifted gives other outputs than the CPU's there).
 *
 * Plain C with no CUDA header, host-tested against the CPU operators
 * (tests/gpu:test_cuda_bcast_plan); MXC__CP_HD functions run on both.
 * Thread-safety: pure functions. */
#ifndef MXC_BACKENDS_CUDA_COPY_PLAN_H_
#define MXC_BACKENDS_CUDA_COPY_PLAN_H_

#include <stddef.h>
#include <stdint.h>

#include "core/base/gpu_plugin.h"
#include "core/op/param.h"

#ifdef __CUDACC__
#define MXC__CP_HD __host__ __device__ __forceinline__
#else
#define MXC__CP_HD static inline
#endif

/* Mirrors of ops/shape/transpose.c's parameter structs. */
typedef struct mxc__cp_transpose_param {
  mxc__tuple axes; /* empty: reverse the axes */
} mxc__cp_transpose_param;
typedef struct mxc__cp_swap_param {
  int64_t dim1, dim2;
} mxc__cp_swap_param;
typedef struct mxc__cp_flip_param {
  mxc__tuple axis;
} mxc__cp_flip_param;

/* Mirrors of ops/shape/slice.c's parameter structs. */
typedef struct mxc__cp_slice_param {
  mxc__tuple begin, end, step; /* INT64_MIN entries: None */
} mxc__cp_slice_param;
typedef struct mxc__cp_slice_axis_param {
  int64_t axis, begin;
  mxc__opt_int end;
} mxc__cp_slice_axis_param;

/* Mirrors of ops/shape/concat.c's parameter structs. */
typedef struct mxc__cp_concat_param {
  int64_t num_args, dim;
} mxc__cp_concat_param;
typedef struct mxc__cp_split_param {
  int64_t num_outputs, axis;
  int squeeze_axis;
} mxc__cp_split_param;

/* Mirror of ops/shape/concat.c's stack parameters. */
typedef struct mxc__cp_stack_param {
  int64_t num_args, axis;
} mxc__cp_stack_param;

/* Mirrors of ops/shape/broadcast.c's tile and repeat parameters. */
typedef struct mxc__cp_tile_param {
  mxc__tuple reps;
} mxc__cp_tile_param;
typedef struct mxc__cp_repeat_param {
  int64_t repeats;
  mxc__opt_int axis;
} mxc__cp_repeat_param;

/* Mirrors of ops/shape/rearrange.c's diag and depth_to_space /
 * space_to_depth parameters. */
typedef struct mxc__cp_diag_param {
  int64_t k, axis1, axis2;
} mxc__cp_diag_param;
typedef struct mxc__cp_ds_param {
  int64_t block_size;
} mxc__cp_ds_param;

/* Which operator a plan is made for. MXC__CP_BROADCAST: broadcast_to,
 * broadcast_axis and broadcast_like, whose plan the shapes alone decide
 * (ops/shape/broadcast.c: same number of axes, an input extent of 1
 * repeated along the output's, stride 0); the parameter is not read. */
enum {
  MXC__CP_TRANSPOSE,
  MXC__CP_SWAPAXES,
  MXC__CP_FLIP,
  MXC__CP_BROADCAST,
  /* slice, slice_axis, slice_like (and their _backward_): the plan maps
   * the box's element i (row-major over the box) to data's element. */
  MXC__CP_SLICE,
  MXC__CP_SLICE_AXIS,
  MXC__CP_SLICE_LIKE,
  /* tile, repeat and their _backward_ (mxc__copy_plan_rep). */
  MXC__CP_TILE,
  MXC__CP_REPEAT
};

typedef struct mxc__copy_plan {
  int nd;                        /* output axes (>= 1; a 0-d copy has 1) */
  int64_t ext[MXC_MAX_NDIM];     /* the output's extents */
  int64_t stride[MXC_MAX_NDIM];  /* input element stride per output axis */
  int64_t src_off;               /* input element of output element 0 */
} mxc__copy_plan;

/* tile's and repeat's plan over ops/shape/rep_box.h's box (the CPU's):
 * the box's axes split into the input's ("data": its row-major order) and
 * the copies' ("rep"), each with its step in the output. Output element
 * of (input element j, copy r) = mxc__rep_out(p, j, r); the forward
 * writes every such element once, the gradient of j sums the n_rep
 * copies in r order (the CPU's order). */
typedef struct mxc__rep_plan {
  int nd_data, nd_rep;
  int64_t data_ext[2 * MXC_MAX_NDIM], data_step[2 * MXC_MAX_NDIM];
  int64_t rep_ext[2 * MXC_MAX_NDIM], rep_step[2 * MXC_MAX_NDIM];
  int64_t n_data, n_rep; /* input elements, copies of each */
} mxc__rep_plan;

#ifdef __cplusplus
extern "C" {
#endif

/* depth_to_space / space_to_depth with block size b between the space
 * side (N, C, H*b, W*b) and the depth side (N, C*b*b, H, W): element i of
 * space (row-major) is depth's element mxc__copy_src(p, i)
 * (ops/shape/rearrange_map.h's map, the CPU's). MXC_OK, or MXC_ERR_SHAPE
 * / MXC_ERR_INVALID_ARGUMENT with the reason. */
int mxc__copy_plan_ds(int64_t b, const mxc__gpu_array *space,
                      const mxc__gpu_array *depth, mxc__copy_plan *p,
                      char *why, size_t why_len);

/* diag (param: its mirror above) between the matrix side m and the
 * contiguous diagonal array v: element i of v is m's element
 * mxc__copy_src(p, i). one_d: v is a 1-D data's vector, m its matrix
 * (axes 0 and 1, whatever axis1/axis2 say). MXC_OK, or the reason (axes
 * the CPU refuses, an empty diagonal, v of another shape). */
int mxc__copy_plan_diag(const void *param, const mxc__gpu_array *m,
                        const mxc__gpu_array *v, int one_d,
                        mxc__copy_plan *p, char *why, size_t why_len);

/* The plan of tile or repeat (kind MXC__CP_TILE / MXC__CP_REPEAT, param
 * its mirror above) from data to the expanded array big (the forward's
 * output, the gradient's ograd): MXC_OK, or MXC_ERR_INVALID_ARGUMENT /
 * MXC_ERR_SHAPE with the reason (parameters the CPU refuses, a big of
 * another shape than the parameters give). */
int mxc__copy_plan_rep(int kind, const void *param, const mxc__gpu_array *data,
                       const mxc__gpu_array *big, mxc__rep_plan *p, char *why,
                       size_t why_len);

/* The plan of operator `kind` (MXC__CP_*) with parameters param (its
 * struct above) from input in to output out: MXC_OK, or
 * MXC_ERR_INVALID_ARGUMENT / MXC_ERR_SHAPE with the reason in why (a
 * parameter the CPU would refuse, an output of another shape). */
int mxc__copy_plan_make(int kind, const void *param, const mxc__gpu_array *in,
                        const mxc__gpu_array *out, mxc__copy_plan *p,
                        char *why, size_t why_len);

/* The box of a slice operator (kind MXC__CP_SLICE*, param its struct
 * above; slice_like reads none: its box starts at 0 with box's extents)
 * inside data, whose shape is box's: element i of box (row-major) is
 * data's element mxc__copy_src(p, i). The forward gathers it (data ->
 * output box), the backward scatters the output gradient (box) into the
 * data-shaped gradient. MXC_OK, or the reason (parameters the CPU would
 * refuse, a box shape that disagrees with the parameters). */
int mxc__copy_plan_slice(int kind, const void *param,
                         const mxc__gpu_array *data,
                         const mxc__gpu_array *box, mxc__copy_plan *p,
                         char *why, size_t why_len);

/* Part i of a join or split along `axis` of `whole`: the part's elements
 * (row-major, the whole's axes with extent ext on `axis`) are whole's
 * element mxc__copy_src(p, j), starting at index `start` of the axis
 * (Concat, split and their gradients, ops/shape/concat.c's parts_copy;
 * a split's squeezed axis has extent 1, the same element order). */
void mxc__copy_plan_part(const mxc__gpu_array *whole, int axis,
                         int64_t start, int64_t ext, mxc__copy_plan *p);

#ifdef __cplusplus
}
#endif

/* Input element of output element i. */
MXC__CP_HD int64_t mxc__copy_src(const mxc__copy_plan *p, int64_t i) {
  int64_t off = p->src_off;
  for (int d = p->nd - 1; d >= 0; --d) {
    off += (i % p->ext[d]) * p->stride[d];
    i /= p->ext[d];
  }
  return off;
}

/* Offset of i row-major over (ext, step)[0..nd). */
MXC__CP_HD int64_t mxc__rep_off(const int64_t *ext, const int64_t *step,
                                int nd, int64_t i) {
  int64_t off = 0;
  for (int d = nd - 1; d >= 0; --d) {
    off += (i % ext[d]) * step[d];
    i /= ext[d];
  }
  return off;
}

/* Output element of copy r of input element j. */
MXC__CP_HD int64_t mxc__rep_out(const mxc__rep_plan *p, int64_t j,
                                int64_t r) {
  return mxc__rep_off(p->data_ext, p->data_step, p->nd_data, j) +
         mxc__rep_off(p->rep_ext, p->rep_step, p->nd_rep, r);
}

#endif /* MXC_BACKENDS_CUDA_COPY_PLAN_H_ */
