#include "trace_samples.h"

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

}  // namespace cltrace::test
