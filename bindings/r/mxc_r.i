/* The R binding's SWIG file: typemaps for the multi-argument conventions
 * of bindings/swig/mxcb.h, handles as classed external pointers with C
 * finalizers, and failures raised as R conditions of class
 * c("mxc_error", "error", "condition") carrying the C message and code.
 *
 * Used as: swig -r -I../swig -I<mxc include> -o src/mxc_wrap.c -outdir R
 * mxc_r.i (bindings/r/build.sh). The generated R file is internal: the
 * package's own R code calls the generated C entry points directly with
 * .Call (the routines are registered; NAMESPACE imports them with the C_
 * prefix), which keeps S4 object construction off every call.
 *
 * Why the default SWIG R typemaps are replaced for every handle and string
 * argument:
 *  - SWIG 4.1's R runtime ignores SWIG_POINTER_OWN (no finalizer is ever
 *    registered for %newobject results), so native memory would only be
 *    freed by explicit deletes. Here every owned handle gets
 *    R_RegisterCFinalizerEx(..., TRUE).
 *  - SWIG_R_ConvertPtr does not check that its argument is an external
 *    pointer (R_ExternalPtrAddr on a number reads garbage). Here a handle
 *    argument must be an external pointer whose tag names the expected
 *    type, or NULL.
 *  - Errors are raised by longjmp (R's stop()). Nothing in these wrappers
 *    is malloc'ed: strings point into R's CHARSXPs and arrays come from
 *    R_alloc, which R releases on the error path too. So raising from the
 *    middle of a wrapper leaks nothing.
 *
 * Ownership: a handle's external pointer owns it. mx_free() (the SWIG
 * delete_* wrappers) frees it and clears the pointer, so the finalizer
 * then finds NULL and does nothing; a cleared pointer passed back to C
 * becomes a NULL handle, which mxc reports as MXC_ERR_INVALID_HANDLE.
 * Threads: R calls all of this from its one main thread. */
%module mxc

#define MXCB_CUSTOM_EXCEPTION

/* clock_gettime for the bench loop under -std=c11. */
%begin %{
#define _POSIX_C_SOURCE 200809L
%}

%{
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <Rinternals.h>

#include "mxcb.h"

/* Raises the calling thread's last mxcb failure as an mxc_error condition
 * (fields message, call, code, name). Does not return. */
static void mxcr__raise_code(int code, const char *message) {
  SEXP cond, names, cls, call;
  cond = PROTECT(Rf_allocVector(VECSXP, 4));
  SET_VECTOR_ELT(cond, 0, Rf_mkString(message));
  SET_VECTOR_ELT(cond, 1, R_NilValue);
  SET_VECTOR_ELT(cond, 2, Rf_ScalarInteger(code));
  SET_VECTOR_ELT(cond, 3, Rf_mkString(mxc_error_name(code)));
  names = PROTECT(Rf_allocVector(STRSXP, 4));
  SET_STRING_ELT(names, 0, Rf_mkChar("message"));
  SET_STRING_ELT(names, 1, Rf_mkChar("call"));
  SET_STRING_ELT(names, 2, Rf_mkChar("code"));
  SET_STRING_ELT(names, 3, Rf_mkChar("name"));
  Rf_setAttrib(cond, R_NamesSymbol, names);
  cls = PROTECT(Rf_allocVector(STRSXP, 3));
  SET_STRING_ELT(cls, 0, Rf_mkChar("mxc_error"));
  SET_STRING_ELT(cls, 1, Rf_mkChar("error"));
  SET_STRING_ELT(cls, 2, Rf_mkChar("condition"));
  Rf_setAttrib(cond, R_ClassSymbol, cls);
  call = PROTECT(Rf_lang2(Rf_install("stop"), cond));
  Rf_eval(call, R_BaseEnv);
  UNPROTECT(4); /* not reached */
}

static void mxcr__raise(void) {
  mxcr__raise_code(mxcb_last_code(), mxcb_last_message());
}

/* Finalizers: run by R's garbage collector (or at exit) on the main
 * thread; a cleared pointer (explicitly freed) is skipped. */
#define MXCR__FINALIZER(NAME, FREE, TYPE)        \
  static void NAME(SEXP p) {                      \
    void *h = R_ExternalPtrAddr(p);               \
    if (h != NULL) {                              \
      R_ClearExternalPtr(p);                      \
      FREE((TYPE)h);                              \
    }                                             \
  }
MXCR__FINALIZER(mxcr__fin_ndarray, mxc_ndarray_free, mxc_ndarray)
MXCR__FINALIZER(mxcr__fin_symbol, mxc_symbol_free, mxc_symbol)
MXCR__FINALIZER(mxcr__fin_executor, mxc_executor_free, mxc_executor)
MXCR__FINALIZER(mxcr__fin_data_iter, mxc_data_iter_free, mxc_data_iter)
MXCR__FINALIZER(mxcr__fin_recordio, mxc_recordio_free, mxc_recordio)
MXCR__FINALIZER(mxcr__fin_str_list, mxc_str_list_free, mxc_str_list)
MXCR__FINALIZER(mxcr__fin_outputs, mxcb_outputs_free, mxcb_outputs *)
MXCR__FINALIZER(mxcr__fin_checkpoint, mxcb_checkpoint_free, mxcb_checkpoint *)
MXCR__FINALIZER(mxcr__fin_predictor, mxc_predictor_free, mxc_predictor)
MXCR__FINALIZER(mxcr__fin_kvstore, mxc_kvstore_free, mxc_kvstore)
MXCR__FINALIZER(mxcr__fin_predictor_spec, mxcb_predictor_spec_free,
                mxcb_predictor_spec *)

/* An owned handle as an external pointer tagged with its SWIG type (so
 * the SWIG delete_* wrappers accept it), classed cls (NULL: no class),
 * with finalizer fin (NULL: not owned, e.g. static operator handles).
 * NULL becomes R NULL. */
static SEXP mxcr__wrap(void *h, swig_type_info *ty, R_CFinalizer_t fin,
                       const char *cls) {
  SEXP p;
  if (h == NULL) return R_NilValue;
  p = PROTECT(R_MakeExternalPtr(h, R_MakeExternalPtr(ty, R_NilValue,
                                                     R_NilValue),
                                R_NilValue));
  if (fin != NULL) R_RegisterCFinalizerEx(p, fin, TRUE);
  if (cls != NULL) Rf_setAttrib(p, R_ClassSymbol, Rf_mkString(cls));
  UNPROTECT(1);
  return p;
}

/* Native memory pressure, which R's collector cannot see: an mx_ndarray
 * costs R's heap some 100 bytes whatever the size of its data, so a loop
 * that drops large arrays can fill native memory long before R collects
 * (R torch's problem and remedy). So each new array compares the bytes
 * of live arrays (mxc_scope_stats) with a threshold and, past it, runs
 * R's collector (R_gc also runs the finalizers, freeing what was
 * dropped); the next threshold is twice what is then still live, at
 * least MXC_R_GC_BYTES (default 256 MiB), and halves again once most of
 * it is gone, so programs that keep many arrays are not slowed. */
static int64_t mxcr__gc_floor, mxcr__gc_at;

static void mxcr__pace(void) {
  int64_t bytes = 0;
  if (mxcr__gc_floor == 0) {
    const char *env = getenv("MXC_R_GC_BYTES");
    double v = env != NULL ? atof(env) : 0;
    mxcr__gc_floor = v >= 1 << 20 ? (int64_t)v : (int64_t)256 << 20;
    mxcr__gc_at = mxcr__gc_floor;
  }
  if (mxc_scope_stats(NULL, NULL, &bytes) != MXC_OK) return;
  if (bytes < mxcr__gc_at / 4 && mxcr__gc_at / 2 >= mxcr__gc_floor) {
    mxcr__gc_at /= 2;
  }
  if (bytes <= mxcr__gc_at) return;
  R_gc();
  if (mxc_scope_stats(NULL, NULL, &bytes) != MXC_OK) return;
  mxcr__gc_at = 2 * bytes > mxcr__gc_floor ? 2 * bytes : mxcr__gc_floor;
}

/* The handle in x, which must be NULL or an external pointer tagged ty;
 * anything else raises an mxc_error (MXC_ERR_INVALID_HANDLE) instead of
 * being dereferenced. A freed (cleared) pointer raises too, unless
 * allow_freed (the delete wrappers: freeing twice does nothing). */
static void *mxcr__handle(SEXP x, swig_type_info *ty, const char *what,
                          int allow_freed) {
  SEXP tag;
  void *h;
  if (x == R_NilValue) return NULL;
  if (TYPEOF(x) != EXTPTRSXP) goto bad;
  tag = R_ExternalPtrTag(x);
  if (TYPEOF(tag) != EXTPTRSXP || R_ExternalPtrAddr(tag) != (void *)ty)
    goto bad;
  h = R_ExternalPtrAddr(x);
  if (h == NULL && !allow_freed)
    mxcr__raise_code(MXC_ERR_INVALID_HANDLE,
                     "the object was freed (mx_free) and cannot be used");
  return h;
bad:
  mxcr__raise_code(MXC_ERR_INVALID_HANDLE, what);
  return NULL;
}

/* A vector of handles (a list, or one handle) as an R_alloc'ed array. */
static void *mxcr__handles(SEXP x, swig_type_info *ty, const char *what,
                           int *n) {
  void **out;
  int i;
  if (x == R_NilValue) {
    *n = 0;
    return NULL;
  }
  if (TYPEOF(x) == EXTPTRSXP) {
    out = (void **)R_alloc(1, sizeof(void *));
    out[0] = mxcr__handle(x, ty, what, 0);
    *n = 1;
    return out;
  }
  if (TYPEOF(x) != VECSXP) mxcr__raise_code(MXC_ERR_INVALID_HANDLE, what);
  *n = Rf_length(x);
  out = (void **)R_alloc((size_t)*n + 1, sizeof(void *));
  for (i = 0; i < *n; i++) {
    if (VECTOR_ELT(x, i) == R_NilValue)
      mxcr__raise_code(MXC_ERR_INVALID_HANDLE, what);
    out[i] = mxcr__handle(VECTOR_ELT(x, i), ty, what, 0);
  }
  return out;
}

/* A character vector (NULL: empty) as an R_alloc'ed array of pointers
 * into R's own strings, valid for the duration of the call. */
static const char **mxcr__strings(SEXP x, int *n) {
  const char **out;
  int i;
  if (x == R_NilValue) {
    *n = 0;
    return NULL;
  }
  if (TYPEOF(x) != STRSXP)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "expected a character vector");
  *n = Rf_length(x);
  out = (const char **)R_alloc((size_t)*n + 1, sizeof(char *));
  for (i = 0; i < *n; i++) {
    if (STRING_ELT(x, i) == NA_STRING)
      mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "NA is not a valid string");
    out[i] = CHAR(STRING_ELT(x, i));
  }
  return out;
}

