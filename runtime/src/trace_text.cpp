#include "cltrace/trace_text.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cltrace {
namespace {

// "(x)", "(x,y)" or "(x,y,z)": only the dimensions the NDRange uses.
std::string tupleText(const std::array<uint64_t, 3>& v, uint32_t dims) {
  std::string text = "(";
  for (uint32_t d = 0; d < dims; ++d) text += fmt::format("{}{}", d ? "," : "", v[d]);
  return text + ")";
}

std::string iterationsText(const Record& r) {
  std::string text = "[";
  uint32_t depth = std::min<uint32_t>(r.depth, kMaxLoopDepth);
  for (uint32_t i = 0; i < depth; ++i) text += fmt::format("{}{}", i ? "," : "", r.iterations[i]);
  return text + "]";
}

void printHeader(const TraceHeader& h, std::FILE* out) {
  const NDRange& r = h.range;
  fmt::print(out, "trace format {}, body {}\n", h.version,
             h.compressed ? "zstd-compressed" : "uncompressed");
  fmt::print(out, "kernel: {}\n", h.kernelName);
  fmt::print(out, "source hash: 0x{:016x}\n", h.sourceHash);
  fmt::print(out, "device: {}\n", h.device);
  fmt::print(out, "ndrange: dims {}, global {}, local {}, offset {}, {} workgroups\n", r.dims,
             tupleText(r.global, r.dims), tupleText(r.local, r.dims), tupleText(r.offset, r.dims),
             r.workgroups());
  fmt::print(out, "local memory: {} bytes per workgroup\n", r.localMemoryBytes);
  fmt::print(out, "alignment: {}\n", h.alignment);
  fmt::print(out, "buffers: {}\n", h.buffers.size());
  for (const TraceBuffer& b : h.buffers)
    fmt::print(out, "  arg {} {}: base 0x{:x} size {}\n", b.argIndex, b.name, b.virtualBase,
               b.size);
  if (h.version == kTraceFormatUnits) {
    fmt::print(out, "instructions: {}\n", h.instructions.size());
    for (size_t i = 0; i < h.instructions.size(); ++i) {
      const InstructionShape& s = h.instructions[i];
      const std::string text = i < h.instructionTexts.size() ? h.instructionTexts[i] : "";
      const uint32_t loop = h.loops ? h.loops->innermost[i] : LoopNest::kNone;
      fmt::print(out, "  [{}] {} {}B depth {}{}{}{}\n", i, accessKindName(s.kind),
                 s.dynamic == DynamicWord::Size ? std::string("?") : std::to_string(s.size), s.depth,
                 loop == LoopNest::kNone ? std::string() : fmt::format(" loop {}", loop), text.empty() ? "" : ": ",
                 text);
    }
    if (h.loops) {
      fmt::print(out, "loops: {}\n", h.loops->parent.size());
      for (size_t l = 0; l < h.loops->parent.size(); ++l) {
        const uint32_t p = h.loops->parent[l];
        fmt::print(out, "  loop {}: {}\n", l, p == LoopNest::kNone ? std::string("outermost") : fmt::format("in loop {}", p));
      }
    }
    fmt::print(out, "units: {}\n", h.unitCount);
  }
  fmt::print(out, "work-items: {}\n", h.workItemCount);
  fmt::print(out, "records: {}\n", h.recordCount);
}

void printRecord(const Record& r, uint64_t workItem, const NDRange& range, std::FILE* out) {
  WorkItemPosition pos = range.positionOf(workItem);
  fmt::print(
      out, "wi {} group {} local {} {} instr {} addr 0x{:x} size {} flags 0x{:02x} iter {}\n",
      workItem, tupleText(pos.group, range.dims), tupleText(pos.local, range.dims),
      accessKindName(kindOf(r)), r.instruction, r.address, r.size, r.flags, iterationsText(r));
}

// Finds the buffer whose virtual range holds an address. Where ranges overlap (a sub-buffer
// inside its parent), the one starting last at or below the address that holds it: the
// sub-buffer inside it, the parent past its end; of one buffer bound to several arguments, the
// first argument.
class BufferMap {
 public:
  explicit BufferMap(const std::vector<TraceBuffer>& buffers) {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].size) byBase_.emplace_back(buffers[i].virtualBase, i);
    // By base, and where bases are equal the first argument last, so that the search below,
    // which walks down from the last base at or below the address, meets it first.
    std::sort(byBase_.begin(), byBase_.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
  }
  // Index into the buffer table, or -1 when no buffer holds the address.
  long find(uint64_t address, const std::vector<TraceBuffer>& buffers) const {
    auto it = std::upper_bound(byBase_.begin(), byBase_.end(), address,
                               [](uint64_t a, const std::pair<uint64_t, size_t>& b) { return a < b.first; });
    while (it != byBase_.begin()) {
      --it;
      const TraceBuffer& b = buffers[it->second];
      if (address - b.virtualBase < b.size) return static_cast<long>(it->second);
    }
    return -1;
  }

 private:
  std::vector<std::pair<uint64_t, size_t>> byBase_;  // (virtual base, index), sorted
};

