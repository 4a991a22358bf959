// Unit records: the compact form in which trace files (format 2) hold records.
//
// A Record (record.h) is 48 bytes, but most of it is known per instruction before the kernel
// runs: kind, size, flags and loop depth. A unit record holds only what changes per access,
// as 1 to 3 units of 16 bytes (four little-endian u32 words each):
//
//   word 0, 1   address, low and high half (0 for barriers and fences)
//   word 2      instruction id
//   [word 3]    the dynamic word, only for instructions that have one: the byte count of an
//               access whose size is not a constant (memcpy/memset), or the fence flags of a
//               barrier/fence whose flags argument is not a constant
//   then        min(depth, kMaxLoopDepth) loop counters, outermost first
//   padding     zero words up to the end of the last unit
//
// A loop-free access takes one unit (16 bytes), an access in one loop also one, two to five
// loops two, deeper three. The trace kernel writes the still smaller packed records
// (packed_record.h), which the host unpacks into unit records.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cltrace/record.h"

namespace cltrace {

inline constexpr uint32_t kUnitBytes = 16;
inline constexpr uint32_t kUnitWords = 4;

enum class DynamicWord : uint8_t { None, Size, FenceFlags };

// What the host knows about one instruction before the kernel runs.
struct InstructionShape {
  AccessKind kind = AccessKind::Load;
  uint32_t size = 0;   // static byte count (unused when dynamic == Size)
  uint8_t flags = 0;   // constant flags (fence flags of barriers and fences)
  uint32_t depth = 0;  // enclosing loops (may exceed kMaxLoopDepth)
  DynamicWord dynamic = DynamicWord::None;
};

inline uint32_t unitRecordWords(const InstructionShape& s) {
  return 3 + (s.dynamic != DynamicWord::None ? 1 : 0) + std::min(s.depth, kMaxLoopDepth);
}
inline uint32_t unitRecordUnits(const InstructionShape& s) {
  return (unitRecordWords(s) + kUnitWords - 1) / kUnitWords;
}

// The errors every reader of a work-item's records reports (out of line: the checks are on the
// hot path, the messages are not); `form` names the records. Both set `error` and return false.
// The record at `unit` names instruction `id`, but the kernel has only `instructions`.
bool unknownInstruction(const char* form, uint32_t id, size_t instructions, uint64_t unit, std::string& error);
// The record of instruction `id` at `unit` runs past the work-item's `units`.
bool recordPastEnd(const char* form, uint32_t id, uint64_t unit, uint64_t units, std::string& error);

// Expands unit records into Records for the instructions of one kernel.
class UnitRecordDecoder {
 public:
  explicit UnitRecordDecoder(std::vector<InstructionShape> shapes) : shapes_(std::move(shapes)) {}
  const std::vector<InstructionShape>& shapes() const { return shapes_; }

  // Appends the Records held in `units` units at `words` (one work-item's) to `out`. Returns
  // false with `error` set when a record names an unknown instruction or runs past the end.
  bool expand(const uint32_t* words, uint64_t units, std::vector<Record>& out, std::string& error) const;
  // Calls visit(words of the record, its shape) for each record in `units` units at `words`,
  // in order; the same errors as expand. Word is uint32_t (visit may change the words) or
  // const uint32_t.
  template <typename Word, typename Visit>
  bool forEach(Word* words, uint64_t units, Visit&& visit, std::string& error) const {
    uint64_t unit = 0;
    while (unit < units) {
      Word* w = words + unit * kUnitWords;
      const uint32_t id = w[2];
      if (id >= shapes_.size()) return unknownInstruction("record", id, shapes_.size(), unit, error);
      const InstructionShape& s = shapes_[id];
      const uint32_t length = unitRecordUnits(s);
      if (units - unit < length) return recordPastEnd("record", id, unit, units, error);
      visit(w, s);
      unit += length;
    }
    return true;
  }

 private:
  std::vector<InstructionShape> shapes_;
};

}  // namespace cltrace
