// Binary scheduled files: writer and validating reader (layout in docs/scheduler.md).
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "cltrace/scheduler/output.h"
#include "cltrace/trace_file.h"
#include "output_internal.h"

namespace cltrace::sched {

namespace detail {

void WordHash::update(const unsigned char* data, size_t n) {
  bytes_ += n;
  while (n > 0 && pendingBytes_ != 0) {
    pending_ |= static_cast<uint64_t>(*data++) << (8 * pendingBytes_);
    --n;
    if (++pendingBytes_ == 8) {
      mix(pending_);
      pending_ = 0;
      pendingBytes_ = 0;
    }
  }
  while (n >= 8) {
    mix(loadLE64(data));
    data += 8;
    n -= 8;
  }
  while (n > 0) {
    pending_ |= static_cast<uint64_t>(*data++) << (8 * pendingBytes_);
    ++pendingBytes_;
    --n;
  }
}

uint64_t WordHash::finish() const {
  WordHash copy = *this;
  if (copy.pendingBytes_ != 0) copy.mix(copy.pending_);
  uint64_t h = copy.h_ ^ bytes_;
  h *= 0x100000001b3ull;
  return h ^ (h >> 32);
}

}  // namespace detail

using detail::loadLE32;
using detail::loadLE64;
using detail::storeLE32;
using detail::storeLE64;

namespace {

constexpr uint64_t kNotClosed = ~0ull;
constexpr size_t kStepCountOffset = 144;
constexpr uint32_t kMaxKernelName = 1u << 16;

std::string fileText(const std::string& path) { return "scheduled file '" + path + "'"; }

class BinaryWriter final : public StepWriter {
 public:
  BinaryWriter(const std::string& path, const ScheduleInfo& info)
      : path_(path), laneWidth_(info.laneWidth) {
    if (info.kernelName.size() > kMaxKernelName)
      throw ScheduleFileError(fileText(path) + ": kernel name too long");
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_)
      throw ScheduleFileError("cannot create " + fileText(path) + ": " + std::strerror(errno));
    try {
      writeHeader(info);
    } catch (...) {
      std::fclose(file_);  // a constructor that throws runs no destructor
      file_ = nullptr;
      throw;
    }
    buf_.reserve(kBufferBytes + 4096);
  }

  ~BinaryWriter() override {
    if (file_) std::fclose(file_);  // not closed: the counts stay "incomplete"
  }

 private:
  void writeHeader(const ScheduleInfo& info) {
    const ScheduleInfo& i = info;
    std::vector<unsigned char> h(kScheduleHeaderFixedBytes + i.kernelName.size(), 0);
    unsigned char* p = h.data();
    std::memcpy(p, kScheduleMagic, 8);
    storeLE32(p + 8, kScheduleFormatVersion);
    storeLE32(p + 12, static_cast<uint32_t>(h.size()));
    p[16] = static_cast<uint8_t>(i.config.policy);
    p[17] = static_cast<uint8_t>(i.config.interWarp);
    storeLE32(p + 20, i.config.warpSize);
    storeLE32(p + 24, i.laneWidth);
    storeLE32(p + 28, i.warpsPerWorkgroup);
    storeLE32(p + 32, i.config.smCount);
    storeLE32(p + 36, i.config.maxWorkgroupsPerSm);
    storeLE32(p + 40, i.config.maxThreadsPerSm);
    storeLE32(p + 44, i.config.twoLevelActiveWarps);
    storeLE64(p + 48, i.config.seed);
    storeLE32(p + 56, i.range.dims);
    for (int d = 0; d < 3; ++d) {
      storeLE64(p + 64 + 8 * d, i.range.global[d]);
      storeLE64(p + 88 + 8 * d, i.range.local[d]);
      storeLE64(p + 112 + 8 * d, i.range.offset[d]);
    }
    storeLE64(p + 136, i.workgroupCount);
    storeLE64(p + 144, kNotClosed);
    storeLE64(p + 152, kNotClosed);
    storeLE32(p + 160, static_cast<uint32_t>(i.kernelName.size()));
    std::memcpy(p + 164, i.kernelName.data(), i.kernelName.size());
    put(h.data(), h.size());
    hash_.update(h.data(), h.size());  // as written now: the counts still all ones
  }

