#include "backends/cuda/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "mxc/mxc.h"

/* The first file of lib->files that opens, or NULL with the loader's
 * message for the first one (the preferred name) in lib->why. */
static void *open_first(mxc__cuda_dynlib *lib) {
  char first[256] = "";
  for (const char *const *f = lib->files; *f; ++f) {
    void *h = dlopen(*f, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    const char *e = dlerror();
    if (f == lib->files) snprintf(first, sizeof first, "%s", e ? e : "?");
  }
  snprintf(lib->why, sizeof lib->why,
           "%s could not be loaded (%s); install %s, or put the folder "
           "holding %s on LD_LIBRARY_PATH",
           lib->what, first, lib->install, lib->files[0]);
  return NULL;
}

/* Every symbol into lib->fns; 0, or -1 with the missing one named. */
static int resolve(mxc__cuda_dynlib *lib) {
  for (int i = 0; lib->symbols[i]; ++i) {
    lib->fns[i] = dlsym(lib->handle, lib->symbols[i]);
    if (!lib->fns[i]) {
      snprintf(lib->why, sizeof lib->why,
               "%s was loaded but has no %s: it is older than the version "
               "the plug-in was built for; install %s",
               lib->what, lib->symbols[i], lib->install);
      return -1;
    }
  }
  return 0;
}

static void try_load(mxc__cuda_dynlib *lib) {
  lib->handle = open_first(lib);
  if (lib->handle && resolve(lib) == 0) {
    lib->state = 1;
    return;
  }
  /* A half-resolved table is never used: state -1 guards it. The handle
   * stays open (dlclose of a CUDA library at run time is not worth its
   * risk for a failure that ends the use of the library anyway). */
  lib->state = -1;
}

int mxc__cuda_dynlib_load(mxc__cuda_dynlib *lib, char *why, size_t why_len) {
  pthread_mutex_lock(&lib->mu);
  if (lib->state == 0) try_load(lib);
  int state = lib->state;
  if (state < 0 && why_len) snprintf(why, why_len, "%s", lib->why);
  pthread_mutex_unlock(&lib->mu);
  return state > 0 ? MXC_OK : MXC_ERR_UNSUPPORTED;
}
