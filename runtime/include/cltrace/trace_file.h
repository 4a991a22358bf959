// Trace files: what one traced kernel launch produced, after address rebasing.
//
// Layout (all little-endian; see docs/trace-format.md for the byte-level description):
//   header (magic "CLTRACE\0", format version, compression, kernel name, source hash,
//   NDRange, buffer table, work-item count, record count, header checksum), then for every
//   work-item in workgroup order (workgroups linearised x-fastest, then the work-items of the
//   group linearised x-fastest by local id) its records. The body may be zstd-compressed as one
//   stream (with zstd's content checksum); an uncompressed body is followed by an 8-byte XXH64
//   of its bytes (header flag bit 1; files written before that flag lack it and still read).
//   Readers stream the body and check either checksum at its end.
//   Version 1: each work-item is a u64 record count followed by that many 48-byte Records.
//   Version 2 (what the tracer writes): the header also holds the instructions' static shapes
//   (unit_record.h) and the total unit count; each work-item is a u64 unit count followed by
//   that many 16-byte unit records (unit_record.h), addresses rebased. About a third of the size.
//   A version 2 header may also hold the kernel's loop nest (loop_nest.h; flag bit 2), which
//   the tracer writes and the scheduler uses to tell loops apart.
//
// A file holds every work-item of its NDRange: header.workItemCount == range.workItems().
//
// Writing: TraceWriter validates the header (same rules as the reader), writes it at once and
// then streams work-items. When the total record count is not known in advance, set
// header.recordCount = kUnknownRecordCount: the writer then writes a placeholder and close()
// seeks back and patches the header with the real total (the path must be a seekable file).
// A file whose placeholder was never patched is rejected by the reader. A writer that is
// destroyed without a successful close(), or whose close() fails, removes its file, so a
// half-written trace never survives. Any error leaves the writer failed: later calls throw.
//
// Reading: TraceReader validates the whole header in its constructor and then streams the
// body with bounded memory; nextWorkItem reports truncation, corruption (a body checksum that
// does not match included) and counts that disagree with the header no later than the call that
// would return false.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/loop_nest.h"
#include "cltrace/unit_record.h"
#include "cltrace/record.h"

namespace cltrace {

// Version 1: 48-byte records. Version 2: instruction shapes in the header, 16-byte units in the
// body. docs/trace-format.md has both layouts. Readers read both.
inline constexpr uint32_t kTraceFormatRecords = 1;
inline constexpr uint32_t kTraceFormatUnits = 2;
inline constexpr uint32_t kTraceFormatVersion = kTraceFormatUnits;  // the newest

// header.recordCount value meaning "count the records and patch the header in close()".
inline constexpr uint64_t kUnknownRecordCount = ~uint64_t{0};
// Limits that keep a corrupt header from asking for absurd allocations.
inline constexpr uint32_t kMaxTraceStringLength = 4096;  // kernel, device and buffer names
inline constexpr uint32_t kMaxTraceBuffers = 4096;
inline constexpr uint32_t kMaxTraceInstructions = 1u << 20;
inline constexpr uint32_t kMaxInstructionDepth = 1u << 16;
inline constexpr uint32_t kMaxTraceLoops = 1u << 20;

// Any problem reading or writing a trace file; what() names the file and what is wrong.
class TraceFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A file that does not begin with a trace file's magic (another kind of file, empty or not).
class NotATraceFileError : public TraceFileError {
 public:
  using TraceFileError::TraceFileError;
};

struct TraceBuffer {
  uint32_t argIndex = 0;     // kernel argument index the buffer was bound to
  std::string name;          // argument name (or "argN")
  uint64_t size = 0;         // bytes
  uint64_t virtualBase = 0;  // where the buffer starts in the virtual layout
};

// Where a work-item sits in its NDRange: workgroup id and local id (unused dims are 0).
struct WorkItemPosition {
  std::array<uint64_t, 3> group{0, 0, 0};
  std::array<uint64_t, 3> local{0, 0, 0};
};

// Dimensions at or beyond `dims` must have global = local = 1 and offset = 0.
struct NDRange {
  uint32_t dims = 1;
  std::array<uint64_t, 3> global{1, 1, 1};
  std::array<uint64_t, 3> local{1, 1, 1};
  std::array<uint64_t, 3> offset{0, 0, 0};
  // Bytes of __local memory one workgroup uses (the kernel's __local variables and __local
  // arguments; 0: none, or not known, as in traces written before it was kept). Limits how many
  // workgroups an SM holds (cachesim's local_memory_per_sm).
  uint32_t localMemoryBytes = 0;

