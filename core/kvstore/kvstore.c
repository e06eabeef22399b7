/* The store: its key table, init and the type's facts (see kvstore.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/base/alloc.h"
#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/kvstore/internal.h"

void mxc__kv_key_str(const mxc__kv_key *k, char *buf, size_t len) {
  if (k->str) {
    snprintf(buf, len, "key '%s'", k->str);
  } else {
    snprintf(buf, len, "key %" PRId64, k->num);
  }
}

static int key_equal(const mxc__kv_key *a, const mxc__kv_key *b) {
  if (!a->str || !b->str) return !a->str && !b->str && a->num == b->num;
  return strcmp(a->str, b->str) == 0;
}

mxc__kv_entry *mxc__kv_find(const mxc__kvstore *kv, const mxc__kv_key *k) {
  for (int i = 0; i < kv->n_entries; ++i) {
    if (key_equal(&kv->entries[i]->key, k)) return kv->entries[i];
  }
  return NULL;
}

int mxc__kvstore_create(const char *type, mxc__kvstore **out) {
  MXC_RETURN_ERROR_IF(!type, MXC_ERR_INVALID_ARGUMENT,
                      "type is NULL; expected \"local\" or \"dist_sync\"");
  int dist = strcmp(type, "dist_sync") == 0;
  MXC_RETURN_ERROR_IF(!dist && strcmp(type, "local") != 0,
                      MXC_ERR_INVALID_ARGUMENT,
                      "type \"%s\"; expected \"local\" or \"dist_sync\"",
                      type);
  int rank = 0, size = 1;
  if (dist) MXC_FORWARD_IF_ERROR(mxc__kv_dist_open(&rank, &size));
  mxc__kvstore *kv = mxc__calloc(1, sizeof *kv);
  if (!kv && dist) mxc__kv_dist_close();
  MXC_RETURN_ERROR_IF(!kv, MXC_ERR_OOM, "out of memory for a kvstore");
  atomic_init(&kv->refs, 1);
  kv->type = dist ? "dist_sync" : "local";
  kv->dist = dist;
  kv->rank = rank;
  kv->size = size;
  pthread_mutex_init(&kv->lock, NULL);
  *out = kv;
  return MXC_OK;
}

static void entry_free(mxc__kv_entry *e) {
  if (!e) return;
  mxc__kv_free_states(e);
  mxc__ndarray_free(e->stored);
  mxc__ndarray_free(e->merge);
  mxc__free((char *)e->key.str);
  mxc__free(e);
}

void mxc__kvstore_retain(mxc__kvstore *kv) { atomic_fetch_add(&kv->refs, 1); }

void mxc__kvstore_free(mxc__kvstore *kv) {
  if (!kv || atomic_fetch_sub(&kv->refs, 1) != 1) return;
  mxc__kv_clear_updater(kv);
  for (int i = 0; i < kv->n_entries; ++i) entry_free(kv->entries[i]);
  mxc__free(kv->entries);
  pthread_mutex_destroy(&kv->lock);
  if (kv->dist) mxc__kv_dist_close();
  mxc__free(kv);
}

const char *mxc__kvstore_type(const mxc__kvstore *kv) { return kv->type; }
int mxc__kvstore_rank(const mxc__kvstore *kv) { return kv->rank; }
int mxc__kvstore_num_workers(const mxc__kvstore *kv) { return kv->size; }

int mxc__kvstore_has_updater(mxc__kvstore *kv) {
  pthread_mutex_lock(&kv->lock);
  int has = kv->opt || kv->updater;
  pthread_mutex_unlock(&kv->lock);
  return has;
}

int mxc__kvstore_barrier(mxc__kvstore *kv) {
  return kv->dist ? mxc__kv_dist_barrier() : MXC_OK;
}

/* ---- init ---- */

