/* Symbols: lists of output entries over core/op/node.h graphs.
 *
 * A symbol owns one node reference per output entry. Symbols are values:
 * operations build new symbols and never modify their arguments (apart
 * from user attributes, see mxc__node_set_uattr). The functions declared
 * here are the internal half of the "Symbols" section of mxc.h; the C API
 * validates handles and pointers and forwards here, where the remaining
 * argument checks (names, counts, arities) happen.
 *
 * Naming (as Apache MXNet, so argument lists and saved files match):
 *  - an operator node without a name gets the lower-case operator name and
 *    a process-wide counter for that name: "fullyconnected0";
 *  - an operator input not given becomes a variable "<node>_<input name>"
 *    ("fc1_weight", "bn1_moving_mean");
 *  - entry names: a variable's name; "<node>_output" for operators with
 *    one visible output; "<node>_<output name>" for operators with several
 *    ("<node>_output<i>" when the descriptor names none).
 *
 * Thread-safety: as nodes (immutable but for user attributes). */
#ifndef MXC_CORE_GRAPH_SYMBOL_H_
#define MXC_CORE_GRAPH_SYMBOL_H_

#include "core/op/node.h"

typedef struct mxc__symbol {
  int n_outputs;
  mxc__entry *outputs; /* each holds one node reference */
} mxc__symbol;

/* An immutable list of owned strings (names, attribute keys). */
typedef struct mxc__str_list {
  int n;
  char **items;
} mxc__str_list;

void mxc__str_list_free(mxc__str_list *l); /* accepts NULL */

/* A symbol over entries outs[0..n) (n >= 1), taking a new reference on
 * each. */
int mxc__symbol_new(const mxc__entry *outs, int n, mxc__symbol **out);
void mxc__symbol_free(mxc__symbol *s); /* accepts NULL */

/* A variable named `name` (non-empty) with n user attributes. */
int mxc__symbol_variable(const char *name, const char *const *keys,
                         const char *const *vals, int n,
                         mxc__symbol **out);

/* Applies op (see mxc_symbol_create): parameters keys/vals[0..n_params)
 * (keys starting with "__" become user attributes); name NULL for an
 * automatic one; inputs[0..n_inputs) single-output symbols given
 * positionally (input_names NULL) or by operator input name. */
int mxc__symbol_create(const mxc__op *op, const char *const *keys,
                       const char *const *vals, int n_params,
                       const char *name, const char *const *input_names,
                       mxc__symbol *const *inputs, int n_inputs,
                       mxc__symbol **out);

/* Replaces free variables of s by args[0..n) (single-output symbols), by
 * name (names non-NULL; every variable of that name, MXC_ERR_NOT_FOUND if
 * none) or positionally in argument order. Nodes on paths from the
 * outputs to a replaced variable are copied; the rest are shared. */
int mxc__symbol_compose(const mxc__symbol *s, const char *const *names,
                        mxc__symbol *const *args, int n, mxc__symbol **out);

/* A deep copy: every node copied, names and attributes included. */
int mxc__symbol_copy(const mxc__symbol *s, mxc__symbol **out);

/* Outputs of syms[0..n) in order (n >= 1). */
int mxc__symbol_group(mxc__symbol *const *syms, int n, mxc__symbol **out);

/* Output `index` of s alone. */
int mxc__symbol_output(const mxc__symbol *s, int index, mxc__symbol **out);

/* Every visible output of every node of s, in topological order. */
int mxc__symbol_internals(const mxc__symbol *s, mxc__symbol **out);

/* The output of s whose entry name is `name` (MXC_ERR_NOT_FOUND). */
int mxc__symbol_output_by_name(const mxc__symbol *s, const char *name,
                               mxc__symbol **out);

/* The node name of a single-output symbol as a new string
 * (MXC_ERR_INVALID_ARGUMENT for several outputs). */
int mxc__symbol_name(const mxc__symbol *s, char **out);

/* Name of entry e (see the naming rules above) as a new string. */
int mxc__entry_name(mxc__entry e, char **out);

/* Name lists: arguments and auxiliary states (graph order), outputs. */
int mxc__symbol_list_arguments(const mxc__symbol *s, mxc__str_list **out);
int mxc__symbol_list_outputs(const mxc__symbol *s, mxc__str_list **out);
int mxc__symbol_list_aux(const mxc__symbol *s, mxc__str_list **out);

/* Attributes of a single-output symbol's node. set: a user attribute
 * (MXC_ERR_INVALID_ARGUMENT for a parameter name of the node's operator).
 * get: user attributes, then the parameter strings the node was made
 * with; *out = a new string or NULL when absent. keys: parameter strings
 * then user attributes. */
int mxc__symbol_set_attr(const mxc__symbol *s, const char *key,
                         const char *val);
int mxc__symbol_get_attr(const mxc__symbol *s, const char *key, char **out);
int mxc__symbol_attr_keys(const mxc__symbol *s, mxc__str_list **out);

/* MXNet 1.x JSON (json.c). to_json: *out a new string (mxc__free).
 * from_json: MXC_ERR_INVALID_ARGUMENT with a byte offset for malformed
 * text, MXC_ERR_NOT_FOUND for an unknown operator. save/load: files, with
 * MXC_ERR_IO for I/O failures; save replaces the file atomically. */
int mxc__symbol_to_json(const mxc__symbol *s, char **out);
int mxc__symbol_from_json(const char *json, mxc__symbol **out);
int mxc__symbol_save(const mxc__symbol *s, const char *path);
int mxc__symbol_load(const char *path, mxc__symbol **out);

/* Graphviz DOT text (dot.c). shapes: NULL, or per-argument shapes given
 * as for mxc__symbol_infer_shape (n, names, shapes) to label edges. */
int mxc__symbol_to_dot(const mxc__symbol *s, int n, const char *const *names,
                       const mxc__shape *shapes, char **out);

#endif /* MXC_CORE_GRAPH_SYMBOL_H_ */
