// Internal assertions (core/base/assert.h): active when configured, a
// no-op that does not even evaluate its condition otherwise, and the
// library itself built with them exactly when the configuration says so.
#include <gtest/gtest.h>

#include "core/base/assert.h"
#include "tests/base/assert_probe.h"

TEST(Assert, OnPassesAndEvaluatesOnce) {
  int evaluated = 0;
  mxct_assert_on(1, &evaluated);
  EXPECT_EQ(evaluated, 1);
}

TEST(AssertDeathTest, OnAbortsWithPositionConditionAndMessage) {
  int evaluated = 0;
  EXPECT_DEATH(mxct_assert_on(0, &evaluated),
               "assert_on\\.c:[0-9]+: mxc internal assertion failed: "
               ".*cond.*: probe message");
}

TEST(Assert, OffNeverEvaluatesNorAborts) {
  int evaluated = 0;
  mxct_assert_off(0, &evaluated);
  mxct_assert_off(1, &evaluated);
  EXPECT_EQ(evaluated, 0);
}

// This file is compiled with the configuration's flags, like the library:
// -c opt adds -DNDEBUG, --config=asan and --config=debug add -DMXC_ASSERTS.
TEST(Assert, LibraryFollowsTheConfiguration) {
#if defined(MXC_ASSERTS) || !defined(NDEBUG)
  EXPECT_EQ(mxc__asserts_enabled(), 1);
#else
  EXPECT_EQ(mxc__asserts_enabled(), 0);
#endif
}