static int check_value(const mxc__ndarray *v, const char *what) {
  MXC_RETURN_ERROR_IF(!v, MXC_ERR_INVALID_ARGUMENT, "%s: array is NULL",
                      what);
  MXC_RETURN_ERROR_IF(v->stype != MXC_STYPE_DEFAULT, MXC_ERR_STYPE,
                      "%s: the array is sparse (storage type %d); a kvstore "
                      "holds dense arrays",
                      what, v->stype);
  MXC_RETURN_ERROR_IF(v->chunk->dev.type != MXC_DEVICE_CPU &&
                          v->chunk->dev.type != MXC_DEVICE_GPU,
                      MXC_ERR_UNSUPPORTED,
                      "%s: the array is on device type %d; a kvstore holds "
                      "CPU and GPU arrays",
                      what, v->chunk->dev.type);
  return mxc__kv_check_dtype(v->dtype, what);
}

/* Pushes the stored array's first value: v, or rank 0's v in a job. */
static int first_value(const mxc__kvstore *kv, mxc__kv_entry *e,
                       const mxc__ndarray *v, const char *what) {
  if (!kv->dist) return mxc__kv_push_copy(v, e->stored, 0, what);
  mxc__ndarray *const vals[1] = {(mxc__ndarray *)v};
  mxc__kv_group gr = {.e = e, .vals = vals, .n = 1, .dst = e->stored};
  return mxc__kv_dist_broadcast(&gr);
}

/* A new entry holding a copy of v (pushed). */
static int entry_new(const mxc__kvstore *kv, const mxc__kv_key *k,
                     const mxc__ndarray *v, const char *what,
                     mxc__kv_entry **out) {
  mxc__kv_entry *e = mxc__calloc(1, sizeof *e);
  MXC_RETURN_ERROR_IF(!e, MXC_ERR_OOM, "%s: out of memory", what);
  e->key.num = k->num;
  int rc = MXC_OK;
  if (k->str && !(e->key.str = mxc__strdup(k->str))) {
    rc = mxc__error_set(MXC_ERR_OOM, "%s: out of memory", what);
  }
  /* In host memory whatever v's device (stage.c). */
  mxc__device cpu = {MXC_DEVICE_CPU, 0};
  if (rc == MXC_OK) {
    rc = mxc__ndarray_create(&v->shape, v->dtype, cpu, 0, &e->stored);
  }
  if (rc == MXC_OK) {
    rc = mxc__ndarray_create(&v->shape, v->dtype, cpu, 1, &e->merge);
  }
  if (rc == MXC_OK) rc = first_value(kv, e, v, what);
  if (rc != MXC_OK) {
    entry_free(e);
    return rc;
  }
  *out = e;
  return MXC_OK;
}

static int reserve_entries(mxc__kvstore *kv, int more) {
  if (kv->n_entries + more <= kv->cap_entries) return MXC_OK;
  int cap = kv->cap_entries ? kv->cap_entries : 16;
  while (cap < kv->n_entries + more) cap *= 2;
  mxc__kv_entry **p = mxc__realloc(kv->entries, (size_t)cap * sizeof *p);
  MXC_RETURN_ERROR_IF(!p, MXC_ERR_OOM, "out of memory for %d keys", cap);
  kv->entries = p;
  kv->cap_entries = cap;
  return MXC_OK;
}

static mxc__kv_key key_at(mxc__kv_keys keys, int i) {
  mxc__kv_key k = {keys.strs ? keys.strs[i] : NULL,
                   keys.ints ? keys.ints[i] : 0};
  return k;
}

/* Checks argument i of a call: its key and, when vals is not NULL, its
 * value; what = "key ..." for messages. */
static int check_arg(mxc__kv_keys keys, mxc__ndarray *const *vals, int i,
                     char *what, size_t len) {
  mxc__kv_key k = key_at(keys, i);
  MXC_RETURN_ERROR_IF(keys.strs && !k.str, MXC_ERR_INVALID_ARGUMENT,
                      "keys[%d] is NULL", i);
  mxc__kv_key_str(&k, what, len);
  return vals ? check_value(vals[i], what) : MXC_OK;
}

/* Every key new and distinct, every value storable: checked before any
 * entry is made, so that a failing init adds nothing. */
