// Trace file reader and writer. Byte layout: docs/trace-format.md.
#include "cltrace/trace_file.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>

#include "cltrace/output_file.h"

// Records travel between device, memory and file without conversion; the header is encoded
// explicitly, but the records are only little-endian on a little-endian host.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "cltrace needs a little-endian host");

namespace cltrace {
namespace {

constexpr char kMagic[8] = {'C', 'L', 'T', 'R', 'A', 'C', 'E', '\0'};
constexpr uint32_t kFlagCompressed = 1u << 0;
// The uncompressed body is followed by its XXH64 (a compressed body has zstd's checksum).
// Files written before this flag lack the checksum and still read.
constexpr uint32_t kFlagBodyChecksum = 1u << 1;
// The header holds a loop table after the instruction texts (version 2 only).
constexpr uint32_t kFlagLoopTable = 1u << 2;
constexpr uint32_t kKnownFlags = kFlagCompressed | kFlagBodyChecksum | kFlagLoopTable;
constexpr uint64_t kBodyChecksumSize = 8;
constexpr uint64_t kRecordSize = sizeof(Record);
constexpr uint64_t kCountSize = sizeof(uint64_t);  // per-work-item record count
constexpr int kZstdLevel = 3;                      // window 2 MiB at most
constexpr int kZstdWindowLogMax = 24;              // readers accept windows up to 16 MiB
// Records are read in chunks so that a count read from the file never sizes an allocation.
constexpr uint64_t kRecordsPerChunk = 16384;

using std::to_string;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw TraceFileError(path + ": " + what);
}

std::string systemError() { return std::strerror(errno); }

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// ---------------------------------------------------------------- validation (both sides)

std::string dimName(size_t d) { return "dimension " + to_string(d); }

std::string usedDimProblem(const NDRange& r, size_t d) {
  if (r.global[d] == 0) return "global size 0 in " + dimName(d);
  if (r.local[d] == 0) return "local size 0 in " + dimName(d);
  if (r.global[d] % r.local[d] != 0)
    return "local size " + to_string(r.local[d]) + " does not divide global size " +
           to_string(r.global[d]) + " in " + dimName(d);
  // The last global id, offset + global - 1, must fit (cltrace run refuses the same ranges).
  uint64_t lastId;
  if (__builtin_add_overflow(r.offset[d], r.global[d] - 1, &lastId))
    return "global offset " + to_string(r.offset[d]) + " plus global size " + to_string(r.global[d]) +
           " overflows 64 bits in " + dimName(d);
  return {};
}

}  // namespace

std::string rangeProblem(const NDRange& r) {
  if (r.dims < 1 || r.dims > 3) return "NDRange dims " + to_string(r.dims) + " not in 1..3";
  for (size_t d = 0; d < 3; ++d) {
    if (d < r.dims) {
      std::string problem = usedDimProblem(r, d);
      if (!problem.empty()) return problem;
    } else if (r.global[d] != 1 || r.local[d] != 1 || r.offset[d] != 0) {
      return "unused " + dimName(d) + " must have global 1, local 1, offset 0";
    }
  }
  uint64_t items;
  if (__builtin_mul_overflow(r.global[0], r.global[1], &items) ||
      __builtin_mul_overflow(items, r.global[2], &items))
    return "NDRange global size overflows 64 bits";
  return {};
}

namespace {

std::string stringProblem(const std::string& what, size_t length) {
  if (length <= kMaxTraceStringLength) return {};
  return what + " length " + to_string(length) + " exceeds the limit of " +
         to_string(kMaxTraceStringLength) + " bytes";
}

// Names and texts are printed as they are (dump, stats, reports): no control characters, which
// would reach the terminal (escape sequences) or cut a line.
std::string textProblem(const std::string& what, const std::string& text) {
  std::string problem = stringProblem(what, text.size());
  for (size_t i = 0; problem.empty() && i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) problem = what + " holds the control character " + hex(c) + " at byte " + to_string(i);
  }
  return problem;
}

// A buffer may end at 2^64 exactly (its last byte at the last address), not beyond. Buffers
// may overlap (sub-buffers do).
bool endsBeyondAddressSpace(const TraceBuffer& b) {
  uint64_t lastByte;
  return b.size != 0 && __builtin_add_overflow(b.virtualBase, b.size - 1, &lastByte);
}

std::string bufferProblem(const TraceBuffer& b, size_t i) {
  std::string problem = textProblem("buffer " + to_string(i) + " name", b.name);
  if (problem.empty() && endsBeyondAddressSpace(b))
    problem = "buffer " + to_string(i) + " (" + b.name + ") at " + hex(b.virtualBase) + " of " + to_string(b.size) +
              " bytes ends beyond the 64-bit address space";
  return problem;
}

