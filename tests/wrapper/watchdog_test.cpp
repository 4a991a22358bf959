// The guard around a trace run that may never finish: when it calls back, its time limit, and
// the barriers a hung run's message names.
#include "cltrace/wrapper/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "cltrace/passes/instrumenter.h"
#include "cltrace/wrapper/traced_kernel.h"

using namespace cltrace;
using namespace std::chrono_literals;

TEST(Watchdog, CallsBackOnceItOutlivesItsLimit) {
  std::mutex m;
  std::condition_variable cv;
  bool called = false;
  {
    wrapper::Watchdog dog(20ms, [&] {
      std::lock_guard<std::mutex> lock(m);
      called = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> lock(m);
    // Generous: the machine may be busy; what matters is that it comes at all.
    cv.wait_for(lock, 30s, [&] { return called; });
  }
  EXPECT_TRUE(called);
}

TEST(Watchdog, GoneBeforeItsLimitNeverCallsBack) {
  std::atomic<int> calls{0};
  const auto start = std::chrono::steady_clock::now();
  {
    wrapper::Watchdog dog(1h, [&] { ++calls; });
  }
  { wrapper::Watchdog forever(std::chrono::duration<double>(1e30), [&] { ++calls; }); }  // no overflow
  EXPECT_EQ(calls.load(), 0);
  // Disarming does not wait for the limit.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10min);
}

// The watch over a count run that a work-item outside its buffer may keep from ending: nothing
// until the flag is raised, then a call once progress has stood still for the stall time, and
// none while it moves.
TEST(StalledRunWatchdog, CallsBackOnceProgressStopsAfterTheFlag) {
  std::mutex m;
  std::condition_variable cv;
  std::atomic<bool> raised{false};
  std::atomic<uint64_t> progress{0};
  bool called = false;
  double seconds = 0;
  {
    wrapper::StalledRunWatchdog dog([&] { return raised.load(); }, [&] { return progress.load(); }, 1.0,
                                    [&](double s) {
                                      std::lock_guard<std::mutex> lock(m);
                                      called = true;
                                      seconds = s;
                                      cv.notify_one();
                                    });
    // Progress that stands still is no reason while the flag is down.
    std::this_thread::sleep_for(2500ms);
    {
      std::lock_guard<std::mutex> lock(m);
      EXPECT_FALSE(called);
    }
    raised = true;
    std::unique_lock<std::mutex> lock(m);
    cv.wait_for(lock, 60s, [&] { return called; });
  }
  EXPECT_TRUE(called);
  EXPECT_GE(seconds, 3.5);  // 2.5 s down, then at least a sample and a stall of 1 s
}

TEST(StalledRunWatchdog, NoCallWhileProgressMoves) {
  std::atomic<int> calls{0};
  std::atomic<uint64_t> progress{0};
  {
    wrapper::StalledRunWatchdog dog([] { return true; }, [&] { return progress.load(); }, 3.0,
                                    [&](double) { ++calls; });
    for (int i = 0; i < 40; ++i) {  // 4 s, progress every 100 ms
      std::this_thread::sleep_for(100ms);
      ++progress;
    }
  }
  EXPECT_EQ(calls.load(), 0);
}

TEST(TraceRunLimit, IsFiftyCountRunsAndAtLeastTwoMinutesUnlessGiven) {
  wrapper::LaunchOptions options;
  EXPECT_EQ(wrapper::traceRunLimitSeconds(options, 0.01), 120.0);
  EXPECT_EQ(wrapper::traceRunLimitSeconds(options, 2.4), 120.0);
  EXPECT_EQ(wrapper::traceRunLimitSeconds(options, 10.0), 500.0);
  options.runLimitSeconds = 7;
  EXPECT_EQ(wrapper::traceRunLimitSeconds(options, 10.0), 7.0);
}

TEST(CountRunLimit, IsGivenOrFiveMinutesForADivergentBarrierOrNone) {
  wrapper::LaunchOptions options;
  passes::KernelReport report;
  EXPECT_FALSE(wrapper::countRunLimitSeconds(options, report));
  report.divergentBarriers = {1};
  EXPECT_EQ(wrapper::countRunLimitSeconds(options, report), 300.0);
  options.runLimitSeconds = 7;
  EXPECT_EQ(wrapper::countRunLimitSeconds(options, report), 7.0);
  report.divergentBarriers.clear();
  EXPECT_EQ(wrapper::countRunLimitSeconds(options, report), 7.0);
}

TEST(DivergentBarriers, AreListedByIdInTheReport) {
  // Barrier [1] is reached by every work-item; [3] is not (work-items 40 on have returned);
  // [4] follows it. Instructions: [0] store, [1] barrier, [2] store, [3] barrier, [4] barrier,
  // [5] store.
  const char* src = R"CL(
  __kernel void k(__global float* a) {
    int l = get_local_id(0);
    a[l] = 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (l >= 40) return;
    a[l] = 1;
    barrier(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE);
    a[l + 64] = 2;
  })CL";
  passes::InstrumentedKernel k = passes::instrumentSource(src, "k", {});
  EXPECT_EQ(k.report.divergentBarriers, (std::vector<uint32_t>{3, 4}));
  passes::InstrumentedKernel fine = passes::instrumentSource(
      "__kernel void k(__global float* a) { a[0] = 1; barrier(CLK_GLOBAL_MEM_FENCE); }", "k", {});
  EXPECT_TRUE(fine.report.divergentBarriers.empty());
}
