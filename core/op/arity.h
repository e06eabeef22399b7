/* Helpers for operators with many inputs or outputs (see
 * MXC__OP_MAX_ARITY in core/op/op.h): per-call arrays live in a small
 * buffer on the stack and move to the heap only for wide calls, so small
 * operators stay allocation-free while variadic ones (Concat, add_n,
 * split, ...) take as many arrays as memory allows. */
#ifndef MXC_CORE_OP_ARITY_H_
#define MXC_CORE_OP_ARITY_H_

#include <stddef.h>

#include "core/base/alloc.h"
#include "core/op/op.h"

/* 1 when op modifies input i in place (mutate_inputs). The mask covers
 * inputs 0..31; later inputs are never mutated (see op.h). */
static inline int mxc__op_mutates_input(const mxc__op *op, int i) {
  return i < 32 && (op->mutate_inputs >> i & 1u);
}

/* n elements of `size` bytes: `small` (of small_bytes bytes) when they fit
 * in it, else a heap block, NULL when out of memory. Release with
 * mxc__scratch_free(p, small). n is at most a few MXC__OP_MAX_ARITY, so
 * n * size cannot overflow. */
static inline void *mxc__scratch(void *small, size_t small_bytes, size_t n,
                                 size_t size) {
  size_t bytes = n * size;
  return bytes <= small_bytes ? small : mxc__malloc(bytes ? bytes : 1);
}

static inline void mxc__scratch_free(void *p, const void *small) {
  if (p != small) mxc__free(p);
}

/* "arg<i>", MXNet's name of input i of a variadic operator, as a string
 * that lives as long as the process (names are handed out as static
 * strings, see mxc__name_fn). Made on first use; "arg?" when out of
 * memory or i is outside 0..MXC__OP_MAX_ARITY-1. Thread-safe. */
const char *mxc__op_arg_name(int i);

#endif /* MXC_CORE_OP_ARITY_H_ */
