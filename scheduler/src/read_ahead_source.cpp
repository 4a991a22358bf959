#include "cltrace/scheduler/read_ahead_source.h"

#include <algorithm>
#include <utility>

namespace cltrace::sched {

ReadAheadSource::ReadAheadSource(WorkgroupSource& inner, size_t depth)
    : inner_(inner),
      range_(inner.range()),
      kernelName_(inner.kernelName()),
      loopNest_(inner.loopNest() ? std::optional<LoopNest>(*inner.loopNest()) : std::nullopt),
      depth_(std::max<size_t>(depth, 1)),
      thread_([this] { produce(); }) {}

ReadAheadSource::~ReadAheadSource() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ReadAheadSource::produce() {
  for (;;) {
    WorkgroupTrace slot;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!stopping_ && !hasRoom()) {
        readerWaiting_ = true;
        changed_.wait(lock, [this] { return stopping_ || drained(); });
        readerWaiting_ = false;
      }
      if (stopping_) return;
      if (!spare_.empty()) {
        slot = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    bool more;
    std::exception_ptr error;
    try {
      more = inner_.nextWorkgroup(slot);
    } catch (...) {
      more = false;
      error = std::current_exception();
    }
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (more) {
        readyRecords_ += slot.records.size();
        ready_.push_back(std::move(slot));
      } else {
        ended_ = true;
        error_ = error;
      }
      wake = takerWaiting_ && (ended_ || batchReady());
    }
    if (wake) changed_.notify_all();
    if (!more) return;
  }
}

bool ReadAheadSource::nextWorkgroup(WorkgroupTrace& out) {
  bool wake;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (ready_.empty() && !ended_) {
      takerWaiting_ = true;
      changed_.wait(lock, [this] { return ended_ || batchReady(); });
      takerWaiting_ = false;
    }
    if (ready_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    WorkgroupTrace& first = ready_.front();
    readyRecords_ -= first.records.size();
    std::swap(out, first);  // `out`'s old storage goes to the reader
    spare_.push_back(std::move(first));
    ready_.pop_front();
    wake = readerWaiting_ && drained();
  }
  if (wake) changed_.notify_all();
  return true;
}

}  // namespace cltrace::sched
