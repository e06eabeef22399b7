#include "ops/vision/vision.h"

int mxc__vision_register_prior(mxc__registry *r) {
  (void)r;
  return MXC_OK;
}