/* A whole number from a length-1 integer, double or logical vector
 * (SWIG's default reads INTEGER(x)[0] unchecked: a double is an R error
 * and an empty vector an out-of-bounds read). */
static double mxcr__whole(SEXP x, double lo, double hi) {
  double d;
  if (Rf_length(x) != 1) goto bad;
  switch (TYPEOF(x)) {
    case INTSXP: case LGLSXP:
      if (INTEGER(x)[0] == NA_INTEGER) goto bad;
      d = INTEGER(x)[0];
      break;
    case REALSXP: d = REAL(x)[0]; break;
    default: goto bad;
  }
  if (d >= lo && d <= hi && d == (double)(int64_t)d) return d;
bad:
  mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT,
                   "expected a single whole number in range");
  return 0;
}

/* Bytes of an atomic vector (raw, logical, integer, double). */
static void *mxcr__bytes(SEXP x, int64_t *n) {
  switch (TYPEOF(x)) {
    case RAWSXP: *n = XLENGTH(x); return RAW(x);
    case LGLSXP: *n = XLENGTH(x) * (int64_t)sizeof(int); return LOGICAL(x);
    case INTSXP: *n = XLENGTH(x) * (int64_t)sizeof(int); return INTEGER(x);
    case REALSXP: *n = XLENGTH(x) * (int64_t)sizeof(double); return REAL(x);
    default:
      mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT,
                       "expected a raw, logical, integer or double vector");
  }
  return NULL;
}
%}

/* ---- handles ------------------------------------------------------------ */

%define MXCR_HANDLE(CTYPE, FIN, CLS, WHAT)
%typemap(in) CTYPE %{ $1 = ($1_ltype)mxcr__handle($input, $descriptor, WHAT, 0); %}
%typemap(in) CTYPE self %{ $1 = ($1_ltype)mxcr__handle($input, $descriptor, WHAT, 1); %}
%typemap(out) CTYPE %{ $result = mxcr__wrap((void *)$1, $descriptor, FIN, CLS); %}
%enddef
MXCR_HANDLE(struct mxc_ndarray_s *, mxcr__fin_ndarray, "mx_ndarray", "expected an mx_ndarray")
MXCR_HANDLE(struct mxc_symbol_s *, mxcr__fin_symbol, "mx_symbol", "expected an mx_symbol")
MXCR_HANDLE(struct mxc_executor_s *, mxcr__fin_executor, "mx_executor", "expected an mx_executor")
MXCR_HANDLE(struct mxc_data_iter_s *, mxcr__fin_data_iter, "mx_data_iter", "expected an mx_data_iter")
MXCR_HANDLE(struct mxc_recordio_s *, mxcr__fin_recordio, "mx_recordio", "expected an mx_recordio")
MXCR_HANDLE(struct mxc_str_list_s *, mxcr__fin_str_list, NULL, "expected a string list handle")
MXCR_HANDLE(struct mxcb_outputs *, mxcr__fin_outputs, NULL, "expected an output list handle")
MXCR_HANDLE(struct mxcb_checkpoint *, mxcr__fin_checkpoint, NULL, "expected a checkpoint handle")
MXCR_HANDLE(struct mxc_predictor_s *, mxcr__fin_predictor, "mx_predictor", "expected an mx_predictor")
MXCR_HANDLE(struct mxc_kvstore_s *, mxcr__fin_kvstore, "mx_kvstore", "expected an mx_kvstore")
MXCR_HANDLE(struct mxcb_predictor_spec *, mxcr__fin_predictor_spec, NULL, "expected a predictor spec handle")
/* Operator handles are static: never freed. Scopes are ended by
 * with_scope itself, on exit from its expression, never by a finalizer. */
MXCR_HANDLE(const struct mxc_op_s *, NULL, NULL, "expected an operator handle")
MXCR_HANDLE(struct mxc_scope_s *, NULL, "mx_scope", "expected an mx_scope")
/* New arrays also pace R's collector (mxcr__pace, below). */
%typemap(out) struct mxc_ndarray_s * %{
  $result = PROTECT(mxcr__wrap((void *)$1, $descriptor, mxcr__fin_ndarray,
                               "mx_ndarray"));
  mxcr__pace();
  UNPROTECT(1);
%}

/* ---- the multi-argument conventions of mxcb.h ---------------------------- */

%typemap(in) (const mxc_ndarray *HANDLES, int N_HANDLES) %{
  $1 = ($1_ltype)mxcr__handles($input, $descriptor(struct mxc_ndarray_s *),
                               "expected a list of mx_ndarray", &$2);
%}
%typemap(in) (const mxc_symbol *SYMBOLS, int N_SYMBOLS) %{
  $1 = ($1_ltype)mxcr__handles($input, $descriptor(struct mxc_symbol_s *),
                               "expected a list of mx_symbol", &$2);
%}
%typemap(in) (const char *const *KV, int N_KV), (const char *const *NAMES, int N_NAMES) %{
  $1 = ($1_ltype)mxcr__strings($input, &$2);
%}
%typemap(in) (const int64_t *DIMS, int NDIM) {
  int i_;
  if (TYPEOF($input) != REALSXP && TYPEOF($input) != INTSXP)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "a shape must be numeric");
  $2 = Rf_length($input);
  $1 = (int64_t *)R_alloc((size_t)$2 + 1, sizeof(int64_t));
  for (i_ = 0; i_ < $2; i_++) {
    double d = TYPEOF($input) == REALSXP ? REAL($input)[i_]
               : INTEGER($input)[i_] == NA_INTEGER ? -1.0
                                                   : INTEGER($input)[i_];
    if (!(d >= 0 && d < 9.0e15))
      mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT,
                       "a shape needs non-negative whole numbers");
    $1[i_] = (int64_t)d;
  }
}
%typemap(in) (const void *BYTES, int64_t N_BYTES) %{ $1 = mxcr__bytes($input, &$2); %}
/* Records and encoded images: raw vectors only (a double vector's bytes
 * are no image). */
