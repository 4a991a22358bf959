// Device records: the compact form in which the trace pass writes records on the device.
//
// A Record (record.h) is 48 bytes, but most of it is known per instruction before the kernel
// runs: kind, size, flags and loop depth. The trace pass writes only what changes per access,
// as 1 to 3 units of 16 bytes (four little-endian u32 words each; whole units keep the stores
// 16-byte vector stores):
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
// loops two, deeper three. The count pass counts units, so the host's prefix sum places every
// work-item's units (after the sink, below); the host expands them to Records with the
// instructions' shapes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cltrace/record.h"

namespace cltrace {

inline constexpr uint32_t kDeviceUnitBytes = 16;
inline constexpr uint32_t kDeviceUnitWords = 4;
// A record that does not fit in its work-item's counted units (the trace run took another path
// than the count run) is written to units 0..2 of the record buffer instead, so the stores need
// no branch; the host starts the work-items' units after this sink and reports the mismatch.
inline constexpr uint32_t kDeviceSinkUnits = 3;

enum class DynamicWord : uint8_t { None, Size, FenceFlags };

// What the host knows about one instruction before the kernel runs.
struct InstructionShape {
  AccessKind kind = AccessKind::Load;
  uint32_t size = 0;   // static byte count (unused when dynamic == Size)
  uint8_t flags = 0;   // constant flags (fence flags of barriers and fences)
  uint32_t depth = 0;  // enclosing loops (may exceed kMaxLoopDepth)
  DynamicWord dynamic = DynamicWord::None;
};

inline uint32_t deviceRecordWords(const InstructionShape& s) {
  return 3 + (s.dynamic != DynamicWord::None ? 1 : 0) + std::min(s.depth, kMaxLoopDepth);
}
inline uint32_t deviceRecordUnits(const InstructionShape& s) {
  return (deviceRecordWords(s) + kDeviceUnitWords - 1) / kDeviceUnitWords;
}

// Expands device records into Records for the instructions of one kernel.
class DeviceRecordDecoder {
 public:
  explicit DeviceRecordDecoder(std::vector<InstructionShape> shapes) : shapes_(std::move(shapes)) {}
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
      Word* w = words + unit * kDeviceUnitWords;
      const uint32_t id = w[2];
      if (id >= shapes_.size()) {
        error = "device record at unit " + std::to_string(unit) + " names instruction " + std::to_string(id) +
                ", but the kernel has " + std::to_string(shapes_.size());
        return false;
      }
      const InstructionShape& s = shapes_[id];
      const uint32_t length = deviceRecordUnits(s);
      if (units - unit < length) {
        error = "device record of instruction " + std::to_string(id) + " at unit " + std::to_string(unit) +
                " runs past the work-item's " + std::to_string(units) + " units";
        return false;
      }
      visit(w, s);
      unit += length;
    }
    return true;
  }

 private:
  std::vector<InstructionShape> shapes_;
};

}  // namespace cltrace