static int check_init(const mxc__kvstore *kv, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *vals) {
  char what[160];
  for (int i = 0; i < n; ++i) {
    MXC_FORWARD_IF_ERROR(check_arg(keys, vals, i, what, sizeof what));
    mxc__kv_key k = key_at(keys, i);
    MXC_RETURN_ERROR_IF(mxc__kv_find(kv, &k), MXC_ERR_INVALID_ARGUMENT,
                        "%s is already initialised", what);
    for (int j = 0; j < i; ++j) {
      mxc__kv_key o = key_at(keys, j);
      MXC_RETURN_ERROR_IF(key_equal(&k, &o), MXC_ERR_INVALID_ARGUMENT,
                          "%s is given twice (arguments %d and %d)", what, j,
                          i);
    }
  }
  return MXC_OK;
}

static int add_entry(mxc__kvstore *kv, mxc__kv_keys keys,
                     mxc__ndarray *const *vals, int i) {
  char what[160];
  mxc__kv_key k = key_at(keys, i);
  mxc__kv_key_str(&k, what, sizeof what);
  mxc__kv_entry *e = NULL;
  MXC_FORWARD_IF_ERROR(entry_new(kv, &k, vals[i], what, &e));
  int rc = kv->opt ? mxc__kv_make_states(kv, e) : MXC_OK;
  if (rc != MXC_OK) {
    entry_free(e);
    return rc;
  }
  kv->entries[kv->n_entries++] = e;
  return MXC_OK;
}

static int init_staged(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                       mxc__ndarray *const *vals) {
  pthread_mutex_lock(&kv->lock);
  int rc = check_init(kv, n, keys, vals);
  if (rc == MXC_OK) rc = reserve_entries(kv, n);
  /* Every rank takes part, failed here or not, so that all return alike
   * (agree.c). */
  if (kv->dist) rc = mxc__kv_dist_agree_init(kv, n, keys, vals, rc);
  /* After an allocation failure part way, the keys before it stay (each
   * is whole); the caller sees the error naming the key that failed. */
  for (int i = 0; i < n && rc == MXC_OK; ++i) rc = add_entry(kv, keys, vals, i);
  pthread_mutex_unlock(&kv->lock);
  return rc;
}

/* GPU values go through host copies (stage.c), here and in push. */
int mxc__kvstore_init(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *vals) {
  mxc__kv_staged s;
  MXC_FORWARD_IF_ERROR(mxc__kv_stage(n, vals, &s));
  int rc = init_staged(kv, n, keys, s.vals);
  mxc__kv_staged_free(&s);
  return rc;
}

/* ---- push and pull ---- */

/* *out[i] = the entry of key i, checking vals[i] (if vals) against it. */
static int resolve(const mxc__kvstore *kv, int n, mxc__kv_keys keys,
                   mxc__ndarray *const *vals, const char *verb,
                   mxc__kv_entry **out) {
  char what[160], b1[128], b2[128];
  for (int i = 0; i < n; ++i) {
    MXC_FORWARD_IF_ERROR(check_arg(keys, vals, i, what, sizeof what));
    mxc__kv_key k = key_at(keys, i);
    mxc__kv_entry *e = mxc__kv_find(kv, &k);
    MXC_RETURN_ERROR_IF(!e, MXC_ERR_NOT_FOUND,
                        "%s of %s, which was never initialised (init it "
                        "first)", verb, what);
    const mxc__ndarray *v = vals[i], *s = e->stored;
    MXC_RETURN_ERROR_IF(
        !mxc__shape_equal(&v->shape, &s->shape) || v->dtype != s->dtype,
        v->dtype != s->dtype ? MXC_ERR_DTYPE : MXC_ERR_SHAPE,
        "%s of %s: the array is %s of %s; the key holds %s of %s", verb,
        what, mxc__shape_str(&v->shape, b1, sizeof b1),
        mxc__dtype_name(v->dtype), mxc__shape_str(&s->shape, b2, sizeof b2),
        mxc__dtype_name(s->dtype));
    out[i] = e;
  }
  return MXC_OK;
}

static int check_call(const char *verb, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *arrays) {
  MXC_RETURN_ERROR_IF(n < 0 || (n > 0 && (!arrays || (!keys.ints ==
                                                      !keys.strs))),
                      MXC_ERR_INVALID_ARGUMENT,
                      "%s: n is %d with arrays %s, int keys %s and string "
                      "keys %s; expected n >= 0, the arrays and exactly one "
                      "kind of keys",
                      verb, n, arrays ? "set" : "NULL",
                      keys.ints ? "set" : "NULL", keys.strs ? "set" : "NULL");
  return MXC_OK;
}

