/* The Java face of the shared SWIG interface (bindings/swig/mxc.i).
 *
 * Generates the low-level package org.mxc.swig (class MxcNative with one
 * static method per mxcb_* function, MxcNativeJNI with the natives,
 * MxcNativeConstants with the MXC_* constants). Nothing outside org.mxc
 * is meant to call it: the idiomatic classes in org.mxc own every handle.
 *
 * Design decisions, and why:
 *  - Handles (mxc_ndarray, mxc_symbol, ...) are plain Java longs here, not
 *    SWIG proxy objects. Lifetime belongs to org.mxc (AutoCloseable plus a
 *    java.lang.ref.Cleaner), and a proxy per result would be a second
 *    allocation on the hot path. The proxy classes mxc.i declares
 *    (NDArrayHandle, ...) are still generated but unused; their finalize()
 *    is removed (javafinalize) so the JVM never runs finalizers for them.
 *  - The multi-argument conventions of mxcb.h become single Java
 *    parameters: HANDLES/SYMBOLS -> long[], KV/NAMES -> String[], DIMS ->
 *    long[], BYTES/BYTES_OUT -> a direct java.nio.ByteBuffer (its whole
 *    capacity; callers slice), read without copying through the Java heap.
 *  - A failure flagged by mxcb throws org.mxc.MxcException(code, message)
 *    from the same native call (MXCB_CUSTOM_EXCEPTION below), so the
 *    thread-local message is read before control returns to Java.
 *  - The Java-only functions at the end (mxcb_java_*) cover what the
 *    generic layer cannot: primitive Java arrays in and out without a
 *    temporary copy, and invoke entry points for 1 and 2 inputs that take
 *    handles as scalars (no long[] allocated per call).
 */
%module(jniclassname = "MxcNativeJNI") MxcNative

%{
#include <jni.h>
#include <stdint.h>
#include <mxc/mxc.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(void *) == sizeof(jlong),
               "handles travel as jlong: 64-bit pointers only");

/* org.mxc.MxcException and its (int, String, boolean) constructor (the
 * one for native failures: it adds the Java exception a callback threw
 * on this thread, see org.mxc.Upcalls), resolved once
 * when the library is loaded (JNI_OnLoad runs in the loading class's
 * class loader, which can see org.mxc). */
static jclass mxcj_exc_class;
static jmethodID mxcj_exc_ctor;

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
  JNIEnv *env = NULL;
  jclass local;
  (void)reserved;
  if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK)
    return JNI_ERR;
  local = (*env)->FindClass(env, "org/mxc/MxcException");
  if (local == NULL) return JNI_ERR;
  mxcj_exc_class = (jclass)(*env)->NewGlobalRef(env, local);
  (*env)->DeleteLocalRef(env, local);
  mxcj_exc_ctor = (*env)->GetMethodID(env, mxcj_exc_class, "<init>",
                                      "(ILjava/lang/String;Z)V");
  return mxcj_exc_ctor == NULL ? JNI_ERR : JNI_VERSION_1_8;
}

/* Throws MxcException(code, message) in the calling thread. If building
 * it fails, the JVM's own pending error (OutOfMemoryError) stays. */
static void mxcj_throw(JNIEnv *env, int code, const char *message) {
  jstring msg;
  jobject exc;
  if ((*env)->ExceptionCheck(env)) return;
  msg = (*env)->NewStringUTF(env, message != NULL ? message : "");
  if (msg == NULL) return;
  exc = (*env)->NewObject(env, mxcj_exc_class, mxcj_exc_ctor, (jint)code, msg,
                         JNI_TRUE);
  if (exc != NULL) (*env)->Throw(env, (jthrowable)exc);
}

/* Strings of a String[] as C strings, for KV and NAMES. Parameters are
 * off the hot path (a call without parameters passes null): plain
 * malloc. */
typedef struct {
  int n;
  jstring *refs;
  const char **chars;
} mxcj_strs;

static void mxcj_strs_release(JNIEnv *env, mxcj_strs *s) {
  int i;
  for (i = 0; i < s->n; i++) {
    if (s->chars[i] != NULL)
      (*env)->ReleaseStringUTFChars(env, s->refs[i], s->chars[i]);
    if (s->refs[i] != NULL) (*env)->DeleteLocalRef(env, s->refs[i]);
  }
  free(s->refs);
  free((void *)s->chars);
  s->n = 0;
  s->refs = NULL;
  s->chars = NULL;
}

/* 1 on success; 0 with a Java exception pending (null element: the C
 * side would read it as the end of a list). */
