/* Loading plug-ins (plugin.h). */
#include "core/base/plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The header every table starts with. */
typedef struct table_head {
  uint32_t abi, size;
} table_head;

const char *mxc__plugin_path(const mxc__plugin_spec *spec) {
  const char *env = getenv(spec->env);
  return env && *env ? env : spec->file;
}

/* 1 when table t passes the checks, else 0 with status set. */
static int check_table(const mxc__plugin_spec *s, const char *path,
                       const void *t, char *status, size_t n) {
  const table_head *h = t;
  if (!t) {
    snprintf(status, n, "%s is not an mxc %s plug-in (no %s, or it "
             "returned NULL)", path, s->kind, s->entry);
    return 0;
  }
  if (h->abi != s->abi || h->size < s->size) {
    snprintf(status, n, "%s has plug-in ABI %u (table of %u bytes); this "
             "libmxc needs ABI %u (%zu bytes): install libmxc1 and %s of "
             "the same version", path, h->abi, h->size, s->abi, s->size,
             s->package);
    return 0;
  }
  const char *v;
  memcpy(&v, (const char *)t + s->version_offset, sizeof v);
  if (!v || strcmp(v, s->version) != 0) {
    snprintf(status, n, "%s was built from mxc %s; this libmxc is %s: "
             "install libmxc1 and %s of the same version", path,
             v ? v : "(unknown)", s->version, s->package);
    return 0;
  }
  return 1;
}

const void *mxc__plugin_open(const mxc__plugin_spec *spec, const char *path,
                             char *status, size_t n) {
  void *h = dlopen(path, RTLD_NOW | spec->dl_flags);
  if (!h) {
    snprintf(status, n, "%s could not be loaded (%s); install the %s "
             "package, or set %s to its path", spec->library, dlerror(),
             spec->package, spec->env);
    return NULL;
  }
  void *sym = dlsym(h, spec->entry);
  const void *t = sym ? spec->call_entry(sym) : NULL;
  if (check_table(spec, path, t, status, n)) return t;
  dlclose(h);
  return NULL;
}
