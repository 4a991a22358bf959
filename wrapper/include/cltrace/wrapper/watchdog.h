// A guard around a wait that nothing can interrupt: a kernel the OpenCL driver never finishes
// (PoCL can spin forever on a kernel whose barrier not every work-item reaches) leaves the
// caller blocked in clFinish, where no error can reach it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace cltrace::wrapper {

// Calls `onExpiry` on a thread of its own if the watchdog still lives `limit` after it was made.
// `onExpiry` must not return control to the blocked caller's work (it usually reports and ends
// the process); the destructor waits for it if it has started.
class Watchdog {
 public:
  Watchdog(std::chrono::duration<double> limit, std::function<void()> onExpiry);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable disarmed_;
  bool done_ = false;
  std::thread thread_;
};

// For a run that a device-side flag says can no longer succeed and that may never end: looks
// at `raised` on a thread of its own every 20 ms while it lives; once it holds, samples
// `progress` (a count that grows while the run gets on: work-items finished) every second and
// calls `onExpiry` with the seconds since the watch was made when it has not changed for
// `stallSeconds`.
class StalledRunWatchdog {
 public:
  StalledRunWatchdog(std::function<bool()> raised, std::function<uint64_t()> progress, double stallSeconds,
                     std::function<void(double seconds)> onExpiry);
  ~StalledRunWatchdog();
  StalledRunWatchdog(const StalledRunWatchdog&) = delete;
  StalledRunWatchdog& operator=(const StalledRunWatchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable disarmed_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace cltrace::wrapper