static int mxcj_strs_get(JNIEnv *env, jobjectArray arr, mxcj_strs *s) {
  jsize n, i;
  s->n = 0;
  s->refs = NULL;
  s->chars = NULL;
  if (arr == NULL) return 1;
  n = (*env)->GetArrayLength(env, arr);
  if (n == 0) return 1;
  s->refs = (jstring *)calloc((size_t)n, sizeof *s->refs);
  s->chars = (const char **)calloc((size_t)n, sizeof *s->chars);
  if (s->refs == NULL || s->chars == NULL ||
      (*env)->EnsureLocalCapacity(env, n) != 0) {
    free(s->refs);
    free((void *)s->chars);
    s->refs = NULL;
    s->chars = NULL;
    mxcj_throw(env, MXC_ERR_OOM, "out of memory for a string list");
    return 0;
  }
  s->n = n;
  for (i = 0; i < n; i++) {
    s->refs[i] = (jstring)(*env)->GetObjectArrayElement(env, arr, i);
    if (s->refs[i] == NULL) {
      mxcj_strs_release(env, s);
      mxcj_throw(env, MXC_ERR_INVALID_ARGUMENT,
                 "a string list element is null");
      return 0;
    }
    s->chars[i] = (*env)->GetStringUTFChars(env, s->refs[i], NULL);
    if (s->chars[i] == NULL) { /* OutOfMemoryError pending */
      mxcj_strs_release(env, s);
      return 0;
    }
  }
  return 1;
}

/* Handle arrays up to this many elements live on the C stack. */
#define MXCJ_STACK_HANDLES 16
%}

%javaconst(1);

/* int64_t is C long on LP64 (swig runs with -DSWIGWORDSIZE64 so its
 * typedef matches the compiler's), and SWIG maps C long to Java int
 * (long may be 32-bit); 64-bit values must stay Java long. */
%include <stdint.i>
%apply long long { int64_t };
%apply const long long & { const int64_t & };

/* The low-level natives load the JNI library themselves, so any entry
 * into org.mxc.swig works regardless of which org.mxc class came first. */
%pragma(java) jniclasscode = %{
  static {
    org.mxc.NativeLoader.load();
  }
%}
%pragma(java) jniclassclassmodifiers = "public final class"
%pragma(java) moduleclassmodifiers = "public final class"

/* No finalize() on the (unused) proxy classes. */
%typemap(javafinalize) SWIGTYPE ""

/* ---- handles as longs ------------------------------------------------ */
%define MXCJ_HANDLE(TYPE)
%typemap(jni) TYPE "jlong"
%typemap(jtype, nopgcpp="1") TYPE "long"
%typemap(jstype) TYPE "long"
%typemap(javain) TYPE "$javainput"
%typemap(javaout) TYPE { return $jnicall; }
%typemap(in) TYPE %{ $1 = (TYPE)(intptr_t)$input; %}
%typemap(out) TYPE %{ $result = (jlong)(intptr_t)$1; %}
%enddef
MXCJ_HANDLE(mxc_ndarray)
MXCJ_HANDLE(mxc_symbol)
MXCJ_HANDLE(mxc_executor)
MXCJ_HANDLE(mxc_data_iter)
MXCJ_HANDLE(mxc_recordio)
MXCJ_HANDLE(mxc_str_list)
MXCJ_HANDLE(mxc_op)
MXCJ_HANDLE(mxcb_outputs *)
MXCJ_HANDLE(mxcb_checkpoint *)
MXCJ_HANDLE(mxc_predictor)
MXCJ_HANDLE(mxcb_predictor_spec *)
MXCJ_HANDLE(mxc_kvstore)
MXCJ_HANDLE(mxc_scope)
MXCJ_HANDLE(mxc_block)
MXCJ_HANDLE(mxc_optimizer)
MXCJ_HANDLE(mxc_fit)

/* ---- HANDLES / SYMBOLS: long[] (null = none) --------------------------- */
%define MXCJ_HANDLE_ARRAY(TYPE, PTR, COUNT)
%typemap(jni) (const TYPE *PTR, int COUNT) "jlongArray"
%typemap(jtype) (const TYPE *PTR, int COUNT) "long[]"
%typemap(jstype) (const TYPE *PTR, int COUNT) "long[]"
%typemap(javain) (const TYPE *PTR, int COUNT) "$javainput"
%typemap(in) (const TYPE *PTR, int COUNT)
    (TYPE stackbuf[MXCJ_STACK_HANDLES], TYPE *heap = NULL) {
  jsize n = $input == NULL ? 0 : (*jenv)->GetArrayLength(jenv, $input);
  $1 = stackbuf;
  if (n > MXCJ_STACK_HANDLES) {
    heap = (TYPE *)malloc((size_t)n * sizeof *heap);
    if (heap == NULL) {
      mxcj_throw(jenv, MXC_ERR_OOM, "out of memory for a handle list");
      return $null;
    }
    $1 = heap;
  }
  if (n > 0) (*jenv)->GetLongArrayRegion(jenv, $input, 0, n, (jlong *)$1);
  $2 = (int)n;
}
%typemap(freearg) (const TYPE *PTR, int COUNT) %{ free(heap$argnum); %}
%enddef
MXCJ_HANDLE_ARRAY(mxc_ndarray, HANDLES, N_HANDLES)
MXCJ_HANDLE_ARRAY(mxc_symbol, SYMBOLS, N_SYMBOLS)

