#include "bench/resnet_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *bench_find(const char *argv0, const char *rel, char *out) {
  if (access(rel, R_OK) == 0) {
    snprintf(out, BENCH_PATH, "%s", rel);
  } else {
    snprintf(out, BENCH_PATH, "%s.runfiles/mxc/%s", argv0, rel);
  }
  return out;
}

void bench_cache_dir(char *out) {
  const char *dir = getenv("MXC_BENCH_CACHE");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  if (dir != NULL && dir[0] != '\0') {
    snprintf(out, BENCH_PATH, "%s", dir);
  } else if (xdg != NULL && xdg[0] != '\0') {
    snprintf(out, BENCH_PATH, "%s/mxc/bench", xdg);
  } else {
    snprintf(out, BENCH_PATH, "%s/.cache/mxc/bench", home ? home : "/tmp");
  }
}

void bench_cpuinfo(const char *key, char *out, size_t n) {
  snprintf(out, n, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return;
  char line[8192];
  while (fgets(line, sizeof line, f) != NULL) {
    const char *colon = strchr(line, ':');
    if (strncmp(line, key, strlen(key)) != 0 || colon == NULL) continue;
    snprintf(out, n, "%s", colon + (colon[1] == ' ' ? 2 : 1));
    out[strcspn(out, "\n")] = '\0';
    break;
  }
  fclose(f);
}

const char *bench_python(void) {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

int bench_make_models(const char *python, const char *script, const char *dir,
                      const char *models) {
  if (access(script, R_OK) != 0) {
    fprintf(stderr, "bench: %s not found\n", script);
    return -1;
  }
  char cmd[3 * BENCH_PATH];
  snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' --models '%s'", python, script, dir,
           models);
  int status = system(cmd);
  if (status != 0) {
    fprintf(stderr,
            "bench: '%s' failed (status %d): the models need "
            "Debian's python3-torch and python3-torchvision\n",
            cmd, status);
    return -1;
  }
  return 0;
}

/* SplitMix64: a fixed, portable sequence. */
static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void bench_fill(float *x, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = mix(seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i);
    /* Sum of four uniforms in [-0.5, 0.5): mean 0, variance 1/3, bell
     * shaped, like the normalized images the models expect. */
    double s = 0;
    for (int k = 0; k < 4; ++k)
      s += (double)((r >> (16 * k)) & 0xffff) / 65536.0 - 0.5;
    x[i] = (float)(s * 1.7320508);
  }
}

int bench_write_f32(const char *path, const float *x, int64_t n) {
  FILE *f = fopen(path, "wb");
  int ok = f != NULL && fwrite(x, sizeof *x, (size_t)n, f) == (size_t)n;
  if (f != NULL && fclose(f) != 0) ok = 0;
  if (!ok) fprintf(stderr, "bench: cannot write %s\n", path);
  return ok ? 0 : -1;
}

int bench_read_f32(const char *path, float *x, int64_t n) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "bench: cannot open %s\n", path);
    return -1;
  }
  size_t got = fread(x, sizeof *x, (size_t)n, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != (size_t)n || extra) {
    fprintf(stderr, "bench: %s does not hold exactly %lld floats\n", path,
            (long long)n);
    return -1;
  }
  return 0;
}

void bench_kvs_set(bench_kvs *kvs, const char *key, double value) {
  int i = 0;
  while (i < kvs->n && strcmp(kvs->key[i], key) != 0) ++i;
  if (i == BENCH_MAX_KV) return; /* full: more figures than any run makes */
  if (i == kvs->n) {
    snprintf(kvs->key[i], sizeof kvs->key[i], "%s", key);
    kvs->n++;
  }
  kvs->value[i] = value;
}

double bench_kvs_get(const bench_kvs *kvs, const char *key) {
  for (int i = 0; i < kvs->n; ++i) {
    if (strcmp(kvs->key[i], key) == 0) return kvs->value[i];
  }
  return NAN;
}

/* Records "name=number" (the whole value a number); other lines are only
 * shown. */
static void parse_line(const char *line, bench_kvs *kvs) {
  const char *eq = strchr(line, '=');
  if (eq == NULL || eq == line || (size_t)(eq - line) >= sizeof kvs->key[0]) {
    return;
  }
  char *end = NULL;
  double v = strtod(eq + 1, &end);
  if (end == eq + 1 || (*end != '\n' && *end != '\0')) return;
  char key[sizeof kvs->key[0]];
  memcpy(key, line, (size_t)(eq - line));
  key[eq - line] = '\0';
  bench_kvs_set(kvs, key, v);
}

int bench_run_peer(const char *cmd, bench_kvs *kvs) {
  fflush(stdout);
  FILE *p = popen(cmd, "r");
  if (p == NULL) {
    fprintf(stderr, "bench: cannot run '%s'\n", cmd);
    return -1;
  }
  char line[1024];
  while (fgets(line, sizeof line, p) != NULL) {
    fputs(line, stdout);
    parse_line(line, kvs);
  }
  fflush(stdout);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double bench_max_abs_diff(const float *a, const float *b, int64_t n,
                          double *ref_max) {
  double d = 0, m = 0;
  for (int64_t i = 0; i < n; ++i) {
    double e = fabs((double)a[i] - (double)b[i]);
    if (isnan(e)) d = NAN;
    if (e > d) d = e;
    if (fabs((double)b[i]) > m) m = fabs((double)b[i]);
  }
  if (ref_max != NULL) *ref_max = m;
  return d;
}
