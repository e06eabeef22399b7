/* fit(): a training loop over data iterators (the internal half of
 * "Training loops" in mxc.h). A fit object holds the network, its loss,
 * its optimizer, the configuration and
 * the progress (epochs and updates done, the early-stopping state), so
 * that a checkpoint holds everything a resumed run needs: parameters,
 * optimizer states, progress and the random stream's position.
 * Thread-safety: one thread at a time, like the blocks it trains. */
#ifndef MXC_CORE_NN_FIT_H_
#define MXC_CORE_NN_FIT_H_

#include "core/io/iter.h"
#include "core/kvstore/kvstore.h"
#include "core/nn/nn.h"

typedef struct mxc__fit mxc__fit;

/* Listener events (the values of MXC_FIT_* in mxc.h). */
#define MXC__FIT_BATCH_END 1
#define MXC__FIT_EPOCH_END 2
#define MXC__FIT_TRAIN_END 3

/* Called after each event; a return other than MXC_OK ends the run with
 * that code. */
typedef int (*mxc__fit_fn)(void *user, int event, mxc__fit *f);

/* A fit of net with loss (a block of two inputs) and opt (an optimizer of
 * net), holding a reference to each. Keys: see mxc.h. */
int mxc__fit_create(mxc__block *net, mxc__block *loss, mxc__optimizer *opt,
                    int n, const char *const *keys, const char *const *vals,
                    mxc__fit **out);
void mxc__fit_free(mxc__fit *f); /* accepts NULL */

/* Adds a listener; free_fn(user) runs when f is freed (and on failure). */
int mxc__fit_add_listener(mxc__fit *f, mxc__fit_fn fn, void *user,
                          void (*free_fn)(void *));

/* Trains until `epochs` epochs are done (counting those of a resumed
 * checkpoint), early stopping or mxc__fit_stop. val may be NULL. */
int mxc__fit_run(mxc__fit *f, mxc__iter *train, mxc__iter *val);

/* Trains data-parallel through kv (one more reference; NULL: alone), as
 * mxc_fit_set_kvstore says. */
int mxc__fit_set_kvstore(mxc__fit *f, mxc__kvstore *kv);

/* Ends the run after the current batch (from a listener). */
void mxc__fit_stop(mxc__fit *f);

/* A value by name (see mxc.h); MXC_ERR_NOT_FOUND for others. */
int mxc__fit_value(const mxc__fit *f, const char *name, double *out);

/* Checkpoints (core/nn/fit_ckpt.c): everything a resumed run needs, in
 * one mxc__ndarray_save file. Load checks the whole file against the
 * network before changing anything. */
int mxc__fit_save(mxc__fit *f, const char *path);
int mxc__fit_load(mxc__fit *f, const char *path);

/* The parts of a checkpoint (fit_ckpt.c) and the fit's progress they
 * carry: get != 0 fills p[5] (epochs done, updates done, random seed,
 * random position, epochs without improvement) and v[2] (base rate, best
 * value); get == 0 sets them (and the random stream) from p and v. */
int mxc__fit_save_parts(mxc__fit *f, mxc__block *net, mxc__optimizer *o,
                        const char *path);
int mxc__fit_load_parts(mxc__fit *f, mxc__block *net, mxc__optimizer *o,
                        const char *path);
void mxc__fit_progress(mxc__fit *f, int64_t *p, double *v, int get);

#endif /* MXC_CORE_NN_FIT_H_ */
