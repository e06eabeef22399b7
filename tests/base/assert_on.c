/* MXC__ASSERT compiled with assertions forced on (see BUILD). */
#include "tests/base/assert_probe.h"

#include "core/base/assert.h"

#if !defined(MXC_ASSERTS)
#error "this file must be compiled with assertions on"
#endif

void mxct_assert_on(int cond, int *evaluated) {
  MXC__ASSERT_MSG((++*evaluated, cond), "probe message");
}