%typemap(in) (const void *DATA, int64_t N_DATA) %{
  if (TYPEOF($input) != RAWSXP)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "expected a raw vector");
  $2 = XLENGTH($input);
  $1 = $2 > 0 ? RAW($input) : NULL;
%}
/* Labels: a numeric vector as float32 (R_alloc'ed). */
%typemap(in) (const float *FLOATS, int N_FLOATS) {
  int i_;
  if (TYPEOF($input) != REALSXP && TYPEOF($input) != INTSXP)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "labels must be numeric");
  if (XLENGTH($input) > 1 << 20)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "at most 2^20 labels");
  $2 = Rf_length($input);
  $1 = (float *)R_alloc((size_t)$2 + 1, sizeof(float));
  for (i_ = 0; i_ < $2; i_++)
    $1[i_] = (float)(TYPEOF($input) == REALSXP ? REAL($input)[i_]
                                                : INTEGER($input)[i_]);
}
/* Outputs the R API takes from the helpers below instead (R values are
 * immutable, and R has no float32): these wrappers are not used, and
 * get no output space. */
%typemap(in, numinputs = 0) (void *DATA_OUT, int64_t N_DATA_OUT) %{
  $1 = NULL;
  $2 = 0;
%}
%typemap(in, numinputs = 0) (float *FLOATS_OUT, int N_FLOATS_OUT) %{
  $1 = NULL;
  $2 = 0;
%}
/* Fills an R vector in place: internal use only (R values are otherwise
 * immutable); the R API uses ndarray_to_r below instead. */
%typemap(in) (void *BYTES_OUT, int64_t N_BYTES_OUT) %{ $1 = mxcr__bytes($input, &$2); %}

/* Scalars, checked. */
%typemap(in) int %{ $1 = (int)mxcr__whole($input, -2147483648.0, 2147483647.0); %}
%typemap(in) int64_t %{ $1 = (int64_t)mxcr__whole($input, -9.0e15, 9.0e15); %}

/* Plain strings: pointers into R's strings (no copy, nothing to free). */
%typemap(in) const char * %{
  if (TYPEOF($input) != STRSXP || Rf_length($input) != 1 ||
      STRING_ELT($input, 0) == NA_STRING)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "expected one string");
  $1 = ($1_ltype)CHAR(STRING_ELT($input, 0));
%}
%typemap(freearg) const char * ""

/* R-side types of the generated (internal) R wrappers. */
%typemap(rtype) (const mxc_ndarray *HANDLES, int N_HANDLES), (const mxc_symbol *SYMBOLS, int N_SYMBOLS) "list"
%typemap(rtype) (const char *const *KV, int N_KV), (const char *const *NAMES, int N_NAMES) "character"
%typemap(rtype) (const int64_t *DIMS, int NDIM) "numeric"
%typemap(rtype) (const void *BYTES, int64_t N_BYTES), (void *BYTES_OUT, int64_t N_BYTES_OUT) "vector"
%typemap(rtype) (const void *DATA, int64_t N_DATA) "raw"
%typemap(rtype) (const float *FLOATS, int N_FLOATS) "numeric"
%typemap(scoercein) (const int64_t *DIMS, int NDIM), (const void *BYTES, int64_t N_BYTES), (void *BYTES_OUT, int64_t N_BYTES_OUT) ""
%typemap(scoercein) (const void *DATA, int64_t N_DATA), (const float *FLOATS, int N_FLOATS) ""

/* ---- errors ------------------------------------------------------------ */

%exception {
  $action
  if (mxcb_last_code() != 0) mxcr__raise();
}

/* The destructors never fail and do not reset the failure flag, so under
 * the %exception above they would re-raise the previous call's error
 * (mxc.i lists the mxcb_*_free functions but not the destructors). */
%noexception mxc_ndarray_s::~mxc_ndarray_s;
%noexception mxc_symbol_s::~mxc_symbol_s;
%noexception mxc_executor_s::~mxc_executor_s;
%noexception mxc_data_iter_s::~mxc_data_iter_s;
%noexception mxc_recordio_s::~mxc_recordio_s;
%noexception mxc_str_list_s::~mxc_str_list_s;
%noexception mxcb_outputs::~mxcb_outputs;
%noexception mxcb_checkpoint::~mxcb_checkpoint;
%noexception mxc_predictor_s::~mxc_predictor_s;
%noexception mxcb_predictor_spec::~mxcb_predictor_spec;
%noexception mxc_kvstore_s::~mxc_kvstore_s;

%include "mxc.i"

/* ---- R-only helpers (same failure protocol as mxcb.h) ------------------- */

%typemap(in) SEXP %{ $1 = $input; %}
%typemap(out) SEXP %{ $result = $1; %}
%noexception mxcb_r_is_null;

%inline %{
/* c(live handles, bytes of their array data) of scope s (NULL: the
 * process), as doubles. Errors as usual. */
static SEXP mxcb_r_scope_stats(mxc_scope s) {
  int64_t n = 0, b = 0;
  SEXP out;
  mxcb__begin();
  if (mxcb__check(mxc_scope_stats(s, &n, &b))) return R_NilValue;
  out = Rf_allocVector(REALSXP, 2);
  REAL(out)[0] = (double)n;
  REAL(out)[1] = (double)b;
  return out;
}

/* The array's elements in row-major order as a new R vector: double for
 * float16/32/64 and int64 (R has no 64-bit integer), integer for the
 * 8/32-bit integer types, logical for bool. Waits for pending writes. */
static SEXP mxcb_r_ndarray_to_r(mxc_ndarray a) {
  int64_t n = 0, i;
  int dtype = 0;
  SEXP out;
  void *buf;
  mxcb__begin();
  if (mxcb__check(mxc_ndarray_size(a, &n)) ||
      mxcb__check(mxc_ndarray_dtype(a, &dtype)))
    return R_NilValue;
  switch (dtype) {
    case MXC_DTYPE_FLOAT64:
      out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t)n));
      if (mxcb__check(mxc_ndarray_copy_to_host(a, REAL(out), (size_t)n * 8))) {
        UNPROTECT(1);
        return R_NilValue;
      }
      UNPROTECT(1);
      return out;
    case MXC_DTYPE_FLOAT32: case MXC_DTYPE_INT64: case MXC_DTYPE_INT32:
    case MXC_DTYPE_UINT8: case MXC_DTYPE_INT8: case MXC_DTYPE_BOOL:
      break;
    default:
      mxcb__fail_msg(MXC_ERR_DTYPE, "this dtype cannot be converted to R");
      return R_NilValue;
  }
  buf = R_alloc((size_t)n + 1, (size_t)mxc_dtype_size(dtype));
  if (mxcb__check(mxc_ndarray_copy_to_host(
          a, buf, (size_t)n * (size_t)mxc_dtype_size(dtype))))
    return R_NilValue;
  switch (dtype) {
    case MXC_DTYPE_FLOAT32:
      out = Rf_allocVector(REALSXP, (R_xlen_t)n);
      for (i = 0; i < n; i++) REAL(out)[i] = ((const float *)buf)[i];
      break;
    case MXC_DTYPE_INT64:
      out = Rf_allocVector(REALSXP, (R_xlen_t)n);
      for (i = 0; i < n; i++) REAL(out)[i] = (double)((const int64_t *)buf)[i];
      break;
    case MXC_DTYPE_INT32:
      out = Rf_allocVector(INTSXP, (R_xlen_t)n);
      memcpy(INTEGER(out), buf, (size_t)n * 4);
      break;
    case MXC_DTYPE_UINT8:
      out = Rf_allocVector(INTSXP, (R_xlen_t)n);
      for (i = 0; i < n; i++) INTEGER(out)[i] = ((const uint8_t *)buf)[i];
      break;
    case MXC_DTYPE_INT8:
      out = Rf_allocVector(INTSXP, (R_xlen_t)n);
      for (i = 0; i < n; i++) INTEGER(out)[i] = ((const int8_t *)buf)[i];
      break;
    default: /* bool */
      out = Rf_allocVector(LGLSXP, (R_xlen_t)n);
      for (i = 0; i < n; i++) LOGICAL(out)[i] = ((const uint8_t *)buf)[i] != 0;
      break;
  }
  return out;
}

