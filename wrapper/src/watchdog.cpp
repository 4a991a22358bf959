#include "cltrace/wrapper/watchdog.h"

#include <algorithm>

namespace cltrace::wrapper {

Watchdog::Watchdog(std::chrono::duration<double> limit, std::function<void()> onExpiry) {
  // Ten years stands for any longer limit (steady_clock's nanoseconds end after 292 years).
  const std::chrono::duration<double> tenYears(10.0 * 365 * 24 * 3600);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::min(limit, tenYears));
  thread_ = std::thread([this, deadline, onExpiry = std::move(onExpiry)] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (disarmed_.wait_until(lock, deadline, [this] { return done_; })) return;
    lock.unlock();
    onExpiry();
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  disarmed_.notify_one();
  thread_.join();
}

StalledRunWatchdog::StalledRunWatchdog(std::function<bool()> raised, std::function<uint64_t()> progress,
                                       double stallSeconds, std::function<void(double)> onExpiry) {
  using Clock = std::chrono::steady_clock;
  // Taken here, not on the thread: on a loaded machine the thread starts late, and the seconds
  // reported are the run's since the watch began.
  const auto start = Clock::now();
  thread_ = std::thread([this, raised = std::move(raised), progress = std::move(progress), stallSeconds,
                         onExpiry = std::move(onExpiry), start] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!raised())
      if (disarmed_.wait_for(lock, std::chrono::milliseconds(20), [this] { return done_; })) return;
    uint64_t seen = progress();
    auto since = Clock::now();
    for (;;) {
      if (disarmed_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) return;
      const uint64_t now = progress();
      if (now != seen) {
        seen = now;
        since = Clock::now();
      } else if (std::chrono::duration<double>(Clock::now() - since).count() >= stallSeconds) {
        break;
      }
    }
    lock.unlock();
    onExpiry(std::chrono::duration<double>(Clock::now() - start).count());
  });
}

StalledRunWatchdog::~StalledRunWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  disarmed_.notify_one();
  thread_.join();
}

}  // namespace cltrace::wrapper
