#include "cltrace/cachesim/replay_queue.h"

#include <algorithm>

namespace cltrace::cachesim {

ReplayQueue::ReplayQueue(uint32_t sms) {
  smBits_ = 0;
  while ((1u << smBits_) < std::min(std::max(sms, 1u), kMaxCalendarSms)) ++smBits_;
  lists_.resize(size_t(kCycles) << smBits_);
  used_.assign((lists_.size() + 63) / 64, 0);
}

void ReplayQueue::pushSlow(uint64_t cycle, uint32_t sm, uint64_t warpKey) {
  const Entry e{cycle, sm, seq_++, warpKey};
  ++size_;
  if (cycle - low_ >= kCycles || sm >= (1u << smBits_)) {
    heap_.push(e);
    return;
  }
  uint32_t n = free_;
  if (n != kNone) {
    free_ = nodes_[n].next;
    nodes_[n] = Node{e, kNone};
  } else {
    n = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(Node{e, kNone});
  }
  const uint64_t i = ((cycle & (kCycles - 1)) << smBits_) | sm;
  List& l = lists_[i];
  if (l.tail == kNone) {
    l.head = n;
    used_[i >> 6] |= uint64_t(1) << (i & 63);
    if (first_ >= 0 && offset(i) < offset(static_cast<uint64_t>(first_))) first_ = static_cast<int64_t>(i);
  } else {
    nodes_[l.tail].next = n;
  }
  l.tail = n;
}

const ReplayQueue::Entry& ReplayQueue::topSlow() {
  const int64_t i = firstList();
  if (i < 0) return heap_.top();
  const Entry& listed = nodes_[lists_[static_cast<size_t>(i)].head].entry;
  return heap_.empty() || Later()(heap_.top(), listed) ? listed : heap_.top();
}

void ReplayQueue::popSlow() {
  const int64_t i = firstList();
  if (i < 0 || (!heap_.empty() && Later()(nodes_[lists_[static_cast<size_t>(i)].head].entry, heap_.top()))) {
    low_ = heap_.top().cycle;
    heap_.pop();
  } else {
    List& l = lists_[static_cast<size_t>(i)];
    const uint32_t n = l.head;
    low_ = nodes_[n].entry.cycle;
    l.head = nodes_[n].next;
    nodes_[n].next = free_;
    free_ = n;
    if (l.head == kNone) {
      l.tail = kNone;
      used_[static_cast<size_t>(i) >> 6] &= ~(uint64_t(1) << (i & 63));
      first_ = -1;
    }
  }
  --size_;
}

int64_t ReplayQueue::firstList() {
  if (first_ >= 0) return first_;
  // The first list in use at or after low_'s first, in (cycle, SM) order; the window wraps.
  const uint64_t words = used_.size();
  const uint64_t start = (low_ & (kCycles - 1)) << smBits_;
  for (uint64_t k = 0; k <= words; ++k) {
    const uint64_t w = ((start >> 6) + k) % words;
    uint64_t bits = used_[w];
    if (k == 0) bits &= ~uint64_t(0) << (start & 63);                 // first word: from start on
    if (k == words) bits &= (uint64_t(1) << (start & 63)) - 1;        // wrapped: before start
    if (bits != 0) return first_ = static_cast<int64_t>(w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits)));
  }
  return -1;
}

}  // namespace cltrace::cachesim
