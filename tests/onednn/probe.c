/* Probes of the oneDNN backend for test_onednn.cc (probe.h). */
#include "tests/onednn/probe.h"

#include <string.h>

#include "backends/onednn/onednn.h"
#include "core/op/registry.h"

void od_reference_only(int on) { (void)mxc__op_set_reference_only(on); }

int64_t od_lookups(void) {
  mxc__dnnl_cache_stats s;
  mxc__dnnl_cache_stats_get(&s);
  return s.hits + s.misses;
}

void od_cache_stats(int *entries, int *capacity, int64_t *hits,
                    int64_t *misses) {
  mxc__dnnl_cache_stats s;
  mxc__dnnl_cache_stats_get(&s);
  *entries = s.entries;
  *capacity = s.capacity;
  *hits = s.hits;
  *misses = s.misses;
}

void od_cache_set_capacity(int capacity) {
  mxc__dnnl_cache_set_capacity(capacity);
}

const char *od_attached(int i) {
  for (int j = 0; j < mxc__op_count(); ++j) {
    const mxc__op *op = mxc__op_at(j);
    const mxc__kernel *k;
    for (int n = 0; (k = mxc__op_kernel_at(op, n)) != NULL; ++n) {
      if (k->backend == &mxc__backend_onednn && i-- == 0) return op->name;
    }
  }
  return NULL;
}

int od_enabled(void) { return mxc__dnnl_enabled(); }
