/* Which library callbacks the calling thread is inside, so that API calls
 * made from a callback can be checked against the callback's rules
 * (MXC_ERR_REENTRANT) instead of deadlocking or freeing state the caller
 * of the callback still uses.
 *
 * Each thread keeps a stack of frames, one per callback being run; code
 * that calls out to user code brackets the call with enter/leave (frames
 * live on the caller's stack). Engine functions are tracked by the engine
 * itself (mxc__engine_check_may_wait), not here: their bracket is on the
 * engine's hot path and the engine already knows.
 *
 * Thread-safety: frames are per thread; nothing is shared. */
#ifndef MXC_CORE_BASE_CALLBACK_H_
#define MXC_CORE_BASE_CALLBACK_H_

typedef enum mxc__cb_kind {
  MXC__CB_MONITOR = 1, /* an executor's monitor; obj: the executor */
  MXC__CB_LOG = 2,     /* the log callback; obj: NULL */
} mxc__cb_kind;

typedef struct mxc__cb_frame {
  int kind;
  const void *obj;
  struct mxc__cb_frame *up;
} mxc__cb_frame;

/* Pushes f (kind, obj) on the calling thread's stack. */
void mxc__cb_enter(mxc__cb_frame *f, int kind, const void *obj);

/* Pops f, which must be the innermost frame. */
void mxc__cb_leave(mxc__cb_frame *f);

/* 1 when the calling thread is inside a callback of `kind` for obj (any
 * object when obj is NULL). */
int mxc__cb_inside(int kind, const void *obj);

/* MXC_ERR_REENTRANT naming fn and the rule when the calling thread is
 * inside a callback of `kind` for obj (any when NULL); else MXC_OK. */
int mxc__cb_refuse(int kind, const void *obj, const char *fn,
                   const char *rule);

#endif /* MXC_CORE_BASE_CALLBACK_H_ */