 public:
  void write(const WarpStep& s) override {
    if (!file_) throw ScheduleFileError(fileText(path_) + ": write after close");
    const size_t lanes = s.lanes.size();
    if (lanes == 0 || lanes > laneWidth_)
      throw ScheduleFileError(fileText(path_) + ": a step has " + std::to_string(lanes) +
                              " lanes (the lane width is " + std::to_string(laneWidth_) + ")");
    const size_t old = buf_.size();
    buf_.resize(old + kScheduleStepBytes + kScheduleLaneBytes * lanes);
    unsigned char* p = buf_.data() + old;
    storeLE64(p, s.workgroup);
    storeLE64(p + 8, s.step);
    storeLE64(p + 16, s.cycle);
    storeLE32(p + 24, s.sm);
    storeLE32(p + 28, s.warp);
    storeLE32(p + 32, s.instruction);
    p[36] = static_cast<uint8_t>(s.kind);
    p[37] = s.flags;
    p[38] = 0;
    p[39] = 0;
    storeLE32(p + 40, static_cast<uint32_t>(lanes));
    p += kScheduleStepBytes;
    for (const LaneAccess& l : s.lanes) {
      storeLE32(p, l.localThread);
      storeLE32(p + 4, l.size);
      storeLE64(p + 8, l.address);
      p += kScheduleLaneBytes;
    }
    ++steps_;
    lanes_ += lanes;
    if (buf_.size() >= kBufferBytes) flush();
  }

  void close() override {
    if (!file_) return;
    flush();
    unsigned char trailer[kScheduleTrailerBytes];
    std::memcpy(trailer, kScheduleEndMagic, 8);
    storeLE64(trailer + 8, hash_.finish());
    put(trailer, sizeof trailer);
    unsigned char counts[16];
    storeLE64(counts, steps_);
    storeLE64(counts + 8, lanes_);
    if (std::fseek(file_, static_cast<long>(kStepCountOffset), SEEK_SET) != 0)
      fail("cannot seek to the header");
    put(counts, sizeof counts);
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) throw ScheduleFileError("cannot write " + fileText(path_) + ": " + std::strerror(errno));
  }

 private:
  static constexpr size_t kBufferBytes = 1 << 20;

  [[noreturn]] void fail(const std::string& what) {
    std::fclose(file_);
    file_ = nullptr;
    throw ScheduleFileError("cannot write " + fileText(path_) + ": " + what);
  }
  void put(const void* data, size_t n) {
    if (std::fwrite(data, 1, n, file_) != n) fail(std::strerror(errno));
  }
  void flush() {
    if (buf_.empty()) return;
    hash_.update(buf_.data(), buf_.size());
    put(buf_.data(), buf_.size());
    buf_.clear();
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  uint32_t laneWidth_;
  std::vector<unsigned char> buf_;
  detail::WordHash hash_;
  uint64_t steps_ = 0;
  uint64_t lanes_ = 0;
};

}  // namespace

std::unique_ptr<StepWriter> detail::makeBinaryWriter(const std::string& path,
                                                     const ScheduleInfo& info) {
  return std::make_unique<BinaryWriter>(path, info);
}

// ---------------------------------------------------------------------------------------

