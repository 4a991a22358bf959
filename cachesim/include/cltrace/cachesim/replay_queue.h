// The simulator's queue of warps waiting to go on (a stalled request's retry, the next held
// step): taken out by cycle, then SM, then the order they were queued, as a binary heap would
// give them, but in about constant time. A kernel whose warps keep running out of MSHRs queues a
// retry per stalled warp each time a line fills (about 14 per request on an irregular gather),
// and a heap of hundreds of warps took a third of the simulator's time there.
//
// It is a calendar: one bucket per cycle over a window of kBuckets cycles, a bitmap of the
// buckets in use, and a heap for the rare entries beyond the window. It relies on what the
// simulator guarantees: every entry queued is later than the last one taken out (a step that
// stalls or completes at cycle c queues c + 1 or later). An entry may still be earlier than the
// current front (queued by a step processed before it): the front's bucket is then put back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace cltrace::cachesim {

class ReplayQueue {
 public:
  struct Entry {
    uint64_t cycle;
    uint32_t sm;
    uint64_t seq;  // queue order
    uint64_t warpKey;
  };
  static constexpr uint32_t kBuckets = 1024;  // cycles in the window (retries wait ~a miss latency)

  ReplayQueue() : buckets_(kBuckets) {}
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // `cycle` must be later than the cycle of every entry taken out so far.
  void push(uint64_t cycle, uint32_t sm, uint64_t warpKey);
  // The first entry (the queue is not empty). May reorganise the queue, hence not const.
  const Entry& top() {
    if (pos_ == front_.size()) loadFront();
    return front_[pos_];
  }
  void pop();  // takes out top()

 private:
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.cycle != b.cycle) return a.cycle > b.cycle;
      if (a.sm != b.sm) return a.sm > b.sm;
      return a.seq > b.seq;
    }
  };
  void place(const Entry& e);  // into its bucket or the overflow heap
  void loadFront();            // the earliest cycle's entries, sorted, into front_
  void unloadFront();          // front_'s entries back into their bucket

  std::vector<std::vector<Entry>> buckets_;  // bucket of cycle c: c % kBuckets
  uint64_t used_[kBuckets / 64] = {};        // bit b: bucket b holds entries
  // Bucketed entries have cycles in [low_, low_ + kBuckets); low_ is the cycle of the last entry
  // taken out, so the window only moves forward.
  uint64_t low_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, Later> overflow_;  // cycles >= low_ + kBuckets
  std::vector<Entry> front_;  // the entries of the earliest cycle, in order; front_[pos_] is next
  size_t pos_ = 0;
  uint64_t seq_ = 0;
  size_t size_ = 0;
};

}  // namespace cltrace::cachesim
