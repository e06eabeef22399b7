#include "core/resource/training.h"

_Thread_local int mxc__tls_training;

int mxc__set_training(int is_train) {
  int prev = mxc__tls_training;
  mxc__tls_training = is_train ? 1 : 0;
  return prev;
}

