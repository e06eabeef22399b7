#include "core/resource/training.h"

static _Thread_local int tls_training;

int mxc__set_training(int is_train) {
  int prev = tls_training;
  tls_training = is_train ? 1 : 0;
  return prev;
}

int mxc__is_training(void) { return tls_training; }
