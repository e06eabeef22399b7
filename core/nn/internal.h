/* What the files of core/nn share: the table of block kinds and the
 * helpers their setup and forward functions use. */
#ifndef MXC_CORE_NN_INTERNAL_H_
#define MXC_CORE_NN_INTERNAL_H_

#include "core/nn/nn.h"

/* A built-in kind of block. */
struct mxc__nn_kind {
  const char *name;
  const char *const *keys; /* configuration keys accepted, NULL-ended */
  int n_in;                /* inputs of forward; -1: any number >= 1 */
  /* Checks the configuration, declares parameters, sets the operator
   * strings (mxc__nn_set_op). NULL: nothing to do. */
  int (*setup)(mxc__block *b);
  int (*forward)(mxc__block *b, int n_in, mxc__ndarray *const *in,
                 mxc__ndarray **out);
  /* The block's graph on the symbol in (borrowed), *out new, for kinds
   * whose forward pass is more than their one operator (LSTM, GRU: the
   * parameters packed, the begin state made); NULL: the operator on
   * (in, parameters...) as export.c builds it. */
  int (*symbol)(const mxc__block *b, struct mxc__symbol *in,
                struct mxc__symbol **out);
};

/* The built-in kind called name (layers.c, losses.c), or NULL. */
const mxc__nn_kind *mxc__nn_kind_find(const char *name);
/* The accepted kinds, for messages. */
const char *mxc__nn_kind_names(void);

extern const mxc__nn_kind mxc__nn_loss_kinds[];

/* The recurrent layers "lstm" and "gru" (rnn_layers.c). */
int mxc__nn_rnn_setup(mxc__block *b);
int mxc__nn_rnn_forward(mxc__block *b, int n_in, mxc__ndarray *const *in,
                        mxc__ndarray **out);
int mxc__nn_rnn_symbol(const mxc__block *b, struct mxc__symbol *in,
                       struct mxc__symbol **out);
extern const char *const mxc__nn_rnn_keys[];
extern const int mxc__nn_n_loss_kinds;

/* The value given for key, else dflt. */
const char *mxc__nn_cfg(const mxc__block *b, const char *key,
                        const char *dflt);
/* The value of key as an integer in [lo, hi] (dflt when not given);
 * MXC_ERR_INVALID_ARGUMENT naming the block and key otherwise. */
int mxc__nn_cfg_int(const mxc__block *b, const char *key, int64_t dflt,
                    int64_t lo, int64_t hi, int64_t *out);
/* The value of key as a boolean ("1"/"0"/"true"/"false"). */
int mxc__nn_cfg_bool(const mxc__block *b, const char *key, int dflt,
                     int *out);

/* Sets b's main operator and parameter strings (copied), checked by
 * parsing them once. */
int mxc__nn_set_op(mxc__block *b, const char *op, int n,
                   const char *const *keys, const char *const *vals);

/* Runs b's main operator on in[0..n_in) then its activation, if any. */
int mxc__nn_run_op(mxc__block *b, int n_in, mxc__ndarray *const *in,
                   mxc__ndarray **out);

/* The activation a layer's "activation" key names: NULL for none, else
 * the act_type (a static string); MXC_ERR_INVALID_ARGUMENT otherwise. */
int mxc__nn_activation(mxc__block *b, const char **out);

/* A variable symbol for parameter p (made), named as p, with its
 * __shape__ and __dtype__ (export.c). */
int mxc__nn_param_var(const mxc__nn_param *p, struct mxc__symbol **out);

#endif /* MXC_CORE_NN_INTERNAL_H_ */