/* ---- KV / NAMES: String[] (null = none) -------------------------------- */
%define MXCJ_STRING_ARRAY(PTR, COUNT)
%typemap(jni) (const char *const *PTR, int COUNT) "jobjectArray"
%typemap(jtype) (const char *const *PTR, int COUNT) "String[]"
%typemap(jstype) (const char *const *PTR, int COUNT) "String[]"
%typemap(javain) (const char *const *PTR, int COUNT) "$javainput"
%typemap(in) (const char *const *PTR, int COUNT) (mxcj_strs strs) {
  if (!mxcj_strs_get(jenv, $input, &strs)) return $null;
  $1 = ($1_ltype)strs.chars;
  $2 = strs.n;
}
%typemap(freearg) (const char *const *PTR, int COUNT)
    %{ mxcj_strs_release(jenv, &strs$argnum); %}
%enddef
MXCJ_STRING_ARRAY(KV, N_KV)
MXCJ_STRING_ARRAY(NAMES, N_NAMES)

/* ---- DIMS: long[] ------------------------------------------------------ */
%typemap(jni) (const int64_t *DIMS, int NDIM) "jlongArray"
%typemap(jtype) (const int64_t *DIMS, int NDIM) "long[]"
%typemap(jstype) (const int64_t *DIMS, int NDIM) "long[]"
%typemap(javain) (const int64_t *DIMS, int NDIM) "$javainput"
%typemap(in) (const int64_t *DIMS, int NDIM) (int64_t dims[MXC_MAX_NDIM]) {
  jsize n = $input == NULL ? 0 : (*jenv)->GetArrayLength(jenv, $input);
  if (n > MXC_MAX_NDIM) {
    mxcj_throw(jenv, MXC_ERR_INVALID_ARGUMENT,
               "too many dimensions (at most MXC_MAX_NDIM = 8)");
    return $null;
  }
  if (n > 0) (*jenv)->GetLongArrayRegion(jenv, $input, 0, n, (jlong *)dims);
  $1 = dims;
  $2 = (int)n;
}

/* ---- BYTES / BYTES_OUT: a direct ByteBuffer, its whole capacity -------- */
%define MXCJ_BUFFER(PTRTYPE, PTR, COUNT)
%typemap(jni) (PTRTYPE PTR, int64_t COUNT) "jobject"
%typemap(jtype) (PTRTYPE PTR, int64_t COUNT) "java.nio.ByteBuffer"
%typemap(jstype) (PTRTYPE PTR, int64_t COUNT) "java.nio.ByteBuffer"
%typemap(javain) (PTRTYPE PTR, int64_t COUNT) "$javainput"
%typemap(in) (PTRTYPE PTR, int64_t COUNT) {
  $1 = $input == NULL ? NULL : (*jenv)->GetDirectBufferAddress(jenv, $input);
  if ($1 == NULL) {
    mxcj_throw(jenv, MXC_ERR_INVALID_ARGUMENT,
               "expected a direct ByteBuffer (ByteBuffer.allocateDirect)");
    return $null;
  }
  $2 = (int64_t)(*jenv)->GetDirectBufferCapacity(jenv, $input);
}
%enddef
MXCJ_BUFFER(const void *, BYTES, N_BYTES)
MXCJ_BUFFER(void *, BYTES_OUT, N_BYTES_OUT)

/* ---- DATA / FLOATS (_OUT): byte[] and float[] (null = empty) ----------- */
/* Get<T>ArrayElements, not a critical region: the calls do file I/O and
 * decode images. Inputs are released with JNI_ABORT (nothing to copy
 * back), outputs with 0. An empty array passes NULL (mxc accepts it with
 * a count of 0). */
