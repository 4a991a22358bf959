#include "cltrace/device_record.h"

namespace cltrace {

bool DeviceRecordDecoder::expand(const uint32_t* words, uint64_t units, std::vector<Record>& out,
                                 std::string& error) const {
  uint64_t unit = 0;
  while (unit < units) {
    const uint32_t* w = words + unit * kDeviceUnitWords;
    uint32_t id = w[2];
    if (id >= shapes_.size()) {
      error = "device record at unit " + std::to_string(unit) + " names instruction " + std::to_string(id) +
              ", but the kernel has " + std::to_string(shapes_.size());
      return false;
    }
    const InstructionShape& s = shapes_[id];
    uint32_t length = deviceRecordUnits(s);
    if (units - unit < length) {
      error = "device record of instruction " + std::to_string(id) + " at unit " + std::to_string(unit) +
              " runs past the work-item's " + std::to_string(units) + " units";
      return false;
    }
    Record r{};
    r.address = uint64_t(w[0]) | uint64_t(w[1]) << 32;
    r.instruction = id;
    r.size = s.size;
    r.kind = static_cast<uint8_t>(s.kind);
    r.flags = s.flags;
    r.depth = static_cast<uint8_t>(std::min<uint32_t>(s.depth, 255));
    const uint32_t* next = w + 3;
    if (s.dynamic == DynamicWord::Size) r.size = *next++;
    if (s.dynamic == DynamicWord::FenceFlags) r.flags |= static_cast<uint8_t>(*next++ & (kFenceLocal | kFenceGlobal));
    if (s.depth > kMaxLoopDepth) r.flags |= kRecordDepthTruncated;
    for (uint32_t i = 0; i < std::min(s.depth, kMaxLoopDepth); ++i) r.iterations[i] = next[i];
    out.push_back(r);
    unit += length;
  }
  return true;
}

}  // namespace cltrace
