/* What bench/infer and the ResNet-18 step of bench/train share: the
 * generated models (scripts/make_resnet.py) in a cache folder, finding the
 * peer scripts, deterministic inputs in files the peers read, and running
 * a peer that prints name=value lines. Programs only: errors are messages
 * on stderr and a return code, never an exit. */
#ifndef MXC_BENCH_RESNET_UTIL_H_
#define MXC_BENCH_RESNET_UTIL_H_

#include <stddef.h>
#include <stdint.h>

#define BENCH_PATH 4096
#define BENCH_MAX_KV 256

/* name=value figures, as a peer printed them (or as a program collects its
 * own). */
typedef struct bench_kvs {
  int n;
  char key[BENCH_MAX_KV][96];
  double value[BENCH_MAX_KV];
} bench_kvs;

/* Writes into out (BENCH_PATH bytes) where file rel (a path relative to
 * the repository root, "bench/infer_torch.py") is: under the working
 * directory (bazel run starts in the runfiles tree) or in argv0's
 * runfiles (bazel-bin/bench/infer run directly). Returns out; the path may
 * not exist (the caller reports it). */
const char *bench_find(const char *argv0, const char *rel, char *out);

/* The cache folder for generated models and the ONNX Runtime package:
 * $MXC_BENCH_CACHE, else $XDG_CACHE_HOME/mxc/bench, else
 * $HOME/.cache/mxc/bench (out holds BENCH_PATH bytes). */
void bench_cache_dir(char *out);

/* The value of the first /proc/cpuinfo line starting with key ("model
 * name"), into out (n bytes); "unknown" when there is none. */
void bench_cpuinfo(const char *key, char *out, size_t n);

/* The Python interpreter peers run with: Debian's /usr/bin/python3 (which
 * has python3-torch) when present, else python3 from PATH. */
const char *bench_python(void);

/* Runs scripts/make_resnet.py DIR --models MODELS (it returns at once when
 * its files are up to date). 0 on success, -1 with a message. */
int bench_make_models(const char *python, const char *script, const char *dir,
                      const char *models);

/* n deterministic float32 values of order one (a function of seed and the
 * index only: the first k values do not depend on n). */
void bench_fill(float *x, int64_t n, uint64_t seed);

/* Writes n floats to path (little-endian float32, as the peers read them)
 * / reads exactly n floats from path into x. 0 on success, -1 with a
 * message naming the file. */
int bench_write_f32(const char *path, const float *x, int64_t n);
int bench_read_f32(const char *path, float *x, int64_t n);

/* Runs cmd through the shell; copies each line of its stdout to stdout and
 * records the name=value lines with a number in kvs. Returns the command's
 * exit status (-1 when it could not start). */
int bench_run_peer(const char *cmd, bench_kvs *kvs);

/* Adds (or replaces) a figure. */
void bench_kvs_set(bench_kvs *kvs, const char *key, double value);

/* The figure named key, or NAN. */
double bench_kvs_get(const bench_kvs *kvs, const char *key);

/* max |a[i] - b[i]| over n values; *ref_max = max |b[i]| (may be NULL). A
 * NaN anywhere gives NaN. */
double bench_max_abs_diff(const float *a, const float *b, int64_t n,
                          double *ref_max);

#endif /* MXC_BENCH_RESNET_UTIL_H_ */