%define MXCJ_PRIM_ARRAY(CTYPE, PTR, COUNTTYPE, COUNT, JARRAY, JTYPE, JELEM, ELEM, MODE)
%typemap(jni) (CTYPE PTR, COUNTTYPE COUNT) "JARRAY"
%typemap(jtype) (CTYPE PTR, COUNTTYPE COUNT) "JTYPE"
%typemap(jstype) (CTYPE PTR, COUNTTYPE COUNT) "JTYPE"
%typemap(javain) (CTYPE PTR, COUNTTYPE COUNT) "$javainput"
%typemap(in) (CTYPE PTR, COUNTTYPE COUNT) {
  $2 = $input == NULL ? 0 : (COUNTTYPE)(*jenv)->GetArrayLength(jenv, $input);
  $1 = NULL;
  if ($2 > 0) {
    $1 = ($1_ltype)(*jenv)->Get##ELEM##ArrayElements(jenv, $input, NULL);
    if ($1 == NULL) return $null; /* OutOfMemoryError pending */
  }
}
%typemap(freearg) (CTYPE PTR, COUNTTYPE COUNT) %{
  if ($1 != NULL)
    (*jenv)->Release##ELEM##ArrayElements(jenv, $input, (JELEM *)(uintptr_t)$1, MODE);
%}
%enddef
MXCJ_PRIM_ARRAY(const void *, DATA, int64_t, N_DATA, jbyteArray, byte[], jbyte, Byte, JNI_ABORT)
MXCJ_PRIM_ARRAY(void *, DATA_OUT, int64_t, N_DATA_OUT, jbyteArray, byte[], jbyte, Byte, 0)
MXCJ_PRIM_ARRAY(const float *, FLOATS, int, N_FLOATS, jfloatArray, float[], jfloat, Float, JNI_ABORT)
MXCJ_PRIM_ARRAY(float *, FLOATS_OUT, int, N_FLOATS_OUT, jfloatArray, float[], jfloat, Float, 0)

/* JNIEnv for the Java-only functions below; not a Java parameter. */
%typemap(in, numinputs = 0) JNIEnv *jenv_ "$1 = jenv;"
/* A primitive Java array passed as Object (checked in C). */
%typemap(jni) jarray "jarray"
%typemap(jtype) jarray "Object"
%typemap(jstype) jarray "Object"
%typemap(javain) jarray "$javainput"
%typemap(in) jarray "$1 = $input;"
/* A Java object passed through to C (a fit listener's target). */
%typemap(jni) jobject "jobject"
%typemap(jtype) jobject "Object"
%typemap(jstype) jobject "Object"
%typemap(javain) jobject "$javainput"
%typemap(in) jobject "$1 = $input;"

/* ---- errors ------------------------------------------------------------ */
#define MXCB_CUSTOM_EXCEPTION
%exception {
  $action
  if (mxcb_last_code() != 0) {
    mxcj_throw(jenv, mxcb_last_code(), mxcb_last_message());
    /* The freearg typemaps (string lists, heap handle arrays): without
     * them every failing call leaked its arguments' copies (found by
     * LeakSanitizer). Releasing string chars and local references is
     * allowed with an exception pending. */
    $cleanup
    return $null;
  }
}

%include "mxc.i"

/* ---- Java-only binding functions (candidates for mxcb.h) --------------- */
%inline %{
/* Copies a whole primitive Java array (byte[], int[], float[], ...; its
 * length * elem_size bytes must equal the array's byte size) into a, with
 * one copy: the Java array is pinned (GetPrimitiveArrayCritical) instead
 * of copied to a temporary. The pending work on a is waited for first,
 * outside the critical region, so the region (during which other Java
 * threads may wait to allocate) spans little more than the copy itself.
 * Inside it, mxc only waits on its own engine threads, never on a Java
 * thread, as JNI requires. */
static void mxcb_java_copy_from_array(JNIEnv *jenv_, mxc_ndarray a,
                                      jarray data, int elem_size) {
  void *p;
  jsize n;
  mxcb__begin();
  if (data == NULL || elem_size <= 0) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "null array or bad element size");
    return;
  }
  if (mxcb__check(mxc_ndarray_wait_to_write(a))) return;
  n = (*jenv_)->GetArrayLength(jenv_, data);
  p = (*jenv_)->GetPrimitiveArrayCritical(jenv_, data, NULL);
  if (p == NULL) return; /* OutOfMemoryError pending */
  mxcb__check(mxc_ndarray_copy_from_host(a, p, (size_t)n * (size_t)elem_size));
  (*jenv_)->ReleasePrimitiveArrayCritical(jenv_, data, p, JNI_ABORT);
}

/* Copies a into a whole primitive Java array (see above). */
static void mxcb_java_copy_to_array(JNIEnv *jenv_, mxc_ndarray a, jarray data,
                                    int elem_size) {
  void *p;
  jsize n;
  mxcb__begin();
  if (data == NULL || elem_size <= 0) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "null array or bad element size");
    return;
  }
  if (mxcb__check(mxc_ndarray_wait_to_read(a))) return;
  n = (*jenv_)->GetArrayLength(jenv_, data);
  p = (*jenv_)->GetPrimitiveArrayCritical(jenv_, data, NULL);
  if (p == NULL) return;
  mxcb__check(mxc_ndarray_copy_to_host(a, p, (size_t)n * (size_t)elem_size));
  (*jenv_)->ReleasePrimitiveArrayCritical(jenv_, data, p, 0);
}