// Everything except recordCount, whose rules differ between writer and reader.
std::string headerProblem(const TraceHeader& h) {
  std::string problem = textProblem("kernel name", h.kernelName);
  if (problem.empty()) problem = textProblem("device string", h.device);
  if (problem.empty() && h.buffers.size() > kMaxTraceBuffers)
    problem = "buffer count " + to_string(h.buffers.size()) + " exceeds the limit of " +
              to_string(kMaxTraceBuffers);
  for (size_t i = 0; problem.empty() && i < h.buffers.size(); ++i)
    problem = bufferProblem(h.buffers[i], i);
  if (problem.empty() && (h.alignment == 0 || (h.alignment & (h.alignment - 1)) != 0))
    problem = "alignment " + to_string(h.alignment) + " is not a power of two";
  if (problem.empty()) problem = rangeProblem(h.range);
  if (problem.empty() && h.workItemCount != h.range.workItems())
    problem = "work-item count " + to_string(h.workItemCount) + " disagrees with the NDRange's " +
              to_string(h.range.workItems()) + " work-items";
  if (problem.empty() && h.version != kTraceFormatRecords && h.version != kTraceFormatUnits)
    problem = "format version " + to_string(h.version) + " is neither 1 nor 2";
  if (problem.empty() && h.version == kTraceFormatRecords && !h.instructions.empty())
    problem = "version 1 has no instruction table";
  if (problem.empty() && !h.instructionTexts.empty() && h.instructionTexts.size() != h.instructions.size())
    problem = to_string(h.instructionTexts.size()) + " instruction texts for " + to_string(h.instructions.size()) +
              " instructions";
  for (size_t i = 0; problem.empty() && i < h.instructionTexts.size(); ++i)
    problem = textProblem("instruction " + to_string(i) + " text", h.instructionTexts[i]);
  if (problem.empty() && h.instructions.size() > kMaxTraceInstructions)
    problem = "instruction count " + to_string(h.instructions.size()) + " exceeds the limit of " +
              to_string(kMaxTraceInstructions);
  for (size_t i = 0; problem.empty() && i < h.instructions.size(); ++i) {
    const InstructionShape& s = h.instructions[i];
    std::string which = "instruction " + to_string(i);
    if (static_cast<uint32_t>(s.kind) >= kAccessKindCount)
      problem = which + " has invalid kind " + to_string(static_cast<uint32_t>(s.kind));
    else if (static_cast<uint32_t>(s.dynamic) > static_cast<uint32_t>(DynamicWord::FenceFlags))
      problem = which + " has invalid dynamic word " + to_string(static_cast<uint32_t>(s.dynamic));
    else if (s.depth > kMaxInstructionDepth)
      problem = which + " has loop depth " + to_string(s.depth) + ", over the limit of " +
                to_string(kMaxInstructionDepth);
  }
  if (problem.empty() && h.loops) {
    if (h.version == kTraceFormatRecords) {
      problem = "version 1 has no loop table";
    } else if (h.loops->parent.size() > kMaxTraceLoops) {
      problem = "loop count " + to_string(h.loops->parent.size()) + " exceeds the limit of " + to_string(kMaxTraceLoops);
    } else {
      std::vector<uint32_t> depths;
      depths.reserve(h.instructions.size());
      for (const InstructionShape& s : h.instructions) depths.push_back(s.depth);
      problem = loopNestProblem(*h.loops, depths);
      if (!problem.empty()) problem = "loop table: " + problem;
    }
  }
  return problem;
}

std::string recordProblem(const Record& r) {
  if (r.kind >= kAccessKindCount)
    return "invalid record kind " + to_string(r.kind) + " (kinds are 0.." +
           to_string(kAccessKindCount - 1) + ")";
  // Version 2 ids index the header's table (at most kMaxTraceInstructions); version 1 records
  // carry theirs alone, and the simulator keeps statistics per id (a 15 MB file of 2 M random
  // ids ran out of 4 GB).
  if (r.instruction >= kMaxTraceInstructions)
    return "record instruction id " + to_string(r.instruction) + " exceeds the limit of " +
           to_string(kMaxTraceInstructions - 1);
  if (r.flags & ~kKnownRecordFlags)
    return "record flags " + hex(r.flags) + " hold unknown bits (known: " + hex(kKnownRecordFlags) + ")";
  if (r.depth > kMaxLoopDepth && !(r.flags & kRecordDepthTruncated))
    return "record depth " + to_string(r.depth) + " exceeds " + to_string(kMaxLoopDepth) +
           " without the truncation flag";
  if (r.depth <= kMaxLoopDepth && (r.flags & kRecordDepthTruncated))
    return "record depth " + to_string(r.depth) + " has the truncation flag, which only a depth over " +
           to_string(kMaxLoopDepth) + " may have";
  if (r.size != 0 && r.address + (r.size - 1) < r.address)
    return "record at address " + hex(r.address) + " of " + to_string(r.size) +
           " bytes runs past the end of the 64-bit address space";
  return {};
}

std::string recordsProblem(const Record* records, uint64_t count, uint64_t workItem) {
  for (uint64_t i = 0; i < count; ++i) {
    std::string problem = recordProblem(records[i]);
    if (!problem.empty())
      return "work-item " + to_string(workItem) + ", record " + to_string(i) + ": " + problem;
  }
  return {};
}

// ---------------------------------------------------------------- header encoding

