/* Element-wise fusion (see fuse.h).
 *
 * 1. Index the DAG (core/graph/graph.h): topological ids and, per entry,
 *    the number of consumers (heads included).
 * 2. Grow regions from the outputs backwards: a fusible node not yet in
 *    a region roots a new one, which absorbs an input's producer when it
 *    is fusible, free, and the entry it produces has exactly one consumer
 *    (the region node reading it). Members other than the root are
 *    therefore invisible outside the region: no head, backward node or
 *    other branch reads them, and removing them changes no other value.
 *    Regions stop at MXC__FUSED_MAX_INSTR nodes and MXC__FUSED_MAX_INPUTS
 *    external inputs; one-node regions are dropped.
 * 3. Write each region's program (members in topological order, which is
 *    an evaluation order) and its external inputs.
 * 4. Rebuild the DAG in topological order: variables and untouched nodes
 *    are shared; a region's root becomes one _fused_elemwise node; nodes
 *    downstream of a replaced one are re-created with the new inputs
 *    (nodes are immutable). */
#include "core/fuse/fuse.h"

#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/error.h"
#include "core/graph/graph.h"
#include "core/base/strbuf.h"
#include "core/op/fusion.h"

typedef struct region {
  int root;       /* node id */
  int n_members;  /* node ids in members[first .. first + n_members) */
  int first;
  int n_ext;      /* distinct external input entries */
  int *ext;       /* entry ids, in order of first use (owned) */
  char *program;  /* owned */
} region;

typedef struct fuse_state {
  const mxc__graph *g;
  int *region_of; /* per node: root node id, or -1 */
  int *members;   /* node ids grouped by region, topological within each */
  region *regions;
  int n_regions;
  mxc__node **newnode; /* per node id: the node in the new DAG (owned) */
  int dev_type;        /* the device the fused nodes will run on */
} fuse_state;

static int oom(void) {
  return mxc__error_set(MXC_ERR_OOM, "element-wise fusion: out of memory");
}

/* The node's parameters as a program's instruction writes them. */
static void put_attrs(mxc__sbuf *b, const mxc__node *n) {
  for (int i = 0; i < n->n_attrs; ++i) {
    if (strncmp(n->keys[i], "__", 2)) {
      mxc__sbuf_printf(b, ",%s=%s", n->keys[i], n->vals[i]);
    }
  }
}

/* Off the CPU, 1 when the device's fused kernel takes the node as a
 * program of its own (the CUDA plug-in's generator has code for some
 * operators and parameter forms only): a node it lacks stays out of
 * regions, and the rest of its chain still fuses around it. */
static int node_on_device(const fuse_state *s, const mxc__node *n) {
  if (s->dev_type == MXC_DEVICE_CPU) return 1;
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  mxc__sbuf_printf(&b, "%s(", n->op->name);
  for (int k = 0; k < n->n_inputs; ++k) {
    mxc__sbuf_printf(&b, "%si%d", k ? "," : "", k);
  }
  put_attrs(&b, n);
  mxc__sbuf_add(&b, ")");
  char *text = NULL;
  int ok = mxc__sbuf_finish(&b, "element-wise fusion", &text) == MXC_OK &&
           mxc__fused_program_on(s->dev_type, text, n->n_inputs);
  if (!text) mxc__error_clear();
  mxc__free(text);
  return ok;
}

/* A node that may join a region: a fusible operator whose parameter
 * strings can be written into a program, which the device's fused kernel
 * takes. */
static int node_fusible(const fuse_state *s, const mxc__node *n) {
  if (!n->op || !mxc__op_fusible(n->op)) return 0;
  for (int i = 0; i < n->n_attrs; ++i) {
    if (!strncmp(n->keys[i], "__", 2)) continue;
    if (!mxc__fused_value_ok(n->keys[i]) ||
        !mxc__fused_value_ok(n->vals[i])) {
      return 0;
    }
  }
  return node_on_device(s, n);
}

