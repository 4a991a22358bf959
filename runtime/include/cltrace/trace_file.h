// Trace files: what one traced kernel launch produced, after address rebasing.
//
// Layout (all little-endian; see docs/trace-format.md for the byte-level description):
//   header (magic "CLTRACE\0", format version, compression, kernel name, source hash,
//   NDRange, buffer table, work-item count, record count), then for every work-item in
//   workgroup order (workgroups linearised x-fastest, then the work-items of the group
//   linearised x-fastest by local id): a u64 record count followed by that many Records.
//   The body may be zstd-compressed as one stream. Readers stream the body.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/record.h"

namespace cltrace {

inline constexpr uint32_t kTraceFormatVersion = 1;

// Any problem reading or writing a trace file; what() names the file and what is wrong.
class TraceFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TraceBuffer {
  uint32_t argIndex = 0;     // kernel argument index the buffer was bound to
  std::string name;          // argument name (or "argN")
  uint64_t size = 0;         // bytes
  uint64_t virtualBase = 0;  // where the buffer starts in the virtual layout
};

struct NDRange {
  uint32_t dims = 1;
  std::array<uint64_t, 3> global{1, 1, 1};
  std::array<uint64_t, 3> local{1, 1, 1};
  std::array<uint64_t, 3> offset{0, 0, 0};

  uint64_t workItems() const { return global[0] * global[1] * global[2]; }
  uint64_t workgroupSize() const { return local[0] * local[1] * local[2]; }
  std::array<uint64_t, 3> groups() const {
    return {global[0] / local[0], global[1] / local[1], global[2] / local[2]};
  }
  uint64_t workgroups() const {
    auto g = groups();
    return g[0] * g[1] * g[2];
  }
};

struct TraceHeader {
  uint32_t version = kTraceFormatVersion;
  bool compressed = false;
  std::string kernelName;
  uint64_t sourceHash = 0;  // FNV-1a 64 of the kernel source text
  std::string device;       // device that traced the kernel (informational)
  NDRange range;
  uint64_t alignment = 4096;  // alignment of the virtual layout
  std::vector<TraceBuffer> buffers;
  uint64_t workItemCount = 0;
  uint64_t recordCount = 0;
};

class TraceWriter {
 public:
  // Throws TraceFileError when the file cannot be created.
  TraceWriter(const std::string& path, const TraceHeader& header);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Work-items must come in file order (see above); exactly header.workItemCount of them.
  void writeWorkItem(const Record* records, uint64_t count);
  // Flushes and checks that the counts match the header. Throws TraceFileError.
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
  // Reads the next work-item's records into `out` (replacing its contents). Returns false
  // after the last work-item. Throws TraceFileError on truncation or corruption.
  bool nextWorkItem(std::vector<Record>& out);
  // Index (in file order) of the work-item the last nextWorkItem returned.
  uint64_t workItemIndex() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 14695981039346656037ull);

}  // namespace cltrace
