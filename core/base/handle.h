/* Handle table: how opaque public handles map to internal objects.
 *
 * A public handle is not a pointer. It encodes a slot of a process-wide
 * table and that slot's generation. Looking up a freed handle finds a newer
 * generation (or a free slot) and is reported instead of dereferencing
 * freed memory, which keeps the "wrong or freed handle" promise even under
 * AddressSanitizer. Slots are reused; generations make reuse detectable.
 *
 * Freeing while another thread uses the handle. Every public function
 * that takes a handle runs inside a guard (mxc__handle_guard_enter /
 * leave, the API_GUARD macro of c_api/src). mxc__handle_free invalidates
 * the handle at once (later lookups fail) but runs the object's destructor
 * only when no guard that could have looked the handle up before that is
 * still open: at once when no other thread is inside a guarded call (the
 * common case, no allocation), else by the last such thread as it leaves
 * its guard (or by a later free). So a call racing with a free of its
 * handle either fails with MXC_ERR_INVALID_HANDLE or works on the whole,
 * live object; it never reads freed memory. This is epoch-based
 * reclamation: a guard publishes the epoch it started in; a retired object
 * waits for every guard of an earlier epoch.
 *
 * Cost: a guard is one sequentially consistent store on entry and a
 * release store plus one relaxed load on exit (per outermost call; nested
 * calls from callbacks count a thread-local depth). A lookup is one load
 * and two compares.
 *
 * Thread-safety: all functions may be called concurrently. Destructors
 * may run on any thread that uses the API. */
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
  MXC__HANDLE_PREDICTOR = 9,
  MXC__HANDLE_RECORDIO = 10,
  MXC__HANDLE_KVSTORE = 11,
  MXC__HANDLE_SCOPE = 12, /* a memory scope (core/base/scope.h) */
  MXC__HANDLE_BLOCK = 13,
  MXC__HANDLE_OPTIMIZER = 14,
  MXC__HANDLE_FIT = 15,
  MXC__HANDLE_KIND_COUNT
} mxc__handle_kind;

/* Registers obj; *out = a new handle (never 0). MXC_ERR_OOM possible. */
int mxc__handle_new(int kind, void *obj, uintptr_t *out);

/* A handle the caller of a public function owns (its result): as
 * mxc__handle_new, and registered in the calling thread's innermost open
 * scope (core/base/scope.h), whose end destroys obj with dtor unless the
 * handle was freed or moved out first. bytes: the memory obj holds, for
 * the statistics. The handle remembers the public call open on this
 * thread (mxc__handle_guard_enter_at) as its creation site, and the
 * thread's caller tag when handle debugging is on. MXC_ERR_OOM possible;
 * obj is then not registered (the caller still owns it). */
int mxc__handle_new_owned(int kind, void *obj, void (*dtor)(void *),
                          int64_t bytes, uintptr_t *out);

/* Frees h with the destructor it was made with, if it is a live owned
 * handle; else nothing (no error is set). 1 if it freed h. */
int mxc__handle_drop(uintptr_t h);

/* *out = the object of a live handle of `kind`. Otherwise an
 * MXC_ERR_INVALID_HANDLE (or MXC_ERR_INVALID_ARGUMENT for 0) whose message
 * names `what`. */
int mxc__handle_get(uintptr_t h, int kind, const char *what, void **out);

/* Invalidates a live handle; *out_obj = its object, which the caller now
 * owns. Same errors as get. Freeing the object at once is safe only if no
 * other thread can be using it (see mxc__handle_retire). */
int mxc__handle_release(uintptr_t h, int kind, const char *what,
                        void **out_obj);

/* Tests only: called by mxc__handle_release after it has freed the slot
 * and released the table's lock (where another thread may take the slot
 * at once), so that a test can do that there. NULL: nothing. */
extern void (*mxc__handle_release_hook)(void);

/* Invalidates a live handle and destroys its object with dtor once no
 * guarded call can still use it. Same errors as get (nothing happens). */
int mxc__handle_free(uintptr_t h, int kind, const char *what,
                     void (*dtor)(void *));

/* Where a retired object waits; embedded in the object (or, for handles,
 * in the handle's slot), so that retiring never allocates. */
typedef struct mxc__retire_node {
  void *obj;
  void (*dtor)(void *);
  uint64_t epoch;
  uint32_t slot_index1; /* a handle slot to recycle after dtor; 0: none */
  struct mxc__retire_node *next;
} mxc__retire_node;

/* Runs dtor(obj) once no guarded call that started before this one can
 * still use obj (at once when none is open). For objects a released
 * handle pointed to. node: storage for the wait, untouched by the caller
 * until dtor runs (typically a member of obj; dtor may free it). */
void mxc__handle_retire(mxc__retire_node *node, void *obj,
                        void (*dtor)(void *));

/* Runs the deferred destructors that no open guard blocks any more
 * (leaving an outermost guard does this too). */
void mxc__handle_reclaim(void);

/* Opens / closes the calling thread's guard (nestable). */
void mxc__handle_guard_enter(void);
void mxc__handle_guard_leave(void);

/* As enter / leave, for a public function named site (a static string):
 * handles it makes name it as their creation site. enter_at returns the
 * site of the enclosing call (NULL if none), which leave_to restores. */
const char *mxc__handle_guard_enter_at(const char *site);
void mxc__handle_guard_leave_to(const char *outer_site);

/* Lookups made outside any guard since the process started (a C API
 * function missing its guard; for tests). */
int64_t mxc__handle_unguarded_gets(void);

/* Retired objects still waiting for open guards (for tests). */
int64_t mxc__handle_deferred(void);

/* Number of live handles (for leak checks in tests). */
int64_t mxc__handle_live(void);

/* Bytes held by live owned handles (their `bytes` at creation). */
int64_t mxc__handle_live_bytes(void);

const char *mxc__handle_kind_name(int kind);

#endif /* MXC_CORE_BASE_HANDLE_H_ */
