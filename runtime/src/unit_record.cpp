#include "cltrace/unit_record.h"

namespace cltrace {

bool unknownInstruction(const char* form, uint32_t id, size_t instructions, uint64_t unit, std::string& error) {
  error = std::string(form) + " at unit " + std::to_string(unit) + " names instruction " + std::to_string(id) +
          ", but the kernel has " + std::to_string(instructions);
  return false;
}

bool recordPastEnd(const char* form, uint32_t id, uint64_t unit, uint64_t units, std::string& error) {
  error = std::string(form) + " of instruction " + std::to_string(id) + " at unit " + std::to_string(unit) +
          " runs past the work-item's " + std::to_string(units) + " units";
  return false;
}

bool UnitRecordDecoder::expand(const uint32_t* words, uint64_t units, std::vector<Record>& out,
                                 std::string& error) const {
  return forEach(
      words, units,
      [&](const uint32_t* w, const InstructionShape& s) {
        // Filled in place: a Record built on the stack and copied in is read back with wide
        // loads right after its narrow field stores, which cannot forward (a stall per record).
        Record& r = out.emplace_back();
        r.address = uint64_t(w[0]) | uint64_t(w[1]) << 32;
        r.instruction = w[2];
        r.size = s.size;
        r.kind = static_cast<uint8_t>(s.kind);
        r.flags = s.flags;
        r.depth = static_cast<uint8_t>(std::min<uint32_t>(s.depth, 255));
        const uint32_t* next = w + 3;
        if (s.dynamic == DynamicWord::Size) r.size = *next++;
        if (s.dynamic == DynamicWord::FenceFlags)
          r.flags |= static_cast<uint8_t>(*next++ & (kFenceLocal | kFenceGlobal));
        if (s.depth > kMaxLoopDepth) r.flags |= kRecordDepthTruncated;
        for (uint32_t i = 0; i < std::min(s.depth, kMaxLoopDepth); ++i) r.iterations[i] = next[i];
      },
      error);
}

}  // namespace cltrace