void putLE(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

uint64_t getLE(const unsigned char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}

void putString(std::string& out, const std::string& s) {
  putLE(out, s.size(), 4);
  out += s;
}

std::string encodeHeader(const TraceHeader& h) {
  std::string out(kMagic, sizeof kMagic);
  putLE(out, h.version, 4);
  putLE(out, (h.compressed ? kFlagCompressed : kFlagBodyChecksum) | (h.loops ? kFlagLoopTable : 0),
        4);  // every plain body gets a checksum
  putLE(out, kRecordFormatVersion, 4);
  putLE(out, h.version == kTraceFormatUnits ? kUnitBytes : kRecordSize, 4);
  putLE(out, h.workItemCount, 8);
  putLE(out, h.recordCount, 8);
  putLE(out, h.sourceHash, 8);
  putLE(out, h.alignment, 8);
  putLE(out, h.range.dims, 4);
  putLE(out, h.range.localMemoryBytes, 4);
  for (const auto* v : {&h.range.global, &h.range.local, &h.range.offset})
    for (uint64_t x : *v) putLE(out, x, 8);
  putString(out, h.kernelName);
  putString(out, h.device);
  putLE(out, h.buffers.size(), 4);
  for (const TraceBuffer& b : h.buffers) {
    putLE(out, b.argIndex, 4);
    putString(out, b.name);
    putLE(out, b.size, 8);
    putLE(out, b.virtualBase, 8);
  }
  if (h.version == kTraceFormatUnits) {
    putLE(out, h.unitCount, 8);
    putLE(out, h.instructions.size(), 4);
    for (const InstructionShape& s : h.instructions) {
      putLE(out, static_cast<uint8_t>(s.kind), 1);
      putLE(out, s.flags, 1);
      putLE(out, static_cast<uint8_t>(s.dynamic), 1);
      putLE(out, 0, 1);  // reserved
      putLE(out, s.size, 4);
      putLE(out, s.depth, 4);
    }
    for (size_t i = 0; i < h.instructions.size(); ++i)
      putString(out, i < h.instructionTexts.size() ? h.instructionTexts[i] : std::string());
    if (h.loops) {  // numbers + 1, so that 0 is "none"
      putLE(out, h.loops->parent.size(), 4);
      for (uint32_t p : h.loops->parent) putLE(out, p == LoopNest::kNone ? 0 : uint64_t(p) + 1, 4);
      for (uint32_t l : h.loops->innermost) putLE(out, l == LoopNest::kNone ? 0 : uint64_t(l) + 1, 4);
    }
  }
  putLE(out, fnv1a64(out.data(), out.size()), 8);
  return out;
}

// ---------------------------------------------------------------- header decoding

// Reads header fields one at a time, hashing them for the checksum and naming the field in
// any truncation message.
class HeaderDecoder {
 public:
  HeaderDecoder(std::FILE* file, const std::string& path) : file_(file), path_(path) {}

  // The magic is checked before anything else so that other files get a clear message.
  void magic() {
    char bytes[sizeof kMagic];
    size_t got = std::fread(bytes, 1, sizeof bytes, file_);
    if (got == 0 && std::feof(file_)) throw NotATraceFileError(path_ + ": empty file, not a cltrace trace file");
    if (std::memcmp(bytes, kMagic, got) != 0) {
      // A text file (cltrace schedule's text or csv output, say) is shown by its first bytes.
      const bool text = std::all_of(bytes, bytes + got, [](char c) { return c == '\n' || (c >= ' ' && c <= '~'); });
      std::string start(bytes, got);
      if (const size_t eol = start.find('\n'); eol != std::string::npos) start.resize(eol);
      throw NotATraceFileError(path_ + (text ? ": not a cltrace trace file (wrong magic: it begins with the text '" +
                                                  start + "')"
                                           : ": not a cltrace trace file (wrong magic)"));
    }
    hash_ = fnv1a64(bytes, got, hash_);
    offset_ += got;
    if (got < sizeof bytes) fail(path_, "truncated header: " + eofReason() + " inside the magic");
  }

  void read(void* dst, size_t n, const std::string& what, bool hashed = true) {
    size_t got = std::fread(dst, 1, n, file_);
    if (hashed) hash_ = fnv1a64(dst, got, hash_);
    offset_ += got;
    if (got < n) fail(path_, "truncated header: " + eofReason() + " while reading the " + what);
  }
  uint64_t u64(const std::string& what, bool hashed = true) {
    unsigned char b[8];
    read(b, 8, what, hashed);
    return getLE(b, 8);
  }
  uint32_t u32(const std::string& what) {
    unsigned char b[4];
    read(b, 4, what);
    return static_cast<uint32_t>(getLE(b, 4));
  }
  std::string str(const std::string& what) {
    uint32_t length = u32(what + " length");
    std::string problem = stringProblem(what, length);
    if (!problem.empty()) fail(path_, problem);
    std::string s(length, '\0');
    read(s.data(), length, what);
    return s;
  }
  uint64_t hash() const { return hash_; }
  uint64_t offset() const { return offset_; }

 private:
  std::string eofReason() const {
    if (std::ferror(file_)) return "read error (" + systemError() + ")";
    return "file ends at byte " + to_string(offset_);
  }

  std::FILE* file_;
  const std::string& path_;
  uint64_t hash_ = fnv1a64(nullptr, 0);
  uint64_t offset_ = 0;
};

void checkVersion(uint32_t version, const std::string& path) {
  if (version != kTraceFormatRecords && version != kTraceFormatUnits)
    fail(path, "unsupported trace format version " + to_string(version) + " (this build reads versions " +
                   to_string(kTraceFormatRecords) + " and " + to_string(kTraceFormatUnits) + ")");
}

void decodeInstructions(HeaderDecoder& in, TraceHeader& h, const std::string& path) {
  h.unitCount = in.u64("unit count");
  uint32_t count = in.u32("instruction count");
  if (count > kMaxTraceInstructions)
    fail(path, "instruction count " + to_string(count) + " exceeds the limit of " + to_string(kMaxTraceInstructions));
  h.instructions.resize(count);
  for (InstructionShape& s : h.instructions) {
    unsigned char b[12];
    in.read(b, sizeof b, "instruction table");
    s.kind = static_cast<AccessKind>(b[0]);
    s.flags = b[1];
    if (s.flags & ~kKnownRecordFlags)
      fail(path, "instruction " + to_string(static_cast<uint64_t>(&s - h.instructions.data())) + " has flags " +
                     hex(s.flags) + " with unknown bits (known: " + hex(kKnownRecordFlags) + ")");
    s.dynamic = static_cast<DynamicWord>(b[2]);
    s.size = static_cast<uint32_t>(getLE(b + 4, 4));
    s.depth = static_cast<uint32_t>(getLE(b + 8, 4));
  }
  h.instructionTexts.resize(count);
  for (uint32_t i = 0; i < count; ++i) h.instructionTexts[i] = in.str("instruction " + to_string(i) + " text");
}

// The loop table (kFlagLoopTable), after the instruction texts: numbers are stored + 1.
void decodeLoops(HeaderDecoder& in, TraceHeader& h, const std::string& path) {
  const auto number = [](uint32_t stored) { return stored == 0 ? LoopNest::kNone : stored - 1; };
  const uint32_t count = in.u32("loop count");
  if (count > kMaxTraceLoops)
    fail(path, "loop count " + to_string(count) + " exceeds the limit of " + to_string(kMaxTraceLoops));
  LoopNest& nest = h.loops.emplace();
  nest.parent.resize(count);
  for (uint32_t& p : nest.parent) p = number(in.u32("loop table"));
  nest.innermost.resize(h.instructions.size());
  for (uint32_t& l : nest.innermost) l = number(in.u32("loop table"));
}

void decodeRange(HeaderDecoder& in, NDRange& r) {
  r.dims = in.u32("NDRange dims");
  r.localMemoryBytes = in.u32("local memory per workgroup");
  for (size_t d = 0; d < 3; ++d) r.global[d] = in.u64("global size");
  for (size_t d = 0; d < 3; ++d) r.local[d] = in.u64("local size");
  for (size_t d = 0; d < 3; ++d) r.offset[d] = in.u64("global offset");
}

void decodeBuffers(HeaderDecoder& in, std::vector<TraceBuffer>& buffers, const std::string& path) {
  uint32_t count = in.u32("buffer count");
  if (count > kMaxTraceBuffers)
    fail(path, "buffer count " + to_string(count) + " exceeds the limit of " +
                   to_string(kMaxTraceBuffers));
  for (uint32_t i = 0; i < count; ++i) {
    TraceBuffer b;
    b.argIndex = in.u32("buffer argument index");
    b.name = in.str("buffer " + to_string(i) + " name");
    b.size = in.u64("buffer size");
    b.virtualBase = in.u64("buffer virtual base");
    buffers.push_back(std::move(b));
  }
}

void checkRecordLayout(uint32_t version, uint32_t recordVersion, uint32_t recordSize, const std::string& path) {
  const bool units = version == kTraceFormatUnits;
  const uint64_t expected = units ? kUnitBytes : kRecordSize;
  if (recordVersion != kRecordFormatVersion || recordSize != expected)
    fail(path, "unsupported record format version " + to_string(recordVersion) + " with " +
                   to_string(recordSize) + "-byte " + (units ? "units" : "records") + " (this build reads version " +
                   to_string(kRecordFormatVersion) + " with " + to_string(expected) + "-byte " +
                   (units ? "units" : "records") + " in format version " + to_string(version) + ")");
}

// Reads and validates the header; leaves the file at the first body byte. `bodyChecksum`: the
// uncompressed body ends with its XXH64.
TraceHeader decodeHeader(std::FILE* file, const std::string& path, uint64_t& headerSize, bool& bodyChecksum) {
  HeaderDecoder in(file, path);
  in.magic();
  TraceHeader h;
  h.version = in.u32("format version");
  checkVersion(h.version, path);  // before anything whose layout a later version may change
  uint32_t flags = in.u32("flags");
  uint32_t recordVersion = in.u32("record format version");
  uint32_t recordSize = in.u32("record size");
  h.workItemCount = in.u64("work-item count");
  h.recordCount = in.u64("record count");
  h.sourceHash = in.u64("source hash");
  h.alignment = in.u64("alignment");
  decodeRange(in, h.range);
  h.kernelName = in.str("kernel name");
  h.device = in.str("device string");
  decodeBuffers(in, h.buffers, path);
  if (h.version == kTraceFormatUnits) {
    decodeInstructions(in, h, path);
    if (flags & kFlagLoopTable) decodeLoops(in, h, path);
  }
  uint64_t computed = in.hash();
  uint64_t stored = in.u64("header checksum", false);
  headerSize = in.offset();
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION  // lets the fuzzer reach the checks below
  if (stored != computed) fail(path, "header checksum mismatch (corrupt header)");
#else
  (void)stored, (void)computed;
#endif

  if (flags & ~kKnownFlags) fail(path, "unknown header flags " + hex(flags));
  if ((flags & kFlagLoopTable) && h.version != kTraceFormatUnits)
    fail(path, "header flags " + hex(flags) + " announce a loop table, which format version 1 does not have");
  h.compressed = flags & kFlagCompressed;
  bodyChecksum = flags & kFlagBodyChecksum;
  if (h.compressed && bodyChecksum)
    fail(path, "header flags " + hex(flags) + " give a compressed body a body checksum (zstd checks compressed bodies)");
  checkRecordLayout(h.version, recordVersion, recordSize, path);
  std::string problem = headerProblem(h);
  if (!problem.empty()) fail(path, problem);
  if (h.recordCount == kUnknownRecordCount || (h.version == kTraceFormatUnits && h.unitCount == kUnknownRecordCount))
    fail(path, "record count was never written (the writer did not close the file)");
  return h;
}

// ---------------------------------------------------------------- body checksum

// XXH64 (seed 0) of a stream of bytes, the checksum of an uncompressed body: several GB/s, so
// hashing does not slow reading a body from the page cache noticeably.
class BodyHash {
 public:
  BodyHash() : state_(XXH64_createState()) {
    if (!state_) throw std::bad_alloc();
    XXH64_reset(state_.get(), 0);
  }
  void update(const void* data, size_t size) { XXH64_update(state_.get(), data, size); }
  uint64_t digest() const { return XXH64_digest(state_.get()); }

 private:
  struct StateFree {
    void operator()(XXH64_state_t* s) const { XXH64_freeState(s); }
  };
  std::unique_ptr<XXH64_state_t, StateFree> state_;
};

// ---------------------------------------------------------------- body sinks

class BodySink {
 public:
  virtual ~BodySink() = default;
  virtual void write(const void* data, size_t size) = 0;
  virtual void finish() = 0;
};

class PlainSink : public BodySink {
 public:
  PlainSink(std::FILE* file, const std::string& path) : file_(file), path_(path) {}
  void write(const void* data, size_t size) override {
    if (std::fwrite(data, 1, size, file_) != size) fail(path_, "write error: " + systemError());
  }
  void finish() override {}

 private:
  std::FILE* file_;
  const std::string& path_;
};

// An uncompressed body followed by its checksum (kFlagBodyChecksum).
class ChecksummedSink : public BodySink {
 public:
  ChecksummedSink(std::FILE* file, const std::string& path) : plain_(file, path) {}
  void write(const void* data, size_t size) override {
    hash_.update(data, size);
    plain_.write(data, size);
  }
  void finish() override {
    std::string trailer;
    putLE(trailer, hash_.digest(), kBodyChecksumSize);
    plain_.write(trailer.data(), trailer.size());
  }

 private:
  PlainSink plain_;
  BodyHash hash_;
};

// The body as one zstd frame with a content checksum; deterministic (fixed level, fixed job
// layout). Compression runs on one zstd worker thread, overlapping the caller's work (unpacking
// and rebasing the next records): zstd's multithreaded output does not depend on the number of
// workers (checked: 1 and 2 give the same bytes), but differs from its single-threaded mode.
class ZstdSink : public BodySink {
 public:
  ZstdSink(std::FILE* file, const std::string& path)
      : plain_(file, path), path_(path), ctx_(ZSTD_createCCtx()), out_(ZSTD_CStreamOutSize()) {
    if (!ctx_) fail(path_, "cannot create a zstd compression context");
    check(ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_compressionLevel, kZstdLevel));
    check(ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_checksumFlag, 1));
    // A libzstd built without threads refuses this and compresses in the caller's thread
    // (other bytes, the same records).
    ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_nbWorkers, 1);
  }
  void write(const void* data, size_t size) override {
    ZSTD_inBuffer in{data, size, 0};
    while (in.pos < in.size) compress(in, ZSTD_e_continue);
  }
  void finish() override {
    ZSTD_inBuffer in{nullptr, 0, 0};
    while (compress(in, ZSTD_e_end) != 0) {
    }
  }

 private:
  struct CtxFree {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  size_t check(size_t ret) {
    if (ZSTD_isError(ret)) fail(path_, std::string("zstd compression: ") + ZSTD_getErrorName(ret));
    return ret;
  }
  // One compression step; writes what it produced. Returns what zstd has left to flush.
  size_t compress(ZSTD_inBuffer& in, ZSTD_EndDirective mode) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    size_t left = check(ZSTD_compressStream2(ctx_.get(), &out, &in, mode));
    plain_.write(out_.data(), out.pos);
    return left;
  }

  PlainSink plain_;
  const std::string& path_;
  std::unique_ptr<ZSTD_CCtx, CtxFree> ctx_;
  std::vector<char> out_;
};

