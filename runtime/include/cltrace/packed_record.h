// Packed records: the form in which the trace kernel writes records on the device.
//
// Writing records is most of the trace run's time, so the device writes as few bytes as it
// can; the host unpacks them into unit records (unit_record.h) while it streams them to the
// file. A packed record is 1 to 6 units of 8 bytes (two little-endian u32 words each):
//
//   word 0      instruction id
//   then        the address: one word, the byte offset into the buffer argument the pointer
//               derives from, when the trace pass knows that argument (the count run has
//               checked the access lies inside it, so the offset fits below its size); two
//               words, the address's low and high halves, for other memory accesses; none
//               for barriers and fences
//   [word]      the dynamic word, as in unit records (size of memcpy/memset, fence flags)
//   then        min(depth, kMaxLoopDepth) loop counters, outermost first
//   padding     zero words up to the end of the last unit
//
// A loop-free access to a known buffer takes 8 bytes, half its unit record; one in a loop or
// two 16 bytes. The count pass counts packed units, so the host's prefix sum places every
// work-item's units (after the sink, below).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cltrace/unit_record.h"

namespace cltrace {

inline constexpr uint32_t kPackedUnitBytes = 8;
inline constexpr uint32_t kPackedUnitWords = 2;
// The argument a record's address is an offset into; kFullAddress: the record holds the address.
inline constexpr int32_t kFullAddress = -1;

// What the host knows about how one instruction's records are packed.
struct PackedShape {
  InstructionShape shape;
  int32_t bufferArgument = kFullAddress;
};

inline uint32_t packedAddressWords(const PackedShape& p) {
  if (!isMemoryAccess(p.shape.kind)) return 0;
  return p.bufferArgument == kFullAddress ? 2 : 1;
}
inline uint32_t packedRecordWords(const PackedShape& p) {
  return 1 + packedAddressWords(p) + (p.shape.dynamic != DynamicWord::None ? 1 : 0) +
         std::min(p.shape.depth, kMaxLoopDepth);
}
inline uint32_t packedRecordUnits(const PackedShape& p) {
  return (packedRecordWords(p) + kPackedUnitWords - 1) / kPackedUnitWords;
}
// A record that does not fit in its work-item's counted units (the trace run took another path
// than the count run) is written to the first units of the record buffer instead, so the stores
// need no branch; the host starts the work-items' units after this sink and reports the mismatch.
inline constexpr uint32_t kPackedSinkUnits = (1 + 2 + 1 + kMaxLoopDepth + kPackedUnitWords - 1) / kPackedUnitWords;

// Unpacks one launch's packed records into unit records.
class PackedRecordUnpacker {
 public:
  // `argumentAddresses[i]`: the address of the buffer bound to kernel argument i (on the device,
  // or already in the trace's virtual layout); offsets are added to it.
  PackedRecordUnpacker(std::vector<PackedShape> shapes, std::vector<uint64_t> argumentAddresses);

  // Appends the unit records of the `units` packed units at `words` (one work-item's) to `out`
  // and adds their number to `records`. Returns false with `error` set when a record names an
  // unknown instruction, runs past the end, or names an argument without an address.
  bool unpack(const uint32_t* words, uint64_t units, std::vector<uint32_t>& out, uint64_t& records,
              std::string& error) const;

 private:
  // Per instruction, what unpacking one of its records takes (from its PackedShape).
  struct Layout {
    uint32_t packedUnits = 0;   // units it takes packed
    uint32_t unitWords = 0;     // words its unit record takes
    uint32_t addressWords = 0;  // 0, 1 (an offset into `argument`) or 2
    uint32_t restWords = 0;     // dynamic word and loop counters
    int32_t argument = kFullAddress;
    bool argumentKnown = true;  // false: an offset into an argument without an address
  };
  std::vector<Layout> layouts_;
  std::vector<uint64_t> argumentAddresses_;
};

}  // namespace cltrace
