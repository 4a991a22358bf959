#include "cltrace/packed_record.h"

#include <algorithm>

namespace cltrace {

PackedRecordUnpacker::PackedRecordUnpacker(std::vector<PackedShape> shapes, std::vector<uint64_t> argumentAddresses)
    : argumentAddresses_(std::move(argumentAddresses)) {
  for (const PackedShape& p : shapes) {
    const uint32_t addressWords = packedAddressWords(p);
    const bool known = addressWords != 1 || (p.bufferArgument >= 0 && size_t(p.bufferArgument) < argumentAddresses_.size());
    layouts_.push_back({packedRecordUnits(p), unitRecordUnits(p.shape) * kUnitWords, addressWords,
                        unitRecordWords(p.shape) - 3, p.bufferArgument, known});
  }
}

bool PackedRecordUnpacker::unpack(const uint32_t* words, uint64_t units, std::vector<uint32_t>& out,
                                  uint64_t& records, std::string& error) const {
  // Checks every record and sizes `out` once, then fills it.
  uint64_t outWords = 0;
  for (uint64_t unit = 0; unit < units;) {
    const uint32_t id = words[unit * kPackedUnitWords];
    if (id >= layouts_.size()) return unknownInstruction("packed record", id, layouts_.size(), unit, error);
    const Layout& l = layouts_[id];
    if (units - unit < l.packedUnits) return recordPastEnd("packed record", id, unit, units, error);
    if (!l.argumentKnown) {
      error = "instruction " + std::to_string(id) + " addresses argument " + std::to_string(l.argument) +
              ", which has no device address";
      return false;
    }
    outWords += l.unitWords;
    unit += l.packedUnits;
    ++records;
  }
  const size_t start = out.size();
  out.resize(start + outWords, 0);
  uint32_t* u = out.data() + start;
  for (uint64_t unit = 0; unit < units;) {
    const uint32_t* w = words + unit * kPackedUnitWords;
    const Layout& l = layouts_[w[0]];
    uint64_t address = 0;
    if (l.addressWords == 2)
      address = uint64_t(w[1]) | uint64_t(w[2]) << 32;
    else if (l.addressWords == 1)
      address = argumentAddresses_[l.argument] + w[1];
    u[0] = static_cast<uint32_t>(address);
    u[1] = static_cast<uint32_t>(address >> 32);
    u[2] = w[0];
    // The dynamic word and the loop counters follow in the same order in both forms.
    std::copy(w + 1 + l.addressWords, w + 1 + l.addressWords + l.restWords, u + 3);
    u += l.unitWords;
    unit += l.packedUnits;
  }
  return true;
}

}  // namespace cltrace
