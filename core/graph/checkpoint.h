/* Checkpoints as Apache MXNet writes them: PREFIX-symbol.json and
 * PREFIX-EEEE.params with "arg:"/"aux:" names (mxc.h, "Checkpoints"). */
#ifndef MXC_CORE_GRAPH_CHECKPOINT_H_
#define MXC_CORE_GRAPH_CHECKPOINT_H_

#include "core/graph/symbol.h"
#include "core/ndarray/io.h"

/* *sym, *args, *aux: new; names in the lists have no prefix. Nothing is
 * set on failure. */
int mxc__checkpoint_load(const char *prefix, int epoch, mxc__symbol **sym,
                         mxc__ndarray_list **args, mxc__ndarray_list **aux);

/* Moves the arrays of all into two new lists by their names' "arg:" /
 * "aux:" prefixes, which are removed (a name without a prefix counts as an
 * argument); all is left with NULL arrays (free it as usual). On failure
 * nothing is set and the arrays already moved are freed with the new
 * lists. */
int mxc__checkpoint_split(mxc__ndarray_list *all, mxc__ndarray_list **args,
                          mxc__ndarray_list **aux);

/* Writes the params (MXNet format) and then the symbol. */
int mxc__checkpoint_save(const char *prefix, int epoch, const mxc__symbol *sym,
                         int n_args, const char *const *arg_names,
                         mxc__ndarray *const *args, int n_aux,
                         const char *const *aux_names,
                         mxc__ndarray *const *aux);

#endif /* MXC_CORE_GRAPH_CHECKPOINT_H_ */
