#include "core/base/callback.h"

#include <stddef.h>

#include "core/base/assert.h"
#include "core/base/error.h"

static _Thread_local mxc__cb_frame *tls_top;

void mxc__cb_enter(mxc__cb_frame *f, int kind, const void *obj) {
  f->kind = kind;
  f->obj = obj;
  f->up = tls_top;
  tls_top = f;
}

void mxc__cb_leave(mxc__cb_frame *f) {
  MXC__ASSERT_MSG(tls_top == f, "callback frames left out of order");
  tls_top = f->up;
}

int mxc__cb_inside(int kind, const void *obj) {
  for (const mxc__cb_frame *f = tls_top; f != NULL; f = f->up) {
    if (f->kind == kind && (obj == NULL || f->obj == obj)) return 1;
  }
  return 0;
}

static const char *kind_name(int kind) {
  return kind == MXC__CB_MONITOR ? "an executor's monitor callback"
                                 : "the log callback";
}

int mxc__cb_refuse(int kind, const void *obj, const char *fn,
                   const char *rule) {
  if (MXC__LIKELY(tls_top == NULL) || !mxc__cb_inside(kind, obj)) {
    return MXC_OK;
  }
  return mxc__error_set(MXC_ERR_REENTRANT, "%s: called from inside %s: %s",
                        fn, kind_name(kind), rule);
}
