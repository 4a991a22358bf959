#include "cltrace/cachesim/replay_queue.h"

#include <algorithm>

namespace cltrace::cachesim {

namespace {
constexpr uint64_t kMask = ReplayQueue::kBuckets - 1;

bool before(const ReplayQueue::Entry& a, const ReplayQueue::Entry& b) {
  return a.sm != b.sm ? a.sm < b.sm : a.seq < b.seq;
}
}  // namespace

void ReplayQueue::push(uint64_t cycle, uint32_t sm, uint64_t warpKey) {
  const Entry e{cycle, sm, seq_++, warpKey};
  ++size_;
  if (pos_ < front_.size()) {
    const uint64_t frontCycle = front_[pos_].cycle;
    if (cycle == frontCycle) {  // joins the front in order (its seq is the largest so far)
      front_.insert(std::upper_bound(front_.begin() + static_cast<std::ptrdiff_t>(pos_), front_.end(), e, before), e);
      return;
    }
    if (cycle < frontCycle) unloadFront();
  }
  place(e);
}

void ReplayQueue::pop() {
  top();
  low_ = front_[pos_].cycle;
  ++pos_;
  --size_;
  // The window moved with low_: entries it now covers leave the overflow heap.
  while (!overflow_.empty() && overflow_.top().cycle - low_ < kBuckets) {
    place(overflow_.top());
    overflow_.pop();
  }
}

void ReplayQueue::place(const Entry& e) {
  if (e.cycle - low_ < kBuckets) {
    const uint64_t b = e.cycle & kMask;
    buckets_[b].push_back(e);
    used_[b >> 6] |= uint64_t(1) << (b & 63);
  } else {
    overflow_.push(e);
  }
}

void ReplayQueue::loadFront() {
  front_.clear();
  pos_ = 0;
  // The first bucket in use at or after low_'s, in cycle order (the window wraps around).
  const uint64_t start = low_ & kMask;
  for (uint64_t i = 0; i <= kBuckets / 64; ++i) {
    const uint64_t w = ((start >> 6) + i) % (kBuckets / 64);
    uint64_t bits = used_[w];
    if (i == 0) bits &= ~uint64_t(0) << (start & 63);                   // first word: from start on
    if (i == kBuckets / 64) bits &= (uint64_t(1) << (start & 63)) - 1;  // wrapped: before start
    if (bits == 0) continue;
    const uint64_t b = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits));
    used_[w] &= ~(uint64_t(1) << (b & 63));
    front_.swap(buckets_[b]);
    // Usually sorted already: a bucket fills in queue order, and one cycle's retries are mostly
    // one SM's (the warps waiting for that SM's next fill).
    if (!std::is_sorted(front_.begin(), front_.end(), before)) std::sort(front_.begin(), front_.end(), before);
    return;
  }
  // Every bucket is empty: the overflow's earliest cycle, whose entries come out of the heap
  // in order.
  const uint64_t cycle = overflow_.top().cycle;
  while (!overflow_.empty() && overflow_.top().cycle == cycle) {
    front_.push_back(overflow_.top());
    overflow_.pop();
  }
}

void ReplayQueue::unloadFront() {
  for (size_t i = pos_; i < front_.size(); ++i) place(front_[i]);
  front_.clear();
  pos_ = 0;
}

}  // namespace cltrace::cachesim
