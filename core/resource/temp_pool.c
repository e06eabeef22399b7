#include "core/resource/temp_pool.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/base/error.h"

/* Enough for the two to four operators that run at once on the machines
 * mxc targets; more would only hold more idle memory. */
#define N_TEMP 4

static mxc__temp_space *g_temp[N_TEMP];
static mxc__var *g_temp_var[N_TEMP];
static pthread_mutex_t g_temp_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint g_temp_next;

/* Creates slot i; called with g_temp_lock held. */
static int slot_create(int i, mxc__engine *e, mxc__device dev) {
  mxc__temp_space *t = NULL;
  mxc__var *v = NULL;
  int rc = mxc__temp_space_create(dev, &t);
  if (rc == MXC_OK) rc = mxc__engine_new_var(e, &v);
  if (rc != MXC_OK) {
    mxc__temp_space_destroy(t);
    return rc;
  }
  mxc__engine_var_set_scratch(v);
  g_temp[i] = t;
  g_temp_var[i] = v;
  return MXC_OK;
}

int mxc__temp_pool_get(mxc__engine *e, mxc__device dev,
                       mxc__temp_space **space, mxc__var **var) {
  int i = (int)(atomic_fetch_add(&g_temp_next, 1) % N_TEMP);
  pthread_mutex_lock(&g_temp_lock);
  int rc = g_temp[i] ? MXC_OK : slot_create(i, e, dev);
  if (rc == MXC_OK) {
    *space = g_temp[i];
    *var = g_temp_var[i];
  }
  pthread_mutex_unlock(&g_temp_lock);
  return rc;
}