// ---------------------------------------------------------------- body sources

class BodySource {
 public:
  virtual ~BodySource() = default;
  // Reads up to `size` bytes; fewer only at the end of the body (or of what is left of it).
  virtual size_t read(void* dst, size_t size) = 0;
  // After the last expected byte: why the body does not end there, or "" when it does.
  virtual std::string endProblem() = 0;
};

class PlainSource : public BodySource {
 public:
  PlainSource(std::FILE* file, const std::string& path) : file_(file), path_(path) {}
  size_t read(void* dst, size_t size) override {
    size_t got = std::fread(dst, 1, size, file_);
    if (got < size && std::ferror(file_)) fail(path_, "read error: " + systemError());
    return got;
  }
  std::string endProblem() override {
    char extra;
    return read(&extra, 1) ? "trailing data after the body" : "";
  }

 private:
  std::FILE* file_;
  const std::string& path_;
};

// A plain body read from a read-only mapping of the file: one copy (into the caller's records)
// instead of two (kernel to stdio buffer to records) and no read call per work-item. Only for
// regular files; TraceWriter replaces a file rather than truncating it, so a trace rewritten
// while it is read leaves this mapping intact. What has been read is unmapped as reading goes
// on (the pages stay in the page cache), so the reader's resident memory stays bounded.
class MappedSource : public BodySource {
 public:
  // Maps `file` from `offset` to its end; returns null when it cannot (then read it plainly).
  static std::unique_ptr<MappedSource> open(std::FILE* file, uint64_t offset) {
    struct stat st;
    int fd = fileno(file);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) < offset) return nullptr;
    size_t size = static_cast<size_t>(st.st_size);
    if (size == 0) return nullptr;
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) return nullptr;
    madvise(map, size, MADV_SEQUENTIAL);
    return std::unique_ptr<MappedSource>(new MappedSource(static_cast<const unsigned char*>(map), size, offset));
  }
  ~MappedSource() override { munmap(const_cast<unsigned char*>(map_), size_); }
  size_t read(void* dst, size_t size) override {
    size_t n = std::min(size, size_ - pos_);
    std::memcpy(dst, map_ + pos_, n);
    pos_ += n;
    if (pos_ - released_ >= kReleaseBytes) {
      size_t upTo = pos_ & ~(kReleaseBytes - 1);
      madvise(const_cast<unsigned char*>(map_) + released_, upTo - released_, MADV_DONTNEED);
      released_ = upTo;
    }
    return n;
  }
  std::string endProblem() override { return pos_ < size_ ? "trailing data after the body" : ""; }

 private:
  static constexpr size_t kReleaseBytes = size_t{16} << 20;  // a multiple of the page size
  MappedSource(const unsigned char* map, size_t size, size_t pos) : map_(map), size_(size), pos_(pos) {}
  const unsigned char* map_;
  size_t size_, pos_;
  size_t released_ = 0;  // bytes from the start of the file whose pages were given back
};

