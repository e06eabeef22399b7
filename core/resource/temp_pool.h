/* The process-wide pool of temporary spaces that imperative calls draw
 * from (operators declaring MXC__RES_TEMP). A few spaces, each paired with
 * an engine variable that every user writes: users of one space are
 * serialized, users of different spaces run in parallel. The variables
 * are scratch variables (core/engine/engine.h): temp contents mean
 * nothing between operators, so one failed operator never makes the next
 * user of its space fail. Spaces and variables live until the process
 * exits.
 *
 * Thread-safety: mxc__temp_pool_get may be called from any thread. */
#ifndef MXC_CORE_RESOURCE_TEMP_POOL_H_
#define MXC_CORE_RESOURCE_TEMP_POOL_H_

#include "core/base/device.h"
#include "core/engine/engine.h"
#include "core/resource/temp_space.h"

/* Picks the next space (round robin), creating it with e and dev on first
 * use: *space and the variable the caller must declare as written,
 * *var. Both borrowed. MXC_ERR_OOM when creating it fails. The spaces are
 * host memory today: every caller passes a CPU device. */
int mxc__temp_pool_get(mxc__engine *e, mxc__device dev,
                       mxc__temp_space **space, mxc__var **var);

#endif /* MXC_CORE_RESOURCE_TEMP_POOL_H_ */
