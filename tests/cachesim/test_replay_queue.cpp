#include "cltrace/cachesim/replay_queue.h"

#include <gtest/gtest.h>

#include <queue>
#include <random>
#include <tuple>
#include <vector>

using cltrace::cachesim::ReplayQueue;

namespace {

std::vector<std::tuple<uint64_t, uint32_t, uint64_t>> drain(ReplayQueue& q) {
  std::vector<std::tuple<uint64_t, uint32_t, uint64_t>> out;
  while (!q.empty()) {
    const ReplayQueue::Entry& e = q.top();
    out.emplace_back(e.cycle, e.sm, e.warpKey);
    q.pop();
  }
  return out;
}

}  // namespace

TEST(ReplayQueue, ByCycleThenSmThenQueueOrder) {
  ReplayQueue q;
  q.push(7, 2, 100);
  q.push(5, 3, 101);
  q.push(7, 1, 102);
  q.push(5, 3, 103);  // same cycle and SM as 101: after it
  q.push(5, 0, 104);
  q.push(5000, 0, 105);  // beyond the window: the heap
  q.push(7, 1, 106);
  using T = std::tuple<uint64_t, uint32_t, uint64_t>;
  EXPECT_EQ(drain(q), (std::vector<T>{{5, 0, 104}, {5, 3, 101}, {5, 3, 103}, {7, 1, 102}, {7, 1, 106}, {7, 2, 100},
                                      {5000, 0, 105}}));
}

TEST(ReplayQueue, EntriesQueuedBeforeOrAtTheFrontAfterItWasLookedAt) {
  ReplayQueue q(4);  // SM 9 has no calendar list: it goes through the heap
  q.push(10, 4, 1);
  q.push(10, 2, 2);
  EXPECT_EQ(q.top().warpKey, 2u);  // the front (cycle 10) is loaded
  q.push(10, 3, 3);                // between SM 2 and SM 4
  q.push(9, 9, 4);                 // earlier than the front
  q.push(10, 2, 5);                // after warp 2 (same cycle and SM, queued later)
  using T = std::tuple<uint64_t, uint32_t, uint64_t>;
  EXPECT_EQ(drain(q), (std::vector<T>{{9, 9, 4}, {10, 2, 2}, {10, 2, 5}, {10, 3, 3}, {10, 4, 1}}));
}

TEST(ReplayQueue, RequeuedFrontsGoBehindTheirNewListInTheOrderRequeued) {
  // Three warps wait at cycle 10 on SM 1 and stall again, each requeued at 15 on SM 1, where
  // warp 4 already waits: 4 first, then 1, 2, 3 in the order they were requeued. Warps 1 and 2
  // move their node (their list keeps entries); 3 empties its list and takes the general path.
  ReplayQueue q(4);
  q.push(10, 1, 1);
  q.push(10, 1, 2);
  q.push(10, 1, 3);
  q.push(15, 1, 4);
  q.push(12, 0, 5);
  for (uint64_t key : {1u, 2u, 3u}) {
    ASSERT_EQ(q.top().warpKey, key);
    EXPECT_EQ(q.top().cycle, 10u);
    q.requeueTop(15);
    EXPECT_EQ(q.size(), 5u);
  }
  using T = std::tuple<uint64_t, uint32_t, uint64_t>;
  EXPECT_EQ(drain(q), (std::vector<T>{{12, 0, 5}, {15, 1, 4}, {15, 1, 1}, {15, 1, 2}, {15, 1, 3}}));
}

// Against a binary heap with the same order, under the simulator's rule (an entry is later than
// every entry taken out), with peeks between pushes, requeued fronts, far cycles and gaps longer
// than the window.
TEST(ReplayQueue, MatchesAHeapOnRandomUse) {
  struct Ref {
    uint64_t cycle;
    uint32_t sm;
    uint64_t seq, warpKey;
    bool operator>(const Ref& o) const {
      return std::tie(cycle, sm, seq) > std::tie(o.cycle, o.sm, o.seq);
    }
  };
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    ReplayQueue q(seed % 3 == 0 ? 2 : 4);  // SMs 2 and 3 through the heap or in lists
    std::priority_queue<Ref, std::vector<Ref>, std::greater<Ref>> ref;
    uint64_t last = 0, seq = 0, key = 0, popped = 0;
    for (int op = 0; op < 20000; ++op) {
      const uint32_t r = static_cast<uint32_t>(rng() % 16);
      if (r < 7 || ref.empty()) {
        const uint64_t span = rng() % 8 == 0 ? 5000 : (rng() % 2 ? 130 : 3);
        const uint64_t cycle = last + 1 + rng() % span;
        const uint32_t sm = static_cast<uint32_t>(rng() % 4);
        q.push(cycle, sm, key);
        ref.push(Ref{cycle, sm, seq++, key++});
      } else if (r < 9) {
        ASSERT_EQ(q.top().warpKey, ref.top().warpKey);  // a peek without taking out
      } else if (r < 11) {  // the front taken out and queued again later (a retry that stalls again)
        const Ref front = ref.top();
        ASSERT_EQ(q.top().warpKey, front.warpKey);
        const uint64_t span = rng() % 8 == 0 ? 5000 : (rng() % 2 ? 130 : 3);
        const uint64_t cycle = front.cycle + 1 + rng() % span;
        last = front.cycle;
        q.requeueTop(cycle);
        ref.pop();
        ref.push(Ref{cycle, front.sm, seq++, front.warpKey});
        ASSERT_EQ(q.size(), ref.size());
      } else {
        ASSERT_EQ(q.size(), ref.size());
        const ReplayQueue::Entry& e = q.top();
        ASSERT_EQ(e.cycle, ref.top().cycle) << "seed " << seed << " pop " << popped;
        ASSERT_EQ(e.sm, ref.top().sm);
        ASSERT_EQ(e.warpKey, ref.top().warpKey);
        last = e.cycle;
        q.pop();
        ref.pop();
        ++popped;
      }
    }
    while (!ref.empty()) {
      ASSERT_EQ(q.top().warpKey, ref.top().warpKey);
      q.pop();
      ref.pop();
    }
    EXPECT_TRUE(q.empty());
  }
}

TEST(ReplayQueue, TheKeyQueuedLastAtACycleAndSmCanBeRenamed) {
  ReplayQueue q(4);
  EXPECT_EQ(q.lastKeyAt(10, 1), nullptr);  // nothing there
  q.push(10, 1, 1);
  q.push(10, 1, 2);
  q.push(10, 2, 3);
  q.push(5000, 1, 4);  // beyond the window: kept in the heap, so not offered
  q.push(11, 9, 5);    // an SM without calendar lists: the heap too
  ASSERT_NE(q.lastKeyAt(10, 1), nullptr);
  EXPECT_EQ(*q.lastKeyAt(10, 1), 2u);
  EXPECT_EQ(*q.lastKeyAt(10, 2), 3u);
  EXPECT_EQ(q.lastKeyAt(5000, 1), nullptr);
  EXPECT_EQ(q.lastKeyAt(11, 9), nullptr);
  EXPECT_EQ(q.lastKeyAt(11, 1), nullptr);
  *q.lastKeyAt(10, 1) = 20;  // renamed in place: same position
  q.push(10, 1, 6);
  EXPECT_EQ(*q.lastKeyAt(10, 1), 6u);
  using T = std::tuple<uint64_t, uint32_t, uint64_t>;
  EXPECT_EQ(drain(q), (std::vector<T>{{10, 1, 1}, {10, 1, 20}, {10, 1, 6}, {10, 2, 3}, {11, 9, 5}, {5000, 1, 4}}));
}