// An uncompressed body followed by its checksum (kFlagBodyChecksum): hashes what the reader
// takes and, at the end, compares the trailer, as zstd checks a frame's content checksum.
class ChecksummedSource : public BodySource {
 public:
  ChecksummedSource(std::unique_ptr<BodySource> body, const std::string& path) : body_(std::move(body)), path_(path) {}
  size_t read(void* dst, size_t size) override {
    size_t got = body_->read(dst, size);
    hash_.update(dst, got);
    return got;
  }
  std::string endProblem() override {
    unsigned char trailer[kBodyChecksumSize];
    if (body_->read(trailer, sizeof trailer) < sizeof trailer)
      return "truncated body: the file ends inside the body checksum";
    if (getLE(trailer, kBodyChecksumSize) != hash_.digest()) fail(path_, "body checksum mismatch (corrupt body)");
    return body_->endProblem();
  }

 private:
  std::unique_ptr<BodySource> body_;
  const std::string& path_;
  BodyHash hash_;
};

// Decompresses one zstd frame straight into the caller's memory through a bounded input buffer.
class ZstdSource : public BodySource {
 public:
  ZstdSource(std::FILE* file, const std::string& path)
      : plain_(file, path),
        path_(path),
        ctx_(ZSTD_createDCtx()),
        in_(ZSTD_DStreamInSize()),
        out_(ZSTD_DStreamOutSize()) {
    if (!ctx_) fail(path_, "cannot create a zstd decompression context");
    // Bounds the window a corrupt frame header can make zstd allocate.
    ZSTD_DCtx_setParameter(ctx_.get(), ZSTD_d_windowLogMax, kZstdWindowLogMax);
  }
  // Small reads (a work-item's count, its few records) are served from a buffer of decompressed
  // bytes: each ZSTD_decompressStream call has a fixed cost of about a hundred instructions, and
  // two per work-item were 3% of `cltrace simulate`'s instructions on the stencil trace.
  size_t read(void* dst, size_t size) override {
    char* d = static_cast<char*>(dst);
    size_t done = 0;
    while (done < size) {
      if (outPos_ == outLen_) {
        if (size - done >= out_.size()) {  // a large read decompresses in place
          done += decompress(d + done, size - done);
          break;  // short only at the end of the stream
        }
        outPos_ = 0;
        outLen_ = decompress(out_.data(), out_.size());
        if (outLen_ == 0) break;
      }
      const size_t n = std::min(size - done, outLen_ - outPos_);
      std::memcpy(d + done, out_.data() + outPos_, n);
      outPos_ += n;
      done += n;
    }
    return done;
  }
  std::string endProblem() override {
    char extra;
    if (read(&extra, 1)) return "trailing data after the body";
    if (!frameDone_) return "truncated body: the compressed stream ends inside its frame";
    if (input_.pos < input_.size || refill() > 0) return "trailing data after the compressed body";
    return {};
  }