/* The values of entries[i]'s key among vals[i..n), in order, into
 * group; marks them done. */
static int gather(mxc__kv_entry **entries, mxc__ndarray *const *vals, int n,
                  int i, char *done, mxc__ndarray **group) {
  int g = 0;
  for (int j = i; j < n; ++j) {
    if (!done[j] && entries[j] == entries[i]) {
      group[g++] = vals[j];
      done[j] = 1;
    }
  }
  return g;
}

/* Scratch of one push: entries, values grouped by key, done flags. */
typedef struct push_scratch {
  mxc__kv_entry **entries;
  mxc__ndarray **grouped;
  mxc__kv_group *groups;
  char *done;
} push_scratch;

static int scratch_new(int n, push_scratch *s) {
  size_t m = n ? (size_t)n : 1;
  s->entries = mxc__calloc(m, sizeof *s->entries);
  s->grouped = mxc__calloc(m, sizeof *s->grouped);
  s->groups = mxc__calloc(m, sizeof *s->groups);
  s->done = mxc__calloc(m, 1);
  if (s->entries && s->grouped && s->groups && s->done) return MXC_OK;
  mxc__free(s->entries);
  mxc__free(s->grouped);
  mxc__free(s->groups);
  mxc__free(s->done);
  return mxc__error_set(MXC_ERR_OOM, "push: out of memory for %d keys", n);
}

static void scratch_free(push_scratch *s) {
  mxc__free(s->entries);
  mxc__free(s->grouped);
  mxc__free(s->groups);
  mxc__free(s->done);
}

/* s->groups = the keys of the call in first-appearance order, each with
 * its values in list order and its destination: the stored array, or
 * the merge buffer when an updater takes the sum. Returns the count. */
static int make_groups(const mxc__kvstore *kv, int n,
                       mxc__ndarray *const *vals, push_scratch *s,
                       int nccl) {
  int ng = 0, used = 0, updates = kv->opt || kv->updater;
  for (int i = 0; i < n; ++i) {
    if (s->done[i]) continue;
    mxc__kv_entry *e = s->entries[i];
    int g = gather(s->entries, vals, n, i, s->done, s->grouped + used);
    s->groups[ng++] = (mxc__kv_group){.e = e, .vals = s->grouped + used,
                                      .n = g,
                                      .dst = updates ? e->merge : e->stored,
                                      .nccl = nccl};
    used += g;
  }
  return ng;
}

static int push_sums(const mxc__kvstore *kv, const mxc__kv_group *gs, int ng,
                     int priority) {
  if (kv->dist) return mxc__kv_dist_push(gs, ng, priority);
  for (int i = 0; i < ng; ++i) {
    char what[160];
    mxc__kv_key_str(&gs[i].e->key, what, sizeof what);
    MXC_FORWARD_IF_ERROR(
        mxc__kv_push_sum(gs[i].vals, gs[i].n, gs[i].dst, priority, what));
  }
  return MXC_OK;
}

static int run_optimizer(const mxc__kvstore *kv, const mxc__kv_group *gs,
                         int ng) {
  for (int i = 0; i < ng; ++i) {
    int rc = mxc__kv_apply_optimizer(kv, gs[i].e);
    if (rc != MXC_OK) {
      char what[160];
      mxc__kv_key_str(&gs[i].e->key, what, sizeof what);
      mxc__error_prefix(what);
      return rc;
    }
  }
  return MXC_OK;
}

/* Pushes every key's sum, then the optimizer's updates; *n_groups = the
 * keys the callback (if any) must see afterwards. */
static int push_all(mxc__kvstore *kv, int n, mxc__ndarray *const *vals,
                    int priority, push_scratch *s, int *n_groups, int nccl) {
  int ng = make_groups(kv, n, vals, s, nccl);
  MXC_FORWARD_IF_ERROR(push_sums(kv, s->groups, ng, priority));
  if (kv->opt) MXC_FORWARD_IF_ERROR(run_optimizer(kv, s->groups, ng));
  *n_groups = kv->updater ? ng : 0;
  return MXC_OK;
}

