/* Handle table: how opaque public handles map to internal objects.
 *
 * A public handle is not a pointer. It encodes a slot of a process-wide
 * table and that slot's generation. Looking up a freed handle finds a newer
 * generation (or a free slot) and is reported instead of dereferencing
 * freed memory, which keeps the "wrong or freed handle" promise even under
 * AddressSanitizer. Slots are reused; generations make reuse detectable.
 *
 * Thread-safety: all functions may be called concurrently. Looking up a
 * handle while another thread releases it is a caller race (the lookup
 * may succeed with an object being destroyed), as with any free. */
#ifndef MXC_CORE_BASE_HANDLE_H_
#define MXC_CORE_BASE_HANDLE_H_

#include <stdint.h>

typedef enum mxc__handle_kind {
  MXC__HANDLE_NONE = 0,
  MXC__HANDLE_NDARRAY = 1,
  MXC__HANDLE_NDARRAY_LIST = 2,
  MXC__HANDLE_DATA_ITER = 3,
  MXC__HANDLE_SYMBOL = 4,
  MXC__HANDLE_EXECUTOR = 5,
  MXC__HANDLE_STR_LIST = 6,
  MXC__HANDLE_INFER = 7,
  MXC__HANDLE_OPCTX = 8, /* a pushed function's context while it runs */
  MXC__HANDLE_KIND_COUNT
} mxc__handle_kind;

/* Registers obj; *out = a new handle (never 0). MXC_ERR_OOM possible. */
int mxc__handle_new(int kind, void *obj, uintptr_t *out);

/* *out = the object of a live handle of `kind`. Otherwise an
 * MXC_ERR_INVALID_HANDLE (or MXC_ERR_INVALID_ARGUMENT for 0) whose message
 * names `what`. */
int mxc__handle_get(uintptr_t h, int kind, const char *what, void **out);

/* Invalidates a live handle; *out_obj = its object. Same errors as get. */
int mxc__handle_release(uintptr_t h, int kind, const char *what,
                        void **out_obj);

/* Number of live handles (for leak checks in tests). */
int64_t mxc__handle_live(void);

const char *mxc__handle_kind_name(int kind);

#endif /* MXC_CORE_BASE_HANDLE_H_ */
