/* MXC__ASSERT compiled with assertions forced off (see BUILD). */
#include "tests/base/assert_probe.h"

#include "core/base/assert.h"

#if defined(MXC_ASSERTS)
#error "this file must be compiled with assertions off"
#endif

void mxct_assert_off(int cond, int *evaluated) {
  MXC__ASSERT((++*evaluated, cond));
}