/* The callback, outside the lock (it may call the store): entries live
 * as long as the store. */
static int run_updater(mxc__kv_updater_fn fn, void *ud,
                       const mxc__kv_group *gs, int n) {
  for (int i = 0; i < n; ++i) {
    mxc__kv_entry *e = gs[i].e;
    /* Cleared, so that a message is the callback's own. */
    mxc__error_clear();
    int rc = fn(ud, &e->key, e->merge, e->stored);
    if (rc != MXC_OK) {
      char what[160];
      mxc__kv_key_str(&e->key, what, sizeof what);
      if (mxc__error_code() != rc) {
        mxc__error_set(rc, "the updater returned %d", rc);
      }
      mxc__error_prefix(what);
      return rc;
    }
  }
  return MXC_OK;
}

static int push_staged(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                       mxc__ndarray *const *vals, int priority, int nccl) {
  push_scratch s;
  MXC_FORWARD_IF_ERROR(scratch_new(n, &s));
  int n_updates = 0;
  pthread_mutex_lock(&kv->lock);
  mxc__kv_updater_fn fn = kv->updater;
  void *ud = kv->updater_ud;
  int rc = resolve(kv, n, keys, vals, "push", s.entries);
  if (rc == MXC_OK) {
    rc = push_all(kv, n, vals, priority, &s, &n_updates, nccl);
  }
  pthread_mutex_unlock(&kv->lock);
  if (rc == MXC_OK && n_updates) rc = run_updater(fn, ud, s.groups, n_updates);
  scratch_free(&s);
  return rc;
}

int mxc__kvstore_push(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *vals, int priority) {
  MXC_FORWARD_IF_ERROR(check_call("push", n, keys, vals));
  int nccl = 0; /* GPU values summed on their GPU (nccl.c) */
  MXC_FORWARD_IF_ERROR(mxc__kv_nccl_route(kv, n, keys, vals, &nccl));
  mxc__kv_staged st = {.vals = (mxc__ndarray **)vals};
  if (!nccl) MXC_FORWARD_IF_ERROR(mxc__kv_stage(n, vals, &st));
  int rc = push_staged(kv, n, keys, st.vals, priority, nccl);
  mxc__kv_staged_free(&st);
  return rc;
}

/* Copies each stored array into outs[j] whose entry is o->entries[j],
 * but those marked done. */
static int pull_rest(push_scratch *o, int n, mxc__ndarray *const *outs,
                     int priority) {
  for (int j = 0; j < n; ++j) {
    if (o->done[j]) continue;
    char what[160];
    mxc__kv_key_str(&o->entries[j]->key, what, sizeof what);
    MXC_FORWARD_IF_ERROR(
        mxc__kv_copy_out(o->entries[j]->stored, outs[j], priority, what));
  }
  return MXC_OK;
}

int mxc__kvstore_pull(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *outs, int priority) {
  MXC_FORWARD_IF_ERROR(check_call("pull", n, keys, outs));
  push_scratch s;
  MXC_FORWARD_IF_ERROR(scratch_new(n, &s));
  pthread_mutex_lock(&kv->lock);
  int rc = resolve(kv, n, keys, outs, "pull", s.entries);
  if (rc == MXC_OK) rc = pull_rest(&s, n, outs, priority);
  pthread_mutex_unlock(&kv->lock);
  scratch_free(&s);
  return rc;
}

/* The pull half of a pushpull, checked before the push happens. */
static int check_pull(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                      mxc__ndarray *const *outs) {
  MXC_FORWARD_IF_ERROR(check_call("pushpull", n, keys, outs));
  push_scratch s;
  MXC_FORWARD_IF_ERROR(scratch_new(n, &s));
  pthread_mutex_lock(&kv->lock);
  int rc = resolve(kv, n, keys, outs, "pull", s.entries);
  pthread_mutex_unlock(&kv->lock);
  scratch_free(&s);
  return rc;
}

