/* Storage casts through the cast_storage operator (see cast_storage.h). */
#include "core/op/cast_storage.h"

#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/op/invoke.h"

int mxc__op_cast_storage(mxc__ndarray *src, int stype, const mxc__req *req,
                         mxc__ndarray **dst) {
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup("cast_storage", &op));
  /* Its parameter struct is one enum: parsed on the stack, so the storage
   * fallback's casts allocate nothing besides their arrays. */
  _Alignas(16) unsigned char pbuf[64];
  MXC_RETURN_ERROR_IF(op->param_size > sizeof pbuf, MXC_ERR_INTERNAL,
                      "cast_storage parameters too large");
  const char *key = "stype", *val = mxc__stype_name(stype);
  MXC_FORWARD_IF_ERROR(mxc__param_parse(op->name, op->params, op->n_params,
                                        &key, &val, 1, pbuf));
  return mxc__op_invoke(op, pbuf, &src, 1, dst, 1, req);
}
