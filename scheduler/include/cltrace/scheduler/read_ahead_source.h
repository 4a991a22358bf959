// A WorkgroupSource that reads another one on a thread of its own, a few workgroups ahead, so
// that decoding a trace file (zstd and the record format: most of a single run's time) overlaps
// scheduling and simulating it. The workgroups, their order and any error are the inner
// source's; an error is thrown by the nextWorkgroup call that reaches it, as it would have been.
#pragma once

#include <condition_variable>
#include <cstddef>
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
  // `inner` must outlive this. Once constructed, only this source's thread calls it (its range,
  // kernel name and loop nest are taken here). `depth`: workgroups held ready (at least 1); each holds
  // its records (48 bytes each) until the scheduler takes it.
  explicit ReadAheadSource(WorkgroupSource& inner, size_t depth = 2);
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

  WorkgroupSource& inner_;
  NDRange range_;
  std::string kernelName_;
  std::optional<LoopNest> loopNest_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<WorkgroupTrace> ring_;  // ready workgroups: ring_[head_], ... (count_ of them)
  size_t head_ = 0;
  size_t count_ = 0;
  bool ended_ = false;           // the inner source returned false or threw
  std::exception_ptr error_;     // what it threw
  bool stopping_ = false;
  std::thread thread_;           // last: starts once the rest is set up
};

}  // namespace cltrace::sched