/* Writes the R vector x (double, integer or logical; row-major order, as
 * many elements as a) into a, converting to a's dtype. NA cannot go into
 * an integer or bool array; into a float array it becomes NaN. */
static void mxcb_r_ndarray_from_r(mxc_ndarray a, SEXP x) {
  int64_t n = 0, i;
  int dtype = 0, t = TYPEOF(x);
  size_t es;
  void *buf;
  mxcb__begin();
  if (mxcb__check(mxc_ndarray_size(a, &n)) ||
      mxcb__check(mxc_ndarray_dtype(a, &dtype)))
    return;
  if (t != REALSXP && t != INTSXP && t != LGLSXP) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                   "expected a double, integer or logical vector");
    return;
  }
  if ((int64_t)XLENGTH(x) != n) {
    mxcb__fail_msg(MXC_ERR_SHAPE,
                   "the R vector's length differs from the array's size");
    return;
  }
  if (dtype == MXC_DTYPE_FLOAT64 && t == REALSXP) {
    mxcb__check(mxc_ndarray_copy_from_host(a, REAL(x), (size_t)n * 8));
    return;
  }
  if (dtype != MXC_DTYPE_FLOAT32 && dtype != MXC_DTYPE_FLOAT64 &&
      dtype != MXC_DTYPE_INT64 && dtype != MXC_DTYPE_INT32 &&
      dtype != MXC_DTYPE_UINT8 && dtype != MXC_DTYPE_INT8 &&
      dtype != MXC_DTYPE_BOOL) {
    mxcb__fail_msg(MXC_ERR_DTYPE, "R data cannot be converted to this dtype");
    return;
  }
  es = (size_t)mxc_dtype_size(dtype);
  buf = R_alloc((size_t)n + 1, es);
  for (i = 0; i < n; i++) {
    double v;
    int na;
    if (t == REALSXP) {
      v = REAL(x)[i];
      na = ISNAN(v);
    } else {
      int iv = t == INTSXP ? INTEGER(x)[i] : LOGICAL(x)[i];
      na = iv == NA_INTEGER;
      v = na ? R_NaN : (double)iv;
    }
    if (dtype == MXC_DTYPE_FLOAT32) { ((float *)buf)[i] = (float)v; continue; }
    if (dtype == MXC_DTYPE_FLOAT64) { ((double *)buf)[i] = v; continue; }
    if (na) {
      mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT,
                     "NA/NaN cannot be stored in an integer or bool array");
      return;
    }
    switch (dtype) {
      case MXC_DTYPE_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
      case MXC_DTYPE_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
      case MXC_DTYPE_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
      case MXC_DTYPE_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
      default: ((uint8_t *)buf)[i] = v != 0; break;
    }
  }
  mxcb__check(mxc_ndarray_copy_from_host(a, buf, (size_t)n * es));
}

/* 1 when x is not a live handle: NULL, not an external pointer, or
 * freed (cleared). Never fails. */
static int mxcb_r_is_null(SEXP x) {
  return TYPEOF(x) != EXTPTRSXP || R_ExternalPtrAddr(x) == NULL;
}

/* The shape as a double vector (extents can exceed R's int range). */
static SEXP mxcb_r_ndarray_shape(mxc_ndarray a) {
  int nd = 0, i;
  const int64_t *shape = NULL;
  SEXP out;
  mxcb__begin();
  if (mxcb__check(mxc_ndarray_shape(a, &nd, &shape))) return R_NilValue;
  out = Rf_allocVector(REALSXP, nd);
  for (i = 0; i < nd; i++) REAL(out)[i] = (double)shape[i];
  return out;
}

/* All strings of a list as a character vector (the list stays owned by
 * the caller). */
static SEXP mxcb_r_str_list_to_r(mxc_str_list l) {
  int n = 0, i;
  SEXP out;
  mxcb__begin();
  if (mxcb__check(mxc_str_list_size(l, &n))) return R_NilValue;
  out = PROTECT(Rf_allocVector(STRSXP, n));
  for (i = 0; i < n; i++) {
    const char *s = NULL;
    if (mxcb__check(mxc_str_list_get(l, i, &s))) {
      UNPROTECT(1);
      return R_NilValue;
    }
    SET_STRING_ELT(out, i, Rf_mkCharCE(s, CE_UTF8));
  }
  UNPROTECT(1);
  return out;
}

/* The current record of r as a new raw vector (empty when there is
 * none: callers know from the read whether there is one). */
static SEXP mxcb_r_recordio_current(mxc_recordio r) {
  const void *d = NULL;
  int64_t n = 0;
  SEXP out;
  mxcb__begin();
  if (mxcb__check(mxc_recordio_data(r, &d, &n))) return R_NilValue;
  out = Rf_allocVector(RAWSXP, (R_xlen_t)n);
  if (n > 0) memcpy(RAW(out), d, (size_t)n);
  return out;
}

/* An image record (im2rec's layout) as a new raw vector: labels (any
 * count; one goes into the header), id, id2, then the image. */
static SEXP mxcb_r_recordio_pack_image(const float *FLOATS, int N_FLOATS,
                                       int64_t id, int64_t id2,
                                       const void *DATA, int64_t N_DATA) {
  int64_t need = mxcb_recordio_pack_image(FLOATS, N_FLOATS, id, id2, DATA,
                                          N_DATA, NULL, 0);
  SEXP out;
  if (need < 0) return R_NilValue;
  out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)need));
  mxcb_recordio_pack_image(FLOATS, N_FLOATS, id, id2, DATA, N_DATA, RAW(out),
                           need);
  UNPROTECT(1);
  return out;
}

/* An image record's header as list(label, id, id2, image): the labels as
 * doubles, the ids as doubles (exact below 2^53), the image a raw copy. */
static SEXP mxcb_r_recordio_unpack_image(const void *DATA, int64_t N_DATA) {
  int64_t f[3];
  int n = mxcb__unpack_image(DATA, N_DATA, NULL, 0, f), i;
  float *labels;
  SEXP out, names, lab, img;
  if (n < 0) return R_NilValue;
  labels = (float *)R_alloc((size_t)n, sizeof(float));
  mxcb__unpack_image(DATA, N_DATA, labels, n, f);
  lab = PROTECT(Rf_allocVector(REALSXP, n));
  for (i = 0; i < n; i++) REAL(lab)[i] = labels[i];
  img = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t)(N_DATA - f[2])));
  if (N_DATA > f[2]) memcpy(RAW(img), (const char *)DATA + f[2], (size_t)(N_DATA - f[2]));
  out = PROTECT(Rf_allocVector(VECSXP, 4));
  SET_VECTOR_ELT(out, 0, lab);
  SET_VECTOR_ELT(out, 1, Rf_ScalarReal((double)(uint64_t)f[0]));
  SET_VECTOR_ELT(out, 2, Rf_ScalarReal((double)(uint64_t)f[1]));
  SET_VECTOR_ELT(out, 3, img);
  names = PROTECT(Rf_allocVector(STRSXP, 4));
  SET_STRING_ELT(names, 0, Rf_mkChar("label"));
  SET_STRING_ELT(names, 1, Rf_mkChar("id"));
  SET_STRING_ELT(names, 2, Rf_mkChar("id2"));
  SET_STRING_ELT(names, 3, Rf_mkChar("image"));
  Rf_setAttrib(out, R_NamesSymbol, names);
  UNPROTECT(4);
  return out;
}

/* Bench only (bench/bindings/r): n invokes of elemwise_add on two float32
 * arrays of 4 elements straight through mxc_op_invoke, a new output each
 * call freed right away, mxc_wait_all every 1000 calls; returns the
 * microseconds per call. */