/* Step 2 for one root: absorbs producers depth-first. stack has room for
 * every node. Returns the number of members. */
static int grow(fuse_state *s, const int *fusible, int root, int *stack) {
  const mxc__graph *g = s->g;
  int top = 0, count = 1;
  int ext = g->nodes[root]->n_inputs; /* upper bound on external inputs */
  stack[top++] = root;
  s->region_of[root] = root;
  while (top > 0) {
    int v = stack[--top];
    for (int k = g->in_ptr[v]; k < g->in_ptr[v + 1]; ++k) {
      int e = g->in_entries[k];
      int p = mxc__graph_entry_node(g, e);
      int more = g->nodes[p]->n_inputs - 1;
      if (!fusible[p] || s->region_of[p] >= 0 || g->n_consumers[e] != 1 ||
          count == MXC__FUSED_MAX_INSTR ||
          ext + more > MXC__FUSED_MAX_INPUTS) {
        continue;
      }
      s->region_of[p] = root;
      ++count;
      ext += more;
      stack[top++] = p;
    }
  }
  return count;
}

/* Step 3 for region r: the program text and external inputs. Returns
 * MXC_OK with r->program NULL when the text would be too long (the region
 * is then left unfused). */
static int write_program(fuse_state *s, region *r, int *instr_of) {
  const mxc__graph *g = s->g;
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  r->ext = mxc__malloc(sizeof(int) * (size_t)(3 * r->n_members + 1));
  if (!r->ext) return oom();
  r->n_ext = 0;
  for (int m = 0; m < r->n_members; ++m) {
    int v = s->members[r->first + m];
    const mxc__node *n = g->nodes[v];
    instr_of[v] = m;
    mxc__sbuf_printf(&b, "%s%s(", m ? ";" : "", n->op->name);
    for (int k = g->in_ptr[v]; k < g->in_ptr[v + 1]; ++k) {
      int e = g->in_entries[k];
      int p = mxc__graph_entry_node(g, e);
      const char *sep = k > g->in_ptr[v] ? "," : "";
      if (s->region_of[p] == r->root) {
        mxc__sbuf_printf(&b, "%sr%d", sep, instr_of[p]);
        continue;
      }
      int x = 0;
      while (x < r->n_ext && r->ext[x] != e) ++x;
      if (x == r->n_ext) r->ext[r->n_ext++] = e;
      mxc__sbuf_printf(&b, "%si%d", sep, x);
    }
    put_attrs(&b, n);
    mxc__sbuf_add(&b, ")");
  }
  if (b.len >= MXC__PARAM_STR_MAX) {
    mxc__sbuf_free(&b);
    return MXC_OK;
  }
  return mxc__sbuf_finish(&b, "element-wise fusion", &r->program);
}

/* Steps 2 and 3: fills s->regions. */
static int find_regions(fuse_state *s) {
  const mxc__graph *g = s->g;
  int n = g->n_nodes, rc = MXC_OK;
  int *fusible = mxc__calloc((size_t)n, sizeof(int));
  int *stack = mxc__malloc(sizeof(int) * (size_t)n);
  int *count = mxc__calloc((size_t)n, sizeof(int));
  if (!fusible || !stack || !count) rc = oom();
  for (int i = 0; rc == MXC_OK && i < n; ++i) {
    fusible[i] = node_fusible(s, g->nodes[i]);
  }
  int n_members = 0;
  for (int i = n - 1; rc == MXC_OK && i >= 0; --i) {
    if (!fusible[i] || s->region_of[i] >= 0) continue;
    count[i] = grow(s, fusible, i, stack);
    if (count[i] == 1) {
      s->region_of[i] = -1;
      count[i] = 0;
      continue;
    }
    s->regions[s->n_regions].root = i;
    s->regions[s->n_regions].n_members = 0;
    s->regions[s->n_regions].first = n_members;
    n_members += count[i];
    count[i] = s->n_regions++; /* now: the region's index */
  }
  /* Members in topological order: scanning ids in increasing order. */
  for (int i = 0; rc == MXC_OK && i < n; ++i) {
    if (s->region_of[i] < 0) continue;
    region *r = &s->regions[count[s->region_of[i]]];
    s->members[r->first + r->n_members++] = i;
  }
  for (int i = 0; rc == MXC_OK && i < s->n_regions; ++i) {
    region *r = &s->regions[i];
    rc = write_program(s, r, stack); /* stack reused as instr_of */
    /* The device's kernel judges the whole program too (its limits). */
    if (rc == MXC_OK && r->program &&
        !mxc__fused_program_on(s->dev_type, r->program, r->n_ext)) {
      mxc__free(r->program);
      r->program = NULL;
    }
    if (rc == MXC_OK && !r->program) { /* too long: leave it alone */
      for (int m = 0; m < r->n_members; ++m) {
        s->region_of[s->members[r->first + m]] = -1;
      }
    }
  }
  mxc__free(fusible);
  mxc__free(stack);
  mxc__free(count);
  return rc;
}

