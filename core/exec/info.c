/* Looking into an executor: its arrays by name, memory figures, the debug
 * description, and parameter files. */
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/base/gpu.h"
#include "core/exec/executor.h"
#include "core/fuse/fuse.h"
#include "core/graph/infer.h"
#include "core/base/strbuf.h"
#include "core/ndarray/io.h"

mxc__ndarray *mxc__executor_output(const mxc__executor *ex, int i) {
  return ex->vals[ex->g->heads[i]];
}

int mxc__executor_find(const mxc__executor *ex, int group, const char *name,
                       const char *fn, mxc__ndarray **out) {
  int is_aux = group == MXC__EXEC_AUX;
  int n = is_aux ? ex->n_aux : ex->n_args;
  const char **names = is_aux ? ex->aux_names : ex->arg_names;
  for (int i = 0; i < n; ++i) {
    if (strcmp(names[i], name) != 0) continue;
    if (is_aux) {
      *out = ex->bound[ex->n_args + i];
    } else if (group == MXC__EXEC_ARG) {
      *out = ex->bound[i];
    } else {
      MXC_RETURN_ERROR_IF(!ex->grads[i], MXC_ERR_NOT_FOUND,
                          "%s: argument '%s' has no gradient array (its "
                          "grad_req is MXC_REQ_NULL)",
                          fn, name);
      *out = ex->grads[i];
    }
    return MXC_OK;
  }
  return mxc__error_set(MXC_ERR_NOT_FOUND, "%s: '%s' is not %s of the executor",
                        fn, name,
                        is_aux ? "an auxiliary state" : "an argument");
}

void mxc__executor_memory(const mxc__executor *ex, int64_t *planned,
                          int64_t *unshared) {
  if (planned) *planned = ex->plan->planned_bytes;
  if (unshared) *unshared = ex->plan->unshared_bytes;
}

/* ---- debug description ---- */

static void describe_entry(const mxc__executor *ex, mxc__sbuf *b, int e) {
  char name[256], shape[160];
  mxc__sbuf_printf(b, "    %s %s %s",
                   mxc__executor_entry_name(ex, e, name, sizeof name),
                   mxc__shape_str(&ex->shapes[e], shape, sizeof shape),
                   mxc__dtype_name(ex->dtypes[e]));
  if (ex->stypes[e] != MXC_STYPE_DEFAULT) {
    mxc__sbuf_add(b, ex->stypes[e] == MXC_STYPE_CSR ? " csr" : " row_sparse");
  }
  if (ex->vals[e] && ex->vals[e]->fmt == MXC__FMT_CHANNELS_LAST) {
    mxc__sbuf_add(b, " channels-last");
  } else if (ex->vals[e] && ex->vals[e]->fmt == MXC__FMT_CHANNELS_LAST_BF16) {
    mxc__sbuf_add(b, " channels-last bf16");
  }
  int buf = ex->plan->buf[e];
  if (buf >= 0) {
    mxc__sbuf_printf(b, " -> buffer %d%s\n", buf,
                     ex->plan->inplace[e] ? " (in place)" : "");
    return;
  }
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->grad_direct[i] && ex->grad_entry[i] == e) {
      mxc__sbuf_printf(b, " -> gradient array of %s (%s)\n", ex->arg_names[i],
                       ex->grad_req[i] == MXC_REQ_ADD ? "add" : "write");
      return;
    }
  }
  mxc__sbuf_add(b, " -> own array\n");
}

