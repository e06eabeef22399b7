/* Placeholder until the fusion pass lands: returns the DAG unchanged. */
#include "core/fuse/fuse.h"

int mxc__fuse_graph(const mxc__entry *heads, int n_heads,
                    mxc__entry *out_heads, int *out_n_fused) {
  for (int i = 0; i < n_heads; ++i) {
    out_heads[i] = mxc__entry_ref(heads[i].node, heads[i].index);
  }
  if (out_n_fused) *out_n_fused = 0;
  return MXC_OK;
}