 private:
  struct CtxFree {
    void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
  };
  // Decompresses up to `size` bytes into `dst`; fewer only where the frame or the file ends.
  size_t decompress(char* dst, size_t size) {
    ZSTD_outBuffer out{dst, size, 0};
    while (out.pos < size && !frameDone_) {
      if (input_.pos == input_.size) refill();
      size_t outBefore = out.pos, inBefore = input_.pos;
      size_t ret = ZSTD_decompressStream(ctx_.get(), &out, &input_);
      if (ZSTD_isError(ret))
        fail(path_, std::string("corrupt compressed body: ") + ZSTD_getErrorName(ret));
      frameDone_ = ret == 0;
      bool stuck = out.pos == outBefore && input_.pos == inBefore;
      if (stuck && input_.pos == input_.size && inputEnded_) break;  // truncated frame
    }
    return out.pos;
  }
  size_t refill() {
    size_t got = plain_.read(in_.data(), in_.size());
    input_ = ZSTD_inBuffer{in_.data(), got, 0};
    inputEnded_ = got == 0;
    if (!frameChecked_ && got > 0) checkFrameHeader(got);
    return got;
  }
  // The frame must carry its content checksum (RFC 8878: the magic, then the frame header
  // descriptor, whose bit 2 says so), as every compressed body cltrace writes does: without it
  // a corrupt body could decompress into records. A header that is not a frame's is left to
  // the decompressor to report.
  void checkFrameHeader(size_t got) {
    frameChecked_ = true;
    const auto* b = reinterpret_cast<const unsigned char*>(in_.data());
    if (got < 5 || getLE(b, 4) != 0xFD2FB528u) return;
    if ((b[4] & 0x04) == 0)
      fail(path_, "the compressed body's zstd frame has no content checksum (cltrace writes one), so it cannot be "
                  "checked: is this file from cltrace?");
  }

  PlainSource plain_;
  const std::string& path_;
  std::unique_ptr<ZSTD_DCtx, CtxFree> ctx_;
  std::vector<char> in_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  std::vector<char> out_;  // decompressed bytes not yet read: out_[outPos_, outLen_)
  size_t outPos_ = 0, outLen_ = 0;
  bool inputEnded_ = false;
  bool frameDone_ = false;
  bool frameChecked_ = false;  // checkFrameHeader ran
};

// An uncompressed body's size follows from the header; checking it up front rejects absurd
// counts before anything is allocated.
void checkPlainBodySize(std::FILE* file, const std::string& path, const TraceHeader& h, uint64_t headerSize,
                        bool bodyChecksum) {
  struct stat st;
  if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) return;  // streamed checks only
  uint64_t bodySize = static_cast<uint64_t>(st.st_size) - headerSize;
  std::string available = to_string(bodySize) + " bytes after the header";
  const bool units = h.version == kTraceFormatUnits;
  const uint64_t items = units ? h.unitCount : h.recordCount, itemSize = units ? kUnitBytes : kRecordSize;
  const std::string itemName = units ? "unit" : "record";
  if (items > bodySize / itemSize)  // also keeps items * itemSize below from overflowing
    fail(path, itemName + " count " + to_string(items) + " is larger than the file can hold (" +
                   available + "): truncated body or corrupt header");
  uint64_t needed;
  const uint64_t trailer = bodyChecksum ? kBodyChecksumSize : 0;
  bool overflow = __builtin_mul_overflow(h.workItemCount, kCountSize, &needed) ||
                  __builtin_add_overflow(needed, items * itemSize + trailer, &needed);
  std::string counts = "the header's " + to_string(h.workItemCount) + " work-items and " +
                       to_string(items) + " " + itemName + "s need " +
                       (overflow ? std::string("over 2^64") : to_string(needed)) + " bytes" +
                       (bodyChecksum ? " with the body checksum" : "") + ", the file has ";
  if (overflow || needed > bodySize) fail(path, "truncated body: " + counts + "only " + available);
  if (needed < bodySize) fail(path, "trailing data after the body: " + counts + available);
}

}  // namespace

// ---------------------------------------------------------------- public API

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t hash = seed;
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

static std::array<uint64_t, 3> delinearize(uint64_t index, const std::array<uint64_t, 3>& extent) {
  return {index % extent[0], index / extent[0] % extent[1], index / extent[0] / extent[1]};
}

WorkItemPosition NDRange::positionOf(uint64_t fileIndex) const {
  uint64_t size = workgroupSize();
  return {delinearize(fileIndex / size, groups()), delinearize(fileIndex % size, local)};
}

struct TraceWriter::Impl {
  std::string path;
  TraceHeader header;
  FilePtr file;
  std::unique_ptr<BodySink> sink;
  uint64_t workItems = 0;
  uint64_t records = 0;
  uint64_t units = 0;  // version 2
  std::unique_ptr<UnitRecordDecoder> shapes;  // version 2: walks the units
  bool closed = false;
  bool failed = false;
  std::optional<OutputFile> output;  // removed unless closed successfully, when we made it

  [[noreturn]] void error(const std::string& what) {
    failed = true;
    fail(path, what);
  }
  void checkUsable(const char* action) {
    if (failed) fail(path, std::string("cannot ") + action + " after an earlier error");
    if (closed) fail(path, std::string("cannot ") + action + ": the writer is closed");
  }
  void finish();
  // Version 2 writes: the writer is usable and the header says unit records.
  void checkUnitsWritable() {
    checkUsable("write");
    if (header.version != kTraceFormatUnits) error("unit records need format version 2");
  }
  // The next work-item's `count` units holding `unitRecords` records (checked against the header).
  void appendUnits(const uint32_t* words, uint64_t count, uint64_t unitRecords) {
    if (workItems == header.workItemCount) error("more work-items than the header's " + to_string(header.workItemCount));
    if (count && !words) error("null units for work-item " + to_string(workItems));
    if (header.unitCount != kUnknownRecordCount && count > header.unitCount - units)
      error("more units than the header's " + to_string(header.unitCount));
    if (header.recordCount != kUnknownRecordCount && unitRecords > header.recordCount - records)
      error("more records than the header's " + to_string(header.recordCount));
    writeItem(count, words, count * kUnitBytes);
    units += count;
    records += unitRecords;
  }
  // Writes one work-item: its u64 count, then `bytes` bytes of records or units.
  void writeItem(uint64_t count, const void* data, uint64_t bytes) {
    std::string countBytes;
    putLE(countBytes, count, 8);
    try {
      sink->write(countBytes.data(), countBytes.size());
      if (bytes != 0) sink->write(data, bytes);  // an empty work-item's data may be null
    } catch (const TraceFileError&) {
      failed = true;
      throw;
    }
    ++workItems;
  }
  void discard() {
    file.reset();
    if (output) output->discard();
  }
};

