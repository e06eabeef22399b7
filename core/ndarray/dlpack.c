#include "core/ndarray/dlpack.h"

#include <stdint.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"

/* DLPack 0.8 added a boolean type code; Debian ships 0.6 headers. The value
 * is part of the DLPack ABI, so mxc emits and accepts it either way. */
#define MXC__DL_BOOL 6

typedef struct dl_map {
  int dtype;
  uint8_t code;
  uint8_t bits;
} dl_map;

static const dl_map k_dl_types[] = {
    {MXC_DTYPE_FLOAT32, kDLFloat, 32}, {MXC_DTYPE_FLOAT64, kDLFloat, 64},
    {MXC_DTYPE_FLOAT16, kDLFloat, 16}, {MXC_DTYPE_BFLOAT16, kDLBfloat, 16},
    {MXC_DTYPE_UINT8, kDLUInt, 8},     {MXC_DTYPE_INT8, kDLInt, 8},
    {MXC_DTYPE_INT32, kDLInt, 32},     {MXC_DTYPE_INT64, kDLInt, 64},
    {MXC_DTYPE_BOOL, MXC__DL_BOOL, 8},
};
#define N_DL_TYPES (sizeof k_dl_types / sizeof k_dl_types[0])

/* What an exported tensor owns: a chunk reference and the shape. */
typedef struct export_ctx {
  DLManagedTensor managed;
  int64_t shape[MXC_MAX_NDIM];
  mxc__chunk *chunk;
} export_ctx;

static void export_deleter(DLManagedTensor *self) {
  export_ctx *ctx = self->manager_ctx;
  mxc__chunk_release(ctx->chunk);
  mxc__free(ctx);
}

int mxc__ndarray_to_dlpack(const mxc__ndarray *a, DLManagedTensor **out) {
  MXC_RETURN_ERROR_IF(a->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "to_dlpack: sparse arrays cannot be exported; DLPack "
                      "describes dense tensors");
  const dl_map *m = NULL;
  for (size_t i = 0; i < N_DL_TYPES; ++i) {
    if (k_dl_types[i].dtype == a->dtype) m = &k_dl_types[i];
  }
  MXC_RETURN_ERROR_IF(!m, MXC_ERR_INTERNAL, "to_dlpack: dtype %d unmapped",
                      a->dtype);
  MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(a));
  MXC_FORWARD_IF_ERROR(mxc__ndarray_wait(a, 0));
  export_ctx *ctx = mxc__calloc(1, sizeof *ctx);
  MXC_RETURN_ERROR_IF(!ctx, MXC_ERR_OOM, "to_dlpack: out of memory");
  for (int i = 0; i < a->shape.ndim; ++i) ctx->shape[i] = a->shape.dims[i];
  ctx->chunk = a->chunk;
  mxc__chunk_retain(a->chunk);
  /* The consumer may write the memory without the engine: nothing may
   * be cached from this array's data any more (mxc__ndarray_version). */
  mxc__engine_var_set_external(a->chunk->var);
  DLTensor *t = &ctx->managed.dl_tensor;
  t->data = mxc__ndarray_ptr(a);
  /* A GPU array's data pointer is device memory: the consumer sees that
   * from the device type (kDLCUDA, as torch.utils.dlpack expects). */
  t->device.device_type =
      a->chunk->dev.type == MXC_DEVICE_GPU ? kDLCUDA : kDLCPU;
  t->device.device_id = a->chunk->dev.id;
  t->ndim = a->shape.ndim;
  t->dtype.code = m->code;
  t->dtype.bits = m->bits;
  t->dtype.lanes = 1;
  t->shape = ctx->shape;
  t->strides = NULL; /* compact row-major */
  t->byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = export_deleter;
  *out = &ctx->managed;
  return MXC_OK;
}

static int import_dtype(const DLDataType *d, int *out) {
  for (size_t i = 0; i < N_DL_TYPES; ++i) {
    if (k_dl_types[i].code == d->code && k_dl_types[i].bits == d->bits &&
        d->lanes == 1) {
      *out = k_dl_types[i].dtype;
      return MXC_OK;
    }
  }
  return mxc__error_set(MXC_ERR_DTYPE,
                        "from_dlpack: DLPack dtype (code %u, bits %u, lanes "
                        "%u) has no mxc equivalent",
                        d->code, d->bits, d->lanes);
}

/* Strides, when given, must describe the compact row-major layout (extents
 * of 1 may carry any stride). */