static void describe_node(const mxc__executor *ex, mxc__sbuf *b, int i) {
  const mxc__graph *g = ex->g;
  int nid = ex->order[i];
  const mxc__node *n = g->nodes[nid];
  char name[256];
  /* How invoke runs it: the sparse kernel, or dense temporaries. */
  int d = ex->dispatch[nid];
  mxc__sbuf_printf(b, "%s %d: %s (%s)%s\n", i < ex->n_fwd ? "fwd" : "bwd", i,
                   n->name, n->op->name,
                   d == MXC__GRAPH_SPARSE     ? " [sparse kernel]"
                   : d == MXC__GRAPH_FALLBACK ? " [dense fallback]"
                                              : "");
  for (int k = g->in_ptr[nid]; k < g->in_ptr[nid + 1]; ++k) {
    mxc__sbuf_printf(
        b, "    in  %s\n",
        mxc__executor_entry_name(ex, g->in_entries[k], name, sizeof name));
  }
  /* A fused region's parameters are its program: show what it computes. */
  for (int k = 0; strncmp(n->op->name, "_fused", 6) == 0 && k < n->n_attrs;
       ++k) {
    mxc__sbuf_printf(b, "    fused %s = %s\n", n->keys[k], n->vals[k]);
  }
  const char *replaced = mxc__node_get_uattr(n, MXC__FUSE_ATTR_NODES);
  if (replaced && strncmp(n->op->name, "_fused", 6) != 0) {
    mxc__sbuf_printf(b, "    replaces %s\n", replaced);
  }
  for (int e = g->entry_ptr[nid]; e < g->entry_ptr[nid + 1]; ++e) {
    describe_entry(ex, b, e);
  }
}

int mxc__executor_debug_str(const mxc__executor *ex, char **out) {
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  mxc__sbuf_printf(&b,
                   "executor: %d outputs, %d arguments, %d auxiliary states, "
                   "%d forward and %d backward nodes, %d fused nodes\n",
                   ex->n_outputs, ex->n_args, ex->n_aux, ex->n_fwd, ex->n_bwd,
                   ex->n_fused);
  if (mxc__infer_passes_changed(&ex->passes)) {
    mxc__sbuf_printf(&b,
                     "inference passes: %d identity nodes removed, %d "
                     "BatchNorms folded, %d activations or sums fused\n",
                     ex->passes.n_removed, ex->passes.n_folded,
                     ex->passes.n_fused);
  }
  int n_cl = 0, n_bf16 = 0;
  for (int e = 0; e < ex->g->n_entries; ++e) {
    int f = ex->vals[e] ? ex->vals[e]->fmt : MXC__FMT_PLAIN;
    n_cl += f != MXC__FMT_PLAIN;
    n_bf16 += f == MXC__FMT_CHANNELS_LAST_BF16;
  }
  if (n_cl) {
    mxc__sbuf_printf(&b, "channels-last values: %d (%d bf16)\n", n_cl,
                     n_bf16);
  }
  for (int i = 0; i < ex->n_fwd + ex->n_bwd; ++i) describe_node(ex, &b, i);
  for (int i = 0; i < ex->n_args; ++i) {
    if (ex->grad_req[i] == MXC_REQ_NULL) continue;
    mxc__sbuf_printf(&b, "gradient of %s: %s (%s)\n", ex->arg_names[i],
                     ex->grad_entry[i] < 0 ? "none reaches it"
                     : ex->grad_direct[i]  ? "written by its producer"
                                           : "copied from its entry",
                     ex->grad_req[i] == MXC_REQ_ADD ? "add" : "write");
  }
  for (int k = 0; k < ex->plan->n_bufs; ++k) {
    mxc__sbuf_printf(&b, "buffer %d: %zu bytes\n", k, ex->plan->buf_bytes[k]);
  }
  mxc__sbuf_printf(&b,
                   "memory: planned %lld bytes in %d buffers, unshared "
                   "%lld bytes\n",
                   (long long)ex->plan->planned_bytes, ex->plan->n_bufs,
                   (long long)ex->plan->unshared_bytes);
  return mxc__sbuf_finish(&b, "mxc_executor_debug_str", out);
}

/* ---- parameter files ---- */

static int excluded(const char *name, int n, const char *const *exclude) {
  for (int i = 0; i < n; ++i) {
    if (exclude[i] && strcmp(exclude[i], name) == 0) return 1;
  }
  return 0;
}