ScheduleReader::ScheduleReader(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_)
    throw ScheduleFileError("cannot open " + fileText(path) + ": " + std::strerror(errno));
  if (std::fseek(file_, 0, SEEK_END) != 0) fail("cannot seek");
  const long size = std::ftell(file_);
  if (size < 0 || std::fseek(file_, 0, SEEK_SET) != 0) fail("cannot determine its size");
  fileSize_ = static_cast<uint64_t>(size);
  buffer_.resize(1 << 16);

  if (fileSize_ < 8)
    fail("not a cltrace schedule file (only " + std::to_string(fileSize_) + " bytes)");
  unsigned char h[kScheduleHeaderFixedBytes];
  fill(h, 8);
  if (std::memcmp(h, kScheduleMagic, 8) != 0) fail("not a cltrace schedule file (bad magic)");
  if (fileSize_ < kScheduleHeaderFixedBytes)
    fail("truncated: the header needs " + std::to_string(kScheduleHeaderFixedBytes) +
         " bytes, the file has " + std::to_string(fileSize_));
  fill(h + 8, kScheduleHeaderFixedBytes - 8);
  const uint32_t version = loadLE32(h + 8);
  if (version < kScheduleFormatOldestRead || version > kScheduleFormatVersion)
    fail("unsupported format version " + std::to_string(version) + " (this build reads versions " +
         std::to_string(kScheduleFormatOldestRead) + " to " + std::to_string(kScheduleFormatVersion) + ")");
  const uint32_t headerBytes = loadLE32(h + 12);
  const uint32_t nameBytes = loadLE32(h + 160);
  if (nameBytes > kMaxKernelName || headerBytes != kScheduleHeaderFixedBytes + nameBytes)
    fail("corrupt header: header size " + std::to_string(headerBytes) +
         " does not match the kernel name length " + std::to_string(nameBytes));
  if (h[16] > static_cast<uint8_t>(Policy::Warp))
    fail("corrupt header: unknown policy " + std::to_string(h[16]));
  if (h[17] > static_cast<uint8_t>(InterWarpOrder::TwoLevel))
    fail("corrupt header: unknown inter-warp order " + std::to_string(h[17]));
  if (h[18] != 0 || h[19] != 0 || loadLE32(h + 60) != 0) fail("corrupt header: reserved bytes are not zero");
  SchedulerConfig& c = info_.config;
  c.policy = static_cast<Policy>(h[16]);
  c.interWarp = static_cast<InterWarpOrder>(h[17]);
  c.warpSize = loadLE32(h + 20);
  info_.laneWidth = loadLE32(h + 24);
  info_.warpsPerWorkgroup = loadLE32(h + 28);
  c.smCount = loadLE32(h + 32);
  c.maxWorkgroupsPerSm = loadLE32(h + 36);
  c.maxThreadsPerSm = loadLE32(h + 40);
  c.twoLevelActiveWarps = loadLE32(h + 44);
  c.seed = loadLE64(h + 48);
  info_.range.dims = loadLE32(h + 56);
  for (int d = 0; d < 3; ++d) {
    info_.range.global[d] = loadLE64(h + 64 + 8 * d);
    info_.range.local[d] = loadLE64(h + 88 + 8 * d);
    info_.range.offset[d] = loadLE64(h + 112 + 8 * d);
  }
  info_.workgroupCount = loadLE64(h + 136);
  stepCount_ = loadLE64(h + 144);
  laneCount_ = loadLE64(h + 152);
  try {
    c.validate();
    validateRange(info_.range);
  } catch (const std::invalid_argument& e) {
    fail(std::string("corrupt header: ") + e.what());
  }
  const uint64_t wgSize = info_.range.workgroupSize();
  // The scheduler refuses such a configuration (no SM can hold a workgroup), so no schedule has it.
  if (wgSize > c.maxThreadsPerSm)
    fail("corrupt header: max_threads_per_sm " + std::to_string(c.maxThreadsPerSm) +
         " is smaller than the workgroup size " + std::to_string(wgSize) + " (no SM could hold a workgroup)");
  if (info_.laneWidth != (c.policy == Policy::Warp ? c.warpSize : 1))
    fail("corrupt header: lane width " + std::to_string(info_.laneWidth) +
         " does not fit the policy and warp size");
  if (info_.warpsPerWorkgroup != (wgSize + c.warpSize - 1) / c.warpSize)
    fail("corrupt header: " + std::to_string(info_.warpsPerWorkgroup) +
         " warps per workgroup does not fit the workgroup and warp sizes");
  if (info_.workgroupCount != info_.range.workgroups())
    fail("corrupt header: workgroup count " + std::to_string(info_.workgroupCount) +
         " does not match the NDRange");
  if (stepCount_ == kNotClosed || laneCount_ == kNotClosed)
    fail("incomplete: its writer did not finish it (step count missing)");
  if (fileSize_ < headerBytes)
    fail("truncated inside the header (" + std::to_string(fileSize_) + " bytes)");
  info_.kernelName.resize(nameBytes);
  fill(info_.kernelName.data(), nameBytes);
  if (version >= 2) {  // the header as its writer hashed it: before the counts were patched in
    std::memset(h + kStepCountOffset, 0xff, 16);
    hash_.update(h, sizeof h);
    hash_.update(reinterpret_cast<const unsigned char*>(info_.kernelName.data()), nameBytes);
  }

  if (laneCount_ < stepCount_ || laneCount_ / info_.laneWidth > stepCount_)
    fail("corrupt header: " + std::to_string(stepCount_) + " steps cannot hold " +
         std::to_string(laneCount_) + " lanes");
  const uint64_t room = fileSize_ - headerBytes;
  const bool fitsCounts =
      stepCount_ <= room / kScheduleStepBytes && laneCount_ <= room / kScheduleLaneBytes;
  const unsigned __int128 expected =
      static_cast<unsigned __int128>(stepCount_) * kScheduleStepBytes +
      static_cast<unsigned __int128>(laneCount_) * kScheduleLaneBytes + kScheduleTrailerBytes;
  if (!fitsCounts || expected > room)
    fail("truncated: the header announces " + std::to_string(stepCount_) + " steps with " +
         std::to_string(laneCount_) + " lanes, which do not fit in its " +
         std::to_string(fileSize_) + " bytes");
  if (expected < room)
    fail("corrupt: " + std::to_string(static_cast<uint64_t>(room - expected)) +
         " unexpected bytes after the announced steps");
}

