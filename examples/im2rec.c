/* mxc-im2rec: packs images into a RecordIO file, in the spirit of MXNet's
 * im2rec, through mxc's public API (and TurboJPEG to re-encode).
 *
 *   mxc-im2rec --list [--shuffle] [--seed S] PREFIX ROOT
 *       writes PREFIX.lst from ROOT's class subfolders: the sorted folder
 *       names are labels 0, 1, ...; their images (.jpg .jpeg .png) sorted
 *       by name, or shuffled with --shuffle.
 *   mxc-im2rec [--resize N] [--quality Q] [--color 1|0] PREFIX ROOT
 *       packs the images PREFIX.lst names (MXNet's format: "index<TAB>
 *       label[<TAB>label...]<TAB>path relative to ROOT" per line) into
 *       PREFIX.rec and PREFIX.idx (key = index). Images are checked by
 *       decoding them; they are stored as they are (MXNet's pass-through),
 *       or with --resize N re-encoded as JPEG (quality Q, default 95)
 *       with the shorter side N (--color 0: gray).
 *
 * An unreadable image is reported with its path and skipped; the exit
 * status is then 2 (1 for other errors, 0 on success). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "mxc/mxc.h"

typedef struct opts {
  int list, shuffle, color;
  long resize, quality;
  unsigned long seed;
  const char *prefix, *root;
} opts;

static void usage(FILE *f) {
  fprintf(f,
          "usage: mxc-im2rec --list [--shuffle] [--seed S] PREFIX ROOT\n"
          "       mxc-im2rec [--resize N] [--quality Q] [--color 1|0] PREFIX "
          "ROOT\n"
          "The first writes PREFIX.lst from ROOT's class subfolders; the "
          "second packs\nthe images PREFIX.lst lists into PREFIX.rec and "
          "PREFIX.idx.\n");
}

static int parse_long(const char *s, long lo, long hi, long *out) {
  char *end;
  long v = s ? strtol(s, &end, 10) : 0;
  if (!s || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

/* 0 on success, 2 on bad usage, -1 after --help. */
static int parse_args(int argc, char **argv, opts *o) {
  *o = (opts){0, 0, 1, 0, 95, 0, NULL, NULL};
  int i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    long x = 0;
    if (!strcmp(a, "--help")) return usage(stdout), -1;
    if (!strcmp(a, "--list")) { o->list = 1; continue; }
    if (!strcmp(a, "--shuffle")) { o->shuffle = 1; continue; }
    int ok = parse_long(v, 0, 1L << 30, &x);
    if (ok && !strcmp(a, "--resize")) o->resize = x;
    else if (ok && !strcmp(a, "--quality") && x >= 1 && x <= 100) o->quality = x;
    else if (ok && !strcmp(a, "--color") && x <= 1) o->color = (int)x;
    else if (ok && !strcmp(a, "--seed")) o->seed = (unsigned long)x;
    else {
      fprintf(stderr, "mxc-im2rec: bad option %s %s\n", a, v ? v : "");
      return usage(stderr), 2;
    }
    ++i;
  }
  if (argc - i != 2) return usage(stderr), 2;
  o->prefix = argv[i];
  o->root = argv[i + 1];
  return 0;
}

/* ---- --list ---- */

static int is_image(const char *name) {
  const char *dot = strrchr(name, '.');
  return dot && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") ||
                 !strcasecmp(dot, ".png"));
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_dir(const struct dirent *d) {
  return d->d_type == DT_DIR && d->d_name[0] != '.';
}

static int is_image_entry(const struct dirent *d) {
  return d->d_type != DT_DIR && is_image(d->d_name);
}

typedef struct entry {
  char *path;
  int label;
} entry;

typedef struct entries {
  entry *e;
  size_t n, cap;
} entries;

static int push(entries *l, const char *dir, const char *file, int label) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 1024;
    entry *p = realloc(l->e, cap * sizeof *p);
    if (!p) return 0;
    l->e = p;
    l->cap = cap;
  }
  if (asprintf(&l->e[l->n].path, "%s/%s", dir, file) < 0) return 0;
  l->e[l->n++].label = label;
  return 1;
}

static int list_class(const opts *o, const char *cls, int label, entries *l) {
  char *dir;
  if (asprintf(&dir, "%s/%s", o->root, cls) < 0) return 0;
  struct dirent **files;
  int n = scandir(dir, &files, is_image_entry, by_name);
  free(dir);
  int ok = n >= 0;
  for (int i = 0; i < (n > 0 ? n : 0); ++i) {
    ok = ok && push(l, cls, files[i]->d_name, label);
    free(files[i]);
  }
  free(files);
  return ok;
}

/* A permutation from a small LCG: --shuffle needs reproducibility, not
 * statistical quality. */
