/* Custom operators: forward/backward callbacks registered at run time
 * under a name (mxc_custom_op_register), run by the operator "Custom"
 * with op_type=NAME (ops/custom), as MXNet's custom operators.
 *
 * The table maps names to reference-counted entries. The table holds one
 * reference while a name is registered; each use (shape inference, a
 * kernel, building a gradient) holds one for its duration, so
 * unregistering while a call runs is safe: the entry's destroy callback
 * runs when the last reference goes, on the thread that drops it.
 *
 * Thread-safety: every function may be called from any thread; the
 * table is guarded by one mutex, never held while user code runs. */
#ifndef MXC_CORE_OP_CUSTOM_H_
#define MXC_CORE_OP_CUSTOM_H_

#include "mxc/mxc.h"

/* Longest registered name, terminating NUL included. */
#define MXC__CUSTOM_NAME_MAX 128

typedef struct mxc__custom mxc__custom;

/* Adds `name` with a copy of *def. MXC_ERR_INVALID_ARGUMENT for a NULL,
 * empty or too long name, a missing forward, or counts outside
 * 1..MXC__CUSTOM_MAX_ARITY; for a name already registered, naming it. */
int mxc__custom_register(const char *name, const mxc_custom_op_def *def);

/* Removes `name` (MXC_ERR_NOT_FOUND naming it when absent). */
int mxc__custom_unregister(const char *name);

/* A new reference on the entry registered as `name`, or
 * MXC_ERR_NOT_FOUND naming it (`who` names the caller in the message). */
int mxc__custom_acquire(const char *name, const char *who, mxc__custom **out);

/* Drops a reference (NULL accepted); the last one runs def.destroy. */
void mxc__custom_release(mxc__custom *c);

/* The entry's definition (valid while the reference is held). */
const mxc_custom_op_def *mxc__custom_def(const mxc__custom *c);

/* The most inputs or outputs a custom operator may declare. */
#define MXC__CUSTOM_MAX_ARITY 64

#endif /* MXC_CORE_OP_CUSTOM_H_ */
