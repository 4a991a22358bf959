// The simulator's queue of warps waiting to go on (a stalled request's retry, the next held
// step): taken out by cycle, then SM, then the order they were queued, as a binary heap would
// give them, but in about constant time. A kernel whose warps keep running out of MSHRs queues a
// retry per stalled warp each time a line fills (about 14 per request on an irregular gather),
// and a heap of hundreds of warps took a third of the simulator's time there.
//
// It is a calendar: one first-in first-out list per (cycle, SM) over a window of kCycles cycles,
// a bitmap of the lists in use, and a heap for the rest (cycles beyond the window, SMs beyond the
// calendar's). Within one cycle and SM, entries come out in the order they were queued, so each
// list only appends and takes from its head. It relies on what the simulator guarantees: every
// entry queued is later than the last one taken out (a step that stalls or completes at cycle c
// queues c + 1 or later), so the window only moves forward.
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
  static constexpr uint32_t kCycles = 512;  // the window (retries wait about a miss latency)
  static constexpr uint32_t kMaxCalendarSms = 64;

  // SMs 0 .. sms - 1 get calendar lists (up to kMaxCalendarSms); others go through the heap.
  explicit ReplayQueue(uint32_t sms = 16);
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // `cycle` must be later than the cycle of every entry taken out so far.
  void push(uint64_t cycle, uint32_t sm, uint64_t warpKey) {
    // Usual case: a list in the window that holds entries already and a free node to reuse.
    if (cycle - low_ < kCycles && sm < (1u << smBits_) && free_ != kNone) {
      const uint64_t i = ((cycle & (kCycles - 1)) << smBits_) | sm;
      List& l = lists_[i];
      if (l.tail != kNone) {
        const uint32_t n = free_;
        free_ = nodes_[n].next;
        nodes_[n] = Node{Entry{cycle, sm, seq_++, warpKey}, kNone};
        nodes_[l.tail].next = n;
        l.tail = n;
        ++size_;
        return;
      }
    }
    pushSlow(cycle, sm, warpKey);
  }
  // The warp key of the entry queued last at (cycle, sm), which the caller may change (the
  // queue does not look at keys), when that entry is in the calendar; null otherwise (no entry
  // at (cycle, sm), or one kept in the heap). The entry queued last at a (cycle, SM) is the last
  // to come out of it.
  uint64_t* lastKeyAt(uint64_t cycle, uint32_t sm) {
    if (cycle - low_ >= kCycles || sm >= (1u << smBits_)) return nullptr;
    const List& l = lists_[((cycle & (kCycles - 1)) << smBits_) | sm];
    return l.tail == kNone ? nullptr : &nodes_[l.tail].entry.warpKey;
  }
  // The first entry (the queue is not empty).
  const Entry& top() {
    if (first_ >= 0 && heap_.empty()) return nodes_[lists_[static_cast<size_t>(first_)].head].entry;  // usual case
    return topSlow();
  }
  // Takes out top() and queues it again at `cycle` (later than its own), as pop() and then
  // push(cycle, its SM, its warp key) would, moving its node when both lists are in the window.
  void requeueTop(uint64_t cycle) {
    if (first_ >= 0 && heap_.empty() && cycle - low_ < kCycles) {
      List& from = lists_[static_cast<size_t>(first_)];
      const uint32_t n = from.head;
      Node& node = nodes_[n];
      const uint32_t sm = node.entry.sm;
      if (node.next != kNone && sm < (1u << smBits_)) {
        List& to = lists_[((cycle & (kCycles - 1)) << smBits_) | sm];
        if (to.tail != kNone) {
          low_ = node.entry.cycle;
          from.head = node.next;
          node.entry.cycle = cycle;
          node.entry.seq = seq_++;
          node.next = kNone;
          nodes_[to.tail].next = n;
          to.tail = n;
          return;
        }
      }
    }
    const Entry e = top();
    pop();
    push(cycle, e.sm, e.warpKey);
  }
  // Takes out top().
  void pop() {
    if (first_ >= 0 && heap_.empty()) {  // usual case: the known first list gives its head
      List& l = lists_[static_cast<size_t>(first_)];
      const uint32_t n = l.head;
      if (nodes_[n].next != kNone) {
        low_ = nodes_[n].entry.cycle;
        l.head = nodes_[n].next;
        nodes_[n].next = free_;
        free_ = n;
        --size_;
        return;
      }
    }
    popSlow();
  }

 private:
  static constexpr uint32_t kNone = ~0u;
  struct Node {
    Entry entry;
    uint32_t next;
  };
  struct List {
    uint32_t head = kNone, tail = kNone;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.cycle != b.cycle) return a.cycle > b.cycle;
      if (a.sm != b.sm) return a.sm > b.sm;
      return a.seq > b.seq;
    }
  };
  // Position of list `i` counted from low_'s first list, in (cycle, SM) order.
  uint64_t offset(uint64_t i) const { return (i - ((low_ & (kCycles - 1)) << smBits_)) & (lists_.size() - 1); }
  int64_t firstList();  // the earliest list in use, -1 when none
  const Entry& topSlow();
  void pushSlow(uint64_t cycle, uint32_t sm, uint64_t warpKey);
  void popSlow();

  uint32_t smBits_;
  std::vector<List> lists_;     // list of (cycle, sm): (cycle % kCycles) << smBits_ | sm
  std::vector<uint64_t> used_;  // bit i: list i holds entries
  std::vector<Node> nodes_;     // the entries of the lists; free ones chained from free_
  uint32_t free_ = kNone;
  int64_t first_ = -1;          // firstList() when known, else -1
  // Listed entries have cycles in [low_, low_ + kCycles); low_ is the cycle of the last entry
  // taken out.
  uint64_t low_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, Later> heap_;  // entries without a list
  uint64_t seq_ = 0;
  size_t size_ = 0;
};

}  // namespace cltrace::cachesim
