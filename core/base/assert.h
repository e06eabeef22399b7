/* Internal assertions: checks of mxc's own invariants.
 *
 * MXC__ASSERT(cond) states something the code relies on and that only a bug
 * in mxc can break: a reference count above zero, a queue empty when its
 * owner is freed, a plan entry inside its arena. It is never a check of what
 * a caller passed in. Bad user input (wrong handle, shape, dtype, size) is
 * always validated and reported with an MXC_ERR_* code (core/base/error.h),
 * in every build, so a mistake in the calling program never aborts its
 * process.
 *
 * Assertions are on when MXC_ASSERTS is defined (the debug and asan configs
 * in .bazelrc define it) or when NDEBUG is not defined. A failure prints
 * file:line and the condition to stderr and aborts: continuing past a broken
 * invariant corrupts memory far from the cause. When assertions are off the
 * condition is not evaluated (it must have no side effect) but is still
 * compiled, so it cannot rot; release builds never abort on it. */
#ifndef MXC_CORE_BASE_ASSERT_H_
#define MXC_CORE_BASE_ASSERT_H_

#if !defined(MXC_ASSERTS) && !defined(NDEBUG)
#define MXC_ASSERTS 1
#endif

#if defined(__GNUC__)
#define MXC__NORETURN __attribute__((noreturn))
#else
#define MXC__NORETURN _Noreturn
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Prints "file:line: mxc internal assertion failed: cond[: msg]" and
 * aborts. Defined in every build, so objects compiled with and without
 * assertions link together. */
MXC__NORETURN void mxc__assert_fail(const char *file, int line,
                                   const char *cond, const char *msg);

/* 1 if this library was compiled with assertions on, else 0 (lets a test
 * check that a configuration really turns them on). */
int mxc__asserts_enabled(void);

#ifdef __cplusplus
}
#endif

#if defined(MXC_ASSERTS)

#define MXC__ASSERT_MSG(cond, msg)                          \
  ((cond) ? (void)0                                         \
          : mxc__assert_fail(__FILE__, __LINE__, #cond, (msg)))

#else

/* sizeof keeps the condition type-checked without evaluating it. */
#define MXC__ASSERT_MSG(cond, msg) ((void)sizeof((cond) ? 1 : 0), (void)0)

#endif

#define MXC__ASSERT(cond) MXC__ASSERT_MSG(cond, (const char *)0)

#endif /* MXC_CORE_BASE_ASSERT_H_ */
