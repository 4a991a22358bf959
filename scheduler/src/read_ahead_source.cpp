#include "cltrace/scheduler/read_ahead_source.h"

#include <algorithm>
#include <utility>

namespace cltrace::sched {

ReadAheadSource::ReadAheadSource(WorkgroupSource& inner, size_t depth)
    : inner_(inner),
      range_(inner.range()),
      kernelName_(inner.kernelName()),
      loopNest_(inner.loopNest() ? std::optional<LoopNest>(*inner.loopNest()) : std::nullopt),
      ring_(std::max<size_t>(depth, 1)),
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
    WorkgroupTrace* slot;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || count_ < ring_.size(); });
      if (stopping_) return;
      // Past the ready ones: the consumer does not touch it until count_ covers it.
      slot = &ring_[(head_ + count_) % ring_.size()];
    }
    bool more;
    std::exception_ptr error;
    try {
      more = inner_.nextWorkgroup(*slot);
    } catch (...) {
      more = false;
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (more) {
        ++count_;
      } else {
        ended_ = true;
        error_ = error;
      }
    }
    changed_.notify_all();
    if (!more) return;
  }
}

bool ReadAheadSource::nextWorkgroup(WorkgroupTrace& out) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return count_ > 0 || ended_; });
    if (count_ == 0) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    std::swap(out, ring_[head_]);
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  changed_.notify_all();
  return true;
}

}  // namespace cltrace::sched
