// Unpacking the trace kernel's packed records into unit records.
#include <gtest/gtest.h>

#include "cltrace/packed_record.h"

using namespace cltrace;

namespace {

// 0: 4-byte load from argument 1, no loop; 1: 8-byte store to argument 0 in two loops;
// 2: load of unknown origin in one loop; 3: barrier with dynamic fence flags;
// 4: memcpy-style store of dynamic size to argument 1; 5: load from argument 0 in 8 loops.
std::vector<PackedShape> shapes() {
  return {{{AccessKind::Load, 4, 0, 0, DynamicWord::None}, 1},
          {{AccessKind::Store, 8, 0, 2, DynamicWord::None}, 0},
          {{AccessKind::Load, 4, 0, 1, DynamicWord::None}, kFullAddress},
          {{AccessKind::Barrier, 0, kFenceRead, 0, DynamicWord::FenceFlags}, kFullAddress},
          {{AccessKind::Store, 0, 0, 0, DynamicWord::Size}, 1},
          {{AccessKind::Load, 4, 0, 8, DynamicWord::None}, 0}};
}
// Argument 0 at 0x7'0000'1000, argument 1 at 0x2000, argument 2 (a scalar) without one.
const std::vector<uint64_t> kAddresses = {0x700001000, 0x2000, 0};

}  // namespace

TEST(PackedRecord, WordsAndUnitsPerShape) {
  auto s = shapes();
  EXPECT_EQ(packedRecordWords(s[0]), 2u);  // id offset
  EXPECT_EQ(packedRecordUnits(s[0]), 1u);
  EXPECT_EQ(packedRecordWords(s[1]), 4u);  // id offset c0 c1
  EXPECT_EQ(packedRecordUnits(s[1]), 2u);
  EXPECT_EQ(packedRecordWords(s[2]), 4u);  // id lo hi c0
  EXPECT_EQ(packedRecordUnits(s[2]), 2u);
  EXPECT_EQ(packedRecordWords(s[3]), 2u);  // id flags
  EXPECT_EQ(packedRecordUnits(s[3]), 1u);
  EXPECT_EQ(packedRecordWords(s[4]), 3u);  // id offset size
  EXPECT_EQ(packedRecordUnits(s[4]), 2u);
  EXPECT_EQ(packedRecordWords(s[5]), 9u);  // id offset + 7 counters
  EXPECT_EQ(packedRecordUnits(s[5]), 5u);
  // The sink holds the longest record: id, lo, hi, dynamic word and 7 counters.
  EXPECT_EQ(kPackedSinkUnits, 6u);
}

TEST(PackedRecord, UnpacksEveryShapeIntoUnitRecords) {
  const std::vector<uint32_t> packed = {
      0, 0x10,                         // 0: argument 1 + 0x10
      1, 0x28, /**/ 3, 9,              // 1: argument 0 + 0x28, counters (3, 9)
      2, 0x5000, /**/ 0x8, 4,          // 2: 0x8'0000'5000, counter 4
      3, kFenceGlobal,                 // 3: global fence
      4, 0x100, /**/ 640, 0,           // 4: argument 1 + 0x100, 640 bytes
      5, 0x4, /**/ 1, 2, /**/ 3, 4, /**/ 5, 6, /**/ 7, 0};  // 5: argument 0 + 4, 7 counters
  std::vector<uint32_t> out;
  uint64_t records = 1;
  std::string error;
  PackedRecordUnpacker unpacker(shapes(), kAddresses);
  ASSERT_TRUE(unpacker.unpack(packed.data(), packed.size() / kPackedUnitWords, out, records, error)) << error;
  EXPECT_EQ(records, 7u);  // six records added to the one there was
  const std::vector<uint32_t> expected = {
      0x2010, 0, 0, 0,                                  //
      0x1028, 0x7, 1, 3, /**/ 9, 0, 0, 0,               //
      0x5000, 0x8, 2, 4,                                //
      0, 0, 3, kFenceGlobal,                            //
      0x2100, 0, 4, 640,                                //
      0x1004, 0x7, 5, 1, /**/ 2, 3, 4, 5, /**/ 6, 7, 0, 0};
  EXPECT_EQ(out, expected);
}

TEST(PackedRecord, RejectsUnknownInstructionsCutRecordsAndMissingArguments) {
  std::vector<uint32_t> out;
  uint64_t records = 0;
  std::string error;
  PackedRecordUnpacker unpacker(shapes(), kAddresses);
  const std::vector<uint32_t> unknown = {6, 0};
  EXPECT_FALSE(unpacker.unpack(unknown.data(), 1, out, records, error));
  EXPECT_EQ(error, "packed record at unit 0 names instruction 6, but the kernel has 6");
  const std::vector<uint32_t> cut = {0, 0, 1, 0};
  EXPECT_FALSE(unpacker.unpack(cut.data(), 2, out, records, error));
  EXPECT_EQ(error, "packed record of instruction 1 at unit 1 runs past the work-item's 2 units");
  PackedRecordUnpacker noAddresses(shapes(), {0x1000});
  const std::vector<uint32_t> second = {0, 8};
  EXPECT_FALSE(noAddresses.unpack(second.data(), 1, out, records, error));
  EXPECT_EQ(error, "instruction 0 addresses argument 1, which has no device address");
}