static double mxcb_r_bench_c_loop(int n) {
  int64_t dims[1] = {4};
  float x[4] = {1, 2, 3, 4};
  mxc_ndarray in[2] = {NULL, NULL}, out;
  mxc_op op = NULL;
  struct timespec t0 = {0, 0}, t1 = {0, 0};
  int i;
  mxcb__begin();
  if (mxcb__check(mxc_op_find("elemwise_add", &op)) ||
      mxcb__check(mxc_ndarray_create(dims, 1, MXC_DTYPE_FLOAT32,
                                     MXC_DEVICE_CPU, 0, 0, &in[0])) ||
      mxcb__check(mxc_ndarray_create(dims, 1, MXC_DTYPE_FLOAT32,
                                     MXC_DEVICE_CPU, 0, 0, &in[1])) ||
      mxcb__check(mxc_ndarray_copy_from_host(in[0], x, sizeof x)) ||
      mxcb__check(mxc_ndarray_copy_from_host(in[1], x, sizeof x)))
    goto done;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (i = 1; i <= n; i++) {
    out = NULL;
    if (mxcb__check(mxc_op_invoke(op, NULL, NULL, 0, in, 2, &out, 1, NULL)))
      goto done;
    mxc_ndarray_free(out);
    if (i % 1000 == 0 && mxcb__check(mxc_wait_all())) goto done;
  }
  if (mxcb__check(mxc_wait_all())) goto done;
  clock_gettime(CLOCK_MONOTONIC, &t1);
done:
  mxc_ndarray_free(in[0]);
  mxc_ndarray_free(in[1]);
  if (mxcb_last_code() != 0 || n <= 0) return -1;
  return ((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
          (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / n;
}
%}

/* ---- layers and fit (R-only; handles are tagged external pointers) ------
 *
 * Blocks, optimizers and fits are external pointers whose tag is the
 * symbol of their R class (mx_block, mx_optimizer, mx_fit), with C
 * finalizers, like the SWIG handles above; they are kept out of SWIG's
 * type table so that the Java and Go modules' declarations of the same
 * types (bindings/swig) cannot clash with them. Strings and handle lists
 * come from R's memory, so raising from the middle leaks nothing.
 *
 * A fit's listener is an R function (the package's dispatcher, which runs
 * the user's callbacks under tryCatch and keeps the condition of one that
 * fails). The C listener calls it through R_ToplevelExec, so nothing
 * longjmps across mxc's frames (not even an interrupt): a failure ends
 * the run with an error code, and mxcb_r_fit_run returns, leaving R to
 * raise the kept condition once mxc has unwound.
 *
 * These raise their own errors (mxcr__ok), so the %exception check of the
 * mxcb functions above, which reads mxcb's flag, is turned off for them. */
%{
#define MXCR__HANDLE_FIN(NAME, FREE, TYPE)   \
  static void NAME(SEXP p) {                 \
    void *h = R_ExternalPtrAddr(p);          \
    if (h != NULL) {                         \
      R_ClearExternalPtr(p);                 \
      FREE((TYPE)h);                         \
    }                                        \
  }
MXCR__HANDLE_FIN(mxcr__fin_block, mxc_block_free, mxc_block)
MXCR__HANDLE_FIN(mxcr__fin_optimizer, mxc_optimizer_free, mxc_optimizer)
MXCR__HANDLE_FIN(mxcr__fin_fit, mxc_fit_free, mxc_fit)

/* h as a new external pointer of class cls (tag: the class's symbol). */
static SEXP mxcr__own(void *h, const char *cls, R_CFinalizer_t fin) {
  SEXP p = PROTECT(R_MakeExternalPtr(h, Rf_install(cls), R_NilValue));
  R_RegisterCFinalizerEx(p, fin, TRUE);
  Rf_setAttrib(p, R_ClassSymbol, Rf_mkString(cls));
  UNPROTECT(1);
  return p;
}

/* The live handle in x, an external pointer tagged cls; raises an
 * mxc_error naming `what` otherwise (a freed one included). */
static void *mxcr__get(SEXP x, const char *cls, const char *what) {
  void *h;
  if (TYPEOF(x) != EXTPTRSXP || R_ExternalPtrTag(x) != Rf_install(cls))
    mxcr__raise_code(MXC_ERR_INVALID_HANDLE, what);
  h = R_ExternalPtrAddr(x);
  if (h == NULL)
    mxcr__raise_code(MXC_ERR_INVALID_HANDLE,
                     "the object was freed (mx_free) and cannot be used");
  return h;
}

#define MXCR__BLOCK(x) ((mxc_block)mxcr__get((x), "mx_block", "expected an mx_block"))
#define MXCR__FIT(x) ((mxc_fit)mxcr__get((x), "mx_fit", "expected an mx_fit"))

/* The R message of the callback running now (a user block's forward
 * function, a KVStore updater), written by its dispatcher's evaluation
 * (R runs one callback at a time: one thread) and handed to mxc at once
 * by mxcr__cb_fail. */
static char mxcr__cb_msg[2048];

/* Fails the running callback with what + ": " + msg as mxc's message
 * (mxc_set_last_error): the mxc call that ran it reports that message
 * behind its own prefixes (e.g. "key 4: "), and mxcr__ok raises it once
 * mxc has unwound. Returns MXC_ERR_OPERATOR for the callback to return. */
static int mxcr__cb_fail(const char *what, const char *msg) {
  char text[sizeof mxcr__cb_msg];
  /* Bounded pieces (what is short), so the message always fits. */
  snprintf(text, sizeof text, "%.255s: %.1780s", what, msg);
  return mxc_set_last_error(MXC_ERR_OPERATOR, text);
}

/* Raises the failure of an mxc call (rc != MXC_OK) as an mxc_error with
 * mxc's message (a failed callback's own text included). */
static void mxcr__ok(int rc) {
  if (rc != MXC_OK) mxcr__raise_code(rc, mxc_last_error());
}

/* Keys and values of kv (c(k0, v0, k1, v1, ...)), R_alloc'ed. */
static int mxcr__kv(SEXP kv, const char ***keys, const char ***vals) {
  int n = 0, i;
  const char **s = mxcr__strings(kv, &n);
  if (n % 2 != 0)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "expected key/value pairs");
  *keys = (const char **)R_alloc((size_t)n / 2 + 1, sizeof(char *));
  *vals = (const char **)R_alloc((size_t)n / 2 + 1, sizeof(char *));
  for (i = 0; i < n / 2; i++) {
    (*keys)[i] = s[2 * i];
    (*vals)[i] = s[2 * i + 1];
  }
  return n / 2;
}

static const char *mxcr__string(SEXP x, const char *what) {
  if (TYPEOF(x) != STRSXP || Rf_length(x) != 1 || STRING_ELT(x, 0) == NA_STRING)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, what);
  return CHAR(STRING_ELT(x, 0));
}

static SEXP mxcr__array(mxc_ndarray a) {
  SEXP p = PROTECT(mxcr__wrap(a, SWIGTYPE_p_mxc_ndarray_s, mxcr__fin_ndarray,
                              "mx_ndarray"));
  mxcr__pace();
  UNPROTECT(1);
  return p;
}

/* ---- fit ---- */

/* Set by the listener when the R dispatcher failed or did not return
 * TRUE; read by mxcb_r_fit_run (R runs one fit at a time per thread). */
static int mxcr__listener_failed;

typedef struct mxcr__event {
  SEXP fn;
  int event;
  mxc_fit fit;
  int ok;
} mxcr__event;

/* Calls fn(event, fit) with the fit lent as an external pointer without
 * finalizer, cleared afterwards (kept beyond the call it is a freed
 * object; mxc's handle checks catch it in any case). */
static void mxcr__listener_eval(void *data) {
  mxcr__event *e = (mxcr__event *)data;
  SEXP f = PROTECT(R_MakeExternalPtr(e->fit, Rf_install("mx_fit"), R_NilValue));
  SEXP call;
  Rf_setAttrib(f, R_ClassSymbol, Rf_mkString("mx_fit"));
  call = PROTECT(Rf_lang3(e->fn, Rf_ScalarInteger(e->event), f));
  e->ok = Rf_asLogical(Rf_eval(call, R_GlobalEnv)) == TRUE;
  R_ClearExternalPtr(f);
  UNPROTECT(2);
}

static int mxcr__listener(void *user, int event, mxc_fit fit) {
  mxcr__event e;
  e.fn = (SEXP)user;
  e.event = event;
  e.fit = fit;
  e.ok = 0;
  if (R_ToplevelExec(mxcr__listener_eval, &e) && e.ok) return MXC_OK;
  mxcr__listener_failed = 1;
  return MXC_ERR_INVALID_ARGUMENT;
}

static void mxcr__release(void *user) { R_ReleaseObject((SEXP)user); }

%}

