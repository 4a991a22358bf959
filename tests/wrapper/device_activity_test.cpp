#include "cltrace/wrapper/device_activity.h"

#include <gtest/gtest.h>

namespace {

int gHookCalls = 0;
const cltrace::wrapper::DeviceActivityNote* gSeenByHook = nullptr;
void countHook() {
  ++gHookCalls;
  gSeenByHook = cltrace::wrapper::deviceActivity();
}

}  // namespace

// The latest activity still set is the one given; none once all are gone.
TEST(DeviceActivity, LatestStillSetIsGiven) {
  using cltrace::wrapper::DeviceActivity;
  EXPECT_EQ(cltrace::wrapper::deviceActivity(), nullptr);
  {
    DeviceActivity count("the count run of kernel 'k'");
    ASSERT_NE(cltrace::wrapper::deviceActivity(), nullptr);
    EXPECT_STREQ(cltrace::wrapper::deviceActivity()->text, "the count run of kernel 'k'");
    EXPECT_EQ(cltrace::wrapper::deviceActivity()->partialFile, nullptr);
    {
      DeviceActivity trace("the trace run of kernel 'k'", "/tmp/k.partial");
      EXPECT_STREQ(cltrace::wrapper::deviceActivity()->text, "the trace run of kernel 'k'");
      EXPECT_STREQ(cltrace::wrapper::deviceActivity()->partialFile, "/tmp/k.partial");
    }
    EXPECT_STREQ(cltrace::wrapper::deviceActivity()->text, "the count run of kernel 'k'");
  }
  EXPECT_EQ(cltrace::wrapper::deviceActivity(), nullptr);
}

// The start hook runs once per activity, before it is set (a crash reporter puts its signal
// handlers back there, before the driver runs anything).
TEST(DeviceActivity, StartHookRunsBeforeEachActivity) {
  using cltrace::wrapper::DeviceActivity;
  gHookCalls = 0;
  cltrace::wrapper::setDeviceActivityStartHook(countHook);
  {
    DeviceActivity one("the count run of kernel 'a'");
    EXPECT_EQ(gHookCalls, 1);
    EXPECT_EQ(gSeenByHook, nullptr);
    DeviceActivity two("the trace run of kernel 'a'");
    EXPECT_EQ(gHookCalls, 2);
    ASSERT_NE(gSeenByHook, nullptr);
    EXPECT_STREQ(gSeenByHook->text, "the count run of kernel 'a'");
  }
  cltrace::wrapper::setDeviceActivityStartHook(nullptr);
  { DeviceActivity three("the count run of kernel 'b'"); }
  EXPECT_EQ(gHookCalls, 2);
}