/* The hot path: a parameterless single-output invoke with one or two
 * inputs passed as scalars (no Java array per call). Returns a new array
 * owned by the caller. */
static mxc_ndarray mxcb_java_invoke1(mxc_op op, mxc_ndarray a) {
  mxc_ndarray out = NULL;
  mxcb__begin();
  return mxcb__check(mxc_op_invoke(op, NULL, NULL, 0, &a, 1, &out, 1, NULL))
             ? NULL
             : out;
}

static mxc_ndarray mxcb_java_invoke2(mxc_op op, mxc_ndarray a, mxc_ndarray b) {
  mxc_ndarray in[2];
  mxc_ndarray out = NULL;
  in[0] = a;
  in[1] = b;
  mxcb__begin();
  return mxcb__check(mxc_op_invoke(op, NULL, NULL, 0, in, 2, &out, 1, NULL))
             ? NULL
             : out;
}
/* ---- fit listeners: C calling back into the JVM -------------------------
 * A listener is a Java object with a method `int event(int)` (org.mxc.Fit's
 * dispatcher), held by a global reference until the fit is freed. The C
 * callback runs on the thread in mxc_fit_run, a Java thread already, but
 * attaches (and detaches again) any thread that is not, so a fit freed by
 * a native thread still releases the reference. The dispatcher catches
 * every Throwable and returns an MXC_ERR_* code; an exception escaping it
 * anyway (an Error thrown while handling one) is cleared here and becomes
 * MXC_ERR_INTERNAL, so no Java exception is ever pending while mxc's C
 * code runs. The call creates no local references (int in, int out). */
typedef struct {
  JavaVM *vm;
  jobject target;     /* global reference */
  jmethodID method;   /* int event(int) */
} mxcj_listener;

/* The calling thread's JNIEnv, attaching it when needed (*attached = 1:
 * the caller detaches). NULL when the VM cannot attach it. */
static JNIEnv *mxcj_env(JavaVM *vm, int *attached) {
  JNIEnv *env = NULL;
  *attached = 0;
  if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) == JNI_OK) return env;
  if ((*vm)->AttachCurrentThread(vm, (void **)&env, NULL) != JNI_OK) return NULL;
  *attached = 1;
  return env;
}

static int mxcj_fit_event(void *user, int event, mxc_fit fit) {
  mxcj_listener *l = (mxcj_listener *)user;
  int attached = 0;
  JNIEnv *env = mxcj_env(l->vm, &attached);
  jint rc;
  (void)fit; /* the dispatcher reads values through its own handle */
  if (env == NULL) return MXC_ERR_INTERNAL;
  rc = (*env)->CallIntMethod(env, l->target, l->method, (jint)event);
  if ((*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env);
    rc = MXC_ERR_INTERNAL;
  }
  if (attached) (*l->vm)->DetachCurrentThread(l->vm);
  return (int)rc;
}

static void mxcj_listener_free(void *user) {
  mxcj_listener *l = (mxcj_listener *)user;
  int attached = 0;
  JNIEnv *env = mxcj_env(l->vm, &attached);
  if (env != NULL) (*env)->DeleteGlobalRef(env, l->target);
  if (attached) (*l->vm)->DetachCurrentThread(l->vm);
  free(l);
}

/* Adds target (an object with `int event(int)`) as a listener of fit. */
static void mxcb_java_fit_add_listener(JNIEnv *jenv_, mxc_fit fit,
                                       jobject target) {
  mxcj_listener *l;
  jclass cls;
  mxcb__begin();
  if (target == NULL) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "listener is null");
    return;
  }
  l = (mxcj_listener *)calloc(1, sizeof *l);
  if (l == NULL) {
    mxcb__fail_msg(MXC_ERR_OOM, "out of memory for a listener");
    return;
  }
  cls = (*jenv_)->GetObjectClass(jenv_, target);
  l->method = (*jenv_)->GetMethodID(jenv_, cls, "event", "(I)I");
  (*jenv_)->DeleteLocalRef(jenv_, cls);
  if (l->method == NULL ||  /* NoSuchMethodError pending */
      (*jenv_)->GetJavaVM(jenv_, &l->vm) != JNI_OK ||
      (l->target = (*jenv_)->NewGlobalRef(jenv_, target)) == NULL) {
    free(l);
    if (!(*jenv_)->ExceptionCheck(jenv_))
      mxcb__fail_msg(MXC_ERR_INTERNAL, "cannot hold the listener");
    return;
  }
  /* On failure mxc_fit_add_listener runs mxcj_listener_free itself. */
  mxcb__check(mxc_fit_add_listener(fit, mxcj_fit_event, l, mxcj_listener_free));
}
%}

