/* Writes a deterministic synthetic classification data set in LibSVM
 * format, for examples/sparse_linear:
 *
 *   make_libsvm_data --out-dir DIR [--train N] [--test N] [--features F]
 *                    [--nnz Z] [--classes K] [--seed S]
 *
 * writes DIR/train.svm and DIR/test.svm (defaults: 50000 / 10000 samples,
 * 100000 features, about 30 stored features per sample, 2 classes).
 *
 * The model behind the labels: a hidden sparse weight matrix W* (F x K;
 * each entry nonzero with probability 0.3, N(0, 9 / Z)). A sample draws
 * Z +- Z/3 distinct features, skewed towards low indices (index =
 * F * u^3, so a few thousand features are common and most are rare, like
 * words or click-log ids), with values in [0.5, 1.5). Its label
 * is argmax_k (x . W*[:, k] + g_k) with Gumbel noise g_k: a draw from
 * softmax(x . W*), so even the hidden model is right only most of the
 * time. Everything comes from one splitmix64 stream seeded by --seed, so
 * the files depend only on the arguments (no time, no other randomness). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gen_config {
  const char *out_dir;
  long n_train, n_test, features, nnz, classes;
  unsigned long long seed;
} gen_config;

static uint64_t g_state;

/* splitmix64: small, fast and good enough for synthetic data. */
static uint64_t next_u64(void) {
  uint64_t z = (g_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double uniform(void) { return (double)(next_u64() >> 11) * 0x1p-53; }

static double normal(void) {
  double u = uniform(), v = uniform();
  return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Draws up to n distinct sorted feature indices into idx; returns how
 * many (duplicates are dropped, so a few samples have fewer). */
static long draw_features(const gen_config *c, long n, long *idx) {
  for (long i = 0; i < n; ++i) {
    double u = uniform();
    idx[i] = (long)((double)c->features * u * u * u);
    if (idx[i] >= c->features) idx[i] = c->features - 1;
  }
  qsort(idx, (size_t)n, sizeof *idx, cmp_long);
  long m = 0;
  for (long i = 0; i < n; ++i) {
    if (m == 0 || idx[i] != idx[m - 1]) idx[m++] = idx[i];
  }
  return m;
}

/* Writes n samples to path. idx, val: scratch for 2 * nnz entries;
 * score: classes entries. */
static int write_set(const gen_config *c, const float *w, const char *path,
                     long n, long *idx, double *val, double *score) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "make_libsvm_data: cannot write %s: %s\n", path,
            strerror(errno));
    return 1;
  }
  /* Feature values are O(1), as counts or tf-idf weights would be; the
   * hidden weights carry the 1/sqrt(nnz) so scores stay O(1) too. */
  const double wscale = 3.0 / sqrt((double)c->nnz);
  long right = 0; /* samples the hidden model alone classifies right */
  const long spread = c->nnz / 3;
  for (long s = 0; s < n; ++s) {
    long want =
        c->nnz - spread + (long)(next_u64() % (uint64_t)(2 * spread + 1));
    long m = draw_features(c, want, idx);
    for (long k = 0; k < c->classes; ++k) score[k] = 0.0;
    for (long i = 0; i < m; ++i) {
      val[i] = 0.5 + uniform();
      for (long k = 0; k < c->classes; ++k) {
        score[k] += wscale * val[i] * w[idx[i] * c->classes + k];
      }
    }
    long label = 0, plain = 0;
    double best = -INFINITY;
    for (long k = 0; k < c->classes; ++k) {
      if (score[k] > score[plain]) plain = k;
      double g = -log(-log(uniform() * (1.0 - 1e-12) + 1e-12));
      if (score[k] + g > best) {
        best = score[k] + g;
        label = k;
      }
    }
    right += plain == label;
    fprintf(f, "%ld", label);
    for (long i = 0; i < m; ++i) fprintf(f, " %ld:%.4g", idx[i], val[i]);
    fputc('\n', f);
  }
  if (fclose(f) != 0) {
    fprintf(stderr, "make_libsvm_data: writing %s failed\n", path);
    return 1;
  }
  printf("%s: %ld samples; the hidden model's accuracy on them: %.4f\n",
         path, n, (double)right / (double)n);
  return 0;
}

static int parse_args(int argc, char **argv, gen_config *c) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "make_libsvm_data: %s needs a value\n", a);
      return 1;
    }
    const char *v = argv[++i];
    if (!strcmp(a, "--out-dir")) c->out_dir = v;
    else if (!strcmp(a, "--train")) c->n_train = atol(v);
    else if (!strcmp(a, "--test")) c->n_test = atol(v);
    else if (!strcmp(a, "--features")) c->features = atol(v);
    else if (!strcmp(a, "--nnz")) c->nnz = atol(v);
    else if (!strcmp(a, "--classes")) c->classes = atol(v);
    else if (!strcmp(a, "--seed")) c->seed = strtoull(v, NULL, 10);
    else {
      fprintf(stderr, "make_libsvm_data: unknown option %s\n", a);
      return 1;
    }
  }
  if (!c->out_dir || c->n_train < 1 || c->n_test < 1 || c->features < 1 ||
      c->nnz < 1 || c->classes < 2) {
    fprintf(stderr,
            "usage: make_libsvm_data --out-dir DIR [--train N>0] [--test "
            "N>0] [--features F>0] [--nnz Z>0] [--classes K>=2] [--seed S]\n");
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  gen_config c = {NULL, 50000, 10000, 100000, 30, 2, 1};
  if (parse_args(argc, argv, &c)) return 2;
  g_state = c.seed;
  float *w = calloc((size_t)(c.features * c.classes), sizeof *w);
  long *idx = malloc(sizeof *idx * (size_t)(2 * c.nnz + 1));
  double *val = malloc(sizeof *val * (size_t)(2 * c.nnz + 1));
  double *score = malloc(sizeof *score * (size_t)c.classes);
  int rc = !w || !idx || !val || !score;
  if (rc) fprintf(stderr, "make_libsvm_data: out of memory\n");
  for (long i = 0; !rc && i < c.features * c.classes; ++i) {
    w[i] = uniform() < 0.3 ? (float)normal() : 0.0f;
  }
  char path[4096];
  if (!rc) {
    snprintf(path, sizeof path, "%s/train.svm", c.out_dir);
    rc = write_set(&c, w, path, c.n_train, idx, val, score);
  }
  if (!rc) {
    snprintf(path, sizeof path, "%s/test.svm", c.out_dir);
    rc = write_set(&c, w, path, c.n_test, idx, val, score);
  }
  if (!rc) {
    printf("wrote %s/train.svm (%ld samples) and %s/test.svm (%ld), %ld "
           "features, %ld classes\n",
           c.out_dir, c.n_train, c.out_dir, c.n_test, c.features, c.classes);
  }
  free(w);
  free(idx);
  free(val);
  free(score);
  return rc;
}
