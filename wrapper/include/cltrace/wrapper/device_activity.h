// What cltrace has the OpenCL driver doing now: the count or trace run of a kernel. A driver
// that crashes takes the process with it in a signal (PoCL segfaults on some kernels whose
// barrier not every work-item reaches). A program that handles the signal (the cltrace CLI)
// can then say in which run it happened and remove the unfinished trace file; a process that
// watches from outside (`cltrace wrap`) reads the same from a file the activity is mirrored to.
#pragma once

#include <optional>
#include <string>

namespace cltrace::wrapper {

struct DeviceActivityNote {
  const char* text;         // e.g. "the count run of kernel 'k'"
  const char* partialFile;  // an unfinished trace file of this run to remove, or null
};

// The latest activity still set, or null when none. Safe to call from a signal handler (one
// lock-free atomic load).
const DeviceActivityNote* deviceActivity();

// From now on the latest activity is also written to a file of the writing process,
// mirroredActivityPath(base, its pid) (each process of a program that forks has its own), and
// the file removed when none is set. Empty: no file.
void mirrorDeviceActivityTo(const std::string& base);
// The file the process `pid` mirrors its activity to.
std::string mirroredActivityPath(const std::string& base, long pid);

// What a file mirrorDeviceActivityTo writes names (read by another process): the activity's
// text and its unfinished trace file (empty for none); nullopt when there is no such file or it
// names no activity.
struct MirroredActivity {
  std::string text, partialFile;
};
std::optional<MirroredActivity> readMirroredActivity(const std::string& path);

// Calls `hook` (when not null) on the starting thread each time an activity is set, before it is.
// A program that handles the driver's crashes puts its signal handlers back there: LLVM, loaded
// in the same process by the driver, installs its own early, resetting a signal to its default
// when one arrives, so that a second thread crashing while the first runs LLVM's handler (PoCL's
// worker threads crash together) would end the process unreported.
void setDeviceActivityStartHook(void (*hook)());

// Sets an activity for its lifetime (activities on several threads: the latest still set is
// the one given).
class DeviceActivity {
 public:
  explicit DeviceActivity(std::string text, std::string partialFile = "");
  ~DeviceActivity();
  DeviceActivity(const DeviceActivity&) = delete;
  DeviceActivity& operator=(const DeviceActivity&) = delete;

 private:
  std::string text_, partialFile_;
  DeviceActivityNote note_;
};

}  // namespace cltrace::wrapper