/* ---- int keys: long[] -> int64_t keys (KVStore) --------------------------
 * Copied (GetLongArrayRegion), on the stack up to MXCJ_STACK_HANDLES keys:
 * int64_t and jlong are the same 64-bit type here. */
%typemap(jni) (const int64_t *INT_KEYS, int N_INT_KEYS) "jlongArray"
%typemap(jtype) (const int64_t *INT_KEYS, int N_INT_KEYS) "long[]"
%typemap(jstype) (const int64_t *INT_KEYS, int N_INT_KEYS) "long[]"
%typemap(javain) (const int64_t *INT_KEYS, int N_INT_KEYS) "$javainput"
%typemap(in) (const int64_t *INT_KEYS, int N_INT_KEYS)
    (int64_t stackkeys[MXCJ_STACK_HANDLES], int64_t *heapkeys = NULL) {
  jsize n = $input == NULL ? 0 : (*jenv)->GetArrayLength(jenv, $input);
  $1 = stackkeys;
  if (n > MXCJ_STACK_HANDLES) {
    heapkeys = (int64_t *)malloc((size_t)n * sizeof *heapkeys);
    if (heapkeys == NULL) {
      mxcj_throw(jenv, MXC_ERR_OOM, "out of memory for a key list");
      return $null;
    }
    $1 = heapkeys;
  }
  if (n > 0) (*jenv)->GetLongArrayRegion(jenv, $input, 0, n, (jlong *)$1);
  $2 = (int)n;
}
%typemap(freearg) (const int64_t *INT_KEYS, int N_INT_KEYS)
    %{ free(heapkeys$argnum); %}