%exception;
%inline %{
/* A block of `kind` named name ("" for automatic) with kv's keys. */
static SEXP mxcb_r_block_create(SEXP kind, SEXP name, SEXP kv) {
  const char **k, **v;
  int n = mxcr__kv(kv, &k, &v);
  mxc_block b = NULL;
  mxcr__ok(mxc_block_create(mxcr__string(kind, "kind must be one string"),
                            mxcr__string(name, "name must be one string"), k,
                            v, n, &b));
  return mxcr__own(b, "mx_block", mxcr__fin_block);
}

static SEXP mxcb_r_block_add(SEXP block, SEXP child) {
  mxcr__ok(mxc_block_add(MXCR__BLOCK(block), MXCR__BLOCK(child)));
  return R_NilValue;
}

static SEXP mxcb_r_block_initialize(SEXP block, SEXP method, SEXP kv,
                                    SEXP force) {
  const char **k, **v;
  int n = mxcr__kv(kv, &k, &v);
  mxcr__ok(mxc_block_initialize(
      MXCR__BLOCK(block), mxcr__string(method, "method must be one string"),
      k, v, n, (int)mxcr__whole(force, 0, 1)));
  return R_NilValue;
}

/* The forward pass on a list of arrays: a new array. */
static SEXP mxcb_r_block_forward(SEXP block, SEXP inputs) {
  int n = 0;
  const mxc_ndarray *in = (const mxc_ndarray *)mxcr__handles(
      inputs, SWIGTYPE_p_mxc_ndarray_s, "inputs must be mx_ndarrays", &n);
  mxc_ndarray out = NULL;
  mxcr__ok(mxc_block_forward(MXCR__BLOCK(block), n, in, &out));
  return mxcr__array(out);
}

/* The names of every parameter, in mxc_block_param order. */
static SEXP mxcb_r_block_param_names(SEXP block) {
  mxc_block b = MXCR__BLOCK(block);
  int n = 0, i;
  SEXP out;
  mxcr__ok(mxc_block_num_params(b, &n));
  out = PROTECT(Rf_allocVector(STRSXP, n));
  for (i = 0; i < n; i++) {
    const char *s = NULL;
    if (mxc_block_param_name(b, i, &s) != MXC_OK) {
      UNPROTECT(1);
      mxcr__ok(mxc_last_error_code());
    }
    SET_STRING_ELT(out, i, Rf_mkCharCE(s, CE_UTF8));
  }
  UNPROTECT(1);
  return out;
}

/* Parameter `index` (0-based) or its gradient (grad != 0): a new array. */
static SEXP mxcb_r_block_param(SEXP block, SEXP index, SEXP grad) {
  mxc_block b = MXCR__BLOCK(block);
  int i = (int)mxcr__whole(index, 0, 2147483647.0);
  mxc_ndarray a = NULL;
  mxcr__ok(mxcr__whole(grad, 0, 1) ? mxc_block_param_grad(b, i, &a)
                                   : mxc_block_param(b, i, &a));
  return mxcr__array(a);
}

static SEXP mxcb_r_block_hybridize(SEXP block, SEXP active) {
  mxcr__ok(mxc_block_hybridize(MXCR__BLOCK(block),
                               (int)mxcr__whole(active, 0, 1)));
  return R_NilValue;
}

static SEXP mxcb_r_block_export(SEXP block, SEXP prefix, SEXP epoch) {
  mxcr__ok(mxc_block_export(MXCR__BLOCK(block),
                            mxcr__string(prefix, "prefix must be one string"),
                            (int)mxcr__whole(epoch, 0, 9999)));
  return R_NilValue;
}

/* Saves (load == 0) or loads the parameters. */
static SEXP mxcb_r_block_params_file(SEXP block, SEXP path, SEXP load) {
  mxc_block b = MXCR__BLOCK(block);
  const char *p = mxcr__string(path, "path must be one string");
  mxcr__ok(mxcr__whole(load, 0, 1) ? mxc_block_load_params(b, p)
                                   : mxc_block_save_params(b, p));
  return R_NilValue;
}

static SEXP mxcb_r_optimizer_create(SEXP block, SEXP op, SEXP kv) {
  const char **k, **v;
  int n = mxcr__kv(kv, &k, &v);
  mxc_optimizer o = NULL;
  mxcr__ok(mxc_optimizer_create(MXCR__BLOCK(block),
                                mxcr__string(op, "optimizer must be one string"),
                                k, v, n, &o));
  return mxcr__own(o, "mx_optimizer", mxcr__fin_optimizer);
}

/* A fit of net with loss and opt, keys kv and the R dispatcher listener
 * (a function of the event code and the lent fit returning TRUE to go
 * on; NULL: none). The listener must not hold the fit's own R object, or
 * the preserved listener would keep it from the collector. */
static SEXP mxcb_r_fit_create(SEXP net, SEXP loss, SEXP opt, SEXP kv,
                              SEXP listener) {
  const char **k, **v;
  int n = mxcr__kv(kv, &k, &v);
  mxc_fit f = NULL;
  SEXP out;
  mxc_optimizer o = (mxc_optimizer)mxcr__get(opt, "mx_optimizer",
                                             "expected an mx_optimizer");
  if (listener != R_NilValue && !Rf_isFunction(listener))
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "listener must be a function");
  mxcr__ok(mxc_fit_create(MXCR__BLOCK(net), MXCR__BLOCK(loss), o, k, v, n, &f));
  out = PROTECT(mxcr__own(f, "mx_fit", mxcr__fin_fit));
  if (listener != R_NilValue) {
    R_PreserveObject(listener); /* released with the fit */
    mxcr__ok(mxc_fit_add_listener(f, mxcr__listener, (void *)listener,
                                  mxcr__release));
  }
  UNPROTECT(1);
  return out;
}

/* Runs the fit: NULL when it ended well; TRUE when the listener failed
 * (the R caller raises what it kept); other failures raise here. */
static SEXP mxcb_r_fit_run(SEXP fit, SEXP train, SEXP val) {
  mxc_fit f = MXCR__FIT(fit);
  mxc_data_iter t = (mxc_data_iter)mxcr__handle(
      train, SWIGTYPE_p_mxc_data_iter_s, "train must be an mx_data_iter", 0);
  mxc_data_iter v = (mxc_data_iter)mxcr__handle(
      val, SWIGTYPE_p_mxc_data_iter_s, "valid must be an mx_data_iter", 0);
  int outer = mxcr__listener_failed, rc, failed;
  if (t == NULL)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "train must be an mx_data_iter");
  mxcr__listener_failed = 0;
  rc = mxc_fit_run(f, t, v);
  failed = mxcr__listener_failed;
  mxcr__listener_failed = outer;
  if (rc != MXC_OK && failed) return Rf_ScalarLogical(TRUE);
  mxcr__ok(rc);
  return R_NilValue;
}

/* Values of the run by name, as a named double vector. */
static SEXP mxcb_r_fit_values(SEXP fit, SEXP names) {
  mxc_fit f = MXCR__FIT(fit);
  int n = 0, i;
  const char **s = mxcr__strings(names, &n);
  SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
  for (i = 0; i < n; i++) {
    int rc = mxc_fit_value(f, s[i], &REAL(out)[i]);
    if (rc != MXC_OK) {
      UNPROTECT(1);
      mxcr__ok(rc);
    }
  }
  Rf_setAttrib(out, R_NamesSymbol, names);
  UNPROTECT(1);
  return out;
}

static SEXP mxcb_r_fit_stop(SEXP fit) {
  mxcr__ok(mxc_fit_stop(MXCR__FIT(fit)));
  return R_NilValue;
}

/* Saves (load == 0) or loads a training checkpoint. */
static SEXP mxcb_r_fit_checkpoint(SEXP fit, SEXP path, SEXP load) {
  mxc_fit f = MXCR__FIT(fit);
  const char *p = mxcr__string(path, "path must be one string");
  mxcr__ok(mxcr__whole(load, 0, 1) ? mxc_fit_load_checkpoint(f, p)
                                   : mxc_fit_save_checkpoint(f, p));
  return R_NilValue;
}

/* Trains fit through kv (an mx_kvstore; NULL: alone again), see
 * mxc_fit_set_kvstore: the fit holds its own reference to the store. */
