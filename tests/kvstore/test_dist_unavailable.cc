// "dist_sync" where it cannot run is MXC_ERR_UNSUPPORTED saying why, and
// the library keeps working ("local" stores). BUILD runs this binary once
// per reason: MXC_TEST_WHY holds the words the message must contain.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "mxc/mxc.h"

namespace {

TEST(DistUnavailable, CreateSaysWhy) {
  const char *why = std::getenv("MXC_TEST_WHY");
  ASSERT_NE(why, nullptr);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the same reason again
    mxc_kvstore kv = nullptr;
    EXPECT_EQ(mxc_kvstore_create("dist_sync", &kv), MXC_ERR_UNSUPPORTED);
    std::string msg = mxc_last_error();
    EXPECT_NE(msg.find(why), std::string::npos) << msg;
    EXPECT_NE(msg.find("mxc_kvstore_create: type \"dist_sync\" cannot be "
                       "used"),
              std::string::npos)
        << msg;
    EXPECT_EQ(kv, nullptr);
  }
  mxc_kvstore kv = nullptr;
  ASSERT_EQ(mxc_kvstore_create("local", &kv), MXC_OK) << mxc_last_error();
  mxc_kvstore_free(kv);
}

}  // namespace
