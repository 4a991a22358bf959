// Expansion of unit records (the compact form of trace files) into Records.
#include <gtest/gtest.h>

#include "cltrace/unit_record.h"

using namespace cltrace;

namespace {

// 0: load of 4 bytes in two loops; 1: memcpy-style store of dynamic size, no loop;
// 2: barrier with dynamic fence flags (read fence constant) in one loop; 3: load in 8 loops.
std::vector<InstructionShape> shapes() {
  return {{AccessKind::Load, 4, 0, 2, DynamicWord::None},
          {AccessKind::Store, 0, 0, 0, DynamicWord::Size},
          {AccessKind::Barrier, 0, kFenceRead, 1, DynamicWord::FenceFlags},
          {AccessKind::Load, 8, 0, 8, DynamicWord::None}};
}

}  // namespace

TEST(UnitRecord, WordsAndUnitsPerShape) {
  auto s = shapes();
  EXPECT_EQ(unitRecordWords(s[0]), 5u);  // lo hi id c0 c1
  EXPECT_EQ(unitRecordUnits(s[0]), 2u);
  EXPECT_EQ(unitRecordWords(s[1]), 4u);  // lo hi id size
  EXPECT_EQ(unitRecordUnits(s[1]), 1u);
  EXPECT_EQ(unitRecordWords(s[2]), 5u);  // lo hi id flags c0
  EXPECT_EQ(unitRecordUnits(s[2]), 2u);
  EXPECT_EQ(unitRecordWords(s[3]), 10u);  // lo hi id + 7 counters
  EXPECT_EQ(unitRecordUnits(s[3]), 3u);
  EXPECT_EQ(unitRecordUnits({AccessKind::Load, 4, 0, 1, DynamicWord::None}), 1u);
}

TEST(UnitRecord, ExpandsEveryShapeExactly) {
  const std::vector<uint32_t> words = {
      0x1000, 0x7, 0, 3, /**/ 9, 0, 0, 0,                    // instruction 0: 0x7'00001000, (3, 9)
      0x2000, 0, 1, 640,                                     // instruction 1: 640 bytes
      0, 0, 2, kFenceGlobal | 0xF0, /**/ 5, 0, 0, 0,         // instruction 2: global fence, loop 5
      0x40, 0, 3, 1, /**/ 2, 3, 4, 5, /**/ 6, 7, 0, 0};      // instruction 3: 7 outermost counters
  std::vector<Record> out;
  std::string error;
  ASSERT_TRUE(UnitRecordDecoder(shapes()).expand(words.data(), 8, out, error)) << error;
  ASSERT_EQ(out.size(), 4u);

  EXPECT_EQ(out[0].address, 0x700001000ull);
  EXPECT_EQ(out[0].instruction, 0u);
  EXPECT_EQ(out[0].size, 4u);
  EXPECT_EQ(out[0].kind, uint8_t(AccessKind::Load));
  EXPECT_EQ(out[0].flags, 0u);
  EXPECT_EQ(out[0].depth, 2u);
  EXPECT_EQ(out[0].iterations[0], 3u);
  EXPECT_EQ(out[0].iterations[1], 9u);
  EXPECT_EQ(out[0].iterations[2], 0u);

  EXPECT_EQ(out[1].address, 0x2000u);
  EXPECT_EQ(out[1].size, 640u);
  EXPECT_EQ(out[1].kind, uint8_t(AccessKind::Store));
  EXPECT_EQ(out[1].depth, 0u);

  EXPECT_EQ(out[2].kind, uint8_t(AccessKind::Barrier));
  EXPECT_EQ(out[2].size, 0u);
  EXPECT_EQ(out[2].flags, kFenceRead | kFenceGlobal);  // only the local/global bits are dynamic
  EXPECT_EQ(out[2].depth, 1u);
  EXPECT_EQ(out[2].iterations[0], 5u);

  EXPECT_EQ(out[3].address, 0x40u);
  EXPECT_EQ(out[3].depth, 8u);
  EXPECT_EQ(out[3].flags, kRecordDepthTruncated);
  for (uint32_t i = 0; i < kMaxLoopDepth; ++i) EXPECT_EQ(out[3].iterations[i], i + 1);
}

TEST(UnitRecord, RejectsUnknownInstructionsAndRecordsPastTheEnd) {
  std::vector<Record> out;
  std::string error;
  const std::vector<uint32_t> unknown = {0, 0, 4, 0};
  EXPECT_FALSE(UnitRecordDecoder(shapes()).expand(unknown.data(), 1, out, error));
  EXPECT_EQ(error, "record at unit 0 names instruction 4, but the kernel has 4");
  const std::vector<uint32_t> cut = {0x1000, 0, 0, 3};  // instruction 0 needs 2 units
  EXPECT_FALSE(UnitRecordDecoder(shapes()).expand(cut.data(), 1, out, error));
  EXPECT_EQ(error, "record of instruction 0 at unit 0 runs past the work-item's 1 units");
  EXPECT_TRUE(out.empty());
}
