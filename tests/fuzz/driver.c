/* Replays inputs through a fuzz target without libFuzzer: the main() of
 * every target outside --config=fuzz. Arguments are files or directories
 * (every regular file in them, sorted by name so runs are reproducible);
 * arguments starting with '-' are libFuzzer flags and are ignored, so the
 * same command line works for both builds. Exits 0 after running every
 * input: a bug shows as a sanitizer report or a crash, as under libFuzzer.
 * This is how the corpus (seeds plus every regression input) is run in
 * the default, ASan+UBSan and TSan test passes. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz_util.h"

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t *nb = realloc(buf, cap);
      if (!nb) abort();
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    if (got == 0) break;
    n += got;
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* Runs every regular file of dir; returns the count or -1. */
static int run_dir(const char *dir) {
  struct dirent **names;
  int n = scandir(dir, &names, NULL, by_name);
  if (n < 0) {
    perror(dir);
    return -1;
  }
  int ran = 0;
  for (int i = 0; i < n; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
    struct stat st;
    if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 &&
        S_ISREG(st.st_mode) && run_file(path) == 0)
      ++ran;
    free(names[i]);
  }
  free(names);
  return ran;
}

int main(int argc, char **argv) {
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      return 1;
    }
    int n = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]) == 0;
    if (n < 0) return 1;
    ran += n;
  }
  printf("%s: ran %d inputs\n", argv[0], ran);
  return ran > 0 ? 0 : 1;
}