static void shuffle(entries *l, unsigned long seed) {
  unsigned long long s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (size_t i = l->n; i > 1; --i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t j = (size_t)((s >> 33) % i);
    entry t = l->e[i - 1];
    l->e[i - 1] = l->e[j];
    l->e[j] = t;
  }
}

static int write_list(const opts *o, const entries *l) {
  char *path;
  if (asprintf(&path, "%s.lst", o->prefix) < 0) return 1;
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "mxc-im2rec: cannot write %s\n", path);
    free(path);
    return 1;
  }
  for (size_t i = 0; i < l->n; ++i) {
    fprintf(f, "%zu\t%d\t%s\n", i, l->e[i].label, l->e[i].path);
  }
  int bad = fclose(f) != 0;
  if (!bad) printf("mxc-im2rec: %s lists %zu images\n", path, l->n);
  free(path);
  return bad;
}

static int make_list(const opts *o) {
  struct dirent **classes;
  int n = scandir(o->root, &classes, is_dir, by_name);
  if (n <= 0) {
    fprintf(stderr, "mxc-im2rec: %s has no class subfolders\n", o->root);
    return 1;
  }
  entries l = {NULL, 0, 0};
  int ok = 1;
  for (int i = 0; i < n; ++i) {
    ok = ok && list_class(o, classes[i]->d_name, i, &l);
    free(classes[i]);
  }
  free(classes);
  if (ok && o->shuffle) shuffle(&l, o->seed);
  int rc = ok ? write_list(o, &l) : 1;
  if (!ok) fprintf(stderr, "mxc-im2rec: cannot list %s\n", o->root);
  for (size_t i = 0; i < l.n; ++i) free(l.e[i].path);
  free(l.e);
  return rc;
}

/* ---- packing ---- */

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) buf = malloc((size_t)size + 1);
  if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *n = (size_t)size;
  return buf;
}

/* (C, H, W) float array -> HWC bytes, rounded. */
static unsigned char *to_hwc(mxc_ndarray a, int64_t *c, int64_t *h,
                             int64_t *w) {
  int nd;
  const int64_t *d;
  if (mxc_ndarray_shape(a, &nd, &d) != MXC_OK || nd != 3) return NULL;
  *c = d[0];
  *h = d[1];
  *w = d[2];
  size_t n = (size_t)(*c * *h * *w);
  float *v = malloc(n * sizeof *v);
  unsigned char *out = malloc(n);
  if (v && out && mxc_ndarray_copy_to_host(a, v, n * sizeof *v) == MXC_OK) {
    for (int64_t k = 0; k < *c; ++k)
      for (int64_t i = 0; i < *h * *w; ++i) {
        float x = v[k * *h * *w + i] + 0.5f;
        out[i * *c + k] = (unsigned char)(x < 0 ? 0 : x > 255 ? 255 : x);
      }
  } else {
    free(out);
    out = NULL;
  }
  free(v);
  return out;
}

/* Resizes a decoded (C, H, W) image so its shorter side is n, with mxc's
 * bilinear resize operator. */
static int resize_array(mxc_ndarray img, long n, mxc_ndarray *out) {
  int nd;
  const int64_t *d;
  if (mxc_ndarray_shape(img, &nd, &d) != MXC_OK) return 0;
  int64_t c = d[0], h = d[1], w = d[2], s = h < w ? h : w;
  char hs[32], ws[32];
  snprintf(hs, sizeof hs, "%lld", (long long)((double)h * n / s + 0.5));
  snprintf(ws, sizeof ws, "%lld", (long long)((double)w * n / s + 0.5));
  int64_t dims4[4] = {1, c, h, w};
  mxc_ndarray x = NULL, y = NULL;
  mxc_op op = NULL;
  const char *keys[] = {"height", "width"}, *vals[] = {hs, ws};
  int ok = mxc_ndarray_reshape(img, dims4, 4, &x) == MXC_OK &&
           mxc_op_find("_contrib_BilinearResize2D", &op) == MXC_OK &&
           mxc_op_invoke(op, keys, vals, 2, &x, 1, &y, 1, NULL) == MXC_OK;
  int64_t dims3[3] = {c, 0, 0};
  const int64_t *yd;
  ok = ok && mxc_ndarray_shape(y, &nd, &yd) == MXC_OK;
  if (ok) {
    dims3[1] = yd[2];
    dims3[2] = yd[3];
    ok = mxc_ndarray_reshape(y, dims3, 3, out) == MXC_OK;
  }
  mxc_ndarray_free(x);
  mxc_ndarray_free(y);
  return ok;
}