TraceWriter::TraceWriter(const std::string& path, const TraceHeader& header)
    : impl_(std::make_unique<Impl>()) {
  Impl& w = *impl_;
  w.path = path;
  w.header = header;
  std::string problem = headerProblem(w.header);
  if (!problem.empty()) fail(path, "invalid header: " + problem);
  // A failed write removes what it wrote, but only a file it made (OutputFile).
  try {
    w.output.emplace(path);
  } catch (const std::runtime_error& e) {
    fail(path, e.what());
  }
  const OutputFile& out = *w.output;
  const bool countsLater = w.header.recordCount == kUnknownRecordCount ||
                           (w.header.version == kTraceFormatUnits && w.header.unitCount == kUnknownRecordCount);
  const std::string unseekable =
      "cannot be written: the trace's header is completed at the end, which needs a file to seek in, not a pipe or "
      "terminal";
  // (Said before opening: opening a pipe would wait for a reader.)
  if (countsLater && out.pipeOrSocket()) fail(path, unseekable);
  w.file.reset(std::fopen(out.filePath().c_str(), "wb"));
  if (!w.file) fail(path, "cannot create: " + systemError());
  if (countsLater && out.special() && fseeko(w.file.get(), 0, SEEK_CUR) != 0) fail(path, unseekable);
  if (w.header.version == kTraceFormatUnits) w.shapes = std::make_unique<UnitRecordDecoder>(w.header.instructions);
  try {
    std::string bytes = encodeHeader(w.header);
    PlainSink(w.file.get(), w.path).write(bytes.data(), bytes.size());
    if (w.header.compressed)
      w.sink = std::make_unique<ZstdSink>(w.file.get(), w.path);
    else
      w.sink = std::make_unique<ChecksummedSink>(w.file.get(), w.path);
  } catch (const TraceFileError&) {
    w.discard();
    throw;
  }
}

TraceWriter::~TraceWriter() { impl_->discard(); }

void TraceWriter::writeWorkItemUnits(const uint32_t* words, uint64_t count) {
  Impl& w = *impl_;
  w.checkUnitsWritable();
  uint64_t records = 0;
  std::string error;
  if (count && words &&
      !w.shapes->forEach(words, count, [&](const uint32_t*, const InstructionShape&) { ++records; }, error))
    w.error("work-item " + to_string(w.workItems) + ": " + error);
  w.appendUnits(words, count, records);
}

void TraceWriter::writeCountedWorkItemUnits(const uint32_t* words, uint64_t count, uint64_t records) {
  impl_->checkUnitsWritable();
  impl_->appendUnits(words, count, records);
}

void TraceWriter::writeWorkItem(const Record* records, uint64_t count) {
  Impl& w = *impl_;
  w.checkUsable("write");
  if (w.header.version != kTraceFormatRecords) w.error("48-byte records need format version 1");
  if (w.workItems == w.header.workItemCount)
    w.error("more work-items than the header's " + to_string(w.header.workItemCount));
  if (count && !records) w.error("null records for work-item " + to_string(w.workItems));
  std::string problem = recordsProblem(records, count, w.workItems);
  if (!problem.empty()) w.error(problem);
  bool known = w.header.recordCount != kUnknownRecordCount;
  if (known && count > w.header.recordCount - w.records)
    w.error("more records than the header's " + to_string(w.header.recordCount));
  w.writeItem(count, records, count * kRecordSize);
  w.records += count;
}

void TraceWriter::Impl::finish() {
  if (workItems != header.workItemCount)
    fail(path, "closed after " + to_string(workItems) + " of the header's " +
                   to_string(header.workItemCount) + " work-items");
  bool known = header.recordCount != kUnknownRecordCount;
  if (known && records != header.recordCount)
    fail(path, "closed after " + to_string(records) + " of the header's " +
                   to_string(header.recordCount) + " records");
  const bool unitsKnown = header.version != kTraceFormatUnits || header.unitCount != kUnknownRecordCount;
  if (header.version == kTraceFormatUnits && unitsKnown && units != header.unitCount)
    fail(path, "closed after " + to_string(units) + " of the header's " + to_string(header.unitCount) + " units");
  sink->finish();
  if (!known || !unitsKnown) {
    header.recordCount = records;
    if (header.version == kTraceFormatUnits) header.unitCount = units;
    std::string bytes = encodeHeader(header);
    if (fseeko(file.get(), 0, SEEK_SET) != 0)
      fail(path, "cannot seek back to patch the record count: " + systemError());
    PlainSink(file.get(), path).write(bytes.data(), bytes.size());
  }
  if (std::fclose(file.release()) != 0) fail(path, "write error on close: " + systemError());
  output->keep();
}

void TraceWriter::close() {
  Impl& w = *impl_;
  if (w.closed) return;
  try {
    w.checkUsable("close");
    w.finish();
    w.closed = true;
  } catch (const TraceFileError&) {
    w.failed = true;
    w.discard();
    throw;
  }
}

struct TraceReader::Impl {
  std::string path;
  FilePtr file;
  TraceHeader header;
  std::unique_ptr<BodySource> body;
  uint64_t nextIndex = 0;
  uint64_t recordsLeft = 0;
  uint64_t unitsLeft = 0;                         // version 2
  std::unique_ptr<UnitRecordDecoder> decoder;  // version 2
  std::vector<uint32_t> words;                    // version 2: one work-item's units
  bool ended = false;

  // Reads exactly `size` body bytes or reports a truncated body, the body ending inside
  // `what` of the current work-item. (The message is built only on failure: this runs twice
  // per work-item.)
  void readExact(void* dst, size_t size, const char* what) {
    if (body->read(dst, size) < size)
      fail(path, std::string("truncated body: the body ends inside ") + what + " " + workItemName());
  }
  std::string workItemName() const {
    return "work-item " + to_string(nextIndex) + " (of " + to_string(header.workItemCount) + ")";
  }
  uint64_t readCount();
  void readRecords(std::vector<Record>& out, uint64_t count);
  // Version 2: reads `count` units and appends the records they hold; returns how many.
  uint64_t readUnits(std::vector<Record>& out, uint64_t count);
  void checkEnd();
};

