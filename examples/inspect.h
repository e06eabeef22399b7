/* Looking inside a training run (train_fashion_mnist's --profile, --curves
 * and --graph): a Chrome trace of the run, learning curves as CSV (and a
 * PNG through gnuplot when it is installed), and the network's graph as
 * DOT (and SVG through Graphviz's dot when it is installed). Each
 * function returns 0 on success or prints why it failed and returns 1. */
#ifndef MXC_EXAMPLES_INSPECT_H_
#define MXC_EXAMPLES_INSPECT_H_

#include <stdio.h>

#include "mxc/mxc.h"

/* Starts the profiler, recording into path at insp_profile_finish. */
int insp_profile_start(const char *path);
/* Writes the trace, stops the profiler and prints the per-operator table
 * to out. */
int insp_profile_finish(const char *path, FILE *out);

/* Learning curves: FILE.csv beside FILE.png (path). */
typedef struct insp_curves insp_curves;
int insp_curves_open(const char *png_path, insp_curves **out);
/* One row per epoch. */
int insp_curves_add(insp_curves *c, int epoch, double train_loss,
                    double train_acc, double test_acc);
/* Closes the CSV and renders the PNG with gnuplot if it is installed;
 * frees c (NULL is a no-op). */
int insp_curves_finish(insp_curves *c);

/* The graph of sym as DOT in dot_path (edges labelled with shapes, the
 * data input having data_shape), and FILE.svg beside it through dot. */
int insp_graph_write(mxc_symbol sym, const char *data_name, int ndim,
                     const int64_t *data_shape, const char *dot_path);

#endif /* MXC_EXAMPLES_INSPECT_H_ */
