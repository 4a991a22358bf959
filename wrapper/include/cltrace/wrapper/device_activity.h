// What cltrace has the OpenCL driver doing now: the count or trace run of a kernel. A driver
// that crashes takes the process with it in a signal (PoCL segfaults on some kernels whose
// barrier not every work-item reaches), and a program that handles the signal (the cltrace
// CLI) can then say in which run it happened, and remove the unfinished trace file.
#pragma once

#include <string>

namespace cltrace::wrapper {

struct DeviceActivityNote {
  const char* text;         // e.g. "the count run of kernel 'k'"
  const char* partialFile;  // an unfinished trace file of this run to remove, or null
};

// The activity set now, or null when none. Safe to call from a signal handler (one lock-free
// atomic load).
const DeviceActivityNote* deviceActivity();

// Sets the activity for its lifetime; the one it replaced comes back after.
class DeviceActivity {
 public:
  explicit DeviceActivity(std::string text, std::string partialFile = "");
  ~DeviceActivity();
  DeviceActivity(const DeviceActivity&) = delete;
  DeviceActivity& operator=(const DeviceActivity&) = delete;

 private:
  std::string text_, partialFile_;
  DeviceActivityNote note_;
  const DeviceActivityNote* previous_;
};

}  // namespace cltrace::wrapper