%inline %{
/* ---- user blocks and KVStore updaters: C calling back into the JVM ------
 * The same design as the fit listeners above: a Java object (org.mxc's
 * dispatcher, which catches every Throwable and returns an MXC_ERR_* code)
 * held by a global reference, its method resolved once. The callbacks run
 * on the thread that called mxc_block_forward / mxc_kvstore_push (a Java
 * thread already); any other thread is attached for the call and detached
 * again. Each call runs in a local frame of its own (PushLocalFrame), so a
 * forward pass called a million times inside one long native call (a fit
 * run) does not fill that call's local reference table. mxcj_upcall_refs
 * counts the global references held, so tests can see that closing a
 * block or a store, or replacing an updater, drops them. */
#include <stdatomic.h>

typedef struct {
  JavaVM *vm;
  jobject target;   /* global reference */
  jmethodID method;
} mxcj_upcall;

static atomic_long mxcj_upcall_refs;

/* A holder of target's method name(sig); NULL with mxcb's failure set, or
 * a Java exception pending (NoSuchMethodError). */
static mxcj_upcall *mxcj_upcall_new(JNIEnv *env, jobject target,
                                    const char *name, const char *sig) {
  mxcj_upcall *u;
  jclass cls;
  if (target == NULL) {
    mxcb__fail_msg(MXC_ERR_INVALID_ARGUMENT, "callback target is null");
    return NULL;
  }
  u = (mxcj_upcall *)calloc(1, sizeof *u);
  if (u == NULL) {
    mxcb__fail_msg(MXC_ERR_OOM, "out of memory for a callback");
    return NULL;
  }
  cls = (*env)->GetObjectClass(env, target);
  u->method = (*env)->GetMethodID(env, cls, name, sig);
  (*env)->DeleteLocalRef(env, cls);
  if (u->method == NULL || (*env)->GetJavaVM(env, &u->vm) != JNI_OK ||
      (u->target = (*env)->NewGlobalRef(env, target)) == NULL) {
    free(u);
    if (!(*env)->ExceptionCheck(env))
      mxcb__fail_msg(MXC_ERR_INTERNAL, "cannot hold the callback");
    return NULL;
  }
  atomic_fetch_add(&mxcj_upcall_refs, 1);
  return u;
}

/* Drops the global reference (from any thread) and the holder. */
static void mxcj_upcall_free(void *p) {
  mxcj_upcall *u = (mxcj_upcall *)p;
  int attached = 0;
  JNIEnv *env;
  if (u == NULL) return;
  env = mxcj_env(u->vm, &attached);
  if (env != NULL) {
    (*env)->DeleteGlobalRef(env, u->target);
    atomic_fetch_sub(&mxcj_upcall_refs, 1);
  }
  if (attached) (*u->vm)->DetachCurrentThread(u->vm);
  free(u);
}

/* The end of a callback: a Java exception escaping the dispatcher anyway
 * (an Error while handling one) is cleared and becomes MXC_ERR_INTERNAL,
 * so none is ever pending while mxc's C code runs. */
static int mxcj_upcall_end(JavaVM *vm, JNIEnv *env, int attached, int rc) {
  if ((*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env);
    rc = MXC_ERR_INTERNAL;
  }
  (*env)->PopLocalFrame(env, NULL);
  if (attached) (*vm)->DetachCurrentThread(vm);
  return rc;
}

/* mxc_block_forward_fn: int forward(long self, long[] in, long[] out). */
static int mxcj_block_forward(void *user, mxc_block self, int n_in,
                              const mxc_ndarray *in, mxc_ndarray *out) {
  mxcj_upcall *u = (mxcj_upcall *)user;
  JavaVM *vm = u->vm; /* u is not read after the call (see mxcj_kv_update) */
  int attached = 0, rc = MXC_ERR_OOM;
  JNIEnv *env = mxcj_env(vm, &attached);
  jlongArray jin, jout;
  jlong y = 0;
  if (env == NULL) return MXC_ERR_INTERNAL;
  if ((*env)->PushLocalFrame(env, 4) != 0) {
    (*env)->ExceptionClear(env);
    if (attached) (*vm)->DetachCurrentThread(vm);
    return MXC_ERR_OOM;
  }
  jin = (*env)->NewLongArray(env, n_in);
  jout = (*env)->NewLongArray(env, 1);
  if (jin != NULL && jout != NULL) {
    (*env)->SetLongArrayRegion(env, jin, 0, n_in, (const jlong *)in);
    rc = (int)(*env)->CallIntMethod(env, u->target, u->method,
                                    (jlong)(intptr_t)self, jin, jout);
    if (!(*env)->ExceptionCheck(env))
      (*env)->GetLongArrayRegion(env, jout, 0, 1, &y);
  }
  rc = mxcj_upcall_end(vm, env, attached, rc);
  if (rc == MXC_OK) *out = (mxc_ndarray)(intptr_t)y;
  return rc;
}

/* A user block whose forward pass calls target's
 * int forward(long self, long[] in, long[] out) (org.mxc.UserBlock's
 * dispatcher). The block owns the global reference: mxc_block_create_user
 * drops it through mxcj_upcall_free when the block is destroyed, also
 * when the call fails. */
static mxc_block mxcb_java_block_create_user(JNIEnv *jenv_, const char *name,
                                             jobject target) {
  mxc_block out = NULL;
  mxcj_upcall *u;
  mxcb__begin();
  u = mxcj_upcall_new(jenv_, target, "forward", "(J[J[J)I");
  if (u == NULL) return NULL;
  return mxcb__check(mxc_block_create_user(name, mxcj_block_forward, u,
                                           mxcj_upcall_free, &out))
             ? NULL
             : out;
}

/* mxc_kvstore_updater_fn: int update(String strKey, long intKey, long recv,
 * long local); strKey null for an int key. */
static int mxcj_kv_update(const char *str_key, int64_t int_key,
                          mxc_ndarray recv, mxc_ndarray local, void *user) {
  mxcj_upcall *u = (mxcj_upcall *)user;
  /* u is not read after the call: the updater may replace itself, and the
   * store frees u (mxcj_upcall_free) once this call has returned. */
  JavaVM *vm = u->vm;
  int attached = 0, rc = MXC_ERR_OOM;
  JNIEnv *env = mxcj_env(vm, &attached);
  jstring key = NULL;
  if (env == NULL) return MXC_ERR_INTERNAL;
  if ((*env)->PushLocalFrame(env, 2) != 0) {
    (*env)->ExceptionClear(env);
    if (attached) (*vm)->DetachCurrentThread(vm);
    return MXC_ERR_OOM;
  }
  if (str_key != NULL) key = (*env)->NewStringUTF(env, str_key);
  if (str_key == NULL || key != NULL) {
    rc = (int)(*env)->CallIntMethod(env, u->target, u->method, key,
                                    (jlong)int_key, (jlong)(intptr_t)recv,
                                    (jlong)(intptr_t)local);
  }
  return mxcj_upcall_end(vm, env, attached, rc);
}

/* Makes target's int update(String, long, long, long) the store's updater
 * (target null: none). The store owns the global reference
 * (mxc_kvstore_set_updater_ex): it drops it through mxcj_upcall_free once
 * the updater is replaced or removed or the store freed, after every push
 * still calling it has returned, on whichever thread that is (a Fit's
 * pushes come from C, without any Java lock), also when this call fails. */
static void mxcb_java_kvstore_set_updater(JNIEnv *jenv_, mxc_kvstore kv,
                                          jobject target) {
  mxcj_upcall *u = NULL;
  mxcb__begin();
  if (target != NULL) {
    u = mxcj_upcall_new(jenv_, target, "update", "(Ljava/lang/String;JJJ)I");
    if (u == NULL) return;
  }
  mxcb__check(mxc_kvstore_set_updater_ex(kv, u ? mxcj_kv_update : NULL, u,
                                         u ? mxcj_upcall_free : NULL));
}

/* Global references held by user blocks and updaters (tests). */
static int64_t mxcb_java_upcall_refs(void) {
  mxcb__begin();
  return (int64_t)atomic_load(&mxcj_upcall_refs);
}

/* Int-key KVStore calls: one key per array. */
static void mxcb_java_kvstore_init_int(mxc_kvstore kv, const int64_t *INT_KEYS,
                                       int N_INT_KEYS,
                                       const mxc_ndarray *HANDLES,
                                       int N_HANDLES) {
  mxcb__begin();
  if (!mxcb__kv_counts(N_INT_KEYS, N_HANDLES)) return;
  mxcb__check(mxc_kvstore_init(kv, N_INT_KEYS, INT_KEYS, NULL, HANDLES));
}

static void mxcb_java_kvstore_push_int(mxc_kvstore kv, const int64_t *INT_KEYS,
                                       int N_INT_KEYS,
                                       const mxc_ndarray *HANDLES,
                                       int N_HANDLES, int priority) {
  mxcb__begin();
  if (!mxcb__kv_counts(N_INT_KEYS, N_HANDLES)) return;
  mxcb__check(mxc_kvstore_push(kv, N_INT_KEYS, INT_KEYS, NULL, HANDLES,
                               priority));
}

static void mxcb_java_kvstore_pull_int(mxc_kvstore kv, const int64_t *INT_KEYS,
                                       int N_INT_KEYS,
                                       const mxc_ndarray *HANDLES,
                                       int N_HANDLES, int priority) {
  mxcb__begin();
  if (!mxcb__kv_counts(N_INT_KEYS, N_HANDLES)) return;
  mxcb__check(mxc_kvstore_pull(kv, N_INT_KEYS, INT_KEYS, NULL, HANDLES,
                               priority));
}

/* In place, as mxcb_kvstore_pushpull. */
static void mxcb_java_kvstore_pushpull_int(mxc_kvstore kv,
                                           const int64_t *INT_KEYS,
                                           int N_INT_KEYS,
                                           const mxc_ndarray *HANDLES,
                                           int N_HANDLES, int priority) {
  mxcb__begin();
  if (!mxcb__kv_counts(N_INT_KEYS, N_HANDLES)) return;
  mxcb__check(mxc_kvstore_pushpull(kv, N_INT_KEYS, INT_KEYS, NULL, HANDLES,
                                   HANDLES, priority));
}
%}

