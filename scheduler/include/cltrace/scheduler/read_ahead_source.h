// A WorkgroupSource that reads another one on a thread of its own, a few workgroups ahead, so
// that decoding a trace file (zstd and the record format: most of a single run's time) overlaps
// scheduling and simulating it. The workgroups, their order and any error are the inner
// source's; an error is thrown by the nextWorkgroup call that reaches it, as it would have been.
//
// The two threads hand workgroups over in batches: the reader fills up to `depth` workgroups or
// kReadyRecords records (at least one workgroup, however large), then sleeps until the
// scheduler has taken them down to half; a scheduler that finds none ready sleeps until half
// are there again, or the source ended. Handing them over one at a time woke a thread per
// workgroup: with one work-item a workgroup (262144 of them) the wake-ups took 8 s of a run
// that took 0.3 s on one thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cltrace/scheduler/source.h"

namespace cltrace::sched {

class ReadAheadSource : public WorkgroupSource {
 public:
  // Records held ready at most (48 bytes each), unless one workgroup alone has more.
  static constexpr uint64_t kReadyRecords = uint64_t(1) << 16;

  // `inner` must outlive this. Once constructed, only this source's thread calls it (its range,
  // kernel name and loop nest are taken here). `depth`: workgroups held ready at most (at least
  // 1); each holds its records until the scheduler takes it.
  explicit ReadAheadSource(WorkgroupSource& inner, size_t depth = 64);
  ~ReadAheadSource() override;  // stops the thread after the workgroup it is reading, if any

  ReadAheadSource(const ReadAheadSource&) = delete;
  ReadAheadSource& operator=(const ReadAheadSource&) = delete;

  const NDRange& range() const override { return range_; }
  std::string kernelName() const override { return kernelName_; }
  const LoopNest* loopNest() const override { return loopNest_ ? &*loopNest_ : nullptr; }
  // The inner source's next workgroup (its buffers are swapped into `out`, so `out`'s old
  // capacity is reused for a later workgroup), false after the last, or the inner's error.
  bool nextWorkgroup(WorkgroupTrace& out) override;

 private:
  void produce();
  // With mutex_ held: the reader may add a workgroup; the scheduler has a batch to take (or the
  // reader is full); the reader may go on after waiting for room.
  bool hasRoom() const { return ready_.size() < depth_ && (ready_.empty() || readyRecords_ < kReadyRecords); }
  bool batchReady() const {
    return ready_.size() >= (depth_ + 1) / 2 || readyRecords_ >= kReadyRecords / 2 || !hasRoom();
  }
  bool drained() const { return ready_.size() <= depth_ / 2 && readyRecords_ <= kReadyRecords / 2; }

  WorkgroupSource& inner_;
  NDRange range_;
  std::string kernelName_;
  std::optional<LoopNest> loopNest_;
  size_t depth_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<WorkgroupTrace> ready_;   // read, not yet taken, in order
  uint64_t readyRecords_ = 0;          // their records
  // Taken workgroups' storage, for the reader to fill again (most recently taken last: with
  // large workgroups only a few circulate, keeping their capacity warm).
  std::vector<WorkgroupTrace> spare_;
  bool readerWaiting_ = false;   // the reader sleeps until drained()
  bool takerWaiting_ = false;    // the scheduler sleeps until batchReady() or ended_
  bool ended_ = false;           // the inner source returned false or threw
  std::exception_ptr error_;     // what it threw
  bool stopping_ = false;
  std::thread thread_;           // last: starts once the rest is set up
};

}  // namespace cltrace::sched