/* The entry of the new DAG for entry id e of the old one (borrowed). */
static mxc__entry mapped(const fuse_state *s, int e) {
  int p = mxc__graph_entry_node(s->g, e);
  mxc__entry out = {s->newnode[p], e - s->g->entry_ptr[p]};
  return out;
}

/* The fused node of region r. */
static int make_fused(fuse_state *s, const region *r, mxc__node **out) {
  const mxc__graph *g = s->g;
  mxc__entry *ins = mxc__malloc(sizeof *ins * (size_t)r->n_ext);
  char *name = NULL, *names = NULL;
  mxc__sbuf b;
  mxc__sbuf_init(&b);
  int rc = ins ? MXC_OK : oom();
  for (int x = 0; rc == MXC_OK && x < r->n_ext; ++x) {
    ins[x] = mapped(s, r->ext[x]);
  }
  for (int m = 0; m < r->n_members; ++m) {
    mxc__sbuf_printf(&b, "%s%s", m ? "," : "",
                     g->nodes[s->members[r->first + m]]->name);
  }
  if (rc == MXC_OK) rc = mxc__sbuf_finish(&b, "element-wise fusion", &names);
  mxc__sbuf_printf(&b, "fused_%s_%s", g->nodes[s->members[r->first]]->name,
                   g->nodes[r->root]->name);
  if (rc == MXC_OK) rc = mxc__sbuf_finish(&b, "element-wise fusion", &name);
  mxc__sbuf_free(&b);
  char num[16];
  snprintf(num, sizeof num, "%d", r->n_ext);
  const char *keys[2] = {"num_inputs", "program"};
  const char *vals[2] = {num, r->program};
  mxc__node *f = NULL;
  if (rc == MXC_OK) {
    rc = mxc__node_op(MXC__FUSED_OP_NAME, keys, vals, 2, ins, r->n_ext, name,
                      &f);
  }
  if (rc == MXC_OK) rc = mxc__node_set_uattr(f, MXC__FUSE_ATTR_NODES, names);
  if (rc == MXC_OK) {
    *out = f;
  } else {
    mxc__node_release(f);
  }
  mxc__free(ins);
  mxc__free(name);
  mxc__free(names);
  return rc;
}

/* Node i outside regions: itself when its inputs are unchanged, else a
 * copy (same operator, parameter strings, name and attributes) reading
 * the new inputs. */
