// Scheduled streams on disk: a binary file for the cache simulator (with a validating reader),
// the thesis's text listing, and CSV for plots. Byte layouts: docs/scheduler.md.
#pragma once

#include <cstdint>
#include <cstdio>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cltrace/scheduler/scheduler.h"
#include "cltrace/scheduler/warp_step.h"

namespace cltrace::sched {

enum class OutputFormat : uint8_t { Binary, Text, Csv };
const char* outputFormatName(OutputFormat f);           // "binary", "text", "csv"
OutputFormat parseOutputFormat(std::string_view name);  // throws std::invalid_argument

// Any problem writing or reading a scheduled file; what() names the file and the problem.
class ScheduleFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr char kScheduleMagic[8] = {'C', 'L', 'T', 'S', 'C', 'H', 'E', 'D'};
inline constexpr char kScheduleEndMagic[8] = {'C', 'L', 'T', 'S', 'E', 'N', 'D', '\0'};
// Version history: 1 = first format; 2 = the checksum also covers the header. Readers read both.
inline constexpr uint32_t kScheduleFormatVersion = 2;
inline constexpr uint32_t kScheduleFormatOldestRead = 1;
inline constexpr size_t kScheduleHeaderFixedBytes = 164;  // + kernel name
inline constexpr size_t kScheduleStepBytes = 44;          // + 16 per lane
inline constexpr size_t kScheduleLaneBytes = 16;
inline constexpr size_t kScheduleTrailerBytes = 16;

namespace detail {
// Checksum of a binary scheduled file (version 2: header, counts all ones, then steps; version
// 1: steps only): the bytes are taken as little-endian
// 64-bit words (the last one zero-padded); h = 0xcbf29ce484222325, then per word
// h = (h ^ w) * 0x100000001b3, h ^= h >> 29; finally h ^= byte count, h *= 0x100000001b3,
// h ^= h >> 32.
class WordHash {
 public:
  void update(const unsigned char* data, size_t n);
  uint64_t finish() const;

 private:
  void mix(uint64_t w) {
    h_ = (h_ ^ w) * 0x100000001b3ull;
    h_ ^= h_ >> 29;
  }
  uint64_t h_ = 0xcbf29ce484222325ull;
  uint64_t bytes_ = 0;
  uint64_t pending_ = 0;
  unsigned pendingBytes_ = 0;
};
}  // namespace detail

class StepWriter {
 public:
  virtual ~StepWriter() = default;
  virtual void write(const WarpStep& step) = 0;
  // Flushes and finishes the file. Throws ScheduleFileError. A binary file that is never
  // closed is left marked incomplete (readers refuse it).
  virtual void close() = 0;
};

// Creates `path` in the given format. Throws ScheduleFileError when it cannot be created. A
// writer destroyed before a successful close (a write or its source failed) removes the file if
// it made it, as the trace writer does (cltrace/output_file.h): never a device or a pipe; through
// a link, the file it names.
std::unique_ptr<StepWriter> openStepWriter(OutputFormat format, const std::string& path,
                                           const ScheduleInfo& info);
// Text and CSV to a stream (which must outlive the writer).
std::unique_ptr<StepWriter> makeTextWriter(std::ostream& out, const ScheduleInfo& info);
std::unique_ptr<StepWriter> makeCsvWriter(std::ostream& out, const ScheduleInfo& info);

// Writes every step of `steps` to `writer` (then closes it); returns the number of steps.
uint64_t writeSchedule(StepSource& steps, StepWriter& writer);

// Reads a binary scheduled file back, validating as it goes.
class ScheduleReader {
 public:
  // Reads and checks the header and that the file size matches the step and lane counts.
  // Throws ScheduleFileError naming the file and the problem (not a schedule file, unknown
  // version, not closed by its writer, truncated, trailing bytes, bad header fields).
  explicit ScheduleReader(const std::string& path);
  ~ScheduleReader();
  ScheduleReader(const ScheduleReader&) = delete;
  ScheduleReader& operator=(const ScheduleReader&) = delete;

  // config (policy, warp size, SMs, limits, order, seed), lane width, NDRange, kernel name.
  const ScheduleInfo& info() const { return info_; }
  uint64_t stepCount() const { return stepCount_; }
  uint64_t laneCount() const { return laneCount_; }

  // The next step (warpKey recomputed, lanes ascending). Returns false after the last step,
  // once the trailer and checksum are verified. Throws ScheduleFileError on corrupt data.
  bool next(WarpStep& out);

 private:
  void fill(void* dst, size_t n);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  std::FILE* file_ = nullptr;
  ScheduleInfo info_;
  uint64_t stepCount_ = 0;
  uint64_t laneCount_ = 0;
  uint64_t stepsRead_ = 0;
  uint64_t lastCycle_ = 0;  // (cycle, SM) of the step read last: steps come in that order
  uint32_t lastSm_ = 0;
  uint64_t lanesRead_ = 0;
  uint64_t fileSize_ = 0;
  uint64_t position_ = 0;
  detail::WordHash hash_;
  bool finished_ = false;
  std::vector<unsigned char> buffer_;
  size_t bufferPos_ = 0;
  size_t bufferEnd_ = 0;
};

}  // namespace cltrace::sched
