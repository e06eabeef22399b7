/* Private to core/base (handle.c and scope.c): what the handle table
 * keeps about a handle its caller owns (a public function's result), and
 * the calls between the table and the memory scopes. Everything here is
 * called with the table's lock held (mxc__handle_lock). */
#ifndef MXC_CORE_BASE_HANDLE_OWNER_H_
#define MXC_CORE_BASE_HANDLE_OWNER_H_

#include <stdint.h>

typedef struct mxc__scope mxc__scope;

typedef struct mxc__handle_owner {
  void (*dtor)(void *); /* NULL: not an owned handle (internal ones) */
  int64_t bytes;        /* memory the object held when made */
  const char *site;     /* the public function that made it (static) */
  const char *tag;      /* the caller's tag (interned), or NULL */
  mxc__scope *scope;    /* the scope it is registered in, or NULL */
  uint32_t pos;         /* its index in that scope's list */
} mxc__handle_owner;

void mxc__handle_lock(void);
void mxc__handle_unlock(void);

/* The record of live owned handle h (*out_kind its kind), or NULL for a
 * stale, internal or invalid handle. */
mxc__handle_owner *mxc__handle_owner_of(uintptr_t h, int *out_kind);

/* Calls fn for every live owned handle. */
typedef void (*mxc__handle_visit_fn)(uintptr_t h, int kind,
                                     const mxc__handle_owner *o, void *ud);
void mxc__handle_visit(mxc__handle_visit_fn fn, void *ud);

/* ---- scope.c, for the table ---- */

/* The calling thread's innermost open scope, or NULL (no lock needed). */
mxc__scope *mxc__scope_current(void);

/* Makes room for one more handle in s (NULL: nothing to do); the only
 * step of registering that can fail (MXC_ERR_OOM). */
int mxc__scope_reserve(mxc__scope *s);

/* Registers h (record o) in s after a reserve; s NULL: in no scope. */
void mxc__scope_add(mxc__scope *s, uintptr_t h, mxc__handle_owner *o);

/* Unregisters o from its scope (a free, or a move out). */
void mxc__scope_remove(mxc__handle_owner *o);

/* The calling thread's caller tag while handle debugging is on, else
 * NULL (no lock needed). */
const char *mxc__scope_tag(void);

#endif /* MXC_CORE_BASE_HANDLE_OWNER_H_ */
