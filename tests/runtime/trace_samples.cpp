#include "trace_samples.h"

#include <algorithm>

namespace cltrace::test {

Record makeRecord(AccessKind kind, uint32_t instruction, uint64_t address, uint32_t size,
                  uint8_t flags, std::initializer_list<uint32_t> iterations) {
  Record r{};
  r.address = address;
  r.instruction = instruction;
  r.size = size;
  r.kind = static_cast<uint8_t>(kind);
  r.flags = flags;
  r.depth = static_cast<uint8_t>(iterations.size());
  uint32_t i = 0;
  for (uint32_t it : iterations) r.iterations[i++] = it;
  return r;
}

TraceHeader sampleHeader(bool compressed) {
  TraceHeader h;
  h.compressed = compressed;
  h.kernelName = "vadd";
  h.sourceHash = 0x0123456789abcdefull;
  h.device = "test-device";
  h.range.dims = 2;
  h.range.global = {4, 2, 1};
  h.range.local = {2, 1, 1};
  h.range.offset = {1, 0, 0};
  h.range.localMemoryBytes = 320;
  h.alignment = 4096;
  h.buffers = {{0, "a", 64, 0x1000}, {2, "out", 32, 0x2000}};
  h.workItemCount = 8;
  h.recordCount = 7;
  return h;
}

WorkItems sampleWorkItems() {
  using K = AccessKind;
  return {
      {makeRecord(K::Load, 0, 0x1000, 4), makeRecord(K::Store, 2, 0x2000, 4, 0, {0})},
      {},
      {makeRecord(K::Load, 0, 0x1004, 4),
       makeRecord(K::Barrier, 1, 0, 0, kFenceLocal | kFenceGlobal)},
      {},
      {makeRecord(K::Atomic, 3, 0x201c, 4, 0, {1, 2})},
      {makeRecord(K::ConstantLoad, 4, 0x9000, 8)},
      {},
      {makeRecord(K::Fence, 5, 0, 0, kFenceGlobal)},
  };
}

uint64_t headerSizeOf(const TraceHeader& h) {
  uint64_t size = 136 + 4 + h.kernelName.size() + 4 + h.device.size() + 4 + 8;
  for (const TraceBuffer& b : h.buffers) size += 4 + 4 + b.name.size() + 8 + 8;
  if (h.version == kTraceFormatUnits) size += 8 + 4 + 12 * h.instructions.size();
  for (const std::string& t : h.instructionTexts) size += 4 + t.size();
  return size;
}

void writeTrace(const std::string& path, const TraceHeader& header, const WorkItems& workItems) {
  TraceWriter writer(path, header);
  for (const auto& records : workItems) writer.writeWorkItem(records);
  writer.close();
}

void writeSample(const std::string& path, bool compressed) {
  writeTrace(path, sampleHeader(compressed), sampleWorkItems());
}

TraceHeader sampleUnitsHeader(bool compressed) {
  using K = AccessKind;
  TraceHeader h = sampleHeader(compressed);
  h.version = kTraceFormatUnits;
  h.instructions = {
      {K::Load, 4, 0, 0, DynamicWord::None},                          // 0
      {K::Barrier, 0, kFenceLocal | kFenceGlobal, 0, DynamicWord::None},  // 1
      {K::Store, 4, 0, 1, DynamicWord::None},                         // 2
      {K::Atomic, 4, 0, 2, DynamicWord::None},                        // 3
      {K::ConstantLoad, 8, 0, 0, DynamicWord::None},                  // 4
      {K::Fence, 0, kFenceGlobal, 0, DynamicWord::None},              // 5
      {K::Store, 0, 0, 0, DynamicWord::Size},                         // 6: memcpy
      {K::Fence, 0, kFenceRead, 0, DynamicWord::FenceFlags},          // 7
      {K::Load, 2, 0, 9, DynamicWord::None},                          // 8: 9 loops deep
  };
  h.instructionTexts = {"%1 = load float", "barrier", "store float", "atomic_inc", "constant",
                        "mem_fence",       "memcpy",  "fence",       ""};
  h.recordCount = 10;
  // Units per work-item: 1 + 1 | - | 1 + 1 | 1 | 2 (3 words + 2 counters) | 1 | 3 (3 + 7) | 1 + 1.
  h.unitCount = 13;
  return h;
}

WorkItems sampleUnitRecords() {
  using K = AccessKind;
  Record deep = makeRecord(K::Load, 8, 0x1008, 2, kRecordDepthTruncated, {1, 2, 3, 4, 5, 6, 7});
  deep.depth = 9;
  return {
      {makeRecord(K::Load, 0, 0x1000, 4), makeRecord(K::Store, 2, 0x2000, 4, 0, {0})},
      {},
      {makeRecord(K::Load, 0, 0x1004, 4), makeRecord(K::Barrier, 1, 0, 0, kFenceLocal | kFenceGlobal)},
      {makeRecord(K::Store, 6, 0x1010, 12)},
      {makeRecord(K::Atomic, 3, 0x201c, 4, 0, {1, 2})},
      {makeRecord(K::ConstantLoad, 4, 0x9000, 8)},
      {deep},
      {makeRecord(K::Fence, 5, 0, 0, kFenceGlobal), makeRecord(K::Fence, 7, 0, 0, kFenceRead | kFenceLocal)},
  };
}

std::vector<uint32_t> encodeUnits(const std::vector<InstructionShape>& shapes, const std::vector<Record>& records) {
  std::vector<uint32_t> words;
  for (const Record& r : records) {
    const InstructionShape& s = shapes.at(r.instruction);
    const size_t start = words.size();
    words.push_back(static_cast<uint32_t>(r.address));
    words.push_back(static_cast<uint32_t>(r.address >> 32));
    words.push_back(r.instruction);
    if (s.dynamic == DynamicWord::Size) words.push_back(r.size);
    if (s.dynamic == DynamicWord::FenceFlags) words.push_back(r.flags & (kFenceLocal | kFenceGlobal));
    for (uint32_t i = 0; i < std::min(s.depth, kMaxLoopDepth); ++i) words.push_back(r.iterations[i]);
    words.resize(start + unitRecordUnits(s) * kUnitWords, 0);
  }
  return words;
}

void writeUnitsSample(const std::string& path, bool compressed) {
  TraceHeader h = sampleUnitsHeader(compressed);
  TraceWriter writer(path, h);
  for (const auto& records : sampleUnitRecords()) {
    std::vector<uint32_t> words = encodeUnits(h.instructions, records);
    writer.writeWorkItemUnits(words.data(), words.size() / kUnitWords);
  }
  writer.close();
}

}  // namespace cltrace::test
