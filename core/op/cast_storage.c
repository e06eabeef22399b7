/* Storage casts through the cast_storage operator (see cast_storage.h). */
#include "core/op/cast_storage.h"

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/op/invoke.h"

int mxc__op_cast_storage(mxc__ndarray *src, int stype, const mxc__req *req,
                         mxc__ndarray **dst) {
  const mxc__op *op = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_lookup("cast_storage", &op));
  const char *key = "stype", *val = mxc__stype_name(stype);
  void *param = NULL;
  MXC_FORWARD_IF_ERROR(mxc__op_parse_params(op, &key, &val, 1, &param));
  int rc = mxc__op_invoke(op, param, &src, 1, dst, 1, req);
  mxc__free(param);
  return rc;
}
