#include "cltrace/packed_record.h"

#include <algorithm>

namespace cltrace {

PackedRecordUnpacker::PackedRecordUnpacker(std::vector<PackedShape> shapes, std::vector<uint64_t> argumentAddresses)
    : shapes_(std::move(shapes)), argumentAddresses_(std::move(argumentAddresses)) {}

bool PackedRecordUnpacker::unpack(const uint32_t* words, uint64_t units, std::vector<uint32_t>& out,
                                  std::string& error) const {
  uint64_t unit = 0;
  while (unit < units) {
    const uint32_t* w = words + unit * kPackedUnitWords;
    const uint32_t id = w[0];
    if (!knownInstruction("packed record", id, shapes_.size(), unit, error)) return false;
    const PackedShape& p = shapes_[id];
    const uint32_t length = packedRecordUnits(p);
    if (!recordFits("packed record", id, length, unit, units, error)) return false;
    uint64_t address = 0;
    const uint32_t* next = w + 1;
    if (packedAddressWords(p) == 2) {
      address = uint64_t(next[0]) | uint64_t(next[1]) << 32;
      next += 2;
    } else if (packedAddressWords(p) == 1) {
      if (p.bufferArgument < 0 || size_t(p.bufferArgument) >= argumentAddresses_.size()) {
        error = "instruction " + std::to_string(id) + " addresses argument " + std::to_string(p.bufferArgument) +
                ", which has no device address";
        return false;
      }
      address = argumentAddresses_[p.bufferArgument] + *next++;
    }
    const size_t start = out.size();
    out.resize(start + size_t(unitRecordUnits(p.shape)) * kUnitWords, 0);
    uint32_t* u = out.data() + start;
    u[0] = static_cast<uint32_t>(address);
    u[1] = static_cast<uint32_t>(address >> 32);
    u[2] = id;
    // The dynamic word and the loop counters follow in the same order in both forms.
    const uint32_t rest = unitRecordWords(p.shape) - 3;
    std::copy(next, next + rest, u + 3);
    unit += length;
  }
  return true;
}

}  // namespace cltrace
