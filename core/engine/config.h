/* How the default engine is configured from the environment. Kept apart
 * from internal.h (which uses C11 atomics) so that C++ tests can call it. */
#ifndef MXC_CORE_ENGINE_CONFIG_H_
#define MXC_CORE_ENGINE_CONFIG_H_

#ifdef __cplusplus
extern "C" {
#endif

/* *kind from MXC_ENGINE ("naive" -> MXC__ENGINE_NAIVE; anything else or
 * unset -> MXC__ENGINE_THREADED); *workers from MXC_NUM_THREADS (a
 * positive integer; otherwise the online CPU count), clamped to 1..1024.
 * Reads the environment on every call; never prints. */
void mxc__engine_env_config(int *kind, int *workers);

#ifdef __cplusplus
}
#endif

#endif /* MXC_CORE_ENGINE_CONFIG_H_ */