TraceReader::TraceReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  Impl& r = *impl_;
  r.path = path;
  r.file.reset(std::fopen(path.c_str(), "rb"));
  if (!r.file) fail(path, "cannot open: " + systemError());
  struct stat st {};
  if (fstat(fileno(r.file.get()), &st) == 0 && S_ISDIR(st.st_mode)) fail(path, "is a directory, not a trace file");
  uint64_t headerSize = 0;
  bool bodyChecksum = false;
  r.header = decodeHeader(r.file.get(), r.path, headerSize, bodyChecksum);
  r.recordsLeft = r.header.recordCount;
  if (r.header.version == kTraceFormatUnits) {
    r.unitsLeft = r.header.unitCount;
    r.decoder = std::make_unique<UnitRecordDecoder>(r.header.instructions);
  }
  if (r.header.compressed) {
    r.body = std::make_unique<ZstdSource>(r.file.get(), r.path);
  } else {
    checkPlainBodySize(r.file.get(), r.path, r.header, headerSize, bodyChecksum);
    r.body = MappedSource::open(r.file.get(), headerSize);
    if (!r.body) r.body = std::make_unique<PlainSource>(r.file.get(), r.path);
    if (bodyChecksum) r.body = std::make_unique<ChecksummedSource>(std::move(r.body), r.path);
  }
}

TraceReader::~TraceReader() = default;

const TraceHeader& TraceReader::header() const { return impl_->header; }
const std::string& TraceReader::path() const { return impl_->path; }

uint64_t TraceReader::workItemIndex() const { return impl_->nextIndex ? impl_->nextIndex - 1 : 0; }

uint64_t TraceReader::Impl::readCount() {
  unsigned char bytes[8];
  const bool units = header.version == kTraceFormatUnits;
  readExact(bytes, sizeof bytes, units ? "the unit count of" : "the record count of");
  uint64_t count = getLE(bytes, 8);
  if (units) {
    if (count > unitsLeft)
      fail(path, workItemName() + " claims " + to_string(count) + " units but only " + to_string(unitsLeft) +
                     " of the header's " + to_string(header.unitCount) + " remain");
    return count;
  }
  if (count > recordsLeft)
    fail(path, workItemName() + " claims " + to_string(count) + " records but only " +
                   to_string(recordsLeft) + " of the header's " + to_string(header.recordCount) +
                   " remain");
  return count;
}

void TraceReader::Impl::readRecords(std::vector<Record>& out, uint64_t count) {
  // Appends in bounded chunks: a corrupt count cannot make this allocate more than the body
  // holds before the read fails.
  const size_t first = out.size();
  while (out.size() - first < count) {
    size_t start = out.size();
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(count - (start - first), kRecordsPerChunk));
    out.resize(start + chunk);
    readExact(out.data() + start, chunk * kRecordSize, "the records of");
  }
  std::string problem = recordsProblem(out.data() + first, count, nextIndex);
  if (!problem.empty()) fail(path, problem);
}

uint64_t TraceReader::Impl::readUnits(std::vector<Record>& out, uint64_t count) {
  // Grows in bounded chunks, like readRecords: a corrupt count fails on the read first. The
  // buffer keeps its size between work-items, so that it is not zero-filled for each.
  const uint64_t wanted = count * kUnitWords;
  for (uint64_t have = 0; have < wanted;) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(wanted - have, kRecordsPerChunk * 4));
    if (words.size() < have + chunk) words.resize(have + chunk);
    readExact(words.data() + have, chunk * sizeof(uint32_t), "the units of");
    have += chunk;
  }
  const size_t first = out.size();
  std::string error;
  if (!decoder->expand(words.data(), count, out, error)) fail(path, workItemName() + ": " + error);
  const uint64_t records = out.size() - first;
  if (records > recordsLeft)
    fail(path, workItemName() + " holds " + to_string(records) + " records but only " + to_string(recordsLeft) +
                   " of the header's " + to_string(header.recordCount) + " remain");
  std::string problem = recordsProblem(out.data() + first, records, nextIndex);
  if (!problem.empty()) fail(path, problem);
  return records;
}

void TraceReader::Impl::checkEnd() {
  std::string counts = " (header: " + to_string(header.workItemCount) + " work-items, " +
                       to_string(header.recordCount) + " records)";
  if (recordsLeft != 0)
    fail(path, "the body holds " + to_string(header.recordCount - recordsLeft) +
                   " records but the header says " + to_string(header.recordCount));
  if (unitsLeft != 0)
    fail(path, "the body holds " + to_string(header.unitCount - unitsLeft) + " units but the header says " +
                   to_string(header.unitCount));
  std::string problem = body->endProblem();
  if (!problem.empty()) fail(path, problem + counts);
}

bool TraceReader::nextWorkItem(std::vector<Record>& out) {
  out.clear();
  return appendNextWorkItem(out);
}

bool TraceReader::appendNextWorkItem(std::vector<Record>& out) {
  Impl& r = *impl_;
  if (r.nextIndex == r.header.workItemCount) {
    if (!r.ended) r.checkEnd();
    r.ended = true;
    return false;
  }
  uint64_t count = r.readCount();
  if (r.header.version == kTraceFormatUnits) {
    r.recordsLeft -= r.readUnits(out, count);
    r.unitsLeft -= count;
  } else {
    r.readRecords(out, count);
    r.recordsLeft -= count;
  }
  ++r.nextIndex;
  return true;
}

std::string instructionSource(const std::string& text) {
  const size_t end = text.find(": ");
  if (end == std::string::npos) return "";
  const std::string where = text.substr(0, end);
  // [NAME ]line L[:C] (NAME a header's path, which may hold spaces).
  const size_t line = where.rfind("line ");
  if (line == std::string::npos || (line != 0 && where[line - 1] != ' ')) return "";
  const std::string numbers = where.substr(line + 5);
  const size_t colon = numbers.find(':');
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(numbers.substr(0, colon)) || (colon != std::string::npos && !digits(numbers.substr(colon + 1))))
    return "";
  return where;
}

}  // namespace cltrace
