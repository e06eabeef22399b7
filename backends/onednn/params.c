/* Parameters by name (onednn.h): the descriptors' parameter tables give
 * each field's type and offset, so the backend reads Pooling's or
 * BatchNorm's parameters without the families exporting their structs,
 * and a field renamed or retyped in a family makes the lookup fail (the
 * supports function then declines) instead of reading wrong bytes. */
#include <string.h>

#include "backends/onednn/onednn.h"

static const mxc__param_def *def_of(const mxc__op *op, const char *name) {
  for (int i = 0; i < op->n_params; ++i) {
    if (!strcmp(op->params[i].name, name)) return &op->params[i];
  }
  return NULL;
}

const void *mxc__dnnl_param(const mxc__op *op, const void *param,
                            const char *name, int type) {
  const mxc__param_def *d = param ? def_of(op, name) : NULL;
  if (!d || (int)d->type != type) return NULL;
  return (const char *)param + d->offset;
}

const char *mxc__dnnl_param_enum(const mxc__op *op, const void *param,
                                 const char *name) {
  const int *v = mxc__dnnl_param(op, param, name, MXC__P_ENUM);
  if (!v) return NULL;
  const char *const *c = def_of(op, name)->choices;
  for (int i = 0; c && c[i]; ++i) {
    if (i == *v) return c[i];
  }
  return NULL;
}

int mxc__dnnl_param_int(const mxc__op *op, const void *param,
                        const char *name, int64_t *out) {
  const int64_t *v = mxc__dnnl_param(op, param, name, MXC__P_INT);
  if (v) *out = *v;
  return v != NULL;
}

int mxc__dnnl_param_bool(const mxc__op *op, const void *param,
                         const char *name, int *out) {
  const int *v = mxc__dnnl_param(op, param, name, MXC__P_BOOL);
  if (v) *out = *v;
  return v != NULL;
}

int mxc__dnnl_param_float(const mxc__op *op, const void *param,
                          const char *name, double *out) {
  const double *v = mxc__dnnl_param(op, param, name, MXC__P_FLOAT);
  if (v) *out = *v;
  return v != NULL;
}
