/* The per-thread training mode that operators read from their context
 * (Dropout drops and BatchNorm uses batch statistics only in training).
 * Autograd's record scopes and the executor's forward(is_train) set it
 * around their calls; invoke copies it into each pushed call, so a
 * kernel sees the mode of the thread that pushed it.
 *
 * Thread-safety: per thread; no locking. */
#ifndef MXC_CORE_RESOURCE_TRAINING_H_
#define MXC_CORE_RESOURCE_TRAINING_H_

/* Sets this thread's mode (nonzero: training) and returns the previous
 * one. The default is 0 (inference). */
int mxc__set_training(int is_train);

int mxc__is_training(void);

#endif /* MXC_CORE_RESOURCE_TRAINING_H_ */
