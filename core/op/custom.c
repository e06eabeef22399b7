/* The table of custom operators (see custom.h): a singly linked list of
 * reference-counted entries under one mutex. Registrations are few and
 * lookups are one per call of a custom operator, so a list is enough. */
#include "core/op/custom.h"

#include <pthread.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"

struct mxc__custom {
  char name[MXC__CUSTOM_NAME_MAX];
  mxc_custom_op_def def;
  int refs;            /* guarded by g_lock */
  mxc__custom *next;   /* in the table while registered */
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static mxc__custom *g_head;

/* The registered entry named `name` (caller holds g_lock). */
static mxc__custom **find_slot(const char *name) {
  mxc__custom **p = &g_head;
  while (*p && strcmp((*p)->name, name) != 0) p = &(*p)->next;
  return p;
}

static int check_def(const char *name, const mxc_custom_op_def *def) {
  MXC_RETURN_ERROR_IF(!name || !*name ||
                          strlen(name) >= MXC__CUSTOM_NAME_MAX,
                      MXC_ERR_INVALID_ARGUMENT,
                      "mxc_custom_op_register: name must be 1..%d bytes",
                      MXC__CUSTOM_NAME_MAX - 1);
  MXC_RETURN_ERROR_IF(!def || !def->forward, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_custom_op_register: custom operator '%s' needs a "
                      "definition with a forward callback",
                      name);
  int bad = def->num_inputs < 1 || def->num_inputs > MXC__CUSTOM_MAX_ARITY ||
            def->num_outputs < 1 || def->num_outputs > MXC__CUSTOM_MAX_ARITY;
  MXC_RETURN_ERROR_IF(bad, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_custom_op_register: custom operator '%s': "
                      "num_inputs and num_outputs must be in 1..%d (got %d "
                      "and %d)",
                      name, MXC__CUSTOM_MAX_ARITY, def->num_inputs,
                      def->num_outputs);
  return MXC_OK;
}

int mxc__custom_register(const char *name, const mxc_custom_op_def *def) {
  MXC_FORWARD_IF_ERROR(check_def(name, def));
  mxc__custom *c = mxc__calloc(1, sizeof *c);
  MXC_RETURN_ERROR_IF(!c, MXC_ERR_OOM,
                      "mxc_custom_op_register: out of memory");
  memcpy(c->name, name, strlen(name) + 1);
  c->def = *def;
  c->refs = 1; /* the table's */
  pthread_mutex_lock(&g_lock);
  mxc__custom **slot = find_slot(name);
  int taken = *slot != NULL;
  if (!taken) *slot = c;
  pthread_mutex_unlock(&g_lock);
  if (!taken) return MXC_OK;
  mxc__free(c);
  return mxc__error_set(MXC_ERR_INVALID_ARGUMENT,
                        "mxc_custom_op_register: a custom operator named "
                        "'%s' is already registered (unregister it first)",
                        name);
}

int mxc__custom_unregister(const char *name) {
  MXC_RETURN_ERROR_IF(!name, MXC_ERR_INVALID_ARGUMENT,
                      "mxc_custom_op_unregister: name is NULL");
  pthread_mutex_lock(&g_lock);
  mxc__custom **slot = find_slot(name);
  mxc__custom *c = *slot;
  if (c) *slot = c->next;
  pthread_mutex_unlock(&g_lock);
  MXC_RETURN_ERROR_IF(!c, MXC_ERR_NOT_FOUND,
                      "mxc_custom_op_unregister: no custom operator named "
                      "'%s' is registered",
                      name);
  mxc__custom_release(c); /* the table's reference */
  return MXC_OK;
}

int mxc__custom_acquire(const char *name, const char *who, mxc__custom **out) {
  pthread_mutex_lock(&g_lock);
  mxc__custom *c = *find_slot(name);
  if (c) c->refs++;
  pthread_mutex_unlock(&g_lock);
  MXC_RETURN_ERROR_IF(!c, MXC_ERR_NOT_FOUND,
                      "%s: no custom operator named '%s' is registered "
                      "(mxc_custom_op_register)",
                      who, name);
  *out = c;
  return MXC_OK;
}

void mxc__custom_release(mxc__custom *c) {
  if (!c) return;
  pthread_mutex_lock(&g_lock);
  int last = --c->refs == 0;
  pthread_mutex_unlock(&g_lock);
  if (!last) return;
  /* Outside the lock: destroy is user code and may call back in. */
  if (c->def.destroy) c->def.destroy(c->def.user_data);
  mxc__free(c);
}

const mxc_custom_op_def *mxc__custom_def(const mxc__custom *c) {
  return &c->def;
}