static int remake(fuse_state *s, int i, mxc__node **out) {
  const mxc__graph *g = s->g;
  mxc__node *n = g->nodes[i];
  int same = 1;
  for (int k = 0; k < n->n_inputs; ++k) {
    mxc__entry e = mapped(s, g->in_entries[g->in_ptr[i] + k]);
    same &= e.node == n->inputs[k].node;
  }
  if (same) {
    mxc__node_retain(n);
    *out = n;
    return MXC_OK;
  }
  mxc__entry *ins = mxc__malloc(sizeof *ins * (size_t)n->n_inputs);
  if (!ins) return oom();
  for (int k = 0; k < n->n_inputs; ++k) {
    ins[k] = mapped(s, g->in_entries[g->in_ptr[i] + k]);
  }
  mxc__node *c = NULL;
  int rc = mxc__node_op(n->op->name, (const char *const *)n->keys,
                        (const char *const *)n->vals, n->n_attrs, ins,
                        n->n_inputs, n->name, &c);
  for (int a = 0; rc == MXC_OK && a < n->n_uattrs; ++a) {
    rc = mxc__node_set_uattr(c, n->ukeys[a], n->uvals[a]);
  }
  mxc__free(ins);
  if (rc != MXC_OK) {
    mxc__node_release(c);
    return rc;
  }
  *out = c;
  return MXC_OK;
}

/* Step 4. Regions were found from the last node backwards, so their
 * roots decrease with the region index. */
static int rebuild(fuse_state *s) {
  const mxc__graph *g = s->g;
  int k = s->n_regions - 1;
  for (int i = 0; i < g->n_nodes; ++i) {
    int root = s->region_of[i];
    if (root >= 0 && root != i) continue; /* inside a region */
    if (root == i) {
      while (s->regions[k].root != i) --k;
      MXC_FORWARD_IF_ERROR(make_fused(s, &s->regions[k], &s->newnode[i]));
    } else if (!g->nodes[i]->op) {
      mxc__node_retain(g->nodes[i]);
      s->newnode[i] = g->nodes[i];
    } else {
      MXC_FORWARD_IF_ERROR(remake(s, i, &s->newnode[i]));
    }
  }
  return MXC_OK;
}

static void state_free(fuse_state *s) {
  for (int i = 0; s->newnode && i < s->g->n_nodes; ++i) {
    mxc__node_release(s->newnode[i]);
  }
  for (int i = 0; s->regions && i < s->n_regions; ++i) {
    mxc__free(s->regions[i].ext);
    mxc__free(s->regions[i].program);
  }
  mxc__free(s->newnode);
  mxc__free(s->regions);
  mxc__free(s->members);
  mxc__free(s->region_of);
}

int mxc__fuse_graph(const mxc__entry *heads, int n_heads,
                    mxc__entry *out_heads, int *out_n_fused) {
  return mxc__fuse_graph_for(heads, n_heads, MXC_DEVICE_CPU, out_heads,
                             out_n_fused);
}

int mxc__fuse_graph_for(const mxc__entry *heads, int n_heads, int dev_type,
                        mxc__entry *out_heads, int *out_n_fused) {
  mxc__graph *g = NULL;
  MXC_FORWARD_IF_ERROR(mxc__graph_build(heads, n_heads, &g));
  fuse_state s;
  memset(&s, 0, sizeof s);
  s.g = g;
  s.dev_type = dev_type;
  size_t n = (size_t)(g->n_nodes > 0 ? g->n_nodes : 1);
  s.region_of = mxc__malloc(sizeof(int) * n);
  s.members = mxc__malloc(sizeof(int) * n);
  s.regions = mxc__calloc(n, sizeof(region));
  s.newnode = mxc__calloc(n, sizeof(mxc__node *));
  int rc = s.region_of && s.members && s.regions && s.newnode ? MXC_OK : oom();
  for (int i = 0; rc == MXC_OK && i < g->n_nodes; ++i) s.region_of[i] = -1;
  if (rc == MXC_OK) rc = find_regions(&s);
  if (rc == MXC_OK) rc = rebuild(&s);
  if (rc == MXC_OK) {
    int n_fused = 0;
    for (int i = 0; i < s.n_regions; ++i) n_fused += !!s.regions[i].program;
    for (int h = 0; h < n_heads; ++h) {
      mxc__entry e = mapped(&s, g->heads[h]);
      out_heads[h] = mxc__entry_ref(e.node, e.index);
    }
    if (out_n_fused) *out_n_fused = n_fused;
  }
  state_free(&s);
  mxc__graph_free(g);
  return rc;
}