ScheduleReader::~ScheduleReader() {
  if (file_) std::fclose(file_);
}

void ScheduleReader::fail(const std::string& what) const {
  throw ScheduleFileError(fileText(path_) + ": " + what);
}

void ScheduleReader::fill(void* dst, size_t n) {
  if (position_ + n > fileSize_)
    fail("truncated: needs " + std::to_string(n) + " bytes at offset " + std::to_string(position_) +
         ", the file has " + std::to_string(fileSize_));
  auto* out = static_cast<unsigned char*>(dst);
  while (n > 0) {
    if (bufferPos_ == bufferEnd_) {
      bufferPos_ = 0;
      bufferEnd_ = std::fread(buffer_.data(), 1, buffer_.size(), file_);
      if (bufferEnd_ == 0) fail("read error at offset " + std::to_string(position_));
    }
    const size_t take = std::min(n, bufferEnd_ - bufferPos_);
    std::memcpy(out, buffer_.data() + bufferPos_, take);
    bufferPos_ += take;
    out += take;
    n -= take;
    position_ += take;
  }
}

bool ScheduleReader::next(WarpStep& out) {
  if (finished_) return false;
  if (stepsRead_ == stepCount_) {
    unsigned char t[kScheduleTrailerBytes];
    fill(t, sizeof t);
    if (std::memcmp(t, kScheduleEndMagic, 8) != 0) fail("corrupt: bad end marker");
    if (lanesRead_ != laneCount_)
      fail("corrupt: the steps hold " + std::to_string(lanesRead_) + " lanes, the header says " +
           std::to_string(laneCount_));
    if (loadLE64(t + 8) != hash_.finish()) fail("corrupt: checksum mismatch");
    finished_ = true;
    return false;
  }
  const auto stepText = [this] { return "step " + std::to_string(stepsRead_); };
  unsigned char h[kScheduleStepBytes];
  fill(h, sizeof h);
  hash_.update(h, sizeof h);
  out.workgroup = loadLE64(h);
  out.step = loadLE64(h + 8);
  out.cycle = loadLE64(h + 16);
  out.sm = loadLE32(h + 24);
  out.warp = loadLE32(h + 28);
  out.instruction = loadLE32(h + 32);
  const uint8_t kind = h[36];
  out.flags = h[37];
  const uint32_t lanes = loadLE32(h + 40);
  if (out.workgroup >= info_.workgroupCount)
    fail("corrupt: " + stepText() + " names workgroup " + std::to_string(out.workgroup) + " of " +
         std::to_string(info_.workgroupCount));
  if (out.sm >= info_.config.smCount)
    fail("corrupt: " + stepText() + " names SM " + std::to_string(out.sm));
  // The scheduler issues in ascending (cycle, SM) order (a cycle of 2^64 - 1 at step 0 was
  // taken, and reported as the run's length).
  if (stepsRead_ > 0 && (out.cycle < lastCycle_ || (out.cycle == lastCycle_ && out.sm < lastSm_)))
    fail("corrupt: " + stepText() + " issues at cycle " + std::to_string(out.cycle) + " on SM " +
         std::to_string(out.sm) + ", before the step before it (cycle " + std::to_string(lastCycle_) + ", SM " +
         std::to_string(lastSm_) + ")");
  lastCycle_ = out.cycle;
  lastSm_ = out.sm;
  if (out.warp >= info_.warpsPerWorkgroup)
    fail("corrupt: " + stepText() + " names warp " + std::to_string(out.warp));
  if (out.instruction >= kMaxTraceInstructions)  // a trace's ids, which steps carry
    fail("corrupt: " + stepText() + " names instruction " + std::to_string(out.instruction) +
         " (instruction ids are below " + std::to_string(kMaxTraceInstructions) + ")");
  if (kind >= kAccessKindCount)
    fail("corrupt: " + stepText() + " has unknown kind " + std::to_string(kind));
  if ((out.flags & ~kKnownRecordFlags) != 0)
    fail("corrupt: " + stepText() + " has unknown flags " + std::to_string(out.flags));
  if (h[38] != 0 || h[39] != 0) fail("corrupt: " + stepText() + " has reserved bytes that are not zero");
  if (lanes == 0 || lanes > info_.laneWidth || lanes > laneCount_ - lanesRead_)
    fail("corrupt: " + stepText() + " has " + std::to_string(lanes) + " lanes");
  out.kind = static_cast<AccessKind>(kind);
  out.warpKey = out.workgroup * info_.warpsPerWorkgroup + out.warp;
  out.lanes.resize(lanes);
  const uint64_t wgSize = info_.range.workgroupSize();
  const uint32_t warpSize = info_.config.warpSize;
  unsigned char lane[kScheduleLaneBytes];
  LaneBounds bounds;
  for (uint32_t i = 0; i < lanes; ++i) {
    fill(lane, sizeof lane);
    hash_.update(lane, sizeof lane);
    LaneAccess& l = out.lanes[i];
    l.localThread = loadLE32(lane);
    l.size = loadLE32(lane + 4);
    l.address = loadLE64(lane + 8);
    if (l.localThread >= wgSize || l.localThread / warpSize != out.warp ||
        (i > 0 && l.localThread <= out.lanes[i - 1].localThread))
      fail("corrupt: " + stepText() + " lane " + std::to_string(i) + " names thread " +
           std::to_string(l.localThread));
    uint64_t lastByte = 0;
    if (l.size != 0 && __builtin_add_overflow(l.address, uint64_t{l.size} - 1, &lastByte))
      fail("corrupt: " + stepText() + " lane " + std::to_string(i) + " accesses " + std::to_string(l.size) +
           " bytes at " + std::to_string(l.address) + ", past the end of the 64-bit address space");
    bounds.add(l.address, l.size);
  }
  out.bounds = bounds;
  out.hasBounds = true;
  ++stepsRead_;
  lanesRead_ += lanes;
  return true;
}

}  // namespace cltrace::sched
