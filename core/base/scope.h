/* Memory scopes: handles the caller owns, freed together.
 *
 * Each thread has a stack of open scopes. A handle a public function
 * returns to its caller (mxc__handle_new_owned) is registered in the
 * calling thread's innermost scope; ending the scope frees every handle
 * still registered in it. A handle freed by hand meanwhile leaves its
 * scope at once (the table's generation check makes a stale entry
 * harmless), and one moved out (keep) is registered in the enclosing
 * scope, or in none. Scopes are identified by handles of kind
 * MXC__HANDLE_SCOPE, so ending one twice is the usual stale-handle error.
 *
 * Thread-safety: begin, end, keep and detach act on the calling thread's
 * own scopes; statistics and dumps may be asked from any thread. A
 * thread that exits with scopes open has them ended for it. */
#ifndef MXC_CORE_BASE_SCOPE_H_
#define MXC_CORE_BASE_SCOPE_H_

#include <stdint.h>

/* Opens a scope on the calling thread; *out = its handle. */
int mxc__scope_begin(uintptr_t *out);

/* Ends scope h, which must be the calling thread's innermost open scope:
 * frees the handles registered in it (innermost last made, first freed),
 * then h itself. `what` names the argument in error messages. */
int mxc__scope_end(uintptr_t h, const char *what);

/* Moves live owned handle h out of its scope: into the enclosing one, or
 * (detach, or an outermost scope) into none, to be freed by hand. A
 * handle in no scope stays there. The scope must be the calling
 * thread's. */
int mxc__scope_keep(uintptr_t h, int detach, const char *what);

/* *out = the handle of the scope live owned handle h is registered in,
 * or 0 for none. */
int mxc__scope_of(uintptr_t h, const char *what, uintptr_t *out);

/* Live handles and their bytes: in scope h, or (h 0) in the process. */
int mxc__scope_stats(uintptr_t h, const char *what, int64_t *out_handles,
                     int64_t *out_bytes);

/* A text listing the live owned handles (of scope h, or all for h 0),
 * one line each: kind, handle, bytes, the public function that made it
 * and the caller's tag; *out is mxc__free'd by the caller. */
int mxc__scope_dump(uintptr_t h, const char *what, char **out);

/* Handle debugging (caller tags recorded): on/off for the process; the
 * default is the environment's MXC_DEBUG_HANDLES=1. */
void mxc__handle_debug_set(int on);
int mxc__handle_debug_enabled(void);

/* The calling thread's caller tag (copied; NULL clears it), recorded in
 * the handles it makes while debugging is on. */
int mxc__handle_tag_set(const char *tag);

/* Sets the tag recorded for live owned handle h (copied; NULL clears
 * it), whether or not debugging is on: a binding tags each handle it
 * wraps with its caller's location. */
int mxc__handle_tag(uintptr_t h, const char *tag, const char *what);

#endif /* MXC_CORE_BASE_SCOPE_H_ */