/* Re-encodes as JPEG: *jpeg from tjAlloc (free with tjFree). */
static int encode(const opts *o, mxc_ndarray img, unsigned char **jpeg,
                  unsigned long *size) {
  mxc_ndarray r = NULL;
  if (!resize_array(img, o->resize, &r)) return 0;
  int64_t c, h, w;
  unsigned char *px = to_hwc(r, &c, &h, &w);
  mxc_ndarray_free(r);
  tjhandle tj = px ? tjInitCompress() : NULL;
  int ok = tj && tjCompress2(tj, px, (int)w, 0, (int)h,
                             c == 1 ? TJPF_GRAY : TJPF_RGB, jpeg, size,
                             c == 1 ? TJSAMP_GRAY : TJSAMP_420,
                             (int)o->quality, 0) == 0;
  if (tj) tjDestroy(tj);
  free(px);
  return ok;
}

/* One .lst line: index, labels, path (tab-separated). */
static int parse_line(char *line, long *index, float *labels, int *n_labels,
                      char **path) {
  char *fields[64];
  int n = 0;
  for (char *t = strtok(line, "\t\r\n"); t && n < 64; t = strtok(NULL, "\t\r\n"))
    fields[n++] = t;
  if (n < 3) return 0;
  char *end;
  *index = strtol(fields[0], &end, 10);
  if (*end) return 0;
  *n_labels = n - 2;
  for (int i = 1; i < n - 1; ++i) {
    labels[i - 1] = strtof(fields[i], &end);
    if (*end) return 0;
  }
  *path = fields[n - 1];
  return 1;
}

/* Packs one image; 1 on success, 0 when it was skipped (reported). */
static int pack_one(const opts *o, mxc_recordio rec, long index,
                    const float *labels, int n_labels, const char *rel) {
  char *path;
  if (asprintf(&path, "%s/%s", o->root, rel) < 0) return 0;
  size_t n = 0;
  unsigned char *bytes = slurp(path, &n), *jpeg = NULL;
  unsigned long jsize = 0;
  mxc_ndarray img = NULL;
  int ok = bytes && mxc_image_decode(bytes, (int64_t)n, o->color ? 3 : 1,
                                     MXC_DTYPE_FLOAT32, &img) == MXC_OK;
  if (!ok) {
    fprintf(stderr, "mxc-im2rec: skipping %s: %s\n", path,
            bytes ? mxc_last_error() : "cannot read the file");
  }
  if (ok && o->resize > 0) ok = encode(o, img, &jpeg, &jsize);
  const void *payload = jpeg ? (const void *)jpeg : bytes;
  int64_t psize = jpeg ? (int64_t)jsize : (int64_t)n, need = 0;
  mxc_recordio_pack_image(labels, n_labels, index, 0, payload, psize, NULL, 0,
                          &need);
  char *buf = ok ? malloc((size_t)need) : NULL;
  ok = buf &&
       mxc_recordio_pack_image(labels, n_labels, index, 0, payload, psize, buf,
                               need, &need) == MXC_OK &&
       mxc_recordio_write_key(rec, index, buf, need) == MXC_OK;
  free(buf);
  if (jpeg) tjFree(jpeg);
  free(bytes);
  free(path);
  mxc_ndarray_free(img);
  return ok;
}

static int pack(const opts *o) {
  char *lst, *rec_path, *idx_path;
  if (asprintf(&lst, "%s.lst", o->prefix) < 0 ||
      asprintf(&rec_path, "%s.rec", o->prefix) < 0 ||
      asprintf(&idx_path, "%s.idx", o->prefix) < 0)
    return 1;
  FILE *f = fopen(lst, "r");
  mxc_recordio rec = NULL;
  if (!f || mxc_recordio_open(rec_path, idx_path, "w", &rec) != MXC_OK) {
    fprintf(stderr, "mxc-im2rec: %s\n", f ? mxc_last_error() : "cannot read the list");
    if (f) fclose(f);
    return 1;
  }
  char line[8192];
  long done = 0, skipped = 0, line_no = 0;
  int rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    long index;
    float labels[62];
    int n_labels;
    char *path;
    line_no++;
    if (!parse_line(line, &index, labels, &n_labels, &path)) {
      fprintf(stderr, "mxc-im2rec: %s line %ld: expected index<TAB>label"
                      "<TAB>path\n", lst, line_no);
      rc = 1;
    } else if (pack_one(o, rec, index, labels, n_labels, path)) {
      done++;
    } else {
      skipped++;
    }
  }
  fclose(f);
  if (mxc_recordio_flush(rec) != MXC_OK) rc = 1;
  mxc_recordio_free(rec);
  printf("mxc-im2rec: packed %ld images into %s (%ld skipped)\n", done,
         rec_path, skipped);
  free(lst);
  free(rec_path);
  free(idx_path);
  return rc ? rc : skipped ? 2 : 0;
}

int main(int argc, char **argv) {
  opts o;
  int rc = parse_args(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : rc;
  return o.list ? make_list(&o) : pack(&o);
}
