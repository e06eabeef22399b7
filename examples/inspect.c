/* See inspect.h. The external tools (gnuplot, dot) are optional: without
 * them the text files are written all the same, with a hint. */
#define _POSIX_C_SOURCE 200809L
#include "inspect.h"

#include <stdlib.h>
#include <string.h>

static int fail_mx(const char *what) {
  fprintf(stderr, "train_fashion_mnist: %s: %s\n", what, mxc_last_error());
  return 1;
}

/* ---- the profile ---------------------------------------------------------- */

int insp_profile_start(const char *path) {
  if (mxc_profiler_set_config("filename", path) != MXC_OK ||
      mxc_profiler_set_config("profile_memory", "1") != MXC_OK ||
      mxc_profiler_set_state(MXC_PROFILER_RUN) != MXC_OK) {
    return fail_mx("--profile");
  }
  return 0;
}

int insp_profile_finish(const char *path, FILE *out) {
  char *table = NULL;
  if (mxc_profiler_stats(MXC_PROFILER_TABLE, 0, &table) != MXC_OK) {
    return fail_mx("--profile: statistics");
  }
  fputs(table, out);
  mxc_string_free(table);
  if (mxc_profiler_dump(1) != MXC_OK) return fail_mx("--profile");
  fprintf(out, "profile: %s (open it in https://ui.perfetto.dev or "
               "chrome://tracing)\n", path);
  return 0;
}

/* ---- tools ------------------------------------------------------------------ */

/* 1 when the shell finds the command. */
static int have_tool(const char *name) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
  return system(cmd) == 0;
}

/* path with its extension (if any) replaced by ext (".csv"); NULL on OOM. */
static char *with_ext(const char *path, const char *ext) {
  const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
  size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path)
                                                : strlen(path);
  char *s = malloc(stem + strlen(ext) + 1);
  if (s) {
    memcpy(s, path, stem);
    strcpy(s + stem, ext);
  }
  return s;
}

/* A single-quoted shell word of s (no quote inside s), or NULL. */
static int shell_safe(const char *s) { return strchr(s, '\'') == NULL; }

/* ---- learning curves ---------------------------------------------------------- */

struct insp_curves {
  FILE *csv;
  char *png, *csv_path;
};

int insp_curves_open(const char *png_path, insp_curves **out) {
  insp_curves *c = calloc(1, sizeof *c);
  if (c) c->png = strdup(png_path);
  if (c && c->png) c->csv_path = with_ext(png_path, ".csv");
  if (!c || !c->png || !c->csv_path) {
    insp_curves_finish(c);
    fprintf(stderr, "train_fashion_mnist: --curves: out of memory\n");
    return 1;
  }
  c->csv = fopen(c->csv_path, "w");
  if (!c->csv) {
    perror(c->csv_path);
    insp_curves_finish(c);
    return 1;
  }
  fprintf(c->csv, "epoch,train_loss,train_acc,test_acc\n");
  *out = c;
  return 0;
}

int insp_curves_add(insp_curves *c, int epoch, double train_loss,
                    double train_acc, double test_acc) {
  fprintf(c->csv, "%d,%.6f,%.6f,%.6f\n", epoch, train_loss, train_acc,
          test_acc);
  /* Complete rows on disk as epochs end: a run cut short keeps them. */
  if (fflush(c->csv) != 0) {
    perror(c->csv_path);
    return 1;
  }
  return 0;
}

/* Loss on the left axis, accuracies on the right, per epoch. */
static int render_png(const insp_curves *c) {
  if (!have_tool("gnuplot")) {
    printf("curves: %s (install gnuplot to get %s)\n", c->csv_path, c->png);
    return 0;
  }
  if (!shell_safe(c->png) || !shell_safe(c->csv_path)) {
    fprintf(stderr, "train_fashion_mnist: --curves: no quote in paths\n");
    return 1;
  }
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "gnuplot -e \"set terminal png size 900,600; set output '%s'; "
           "set datafile separator ','; set key autotitle columnhead; "
           "set xlabel 'epoch'; set ylabel 'loss'; set y2label 'accuracy'; "
           "set y2tics; set ytics nomirror; "
           "plot '%s' using 1:2 axes x1y1 with linespoints, "
           "'' using 1:3 axes x1y2 with linespoints, "
           "'' using 1:4 axes x1y2 with linespoints\"",
           c->png, c->csv_path);
  if (system(cmd) != 0) {
    fprintf(stderr, "train_fashion_mnist: --curves: gnuplot failed\n");
    return 1;
  }
  printf("curves: %s and %s\n", c->csv_path, c->png);
  return 0;
}

int insp_curves_finish(insp_curves *c) {
  if (!c) return 0;
  int rc = 0;
  if (c->csv) {
    rc = fclose(c->csv) != 0;
    if (rc) perror(c->csv_path);
    if (!rc) rc = render_png(c);
  }
  free(c->png);
  free(c->csv_path);
  free(c);
  return rc;
}

/* ---- the graph ------------------------------------------------------------------ */

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    return 1;
  }
  return 0;
}

int insp_graph_write(mxc_symbol sym, const char *data_name, int ndim,
                     const int64_t *data_shape, const char *dot_path) {
  char *dot = NULL;
  if (mxc_symbol_to_dot(sym, 1, &data_name, &ndim, data_shape, &dot) !=
      MXC_OK) {
    return fail_mx("--graph");
  }
  int rc = write_text(dot_path, dot);
  mxc_string_free(dot);
  if (rc) return rc;
  char *svg = with_ext(dot_path, ".svg");
  if (!svg) return 1;
  if (!have_tool("dot")) {
    printf("graph: %s (install graphviz to get %s)\n", dot_path, svg);
  } else if (!shell_safe(dot_path) || !shell_safe(svg)) {
    fprintf(stderr, "train_fashion_mnist: --graph: no quote in paths\n");
    rc = 1;
  } else {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o '%s'", dot_path, svg);
    rc = system(cmd) != 0;
    if (rc) fprintf(stderr, "train_fashion_mnist: --graph: dot failed\n");
    if (!rc) printf("graph: %s and %s\n", dot_path, svg);
  }
  free(svg);
  return rc;
}
