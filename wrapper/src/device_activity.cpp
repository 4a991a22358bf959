#include "cltrace/wrapper/device_activity.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <utility>
#include <vector>

namespace cltrace::wrapper {

namespace {

std::atomic<const DeviceActivityNote*> gLatest{nullptr};
static_assert(std::atomic<const DeviceActivityNote*>::is_always_lock_free, "read from a signal handler");

std::mutex gMutex;
std::vector<const DeviceActivityNote*> gSet;  // in the order set (gMutex)
std::string gMirror;                          // (gMutex)
std::atomic<void (*)()> gStartHook{nullptr};

// Makes the latest note the one given and mirrored (gMutex held).
void publish() {
  const DeviceActivityNote* latest = gSet.empty() ? nullptr : gSet.back();
  gLatest.store(latest);
  if (gMirror.empty()) return;
  // The pid now, not when mirroring began: a process forked since writes a file of its own.
  const std::string path = mirroredActivityPath(gMirror, static_cast<long>(getpid()));
  if (!latest) {
    std::remove(path.c_str());
    return;
  }
  // Its text, a newline, the partial file or nothing, a newline (readMirroredActivity).
  std::ofstream(path, std::ios::trunc) << latest->text << '\n' << (latest->partialFile ? latest->partialFile : "")
                                       << '\n';
}

}  // namespace

const DeviceActivityNote* deviceActivity() { return gLatest.load(); }

std::optional<MirroredActivity> readMirroredActivity(const std::string& path) {
  std::ifstream in(path);
  MirroredActivity a;
  if (!std::getline(in, a.text) || a.text.empty()) return std::nullopt;
  std::getline(in, a.partialFile);
  return a;
}

std::string mirroredActivityPath(const std::string& base, long pid) { return base + "." + std::to_string(pid); }

void mirrorDeviceActivityTo(const std::string& base) {
  std::lock_guard<std::mutex> lock(gMutex);
  gMirror = base;
  publish();
}

void setDeviceActivityStartHook(void (*hook)()) { gStartHook.store(hook); }

DeviceActivity::DeviceActivity(std::string text, std::string partialFile)
    : text_(std::move(text)),
      partialFile_(std::move(partialFile)),
      note_{text_.c_str(), partialFile_.empty() ? nullptr : partialFile_.c_str()} {
  if (void (*hook)() = gStartHook.load()) hook();
  std::lock_guard<std::mutex> lock(gMutex);
  gSet.push_back(&note_);
  publish();
}

DeviceActivity::~DeviceActivity() {
  std::lock_guard<std::mutex> lock(gMutex);
  gSet.erase(std::find(gSet.begin(), gSet.end(), &note_));
  publish();
}

}  // namespace cltrace::wrapper