static SEXP mxcb_r_fit_set_kvstore(SEXP fit, SEXP kv) {
  mxc_fit f = MXCR__FIT(fit);
  mxc_kvstore k = (mxc_kvstore)mxcr__handle(
      kv, SWIGTYPE_p_mxc_kvstore_s, "kvstore must be an mx_kvstore", 0);
  mxcr__ok(mxc_fit_set_kvstore(f, k));
  return R_NilValue;
}

/* Frees a block, optimizer or fit now (a freed one: nothing). */
static SEXP mxcb_r_nn_free(SEXP x) {
  if (TYPEOF(x) != EXTPTRSXP) return R_NilValue;
  if (R_ExternalPtrTag(x) == Rf_install("mx_block")) mxcr__fin_block(x);
  else if (R_ExternalPtrTag(x) == Rf_install("mx_optimizer")) mxcr__fin_optimizer(x);
  else if (R_ExternalPtrTag(x) == Rf_install("mx_fit")) mxcr__fin_fit(x);
  return R_NilValue;
}

/* Moves x (a block, optimizer or fit) to the enclosing scope if scope s
 * holds it (what with_scope does with its value). */
static SEXP mxcb_r_nn_keep_if_in(SEXP x, SEXP s) {
  mxc_scope scope = (mxc_scope)mxcr__handle(s, SWIGTYPE_p_mxc_scope_s,
                                            "expected an mx_scope", 0);
  mxc_scope in = NULL;
  void *h = TYPEOF(x) == EXTPTRSXP ? R_ExternalPtrAddr(x) : NULL;
  if (h == NULL || mxc_handle_scope(h, &in) != MXC_OK || in != scope)
    return R_NilValue;
  mxcr__ok(mxc_scope_keep(h));
  return R_NilValue;
}

/* The IDX iterator with every option: flat (1: rows of 784; 0: images
 * 1x28x28) and last_batch (MXC_LAST_BATCH_*). */
static SEXP mxcb_r_data_iter_idx(SEXP images, SEXP labels, SEXP batch,
                                 SEXP shuffle, SEXP seed, SEXP flat,
                                 SEXP last_batch) {
  mxc_data_iter it = NULL;
  mxcr__ok(mxc_data_iter_idx_create(
      mxcr__string(images, "images must be one path"),
      mxcr__string(labels, "labels must be one path"),
      (int64_t)mxcr__whole(batch, 1, 1e9), (int)mxcr__whole(shuffle, 0, 1),
      (uint64_t)mxcr__whole(seed, 0, 9.0e15), (int)mxcr__whole(flat, 0, 1), 1,
      (int)mxcr__whole(last_batch, 0, 2), &it));
  return mxcr__wrap(it, SWIGTYPE_p_mxc_data_iter_s, mxcr__fin_data_iter,
                    "mx_data_iter");
}

/* The CSV iterator (mxc_data_iter_csv_create); labels "" for none. */
static SEXP mxcb_r_data_iter_csv(SEXP data, SEXP labels, SEXP batch,
                                 SEXP label_col, SEXP last_batch) {
  mxc_data_iter it = NULL;
  const char *lp = mxcr__string(labels, "label must be one path");
  mxcr__ok(mxc_data_iter_csv_create(
      mxcr__string(data, "data must be one path"), *lp ? lp : NULL, 0,
      (int64_t)mxcr__whole(batch, 1, 1e9), 0,
      (int64_t)mxcr__whole(label_col, -1, 1e9),
      (int)mxcr__whole(last_batch, 0, 2), &it));
  return mxcr__wrap(it, SWIGTYPE_p_mxc_data_iter_s, mxcr__fin_data_iter,
                    "mx_data_iter");
}
%}

/* ---- user blocks and the KVStore's int keys and updater (R-only) --------
 *
 * Both callbacks run on the thread that called mxc (mxc.h:
 * mxc_block_forward_fn runs on the thread of mxc_block_forward, also for
 * a hybridized block's trace, which happens inside that call;
 * mxc_kvstore_updater_fn on the thread that called push), which for R is
 * its one thread: R code may run there. Each calls an R dispatcher of the
 * package (R/nn.R, R/kvstore.R) through R_ToplevelExec, so nothing
 * longjmps across mxc's frames; the dispatcher catches the user's errors
 * and returns their message, which mxcr__ok raises once mxc has unwound.
 * Arrays and blocks lent for the call are external pointers without
 * finalizer, cleared afterwards (kept beyond the call they are freed
 * objects). */
