/* The upgrades Apache MXNet applies to graph JSON written by older
 * versions, so that old files load as MXNet loads them and
 * mxc__symbol_to_json writes the upgraded graph:
 *  - before 1.9 (any file older than the version mxc writes): the old
 *    attribute keys ctx_group, lr_mult, wd_mult, force_mirroring,
 *    mirror_stage and profiler_scope become "__ctx_group__" etc.; on an
 *    operator node, "<input>_<key>" ("weight_lr_mult") moves to that
 *    input's variable as "__<key>__";
 *  - before 0.9.0: operator inputs the file omits (0.8 BatchNorm lists 3
 *    of 5: the moving statistics were not graph inputs) become variables
 *    "<node>_<input name>" carrying the node's "__...__" attributes;
 *  - before 0.9.4: variables feeding BatchNorm's moving mean / variance,
 *    LeakyReLU's gamma and UpSampling's weight get the "__init__" MXNet's
 *    operators give them when they are composed;
 *  - before 0.9.5: argmax/argmin axis=-1 meant "all axes": it is dropped.
 * Old operator names (_Plus, _MulScalar, ...) are registry aliases
 * (ops/binary/legacy.c), so they need no upgrade here. */
#ifndef MXC_CORE_GRAPH_JSON_LEGACY_H_
#define MXC_CORE_GRAPH_JSON_LEGACY_H_

#include <stddef.h>

#include "core/graph/json_parse.h"
#include "core/op/node.h"

/* The version mxc writes (MXNet 1.9.0); files at or above it are current. */
#define MXC__MXNET_VERSION 10900
/* Versions at which MXNet's upgrades stop applying. */
#define MXC__MXNET_V0_9_0 900
#define MXC__MXNET_V0_9_4 904
#define MXC__MXNET_V0_9_5 905

/* The "mxnet_version" a file declares in its top-level "attrs" (["int",
 * N]); 800 (MXNet 0.8) when absent or malformed, as MXNet reads it. */
int mxc__json_mxnet_version(const mxc__json *j);

/* For an old attribute key: "__<key>__" when key is a hidden key itself
 * (*prefix_len = 0) or "<input>_<key>" with a non-empty <input>
 * (*prefix_len = its length); NULL for any other key. */
const char *mxc__legacy_hidden_key(const char *key, size_t *prefix_len);

/* 1 when parameter key=val of operator op_name is dropped for a file of
 * this version (argmax/argmin axis=-1 before 0.9.5). */
int mxc__legacy_drops_param(const char *op_name, const char *key,
                            const char *val, int version);

/* Sets the user attributes uk/uv[0..nu) of a loaded operator node n
 * whose file is older than MXC__MXNET_VERSION: hidden keys renamed, and
 * "<input>_<key>" moved to the named input when it is a variable; then,
 * before 0.9.4, the "__init__" of the inputs that have one. */
int mxc__legacy_set_uattrs(mxc__node *n, const char *const *uk,
                           const char *const *uv, int nu, int version);

/* Variables for the inputs an old file omits (before 0.9.0): entries
 * ins[n_given..n_want) become new variables "<name>_<input name>" with
 * the "__...__" user attributes of uk/uv[0..nu) (keys already renamed);
 * made[k] holds a reference on each (release them after use). */
int mxc__legacy_missing_inputs(const mxc__op *op, const void *param,
                               const char *name, const char *const *uk,
                               const char *const *uv, int nu, int n_given,
                               int n_want, mxc__entry *ins,
                               mxc__node **made);

#endif /* MXC_CORE_GRAPH_JSON_LEGACY_H_ */
