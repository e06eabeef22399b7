/* TensorBoard event files of scalars (tboard.c describes the format).
 * Thread-safety: one writer per thread at a time. */
#ifndef MXC_CORE_NN_TBOARD_H_
#define MXC_CORE_NN_TBOARD_H_

#include <stdint.h>

typedef struct mxc__tb mxc__tb;

/* Creates dir if missing (one level) and a new event file in it, which
 * starts with the file_version event. */
int mxc__tb_open(const char *dir, mxc__tb **out);
void mxc__tb_close(mxc__tb *t); /* accepts NULL */

/* Appends one scalar event (tag: a few hundred bytes at most). */
int mxc__tb_scalar(mxc__tb *t, const char *tag, int64_t step, float value);
int mxc__tb_flush(mxc__tb *t);

#endif /* MXC_CORE_NN_TBOARD_H_ */
