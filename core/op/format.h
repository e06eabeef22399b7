/* Channels-last values (core/op/op.h, MXC__FMT_*): conversions to and
 * from the plain layout, and running a plain-only kernel on blobs of any
 * format.
 *
 * Who uses them: a kernel whose fmt_ok accepted channels-last arguments
 * but turns a call down at run time (oneDNN refusing a shape) runs its
 * reference through mxc__fmt_compute; the executor shows its monitor a
 * plain copy of a channels-last value. Both are rare, so the loops are
 * plain loops, not tuned ones.
 *
 * Thread-safety: none needed; they touch only the blobs given. */
#ifndef MXC_CORE_OP_FORMAT_H_
#define MXC_CORE_OP_FORMAT_H_

#include "core/op/op.h"

/* 1 when b's memory differs from plain: bfloat16 channels-last always,
 * channels-last when the array (3 to 5 axes) has more than one channel
 * and more than one spatial position. */
int mxc__fmt_differs(const mxc__blob *b);

/* Copies b's elements into dst (b's byte size) in the plain layout, as
 * float32 for bfloat16 formats. */
void mxc__fmt_to_plain(const mxc__blob *b, void *dst);
/* Copies the plain elements at src into b, laid out as b->fmt says
 * (rounded to nearest even for bfloat16 formats). */
void mxc__fmt_from_plain(const void *src, const mxc__blob *b);

/* Runs compute, a kernel of plain blobs, on in/out whatever their
 * formats: channels-last inputs are copied to plain temporaries first,
 * channels-last outputs are written through plain temporaries (filled
 * from the output first when req is MXC__REQ_ADD) and copied back.
 * Returns compute's result, or MXC_ERR_OOM naming op. */
int mxc__fmt_compute(mxc__compute_fn compute, const mxc__op *op,
                     const mxc__opctx *ctx, const void *param,
                     const mxc__blob *in, int n_in, const mxc__blob *out,
                     int n_out, const mxc__req *req);

/* fmt_ok of element-wise kernels (mxc__op.elementwise): every argument
 * channels-last float32, tied to the others (core/op/backend.h). */
unsigned mxc__fmt_elementwise_ok(const mxc__op *op, const void *param,
                                 int is_out, int i);

#endif /* MXC_CORE_OP_FORMAT_H_ */
