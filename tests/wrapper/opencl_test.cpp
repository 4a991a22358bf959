// Helpers of wrapper/opencl.h that need no device.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cltrace/wrapper/opencl.h"

using namespace cltrace::wrapper;

TEST(HighestSpirvMinor, ReadsTheIlVersionList) {
  EXPECT_EQ(highestSpirvMinor("SPIR-V_1.0"), 0);
  EXPECT_EQ(highestSpirvMinor("SPIR-V_1.2 SPIR-V_1.0 SPIR-V_1.1"), 2);
  // Newer than llvm-spirv-15 writes: capped at 1.4.
  EXPECT_EQ(highestSpirvMinor("SPIR-V_1.0 SPIR-V_1.5 SPIR-V_1.6"), 4);
  // No SPIR-V at all, or nothing readable.
  EXPECT_EQ(highestSpirvMinor(""), -1);
  EXPECT_EQ(highestSpirvMinor("SPIR-V_2.0"), -1);
  EXPECT_EQ(highestSpirvMinor("SPIR-V_1.x"), -1);
  EXPECT_EQ(highestSpirvMinor("SPIR-V_1.99999"), -1);
}

// The suites also run behind tests/e2e/il_device_layer, with CLTRACE_EXPECT_PROGRAM_FORMAT=spirv:
// then the default device must take SPIR-V, or those runs would prove nothing.
TEST(DefaultDevice, TakesTheProgramFormatTheRunExpects) {
  const char* expected = std::getenv("CLTRACE_EXPECT_PROGRAM_FORMAT");
  if (!expected) GTEST_SKIP() << "CLTRACE_EXPECT_PROGRAM_FORMAT not set";
  ProgramFormat format = programFormatOf(defaultDevice());
  EXPECT_EQ(std::string(expected) == "spirv" ? ProgramFormat::SpirV : ProgramFormat::Spir, format)
      << describeProgramFormat(format);
}