int mxc__executor_save_params(const mxc__executor *ex, const char *path,
                              int n_exclude, const char *const *exclude) {
  const char *fn = "mxc_executor_save_params";
  int cap = ex->n_args + ex->n_aux;
  mxc__ndarray **arrs = mxc__calloc((size_t)cap + 1, sizeof *arrs);
  char **names = mxc__calloc((size_t)cap + 1, sizeof *names);
  int rc = (arrs && names)
               ? MXC_OK
               : mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
  int n = 0;
  for (int i = 0; rc == MXC_OK && i < cap; ++i) {
    int is_arg = i < ex->n_args;
    const char *nm = is_arg ? ex->arg_names[i] : ex->aux_names[i - ex->n_args];
    if (is_arg && excluded(nm, n_exclude, exclude)) continue;
    size_t len = strlen(nm) + 5;
    names[n] = mxc__malloc(len);
    if (!names[n]) {
      rc = mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
      break;
    }
    memcpy(names[n], is_arg ? "arg:" : "aux:", 4);
    memcpy(names[n] + 4, nm, len - 4);
    arrs[n++] = ex->bound[i];
  }
  if (rc == MXC_OK) {
    rc = mxc__ndarray_save(path, arrs, (const char *const *)names, n);
  }
  for (int i = 0; names && i < n; ++i) mxc__free(names[i]);
  mxc__free(names);
  mxc__free(arrs);
  return rc;
}

/* The executor array a loaded name refers to ("arg:x", "aux:x", or a bare
 * argument name), or NULL. */
static mxc__ndarray *param_target(const mxc__executor *ex, const char *name) {
  int group = MXC__EXEC_ARG;
  if (strncmp(name, "arg:", 4) == 0) {
    name += 4;
  } else if (strncmp(name, "aux:", 4) == 0) {
    name += 4;
    group = MXC__EXEC_AUX;
  }
  int n = group == MXC__EXEC_AUX ? ex->n_aux : ex->n_args;
  const char **names = group == MXC__EXEC_AUX ? ex->aux_names : ex->arg_names;
  for (int i = 0; i < n; ++i) {
    if (strcmp(names[i], name) != 0) continue;
    return ex->bound[group == MXC__EXEC_AUX ? ex->n_args + i : i];
  }
  return NULL;
}

/* One engine operation copies every loaded array into its target, so the
 * load is all or nothing: either that push succeeds or nothing changes. */
typedef struct load_op {
  mxc__ndarray_list *list;
  int n;
  int dst_gpu; /* the executor's GPU id, or MXC__GPU_HOST */
  void **dst;
  const void **src;
  size_t *nbytes;
} load_op;

/* Loaded arrays are on the host; the executor's may be device memory. */
static int load_fn(void *arg, mxc__exec *ex) {
  const load_op *op = arg;
  for (int i = 0; i < op->n; ++i) {
    if (op->dst_gpu == MXC__GPU_HOST) {
      if (op->nbytes[i]) memcpy(op->dst[i], op->src[i], op->nbytes[i]);
      continue;
    }
    int rc = mxc__gpu_copy(op->dst[i], op->dst_gpu, op->src[i],
                           MXC__GPU_HOST, op->nbytes[i]);
    if (rc != MXC_OK) {
      mxc__exec_set_error(ex, mxc__error_msg());
      return rc;
    }
  }
  return MXC_OK;
}

static void load_free(void *arg) {
  load_op *op = arg;
  mxc__ndarray_list_free(op->list);
  mxc__free(op->dst);
  mxc__free(op->src);
  mxc__free(op->nbytes);
  mxc__free(op);
}

/* Matches every loaded array to its target and checks shape and dtype;
 * fills op (dst/src/nbytes) and the engine variable lists. */