struct TraceStats {
  uint64_t workItems = 0;
  uint64_t emptyWorkItems = 0;
  uint64_t records = 0;
  uint64_t byKind[kAccessKindCount] = {};
  std::map<std::pair<uint32_t, uint8_t>, uint64_t> byInstruction;  // (instruction, kind)
  std::vector<uint64_t> byBuffer;                                  // memory accesses
  uint64_t outside = 0;                                            // memory accesses
};

TraceStats collectStats(TraceReader& reader) {
  const TraceHeader& h = reader.header();
  BufferMap buffers(h.buffers);
  TraceStats s;
  s.byBuffer.assign(h.buffers.size(), 0);
  std::vector<Record> records;
  while (reader.nextWorkItem(records)) {
    ++s.workItems;
    s.emptyWorkItems += records.empty();
    s.records += records.size();
    for (const Record& r : records) {
      ++s.byKind[r.kind];
      ++s.byInstruction[{r.instruction, r.kind}];
      if (!isMemoryAccess(kindOf(r))) continue;
      long buffer = buffers.find(r.address, h.buffers);
      ++(buffer < 0 ? s.outside : s.byBuffer[buffer]);
    }
  }
  return s;
}

// A row of `stats`: the label in a column of `width` (every row of one listing shares it, so
// that a long buffer name does not push its count out of line), the count right-aligned after.
void printCount(std::FILE* out, size_t width, const std::string& label, uint64_t count, const std::string& note = "") {
  fmt::print(out, "  {:<{}}{:>12}{}\n", label, width, count, note);
}

}  // namespace

void dumpTrace(TraceReader& reader, std::FILE* out, uint64_t maxRecords) {
  const TraceHeader& h = reader.header();
  printHeader(h, out);
  uint64_t printed = 0;
  std::vector<Record> records;
  while (printed < maxRecords && reader.nextWorkItem(records)) {
    for (size_t i = 0; i < records.size() && printed < maxRecords; ++i, ++printed)
      printRecord(records[i], reader.workItemIndex(), h.range, out);
  }
  // --limit stops reading too (a quick look at a large trace), so the rest is not checked:
  // said, since a corrupt body past the limit goes unnoticed.
  if (printed < h.recordCount)
    fmt::print(out, "... {} more records not shown (the rest of the file was not read or checked)\n",
               h.recordCount - printed);
}

void printTraceStats(TraceReader& reader, std::FILE* out) {
  const TraceHeader& h = reader.header();
  TraceStats s = collectStats(reader);
  auto instructionLabel = [](const std::pair<uint32_t, uint8_t>& key) {
    return fmt::format("instr {} {}", key.first, accessKindName(static_cast<AccessKind>(key.second)));
  };
  auto bufferLabel = [](const TraceBuffer& b) { return fmt::format("arg {} {}", b.argIndex, b.name); };
  size_t width = 24;  // wider when a label needs it, one space at least before the count's column
  for (const auto& entry : s.byInstruction) width = std::max(width, instructionLabel(entry.first).size() + 1);
  for (const TraceBuffer& b : h.buffers) width = std::max(width, bufferLabel(b).size() + 1);
  fmt::print(out, "kernel: {}\n", h.kernelName);
  fmt::print(out, "work-items: {} ({} without records)\n", s.workItems, s.emptyWorkItems);
  fmt::print(out, "records: {}\n", s.records);
  fmt::print(out, "by kind:\n");
  for (uint8_t k = 0; k < kAccessKindCount; ++k)
    printCount(out, width, accessKindName(static_cast<AccessKind>(k)), s.byKind[k]);
  fmt::print(out, "by instruction:\n");
  for (const auto& [key, count] : s.byInstruction) {
    const std::string where = key.first < h.instructionTexts.size() ? instructionSource(h.instructionTexts[key.first]) : "";
    printCount(out, width, instructionLabel(key), count, where.empty() ? "" : "  " + where);
  }
  // Each access counts once, for the buffer BufferMap finds: of one buffer bound to several
  // arguments, the first (the others say "= arg N"); where buffers overlap (sub-buffers), the one
  // starting last at or below the address (the others say "overlaps arg N").
  fmt::print(out, "by buffer (memory accesses):\n");
  for (size_t i = 0; i < h.buffers.size(); ++i) {
    const TraceBuffer& b = h.buffers[i];
    std::string note, overlaps;
    for (size_t j = 0; j < h.buffers.size(); ++j) {
      const TraceBuffer& o = h.buffers[j];
      if (j == i || b.size == 0 || o.size == 0) continue;
      if (o.virtualBase == b.virtualBase && o.size == b.size) {
        if (j < i && note.empty()) note = fmt::format("  (= arg {})", o.argIndex);
      } else if (o.virtualBase < b.virtualBase + b.size && b.virtualBase < o.virtualBase + o.size) {
        overlaps += fmt::format("{}{}", overlaps.empty() ? "" : ", ", o.argIndex);
      }
    }
    if (note.empty() && !overlaps.empty()) note = "  (overlaps arg " + overlaps + ")";
    printCount(out, width, bufferLabel(b), s.byBuffer[i], note);
  }
  printCount(out, width, "outside", s.outside);
}

}  // namespace cltrace
