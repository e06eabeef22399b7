/* Loading an optional plug-in library (the CUDA backend, MPI): one
 * dlopen, its entry point, and the checks every plug-in table starts
 * with, so that each unavailability reason is its own message.
 *
 * A plug-in's table begins with `uint32_t abi; uint32_t size;` and holds
 * the mxc version its sources were (a `const char *` at version_offset):
 * libmxc accepts only its own ABI, a table at least as large as it knows,
 * and exactly its own version (plug-ins read internal structs).
 *
 * Thread-safety: none; callers load once (pthread_once). */
#ifndef MXC_CORE_BASE_PLUGIN_H_
#define MXC_CORE_BASE_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

typedef struct mxc__plugin_spec {
  const char *library; /* in messages: "the CUDA plug-in" */
  const char *kind;    /* in messages: "is not an mxc GPU plug-in" */
  const char *package; /* the Debian package that installs it */
  const char *env;     /* variable naming another path */
  const char *file;    /* default path */
  const char *entry;   /* the symbol returning the table */
  uint32_t abi;
  size_t size;           /* sizeof the table this libmxc knows */
  size_t version_offset; /* offsetof the table's mxc_version */
  const char *version;   /* this libmxc's version */
  int dl_flags;          /* RTLD_LOCAL or RTLD_GLOBAL, with RTLD_NOW */
  /* Calls the entry point found at sym through its own type (calling it
   * through another function type would be undefined behaviour). */
  const void *(*call_entry)(void *sym);
} mxc__plugin_spec;

/* The path to load: spec->env's value when set and not empty, else
 * spec->file. */
const char *mxc__plugin_path(const mxc__plugin_spec *spec);

/* The table of the plug-in at path, or NULL with status (n bytes) saying
 * why. A loaded library stays loaded for the process (its code may be
 * running in other threads' device work or MPI); a refused one is
 * closed. */
const void *mxc__plugin_open(const mxc__plugin_spec *spec, const char *path,
                             char *status, size_t n);

#endif /* MXC_CORE_BASE_PLUGIN_H_ */