static int load_match(const mxc__executor *ex, load_op *op, int allow_extra,
                      const char *path, mxc__var **reads, mxc__var **writes) {
  const char *fn = "mxc_executor_load_params";
  const mxc__ndarray_list *l = op->list;
  char b1[160], b2[160];
  for (int i = 0; i < l->n; ++i) {
    const mxc__ndarray *src = l->arrays[i];
    mxc__ndarray *dst = param_target(ex, l->names[i]);
    if (!dst) {
      MXC_RETURN_ERROR_IF(!allow_extra, MXC_ERR_NOT_FOUND,
                          "%s: '%s' in '%s' is not an argument or auxiliary "
                          "state of the executor (allow_extra skips such "
                          "names)",
                          fn, l->names[i], path);
      continue;
    }
    MXC_RETURN_ERROR_IF(
        !mxc__shape_equal(&src->shape, &dst->shape), MXC_ERR_SHAPE,
        "%s: parameter '%s' has shape %s in '%s'; the "
        "executor's is %s",
        fn, l->names[i], mxc__shape_str(&src->shape, b1, sizeof b1), path,
        mxc__shape_str(&dst->shape, b2, sizeof b2));
    MXC_RETURN_ERROR_IF(src->dtype != dst->dtype || src->stype != dst->stype,
                        MXC_ERR_DTYPE,
                        "%s: parameter '%s' is %s in '%s'; the executor's "
                        "is %s (dense)",
                        fn, l->names[i], mxc__dtype_name(src->dtype), path,
                        mxc__dtype_name(dst->dtype));
    MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(src));
    MXC_FORWARD_IF_ERROR(mxc__ndarray_ensure_alloc(dst));
    op->dst[op->n] = mxc__ndarray_ptr(dst);
    op->src[op->n] = mxc__ndarray_ptr(src);
    op->nbytes[op->n] = mxc__ndarray_nbytes(dst);
    reads[op->n] = mxc__ndarray_var(src);
    writes[op->n] = mxc__ndarray_var(dst);
    op->n++;
  }
  return MXC_OK;
}

int mxc__executor_load_params(mxc__executor *ex, const char *path,
                              int allow_extra) {
  const char *fn = "mxc_executor_load_params";
  mxc__ndarray_list *list = NULL;
  MXC_FORWARD_IF_ERROR(mxc__ndarray_load(path, &list));
  size_t n = (size_t)list->n + 1;
  load_op *op = mxc__calloc(1, sizeof *op);
  mxc__var **reads = mxc__calloc(n, sizeof *reads);
  mxc__var **writes = mxc__calloc(n, sizeof *writes);
  if (op) {
    op->list = list;
    op->dst = mxc__calloc(n, sizeof *op->dst);
    op->src = mxc__calloc(n, sizeof *op->src);
    op->nbytes = mxc__calloc(n, sizeof *op->nbytes);
    op->dst_gpu =
        ex->dev.type == MXC_DEVICE_GPU ? ex->dev.id : MXC__GPU_HOST;
  }
  int rc = (op && reads && writes && op->dst && op->src && op->nbytes)
               ? MXC_OK
               : mxc__error_set(MXC_ERR_OOM, "%s: out of memory", fn);
  if (rc == MXC_OK) rc = load_match(ex, op, allow_extra, path, reads, writes);
  if (rc == MXC_OK && op->n > 0) {
    mxc__push_args a;
    memset(&a, 0, sizeof a);
    a.sync_fn = load_fn;
    a.arg = op;
    a.free_fn = load_free;
    a.reads = reads;
    a.n_reads = op->n;
    a.writes = writes;
    a.n_writes = op->n;
    a.name = "load_params";
    a.dev = ex->dev;
    rc = mxc__engine_push(mxc__ndarray_engine(list->arrays[0]), &a);
    if (rc == MXC_OK) op = NULL; /* the engine frees it */
  }
  if (op) {
    load_free(op);
  } else if (rc != MXC_OK) {
    mxc__ndarray_list_free(list);
  }
  mxc__free(reads);
  mxc__free(writes);
  return rc;
}