%inline %{
/* Makes message (the Java exception's text) the calling thread's mxc
 * failure with code, from inside a callback (org.mxc.Upcalls.fail), so the
 * native call that ran the callback reports it behind its own prefixes
 * ("mxc_kvstore_push: key 2: " + message). Returns code. */
static int mxcb_java_set_last_error(int code, const char *message) {
  mxcb__begin(); /* not a failure of this call: nothing to throw */
  return mxc_set_last_error(code, message);
}
%}

%inline %{
/* ---- for tests: a forward pass on a thread the JVM does not know --------
 * mxc calls a user block's function on the thread calling forward; a C
 * program (or a C library embedding the JVM) may call it from its own
 * threads. UserBlockTest checks through this that such a thread is
 * attached for the call and detached again. */
#include <pthread.h>

typedef struct {
  mxc_block block;
  mxc_ndarray in, out;
  int rc;
} mxcj_native_forward;

static void *mxcj_native_forward_run(void *p) {
  mxcj_native_forward *f = (mxcj_native_forward *)p;
  f->rc = mxc_block_forward(f->block, 1, &f->in, &f->out);
  return NULL;
}

/* mxc_block_forward(b, x) on a new native thread, joined: a new array
 * owned by the caller. */
static mxc_ndarray mxcb_java_test_forward_on_native_thread(mxc_block b,
                                                           mxc_ndarray x) {
  mxcj_native_forward f = {b, x, NULL, MXC_OK};
  pthread_t t;
  mxcb__begin();
  if (pthread_create(&t, NULL, mxcj_native_forward_run, &f) != 0) {
    mxcb__fail_msg(MXC_ERR_INTERNAL, "cannot start a thread");
    return NULL;
  }
  pthread_join(t, NULL);
  if (f.rc != MXC_OK) {
    mxcb__fail_msg(f.rc, "the forward pass on a native thread failed");
    return NULL;
  }
  return f.out;
}
%}