  // An NDRange of global.size() dimensions (1 to 3); an empty `local` means 1s, an empty
  // `offset` 0s. Throws std::invalid_argument when the sizes do not fit that.
  static NDRange fromSizes(const std::vector<uint64_t>& global, const std::vector<uint64_t>& local = {},
                           const std::vector<uint64_t>& offset = {}) {
    if (global.empty() || global.size() > 3 || (!local.empty() && local.size() != global.size()) ||
        (!offset.empty() && offset.size() != global.size()))
      throw std::invalid_argument("an NDRange needs 1 to 3 global sizes and as many local sizes and offsets");
    NDRange r;
    r.dims = static_cast<uint32_t>(global.size());
    for (size_t d = 0; d < global.size(); ++d) {
      r.global[d] = global[d];
      r.local[d] = local.empty() ? 1 : local[d];
      r.offset[d] = offset.empty() ? 0 : offset[d];
    }
    return r;
  }

  uint64_t workItems() const { return global[0] * global[1] * global[2]; }
  uint64_t workgroupSize() const { return local[0] * local[1] * local[2]; }
  std::array<uint64_t, 3> groups() const {
    return {global[0] / local[0], global[1] / local[1], global[2] / local[2]};
  }
  uint64_t workgroups() const {
    auto g = groups();
    return g[0] * g[1] * g[2];
  }
  // Position of the work-item with index `fileIndex` in file order (see above); the range
  // must be valid (every header a TraceReader returns is).
  WorkItemPosition positionOf(uint64_t fileIndex) const;
};

// What makes `r` no range a trace can hold (dims outside 1..3, a zero or non-dividing size, a
// last global id past 2^64, an unused dimension not global 1, local 1, offset 0, more than 2^64
// work-items), or "" when it is one. Trace files and scheduled files are checked with it.
std::string rangeProblem(const NDRange& r);

struct TraceHeader {
  uint32_t version = kTraceFormatRecords;  // kTraceFormatRecords or kTraceFormatUnits
  bool compressed = false;
  std::string kernelName;
  uint64_t sourceHash = 0;  // FNV-1a 64 of the kernel source text
  std::string device;       // device that traced the kernel (informational)
  NDRange range;
  uint64_t alignment = 4096;  // alignment of the virtual layout (a power of two)
  std::vector<TraceBuffer> buffers;
  uint64_t workItemCount = 0;  // must equal range.workItems()
  uint64_t recordCount = 0;    // or kUnknownRecordCount when writing (see above)
  // Version 2 only: each instruction's static shape (indexed by instruction id) and the total
  // number of 16-byte units in the body (kUnknownRecordCount when writing: patched by close()).
  std::vector<InstructionShape> instructions;
  std::vector<std::string> instructionTexts;  // the same length, or empty: each instruction as text
  // Version 2 only, optional: which loop encloses which instruction (valid for `instructions`'
  // depths: loopNestProblem).
  std::optional<LoopNest> loops;
  uint64_t unitCount = 0;
};

class TraceWriter {
 public:
  // Validates the header and writes it. Throws TraceFileError when the header is invalid or
  // the file cannot be created.
  TraceWriter(const std::string& path, const TraceHeader& header);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Work-items must come in file order (see above); exactly header.workItemCount of them.
  // Throws TraceFileError for one too many, an invalid record, or a write error.
  void writeWorkItem(const Record* records, uint64_t count);
  void writeWorkItem(const std::vector<Record>& records) {
    writeWorkItem(records.data(), records.size());
  }
  // Version 2: the next work-item as `units` units of unit records (addresses already rebased).
  // Throws TraceFileError for a record naming an unknown instruction or running past the end.
  void writeWorkItemUnits(const uint32_t* words, uint64_t units);
  // The same for units whose records the caller has already walked and counted (`records` of
  // them, each naming a known instruction and ending within `units`), as
  // PackedRecordUnpacker::unpack makes them: the writer does not walk them again.
  void writeCountedWorkItemUnits(const uint32_t* words, uint64_t units, uint64_t records);
  // Flushes, checks that the counts match the header (or patches an unknown record count).
  // Throws TraceFileError. Calling it again after success does nothing.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class TraceReader {
 public:
  // Reads and validates the header. Throws TraceFileError naming the problem.
  explicit TraceReader(const std::string& path);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const TraceHeader& header() const;
  const std::string& path() const;
  // Reads the next work-item's records into `out` (replacing its contents). Returns false
  // after the last work-item, once the end of the body has been checked. Throws
  // TraceFileError on truncation or corruption.
  bool nextWorkItem(std::vector<Record>& out);
  // As nextWorkItem, but appends the records to `out` (readers that gather several work-items
  // save a copy).
  bool appendNextWorkItem(std::vector<Record>& out);
  // Index (in file order) of the work-item the last nextWorkItem returned (0 before any).
  uint64_t workItemIndex() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 14695981039346656037ull);

// The source location an instruction text begins with ("line 12:17" of "line 12:17: %5 = load
// ...", "util.h line 3:5" of a header's; cltrace's instrumenter writes texts so), or "" when it
// begins with none (a trace made without line tables, or by another writer).
std::string instructionSource(const std::string& text);

}  // namespace cltrace