/* A dist_sync pushpull without an updater: the collective of a key that
 * has one output in the call writes the sum into that output too (in
 * cache, as it finishes each piece), in place of a pull copying the whole
 * stored array afterwards; keys with several outputs, and outputs the
 * collective cannot write (a GPU array for the MPI ring, which writes
 * host memory; anything but the communicator's GPU for NCCL), are pulled.
 * The stored array still gets the sum, as for any push. */
/* Quadratic in the call's keys: a model's few hundred parameters cost
 * well under a millisecond, next to a collective's round trip. */
static int direct_fits(const mxc__kv_group *gr, const mxc__ndarray *out) {
  return gr->nccl ? mxc__kv_nccl_direct_ok(out) : !mxc__kv_on_gpu(out);
}

static void mark_direct(push_scratch *s, push_scratch *o, int n, int ng,
                        mxc__ndarray *const *outs) {
  for (int j = 0; j < n; ++j) {
    int count = 0;
    for (int i = 0; i < n; ++i) count += o->entries[i] == o->entries[j];
    for (int g = 0; g < ng && count == 1; ++g) {
      if (s->groups[g].e == o->entries[j] &&
          direct_fits(&s->groups[g], outs[j])) {
        s->groups[g].also = outs[j];
        o->done[j] = 1;
      }
    }
  }
}

static int pushpull_direct(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                           mxc__ndarray *const *vals,
                           mxc__ndarray *const *outs, int priority,
                           push_scratch *s, push_scratch *o, int nccl) {
  MXC_FORWARD_IF_ERROR(resolve(kv, n, keys, vals, "push", s->entries));
  MXC_FORWARD_IF_ERROR(resolve(kv, n, keys, outs, "pull", o->entries));
  int ng = make_groups(kv, n, vals, s, nccl);
  mark_direct(s, o, n, ng, outs);
  MXC_FORWARD_IF_ERROR(mxc__kv_dist_push(s->groups, ng, priority));
  return pull_rest(o, n, outs, priority);
}

static int pushpull_dist(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                         mxc__ndarray *const *vals,
                         mxc__ndarray *const *outs, int priority, int nccl) {
  push_scratch s, o;
  MXC_FORWARD_IF_ERROR(scratch_new(n, &s));
  int rc = scratch_new(n, &o);
  if (rc != MXC_OK) {
    scratch_free(&s);
    return rc;
  }
  rc = pushpull_direct(kv, n, keys, vals, outs, priority, &s, &o, nccl);
  scratch_free(&s);
  scratch_free(&o);
  return rc;
}

static int pushpull_staged(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                           mxc__ndarray *const *vals,
                           mxc__ndarray *const *outs, int priority,
                           int nccl) {
  pthread_mutex_lock(&kv->lock);
  int direct = kv->dist && !kv->opt && !kv->updater;
  /* resolves the outputs itself before pushing: no check_pull */
  int rc = direct ? pushpull_dist(kv, n, keys, vals, outs, priority, nccl)
                  : MXC_OK;
  pthread_mutex_unlock(&kv->lock);
  if (direct) return rc;
  MXC_FORWARD_IF_ERROR(check_pull(kv, n, keys, outs));
  MXC_FORWARD_IF_ERROR(mxc__kvstore_push(kv, n, keys, vals, priority));
  return mxc__kvstore_pull(kv, n, keys, outs, priority);
}

int mxc__kvstore_pushpull(mxc__kvstore *kv, int n, mxc__kv_keys keys,
                          mxc__ndarray *const *vals,
                          mxc__ndarray *const *outs, int priority) {
  MXC_FORWARD_IF_ERROR(check_call("pushpull", n, keys, vals));
  MXC_FORWARD_IF_ERROR(check_call("pushpull", n, keys, outs));
  int nccl = 0; /* GPU values summed on their GPU (nccl.c) */
  MXC_FORWARD_IF_ERROR(mxc__kv_nccl_route(kv, n, keys, vals, &nccl));
  /* else GPU values: host copies (stage.c) */
  mxc__kv_staged st = {.vals = (mxc__ndarray **)vals};
  if (!nccl) MXC_FORWARD_IF_ERROR(mxc__kv_stage(n, vals, &st));
  int rc = pushpull_staged(kv, n, keys, st.vals, outs, priority, nccl);
  mxc__kv_staged_free(&st);
  return rc;
}