%{
typedef struct mxcr__fwd {
  SEXP fn; /* the dispatcher: function(self, inputs) */
  mxc_block self;
  int n_in;
  const mxc_ndarray *in;
  mxc_ndarray out;
  const char *err; /* static message of a failure, or NULL */
  int r_failed;    /* the dispatcher returned a message (in mxcr__cb_msg) */
} mxcr__fwd;

/* A lent handle as an external pointer of class cls, without finalizer. */
static SEXP mxcr__lend(void *h, SEXP tag, const char *cls) {
  SEXP p = PROTECT(R_MakeExternalPtr(h, tag, R_NilValue));
  Rf_setAttrib(p, R_ClassSymbol, Rf_mkString(cls));
  UNPROTECT(1);
  return p;
}

/* Takes the dispatcher's result y: a new array (whose ownership passes to
 * mxc: its R object becomes a freed one) or the user's error message. */
static void mxcr__take_output(mxcr__fwd *f, SEXP y) {
  SEXP tag;
  void *h;
  int i;
  if (TYPEOF(y) == STRSXP && Rf_length(y) == 1) {
    f->r_failed = 1;
    snprintf(mxcr__cb_msg, sizeof mxcr__cb_msg, "%s", CHAR(STRING_ELT(y, 0)));
    return;
  }
  tag = TYPEOF(y) == EXTPTRSXP ? R_ExternalPtrTag(y) : R_NilValue;
  if (TYPEOF(tag) != EXTPTRSXP ||
      R_ExternalPtrAddr(tag) != (void *)SWIGTYPE_p_mxc_ndarray_s) {
    f->err = "the forward function must return an mx_ndarray";
    return;
  }
  h = R_ExternalPtrAddr(y);
  for (i = 0; i < f->n_in; i++) {
    if (h == (void *)f->in[i]) {
      f->err = "the forward function returned one of its inputs; return a "
               "new array (e.g. x * 1)";
      return;
    }
  }
  if (h == NULL) {
    f->err = "the forward function returned a freed array";
    return;
  }
  R_ClearExternalPtr(y);
  f->out = (mxc_ndarray)h;
}

static void mxcr__forward_eval(void *data) {
  mxcr__fwd *f = (mxcr__fwd *)data;
  SEXP self, ins, call, y;
  int i;
  self = PROTECT(mxcr__lend(f->self, Rf_install("mx_block"), "mx_block"));
  ins = PROTECT(Rf_allocVector(VECSXP, f->n_in));
  for (i = 0; i < f->n_in; i++) {
    SET_VECTOR_ELT(ins, i, mxcr__lend(f->in[i],
                                      R_MakeExternalPtr(SWIGTYPE_p_mxc_ndarray_s,
                                                        R_NilValue, R_NilValue),
                                      "mx_ndarray"));
  }
  call = PROTECT(Rf_lang3(f->fn, self, ins));
  y = PROTECT(Rf_eval(call, R_GlobalEnv));
  mxcr__take_output(f, y);
  R_ClearExternalPtr(self);
  for (i = 0; i < f->n_in; i++) R_ClearExternalPtr(VECTOR_ELT(ins, i));
  UNPROTECT(4);
}

/* "forward of user block 'NAME'" into buf. */
static const char *mxcr__block_what(mxc_block b, char *buf, size_t n) {
  const char *name = NULL;
  if (mxc_block_name(b, &name) != MXC_OK || name == NULL) name = "?";
  snprintf(buf, n, "forward of user block '%.200s'", name);
  return buf;
}

static int mxcr__user_forward(void *user, mxc_block self, int n_in,
                              const mxc_ndarray *in, mxc_ndarray *out) {
  mxcr__fwd f;
  char what[256];
  memset(&f, 0, sizeof f);
  f.fn = (SEXP)user;
  f.self = self;
  f.n_in = n_in;
  f.in = in;
  mxcr__cb_msg[0] = '\0';
  if (!R_ToplevelExec(mxcr__forward_eval, &f))
    f.err = "the R forward function was interrupted";
  if (f.out != NULL) {
    *out = f.out;
    return MXC_OK;
  }
  mxcr__block_what(self, what, sizeof what);
  if (f.r_failed) return mxcr__cb_fail(what, mxcr__cb_msg);
  return mxcr__cb_fail(what, f.err != NULL ? f.err : "no output");
}

typedef struct mxcr__upd {
  SEXP fn; /* the dispatcher: function(key, grad, weight) */
  const char *str_key;
  int64_t int_key;
  mxc_ndarray recv, local;
  int ok;
} mxcr__upd;

static void mxcr__update_eval(void *data) {
  mxcr__upd *u = (mxcr__upd *)data;
  SEXP key, g, w, call, y;
  SEXP tag = PROTECT(R_MakeExternalPtr(SWIGTYPE_p_mxc_ndarray_s, R_NilValue,
                                       R_NilValue));
  key = PROTECT(u->str_key != NULL ? Rf_mkString(u->str_key)
                                   : Rf_ScalarReal((double)u->int_key));
  g = PROTECT(mxcr__lend(u->recv, tag, "mx_ndarray"));
  w = PROTECT(mxcr__lend(u->local, tag, "mx_ndarray"));
  call = PROTECT(Rf_lang4(u->fn, key, g, w));
  y = PROTECT(Rf_eval(call, R_GlobalEnv));
  if (TYPEOF(y) == STRSXP && Rf_length(y) == 1) {
    snprintf(mxcr__cb_msg, sizeof mxcr__cb_msg, "%s", CHAR(STRING_ELT(y, 0)));
  } else {
    u->ok = 1;
  }
  R_ClearExternalPtr(g);
  R_ClearExternalPtr(w);
  UNPROTECT(6);
}

static int mxcr__kv_update(const char *str_key, int64_t int_key,
                           mxc_ndarray recv, mxc_ndarray local, void *user) {
  mxcr__upd u;
  u.fn = (SEXP)user;
  u.str_key = str_key;
  u.int_key = int_key;
  u.recv = recv;
  u.local = local;
  u.ok = 0;
  mxcr__cb_msg[0] = '\0';
  if (R_ToplevelExec(mxcr__update_eval, &u) && u.ok) return MXC_OK;
  /* mxc puts the key before the message ("key 4: kvstore updater: ..."). */
  return mxcr__cb_fail("kvstore updater", mxcr__cb_msg[0]
                                              ? mxcr__cb_msg
                                              : "the R updater was interrupted");
}

/* Keys of a KVStore call: a character vector (string keys) or whole
 * numbers (int keys), R_alloc'ed; exactly one of *ik, *sk is set. */
static int mxcr__kv_keys(SEXP keys, const int64_t **ik, const char ***sk) {
  int n = Rf_length(keys), i;
  *ik = NULL;
  *sk = NULL;
  if (TYPEOF(keys) == STRSXP) {
    *sk = mxcr__strings(keys, &n);
    return n;
  }
  if (TYPEOF(keys) != REALSXP && TYPEOF(keys) != INTSXP)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT,
                     "keys must be strings or whole numbers");
  int64_t *v = (int64_t *)R_alloc((size_t)n + 1, sizeof(int64_t));
  for (i = 0; i < n; i++) {
    double d = TYPEOF(keys) == REALSXP ? REAL(keys)[i]
               : INTEGER(keys)[i] == NA_INTEGER ? NAN
                                                 : INTEGER(keys)[i];
    if (!(d == floor(d)) || fabs(d) > 9.0e15)
      mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT,
                       "int keys must be whole numbers (not NA)");
    v[i] = (int64_t)d;
  }
  *ik = v;
  return n;
}
%}
%inline %{
/* A user block named name ("": automatic) whose forward pass runs the R
 * dispatcher fn(self, inputs) (kept alive by the block: released when mxc
 * frees it, also when creating it fails). */
static SEXP mxcb_r_block_create_user(SEXP name, SEXP fn) {
  mxc_block b = NULL;
  const char *nm = mxcr__string(name, "name must be one string");
  if (!Rf_isFunction(fn))
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "forward must be a function");
  R_PreserveObject(fn);
  mxcr__ok(mxc_block_create_user(nm, mxcr__user_forward, (void *)fn,
                                 mxcr__release, &b));
  return mxcr__own(b, "mx_block", mxcr__fin_block);
}

/* New handles on the children of block, as a list. */
static SEXP mxcb_r_block_children(SEXP block) {
  mxc_block b = MXCR__BLOCK(block);
  int n = 0, i;
  SEXP out;
  mxcr__ok(mxc_block_num_children(b, &n));
  out = PROTECT(Rf_allocVector(VECSXP, n));
  for (i = 0; i < n; i++) {
    mxc_block c = NULL;
    int rc = mxc_block_child(b, i, &c);
    if (rc != MXC_OK) {
      UNPROTECT(1);
      mxcr__ok(rc);
    }
    SET_VECTOR_ELT(out, i, mxcr__own(c, "mx_block", mxcr__fin_block));
  }
  UNPROTECT(1);
  return out;
}

/* op 0: init, 1: push, 2: pull, 3: pushpull in place, with string or
 * int keys (one per array). */
static SEXP mxcb_r_kvstore_call(SEXP kv, SEXP op, SEXP keys, SEXP values,
                                SEXP priority) {
  mxc_kvstore k = (mxc_kvstore)mxcr__handle(
      kv, SWIGTYPE_p_mxc_kvstore_s, "kv must be an mx_kvstore", 0);
  const int64_t *ik;
  const char **sk;
  int n = mxcr__kv_keys(keys, &ik, &sk), m = 0;
  const mxc_ndarray *v = (const mxc_ndarray *)mxcr__handles(
      values, SWIGTYPE_p_mxc_ndarray_s, "values must be mx_ndarrays", &m);
  int p = (int)mxcr__whole(priority, -2147483647.0, 2147483647.0);
  if (k == NULL) mxcr__raise_code(MXC_ERR_INVALID_HANDLE, "kv is NULL");
  if (n != m)
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT,
                     "kvstore: the number of keys and of arrays differ");
  switch ((int)mxcr__whole(op, 0, 3)) {
    case 0: mxcr__ok(mxc_kvstore_init(k, n, ik, sk, v)); break;
    case 1: mxcr__ok(mxc_kvstore_push(k, n, ik, sk, v, p)); break;
    case 2: mxcr__ok(mxc_kvstore_pull(k, n, ik, sk, v, p)); break;
    default: mxcr__ok(mxc_kvstore_pushpull(k, n, ik, sk, v, v, p));
  }
  return R_NilValue;
}

/* Makes the R dispatcher fn(key, grad, weight) the store's updater (NULL:
 * none). The store's external pointer keeps fn, and the one it replaces,
 * alive (its protected slot): a push may still be running the one an
 * updater just replaced (from inside it: R has one thread).
 * Why not mxc_kvstore_set_updater_ex with R_ReleaseObject as the free
 * function, as user blocks do: the store may run that function on another
 * thread (one leaving an mxc call after the last push that used the
 * updater), and R's memory manager may only be touched from R's thread.
 * A block's free function runs when the block is freed, which for R
 * happens on R's thread; a store's updater has no such promise. So R keeps
 * the reference itself, released by R's collector when the store's
 * pointer drops it. */
static SEXP mxcb_r_kvstore_set_updater(SEXP kv, SEXP fn) {
  mxc_kvstore k = (mxc_kvstore)mxcr__handle(
      kv, SWIGTYPE_p_mxc_kvstore_s, "kv must be an mx_kvstore", 0);
  SEXP old = R_ExternalPtrProtected(kv), keep;
  if (k == NULL) mxcr__raise_code(MXC_ERR_INVALID_HANDLE, "kv is NULL");
  if (fn != R_NilValue && !Rf_isFunction(fn))
    mxcr__raise_code(MXC_ERR_INVALID_ARGUMENT, "updater must be a function");
  mxcr__ok(mxc_kvstore_set_updater(k, fn == R_NilValue ? NULL : mxcr__kv_update,
                                   (void *)fn));
  keep = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(keep, 0, fn);
  if (TYPEOF(old) == VECSXP && Rf_length(old) == 2)
    SET_VECTOR_ELT(keep, 1, VECTOR_ELT(old, 0));
  R_SetExternalPtrProtected(kv, keep);
  UNPROTECT(1);
  return R_NilValue;
}
%}
