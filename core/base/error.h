/* Status codes and the thread-local error message.
 *
 * Every fallible internal function returns an int status (MXC_OK or an
 * MXC_ERR_* code from <mxc/mxc.h>) and, on failure, has already recorded a
 * message with mxc__error_set. Callers either handle the failure or forward
 * it unchanged with MXC_FORWARD_IF_ERROR, so the message describing the
 * first cause reaches the C API boundary intact. */
#ifndef MXC_CORE_BASE_ERROR_H_
#define MXC_CORE_BASE_ERROR_H_

#include <stdarg.h>

#include "mxc/mxc.h"

#if defined(__GNUC__)
#define MXC__PRINTF(f, a) __attribute__((format(printf, f, a)))
#define MXC__LIKELY(x) __builtin_expect(!!(x), 1)
#define MXC__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define MXC__PRINTF(f, a)
#define MXC__LIKELY(x) (x)
#define MXC__UNLIKELY(x) (x)
#endif

#define MXC__ERROR_MAX 1024

/* Records `code` and a printf-style message for the calling thread and
 * returns `code`. In debug builds (MXC_DEBUG) the source position is
 * appended. Never allocates. */
int mxc__error_setf(int code, const char *file, int line, const char *fmt,
                    ...) MXC__PRINTF(4, 5);

/* Records a message verbatim (no formatting). Returns `code`. */
int mxc__error_set_raw(int code, const char *msg);

/* Prefixes the current message with "prefix: ". */
void mxc__error_prefix(const char *prefix);

const char *mxc__error_msg(void);
int mxc__error_code(void);
void mxc__error_clear(void);

#define mxc__error_set(code, ...) \
  mxc__error_setf((code), __FILE__, __LINE__, __VA_ARGS__)

/* Returns `code` with a message when `cond` holds. */
#define MXC_RETURN_ERROR_IF(cond, code, ...)         \
  do {                                               \
    if (MXC__UNLIKELY(cond)) {                       \
      return mxc__error_set((code), __VA_ARGS__);    \
    }                                                \
  } while (0)

/* Evaluates `expr` once; returns its status if it is not MXC_OK. The message
 * recorded by the failing callee is kept as it is. */
#define MXC_FORWARD_IF_ERROR(expr)              \
  do {                                          \
    int mxc__fwd_rc = (expr);                   \
    if (MXC__UNLIKELY(mxc__fwd_rc != MXC_OK)) { \
      return mxc__fwd_rc;                       \
    }                                           \
  } while (0)

#endif /* MXC_CORE_BASE_ERROR_H_ */
