// ReadAheadSource: the inner source's workgroups, in order, read on another thread; its errors
// where they were.
#include "cltrace/scheduler/read_ahead_source.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "message_of.h"
#include "test_util.h"

namespace cltrace::sched::test {
namespace {

// Two records per work-item, addressed by global id and position.
void twoLoads(const Item& it, Emit& e) {
  e.load(1, 100 * it.global[0]);
  e.store(2, 100 * it.global[0] + 1);
}

// Hands out the inner source's workgroups and throws at workgroup `failAt`.
class FailingSource : public WorkgroupSource {
 public:
  FailingSource(WorkgroupSource& inner, uint64_t failAt) : inner_(inner), failAt_(failAt) {}
  const NDRange& range() const override { return inner_.range(); }
  std::string kernelName() const override { return "failing"; }
  bool nextWorkgroup(WorkgroupTrace& out) override {
    if (given_ == failAt_) throw std::runtime_error("workgroup " + std::to_string(given_) + " is bad");
    ++given_;
    return inner_.nextWorkgroup(out);
  }

 private:
  WorkgroupSource& inner_;
  uint64_t failAt_;
  uint64_t given_ = 0;
};

TEST(ReadAheadSource, GivesTheInnerSourcesWorkgroupsInOrder) {
  const NDRange range = range1(12, 4);  // 3 workgroups of 4
  MemoryWorkgroupSource inner(range, buildTrace(range, twoLoads), "two_loads");
  ReadAheadSource ahead(inner, 1);
  EXPECT_EQ(ahead.kernelName(), "two_loads");
  EXPECT_EQ(ahead.range().workgroups(), 3u);
  WorkgroupTrace wg;
  for (uint64_t g = 0; g < 3; ++g) {
    ASSERT_TRUE(ahead.nextWorkgroup(wg));
    EXPECT_EQ(wg.id, g);
    ASSERT_EQ(wg.offsets, (std::vector<uint64_t>{0, 2, 4, 6, 8}));
    ASSERT_EQ(wg.records.size(), 8u);
    EXPECT_EQ(wg.records[2].address, 100 * (4 * g + 1));  // work-item 1's load
    EXPECT_EQ(wg.records[7].address, 100 * (4 * g + 3) + 1);  // work-item 3's store
  }
  EXPECT_FALSE(ahead.nextWorkgroup(wg));
  EXPECT_FALSE(ahead.nextWorkgroup(wg));  // and again
}

TEST(ReadAheadSource, SchedulesLikeTheInnerSource) {
  const NDRange range = range2(16, 8, 4, 4);
  const auto items = buildTrace(range, twoLoads);
  MemoryWorkgroupSource direct(range, items);
  Scheduler a(direct, oneSm(Policy::Warp, 8));
  const std::string expected = render(a, true);
  EXPECT_EQ(expected.substr(0, 40), "c0 sm0 wg0 w0 s0 i1 load 0-7 @ 0 100 200");
  for (size_t depth : {1, 2, 5}) {
    MemoryWorkgroupSource inner(range, items);
    ReadAheadSource ahead(inner, depth);
    Scheduler b(ahead, oneSm(Policy::Warp, 8));
    EXPECT_EQ(render(b, true), expected) << "depth " << depth;
  }
}

// Workgroups go over in batches (up to the depth, or ReadyRecords records): many tiny ones, and
// ones each over the record budget alone (held one at a time), all arrive, in order, whole.
TEST(ReadAheadSource, HandsOverTinyAndHugeWorkgroupsInOrder) {
  const NDRange tiny = range1(4096, 1);  // 4096 workgroups of one work-item, two records each
  MemoryWorkgroupSource tinyInner(tiny, buildTrace(tiny, twoLoads));
  ReadAheadSource tinyAhead(tinyInner);
  WorkgroupTrace wg;
  for (uint64_t g = 0; g < 4096; ++g) {
    ASSERT_TRUE(tinyAhead.nextWorkgroup(wg));
    ASSERT_EQ(wg.id, g);
    ASSERT_EQ(wg.records.size(), 2u);
    ASSERT_EQ(wg.records[1].address, 100 * g + 1);
  }
  EXPECT_FALSE(tinyAhead.nextWorkgroup(wg));

  // 3 workgroups of 1024 work-items making 70 records each: 71680 a workgroup, over the 65536
  // held at most, so each is held alone.
  static_assert(ReadAheadSource::kReadyRecords < 70 * 1024);
  const NDRange huge = range1(3072, 1024);
  MemoryWorkgroupSource hugeInner(huge, buildTrace(huge, [](const Item& it, Emit& e) {
                                    for (uint64_t k = 0; k < 70; ++k) e.load(1, 1000 * it.global[0] + k);
                                  }));
  ReadAheadSource hugeAhead(hugeInner, 4);
  for (uint64_t g = 0; g < 3; ++g) {
    ASSERT_TRUE(hugeAhead.nextWorkgroup(wg));
    ASSERT_EQ(wg.id, g);
    ASSERT_EQ(wg.records.size(), 71680u);
    EXPECT_EQ(wg.records.back().address, 1000 * (1024 * g + 1023) + 69);  // the last work-item's last load
  }
  EXPECT_FALSE(hugeAhead.nextWorkgroup(wg));
}

TEST(ReadAheadSource, ThrowsTheInnerErrorWhereItCame) {
  const NDRange range = range1(16, 4);
  MemoryWorkgroupSource memory(range, buildTrace(range, twoLoads));
  FailingSource inner(memory, 2);
  ReadAheadSource ahead(inner, 3);
  WorkgroupTrace wg;
  ASSERT_TRUE(ahead.nextWorkgroup(wg));
  EXPECT_EQ(wg.id, 0u);
  ASSERT_TRUE(ahead.nextWorkgroup(wg));
  EXPECT_EQ(wg.id, 1u);
  EXPECT_EQ(messageOf<std::runtime_error>([&] { ahead.nextWorkgroup(wg); }), "workgroup 2 is bad");
  EXPECT_EQ(messageOf<std::runtime_error>([&] { ahead.nextWorkgroup(wg); }), "workgroup 2 is bad");
}

TEST(ReadAheadSource, StopsWhenDroppedEarly) {
  const NDRange range = range1(4096, 4);  // 1024 workgroups, far more than it reads ahead
  MemoryWorkgroupSource inner(range, buildTrace(range, twoLoads));
  {
    ReadAheadSource untouched(inner, 2);
  }
  inner.rewind();
  ReadAheadSource ahead(inner, 2);
  WorkgroupTrace wg;
  ASSERT_TRUE(ahead.nextWorkgroup(wg));
  EXPECT_EQ(wg.id, 0u);  // the destructor joins the thread; a hang would time the test out
}

}  // namespace
}  // namespace cltrace::sched::test