static int check_strides(const DLTensor *t) {
  if (!t->strides) return MXC_OK;
  int64_t expect = 1;
  for (int i = t->ndim - 1; i >= 0; --i) {
    MXC_RETURN_ERROR_IF(t->shape[i] != 1 && t->strides[i] != expect,
                        MXC_ERR_UNSUPPORTED,
                        "from_dlpack: axis %d has stride %lld, expected %lld "
                        "(only compact row-major tensors can be imported "
                        "without a copy)",
                        i, (long long)t->strides[i], (long long)expect);
    expect *= t->shape[i];
  }
  return MXC_OK;
}

static void import_free(void *arg) {
  DLManagedTensor *t = arg;
  if (t->deleter) t->deleter(t);
}

/* The first element's address: data + byte_offset, which must not wrap
 * around the address space and must be aligned for the element type (the
 * kernels load whole elements). NULL data is accepted only for an empty
 * tensor. */
static int import_data(const DLTensor *t, const mxc__shape *shape,
                       size_t elem, char **out) {
  uintptr_t base = (uintptr_t)t->data;
  MXC_RETURN_ERROR_IF(!t->data && (mxc__shape_size(shape) > 0 ||
                                   t->byte_offset),
                      MXC_ERR_INVALID_ARGUMENT,
                      "from_dlpack: data is NULL for a tensor of %lld "
                      "elements, byte_offset %llu",
                      (long long)mxc__shape_size(shape),
                      (unsigned long long)t->byte_offset);
  MXC_RETURN_ERROR_IF(t->byte_offset > UINTPTR_MAX - base,
                      MXC_ERR_INVALID_ARGUMENT,
                      "from_dlpack: byte_offset %llu overflows the data "
                      "pointer",
                      (unsigned long long)t->byte_offset);
  MXC_RETURN_ERROR_IF((base + t->byte_offset) % elem != 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "from_dlpack: data + byte_offset (%llu) is not aligned "
                      "to the %zu-byte element size",
                      (unsigned long long)t->byte_offset, elem);
  *out = t->data ? (char *)t->data + t->byte_offset : NULL;
  return MXC_OK;
}

/* kDLCPU, or kDLCUDA device_id as gpu(device_id), whose use
 * mxc__ndarray_create_external checks (the GPU plug-in's reason when it
 * cannot be used). CUDA memory comes as it is: work the producer still has
 * in flight on it must be ordered before mxc's (mxc_ndarray_from_dlpack's
 * doc). */
static int import_device(const DLDevice *d, mxc__device *out) {
  MXC_RETURN_ERROR_IF(
      d->device_type != kDLCPU && d->device_type != kDLCUDA,
      MXC_ERR_UNSUPPORTED,
      "from_dlpack: device type %d is not supported; expected kDLCPU (%d) "
      "or kDLCUDA (%d)",
      (int)d->device_type, (int)kDLCPU, (int)kDLCUDA);
  MXC_RETURN_ERROR_IF(d->device_type == kDLCUDA && d->device_id < 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "from_dlpack: kDLCUDA device_id %d is negative",
                      (int)d->device_id);
  *out = d->device_type == kDLCPU
             ? (mxc__device){MXC_DEVICE_CPU, 0}
             : (mxc__device){MXC_DEVICE_GPU, (int)d->device_id};
  return MXC_OK;
}

int mxc__ndarray_from_dlpack(DLManagedTensor *mt, mxc__ndarray **out) {
  const DLTensor *t = &mt->dl_tensor;
  mxc__device dev;
  MXC_FORWARD_IF_ERROR(import_device(&t->device, &dev));
  MXC_RETURN_ERROR_IF(t->ndim < 0 || t->ndim > MXC_MAX_NDIM, MXC_ERR_SHAPE,
                      "from_dlpack: ndim %d is out of range 0..%d", t->ndim,
                      MXC_MAX_NDIM);
  MXC_RETURN_ERROR_IF(t->ndim > 0 && !t->shape, MXC_ERR_INVALID_ARGUMENT,
                      "from_dlpack: shape is NULL for ndim %d", t->ndim);
  int dtype = 0;
  MXC_FORWARD_IF_ERROR(import_dtype(&t->dtype, &dtype));
  mxc__shape shape;
  MXC_FORWARD_IF_ERROR(mxc__shape_make(t->shape, t->ndim,
                                       mxc__dtype_size(dtype), "from_dlpack",
                                       &shape));
  MXC_FORWARD_IF_ERROR(check_strides(t));
  char *data = NULL;
  MXC_FORWARD_IF_ERROR(import_data(t, &shape, mxc__dtype_size(dtype), &data));
  return mxc__ndarray_create_external(&shape, dtype, dev, data, import_free,
                                      mt, out);
}

void mxc__ndarray_dlpack_abandon(mxc__ndarray *a) {
  a->chunk->ext_free = NULL; /* the chunk no longer owns the tensor */
  mxc__ndarray_free(a);
}
